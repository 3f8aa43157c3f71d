"""Time used per move against the time manager's plan, over the chess bench positions.

    python benchmarks/time_plan.py [--player alphabeta|mcts] [--clock 60000+0] [--weights FILE]

Each position gets the limits `go wtime W btime W winc I binc I` would get (protocols.timeman)
and is searched once, cold; the line per position shows the plan (soft, hard), the wall time
used, and for MCTS why it stopped (MCTS.last_stop).  The last line is the bench line:
mean time used per move against the mean soft (optimum) and hard (maximum) budget.
Wall times depend on the machine's load: report `uptime` with them.
"""
from __future__ import annotations

import argparse
import statistics
import time

from engine.bench import bench_positions
from engine.players import PlayerOptions, build_player
from engine.games import get_game
from protocols.timeman import parse_go


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--player", default="alphabeta", choices=["alphabeta", "mcts", "uct"])
    parser.add_argument("--clock", default="60000+0", help="base+increment in ms, as UCI sends them")
    parser.add_argument("--weights", default=None)
    args = parser.parse_args()
    base, _, inc = args.clock.partition("+")
    game = get_game("chess")
    options = PlayerOptions(player=args.player, weights=args.weights, seed=1)
    searcher = build_player(game, options, fallbacks=()).searcher
    used, soft, hard = [], [], []
    for label, state in bench_positions("chess"):
        limits = parse_go(f"wtime {base} btime {base} winc {inc or 0} binc {inc or 0}".split(),
                          state.to_play).limits
        searcher.new_game()
        start = time.monotonic()
        result = searcher.search(state, limits)
        used.append(time.monotonic() - start)
        soft.append(limits.soft_time or 0.0)
        hard.append(limits.time or 0.0)
        reason = getattr(searcher, "last_stop", "")
        nodes = result.info.nodes if result.info is not None else 0
        print(f"{label[:40]:40s} soft {1000 * soft[-1]:7.0f} ms  hard {1000 * hard[-1]:7.0f} ms  "
              f"used {1000 * used[-1]:7.0f} ms  nodes {nodes:7d}  {reason}")
    print(f"time plan ({args.player}, {args.clock}): used {1000 * statistics.fmean(used):.0f} ms/move "
          f"against soft {1000 * statistics.fmean(soft):.0f} ms, hard {1000 * statistics.fmean(hard):.0f} ms "
          f"(used/soft {statistics.fmean(u / s for u, s in zip(used, soft)):.2f}, "
          f"max used/hard {max(u / h for u, h in zip(used, hard)):.2f})")


if __name__ == "__main__":
    main()
