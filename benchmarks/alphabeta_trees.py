"""Alpha-beta's two trees on `engine bench`'s positions at a fixed depth: nodes and seconds.

usage: python benchmarks/alphabeta_trees.py [--game gomoku|chess] [--depth 6] [--leaf-vcf N]

Each position gets a fresh searcher (the player's board maker, so gomoku's root threat check
too) with the compiled tree below the root and then without it (AlphaBetaConfig.native), so the
two columns are the same search in C and in Python.  --leaf-vcf sets the gomoku tree's VCF budget
at a leaf (engine/games/gomoku/native_search.py; 0: none).
"""
from __future__ import annotations

import argparse
import time

from engine.bench import bench_positions
from engine.games import get_game, game_profile
from engine.search.alphabeta import AlphaBeta, AlphaBetaConfig
from engine.types import Limits


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default="gomoku", choices=("gomoku", "chess"))
    parser.add_argument("--depth", type=int, default=6)
    parser.add_argument("--leaf-vcf", type=int, default=None)
    args = parser.parse_args()
    if args.leaf_vcf is not None:
        from engine.games.gomoku import native_search
        native_search.LEAF_VCF_NODES = args.leaf_vcf
    totals = {True: [0, 0.0], False: [0, 0.0]}
    for label, state in bench_positions(args.game):
        line = [f"{label[:30]:30s}"]
        for native in (True, False):
            make_board = game_profile(args.game).alphabeta_board(state.game, True)
            searcher = AlphaBeta(make_board, AlphaBetaConfig(native=native))
            started = time.perf_counter()
            result = searcher.search(state, Limits(depth=args.depth))
            seconds = time.perf_counter() - started
            totals[native][0] += result.info.nodes
            totals[native][1] += seconds
            line.append(f"{'C' if native else 'Python'} {result.info.nodes:9,d} nodes {seconds:6.2f} s "
                        f"move {state.game.format_move(state, result.best_move)}")
        print("  ".join(line))
    for native, (nodes, seconds) in totals.items():
        print(f"{'C' if native else 'Python':6s} total {nodes:,d} nodes in {seconds:.2f} s: {nodes / seconds:,.0f} nodes/s")


if __name__ == "__main__":
    main()
