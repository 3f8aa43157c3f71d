"""Gomoku rules on any W x H board (5..26 each side), our own code.

Moves are cell indices `y * width + x`; text is Gomocup's "x,y" (x the column).
Rules, Gomocup's leagues (the INFO rule codes in RULE_CODES):
- "freestyle": five or more in a row wins.
- "standard": exactly five wins; an overline does not.
- "renju": black (the first player) wins with exactly five only, and black's overline,
  double four and double three are forbidden points (engine/games/gomoku/renju.py): they are not
  among black's legal moves, so a player can never play one, and a white four whose only
  block is a forbidden point wins.  White wins with five or more and has no fouls.
- "caro": Gomocup's caro league: exactly five wins unless both of its ends are blocked by
  the opponent's stones (the board's edge does not block).  The judge's older rule-8
  reading (five or more, unblocked) is not played.
A full board with no winner is a draw.  The winner is detected from the last move only,
so `play` costs O(board cells) for the copy and O(1) for the win check.
"""
from __future__ import annotations

import random
from bisect import bisect_left
from typing import Hashable, Sequence

from engine.games.base import GameSetupError, IllegalMoveError, Outcome
from engine.games.gomoku.renju import foul, forbidden_points

__all__ = ["GomokuGame", "GomokuState", "RULES", "RULE_CODES", "rule_from_code", "MIN_SIZE", "MAX_SIZE", "DIRECTIONS",
           "symmetry_permutations", "zobrist_code", "BENCH_OPENINGS"]

RULES = ("freestyle", "standard", "renju", "caro")
RULE_CODES = {"freestyle": 0, "standard": 1, "renju": 4, "caro": 8}   # Gomocup INFO rule (bit mask)


def rule_from_code(code: int) -> tuple[str, str | None]:
    """Gomocup INFO rule bit mask -> (our rule, a note when part of it is not played).
    Renju (4) and caro (8) win over exactly-five (1); continuous games (2) are not played."""
    if code & 4:
        rule = "renju"
    elif code & 8:
        rule = "caro"
    elif code & 1:
        rule = "standard"
    else:
        rule = "freestyle"
    extra = code & ~(RULE_CODES[rule] | (1 if rule in ("renju", "caro") else 0))
    note = None
    if extra:
        dropped = [name for bit, name in ((1, "exactly five"), (2, "continuous"), (4, "renju"), (8, "caro"))
                   if extra & bit] or [f"bits {extra}"]
        note = f"rule {code}: {', '.join(dropped)} not played, playing {rule}"
    return rule, note
MIN_SIZE, MAX_SIZE = 5, 26
EMPTY, FIRST, SECOND = 0, 1, 2  # cell contents; FIRST moves first (black)
DIRECTIONS = ((1, 0), (0, 1), (1, 1), (1, -1))   # (dx, dy): row, column, both diagonals
_RAYS: dict[tuple[int, int], list] = {}   # (width, height) -> GomokuGame._rays() table

# Zobrist table indexed by [stone - 1][y * MAX_SIZE + x], so keys do not depend on width.
_rng = random.Random(0x5EED_60B0)
_ZOBRIST = tuple(tuple(_rng.getrandbits(64) for _ in range(MAX_SIZE * MAX_SIZE)) for _ in range(2))
del _rng


def zobrist_code(stone: int, x: int, y: int) -> int:
    """The key part of `stone` (1 first player, 2 second) on (x, y): GomokuState.key() is the
    XOR of these, so private search boards can keep an equal key incrementally."""
    return _ZOBRIST[stone - 1][y * MAX_SIZE + x]


class GomokuState:
    __slots__ = ("game", "cells", "ply", "last_move", "_key", "_outcome", "_moves", "_empty", "_parent_moves",
                 "_forbidden")

    def __init__(self, game: "GomokuGame", cells: bytes, ply: int, last_move: int | None,
                 key: int, outcome: Outcome | None):
        self.game = game
        self.cells = cells          # bytes of width*height: 0 empty, 1 first player, 2 second
        self.ply = ply              # stones on the board
        self.last_move = last_move
        self._key = key
        self._outcome = outcome
        self._moves: list[int] | None = None
        self._empty: list[int] | None = None     # every empty cell, when _moves leaves fouls out
        # The parent's legal moves, when known at play(): ours are those less last_move
        # (a list copy and one deletion instead of a scan of every cell).
        self._parent_moves: list[int] | None = None
        self._forbidden: list[int] | None = None   # black's forbidden points, once computed

    @property
    def to_play(self) -> int:
        return self.ply & 1

    @property
    def width(self) -> int:
        return self.game.width

    @property
    def height(self) -> int:
        return self.game.height

    def legal_moves(self) -> Sequence[int]:
        if self._moves is None:
            parent = self._parent_moves
            if self._outcome is not None:
                self._moves = []
            elif parent is not None and self.last_move is not None:
                moves = parent.copy()
                del moves[bisect_left(parent, self.last_move)]
                self._moves = moves
            else:
                self._moves = [i for i, c in enumerate(self.cells) if c == EMPTY]
            self._parent_moves = None
            if self.game.fouls and self.ply & 1 == 0 and self._moves:
                forbidden = set(self.black_forbidden_points())
                # A black player with only forbidden points left may play them (and lose by the rules).
                if forbidden and len(forbidden) < len(self._moves):
                    self._empty = self._moves
                    self._moves = [m for m in self._moves if m not in forbidden]
        return self._moves

    def moves_are_empty_cells(self) -> bool:
        """Whether legal_moves() is every empty cell in cell order, so that a caller may read
        them off `cells` without the list: a game not over, and no renju fouls to take out."""
        return self._outcome is None and not (self.game.fouls and self.ply & 1 == 0)

    def forbidden_points(self) -> list[int]:
        """Black's forbidden points (renju, black to move; else none), in cell order."""
        if not self.game.fouls or self.ply & 1 or self._outcome is not None:
            return []
        return self.black_forbidden_points()

    def black_forbidden_points(self) -> list[int]:
        """Black's forbidden points whoever is to move (renju; else none), in cell order: the
        network sees them on white's turns too, since white wins by forcing black onto one."""
        if not self.game.fouls or self._outcome is not None:
            return []
        if self._forbidden is None:
            self._forbidden = forbidden_points(self.cells, self.game.width, self.game.height,
                                               self.game._rays())
        return self._forbidden

    def foul(self, move: int) -> str | None:
        """Why the side to move may not play on empty `move` ("double-three", ...), else None."""
        if not self.game.fouls or self.ply & 1 or self.cells[move] != EMPTY:
            return None
        return foul(bytearray(self.cells), self.game._rays(), move)

    def is_legal(self, move: int) -> bool:
        if self._outcome is not None or not 0 <= move < len(self.cells) or self.cells[move] != EMPTY:
            return False
        if self.game.fouls and not self.ply & 1:
            moves = self.legal_moves()
            at = bisect_left(moves, move)
            return at < len(moves) and moves[at] == move
        return True

    def play(self, move: int) -> "GomokuState":
        if not self.is_legal(move):
            reason = self.foul(move) if 0 <= move < len(self.cells) and self._outcome is None else None
            if reason is not None:
                raise IllegalMoveError(f"illegal move {self.game.format_move(self, move)}: "
                                       f"a forbidden point for black ({reason})")
            raise IllegalMoveError(f"illegal move {self.game.format_move(self, move)}")
        player = self.ply & 1
        stone = FIRST + player
        board = bytearray(self.cells)
        board[move] = stone
        cells = bytes(board)
        game = self.game
        key = self._key ^ _ZOBRIST[stone - 1][move // game.width * MAX_SIZE + move % game.width]
        outcome = None
        if self.ply >= 8 and game.makes_five(cells, move):   # a five needs 9 stones
            outcome = Outcome(winner=player, reason="five in a row")
        elif self.ply + 1 == len(cells):
            outcome = Outcome(winner=None, reason="board full")
        child = GomokuState(self.game, cells, self.ply + 1, move, key, outcome)
        child._parent_moves = self._empty if self._empty is not None else self._moves
        return child

    def outcome(self) -> Outcome | None:
        return self._outcome

    def repeated(self) -> bool:
        return False    # every move adds a stone

    def key(self) -> Hashable:
        return self._key

    def stone_at(self, x: int, y: int) -> int:
        return self.cells[y * self.game.width + x]

    def __repr__(self) -> str:
        rows = ["".join(".XO"[self.cells[y * self.width + x]] for x in range(self.width))
                for y in range(self.height)]
        return "GomokuState(\n" + "\n".join(rows) + "\n)"


# `engine bench`'s gomoku positions: (label, board size, stones in column-letter /
# row-number notation, a1 = x 0, y 0, black first); they never change, so benches compare.
BENCH_OPENINGS: tuple[tuple[str, int, str], ...] = (
    ("15x15 two stones", 15, "h8 i9"),
    ("15x15 sure-star", 15, "h8 i8 i9 g7 h10"),
    ("15x15 middle game", 15, "h8 h9 i9 g7 j10 k11 i7 i8 j8 k9 g9"),
    ("15x15 edge fight", 15, "c3 d4 d3 e3 c4 c5 b2 a1"),
    ("20x20 three stones", 20, "j10 k11 k10"),
    ("20x20 middle game", 20, "j10 k10 k11 l12 j11 j12 i12 l9 h13"),
)


class GomokuGame:
    """A board size and a rule.  `get_game("gomoku", width=15, height=15, rule="freestyle")`.
    The class attributes are the per-game facts of engine/games/base.py's Game."""
    name = "gomoku"
    sized = True
    protocol = "gomocup"
    stones = True
    max_plies: int | None = None  # a full board ends the game
    bench_depth = 9               # about 10 s on one free core (measured 2026-11)

    def __init__(self, width: int = 15, height: int | None = None, rule: str = "freestyle"):
        height = width if height is None else height
        for side in (width, height):
            if not MIN_SIZE <= side <= MAX_SIZE:
                raise GameSetupError(f"board size {width}x{height} outside {MIN_SIZE}..{MAX_SIZE}")
        if rule not in RULES:
            raise GameSetupError(f"unknown rule {rule!r} (expected one of {', '.join(RULES)})")
        self.width, self.height, self.rule = width, height, rule

    def __repr__(self) -> str:
        return f"GomokuGame({self.width}x{self.height}, {self.rule})"

    @property
    def label(self) -> str:
        return f"gomoku {self.width}x{self.height}"

    def dirichlet_alpha(self, n_moves: int) -> float:
        """10 / the legal moves: the noise spreads as thin as the board is wide."""
        return 10.0 / max(n_moves, 1)

    @classmethod
    def bench_positions(cls) -> list[tuple[str, GomokuState]]:
        positions = []
        for label, size, stones in BENCH_OPENINGS:
            game = cls(size, size)
            moves = [game.index(ord(stone[0]) - ord("a"), int(stone[1:]) - 1) for stone in stones.split()]
            positions.append((f"{label}: {stones}", game.state_from_moves(moves)))
        return positions

    def __eq__(self, other: object) -> bool:
        return isinstance(other, GomokuGame) and (self.width, self.height, self.rule) == (
            other.width, other.height, other.rule)

    def __hash__(self) -> int:
        return hash((self.width, self.height, self.rule))

    def initial_state(self) -> GomokuState:
        return GomokuState(self, bytes(self.width * self.height), 0, None, 0, None)

    def state_from_moves(self, moves: Sequence[int]) -> GomokuState:
        state = self.initial_state()
        for move in moves:
            state = state.play(move)
        return state

    def state_from_stones(self, first: Sequence[int], second: Sequence[int]) -> GomokuState:
        """A position given as two stone sets, no move order (Gomocup BOARD, openings).

        Replaying stones one by one could pass through a finished position (under
        "standard" a later stone can turn a five into an overline), so the cells are
        set directly.  The first player has as many stones as the second or one more.
        """
        if len(first) - len(second) not in (0, 1):
            raise GameSetupError(f"{len(first)} first-player and {len(second)} second-player "
                                 "stones: the first player has as many or one more")
        cells = bytearray(self.width * self.height)
        key = 0
        for stone, moves in ((FIRST, first), (SECOND, second)):
            for move in moves:
                if not 0 <= move < len(cells) or cells[move] != EMPTY:
                    raise GameSetupError(f"stone on cell {move}: off the board or placed twice")
                cells[move] = stone
                x, y = self.coords(move)
                key ^= _ZOBRIST[stone - 1][y * MAX_SIZE + x]
        frozen = bytes(cells)
        winners = {frozen[m] - 1 for m in range(len(frozen)) if frozen[m] and self.makes_five(frozen, m)}
        if len(winners) > 1:
            raise GameSetupError("both players have five in a row")
        outcome = None
        if winners:
            outcome = Outcome(winner=winners.pop(), reason="five in a row")
        elif len(first) + len(second) == len(frozen):
            outcome = Outcome(winner=None, reason="board full")
        return GomokuState(self, frozen, len(first) + len(second), None, key, outcome)

    def index(self, x: int, y: int) -> int:
        if not (0 <= x < self.width and 0 <= y < self.height):
            raise IllegalMoveError(f"{x},{y} is off the {self.width}x{self.height} board")
        return y * self.width + x

    def coords(self, move: int) -> tuple[int, int]:
        return move % self.width, move // self.width

    def parse_move(self, state: GomokuState, text: str) -> int:
        parts = text.strip().split(",")
        try:
            x, y = (int(p) for p in parts)
        except ValueError:
            raise IllegalMoveError(f"malformed move {text!r} (expected x,y)") from None
        move = self.index(x, y)
        if not state.is_legal(move):
            if state.cells[move]:
                raise IllegalMoveError(f"{x},{y} is occupied")
            if state.outcome() is not None:
                raise IllegalMoveError(f"{x},{y} is not playable: the game is over")
            raise IllegalMoveError(f"{x},{y} is a forbidden point for black ({state.foul(move)})")
        return move

    def format_move(self, state: GomokuState | None, move: int) -> str:
        x, y = self.coords(move)
        return f"{x},{y}"

    def run_length(self, cells: bytes, move: int, dx: int, dy: int) -> int:
        """Length of the same-colour line through `move` along (dx, dy)."""
        w, h = self.width, self.height
        stone = cells[move]
        x0, y0 = move % w, move // w
        length = 1
        for sign in (1, -1):
            x, y = x0 + sign * dx, y0 + sign * dy
            while 0 <= x < w and 0 <= y < h and cells[y * w + x] == stone:
                length += 1
                x += sign * dx
                y += sign * dy
        return length

    def makes_five(self, cells: bytes | bytearray, move: int) -> bool:
        """Does the stone on `move` complete a winning line under this rule (for its colour)?"""
        stone = cells[move]
        rule = self.rule
        exact = rule in ("standard", "caro") or (rule == "renju" and stone == FIRST)
        for forward, backward in self._rays()[move]:
            ahead = 0
            for cell in forward:
                if cells[cell] != stone:
                    break
                ahead += 1
            behind = 0
            for cell in backward:
                if cells[cell] != stone:
                    break
                behind += 1
            n = 1 + ahead + behind
            if n > 5 and not exact:
                return True
            if n == 5:
                if rule != "caro":
                    return True
                # Caro: not when the opponent's stones close both ends.
                ends = [ray[count] for ray, count in ((forward, ahead), (backward, behind)) if count < len(ray)]
                if not (len(ends) == 2 and all(cells[end] not in (EMPTY, stone) for end in ends)):
                    return True
        return False

    @property
    def fouls(self) -> bool:
        """Does this rule forbid points to black (renju)?"""
        return self.rule == "renju"

    def _rays(self) -> list[tuple[tuple[tuple[int, ...], tuple[int, ...]], ...]]:
        """Per cell, per line direction: the cell indices up to 5 steps forward and back
        (clipped at the edge).  Five steps each way tell a five from an overline; the table
        (built once per board) spares play() the coordinate arithmetic of run_length."""
        rays = _RAYS.get((self.width, self.height))
        if rays is None:
            w, h = self.width, self.height

            def ray(x: int, y: int, dx: int, dy: int) -> tuple[int, ...]:
                out = []
                for step in range(1, 6):
                    cx, cy = x + step * dx, y + step * dy
                    if not (0 <= cx < w and 0 <= cy < h):
                        break
                    out.append(cy * w + cx)
                return tuple(out)

            rays = _RAYS[(w, h)] = [
                tuple((ray(m % w, m // w, dx, dy), ray(m % w, m // w, -dx, -dy)) for dx, dy in DIRECTIONS)
                for m in range(w * h)]
        return rays


def symmetry_permutations(width: int, height: int) -> list[tuple[int, ...]]:
    """Cell-index permutations for the board's symmetries: 8 on a square board, 4 otherwise.

    perm[i] is where cell i goes; the identity comes first.  Used to augment training data.
    """
    def build(fn) -> tuple[int, ...]:
        out = [0] * (width * height)
        for y in range(height):
            for x in range(width):
                nx, ny = fn(x, y)
                out[y * width + x] = ny * width + nx
        return tuple(out)

    w1, h1 = width - 1, height - 1
    maps = [lambda x, y: (x, y), lambda x, y: (w1 - x, y),
            lambda x, y: (x, h1 - y), lambda x, y: (w1 - x, h1 - y)]
    if width == height:
        maps += [lambda x, y: (y, x), lambda x, y: (h1 - y, x),
                 lambda x, y: (y, w1 - x), lambda x, y: (h1 - y, w1 - x)]
    return [build(fn) for fn in maps]
