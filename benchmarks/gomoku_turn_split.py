"""Gomoku: where a timed MCTS turn goes (network, threat solver, the rest).

    python benchmarks/gomoku_turn_split.py ARENA.sqlite [--weights gomoku-loop8-res6x32] [--movetime 1]
        [--positions 12] [--ply 16]

Replays the first `--positions` games of an arena database to ply `--ply` (or two plies before
the game's end, if sooner) and searches each position once with the shipped player (build_player,
threat solver included) for `--movetime` seconds.  The network runner's and the solver kernel's
calls are timed by wrapping them (no profiler, so the split is the one a real turn has); the rest
is the tree, the board and the evaluator's Python.  Why: to know what a faster turn has to
change before changing it (issue 25: the brain searches about 2,000 nodes a 15x15 turn).
"""
from __future__ import annotations

import argparse
import json
import sqlite3
import time
from typing import Any, Callable

from engine.games import get_game
from engine.games.gomoku.threat_kernel import KernelBoard
from engine.players.build import build_player
from engine.players.options import PlayerOptions
from engine.types import Limits


class _Clock:
    """Seconds spent inside the wrapped calls, and how many calls."""

    def __init__(self) -> None:
        self.seconds, self.calls = 0.0, 0

    def wrap(self, call: Callable[..., Any]) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return call(*args, **kwargs)
            finally:
                self.seconds += time.perf_counter() - start
                self.calls += 1
        return timed


def _positions(path: str, count: int, ply: int) -> list[Any]:
    with sqlite3.connect(path) as con:
        rows = con.execute("select board, rule, moves from games order by id limit ?", (count,)).fetchall()
    states = []
    for board, rule, moves in rows:
        size = int(board.split("x")[0])
        game = get_game("gomoku", width=size, height=size, rule=rule)
        state, played = game.initial_state(), json.loads(moves)
        for text in played[:max(0, min(len(played) - 2, ply))]:
            state = state.play(game.index(*map(int, text.split(","))))
        states.append(state)
    return states


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("database")
    parser.add_argument("--weights", default="gomoku-loop8-res6x32")
    parser.add_argument("--movetime", type=float, default=1.0)
    parser.add_argument("--positions", type=int, default=12)
    parser.add_argument("--ply", type=int, default=16)
    args = parser.parse_args()
    states = _positions(args.database, args.positions, args.ply)
    if not states:
        raise SystemExit(f"no games in {args.database}")
    searcher = build_player(states[0].game, PlayerOptions(player="mcts", weights=args.weights)).searcher
    searcher.search(states[0], Limits(time=args.movetime))           # the export's warm-up, untimed
    network, solver = _Clock(), _Clock()
    runner = searcher.evaluator._runner
    runner.run = network.wrap(runner.run)
    KernelBoard.vcf = solver.wrap(KernelBoard.vcf)
    KernelBoard.vct = solver.wrap(KernelBoard.vct)
    nodes, start = 0, time.perf_counter()
    for state in states:
        result = searcher.search(state, Limits(time=args.movetime))
        nodes += result.info.nodes if result.info is not None else 0
    wall = time.perf_counter() - start
    rest = wall - network.seconds - solver.seconds
    print(f"{len(states)} turns of {args.movetime:g} s: {wall:.2f} s, {nodes:,} nodes ({nodes / wall:,.0f} a second)")
    print(f"network {network.seconds:.2f} s ({network.seconds / wall:.0%}, {network.calls:,} calls)  "
          f"threat solver {solver.seconds:.2f} s ({solver.seconds / wall:.0%}, {solver.calls:,} calls)  "
          f"the rest {rest:.2f} s ({rest / wall:.0%})")


if __name__ == "__main__":
    main()
