"""Gomoku MCTS: how much prior and how many playouts go to moves that ignore an open three.

    python benchmarks/open_three_answers.py ARENA.sqlite [...] [--weights gomoku-loop11-res6x32]
        [--every 4] [--time 0.9]

A move that neither stops the opponent's open three nor makes a four lets the opponent make an
open four.  Judged here by the Python pattern board (GomokuSearchBoard: its four cells and its
open-three defences; alpha-beta searches only those moves there).  Printed: over every position of the games in
which the side to move faces an open three, the network's prior outside those answers; then,
searching every `--every`-th position for `--time` s with the built player, the share of all
playouts that went below such a move in any node of the tree that faces an open three.
Commit fee30b4 kept MCTS's priors on the answers (C kernel, every new node): 10.0 % of the
playouts went below such moves before, 1.6 % with it, and it changed nothing a match could see
(docs/measurements/issue25-tactics.md); it was reverted.
"""
from __future__ import annotations

import argparse
import json
import sqlite3

import numpy as np

from engine.games import get_game
from engine.games.gomoku.alphabeta import GomokuSearchBoard
from engine.players.build import build_player
from engine.players.options import PlayerOptions
from engine.types import Limits


def answers(state) -> set[int] | None:
    """The side to move's answers to the opponent's open threes (Python patterns), or None."""
    board = GomokuSearchBoard.from_state(state)
    me, you = state.ply & 1, 1 - (state.ply & 1)
    if not board.open_three_count(you) or board.has_four(0) or board.has_four(1):
        return None
    return board.four_cells(me) | board.three_defences(you)


def games(paths: list[str]):
    for path in paths:
        for board, moves in sqlite3.connect(path).execute("select board, moves from games"):
            width, height = (int(v) for v in board.split("x"))
            game = get_game("gomoku", width=width, height=height)
            states = [game.initial_state()]
            for text in json.loads(moves):
                states.append(states[-1].play(game.index(*(int(v) for v in text.split(",")))))
            yield game, states


def playouts_outside(root) -> tuple[int, int]:
    """(playouts below moves that ignore an open three, nodes facing one) in a searched tree."""
    outside = facing = 0
    stack = [root]
    while stack:
        node = stack.pop()
        if node.moves is None or node.state.outcome() is not None:
            continue
        held = answers(node.state)
        if held is not None:
            facing += 1
            outside += sum(child.visit_count for a, child in node.children.items() if node.moves[a] not in held)
        stack.extend(child for child in node.children.values() if child.visit_count)
    return outside, facing


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("databases", nargs="+")
    parser.add_argument("--weights", default="gomoku-loop11-res6x32")
    parser.add_argument("--every", type=int, default=4, help="search every n-th position (0: none)")
    parser.add_argument("--time", type=float, default=0.9, help="seconds per search")
    args = parser.parse_args()
    masses: list[float] = []
    played_outside = searched = total = outside = facing = 0
    for game, states in games(args.databases):
        player = build_player(game, PlayerOptions(player="mcts", weights=args.weights)).searcher
        evaluator = player.evaluator
        for i, state in enumerate(states[:-1]):     # each position a move was played from
            held = answers(state) if i >= 3 else None
            if held is not None:
                priors = np.asarray(evaluator.evaluate([state])[0].priors)
                masses.append(sum(float(p) for p, move in zip(priors, state.legal_moves()) if move not in held))
                played_outside += states[i + 1].last_move not in held
            if args.every and i >= 4 and i % args.every == 0:
                player.new_game()
                player.search(state, Limits(time=args.time))
                root = player._roots[0]          # the tree just searched (kept for reuse)
                out, seen = playouts_outside(root)
                total, outside, facing, searched = total + root.visit_count, outside + out, facing + seen, searched + 1
    mass = np.array(masses or [0.0])
    print(f"positions facing an open three: {len(masses)}; prior outside the answers: mean {mass.mean():.3f}, "
          f"median {np.median(mass):.3f}, above 0.2 in {(mass > 0.2).sum()}; moves played outside: {played_outside}")
    if searched:
        print(f"searched {searched} positions ({args.time} s): {total} playouts, {outside} below moves that ignore "
              f"an open three ({100.0 * outside / max(total, 1):.1f} %), in {facing} tree nodes facing one")


if __name__ == "__main__":
    main()
