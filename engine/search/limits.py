"""The Stopper: the only code that reads the clock during a search.

Searchers call `stopper.should_stop(nodes)` in their loops (the clock is
read on every call: ~0.1 us; searchers call it every few nodes) and
`stopper.may_start_iteration(depth)` between iterative-deepening passes.
"""
from __future__ import annotations

import threading
import time
from typing import Callable, Protocol

from engine.types import Limits, SearchInfo, SearchResult

__all__ = ["Stopper", "Searcher"]


class Searcher(Protocol):
    """MCTS, UCT, alpha-beta and random alike.

    search() blocks until a limit is reached or `stop` is set; it must return within
    ~50 ms of `stop` being set, with the best move found so far (never None while a
    legal move exists).  on_info is called from the searching thread.
    """
    def new_game(self) -> None: ...
    def search(self, state, limits: Limits, *, stop: threading.Event | None = None,
               on_info: Callable[[SearchInfo], None] | None = None) -> SearchResult: ...


class Stopper:
    def __init__(self, limits: Limits, stop: threading.Event | None = None,
                 *, default_time: float | None = None, clock: Callable[[], float] = time.monotonic):
        self.limits = limits
        self.event = stop if stop is not None else threading.Event()
        self._clock = clock
        self.start = clock()
        hard = limits.time
        if limits.unlimited and not limits.infinite:
            hard = default_time
        self.hard_deadline = None if hard is None or limits.infinite else self.start + hard
        soft = limits.soft_time if limits.soft_time is not None else hard
        self.soft_deadline = None if soft is None or limits.infinite else self.start + soft
        self.stopped = False

    def elapsed(self) -> float:
        return self._clock() - self.start

    def should_stop(self, nodes: int = 0) -> bool:
        """True once any hard limit is hit or the stop event is set; sticky."""
        if self.stopped:
            return True
        if self.event.is_set():
            self.stopped = True
        elif self.limits.infinite:
            return False
        elif self.limits.nodes is not None and nodes >= self.limits.nodes:
            self.stopped = True
        elif self.hard_deadline is not None and self._clock() >= self.hard_deadline:
            self.stopped = True
        return self.stopped

    def may_start_iteration(self, depth: int, nodes: int = 0) -> bool:
        """Iterative deepening: may the search start iteration `depth` (1-based)?"""
        if self.should_stop(nodes):
            return False
        if self.limits.infinite:
            return True
        if self.limits.depth is not None and depth > self.limits.depth:
            return False
        if self.soft_deadline is not None and self._clock() >= self.soft_deadline:
            return False
        return True

    def time_left(self) -> float | None:
        if self.hard_deadline is None:
            return None
        return self.hard_deadline - self._clock()
