"""Endgame knowledge for chess MCTS: how to mate a lone king.

A network trained on teacher labels knows that king and rook against king is won, and
says so with a value near 1 in every such position.  A flat value gives the search no
direction, so MCTS shuffles until the fifty-move rule draws the game (six of the eight
fifty-move draws in two 40-game matches against alpha-beta were KRK or KQK).  Classical
engines solve this with a "mop-up" evaluation (Stockfish's KXK): the stronger side gains
for driving the lone king to the edge (to the bishop's corner with bishop and knight)
and for bringing its own king close.  `MopUpEvaluator` puts that gradient into the
network's value where it applies and leaves the network's priors and every other
position alone; the tree's mate solver finishes the job once a mate is within reach.
Against a lone king with only pawns or minor pieces the network still judges whether it
is won, but its value is capped below the mop-up value, so that promoting never looks
like a step down from a saturated "won" 1.0.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any, Sequence

import chess

from engine.types import Evaluation

__all__ = ["mop_up_value", "MopUpEvaluator", "MOP_UP_FLOOR", "MOP_UP_SPAN"]

# The stronger side's value lies in [FLOOR, FLOOR + SPAN]: high enough that simplifying into
# a mop-up ending never looks worse than the network's "clearly winning", wide enough that a
# king driven one square closer to the corner shows in the search's averages.
MOP_UP_FLOOR = 0.80
MOP_UP_SPAN = 0.19


def _edge_push(square: int) -> float:
    """0 in the centre .. 1 in a corner (Stockfish's push_to_edge shape, normalised)."""
    file_d = min(chess.square_file(square), 7 - chess.square_file(square))
    rank_d = min(chess.square_rank(square), 7 - chess.square_rank(square))
    return 1.0 - (file_d * file_d + rank_d * rank_d) / 18.0


def _corner_push(square: int, light_bishop: bool) -> float:
    """0 .. 1 as the king nears a corner the bishop controls (a8 and h1 are light, a1 and h8 dark)."""
    corners = (chess.A8, chess.H1) if light_bishop else (chess.A1, chess.H8)
    return 1.0 - min(chess.square_distance(square, corner) for corner in corners) / 7.0


def _can_force_mate(board: chess.Board, strong: chess.Color) -> bool:
    """A queen or rook; bishop and knight; or bishops on both colours (pawns do not count:
    a pawn ending is the network's to judge)."""
    if board.pieces_mask(chess.QUEEN, strong) or board.pieces_mask(chess.ROOK, strong):
        return True
    bishops = board.pieces_mask(chess.BISHOP, strong)
    if bishops and board.pieces_mask(chess.KNIGHT, strong):
        return True
    return bool(bishops & chess.BB_LIGHT_SQUARES) and bool(bishops & chess.BB_DARK_SQUARES)


def mop_up_value(board: chess.Board, network_value: float) -> float | None:
    """Value in [-1, 1] for the side to move when one side has a lone king; None otherwise.
    With mating material the mop-up value replaces the network's.  With pawns or a minor
    piece only, the network judges whether it is won at all, and its value is capped at the
    mop-up value: otherwise a "won" 1.0 before a pawn promotes would look better than the
    mop-up value after, and the search would put off promoting."""
    strong = _lone_king_opponent(board)
    if strong is None:
        return None
    weak_king, strong_king = board.king(not strong), board.king(strong)
    if weak_king is None or strong_king is None:
        return None
    mating = _can_force_mate(board, strong)
    drive = _edge_push(weak_king)
    bishops = board.pieces_mask(chess.BISHOP, strong)
    only_one_bishop_colour = not (bishops & chess.BB_LIGHT_SQUARES and bishops & chess.BB_DARK_SQUARES)
    if (mating and only_one_bishop_colour and bishops
            and not board.pieces_mask(chess.QUEEN, strong) | board.pieces_mask(chess.ROOK, strong)):
        # bishop and knight mate only in a corner of the bishop's colour
        drive = 0.5 * (drive + _corner_push(weak_king, bool(bishops & chess.BB_LIGHT_SQUARES)))
    closeness = (7 - chess.square_distance(strong_king, weak_king)) / 6.0
    value = MOP_UP_FLOOR + MOP_UP_SPAN * (0.6 * drive + 0.4 * min(1.0, closeness))
    if not mating:   # below the same kings with a queen, so promoting gains
        value = min(value - MOP_UP_SPAN / 4, network_value if board.turn == strong else -network_value)
    return value if board.turn == strong else -value


def _lone_king_opponent(board: chess.Board) -> chess.Color | None:
    """The side playing against a lone king (None: no lone king, or two bare kings)."""
    for strong in (chess.WHITE, chess.BLACK):
        weak = board.occupied_co[not strong]
        if weak == board.kings & weak and board.occupied_co[strong] & ~board.kings:
            return strong
    return None


class MopUpEvaluator:
    """Wraps a chess evaluator: mop-up values where `mop_up_value` applies, the inner
    evaluator's answer everywhere (priors always the inner evaluator's)."""

    def __init__(self, inner: Any):
        self.inner = inner

    def evaluate(self, states: Sequence) -> list[Evaluation]:
        evaluations = self.inner.evaluate(states)
        for i, state in enumerate(states):
            value = mop_up_value(state.board, evaluations[i].value)
            if value is not None and value != evaluations[i].value:
                win, loss = max(value, 0.0), max(-value, 0.0)
                evaluations[i] = replace(evaluations[i], value=value,
                                         extra={"wdl": (win, 1.0 - win - loss, loss)})
        return evaluations

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)                   # cache stats, backend, meta ...
