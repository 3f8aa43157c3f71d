"""`engine bench --player mcts`: MCTS nodes/s beside the evaluator's raw positions/s.

Neural MCTS can go no faster than its evaluator; the ratio of the two at the same batch
size ("search efficiency") is the share of time the network is kept busy, i.e. how
little the search itself costs.  engine/bench.py calls `run_mcts_bench` with its fixed
positions per game.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

from engine.bench import position_line, timed_search
from engine.games import State
from engine.types import Limits

__all__ = ["run_mcts_bench", "GameBench", "DEFAULT_BENCH_NODES", "bench_game"]

DEFAULT_BENCH_NODES = 800
THROUGHPUT_SECONDS = 2.0


@dataclass(frozen=True)
class GameBench:
    """One game's figures: MCTS playouts/s over all positions and the evaluator alone."""
    game: str
    nodes: int
    seconds: float
    evaluator_rate: float

    @property
    def nps(self) -> float:
        return self.nodes / self.seconds if self.seconds > 0 else 0.0

    @property
    def efficiency(self) -> float:
        return self.nps / self.evaluator_rate if self.evaluator_rate > 0 else 0.0


def bench_game(game, options, limits: Limits | None, echo: Callable[[str], None],
               positions: Sequence[tuple[str, State]]) -> GameBench:
    """Search each (label, state) with a fresh tree, then time the evaluator alone at
    options.batch on positions one ply past those."""
    from engine.search.mcts import build

    searcher = build(game, options)
    timed = searcher.evaluator = _TimedEvaluator(searcher.evaluator)
    limits = limits or Limits(nodes=options.nodes or DEFAULT_BENCH_NODES)
    label = game.name if game.name == "chess" else f"gomoku {game.width}x{game.height}"
    echo(f"# mcts {label}: {len(positions)} positions, batch {options.batch}, "
         f"evaluator {type(timed.inner).__name__}")
    total_nodes, total_time = 0, 0.0
    for number, (name, state) in enumerate(positions, 1):
        result, elapsed = timed_search(searcher, state, limits)
        total_nodes += result.info.nodes if result.info is not None else 0
        total_time += elapsed
        echo(position_line(number, name, game, state, result, elapsed))
    rate = _evaluator_rate(timed.inner, [s for _, s in positions], options.batch)
    figures = GameBench(label, total_nodes, total_time, rate)
    echo(f"   {label}: mcts {figures.nps:.0f} nodes/s, evaluator alone {rate:.0f} pos/s at batch "
         f"{options.batch}: search efficiency {100 * figures.efficiency:.1f} %")
    echo(f"   {label}: the evaluator was busy {100 * timed.seconds / max(total_time, 1e-9):.1f} % of "
         f"the search time, in {timed.calls} calls of {timed.states / max(timed.calls, 1):.1f} "
         "positions on average (the rest is tree work and rules)")
    return figures


class _TimedEvaluator:
    """Counts the time and batch sizes of evaluator calls: the evaluator's share of a search
    is a load-independent view of the same efficiency."""

    def __init__(self, inner):
        self.inner = inner
        self.seconds = 0.0
        self.calls = self.states = 0

    def evaluate(self, states: Sequence) -> list:
        start = time.perf_counter()
        out = self.inner.evaluate(states)
        self.seconds += time.perf_counter() - start
        self.calls += 1
        self.states += len(states)
        return out


def _evaluator_rate(evaluator, states: Sequence, batch: int) -> float:
    """Raw positions/s of the evaluator on leaf-like positions (one ply past the bench ones)."""
    from engine.nn.throughput import measure_throughput   # no torch at import time

    leaves = [s.play(m) for s in states for m in list(s.legal_moves())[:8]]
    leaves = [s for s in leaves if s.outcome() is None] or list(states)
    return measure_throughput(evaluator, leaves, batch, THROUGHPUT_SECONDS)


def run_mcts_bench(games: Sequence[str], options, limits: Limits | None, echo: Callable[[str], None],
                   positions: Mapping[str, Sequence[tuple[str, State]]] | None = None
                   ) -> tuple[int, float]:
    """Bench every game name on positions[name] ((label, state) pairs; engine/bench.py's
    fixed set), one group per board (gomoku sizes differ).  Returns (nodes, seconds)."""
    from engine.games import get_game
    from engine.nn.throughput import sample_states

    groups: dict[object, list[tuple[str, State]]] = {}
    for name in games:
        default_game = get_game(name) if name == "chess" else get_game(name, width=15, height=15)
        pairs = list((positions or {}).get(name) or [])
        if not pairs:
            pairs = [(f"random play {i + 1}", s)
                     for i, s in enumerate(sample_states(default_game, 4, seed=7))]
        for label, state in pairs:       # gomoku states know their board; chess has one game
            game = getattr(state, "game", None) or default_game
            groups.setdefault(game, []).append((label, state))
    figures = [bench_game(game, options, limits, echo, pairs) for game, pairs in groups.items()]
    nodes = sum(f.nodes for f in figures)
    seconds = sum(f.seconds for f in figures)
    echo("===========================")
    echo(f"Total time (ms) : {int(seconds * 1000)}")
    echo(f"Nodes searched  : {nodes}")
    echo(f"Nodes/second    : {int(nodes / seconds) if seconds > 0 else 0}")
    return nodes, seconds
