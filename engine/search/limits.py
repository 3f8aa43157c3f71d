"""The Stopper: the only code that reads the clock during a search.

Searchers call `stopper.should_stop(nodes)` in their loops (the clock is
read on every call: ~0.1 us; searchers call it every few nodes) and
`stopper.may_start_iteration(depth)` between iterative-deepening passes.
MCTS also asks `soft_left()` / `time_left()` to plan its playouts.

Pondering: with `Limits(ponder=True)` the time limits wait for `ponderhit`.  The
stop event handed to a search may be a `StopSignal`; its `ponderhit()` starts the
clock at the Stopper's next poll, with the same soft and hard budgets a fresh `go`
with that clock gets: one clock, one budget.
"""
from __future__ import annotations

import threading
import time
from typing import Callable

from engine.types import Limits, SearchInfo, SearchResult

__all__ = ["Stopper", "StopSignal"]


class StopSignal(threading.Event):
    """A search's stop event that can also carry `ponderhit` (set from another thread)."""

    def __init__(self) -> None:
        super().__init__()
        self.ponderhit_seen = threading.Event()

    def ponderhit(self) -> None:
        self.ponderhit_seen.set()


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
        self._budget = (None if limits.infinite else hard,
                        None if limits.infinite else (limits.soft_time if limits.soft_time is not None else hard))
        self.pondering = limits.ponder and not limits.infinite
        self.hard_deadline: float | None = None
        self.soft_deadline: float | None = None
        if not self.pondering:
            self._start_clock(self.start)
        self.stopped = False
        self._held: tuple[float | None, float | None] | None = None

    @property
    def fixed_time(self) -> bool:
        """A time per move with nothing to save for later moves (`go movetime`, or a per-turn
        limit that no match clock binds): ending early would only lose playouts."""
        hard, soft = self._budget
        return hard is not None and soft is not None and soft >= hard

    def _start_clock(self, now: float) -> None:
        hard, soft = self._budget
        self.hard_deadline = None if hard is None else now + hard
        self.soft_deadline = None if soft is None else now + soft

    def hold_back(self, seconds: float) -> None:
        """Pull both deadlines in by `seconds`, kept for work after the main search (MCTS's
        check of the move it chose); give_back() restores them.  Nothing while no clock runs."""
        if self.hard_deadline is None or seconds <= 0.0 or self._held is not None:
            return
        self._held = (self.hard_deadline, self.soft_deadline)
        self.hard_deadline -= seconds
        if self.soft_deadline is not None:
            self.soft_deadline = min(self.soft_deadline, self.hard_deadline)

    def give_back(self) -> None:
        """Undo hold_back: the deadlines are the budget's again, and a stop that is not the
        stop event's is lifted (should_stop reads the clock against the real deadline again)."""
        if self._held is None:
            return
        self.hard_deadline, self.soft_deadline = self._held
        self._held = None
        if not self.event.is_set():
            self.stopped = False

    def _check_ponderhit(self) -> None:
        seen = getattr(self.event, "ponderhit_seen", None)
        if seen is not None and seen.is_set():
            self.pondering = False
            self._start_clock(self._clock())

    def elapsed(self) -> float:
        """Seconds since the search started (pondering included)."""
        return self._clock() - self.start

    def should_stop(self, nodes: int = 0) -> bool:
        """True once any hard limit is hit or the stop event is set; sticky."""
        if self.stopped:
            return True
        if self.pondering:
            self._check_ponderhit()
        if self.event.is_set():
            self.stopped = True
        elif self.limits.infinite:
            return False
        elif self.limits.nodes is not None and nodes >= self.limits.nodes:
            self.stopped = True
        elif self.hard_deadline is not None and self._clock() >= self.hard_deadline:
            self.stopped = True
        return self.stopped

    def may_start_iteration(self, depth: int, nodes: int = 0, expected_time: float = 0.0) -> bool:
        """Iterative deepening: may the search start iteration `depth` (1-based)?
        expected_time: what the iteration is likely to take (s); one that would end
        past the hard deadline is not started, since a stopped iteration is wasted."""
        if self.should_stop(nodes):
            return False
        if self.limits.infinite:
            return True
        if self.limits.depth is not None and depth > self.limits.depth:
            return False
        if depth <= 1:
            return True  # the first iteration is always tried: the hard deadline still cuts it
        now = self._clock()
        if self.soft_deadline is not None and now >= self.soft_deadline:
            return False
        if self.hard_deadline is not None and now + expected_time > self.hard_deadline:
            return False
        return True

    @property
    def timed(self) -> bool:
        """A clock budget is running (not infinite, not still pondering)."""
        return self.hard_deadline is not None and not self.limits.infinite

    def time_left(self) -> float | None:
        """Seconds to the hard deadline (None: no running clock)."""
        if self.hard_deadline is None:
            return None
        return self.hard_deadline - self._clock()

    def soft_left(self) -> float | None:
        """Seconds to the soft deadline (None: no running clock); negative once past it."""
        if self.soft_deadline is None:
            return None
        return self.soft_deadline - self._clock()
