"""The random player: a uniformly random legal move.  A fake opponent for tests and the arena."""
from __future__ import annotations

import random
import threading
from typing import Callable

from engine.types import Limits, SearchInfo, SearchResult

__all__ = ["RandomPlayer"]


class RandomPlayer:
    def __init__(self, seed: int | None = None):
        self._seed = seed
        self._rng = random.Random(seed)

    def new_game(self) -> None:
        pass

    def search(self, state, limits: Limits, *, stop: threading.Event | None = None,
               on_info: Callable[[SearchInfo], None] | None = None) -> SearchResult:
        moves = list(limits.searchmoves or state.legal_moves())
        if not moves:
            return SearchResult(best_move=None, value=0.0)
        move = self._rng.choice(moves)
        info = SearchInfo(depth=1, seldepth=1, value=0.0, nodes=1, time=0.0, pv=(move,))
        if on_info is not None:
            on_info(info)
        return SearchResult(best_move=move, value=0.0, info=info)
