"""Evaluators: what a tree search asks about a leaf.  Batch in, batch out; no torch here.

`Evaluator.evaluate(states)` returns one `Evaluation` per state: priors over exactly
`state.legal_moves()` (same order, summing to 1) and a value in [-1, 1] for the side to
move.  The network evaluator lives in `engine/nn/evaluator.py`; each game's hand-written
one in its package (engine/games/<game>/heuristic.py); the uniform one here lets search
run (and be measured and tested) without any knowledge.
"""
from __future__ import annotations

from typing import Protocol, Sequence

import numpy as np

from engine.types import Evaluation

__all__ = ["Evaluator", "UniformEvaluator"]


class Evaluator(Protocol):
    def evaluate(self, states: Sequence) -> list[Evaluation]:
        """[B] states -> [B] evaluations; priors[j] belongs to states[i].legal_moves()[j]."""
        ...


def _uniform(n: int) -> np.ndarray:
    return np.full(n, 1.0 / n) if n else np.zeros(0)


class UniformEvaluator:
    """Uniform priors and value 0: measures pure search overhead, and a neutral fake for tests."""

    def evaluate(self, states: Sequence) -> list[Evaluation]:
        return [Evaluation(priors=_uniform(len(s.legal_moves())), value=0.0) for s in states]
