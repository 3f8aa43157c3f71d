"""Gomoku: how fast the threat solver's VCT search is, and whether two builds of it agree.

    python benchmarks/vct_speed.py [--board 15] [--games 30] [--nodes 200000] [--seed 1]
                                   [--against OLD.so | --full]

Positions come from games played by a cheap randomised player (one of the solver's four
best-ranked cells each move, so the games are full of threes and fours, where the VCT search
is costly); every position from ply 8 on is searched for the side to move's VCT with a fresh
solver (`--nodes`, the players' 8 threats).  With `--against`, the same positions are searched
by another build of threat_kernel.c (compile one with `gcc -O2 -std=c99 -shared -fPIC`), and
every position where both searches finished must agree: the search's soundness is checked
along with its speed (OLD.so must have this build's interface: tk_vct with dependent_first).
With `--full`, this build is compared with itself searching every three from the start
(no dependent first pass).  The time per node (median and slowest over the searches of 10k nodes or
more) is what engine/games/gomoku/threats.py's NODE_SECONDS must stay above: a time cap turns
seconds into a node budget with it, since a compiled search is not interrupted.
"""
from __future__ import annotations

import argparse
import ctypes
import random
import time

from engine.games import get_game
from engine.games.gomoku import threat_kernel
from engine.games.gomoku.threats import ThreatSolver


def positions(board: int, games: int, seed: int, rule: str) -> list:
    """States from `games` randomised games (ply 8 on), deterministic in `seed`."""
    game = get_game("gomoku", width=board, height=board, rule=rule)
    solver = ThreatSolver(game)
    rng = random.Random(seed)
    out = []
    for _ in range(games):
        state = game.initial_state()
        centre = game.index(board // 2, board // 2)
        state = state.play(centre)
        while state.outcome() is None and state.ply < board * board // 3:
            near = _near_stones(game, state)
            move = rng.choice(solver.ranked(state, near)[:4])
            state = state.play(move)
            if state.ply >= 8 and state.outcome() is None:
                out.append(state)
    return out


def _near_stones(game, state) -> list[int]:
    """Empty cells within two of a stone."""
    cells = state.cells
    w, h = game.width, game.height
    near = set()
    for c, stone in enumerate(cells):
        if not stone:
            continue
        x, y = c % w, c // w
        for dy in range(-2, 3):
            for dx in range(-2, 3):
                px, py = x + dx, y + dy
                if 0 <= px < w and 0 <= py < h and not cells[py * w + px]:
                    near.add(py * w + px)
    return sorted(near)


def run(states: list, nodes: int, dependent_first: bool = True) -> list[tuple[bool, bool, int, float]]:
    """(found, complete, nodes, seconds) for each state's VCT, a fresh solver each."""
    results = []
    for state in states:
        solver = ThreatSolver(state.game, dependent_first)
        start = time.perf_counter()
        answer = solver.vct(state, nodes=nodes)
        results.append((answer.win, answer.complete, answer.nodes, time.perf_counter() - start))
    return results


def summary(name: str, results: list) -> str:
    found = sum(r[0] for r in results)
    unfinished = sum(not r[1] for r in results)
    per_node = sorted(r[3] / r[2] * 1e6 for r in results if r[2] >= 10_000)
    slowest = f", per node (searches of 10k nodes or more) median {per_node[len(per_node) // 2]:.2f} us, " \
        f"slowest {per_node[-1]:.2f} us" if per_node else ""
    return (f"{name}: {len(results)} positions, VCT found in {found}, unfinished {unfinished}, "
            f"{sum(r[2] for r in results):,} nodes, {sum(r[3] for r in results):.2f} s{slowest}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--board", type=int, default=15)
    parser.add_argument("--rule", default="freestyle", choices=("freestyle", "standard"))
    parser.add_argument("--games", type=int, default=30)
    parser.add_argument("--nodes", type=int, default=200_000)
    parser.add_argument("--seed", type=int, default=1)
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--against", help="another build of threat_kernel.c (a shared library) to compare with")
    group.add_argument("--full", action="store_true", help="compare with this build's search without the dependent pass")
    args = parser.parse_args()
    states = positions(args.board, args.games, args.seed, args.rule)
    this = run(states, args.nodes)
    print(summary("this build", this))
    if not args.against and not args.full:
        return
    if args.against:
        threat_kernel._library = threat_kernel._declare(ctypes.CDLL(args.against))
    other = run(states, args.nodes, dependent_first=not args.full)
    print(summary(args.against or "every three from the start", other))
    both = [(a, b) for a, b in zip(this, other) if a[1] and b[1]]
    disagree = sum(a[0] != b[0] for a, b in both)
    only_here = sum(a[0] and not b[1] for a, b in zip(this, other))
    only_there = sum(b[0] and not a[1] for a, b in zip(this, other))
    print(f"both finished: {len(both)}, disagree {disagree}; found here where the other ran out: {only_here}, "
          f"the other way round: {only_there}")
    if disagree:
        raise SystemExit("the two builds disagree on a finished search")


if __name__ == "__main__":
    main()
