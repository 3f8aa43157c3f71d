"""Swap2 opening choices: which three stones to propose, and which side to take.

Swap2 (Gomocup's SWAP2BOARD, the Gomoku World Championships' opening): the first player
places three stones (black, white, black); the second either takes black (SWAP), stays white
and plays the fourth stone, or places the fourth and fifth stones (white, black) and hands the
choice back; the first then takes black (SWAP) or plays white's sixth stone.

- To propose where the book (`swap2_book.EVEN_OPENINGS`: openings a strong brain judged even,
  by rule and board) has openings: one of them at random, in one of the eight board symmetries
  at random, so a brain does not always propose the same stones.  Our own search at a
  proposal's budget cannot find these: it reads every opening near the centre as black's by
  about the same margin, and the one it found "most even" was one the opponent took black on.
- Elsewhere, search each candidate briefly and the most even few again, and propose the one
  closest to 0: whichever side the opponent takes, it gains as little as we can find.  The
  candidates are the 26 classic three-stone openings (black in the centre, white next to it
  straight or diagonally, black's second within two cells: renju's sure openings, each in a
  random symmetry) and as many again with white's first stone two cells away.
- To choose (three or five stones given), search the position and stay (play the search's
  move as white) when its value for white is at least 0, else take black (SWAP).  The third
  option (two more stones, the choice handed back) is never taken: it lets the opponent take
  the side its search prefers, where staying or swapping takes the side ours prefers.
"""
from __future__ import annotations

import random
import time
from dataclasses import dataclass
from typing import Callable

from engine.games.gomoku.rules import GomokuGame, GomokuState
from engine.games.gomoku.swap2_book import EVEN_OPENINGS, Opening

__all__ = ["Evaluate", "Swap2Answer", "Shape", "opening_shapes", "book_shapes", "symmetries", "propose", "choose",
           "PROPOSE_MIN_SECONDS", "PROPOSE_SCREEN_SHARE", "PROPOSE_FINALISTS"]

Evaluate = Callable[[GomokuState, float], tuple[float, "int | None"]]
"""(state, seconds) -> (value for the side to move in [-1, 1], the search's best move)."""

PROPOSE_MIN_SECONDS = 0.02   # the least a candidate is searched: below that MCTS sees its network alone
PROPOSE_SCREEN_SHARE = 0.6   # of the budget: every candidate once; the rest for the finalists
PROPOSE_FINALISTS = 3        # the most even candidates, searched again with the rest
BOOK_SEARCH_SHARE = 0.1      # of the budget: a book opening's search, only to report our reading of it

Shape = Opening   # (dx, dy) of black, white, black about the centre


@dataclass(frozen=True)
class Swap2Answer:
    """`swap`: take black; else `stones` are the stones to place (three proposed, or the
    fourth or sixth).  `value`: the searched position's value for white to move, `searched`
    how many positions were searched for it; `book`: the stones are a book opening."""
    swap: bool = False
    stones: tuple[int, ...] = ()
    value: float = 0.0
    searched: int = 1
    book: bool = False

    def describe(self, game: GomokuGame) -> str:
        """One line for the manager's log (MESSAGE)."""
        what = "takes black (SWAP)" if self.swap else "places " + " ".join(
            game.format_move(None, move) for move in self.stones)
        source = "a book opening; " if self.book else ""
        return f"swap2: {what}; {source}white's value {self.value:+.2f} ({self.searched} searched)"


def opening_shapes() -> list[Shape]:
    """Three-stone shapes relative to the centre, one of each pair of mirror images: white
    next to black (straight or diagonal: the 26 classic openings) or two cells away, black's
    second stone within two cells of the centre."""
    shapes: list[Shape] = []
    for white in ((0, -1), (1, -1), (0, -2), (1, -2), (2, -2)):
        mirror = _mirror_fixing(white)
        seen: set[tuple[int, int]] = set()
        for dy in range(-2, 3):
            for dx in range(-2, 3):
                third = (dx, dy)
                if third in ((0, 0), white) or mirror(third) in seen:
                    continue
                seen.add(third)
                shapes.append(((0, 0), white, third))
    return shapes


def _mirror_fixing(white: tuple[int, int]) -> Callable[[tuple[int, int]], tuple[int, int]]:
    """The board reflection that keeps the centre and `white` where they are (a straight
    neighbour: across the column; a diagonal one: across that diagonal; else none)."""
    wx, wy = white
    if wx == 0:
        return lambda p: (-p[0], p[1])
    if wx == -wy:
        return lambda p: (-p[1], -p[0])
    return lambda p: p


def symmetries() -> list[Callable[[tuple[int, int]], tuple[int, int]]]:
    """The board's eight symmetries about the centre, on (dx, dy) offsets."""
    def symmetry(sx: int, sy: int, transpose: bool) -> Callable[[tuple[int, int]], tuple[int, int]]:
        def turn(p: tuple[int, int]) -> tuple[int, int]:
            x, y = (p[1], p[0]) if transpose else p
            return sx * x, sy * y
        return turn
    return [symmetry(sx, sy, t) for sx in (1, -1) for sy in (1, -1) for t in (False, True)]


def book_shapes(game: GomokuGame) -> list[Shape]:
    """The book's even openings for this rule and board (none: propose by search)."""
    if game.width != game.height:
        return []
    return [shape for shape, _ in EVEN_OPENINGS.get((game.rule, game.width), ())]


def _placed(game: GomokuGame, shapes: list[Shape], rng: random.Random) -> list[tuple[int, int, int]]:
    """Each shape about the centre in a random symmetry, where it fits on the board."""
    cx, cy = game.width // 2, game.height // 2
    out = []
    for shape in shapes:
        turn = rng.choice(symmetries())
        cells = [turn(p) for p in shape]
        if all(0 <= cx + dx < game.width and 0 <= cy + dy < game.height for dx, dy in cells):
            moves = tuple(game.index(cx + dx, cy + dy) for dx, dy in cells)
            out.append((moves[0], moves[1], moves[2]))
    rng.shuffle(out)
    return out


def propose(game: GomokuGame, evaluate: Evaluate, seconds: float, *,
            rng: random.Random | None = None, clock: Callable[[], float] = time.monotonic
            ) -> Swap2Answer:
    """The three stones (black, white, black): a book opening, else the candidate whose
    position our search finds most even."""
    rng = rng or random.Random()
    book = _placed(game, book_shapes(game), rng)
    if book:
        moves = book[0]
        value, _ = evaluate(game.state_from_moves(moves), max(PROPOSE_MIN_SECONDS, seconds * BOOK_SEARCH_SHARE))
        return Swap2Answer(stones=moves, value=value, searched=1, book=True)
    deadline = clock() + seconds
    candidates = _placed(game, opening_shapes(), rng)
    screened = max(1, min(len(candidates), int(seconds * PROPOSE_SCREEN_SHARE / PROPOSE_MIN_SECONDS)))
    candidates = candidates[:screened]
    scores: list[tuple[float, tuple[int, int, int]]] = []
    screen_end = clock() + seconds * PROPOSE_SCREEN_SHARE
    for index, moves in enumerate(candidates):
        share = max(0.0, screen_end - clock()) / (len(candidates) - index)
        value, _ = evaluate(game.state_from_moves(moves), max(share, PROPOSE_MIN_SECONDS))
        scores.append((value, moves))
    scores.sort(key=lambda scored: abs(scored[0]))
    finalists = scores[:PROPOSE_FINALISTS]
    searched = len(scores)
    if len(finalists) > 1 and deadline - clock() >= PROPOSE_MIN_SECONDS * len(finalists):
        rescored = []
        for index, (_, moves) in enumerate(finalists):
            share = max(0.0, deadline - clock()) / (len(finalists) - index)
            value, _ = evaluate(game.state_from_moves(moves), max(share, PROPOSE_MIN_SECONDS))
            rescored.append((value, moves))
        searched += len(rescored)
        finalists = sorted(rescored, key=lambda scored: abs(scored[0]))
    value, moves = finalists[0]
    return Swap2Answer(stones=moves, value=value, searched=searched)


def choose(state: GomokuState, evaluate: Evaluate, seconds: float) -> Swap2Answer:
    """Three or five stones on the board, white to move: stay white and play, or take black."""
    value, move = evaluate(state, seconds)
    if value < 0 or move is None:
        return Swap2Answer(swap=True, value=value)
    return Swap2Answer(stones=(move,), value=value)

