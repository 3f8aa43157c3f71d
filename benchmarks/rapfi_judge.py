"""Gomoku: a Gomocup brain (Rapfi) as the judge of the games our player lost, and what our VCT sees there.

    python benchmarks/rapfi_judge.py judge OUT.json ARENA.sqlite [...] [--player loop8] [--nodes 300000]
        [--brain pbrain-rapfi]
    python benchmarks/rapfi_judge.py report OUT.json [--nodes 4000000]

judge: for every game an engine whose name starts with `--player` lost, the brain's win rate for
the side to move (its `Eval`, a proven win 1.0 and a proven loss 0.0) at every position after the
opening, with the move played and our player's reported value (protocols/gomocup_teacher.py
asks).  report: (1) the positions where the brain proves a win for our player: is it one our
VCT finds (one search of up to `--nodes`), and in how many nodes and seconds; (2) our moves
after which the brain proves a win for the opponent while before them it did not: is that a VCT
of the opponent's that ours finds.  Why: to know which lost games a deeper threat search would
have saved, and at what cost in time, before changing the search's time shares
(engine/games/gomoku/threats.py; docs/measurements/issue25-tactics.md, eleventh session).
"""
from __future__ import annotations

import argparse
import json
import sqlite3
import time
from collections import Counter

from engine.games import get_game
from engine.games.gomoku.threats import ThreatSolver


def _replay(game, moves: list[str]) -> list:
    """The position before each move, and the one after the last."""
    states = [game.initial_state()]
    for move in moves:
        states.append(states[-1].play(game.index(*map(int, move.split(",")))))
    return states


def _lost_games(path: str, player: str):
    with sqlite3.connect(path) as con:
        rows = con.execute("select id, board, rule, first, second, score, moves, infos, opening_plies "
                           "from games").fetchall()
    for gid, board, rule, first, second, score, moves, infos, opening_plies in rows:
        ours = 0 if first.startswith(player) else 1 if second.startswith(player) else None
        if ours is None or score != (0.0 if ours == 0 else 1.0):
            continue
        yield {"db": path, "id": gid, "board": int(board.split("x")[0]), "rule": rule, "ours": ours,
               "moves": json.loads(moves), "infos": json.loads(infos), "opening": opening_plies}


def judge(args) -> None:
    from engine.train.teacher import TeacherConfig
    from protocols.gomocup_teacher import gomocup_teacher
    teach, close = gomocup_teacher(TeacherConfig(depth=None, nodes=args.nodes, gomocup=(args.brain,)))
    games = []
    try:
        for path in args.databases:
            for g in _lost_games(path, args.player):
                game = get_game("gomoku", width=g["board"], height=g["board"], rule=g["rule"])
                positions = []
                states = _replay(game, g["moves"])
                for ply in range(g["opening"], len(g["moves"])):
                    state = states[ply]
                    if state.outcome() is not None:
                        break
                    advice = teach(state, 0)
                    info = g["infos"][ply - g["opening"]] if ply - g["opening"] < len(g["infos"]) else {}
                    positions.append({"ply": ply, "ours": ply % 2 == g["ours"],
                                      "judge": None if advice.wdl is None else float(advice.wdl[0]),
                                      "our_value": info.get("value")})
                games.append({k: g[k] for k in ("db", "id", "board", "rule", "moves")} | {"positions": positions})
                print(f"{path} game {g['id']}: {len(positions)} positions judged", flush=True)
                with open(args.out, "w") as out:
                    json.dump(games, out)
    finally:
        close()


def _our_vct(game, state, nodes: int, after: int | None = None) -> tuple[str, int, float]:
    start = time.perf_counter()
    solver = ThreatSolver(game)
    result = solver.vct(state, nodes=nodes) if after is None else solver.vct_after(state, after, nodes=nodes)
    verdict = "found" if result.win else "none" if result.complete else "not finished"
    return verdict, result.nodes, time.perf_counter() - start


def report(args) -> None:
    with open(args.out) as f:
        games = json.load(f)
    wins, blunders = Counter(), Counter()
    games_with_win: dict[str, set] = {"proved": set(), "found": set()}
    for g in games:
        game = get_game("gomoku", width=g["board"], height=g["board"], rule=g["rule"])
        by_ply = {p["ply"]: p for p in g["positions"]}
        states = _replay(game, g["moves"])
        for p in g["positions"]:
            if not p["ours"]:
                continue
            state = states[p["ply"]]
            if p["judge"] == 1.0:
                verdict, nodes, seconds = _our_vct(game, state, args.nodes)
                wins[verdict] += 1
                games_with_win["proved"].add((g["db"], g["id"]))
                if verdict == "found":
                    games_with_win["found"].add((g["db"], g["id"]))
                print(f"win   {g['db']} game {g['id']} ply {p['ply']}: our value {p['our_value']}, "
                      f"our VCT {verdict} in {nodes} nodes, {seconds:.3f} s", flush=True)
            after = by_ply.get(p["ply"] + 1)
            if after is not None and after["judge"] == 1.0 and p["judge"] not in (None, 0.0, 1.0):
                move = game.index(*map(int, g["moves"][p["ply"]].split(",")))
                verdict, nodes, seconds = _our_vct(game, state, args.nodes, after=move)
                blunders[verdict] += 1
                print(f"loses {g['db']} game {g['id']} ply {p['ply']}: judge before {p['judge']:.2f}, our value "
                      f"{p['our_value']}, the opponent's VCT after it {verdict} in {nodes} nodes, {seconds:.3f} s",
                      flush=True)
    print(f"{len(games)} lost games; the judge proves a win for us in {len(games_with_win['proved'])} "
          f"(our VCT finds one in {len(games_with_win['found'])}); positions: {dict(wins)}")
    print(f"moves after which the judge proves the opponent's win: {sum(blunders.values())}, "
          f"its VCT by ours: {dict(blunders)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    j = sub.add_parser("judge")
    j.add_argument("out")
    j.add_argument("databases", nargs="+")
    j.add_argument("--player", default="loop8")
    j.add_argument("--nodes", type=int, default=300_000)
    j.add_argument("--brain", default="pbrain-rapfi")
    r = sub.add_parser("report")
    r.add_argument("out")
    r.add_argument("--nodes", type=int, default=4_000_000)
    args = parser.parse_args()
    judge(args) if args.command == "judge" else report(args)


if __name__ == "__main__":
    main()
