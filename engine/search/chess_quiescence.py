"""Quiescence-corrected leaf values for chess MCTS.

A small network searched for a few hundred playouts a move misses what alpha-beta's
quiescence never does: a piece left en prise, a capture sequence that wins material.
`QuiescenceValueEvaluator` wraps the network evaluator and, per leaf, runs a short
capture-only search (stand-pat, MVV-LVA, PeSTO evaluation: the alpha-beta player's own
board) and adds what that search wins over the static evaluation, mapped into value
units, to the network's value.  Quiet positions (nothing to win by capturing) keep the
network's value exactly; priors are never touched.  The weight is tuned by match
(weights/README.md).
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any, Sequence

import chess

from engine.search.ab_chess import ChessSearchBoard
from engine.types import Evaluation, value_from_cp

__all__ = ["QuiescenceValueEvaluator", "quiescence_gain"]

_MATE = 100_000
_CLAMP_CP = 1500          # a swing beyond this is "winning", whatever the exact count
_MAX_VALUE = 0.999


def quiescence_gain(board: chess.Board, max_nodes: int = 200, max_plies: int = 8) -> tuple[int, int]:
    """(static evaluation, centipawns the side to move gains over it by captures, and
    evasions when in check), searched with stand-pat: the gain is >= 0 when not in check.
    Bounded by max_nodes, after which every further node stands pat."""
    search = ChessSearchBoard(board.copy(stack=False))
    static = search.evaluate()
    budget = [max_nodes]

    def qsearch(alpha: int, beta: int, ply: int) -> int:
        budget[0] -= 1
        in_check = search.in_check()
        if budget[0] <= 0 or ply >= max_plies:
            return search.evaluate()
        if in_check:
            best = -_MATE
            moves = search.ordered_moves()
            if not moves:
                return ply - _MATE
        else:
            best = search.evaluate()
            if best >= beta:
                return best
            alpha = max(alpha, best)
            moves = search.noisy_moves()
        for move, _ in sorted(moves, key=lambda pair: pair[1], reverse=True):
            search.push(move)
            score = -qsearch(-beta, -alpha, ply + 1)
            search.pop()
            if score > best:
                best = score
                if score > alpha:
                    alpha = score
                    if score >= beta:
                        break
        return best

    gain = qsearch(-_MATE, _MATE, 0) - static
    return static, max(-_CLAMP_CP, min(_CLAMP_CP, gain))


class QuiescenceValueEvaluator:
    """An Evaluator over chess states: `inner`'s priors, and its value plus `weight` times
    what a capture search wins (in value units, measured from the static evaluation)."""

    def __init__(self, inner: Any, weight: float = 1.0, max_nodes: int = 200):
        self.inner, self.weight, self.max_nodes = inner, weight, max_nodes

    def evaluate(self, states: Sequence[Any]) -> list[Evaluation]:
        evaluations = self.inner.evaluate(states)
        return [self._corrected(state, evaluation) for state, evaluation in zip(states, evaluations)]

    def _corrected(self, state: Any, evaluation: Evaluation) -> Evaluation:
        board = state.board
        if not board.is_check() and not _has_capture(board):
            return evaluation
        static, gain = quiescence_gain(board, self.max_nodes)
        if gain == 0:
            return evaluation
        shift = value_from_cp(static + gain) - value_from_cp(static)
        value = max(-_MAX_VALUE, min(_MAX_VALUE, evaluation.value + self.weight * shift))
        return replace(evaluation, value=value)


def _has_capture(board: chess.Board) -> bool:
    """Any pseudo-legal capture or promotion: without one the capture search has nothing to try."""
    return any(board.generate_pseudo_legal_captures()) or bool(
        board.pawns & board.occupied_co[board.turn] & (chess.BB_RANK_7 if board.turn else chess.BB_RANK_2))
