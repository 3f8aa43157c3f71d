"""Player auto's searcher when a network ships: MCTS with it when a move has time for the
network, alpha-beta when it has not.

A neural MCTS on this CPU runs about 1,500-2,500 playouts a second; on a bullet clock
(1+0.01: a planned 20-30 ms a move) that is a few dozen playouts, and measured head to
head MCTS then loses most games to our own alpha-beta, while at a second a move it wins
them (docs/measurements/weights-history.md and player-auto.md).  So each search
goes to the searcher the move's budget suits: the planned time (the soft budget, else the
hard one) below `fast_below` seconds -> alpha-beta; anything else (a longer budget, node
or depth limits, infinite analysis, pondering) -> MCTS.
"""
from __future__ import annotations

import threading
from typing import Callable

from engine.games.base import State
from engine.types import Searcher
from engine.types import Limits, SearchInfo, SearchResult

__all__ = ["ClockSwitch"]


class ClockSwitch:
    """A Searcher over two: `slow` (MCTS) unless the move's planned time is under
    `fast_below` seconds, then `fast` (alpha-beta).  `last` names the one that searched last."""

    def __init__(self, slow: Searcher, fast: Searcher, fast_below: float):
        self.slow, self.fast, self.fast_below = slow, fast, fast_below
        self.last: Searcher | None = None

    def pick(self, limits: Limits) -> Searcher:
        planned = limits.soft_time if limits.soft_time is not None else limits.time
        if planned is not None and not limits.infinite and planned < self.fast_below:
            return self.fast
        return self.slow

    def new_game(self) -> None:
        self.slow.new_game()
        self.fast.new_game()

    def search(self, state: State, limits: Limits, *, stop: threading.Event | None = None,
               on_info: Callable[[SearchInfo], None] | None = None) -> SearchResult:
        self.last = self.pick(limits)
        return self.last.search(state, limits, stop=stop, on_info=on_info)
