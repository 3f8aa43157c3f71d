"""Per-node overhead of MCTS with a free evaluator (uniform priors, value 0), in µs.

Everything measured is tree work and rules: selection, backup, expansion, playing moves,
legal-move generation, terminal checks.  Also prints a CPU-time figure (process_time),
which a loaded machine disturbs less than wall time.  Uses the public API only, so the
same script measures another checkout:

    python benchmarks/node_overhead.py                       # this checkout
    PYTHONPATH=/tmp/nodes-base python benchmarks/node_overhead.py   # another one

--profile prints cProfile's own accounting (µs per node) for one run of each game.
--network FILE searches gomoku 15x15 with that network (ONNX backend, one thread) and
prints the time per node spent outside evaluate() (tree, rules) and inside it.
"""
from __future__ import annotations

import argparse
import statistics
import time

from engine.evaluators import UniformEvaluator
from engine.games import game_on_board
from engine.search.mcts import MCTS, MCTSConfig
from engine.types import Limits


def positions(game_name: str):
    """The game's first two bench positions (gomoku on 15x15)."""
    game = game_on_board(game_name, 15, 15)
    return [state for _, state in game.bench_positions()[:2]]


def one_run(game_name: str, nodes: int) -> tuple[float, float]:
    """(wall µs per node, cpu µs per node) over the positions, fresh trees."""
    searcher = MCTS(UniformEvaluator(), MCTSConfig(seed=1, root_tactics=False))
    wall = cpu = 0.0
    count = 0
    for state in positions(game_name):
        searcher.new_game()
        w0, c0 = time.perf_counter(), time.process_time()
        result = searcher.search(state, Limits(nodes=nodes))
        wall += time.perf_counter() - w0
        cpu += time.process_time() - c0
        count += result.info.nodes if result.info is not None else 0
    return 1e6 * wall / count, 1e6 * cpu / count


class _Timed:
    """Wraps an evaluator, summing the CPU time spent inside evaluate()."""

    def __init__(self, inner):
        self.inner, self.cpu = inner, 0.0

    def evaluate(self, states):
        start = time.process_time()
        out = self.inner.evaluate(states)
        self.cpu += time.process_time() - start
        return out


def network_run(path: str, nodes: int) -> tuple[float, float]:
    """(cpu µs per node outside evaluate(), inside it) for gomoku 15x15 with a network."""
    from engine.nn.evaluator import NetworkEvaluator
    evaluator = _Timed(NetworkEvaluator(path, backend="onnx", threads=1))
    searcher = MCTS(evaluator, MCTSConfig(seed=1, root_tactics=False))
    total = 0.0
    count = 0
    for state in positions("gomoku"):
        searcher.new_game()
        c0 = time.process_time()
        result = searcher.search(state, Limits(nodes=nodes))
        total += time.process_time() - c0
        count += result.info.nodes if result.info is not None else 0
    return 1e6 * (total - evaluator.cpu) / count, 1e6 * evaluator.cpu / count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=2000, help="playouts per position")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--games", default="chess,gomoku")
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--network", help="a gomoku network file: time outside evaluate()")
    args = parser.parse_args()
    if args.network:
        runs = [network_run(args.network, args.nodes) for _ in range(args.repeat)]
        outside = [r[0] for r in runs]
        print(f"gomoku 15x15 network: cpu µs/node outside evaluate() min {min(outside):.1f} "
              f"median {statistics.median(outside):.1f}; inside evaluate() median "
              f"{statistics.median([r[1] for r in runs]):.1f}")
        return
    for game_name in args.games.split(","):
        if args.profile:
            import cProfile
            import pstats
            prof = cProfile.Profile()
            prof.enable()
            one_run(game_name, args.nodes)
            prof.disable()
            stats = pstats.Stats(prof)
            total = stats.total_tt  # type: ignore[attr-defined]
            n = args.nodes * len(positions(game_name))
            print(f"{game_name}: cProfile total {1e6 * total / n:.1f} µs/node (profiler-inflated)")
            stats.sort_stats("tottime").print_stats(14)
            continue
        runs = [one_run(game_name, args.nodes) for _ in range(args.repeat)]
        walls, cpus = [r[0] for r in runs], [r[1] for r in runs]
        label = game_on_board(game_name, 15, 15).label
        print(f"{label}: wall µs/node min {min(walls):.1f} median {statistics.median(walls):.1f}; "
              f"cpu µs/node min {min(cpus):.1f} median {statistics.median(cpus):.1f} "
              f"({args.repeat} runs x {len(positions(game_name))} positions x {args.nodes} playouts)")


if __name__ == "__main__":
    main()
