"""Peak memory of the Gomocup brain through a full game (the judge limits VmSize to 350 MB).

    python benchmarks/gomocup_memory.py [--size 20] [-- brain flags, e.g. --player mcts --weights net.pt]

Plays pbrain-plyzero against a seeded random mover with max_memory 350 MB and
timeout_turn 1000 ms, and prints the outcome, the slowest answer and the peak
VmSize/VmPeak/RSS (VmHWM) read from /proc (Linux only).
"""
from __future__ import annotations

import argparse
import os
import random
import sys

from engine.games import get_game
from protocols.gomocup_client import GomocupClient

FIELDS = ("VmPeak", "VmSize", "VmHWM", "VmRSS")


def memory_mb(pid: int) -> dict[str, int]:
    with open(f"/proc/{pid}/status") as status:
        return {key: int(value.split()[0]) // 1024 for key, _, value in
                (line.partition(":") for line in status) if key in FIELDS}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=20)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("brain_flags", nargs="*")
    args = parser.parse_args()
    env = dict(os.environ)
    env.pop("PYTHONUNBUFFERED", None)
    argv = [os.path.join(os.path.dirname(sys.executable), "pbrain-plyzero"), *args.brain_flags]
    game = get_game("gomoku", width=args.size, height=args.size)
    rng = random.Random(args.seed)
    peak: dict[str, int] = {}
    slowest = 0.0
    with GomocupClient(argv, env=env) as client:
        client.info("max_memory", 350 * 2**20)
        client.info("timeout_turn", 1000)
        client.info("timeout_match", 0)
        client.start(args.size, args.size)
        state, reply = game.initial_state(), None
        while state.outcome() is None:
            x, y = client.begin(timeout=5) if reply is None else client.turn(*game.coords(reply), timeout=5)
            slowest = max(slowest, client.last_move_time or 0.0)
            state = state.play(game.index(x, y))
            peak = {k: max(peak.get(k, 0), v) for k, v in memory_mb(client.pid).items()}
            if state.outcome() is None:
                reply = rng.choice(state.legal_moves())
                state = state.play(reply)
        print(f"player {client.about().get('player')}: {state.outcome()}, {state.ply} stones, "
              f"slowest answer {slowest:.3f} s")
    print("peak MB: " + ", ".join(f"{k} {peak.get(k, 0)}" for k in FIELDS) + "  (VmHWM = peak RSS)")


if __name__ == "__main__":
    main()
