"""Engine: a position plus a searcher, searching on a worker thread.

Protocol servers own one Engine.  `go()` returns at once; the result is delivered
through `on_done` from the worker thread exactly once per `go()`.  `stop()` must
not block for long; `wait()` blocks until the current search (if any) has finished.
"""
from __future__ import annotations

import threading
from typing import Callable

from engine.games.base import State
from engine.search.limits import Searcher, StopSignal
from engine.types import Limits, SearchInfo, SearchResult

__all__ = ["Engine"]


class Engine:
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
