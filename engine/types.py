"""Value objects shared by searchers, protocols and the arena (no torch, no I/O).

Values are always in [-1, 1] from the side to move.  Centipawns exist only at the
UCI edge; `value_from_cp` / `cp_from_value` are the one reversible mapping between
them so an alpha-beta score survives the round trip exactly enough for display.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Protocol, Sequence

if TYPE_CHECKING:
    import threading

    import numpy as np

Move = Any  # chess.Move for chess, int cell index (y * width + x) for gomoku

__all__ = [
    "Move", "Limits", "SearchInfo", "SearchResult", "Evaluation", "Searcher",
    "value_from_cp", "cp_from_value", "CP_SCALE",
]

CP_SCALE = 400.0  # value = tanh(cp / CP_SCALE): 100 cp ~ 0.245, 400 cp ~ 0.76


def value_from_cp(cp: float) -> float:
    """Centipawns (side to move) -> value in (-1, 1)."""
    return math.tanh(cp / CP_SCALE)


def cp_from_value(value: float) -> int:
    """Value in [-1, 1] (side to move) -> centipawns; clipped so +-1 stays finite."""
    v = max(-0.999999, min(0.999999, value))
    return int(round(CP_SCALE * math.atanh(v)))


@dataclass(frozen=True)
class Limits:
    """What a search may spend.  All None and infinite False means 'pick a sensible default'.

    time: hard budget in seconds (never exceeded by more than a poll interval).
    soft_time: iterative searchers start no new iteration after this many seconds.
    searchmoves: restrict the root to these moves (UCI `searchmoves`).
    multipv: how many best root moves to report, each as its own SearchInfo line
    (UCI `MultiPV`); searchers cap it at the number of root moves.  The answer is the
    best line's move whatever its value.
    ponder: the time limits start at ponderhit (see engine.search.limits.StopSignal);
    until then the search runs as if it had no clock.
    """
    nodes: int | None = None
    time: float | None = None
    soft_time: float | None = None
    depth: int | None = None
    infinite: bool = False
    searchmoves: tuple[Move, ...] | None = None
    multipv: int = 1
    ponder: bool = False

    @property
    def unlimited(self) -> bool:
        return self.infinite or (self.nodes is None and self.time is None and self.depth is None)


@dataclass(frozen=True)
class SearchInfo:
    """One progress report (after a completed iteration, or periodically for MCTS).

    value: side to move, [-1, 1].  mate_plies: signed plies to a forced end, positive
    when the side to move wins, None when no forced result is known.
    time: seconds since the search started.  pv: moves from the root.
    wdl: optional (win, draw, loss) per mille for the side to move.
    multipv: this line's rank (1 = best) when a search reports several root moves.
    root_visits, root_priors: per root legal move (state.legal_moves() order), the visit
    counts so far and the priors searched with (MCTS only; None elsewhere): the web board's
    live heat map.
    note: a sentence for the user beside this report (UCI: an `info string` before it).
    """
    depth: int
    seldepth: int
    value: float
    nodes: int
    time: float
    pv: tuple[Move, ...] = ()
    mate_plies: int | None = None
    wdl: tuple[int, int, int] | None = None
    multipv: int = 1
    hashfull: int | None = None
    root_visits: tuple[int, ...] | None = None
    root_priors: tuple[float, ...] | None = None
    note: str | None = None

    @property
    def nps(self) -> int:
        return int(self.nodes / self.time) if self.time > 0 else 0


@dataclass(frozen=True)
class SearchResult:
    """The answer of one search.  best_move is None only when the state has no legal move.

    visits: per legal move of the root (same order as state.legal_moves()), for
    MCTS training targets; None for searchers that do not count visits.
    """
    best_move: Move | None
    value: float
    info: SearchInfo | None = None
    ponder_move: Move | None = None
    visits: tuple[int, ...] | None = None


@dataclass(frozen=True)
class Evaluation:
    """Network or heuristic output for one state: priors over state.legal_moves() (same
    order, summing to 1) and a value in [-1, 1] for the side to move.  priors: [num_legal]
    (a float array or sequence)."""
    priors: Sequence[float] | np.ndarray
    value: float
    extra: dict[str, Any] = field(default_factory=dict)


class Searcher(Protocol):
    """MCTS, UCT, alpha-beta and random alike.

    search() blocks until a limit is reached or `stop` is set; it must return within
    ~50 ms of `stop` being set, with the best move found so far (never None while a
    legal move exists).  on_info is called from the searching thread.
    """
    def new_game(self) -> None: ...
    def search(self, state: Any, limits: Limits, *, stop: threading.Event | None = None,
               on_info: Callable[[SearchInfo], None] | None = None) -> SearchResult: ...
