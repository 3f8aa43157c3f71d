"""How much of each Gomocup turn a brain thinks, under the clock settings a manager sends.

    python benchmarks/gomocup_time_use.py [--board 15] [--turn 1000] [--match 180000] [--games 2]
                                          [-- BRAIN ARGS]

Two copies of the brain (`pbrain-plyzero`, or the command after `--`) play each other from
the centre with INFO timeout_turn / timeout_match, and time_left kept by this script the way
piskvork keeps it (the match clock less each answer's time as seen here).  Each answer's time
is measured from the TURN/BEGIN written to the move read (our Gomocup client's stamp).
Prints, over the moves that searched (a brain's MESSAGE says `nodes N` with N > 0), the mean
and median share of timeout_turn spent, the longest answer, and the least match clock left.
Why: managers send a match clock with every turn limit, and a brain that saves time the
turn limit will never let it spend plays below its strength (issue 25's 235-339 ms of 1 s).
"""
from __future__ import annotations

import argparse
import os
import re
import statistics
import sys

from engine.games import get_game
from protocols.gomocup_client import GomocupClient

_NODES = re.compile(r"\bnodes (\d+)")


def play(argv: list[str], board: int, turn_ms: int, match_ms: int) -> list[tuple[float, int, float]]:
    """One game: (seconds, nodes, match clock left in ms) for every answer of both brains."""
    game = get_game("gomoku", width=board)
    state = game.initial_state()
    clients = [GomocupClient(argv), GomocupClient(argv)]
    left = [float(match_ms), float(match_ms)]
    answers: list[tuple[float, int, float]] = []
    try:
        for client in clients:
            client.start(board)
            client.info("timeout_turn", turn_ms)
            client.info("timeout_match", match_ms)
            client.info("rule", 0)
        last: tuple[int, int] | None = None
        while state.outcome() is None:
            side = state.ply % 2
            client = clients[side]
            client.info("time_left", int(left[side]) if match_ms else 2_147_483_647)
            deadline = turn_ms / 1000.0 + 2.0
            x, y = client.turn(*last, timeout=deadline) if last is not None else client.begin(timeout=deadline)
            seconds = client.last_move_time
            left[side] -= 1000 * seconds
            found = _NODES.search(client.last_message or "")
            answers.append((seconds, int(found.group(1)) if found else 0, left[side]))
            state = state.play(game.index(x, y))
            last = (x, y)
    finally:
        for client in clients:
            client.close()
    return answers


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--board", type=int, default=15)
    parser.add_argument("--turn", type=int, default=1000, help="timeout_turn, ms")
    parser.add_argument("--match", type=int, default=180_000, help="timeout_match, ms (0: none)")
    parser.add_argument("--games", type=int, default=2)
    parser.add_argument("brain", nargs="*", help="brain command (default: pbrain-plyzero)")
    args = parser.parse_args()
    argv = args.brain or [os.path.join(os.path.dirname(sys.executable), "pbrain-plyzero")]
    answers = [a for _ in range(args.games) for a in play(argv, args.board, args.turn, args.match)]
    searched = [seconds for seconds, nodes, _ in answers if nodes > 0]
    if not searched:
        raise SystemExit("no answer reported a search (no `nodes N` in the brains' MESSAGE lines)")
    shares = [1000 * s / args.turn for s in searched]
    print(f"{args.games} games, {args.board}x{args.board}, timeout_turn {args.turn} ms, "
          f"timeout_match {args.match} ms: {len(searched)} searched answers of {len(answers)}; "
          f"share of the turn spent: mean {statistics.mean(shares):.2f}, median {statistics.median(shares):.2f}; "
          f"longest {1000 * max(searched):.0f} ms; least match clock left "
          f"{min(left for _, _, left in answers) / 1000:.1f} s")


if __name__ == "__main__":
    main()
