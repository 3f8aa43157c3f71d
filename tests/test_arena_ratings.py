"""Elo (Bradley-Terry MLE), intervals, LOS, match lines and the SPRT, as pure math."""
from __future__ import annotations

import math

import numpy as np
import pytest

from arena.ratings import (GameResult, compute_ratings, elo_from_score, los, match_lines, match_summary,
                           score_from_elo)
from arena.sprt import bounds, llr_pentanomial, llr_trinomial, sprt_status


def games(a: str, b: str, wins: int, losses: int, draws: int = 0) -> list[GameResult]:
    """Results of a vs b, alternating colours so first-move effects cancel."""
    out = []
    for i, score in enumerate([1.0] * wins + [0.0] * losses + [0.5] * draws):
        out.append(GameResult(a, b, score) if i % 2 == 0 else GameResult(b, a, 1.0 - score))
    return out


def test_sixty_forty_over_hundred_games_is_plus_70_4():
    ratings = compute_ratings(games("A", "B", 60, 40), anchor="B").by_name()
    assert ratings["A"].elo == pytest.approx(70.4, abs=0.1)
    assert ratings["B"].elo == 0.0
    assert elo_from_score(0.6) == pytest.approx(70.437, abs=1e-3)
    diff, err = match_summary(games("A", "B", 60, 40), "A", "B").elo()
    assert diff == pytest.approx(70.4, abs=0.1) and 50 < err < 90


def test_draws_count_as_half():
    ratings = compute_ratings(games("A", "B", 50, 30, 20), anchor="B").by_name()
    assert ratings["A"].elo == pytest.approx(70.4, abs=0.1)
    assert ratings["A"].draws == 20 and ratings["A"].points == 60


def test_symmetric_results_give_equal_ratings():
    results = games("A", "B", 5, 5) + games("B", "C", 4, 4, 2) + games("A", "C", 3, 3, 4)
    ratings = compute_ratings(results, anchor="A").by_name()
    for name in "ABC":
        assert ratings[name].elo == pytest.approx(0.0, abs=1e-6)


def test_three_player_cycle_is_equal():
    results = games("A", "B", 7, 3) + games("B", "C", 7, 3) + games("C", "A", 7, 3)
    ratings = compute_ratings(results, anchor="C").by_name()
    assert ratings["A"].elo == pytest.approx(0.0, abs=1e-6)
    assert ratings["B"].elo == pytest.approx(0.0, abs=1e-6)


def test_anchor_shifts_everything():
    results = games("A", "B", 7, 3) + games("B", "C", 6, 4) + games("A", "C", 8, 2)
    by_b = compute_ratings(results, anchor="B").by_name()
    by_a = compute_ratings(results, anchor="A", anchor_elo=1500).by_name()
    assert by_a["A"].elo == 1500 and by_b["B"].elo == 0
    shift = by_a["B"].elo - by_b["B"].elo
    for name in "ABC":
        assert by_a[name].elo - by_b[name].elo == pytest.approx(shift, abs=1e-6)
    assert by_b["A"].elo > by_b["B"].elo > by_b["C"].elo
    with pytest.raises(ValueError):
        compute_ratings(results, anchor="Z")


def test_interval_shrinks_like_one_over_sqrt_games():
    small = compute_ratings(games("A", "B", 30, 20), anchor="B").by_name()["A"].error
    large = compute_ratings(games("A", "B", 120, 80), anchor="B").by_name()["A"].error
    assert large / small == pytest.approx(0.5, abs=0.01)
    m_small = match_summary(games("A", "B", 30, 20), "A", "B").elo()[1]
    m_large = match_summary(games("A", "B", 120, 80), "A", "B").elo()[1]
    assert m_large / m_small == pytest.approx(0.5, abs=0.03)


def test_los_values():
    assert los(0, 0) == 0.5
    assert los(10, 10) == pytest.approx(0.5)
    assert los(20, 10) == pytest.approx(0.5 * (1 + math.erf(10 / math.sqrt(60))), abs=1e-12)
    assert los(20, 10) == pytest.approx(0.966, abs=1e-3)
    assert los(10, 20) == pytest.approx(1 - los(20, 10))
    table = compute_ratings(games("A", "B", 60, 40), anchor="B")
    assert table.players[0].name == "A" and table.players[0].los_next == pytest.approx(0.977, abs=0.01)


def test_perfect_score_stays_finite_with_prior():
    ratings = compute_ratings(games("A", "B", 10, 0), anchor="B")
    assert ratings.prior
    a = ratings.by_name()["A"]
    assert math.isfinite(a.elo) and a.elo > 100 and math.isfinite(a.error)
    assert not compute_ratings(games("A", "B", 9, 1), anchor="B").prior


def test_match_lines_look_like_cutechess():
    lines = match_lines(games("A", "B", 50, 30, 20), "A", "B")
    assert lines[0] == "Score of A vs B: 50 - 30 - 20  [0.600] 100"
    assert lines[1].startswith("Elo difference: 70.4 +/- ") and "LOS: 98.7 %" in lines[1]
    assert lines[1].endswith("DrawRatio: 20.0 %")


def paired(a: str, b: str, pair_points: list[float], board: str = "15x15") -> list[GameResult]:
    """Opening pairs of a vs b: pair k's two games (a first, then b first) score pair_points[k]
    for a in all; a split pair is won by whoever moved first (a biased opening)."""
    out = []
    for k, points in enumerate(pair_points):
        first_game = {2.0: 1.0, 1.5: 1.0, 1.0: 1.0, 0.5: 0.5, 0.0: 0.0}[points]
        second_game = points - first_game                     # a's score moving second
        out.append(GameResult(a, b, first_game, board, (1, k)))
        out.append(GameResult(b, a, 1.0 - second_game, board, (1, k)))
    return out


def test_pentanomial_counts_whole_pairs_of_the_two_engines_only():
    results = paired("A", "B", [2.0, 1.0, 1.0, 0.5, 0.0, 1.5])
    results += [GameResult("A", "B", 1.0, "15x15", (1, 99))]           # its partner never finished
    results += [GameResult("A", "B", 1.0, "15x15", None)] * 3          # unpaired games
    results += paired("A", "C", [2.0, 2.0])                            # another opponent
    summary = match_summary(results, "A", "B")
    assert summary.pairs == (1, 1, 2, 1, 1)
    assert (summary.wins, summary.losses, summary.draws) == (9, 5, 2)
    assert match_summary(results, "B", "A").pairs == (1, 1, 2, 1, 1)[::-1]


def test_split_pairs_narrow_the_pair_interval_below_the_game_one():
    """A biased opening: every pair splits 1-1 but for a 2-0 edge in some.  Per game the
    score looks noisy (all decisive), per pair it is mostly sure draws."""
    results = paired("A", "B", [1.0] * 80 + [2.0] * 12 + [0.0] * 8)
    summary = match_summary(results, "A", "B")
    game_elo, game_err = summary.elo()
    stats = summary.pair_stats()
    assert stats is not None
    pair_elo, pair_err, superiority = stats
    assert pair_elo == pytest.approx(game_elo) and pair_elo > 0
    assert pair_err < 0.8 * game_err
    assert superiority > los(summary.wins, summary.losses)
    line = match_lines(results, "A", "B")[2]
    assert line.startswith("Ptnml(0-2): [8, 0, 80, 0, 12], pairs: Elo ") and line.endswith(" %")


def test_unpaired_matches_print_no_pentanomial_line():
    summary = match_summary(games("A", "B", 5, 5), "A", "B")
    assert summary.pair_stats() is None and len(summary.lines()) == 2
    all_draws = match_summary(paired("A", "B", [1.0] * 4), "A", "B").pair_stats()
    assert all_draws == (0.0, 0.0, 0.5)


def test_first_player_score_and_crosstable():
    results = [GameResult("A", "B", 1.0), GameResult("B", "A", 1.0), GameResult("A", "B", 0.5)]
    ratings = compute_ratings(results)
    assert ratings.first_player_score == pytest.approx(2.5 / 3)
    assert ratings.crosstable["A"]["B"] == (1, 1, 1)


def test_score_elo_round_trip():
    for elo in (-300, -50, 0, 35, 400):
        assert elo_from_score(score_from_elo(elo)) == pytest.approx(elo)
    assert elo_from_score(1.0) == math.inf and elo_from_score(0.0) == -math.inf


# ------------------------------------------------------------------------------- SPRT

def test_sprt_bounds():
    lower, upper = bounds(0.05, 0.05)
    assert lower == pytest.approx(-2.944, abs=1e-3) and upper == pytest.approx(2.944, abs=1e-3)
    assert sprt_status(3.0, 0.05, 0.05).decision == "H1"
    assert sprt_status(-3.0, 0.05, 0.05).decision == "H0"
    assert sprt_status(0.0, 0.05, 0.05).decision is None


def test_llr_sign_follows_the_score():
    assert llr_trinomial(60, 40, 0, 0, 10) > 0
    assert llr_trinomial(40, 60, 0, 0, 10) < 0
    assert llr_pentanomial([1, 5, 10, 15, 9], 0, 10) > 0
    assert llr_pentanomial([9, 15, 10, 5, 1], 0, 10) < 0
    assert llr_trinomial(0, 0, 0, 0, 5) == 0


def _simulate(true_elo: float, runs: int, elo0: float, elo1: float, seed: int, draw: float = 0.4,
              cap: int = 60_000, chunk: int = 4000) -> np.ndarray:
    """Decision per run: +1 H1, -1 H0, 0 undecided within `cap` games (trinomial GSPRT)."""
    rng = np.random.default_rng(seed)
    s = score_from_elo(true_elo)
    p = np.array([1 - s - draw / 2, draw, s - draw / 2])  # loss, draw, win
    lower, upper = bounds(0.05, 0.05)
    decision = np.zeros(runs, dtype=int)
    counts = np.zeros((runs, 3))
    for _ in range(cap // chunk):
        live = decision == 0
        if not live.any():
            break
        outcomes = rng.choice(3, size=(runs, chunk), p=p)
        cum = np.stack([np.cumsum(outcomes == k, axis=1) for k in range(3)], axis=2) + counts[:, None, :]
        n = cum.sum(axis=2)
        reg = cum + np.array([1.0, 0.0, 1.0])  # the library's prior: one win, one loss
        mean = (reg[..., 1] * 0.5 + reg[..., 2]) / reg.sum(axis=2)
        var = (reg[..., 0] * mean ** 2 + reg[..., 1] * (0.5 - mean) ** 2 + reg[..., 2] * (1 - mean) ** 2) / reg.sum(axis=2)
        s0, s1 = score_from_elo(elo0), score_from_elo(elo1)
        llr = n * (s1 - s0) * (2 * mean - s0 - s1) / (2 * var)
        for r in np.nonzero(live)[0]:
            hit = np.nonzero((llr[r] >= upper) | (llr[r] <= lower))[0]
            if hit.size:
                decision[r] = 1 if llr[r, hit[0]] >= upper else -1
        counts = cum[:, -1, :]
    # the vectorised LLR must match the library's
    w, d, l = counts[0, 2], counts[0, 1], counts[0, 0]
    assert llr_trinomial(int(w), int(l), int(d), elo0, elo1) == pytest.approx(llr[0, -1], rel=1e-9)
    return decision


def test_sprt_accepts_h1_and_h0_at_the_promised_rates():
    runs = 200
    h1 = _simulate(10.0, runs, 0.0, 10.0, seed=1)
    h0 = _simulate(0.0, runs, 0.0, 10.0, seed=2)
    assert (h1 == 1).mean() >= 0.88          # promised 1 - beta = 0.95
    assert (h0 == -1).mean() >= 0.88         # promised 1 - alpha = 0.95
    assert (h0 == 1).mean() <= 0.10          # false positives ~ alpha
    assert (h1 == 0).mean() <= 0.05 and (h0 == 0).mean() <= 0.05
