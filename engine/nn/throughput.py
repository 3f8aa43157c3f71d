"""Positions per second of an evaluator, cache bypassed: the ceiling of neural search here.

Used by `engine bench --player mcts` and by `python -m engine.nn.throughput`, which
compares eager torch with ONNX Runtime on random networks (the numbers behind the
CPU "auto" backend choice).
"""
from __future__ import annotations

import argparse
import itertools
import random
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any, Sequence

__all__ = ["measure_throughput", "sample_states"]


def measure_throughput(evaluator: Any, states: Sequence[Any], batch: int, seconds: float = 2.0) -> float:
    """Evaluate batches of `batch` states (cycling through `states`) for about `seconds`;
    return positions/s.  Uses `evaluate_uncached` when the evaluator has one, so a cache
    cannot flatter the figure.  One untimed warm-up batch comes first."""
    if batch < 1 or not states:
        raise ValueError("measure_throughput needs batch >= 1 and at least one state")
    run = getattr(evaluator, "evaluate_uncached", evaluator.evaluate)
    pool = itertools.cycle(states)
    run([next(pool) for _ in range(batch)])
    done, start = 0, time.perf_counter()
    while True:
        run([next(pool) for _ in range(batch)])
        done += batch
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            return done / elapsed


def sample_states(game: Any, count: int, seed: int = 0, max_plies: int = 40) -> list[Any]:
    """`count` positions reached by random play from the initial state (for benchmarks)."""
    rng = random.Random(seed)
    states: list[Any] = []
    while len(states) < count:
        state = game.initial_state()
        for _ in range(rng.randrange(max_plies)):
            moves = state.legal_moves()
            if not moves or state.outcome() is not None:
                break
            state = state.play(rng.choice(moves))
        if state.outcome() is None:
            states.append(state)
    return states


def _rates(evaluator: Any, states: Sequence[Any], batch: int, seconds: float) -> tuple[float, float]:
    """(wall-clock positions/s, positions per CPU-second of this process).  On a loaded
    machine the CPU figure is the fairer comparison of single-threaded backends."""
    cpu0 = time.process_time()
    wall0 = time.perf_counter()
    rate = measure_throughput(evaluator, states, batch, seconds)
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    return rate, rate * wall / cpu if cpu > 0 else 0.0


def main(argv: Sequence[str] | None = None) -> None:
    from engine.games import game_on_board
    from engine.nn.checkpoint import create_random_checkpoint
    from engine.nn.evaluator import NetworkEvaluator

    parser = argparse.ArgumentParser(description="torch vs ONNX Runtime positions/s on random nets")
    parser.add_argument("--net", default="res6x64")
    parser.add_argument("--games", default="gomoku,chess")
    parser.add_argument("--batches", default="1,8,32,64")
    parser.add_argument("--backends", default="torch,onnx")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--repeats", type=int, default=3, help="interleaved rounds; medians shown")
    parser.add_argument("--size", type=int, default=15, help="gomoku board size")
    args = parser.parse_args(argv)
    backends = args.backends.split(",")
    with tempfile.TemporaryDirectory() as tmp:
        for game_name in args.games.split(","):
            game = game_on_board(game_name, args.size, args.size)
            weights = Path(tmp) / f"{game_name}.pt"
            create_random_checkpoint(weights, game_name, args.net, seed=1)
            states = sample_states(game, 256)
            evaluators = {b: NetworkEvaluator(weights, device="cpu", backend=b,
                                              threads=args.threads, cache_dir=tmp) for b in backends}
            for batch in (int(b) for b in args.batches.split(",")):
                runs: dict[str, list[tuple[float, float]]] = {b: [] for b in backends}
                for _ in range(args.repeats):  # interleaved, so load spikes hit every backend
                    for backend in backends:
                        runs[backend].append(_rates(evaluators[backend], states, batch, args.seconds))
                for backend in backends:
                    wall = statistics.median(r[0] for r in runs[backend])
                    cpu = statistics.median(r[1] for r in runs[backend])
                    print(f"{game_name:7s} {args.net} {backend:5s} threads={args.threads} "
                          f"batch={batch:3d} {wall:7.0f} pos/s wall {cpu:7.0f} pos/cpu-s", flush=True)


if __name__ == "__main__":
    main()
