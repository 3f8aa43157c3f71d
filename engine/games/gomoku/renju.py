"""Renju's forbidden points (fouls) for black, our own code.

Under renju black may not play a move that makes an overline (six or more), two fours or two
threes at once, unless the same move makes exactly five (the five wins).  A *four* is a line
that one more black stone turns into exactly five; a *straight four* has two such points at
its two ends (`.XXXX.`, one four).  A *three* is a line that one more black stone turns into
a straight four, where that stone's point must itself not be forbidden: the check recurses
(`MAX_DEPTH` levels; beyond it a point counts as allowed, which only matters in constructed
positions).  One direction gives at most one three; a line like `X.XXX.X` gives two fours.

The board is a mutable bytearray of cells (0 empty, 1 black, 2 white) that the checks set and
clear in place; `rays` is GomokuGame._rays(): per cell and direction, the cells up to five
steps forward and back.  `forbidden_points` screens the empty cells with numpy first (a
foul needs black stones in at least two directions near it, or four in one: 0.2 ms on 15x15),
and what a line says about its centre is cached by the line's cells, so a crowded board's
forbidden points cost about 1.2 ms (tests/data/renju_fouls.txt's 240 positions).  When the
threat solver's C core is built, forbidden_points is its tk_forbidden (the same definitions,
about 22 us a crowded board; tests/test_renju.py checks the two agree), since every black
position's legal moves and every network input under renju need them.
"""
from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Callable, Sequence

if TYPE_CHECKING:
    import numpy as np

__all__ = ["foul", "forbidden_points", "python_forbidden_points", "MAX_DEPTH"]

EMPTY, BLACK = 0, 1
MAX_DEPTH = 8

Rays = Sequence[tuple[tuple[tuple[int, ...], tuple[int, ...]], ...]]


def _line(rays: Rays, cell: int, direction: int) -> tuple[list[int], int]:
    """The cells of one line through `cell` (up to five each way) and cell's index in it."""
    forward, backward = rays[cell][direction]
    return [*reversed(backward), cell, *forward], len(backward)


def _run(line: bytes, i: int) -> tuple[int, int]:
    """First and last index of the black run through line[i] (line[i] taken as black)."""
    lo = i
    while lo > 0 and line[lo - 1] == BLACK:
        lo -= 1
    hi = i
    while hi < len(line) - 1 and line[hi + 1] == BLACK:
        hi += 1
    return lo, hi


def _five_points(line: bytes, centre: int) -> list[int]:
    """Indices of the empty points that give black exactly five through line[centre]."""
    points = []
    for j in range(max(0, centre - 4), min(len(line), centre + 5)):
        if line[j] != EMPTY:
            continue
        lo, hi = _run(line, j)
        if hi - lo == 4 and lo <= centre <= hi:
            points.append(j)
    return points


def _fours(line: bytes, centre: int) -> tuple[int, bool]:
    """(fours through line[centre], whether one is a straight four)."""
    points = _five_points(line, centre)
    if len(points) == 2 and points[1] - points[0] == 5:
        return 1, True
    return min(len(points), 2), False


# What one line says about the black stone on its centre: (five, overline, fours, the points
# where one more stone makes a straight four).  It depends on the line's cells alone, so it
# is cached by them; whether such a point is itself forbidden depends on the whole board.
_LineShape = tuple[bool, bool, int, tuple[int, ...]]
_SHAPES: dict[tuple[bytes, int], _LineShape] = {}
_MAX_SHAPES = 200_000


def _shape(line: bytes, centre: int) -> _LineShape:
    key = (line, centre)
    shape = _SHAPES.get(key)
    if shape is None:
        lo, hi = _run(line, centre)
        fours = _fours(line, centre)[0]
        straight = []
        if not fours and hi - lo < 4:
            for j in range(max(0, centre - 4), min(len(line), centre + 5)):
                if line[j] == EMPTY and _fours(line[:j] + b"\x01" + line[j + 1:], centre)[1]:
                    straight.append(j)
        shape = (hi - lo == 4, hi - lo >= 5, fours, tuple(straight))
        if len(_SHAPES) >= _MAX_SHAPES:
            _SHAPES.clear()
        _SHAPES[key] = shape
    return shape


def foul(board: bytearray, rays: Rays, cell: int, depth: int = 0) -> str | None:
    """Why black may not play on empty `cell` ("overline", "double-four", "double-three"),
    or None when the move is allowed (a five always is).  `board` is restored."""
    board[cell] = BLACK
    try:
        lines = [_line(rays, cell, d) for d in range(4)]
        shapes = [_shape(bytes(map(board.__getitem__, line)), centre) for line, centre in lines]
        if any(shape[0] for shape in shapes):
            return None
        if any(shape[1] for shape in shapes):
            return "overline"
        if sum(shape[2] for shape in shapes) >= 2:
            return "double-four"
        threes = 0
        for (line, _), (_, _, fours, points) in zip(lines, shapes):
            if fours or not points:
                continue
            if depth >= MAX_DEPTH or any(foul(board, rays, line[j], depth + 1) is None for j in points):
                threes += 1
                if threes == 2:
                    return "double-three"
        return None
    finally:
        board[cell] = EMPTY


_OFFSETS = ((1, 0), (0, 1), (1, 1), (1, -1))


def _screen(cells: bytes | bytearray, width: int, height: int) -> np.ndarray:
    """Empty cells that could be forbidden: black stones within four steps in two or more
    directions (two each), or four in one, or five within five steps (an overline)."""
    import numpy as np   # here: the rules load without numpy (a UCI engine's start)
    black = np.frombuffer(cells, dtype=np.uint8).reshape(height, width) == BLACK
    padded = np.zeros((height + 10, width + 10), dtype=np.int8)
    padded[5:5 + height, 5:5 + width] = black
    pairs = np.zeros((height, width), dtype=np.int8)
    strong = np.zeros((height, width), dtype=bool)
    for dx, dy in _OFFSETS:
        near = np.zeros((height, width), dtype=np.int8)
        far = np.zeros((height, width), dtype=np.int8)
        for step in range(1, 6):
            for sign in (1, -1):
                sx, sy = sign * step * dx, sign * step * dy
                part = padded[5 + sy:5 + sy + height, 5 + sx:5 + sx + width]
                far += part
                if step <= 4:
                    near += part
        pairs += near >= 2
        strong |= (near >= 4) | (far >= 5)
    empty = np.frombuffer(cells, dtype=np.uint8).reshape(height, width) == EMPTY
    return np.flatnonzero(empty & ((pairs >= 2) | strong))


def forbidden_points(cells: bytes | bytearray, width: int, height: int, rays: Rays) -> list[int]:
    """Black's forbidden empty cells, in cell order: compiled (threat_kernel.c, the same
    definitions) when the threat solver's core is built, else python_forbidden_points."""
    compiled = _compiled()
    if compiled is not None:
        return compiled(cells, width, height)
    return python_forbidden_points(cells, width, height, rays)


@cache
def _compiled() -> Callable[[bytes | bytearray, int, int], list[int]] | None:
    """The compiled forbidden_cells, or None when the threat solver's core is not built."""
    from engine.games.gomoku.threat_kernel import ThreatKernelUnavailable, forbidden_cells, library
    try:
        library()
    except ThreatKernelUnavailable:
        return None
    return forbidden_cells


def python_forbidden_points(cells: bytes | bytearray, width: int, height: int, rays: Rays) -> list[int]:
    """forbidden_points in Python: the reference the compiled one is tested against."""
    candidates = _screen(cells, width, height)
    if candidates.size == 0:
        return []
    board = bytearray(cells)
    return [int(c) for c in candidates if foul(board, rays, int(c)) is not None]
