"""`engine bench --scale`: the figures that decide whether a GPU is kept busy.

Three measurements for one network on one device (cuda: bf16 autocast; cpu: the
evaluator's usual backend, so the same command runs everywhere):
  evaluator  positions/s of the bare forward pass per batch size (planes prepared
             beforehand: the network's ceiling);
  search     MCTS playouts/s through `search_many` over `trees` games at once (one
             network call per step for all trees' leaves);
  self-play  kept positions/s of `selfplay_games` over `trees` games in lockstep.
Wall-clock figures: on a shared machine report the load beside them.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

__all__ = ["ScaleBench", "run_scale_bench", "DEFAULT_BATCHES"]

DEFAULT_BATCHES = {"cuda": (64, 128, 256, 512, 1024), "cpu": (8, 32, 128)}
SCALE_LEAVES = 8   # leaves per tree per step, as self-play


@dataclass(frozen=True)
class ScaleBench:
    device: str
    precision: str
    evaluator: dict[int, float]          # batch size -> positions/s
    search_nodes_per_s: float
    selfplay_positions_per_s: float


def _positions(game, count: int, seed: int = 0) -> list:
    """`count` varied mid-game positions (random legal moves from the start)."""
    rng = np.random.default_rng(seed)
    states = []
    for _ in range(count):
        state = game.initial_state()
        for _ in range(int(rng.integers(2, 12))):
            moves = state.legal_moves()
            if state.outcome() is not None or not moves:
                break
            state = state.play(moves[int(rng.integers(len(moves)))])
        states.append(state)
    return states


def run_scale_bench(weights: str, spec, *, device: str = "cpu", precision: str = "auto",
                    batches: Sequence[int] | None = None, trees: int | None = None, nodes: int = 64,
                    leaves: int | None = None, seconds: float = 2.0,
                    echo: Callable[[str], None] = print) -> ScaleBench:
    """Measure and echo the three figures for `weights` (a checkpoint) on `spec`'s board;
    leaves per tree per step: `leaves`, default SCALE_LEAVES."""
    from engine.nn.evaluator import resolve_device
    from engine.search.mcts import MCTS, MCTSConfig
    from engine.train.inference import RunnerEvaluator, open_runner
    from engine.train.selfplay import SelfPlayConfig, selfplay_games
    from engine.types import Limits

    device = resolve_device(device)
    leaves = leaves or SCALE_LEAVES
    kind = "cuda" if device == "cuda" else "cpu"
    batches = tuple(batches or DEFAULT_BATCHES[kind])
    trees = trees or (256 if kind == "cuda" else 16)
    runner, meta = open_runner(weights, device=device, precision=precision)
    used = "bf16" if getattr(runner, "bf16", False) else "fp32"
    game = spec.make()
    codec = RunnerEvaluator(runner, expect_game=spec.name).codec
    from engine.nn.spec import network_planes
    echo(f"scale bench: {meta.get('net')} {spec.label} on {device} ({used}, {type(runner).__name__})")
    states = _positions(game, max(batches))
    rates: dict[int, float] = {}
    for batch in batches:
        planes = codec.encode(states[:batch], planes=network_planes(meta))
        runner.run(planes)                              # warm-up: allocation, kernel choice
        count, start = 0, time.perf_counter()
        while time.perf_counter() - start < seconds:
            runner.run(planes)
            count += batch
        rates[batch] = count / (time.perf_counter() - start)
        echo(f"  evaluator batch {batch:5d}: {rates[batch]:10.0f} positions/s")
    evaluator = RunnerEvaluator(runner, expect_game=spec.name, cache_size=0)
    mcts = MCTS(evaluator, MCTSConfig(leaves_per_batch=leaves))
    roots = _positions(game, trees, seed=1)
    start = time.perf_counter()
    results = mcts.search_many(roots, Limits(nodes=nodes), seeds=list(range(trees)))
    elapsed = time.perf_counter() - start
    playouts = sum(sum(r.visits or ()) for r in results)
    search_rate = playouts / elapsed
    echo(f"  search_many over {trees} trees, {nodes} playouts each: {search_rate:10.0f} nodes/s")
    config = SelfPlayConfig(playouts=nodes, leaves_per_batch=leaves, max_plies=12)
    start = time.perf_counter()
    played = selfplay_games(spec, None, trees, config, seed=0,
                            evaluator=RunnerEvaluator(runner, expect_game=spec.name, cache_size=0))
    elapsed = time.perf_counter() - start
    selfplay_rate = len(played.samples) / elapsed
    echo(f"  self-play {trees} games in lockstep (first 12 plies): {selfplay_rate:10.1f} positions/s")
    return ScaleBench(device, used, rates, search_rate, selfplay_rate)
