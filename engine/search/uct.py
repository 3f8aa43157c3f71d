"""Classic UCT: UCB1 selection over random rollouts, no network.  The baseline MCTS is
measured against.

It is the MCTS tree (engine/search/mcts.py: same nodes, solver, root tactics, limits
and reuse) with `formula="ucb1"`, one leaf per step, and an evaluator whose value is the
result of a random playout: gomoku plays to the end on a mutable scratch board with a
last-move win check; chess is capped (random chess games are long) and scored by
material at the cap (each game's roll-out lives in its package: heuristic.py).  Priors
only order the unvisited children.
"""
from __future__ import annotations

import random
from typing import Any, Callable, Sequence

from engine.types import Evaluation

__all__ = ["RolloutEvaluator", "Rollout", "random_rollout"]

Rollout = Callable[[Any, random.Random], float]     # (state, rng) -> value for the side to move


def random_rollout(state: Any, rng: random.Random) -> float:
    """Random legal moves to the end of the game through the rules alone: any game's
    roll-out until it brings a faster one (chess and gomoku do, in their packages)."""
    player = state.to_play
    while state.outcome() is None:
        moves = state.legal_moves()
        state = state.play(moves[rng.randrange(len(moves))])
    return state.outcome().value_for(player)


class RolloutEvaluator:
    """Value = one random roll-out (the game's, from its profile); priors from the game's
    cheap heuristic evaluator (move order only)."""

    def __init__(self, rollout: Rollout, priors: Any, seed: int | None = None):
        self._priors = priors
        self._rng = random.Random(seed)
        self._rollout = rollout

    def evaluate(self, states: Sequence) -> list[Evaluation]:
        priors = self._priors.evaluate(states)
        return [Evaluation(priors=prior.priors, value=self._rollout(state, self._rng))
                for state, prior in zip(states, priors)]
