"""Rating tables from stored results: text, markdown and JSON; one table per board size
plus an overall one, a crosstable, first-move advantage, and cutechess-style match lines."""
from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass
from typing import Sequence

from arena.ratings import GameResult, Ratings, compute_ratings, elo_from_score, match_lines

__all__ = ["Section", "rating_sections", "format_ratings", "default_anchor", "rating_rows", "cross_rows",
           "first_move_line"]


@dataclass(frozen=True)
class Section:
    title: str
    board: str | None            # None: every game
    ratings: Ratings
    match: list[str]             # cutechess lines when exactly two players


def default_anchor(players: Sequence[str], specs: dict[str, str] | None = None) -> str | None:
    """The first alphabeta player (built-in), else the first player."""
    specs = specs or {}
    for name in players:
        if "player='alphabeta'" in specs.get(name, "") or name.split("-")[0] == "alphabeta":
            return name
    return players[0] if players else None


def rating_sections(results: Sequence[GameResult], players: Sequence[str], anchor: str | None) -> list[Section]:
    """Overall table first, then one per board size (when there is more than one)."""
    boards = sorted({r.board for r in results if r.board}, key=lambda b: (len(b), b))
    groups: list[tuple[str, str | None, list[GameResult]]] = [("All games", None, list(results))]
    if len(boards) > 1:
        groups += [(f"Board {b}", b, [r for r in results if r.board == b]) for b in boards]
    elif boards:
        groups[0] = (f"Board {boards[0]}", boards[0], list(results))
    sections = []
    for title, board, games in groups:
        names = [p for p in players if any(p in (g.first, g.second) for g in games)]
        names += [n for g in games for n in (g.first, g.second) if n not in names]
        if not names:
            continue
        anchor_here = anchor if anchor in names else names[0]
        ratings = compute_ratings(games, anchor=anchor_here, players=names)
        match = match_lines(games, names[0], names[1]) if len(names) == 2 else []
        sections.append(Section(title, board, ratings, match))
    return sections


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f}%"


def _elo(x: float) -> str:
    return f"{x:+.1f}" if math.isfinite(x) else ("+inf" if x > 0 else "-inf")


def rating_rows(r: Ratings) -> tuple[list[str], list[list[str]]]:
    head = ["Rank", "Name", "Elo", "+/-", "Games", "Score", "Draw", "LOS"]
    rows = [[str(i + 1), p.name, _elo(p.elo), f"{p.error:.1f}" if p.name != r.anchor else "anchor",
             str(p.games), _pct(p.score), _pct(p.draw_ratio), _pct(p.los_next)]
            for i, p in enumerate(r.players)]
    return head, rows


def cross_rows(r: Ratings) -> tuple[list[str], list[list[str]]]:
    names = [p.name for p in r.players]
    head = ["", *names]
    rows = []
    for a in names:
        row = [a]
        for b in names:
            w, l, d = r.crosstable.get(a, {}).get(b, (0, 0, 0))
            row.append("" if a == b else f"{w + 0.5 * d:g}/{w + l + d}" if w + l + d else "-")
        rows.append(row)
    return head, rows


def first_move_line(r: Ratings, board: str | None) -> str | None:
    if r.first_player_score is None or board is None:
        return None
    s = r.first_player_score
    return f"First player scored {100 * s:.1f}% ({_elo(elo_from_score(s))} Elo) over {r.games} games"


def _text_table(head: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(x) for x in col) for col in zip(head, *rows)]
    fmt = lambda row: "  ".join(c.rjust(w) if i != 1 else c.ljust(w) for i, (c, w) in enumerate(zip(row, widths)))
    return [fmt(head)] + [fmt(r) for r in rows]


def _md_table(head: list[str], rows: list[list[str]]) -> list[str]:
    return ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)] + ["| " + " | ".join(r) + " |" for r in rows]


def format_ratings(sections: Sequence[Section], fmt: str = "text") -> str:
    """fmt: text | markdown | json."""
    if fmt == "json":
        return json.dumps([{
            "title": s.title, "board": s.board, "anchor": s.ratings.anchor, "games": s.ratings.games,
            "prior": s.ratings.prior, "first_player_score": s.ratings.first_player_score,
            "players": [asdict(p) for p in s.ratings.players],
            "crosstable": {a: {b: list(v) for b, v in row.items()} for a, row in s.ratings.crosstable.items()},
            "match": s.match} for s in sections], indent=2, default=str)
    table = _md_table if fmt == "markdown" else _text_table
    out: list[str] = []
    for s in sections:
        r = s.ratings
        title = f"{s.title}: {r.games} games, anchor {r.anchor}"
        out += [f"## {title}" if fmt == "markdown" else title, ""]
        out += table(*rating_rows(r))
        if r.prior:
            out.append("(a perfect score made the plain MLE infinite: one virtual draw per pair was added)")
        if len(r.players) > 2:
            out += ["", "Crosstable (points/games, row vs column):"] + table(*cross_rows(r))
        first = first_move_line(r, s.board)
        if first:
            out += ["", first]
        if s.match:
            out += [""] + s.match
        out.append("")
    return "\n".join(out).rstrip() + "\n"
