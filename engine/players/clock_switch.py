"""Player auto's searcher when a network ships: MCTS with it when a move has time for
enough of its playouts, alpha-beta when it has not.

Measured head to head, chess MCTS loses to our alpha-beta on a bullet clock (a few dozen
playouts a move) and wins at a second a move; the crossing sits at a number of playouts,
not at a number of seconds: on a VM running a third as fast the same code lost at 5+0.05,
where it had won before (docs/measurements/player-auto.md).  So the switch is in playouts:
the move's planned time (the soft budget, else the hard one) times the MCTS's playouts a
second on this machine, now (`PlayoutRate`), below `fast_below_playouts` -> alpha-beta;
a longer budget -> MCTS.  A node limit always goes to MCTS (nodes are its playouts there; an
alpha-beta at that many nodes barely starts), and so does a `go` without limits when the user
set MCTS's node budget for it (UCI `Nodes`).  Without a clock (depth limits, infinite analysis,
no limit at all) the search goes to MCTS, unless `fast_below_playouts` is infinite:
a game whose alpha-beta wins at every clock measured (chess with its compiled tree) analyses
with it too (docs/measurements/player-auto.md, "Chess: analysis without a clock ...").
"""
from __future__ import annotations

import math
import random
import statistics
import threading
import time
from collections import deque
from typing import Callable, Protocol, Sequence

from engine.games.base import State
from engine.types import Limits, SearchInfo, SearchResult, Searcher

__all__ = ["ClockSwitch", "PlayoutRate", "PROBE_SECONDS"]

PROBE_SECONDS = 0.05   # one probe: a timed search this long (as a bullet move searches)
PROBE_PLIES = 4        # random plies played from a start position, so no probe meets the evaluator's cache
KEEP_PROBES = 5        # the rate is the median of the last few probes: one stall does not move it


class Rate(Protocol):
    """What the switch needs of a rate: playouts a second now, and a fresh probe at a new game."""
    @property
    def per_second(self) -> float: ...

    def probe(self) -> None: ...


class PlayoutRate:
    """`searcher`'s playouts a second on this machine, now: the median of its last few probes,
    each a timed search of PROBE_SECONDS from one of `starts` (cycled) after PROBE_PLIES
    random plies, its tree dropped afterwards.  Probed at player build and at every new game
    (no clock runs then), so a machine that is slower today, or busier, is seen."""

    def __init__(self, searcher: Searcher, starts: Sequence[State], *, seconds: float = PROBE_SECONDS,
                 clock: Callable[[], float] = time.perf_counter):
        if not starts:
            raise ValueError("PlayoutRate needs at least one start position")
        self.searcher, self.starts, self.seconds, self.clock = searcher, list(starts), seconds, clock
        self.samples: deque[float] = deque(maxlen=KEEP_PROBES)
        self.probes = 0

    @property
    def per_second(self) -> float:
        return statistics.median(self.samples) if self.samples else 0.0

    def probe(self) -> None:
        state = self._probe_state(self.probes)
        self.probes += 1
        begun = self.clock()
        result = self.searcher.search(state, Limits(time=self.seconds, soft_time=self.seconds))
        elapsed = self.clock() - begun
        self.searcher.new_game()
        if result.info is not None and elapsed > 0:
            self.samples.append(result.info.nodes / elapsed)

    def _probe_state(self, index: int) -> State:
        rng = random.Random(index)
        state = self.starts[index % len(self.starts)]
        for _ in range(PROBE_PLIES):
            moves = state.legal_moves()
            after = state.play(moves[rng.randrange(len(moves))]) if moves else state
            if after.outcome() is not None:
                break
            state = after
        return state


class ClockSwitch:
    """A Searcher over two: `slow` (MCTS) unless the move's planned time buys fewer than
    `fast_below_playouts` of its playouts at `rate`, then `fast` (alpha-beta); without a
    clock see the module's docstring.  `last` names the one that searched last."""

    def __init__(self, slow: Searcher, fast: Searcher, fast_below_playouts: float, rate: Rate,
                 *, slow_default_nodes: bool = False):
        self.slow, self.fast, self.fast_below_playouts, self.rate = slow, fast, fast_below_playouts, rate
        self.slow_default_nodes = slow_default_nodes   # the user set MCTS's nodes for a `go` without limits
        self.last: Searcher | None = None

    def expected_playouts(self, limits: Limits) -> float | None:
        """The playouts the move's planned time buys; None when no clock limits it."""
        planned = limits.soft_time if limits.soft_time is not None else limits.time
        if planned is None or limits.infinite:
            return None
        return planned * self.rate.per_second

    def pick(self, limits: Limits) -> Searcher:
        if limits.nodes is not None and not limits.infinite:
            return self.slow
        if self.slow_default_nodes and limits.unlimited and not limits.infinite:
            return self.slow
        expected = self.expected_playouts(limits)
        if expected is None:
            return self.fast if math.isinf(self.fast_below_playouts) else self.slow
        return self.fast if expected < self.fast_below_playouts else self.slow

    def new_game(self) -> None:
        self.slow.new_game()
        self.fast.new_game()
        self.rate.probe()

    def search(self, state: State, limits: Limits, *, stop: threading.Event | None = None,
               on_info: Callable[[SearchInfo], None] | None = None) -> SearchResult:
        self.last = self.pick(limits)
        return self.last.search(state, limits, stop=stop, on_info=on_info)
