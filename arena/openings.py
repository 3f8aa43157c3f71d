"""Opening suites: chess EPD/PGN (python-chess), gomoku stone lists, generated gomoku openings.

Every opening is played twice with colours swapped, so an unbalanced opening costs
noise, not bias.  Gomoku openings are stones relative to the centre (Gomocup's
convention: centre = (W // 2, H // 2)), black (the first player) first, alternating;
one relative opening serves every board size.
"""
from __future__ import annotations

import random
import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Sequence

import chess
import chess.pgn

from engine.games.chess import board_from_fen_or_epd

__all__ = ["Opening", "OpeningError", "builtin_chess_suite", "load_chess_openings",
           "load_gomoku_openings", "generate_gomoku_opening", "gomoku_moves", "opening_for"]


class OpeningError(ValueError):
    """An opening file that cannot be read or holds an illegal position/move."""


@dataclass(frozen=True)
class Opening:
    """fen + moves (UCI) for chess; stones (dx, dy relative to the centre) for gomoku."""
    name: str
    fen: str | None = None
    moves: tuple[str, ...] = ()
    stones: tuple[tuple[int, int], ...] = ()

    def describe(self) -> str:
        if self.stones:
            return " ".join(f"{dx},{dy}" for dx, dy in self.stones)
        return f"{self.fen} moves {' '.join(self.moves)}" if self.moves else str(self.fen)


def _epd_openings(text: str, source: str) -> list[Opening]:
    out: list[Opening] = []
    for number, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith(("#", ";")):
            continue
        try:
            board, ops = board_from_fen_or_epd(line)
        except ValueError as exc:
            raise OpeningError(f"{source}:{number}: bad EPD: {exc}") from None
        if not board.is_valid():
            raise OpeningError(f"{source}:{number}: invalid position ({board.status()!r})")
        name = str(ops.get("id", f"{Path(source).name}:{number}"))
        out.append(Opening(name=name, fen=board.fen()))
    return out


def _pgn_openings(path: str) -> list[Opening]:
    out: list[Opening] = []
    with open(path, encoding="utf-8", errors="replace") as handle:
        while True:
            game = chess.pgn.read_game(handle)
            if game is None:
                break
            if game.errors:
                raise OpeningError(f"{path}: game {len(out) + 1}: {game.errors[0]}")
            board = game.board()
            if not board.is_valid():
                raise OpeningError(f"{path}: game {len(out) + 1}: invalid start position")
            moves = tuple(m.uci() for m in game.mainline_moves())
            name = game.headers.get("Opening") or game.headers.get("Event") or f"pgn {len(out) + 1}"
            out.append(Opening(name=name, fen=board.fen(), moves=moves))
    return out


def builtin_chess_suite() -> list[Opening]:
    """~36 common openings, 8-10 plies deep (arena/data/openings.epd)."""
    text = (resources.files("arena") / "data" / "openings.epd").read_text(encoding="utf-8")
    return _epd_openings(text, "openings.epd")


def load_chess_openings(path: str | None) -> list[Opening]:
    """EPD (one position a line) or PGN (mainlines) -> openings; None: the built-in suite."""
    if path is None:
        return builtin_chess_suite()
    try:
        if path.lower().endswith(".pgn"):
            openings = _pgn_openings(path)
        else:
            openings = _epd_openings(Path(path).read_text(encoding="utf-8"), path)
    except OSError as exc:
        raise OpeningError(f"cannot read {path!r}: {exc.strerror}") from None
    if not openings:
        raise OpeningError(f"{path}: no openings found")
    return openings


_INT = re.compile(r"-?\d+")


def load_gomoku_openings(path: str, boards: Sequence[int], rule: str = "freestyle") -> list[Opening]:
    """One opening a line: `dx,dy dx,dy ...` relative to the centre (commas/spaces both fine).
    Every opening is checked on every board size (in bounds, no repeated stone, no five)."""
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise OpeningError(f"cannot read {path!r}: {exc.strerror}") from None
    out: list[Opening] = []
    for number, line in enumerate(lines, 1):
        line = line.strip()
        if not line or line.startswith(("#", ";")):
            continue
        numbers = [int(n) for n in _INT.findall(line)]
        if len(numbers) % 2 or not numbers or _INT.sub("", line).strip(" ,\t"):
            raise OpeningError(f"{path}:{number}: expected pairs 'dx,dy dx,dy ...', got {line!r}")
        opening = Opening(name=f"{Path(path).name}:{number}",
                          stones=tuple(zip(numbers[0::2], numbers[1::2])))
        for size in boards:
            try:
                gomoku_moves(opening, size, size, rule)
            except OpeningError as exc:
                raise OpeningError(f"{path}:{number}: {exc}") from None
        out.append(opening)
    if not out:
        raise OpeningError(f"{path}: no openings found")
    return out


def gomoku_moves(opening: Opening, width: int, height: int, rule: str = "freestyle") -> list[int]:
    """Absolute cell indices of the opening on a W x H board; OpeningError if it does not fit."""
    from engine.games import IllegalMoveError, get_game

    game = get_game("gomoku", width=width, height=height, rule=rule)
    cx, cy = width // 2, height // 2
    state = game.initial_state()
    moves = []
    for dx, dy in opening.stones:
        x, y = cx + dx, cy + dy
        try:
            move = game.index(x, y)
            state = state.play(move)
        except IllegalMoveError as exc:
            raise OpeningError(f"stone {dx},{dy} on {width}x{height}: {exc}") from None
        moves.append(move)
    if state.outcome() is not None:
        raise OpeningError(f"opening {opening.describe()!r} already ends the game")
    return moves


def generate_gomoku_opening(seed: int, index: int, stones: int | None = None, radius: int = 2) -> Opening:
    """A seeded random opening: 2-4 stones (or `stones`) within `radius` of the centre.

    Balanced enough: neither side starts with two touching stones, so no side begins
    with a connected two; and each opening is played with both colours anyway."""
    rng = random.Random(f"gomoku-opening:{seed}:{index}")
    count = stones if stones is not None else rng.choice((2, 3, 4))
    cells = [(dx, dy) for dx in range(-radius, radius + 1) for dy in range(-radius, radius + 1)]
    while True:
        chosen = rng.sample(cells, count)
        touching = any(
            max(abs(a[0] - b[0]), abs(a[1] - b[1])) == 1
            for i, a in enumerate(chosen) for j, b in enumerate(chosen)
            if i < j and (i - j) % 2 == 0)
        if not touching:
            return Opening(name=f"random {seed}/{index}", stones=tuple(chosen))


def opening_for(openings: Sequence[Opening] | None, seed: int, index: int,
                stones: int | None = None) -> Opening:
    """The opening of pair `index`: from a suite (order shuffled by seed) or generated (gomoku)."""
    if not openings:
        return generate_gomoku_opening(seed, index, stones)
    order = list(range(len(openings)))
    random.Random(f"openings:{seed}").shuffle(order)
    return openings[order[index % len(order)]]
