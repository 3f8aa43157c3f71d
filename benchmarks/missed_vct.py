"""Gomoku: the wins by threats our player had in its games and did not take.

    python benchmarks/missed_vct.py ARENA.sqlite [ARENA.sqlite ...] [--player loop] [--nodes 256000]

For every game the player (engines whose name starts with `--player`) did not win, every
position where it was to move is searched for its own VCT twice, with the 1,000 nodes the
root's check gives it (engine/games/gomoku/profile.py, VCT_NODES) and with `--nodes`; the
positions where only the larger budget finds one are wins the root check cannot see (MCTS may
still find them by searching).  Printed: per game the first such ply and whether the move
played there was the proof's first move.
"""
from __future__ import annotations

import argparse
import json
import sqlite3

from engine.games import get_game
from engine.games.gomoku.profile import VCT_NODES
from engine.games.gomoku.threats import ThreatSolver


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("databases", nargs="+")
    parser.add_argument("--player", default="loop")
    parser.add_argument("--nodes", type=int, default=256_000)
    args = parser.parse_args()
    games = missed = 0
    for path in args.databases:
        with sqlite3.connect(path) as con:
            rows = con.execute("select board, rule, first, second, score, moves from games").fetchall()
        for board, rule, first, second, score, moves in rows:
            ours_first = first.startswith(args.player)
            if not ours_first and not second.startswith(args.player):
                continue
            if score == (1.0 if ours_first else 0.0):
                continue                                  # a win: nothing missed that mattered
            games += 1
            size = int(board.split("x")[0])
            game = get_game("gomoku", width=size, height=size, rule=rule)
            state = game.initial_state()
            for ply, text in enumerate(json.loads(moves)):
                move = game.index(*map(int, text.split(",")))
                if ply % 2 == (0 if ours_first else 1) and ply >= 3:
                    small = ThreatSolver(game).vct(state, nodes=VCT_NODES)
                    if not small.win:
                        large = ThreatSolver(game).vct(state, nodes=args.nodes)
                        if large.win:
                            missed += 1
                            played = "its first move played" if large.line[0] == move else "another move played"
                            print(f"{path} {board} ply {ply}: a VCT in {large.nodes:,} nodes ({len(large.line)} plies); "
                                  f"{played}", flush=True)
                            break
                state = state.play(move)
    print(f"{games} games not won by {args.player}*; {missed} of them had a VCT only the larger budget finds")


if __name__ == "__main__":
    main()
