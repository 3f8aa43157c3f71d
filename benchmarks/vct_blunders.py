"""Moves that walked into the opponent's VCT, taken from arena games, and a brain tried on them.

    python benchmarks/vct_blunders.py collect --player NAME --out suite.json DB [DB ...]
    python benchmarks/vct_blunders.py run suite.json [--turn 1000] [-- BRAIN ARGS]
    python benchmarks/vct_blunders.py solve suite.json [--nodes 256000] [--full]

`collect` replays every freestyle gomoku game in the arena databases and keeps each position
before a move of NAME that its search still thought undecided (value above -0.99) and after
which the opponent has a VCT our threat solver finds within --nodes (default 1,000,000), and
says how many of them have a move no such VCT refutes (within --safe-nodes, near the stones).
`run` asks the brain (`pbrain-plyzero`, or the command after `--`) for a move in each position
(BOARD, `timeout_turn` --turn, no match clock) and counts the answers the same VCT refutes.
`solve` asks the threat solver alone (a fresh one each) for the VCT after each move played,
within --nodes: how many it finds and in how many nodes (--full: without its dependent pass).
Why: against Rapfi most lost games turned on one such move, and the VCTs that refuted them
needed 100,000-300,000 solver nodes, past what the search's own check of its move reached.
"""
from __future__ import annotations

import argparse
import json
import os
import sqlite3
import sys

from engine.games import get_game
from engine.games.gomoku import GomokuState
from engine.games.gomoku.threats import ThreatSolver
from protocols.gomocup_client import GomocupClient

UNDECIDED = -0.99


def _replay(size: int, moves: list[str]) -> list[GomokuState]:
    game = get_game("gomoku", width=size)
    states = [game.initial_state()]
    for text in moves:
        x, y = map(int, text.split(","))
        states.append(states[-1].play(game.index(x, y)))
    return states


def _has_safe_move(solver: ThreatSolver, state: GomokuState, nodes: int) -> bool:
    """A move within two cells of a stone after which the opponent has no VCT (within nodes)."""
    width, height = state.width, state.height
    for move in state.legal_moves():
        x, y = move % width, move // width
        if any(state.cells[yy * width + xx] for xx in range(max(0, x - 2), min(width, x + 3))
               for yy in range(max(0, y - 2), min(height, y + 3))):
            if solver.vct_after(state, move, nodes=nodes).line is None:
                return True
    return False


def collect(args: argparse.Namespace) -> None:
    suite = []
    for path in args.db:
        rows = sqlite3.connect(path).execute(
            "select board, rule, first, second, moves, infos, opening_plies from games order by seq").fetchall()
        for board, rule, first, second, moves, infos, opening in rows:
            width, _, height = board.partition("x")
            if rule != "freestyle" or width != height or args.player not in (first, second):
                continue
            size, played, reports = int(width), json.loads(moves), json.loads(infos)
            states = _replay(size, played)
            solver = ThreatSolver(states[0].game)
            mine = 0 if first == args.player else 1      # NAME's moves: plies of this parity
            for k, report in enumerate(reports):
                ply = opening + k
                if ply % 2 != mine or ply >= len(played):
                    continue
                if report.get("value") is None or report["value"] <= UNDECIDED:
                    continue
                if solver.vct_after(states[ply], states[ply + 1].last_move, nodes=args.nodes).line is None:
                    continue
                suite.append({"size": size, "moves": played[:ply], "played": played[ply], "value": report["value"],
                              "safe": _has_safe_move(solver, states[ply], args.safe_nodes)})
    with open(args.out, "w") as out:
        json.dump(suite, out)
    safe = sum(p["safe"] for p in suite)
    print(f"{len(suite)} positions; {safe} have a move no VCT refutes (within {args.safe_nodes} nodes)")


def run(args: argparse.Namespace) -> None:
    with open(args.suite) as handle:
        suite = json.load(handle)
    argv = args.brain or [os.path.join(os.path.dirname(sys.executable), "pbrain-plyzero")]
    refuted, refuted_safe, times = 0, 0, []
    for size in sorted({p["size"] for p in suite}):
        solver = ThreatSolver(get_game("gomoku", width=size))
        with GomocupClient(argv) as brain:
            brain.start(size)
            brain.info("timeout_turn", args.turn)
            brain.info("timeout_match", 0)
            brain.info("rule", 0)
            for position in (p for p in suite if p["size"] == size):
                moves = position["moves"]
                mover = len(moves) % 2
                stones = [(int(m.split(",")[0]), int(m.split(",")[1]), 1 if i % 2 == mover else 2)
                          for i, m in enumerate(moves)]
                x, y = brain.board(stones, timeout=args.turn / 1000 + 2.0)
                times.append(brain.last_move_time)
                state = _replay(size, moves)[-1]
                if solver.vct_after(state, state.game.index(x, y), nodes=args.nodes).line is not None:
                    refuted += 1
                    refuted_safe += position["safe"]
    safe = sum(p["safe"] for p in suite)
    print(f"{refuted}/{len(suite)} answers refuted by a VCT within {args.nodes} nodes "
          f"({refuted_safe}/{safe} where a move holds); mean answer {sum(times) / len(times):.3f} s")


def solve(args: argparse.Namespace) -> None:
    with open(args.suite) as handle:
        suite = json.load(handle)
    needed = []
    for position in suite:
        state = _replay(position["size"], position["moves"])[-1]
        x, y = map(int, position["played"].split(","))
        result = ThreatSolver(state.game, dependent_first=not args.full).vct_after(
            state, state.game.index(x, y), nodes=args.nodes)
        if result.win:
            needed.append(result.nodes)
    needed.sort()
    within = ", ".join(f"{sum(n <= k for n in needed)} within {k:,}" for k in (16_000, 64_000) if k < args.nodes)
    median = f", median {needed[len(needed) // 2]:,} nodes" if needed else ""
    print(f"{len(needed)}/{len(suite)} refutations found within {args.nodes:,} nodes ({within}){median}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    make = commands.add_parser("collect")
    make.add_argument("db", nargs="+")
    make.add_argument("--player", required=True, help="the engine's name in the databases")
    make.add_argument("--out", required=True)
    make.add_argument("--nodes", type=int, default=1_000_000)
    make.add_argument("--safe-nodes", type=int, default=256_000)
    make.set_defaults(action=collect)
    trial = commands.add_parser("run")
    trial.add_argument("suite")
    trial.add_argument("--turn", type=int, default=1000, help="timeout_turn, ms")
    trial.add_argument("--nodes", type=int, default=1_000_000)
    trial.set_defaults(action=run)
    solver = commands.add_parser("solve")
    solver.add_argument("suite")
    solver.add_argument("--nodes", type=int, default=256_000)
    solver.add_argument("--full", action="store_true", help="every three from the start (no dependent pass)")
    solver.set_defaults(action=solve)
    argv = sys.argv[1:]
    brain = argv[argv.index("--") + 1:] if "--" in argv else []     # the brain command, after `--`
    args = parser.parse_args(argv[:argv.index("--")] if "--" in argv else argv)
    args.brain = brain
    args.action(args)


if __name__ == "__main__":
    main()
