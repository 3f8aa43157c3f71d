"""Classic UCT: UCB1 selection over random rollouts, no network.  The baseline MCTS is
measured against.

It is the MCTS tree (engine/search/mcts.py: same nodes, solver, root tactics, limits
and reuse) with `formula="ucb1"`, one leaf per step, and an evaluator whose value is the
result of a random playout: gomoku plays to the end on a mutable scratch board with a
last-move win check; chess is capped (random chess games are long) and scored by
material at the cap.  Priors only order the unvisited children.
"""
from __future__ import annotations

import random
from typing import Any, Callable, Sequence

from engine.evaluators import chess_material_cp, heuristic_evaluator
from engine.games import load_named
from engine.types import Evaluation, value_from_cp

__all__ = ["RolloutEvaluator", "gomoku_rollout", "chess_rollout", "CHESS_ROLLOUT_PLIES"]

CHESS_ROLLOUT_PLIES = 24      # ~1 ms; scored by material at the cap
CAP_VALUE_SCALE = 0.5         # a material score at the cap is less certain than a mate


def gomoku_rollout(state, rng: random.Random) -> float:
    """Random moves to the end of the game; +1/-1/0 for the side to move in `state`."""
    outcome = state.outcome()
    if outcome is not None:
        return outcome.value_for(state.to_play)
    game = state.game
    cells = bytearray(state.cells)
    empties = [i for i, c in enumerate(cells) if c == 0]
    rng.shuffle(empties)
    stone = 1 + state.to_play
    for move in empties:
        cells[move] = stone
        if game.makes_five(cells, move):
            return 1.0 if stone == 1 + state.to_play else -1.0
        stone = 3 - stone
    return 0.0


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


class RolloutEvaluator:
    """Value = one random rollout (the game's `rollout`, below); priors from the game's cheap
    heuristic (move order only)."""

    def __init__(self, game, seed: int | None = None):
        self._priors = heuristic_evaluator(game)
        self._rng = random.Random(seed)
        self._rollout: Callable[[Any, random.Random], float] = load_named(game.rollout)

    def evaluate(self, states: Sequence) -> list[Evaluation]:
        priors = self._priors.evaluate(states)
        return [Evaluation(priors=prior.priors, value=self._rollout(state, self._rng))
                for state, prior in zip(states, priors)]
