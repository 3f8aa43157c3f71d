"""SearchThread: a position plus a searcher, searching on a worker thread.

Protocol servers own one SearchThread.  `go()` returns at once; the result is delivered
through `on_done` from the worker thread exactly once per `go()`.  `stop()` must
not block for long; `wait()` blocks until the current search (if any) has finished.

No garbage collection runs during a search: a full collection walks every object of a
grown MCTS tree, and was measured pausing the search for up to 322 ms (12 moves at
`go movetime 1000`, ten full collections, 1.7 s in all), so a stop came that much late
and a fixed move time was overrun.  The trees are free of reference cycles, so reference
counting frees what a search drops; what survives a search is frozen out of later
collections (`gc.freeze`), and `new_game()` (no clock runs then) collects the rest.
"""
from __future__ import annotations

import contextlib
import gc
import threading
from typing import Callable, Iterator

from engine.games.base import State
from engine.search.limits import StopSignal
from engine.types import Searcher
from engine.types import Limits, SearchInfo, SearchResult

__all__ = ["SearchThread", "collector_paused"]

_pause_lock = threading.Lock()
_paused_searches = 0     # searches under way in this process (the collector is process-wide)


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """The garbage collector is off while any search of this process runs; the survivors
    of the last one are frozen out of later collections."""
    global _paused_searches
    with _pause_lock:
        _paused_searches += 1
        gc.disable()
    try:
        yield
    finally:
        with _pause_lock:
            _paused_searches -= 1
            if _paused_searches == 0:
                gc.freeze()
                gc.enable()


def collect_garbage() -> None:
    """A full collection, frozen objects included: between games, when no clock runs."""
    with _pause_lock:
        if _paused_searches == 0:
            gc.unfreeze()
            gc.collect()


class SearchThread:
    def __init__(self, searcher: Searcher):
        self.searcher = searcher
        self._thread: threading.Thread | None = None
        self._stop = StopSignal()
        self._lock = threading.Lock()

    @property
    def searching(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def new_game(self) -> None:
        self.wait()
        self.searcher.new_game()
        collect_garbage()

    def go(self, state: State, limits: Limits, *,
           on_info: Callable[[SearchInfo], None] | None = None,
           on_done: Callable[[SearchResult], None] | None = None,
           on_error: Callable[[BaseException], None] | None = None) -> None:
        """Start searching `state` on a worker thread (waits for any previous search first)."""
        self.stop()
        self.wait()
        self._stop = StopSignal()
        stop = self._stop

        def work() -> None:
            try:
                with collector_paused():
                    result = self.searcher.search(state, limits, stop=stop, on_info=on_info)
            except BaseException as exc:  # reported, never lost: the protocol must still answer
                if on_error is None:
                    raise
                on_error(exc)
                return
            if on_done is not None:
                on_done(result)

        with self._lock:
            self._thread = threading.Thread(target=work, name="search", daemon=True)
            self._thread.start()

    def stop(self) -> None:
        self._stop.set()

    def ponderhit(self) -> None:
        """The current search's time limits (Limits.ponder) start now."""
        self._stop.ponderhit()

    def wait(self, timeout: float | None = None) -> None:
        thread = self._thread
        if thread is not None:
            thread.join(timeout)
