"""Gomoku: the moves that lost MCTS its games, and whether the search now avoids them.

    python benchmarks/gomoku_fatal_moves.py dump OUT.json ARENA.sqlite [ARENA.sqlite ...]
    python benchmarks/gomoku_fatal_moves.py replay OUT.json [--weights W] [--movetime 0.88] [--player P]

dump: for every game an `mcts...` engine lost in the arena stores, the position before its
first move after which the opponent had a VCT (a fresh 20,000-node solver, 12 threats), and that move.
replay: search each such position again as the arena's player would (`--movetime` is what
`pbrain-plyzero` plans for a 1 s turn) and judge the move chosen the same way: how many of
them still walk into a VCT.  A position may be lost whatever is played, so the count is a
comparison between versions of the search, not a rate of mistakes.
"""
from __future__ import annotations

import argparse
import json
import sqlite3
import time

from engine.games import get_game
from engine.players.build import make_searcher
from engine.players.options import PlayerOptions
from engine.games.gomoku.threat_kernel import MAX_THREATS
from engine.games.gomoku.threats import ThreatSolver
from engine.types import Limits

JUDGE_NODES = 20_000
# As many threats as the solver allows: with the players' old limit of 4 the judge missed the
# VCTs (6-12 threats deep) that had already lost the 20x20 games several plies earlier.
JUDGE_THREATS = MAX_THREATS


def _game(board: int, rule: str):
    return get_game("gomoku", width=board, height=board, rule=rule)


def _loses(game, state, move: int) -> bool:
    """Does the opponent have a VCT (JUDGE_NODES, JUDGE_THREATS, fresh solver) once `move` is played?"""
    after = state.play(move)
    return after.outcome() is None and ThreatSolver(game).vct(after, nodes=JUDGE_NODES,
                                                             max_threats=JUDGE_THREATS).win


def dump(out: str, databases: list[str]) -> None:
    cases = []
    for path in databases:
        with sqlite3.connect(path) as con:
            rows = con.execute("select board, rule, first, score, moves, opening_plies from games").fetchall()
        for board, rule, first, score, moves, opening in rows:
            mcts_first = first.startswith("mcts")
            if score != (0.0 if mcts_first else 1.0):
                continue
            game = _game(int(board.split("x")[0]), rule)
            texts = json.loads(moves)
            state = game.initial_state()
            for ply, text in enumerate(texts):
                move = game.index(*map(int, text.split(",")))
                if ply >= opening and ply % 2 == (0 if mcts_first else 1) and _loses(game, state, move):
                    cases.append({"db": path, "board": game.width, "rule": rule, "moves": texts[:ply],
                                  "played": text})
                    break
                state = state.play(move)
    with open(out, "w", encoding="utf-8") as handle:
        json.dump(cases, handle)
    print(f"{len(cases)} positions written to {out}")


def replay(source: str, weights: str | None, movetime: float, player: str) -> None:
    with open(source, encoding="utf-8") as handle:
        cases = json.load(handle)
    fatal = repeated = 0
    for case in cases:
        game = _game(case["board"], case["rule"])
        state = game.state_from_moves([game.index(*map(int, m.split(","))) for m in case["moves"]])
        searcher = make_searcher(game, PlayerOptions(player=player, weights=weights))
        start = time.perf_counter()
        result = searcher.search(state, Limits(time=movetime))
        elapsed = time.perf_counter() - start
        move = result.best_move
        loses = _loses(game, state, move)
        same = game.format_move(state, move) == case["played"]
        fatal += loses
        repeated += same
        print(f"{case['board']}x{case['board']} ply {len(case['moves']):3d}  {game.format_move(state, move):6s} "
              f"{'same' if same else 'other'}  {'LOSES' if loses else 'holds'}  {elapsed:.2f} s", flush=True)
    print(f"{len(cases)} positions: the move chosen loses to a VCT in {fatal}; the game's move again in {repeated}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    d = sub.add_parser("dump")
    d.add_argument("out")
    d.add_argument("databases", nargs="+")
    r = sub.add_parser("replay")
    r.add_argument("source")
    r.add_argument("--weights", default="gomoku")
    r.add_argument("--movetime", type=float, default=0.88)
    r.add_argument("--player", default="mcts")
    args = parser.parse_args()
    if args.command == "dump":
        dump(args.out, args.databases)
    else:
        replay(args.source, args.weights, args.movetime, args.player)


if __name__ == "__main__":
    main()
