"""Chess's hand-written knowledge for the network-free players: the material evaluator
(MCTS without a network, UCT's move order) and the capped random roll-out UCT scores
leaves with (random chess games are long, so it stops and counts material)."""
from __future__ import annotations

import random
from typing import Sequence

import numpy as np

from engine.types import Evaluation, value_from_cp

__all__ = ["ChessMaterialEvaluator", "chess_material_cp", "chess_rollout", "CHESS_ROLLOUT_PLIES"]

CHESS_ROLLOUT_PLIES = 24      # ~1 ms; scored by material at the cap
CAP_VALUE_SCALE = 0.5         # a material score at the cap is less certain than a mate

_PIECE_CP = (0, 100, 320, 330, 500, 900, 0)  # indexed by chess piece type (1..6)


def chess_material_cp(board) -> int:
    """Material balance in centipawns for the side to move."""
    import chess
    total = 0
    for piece_type in range(1, 6):
        diff = (chess.popcount(board.pieces_mask(piece_type, board.turn))
                - chess.popcount(board.pieces_mask(piece_type, not board.turn)))
        total += _PIECE_CP[piece_type] * diff
    return total


class ChessMaterialEvaluator:
    """Value from material; priors favour captures of valuable pieces by cheap ones
    (MVV-LVA) and queen promotions.  Cheap and dumb on purpose: a fake, not a player."""

    def evaluate(self, states: Sequence) -> list[Evaluation]:
        return [self._one(s) for s in states]

    def _one(self, state) -> Evaluation:
        board = state.board
        moves = state.legal_moves()
        logits = np.zeros(len(moves))
        for j, move in enumerate(moves):
            victim = board.piece_type_at(move.to_square)
            if victim is not None:
                attacker = board.piece_type_at(move.from_square) or 1
                logits[j] += _PIECE_CP[victim] / 150.0 - _PIECE_CP[attacker] / 1500.0
            if move.promotion is not None:
                logits[j] += 3.0 if move.promotion == 5 else -2.0
        if len(moves):
            logits = np.exp(logits - logits.max())
            logits /= logits.sum()
        return Evaluation(priors=logits, value=value_from_cp(chess_material_cp(board)))


def chess_rollout(state, rng: random.Random, max_plies: int = CHESS_ROLLOUT_PLIES) -> float:
    """Random legal moves for up to max_plies; exact at mate/stalemate/draw, else material."""
    outcome = state.outcome()
    if outcome is not None:
        return outcome.value_for(state.to_play)
    board = state.board.copy(stack=False)
    side = board.turn
    for _ in range(max_plies):
        moves = list(board.legal_moves)
        if not moves:
            if board.is_check():
                return -1.0 if board.turn == side else 1.0
            return 0.0
        if board.halfmove_clock >= 100 or board.is_insufficient_material():
            return 0.0
        board.push(moves[rng.randrange(len(moves))])
    cp = chess_material_cp(board)
    return CAP_VALUE_SCALE * value_from_cp(cp if board.turn == side else -cp)
