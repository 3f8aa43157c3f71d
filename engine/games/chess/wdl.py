"""Win/draw/loss per mille from the alpha-beta's centipawn score (UCI_ShowWDL).

What a score means in results depends on how the engine plays on from it, so the model is fitted
to its own games (`benchmarks/chess_wdl_fit.py`, figures in docs/measurements/chess-native-search.md):
Stockfish's shape, P(win) = sigmoid((cp - a) / b) and P(loss) = sigmoid((-cp - a) / b), the draw
the rest, with a and b quadratic in the material left.  Measured: with little material left the
same centipawns win far less often (our endings are drawn more than their scores say).
"""
from __future__ import annotations

import math

import chess

__all__ = ["material", "wdl_per_mille"]

MATERIAL_MIN, MATERIAL_MAX, MATERIAL_SCALE = 5, 78, 58.0
_VALUES = ((chess.PAWN, 1), (chess.KNIGHT, 3), (chess.BISHOP, 3), (chess.ROOK, 5), (chess.QUEEN, 9))

# a = A[0] + A[1] m + A[2] m^2, b likewise with B, m = clamped material / 58: fitted to 131,576
# reports of 1,000 alpha-beta games at 2+0.02 (the fifty-seventh session's evaluation A/Bs).
A = (536.9, -894.5, 430.5)
B = (254.5, -346.1, 190.8)


def material(board: chess.Board) -> float:
    """Both sides' material (pawn 1, minor 3, rook 5, queen 9), clamped and scaled to 0.09..1.34."""
    total = sum(value * chess.popcount(board.pieces_mask(piece, chess.WHITE) | board.pieces_mask(piece, chess.BLACK))
                for piece, value in _VALUES)
    return min(max(total, MATERIAL_MIN), MATERIAL_MAX) / MATERIAL_SCALE


def wdl_per_mille(cp: int, board: chess.Board) -> tuple[int, int, int]:
    """(win, draw, loss) per mille for the side to move at `board` with score `cp`; sums to 1000."""
    m = material(board)
    a = A[0] + A[1] * m + A[2] * m * m
    b = max(1.0, B[0] + B[1] * m + B[2] * m * m)
    win = _sigmoid((cp - a) / b)
    loss = _sigmoid((-cp - a) / b)
    w, lo = round(1000 * win), round(1000 * loss)
    return w, 1000 - w - lo, lo


def _sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x)) if x > -500 else 0.0
