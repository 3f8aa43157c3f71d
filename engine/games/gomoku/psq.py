"""Gomoku game records in piskvork's .psq text, as start positions for teacher games.

Why: a network learns most from the positions it will meet.  `arena report --pgn` writes
the arena's gomoku games in this format (so do piskvork and the Gomocup archives), and
`engine teacher --game gomoku --openings GAMES.psq` starts each teacher game from a
position of one of them: the positions our players actually reach, labelled and played
on by the teacher (DAgger-style), not only positions of the teacher's own games.

Format: a game starts with a header `Piskvorky WxH, ...` (or `Piskvorky N, ...`), then one
line per move `x,y[,ms]` with 1-based coordinates; any other line ends the moves (the
arena adds player and result lines after them).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["PsqGame", "PsqError", "read_psq"]

_HEADER = re.compile(r"^\s*Piskvorky\s+(\d+)(?:\s*x\s*(\d+))?\s*(?:,|$)", re.IGNORECASE)
_MOVE = re.compile(r"^\s*(-?\d+)\s*,\s*(-?\d+)\s*(?:,\s*-?\d+\s*)?$")


class PsqError(ValueError):
    """A .psq text that holds no game, or a move off its board or on an occupied cell."""


@dataclass(frozen=True)
class PsqGame:
    """One recorded game: board size and its moves as cell indices (y * width + x), first player first."""
    width: int
    height: int
    moves: tuple[int, ...]


def read_psq(text: str, source: str = "psq") -> list[PsqGame]:
    """Every game in `text` with at least one move; PsqError (with file:line) on a bad move."""
    games: list[PsqGame] = []
    size: tuple[int, int] | None = None
    moves: list[int] = []

    def finish() -> None:
        if size is not None and moves:
            games.append(PsqGame(size[0], size[1], tuple(moves)))

    for number, line in enumerate(text.splitlines(), 1):
        header = _HEADER.match(line)
        if header:
            finish()
            width = int(header.group(1))
            size, moves = (width, int(header.group(2) or width)), []
            continue
        move = _MOVE.match(line) if size is not None else None
        if move is None:
            finish()
            size, moves = None, []
            continue
        assert size is not None
        x, y = int(move.group(1)) - 1, int(move.group(2)) - 1
        if not (0 <= x < size[0] and 0 <= y < size[1]):
            raise PsqError(f"{source}:{number}: move {x + 1},{y + 1} is off the {size[0]}x{size[1]} board")
        cell = y * size[0] + x
        if cell in moves:
            raise PsqError(f"{source}:{number}: move {x + 1},{y + 1} is on an occupied cell")
        moves.append(cell)
    finish()
    if not games:
        raise PsqError(f"{source}: no games (expected 'Piskvorky WxH, ...' followed by x,y lines)")
    return games
