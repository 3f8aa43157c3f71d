"""Elo ratings: Bradley-Terry maximum likelihood, intervals, LOS, two-engine match lines.

Model: P(i beats j) = 1 / (1 + 10^((R_j - R_i) / 400)); a draw counts as half a win
for each side (the usual "draws as half" Bradley-Terry).  Ratings maximise the
likelihood by Newton's method with the anchor held fixed.

Perfect scores: when the MLE does not exist (some group of players never scored
against the rest, e.g. 10-0), every pair that met gets one extra virtual draw (a
weak prior that pulls toward equal and keeps ratings finite); `Ratings.prior`
says when this happened.  Players in unconnected groups are tied to the anchor the
same way (their ratings are then meaningless, and marked so).

Intervals: 95 % = 1.96 standard errors from the inverse Fisher information (the
negative Hessian at the optimum, anchor removed).  They shrink like 1/sqrt(games).
For a two-engine match, `match_lines` uses cutechess's formula instead (empirical
variance of the per-game score, so draws narrow it), and, where the games came in
opening pairs (colours swapped), fastchess's pentanomial one as well: the variance of
the per-pair score.  A biased opening (gomoku's first-move edge) makes many pairs 1-1,
which the per-game figure counts as two noisy results and the per-pair one as one sure
draw, so the pair interval is the honest (narrower) one for paired matches.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Iterable, Sequence

import numpy as np

__all__ = ["GameResult", "PlayerRating", "Ratings", "elo_from_score", "score_from_elo", "los",
           "compute_ratings", "match_summary", "match_lines", "MatchSummary", "NATURAL", "pentanomial"]

NATURAL = 400.0 / math.log(10.0)  # Elo points per natural-logit unit
Z95 = 1.959963984540054


def elo_from_score(score: float) -> float:
    """Pair score s in (0, 1) -> Elo difference -400 log10(1/s - 1); +-inf at 1 and 0."""
    if score <= 0.0:
        return -math.inf
    if score >= 1.0:
        return math.inf
    return -400.0 * math.log10(1.0 / score - 1.0) + 0.0  # + 0.0: no '-0.0' at 50 %


def score_from_elo(elo: float) -> float:
    return 1.0 / (1.0 + 10.0 ** (-elo / 400.0))


def los(wins: float, losses: float) -> float:
    """Likelihood of superiority Phi((W - L) / sqrt(W + L)); 0.5 with no decisive game."""
    if wins + losses == 0:
        return 0.5
    return 0.5 * (1.0 + math.erf((wins - losses) / math.sqrt(2.0 * (wins + losses))))


@dataclass(frozen=True)
class GameResult:
    """One finished game: score of `first` (the player who moved first) in {1, 0.5, 0}.
    pair: which opening pair it belongs to (tournament, pair index), None when unknown."""
    first: str
    second: str
    score: float
    board: str = ""
    pair: tuple[int, int] | None = None


@dataclass(frozen=True)
class PlayerRating:
    name: str
    elo: float
    error: float            # 95 % half-width (0 for the anchor)
    games: int
    points: float
    wins: int
    losses: int
    draws: int
    los_next: float | None  # P(this player is stronger than the next one in the table)

    @property
    def score(self) -> float:
        return self.points / self.games if self.games else 0.0

    @property
    def draw_ratio(self) -> float:
        return self.draws / self.games if self.games else 0.0


@dataclass(frozen=True)
class Ratings:
    players: list[PlayerRating]          # best first
    anchor: str
    prior: bool                          # True when virtual draws were needed
    games: int
    first_player_score: float | None     # score of whoever moved first (gomoku: first-move advantage)
    crosstable: dict[str, dict[str, tuple[int, int, int]]] = field(default_factory=dict)  # W-L-D

    def by_name(self) -> dict[str, PlayerRating]:
        return {p.name: p for p in self.players}


def _strongly_connected(names: Sequence[str], beats: set[tuple[int, int]]) -> bool:
    """MLE exists iff every player can reach every other along 'scored against' edges."""
    n = len(names)
    for edges in (beats, {(b, a) for a, b in beats}):
        seen, stack = {0}, [0]
        while stack:
            a = stack.pop()
            for x, y in edges:
                if x == a and y not in seen:
                    seen.add(y)
                    stack.append(y)
        if len(seen) < n:
            return False
    return True


def _fit(n: int, points: np.ndarray, games: np.ndarray, anchor: int) -> tuple[np.ndarray, np.ndarray]:
    """Newton iterations on the BT log-likelihood; returns (ratings in logits, covariance)."""
    r = np.zeros(n)
    free = [i for i in range(n) if i != anchor]
    cov = np.zeros((n, n))
    for _ in range(200):
        diff = r[:, None] - r[None, :]
        p = 1.0 / (1.0 + np.exp(-diff))
        grad = (points - games * p).sum(axis=1)
        w = games * p * (1.0 - p)
        hess = np.diag(w.sum(axis=1)) - w          # negative Hessian
        h = hess[np.ix_(free, free)]
        step = np.linalg.solve(h, grad[free])
        step = np.clip(step, -2.0, 2.0)            # damped: logistic Newton can overshoot
        r[free] += step
        if np.max(np.abs(step)) < 1e-12:
            break
    diff = r[:, None] - r[None, :]
    p = 1.0 / (1.0 + np.exp(-diff))
    w = games * p * (1.0 - p)
    hess = np.diag(w.sum(axis=1)) - w
    cov[np.ix_(free, free)] = np.linalg.inv(hess[np.ix_(free, free)])
    return r, cov


def compute_ratings(results: Iterable[GameResult], *, anchor: str | None = None,
                    anchor_elo: float = 0.0, players: Sequence[str] | None = None) -> Ratings:
    """Bradley-Terry Elo of every player; `anchor` (default: first player listed) gets anchor_elo."""
    results = list(results)
    names = list(players) if players else []
    for g in results:
        for name in (g.first, g.second):
            if name not in names:
                names.append(name)
    if anchor is None:
        anchor = names[0] if names else ""
    if names and anchor not in names:
        raise ValueError(f"anchor {anchor!r} is not a player (players: {', '.join(names)})")
    n = len(names)
    index = {name: i for i, name in enumerate(names)}
    points = np.zeros((n, n))
    games = np.zeros((n, n))
    wld = np.zeros((n, 3), dtype=int)
    cross: dict[str, dict[str, list[int]]] = {a: {} for a in names}
    first_points = 0.0
    for g in results:
        i, j = index[g.first], index[g.second]
        points[i, j] += g.score
        points[j, i] += 1.0 - g.score
        games[i, j] += 1
        games[j, i] += 1
        first_points += g.score
        for me, other, s in ((i, j, g.score), (j, i, 1.0 - g.score)):
            col = 0 if s == 1.0 else 1 if s == 0.0 else 2
            wld[me, col] += 1
            cross[names[me]].setdefault(names[other], [0, 0, 0])[col] += 1
    a = index.get(anchor, 0)
    prior = False
    if n >= 2:
        beats = {(i, j) for i in range(n) for j in range(n) if points[i, j] > 0}
        if not _strongly_connected(names, beats):
            prior = True
            met = games > 0
            points = points + 0.5 * met
            games = games + 1.0 * met
            connected = np.any(games > 0, axis=1)
            for i in range(n):  # tie isolated players (and groups) to the anchor
                if i != a and (not connected[i] or not _reaches(games, i, a)):
                    points[i, a] += 0.5; points[a, i] += 0.5
                    games[i, a] += 1; games[a, i] += 1
        r, cov = _fit(n, points, games, a)
    else:
        r, cov = np.zeros(n), np.zeros((n, n))
    elo = (r - r[a]) * NATURAL + anchor_elo
    err = np.sqrt(np.maximum(np.diag(cov), 0.0)) * NATURAL * Z95
    order = sorted(range(n), key=lambda i: -elo[i])
    table = []
    for rank, i in enumerate(order):
        los_next = None
        if rank + 1 < len(order):
            j = order[rank + 1]
            var = cov[i, i] + cov[j, j] - 2 * cov[i, j]
            d = r[i] - r[j]
            los_next = 0.5 * (1 + math.erf(d / math.sqrt(2 * var))) if var > 0 else (1.0 if d > 0 else 0.5)
        w, l, d = (int(x) for x in wld[i])
        table.append(PlayerRating(names[i], float(elo[i]), float(err[i]), w + l + d,
                                  w + 0.5 * d, w, l, d, los_next))
    total = len(results)
    return Ratings(players=table, anchor=anchor, prior=prior, games=total,
                   first_player_score=first_points / total if total else None,
                   crosstable={a_: {b: (w_, l_, d_) for b, (w_, l_, d_) in row.items()}
                               for a_, row in cross.items()})


def _reaches(games: np.ndarray, start: int, goal: int) -> bool:
    seen, stack = {start}, [start]
    while stack:
        x = stack.pop()
        if x == goal:
            return True
        for y in np.nonzero(games[x] > 0)[0]:
            if int(y) not in seen:
                seen.add(int(y))
                stack.append(int(y))
    return False


def _score_interval(score: float, var: float, n: int) -> tuple[float, float]:
    """(Elo, 95 % half-width) of a mean score over n results with variance var."""
    if score in (0.0, 1.0):
        return elo_from_score(score), math.inf
    dev = Z95 * math.sqrt(var / n)
    lo, hi = max(score - dev, 1e-9), min(score + dev, 1 - 1e-9)
    return elo_from_score(score), (elo_from_score(hi) - elo_from_score(lo)) / 2


PAIR_SCORES = (0.0, 0.25, 0.5, 0.75, 1.0)


def pentanomial(results: Iterable[GameResult], a: str, b: str) -> tuple[int, int, int, int, int]:
    """counts[k]: opening pairs of a against b (both games played, colours swapped) in which a
    scored k/2 points; games without a known pair, or whose partner is missing, count nowhere."""
    by_pair: dict[tuple, list[float]] = {}
    for g in results:
        if g.pair is not None and {g.first, g.second} == {a, b}:
            by_pair.setdefault((g.board, *g.pair), []).append(g.score if g.first == a else 1.0 - g.score)
    counts = [0] * 5
    for scores in by_pair.values():
        if len(scores) == 2:
            counts[int(round(2 * sum(scores)))] += 1
    return counts[0], counts[1], counts[2], counts[3], counts[4]


@dataclass(frozen=True)
class MatchSummary:
    """A two-engine match from A's point of view, cutechess style; `pairs` is the
    pentanomial count (pentanomial()), all zero when the games were not paired."""
    a: str
    b: str
    wins: int
    losses: int
    draws: int
    pairs: tuple[int, int, int, int, int] = (0, 0, 0, 0, 0)

    @property
    def games(self) -> int:
        return self.wins + self.losses + self.draws

    @property
    def score(self) -> float:
        return (self.wins + 0.5 * self.draws) / self.games if self.games else 0.5

    def elo(self) -> tuple[float, float]:
        """(Elo difference, 95 % half-width) from the score and its empirical variance."""
        n, s = self.games, self.score
        if n == 0:
            return 0.0, math.inf
        var = (self.wins * (1 - s) ** 2 + self.losses * s ** 2 + self.draws * (0.5 - s) ** 2) / n
        return _score_interval(s, var, n)

    def pair_stats(self) -> tuple[float, float, float] | None:
        """(Elo, 95 % half-width, LOS) from the opening pairs' scores (their empirical
        variance; LOS the normal approximation of P(A stronger)); None with no pair."""
        n = sum(self.pairs)
        if n == 0:
            return None
        mean = sum(c * v for c, v in zip(self.pairs, PAIR_SCORES)) / n
        var = sum(c * (v - mean) ** 2 for c, v in zip(self.pairs, PAIR_SCORES)) / n
        elo, err = _score_interval(mean, var, n)
        if var == 0.0:
            superiority = 1.0 if mean > 0.5 else 0.0 if mean < 0.5 else 0.5
        else:
            superiority = 0.5 * (1.0 + math.erf((mean - 0.5) / math.sqrt(2.0 * var / n)))
        return elo, err, superiority

    def lines(self) -> list[str]:
        diff, err = self.elo()
        out = [f"Score of {self.a} vs {self.b}: {self.wins} - {self.losses} - {self.draws}  "
               f"[{self.score:.3f}] {self.games}",
               f"Elo difference: {diff:.1f} +/- {err:.1f}, LOS: {100 * los(self.wins, self.losses):.1f} %, "
               f"DrawRatio: {100 * self.draws / max(1, self.games):.1f} %"]
        paired = self.pair_stats()
        if paired is not None:
            elo, half, superiority = paired
            out.append(f"Ptnml(0-2): [{', '.join(map(str, self.pairs))}], pairs: Elo {elo:.1f} +/- {half:.1f}, "
                       f"LOS: {100 * superiority:.1f} %")
        return out


def match_summary(results: Iterable[GameResult], a: str, b: str) -> MatchSummary:
    results = list(results)
    w = l = d = 0
    for g in results:
        if {g.first, g.second} != {a, b}:
            continue
        s = g.score if g.first == a else 1.0 - g.score
        w, l, d = (w + 1, l, d) if s == 1.0 else (w, l + 1, d) if s == 0.0 else (w, l, d + 1)
    return MatchSummary(a, b, w, l, d, pentanomial(results, a, b))


def match_lines(results: Iterable[GameResult], a: str, b: str) -> list[str]:
    return match_summary(results, a, b).lines()
