"""Gomoku openings: stone lists relative to the centre (Gomocup's convention: centre =
(W // 2, H // 2)), black first and alternating, so one opening serves every board size;
the swap2 book's even openings by name (`even`); seeded random openings when no suite is
given; .psq games as teacher start positions."""
from __future__ import annotations

import random
import re
from pathlib import Path
from typing import Any, Sequence

from engine.games.base import IllegalMoveError
from engine.games.openings import Opening, OpeningBook, OpeningError

__all__ = ["GomokuOpenings", "EVEN_SUITE", "even_suite", "read_stone_suite", "generate_opening", "opening_moves"]

_INT = re.compile(r"-?\d+")


def opening_moves(opening: Opening, game: Any) -> list[int]:
    """The opening's cells on `game`'s board, in order; OpeningError if it does not fit or
    already ends the game."""
    cx, cy = game.width // 2, game.height // 2
    state = game.initial_state()
    moves = []
    for dx, dy in opening.stones:
        try:
            move = game.index(cx + dx, cy + dy)
            state = state.play(move)
        except IllegalMoveError as exc:
            raise OpeningError(f"stone {dx},{dy} on {game.width}x{game.height}: {exc}") from None
        moves.append(move)
    if state.outcome() is not None:
        raise OpeningError(f"opening {opening.describe()!r} already ends the game")
    return moves


def read_stone_suite(path: str, boards: Sequence[int], rule: str = "freestyle") -> list[Opening]:
    """One opening a line: `dx,dy dx,dy ...` relative to the centre (commas/spaces both fine).
    Every opening is checked on every board size (in bounds, no repeated stone, no five)."""
    from engine.games import get_game

    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise OpeningError(f"cannot read {path!r}: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise OpeningError(f"{path}: not text ({exc.reason})") from None
    games = [get_game("gomoku", width=size, height=size, rule=rule) for size in boards]
    out: list[Opening] = []
    for number, line in enumerate(lines, 1):
        line = line.strip()
        if not line or line.startswith(("#", ";")):
            continue
        numbers = [int(n) for n in _INT.findall(line)]
        if len(numbers) % 2 or not numbers or _INT.sub("", line).strip(" ,\t"):
            raise OpeningError(f"{path}:{number}: expected pairs 'dx,dy dx,dy ...', got {line!r}")
        opening = Opening(name=f"{Path(path).name}:{number}", stones=tuple(zip(numbers[0::2], numbers[1::2])))
        for game in games:
            try:
                opening_moves(opening, game)
            except OpeningError as exc:
                raise OpeningError(f"{path}:{number}: {exc}") from None
        out.append(opening)
    if not out:
        raise OpeningError(f"{path}: no openings found")
    return out


def generate_opening(seed: int, index: int, stones: int | None = None, radius: int = 2) -> Opening:
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


EVEN_SUITE = "even"


def even_suite(boards: Sequence[int], rule: str) -> list[Opening]:
    """The swap2 book's openings for this rule and board (three stones a strong brain judged
    within 0.45-0.55, swap2_book.py), each in its distinct board symmetries.  Evenness is judged
    per board, so one board size only."""
    from engine.games.gomoku.swap2 import symmetries
    from engine.games.gomoku.swap2_book import EVEN_OPENINGS

    if len(set(boards)) != 1:
        raise OpeningError(f"{EVEN_SUITE!r} openings are judged per board: give one board size, not {list(boards)}")
    board = boards[0]
    book = EVEN_OPENINGS.get((rule, board))
    if not book:
        known = ", ".join(f"{r} {b}x{b}" for r, b in sorted(EVEN_OPENINGS))
        raise OpeningError(f"no {EVEN_SUITE!r} openings for {rule} on {board}x{board} (there are: {known})")
    out: list[Opening] = []
    for number, (shape, white_win) in enumerate(book, 1):
        placed = dict.fromkeys(tuple(turn(p) for p in shape) for turn in symmetries())
        out.extend(Opening(name=f"even {rule} {board}:{number}/{view} (white {white_win:.3f})", stones=stones)
                   for view, stones in enumerate(placed, 1))
    return out


class GomokuOpenings(OpeningBook):
    """A stone-list suite when given (or the even book by name), else a seeded random opening per pair."""

    named_suites = (EVEN_SUITE,)

    def load(self, path: str | None, boards: Sequence[int], rule: str) -> list[Opening] | None:
        if path == EVEN_SUITE:
            return even_suite(boards, rule)
        return None if path is None else read_stone_suite(path, boards, rule)

    def generate(self, seed: int, index: int, plies: int | None) -> Opening:
        return generate_opening(seed, index, plies)

    def start(self, game: Any, opening: Opening) -> tuple[Any, list[Any]]:
        return game.initial_state(), opening_moves(opening, game)

    def teacher_starts(self, path: str | None) -> dict[str, Any]:
        """The teacher starts from positions of the games in a .psq file (psq.py); None: from
        its own openings."""
        if path is None:
            return {}
        from engine.games.gomoku.psq import PsqError, read_psq
        try:
            return {"start_games": tuple(read_psq(Path(path).read_text(encoding="utf-8"), path))}
        except OSError as exc:
            raise OpeningError(f"{path}: {exc.strerror}") from None
        except (PsqError, UnicodeDecodeError) as exc:
            raise OpeningError(str(exc)) from None
