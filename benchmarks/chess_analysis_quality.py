"""Which searcher analyses chess better for the same seconds: `go infinite` stopped after each
budget, as a GUI's analysis is, and Stockfish's rating of the move it ends on.

    python benchmarks/pgn_positions.py all.epd match.pgn            # positions from our games
    python benchmarks/chess_analysis_quality.py search all.epd mcts.json --player mcts --seconds 1,3,10
    python benchmarks/chess_analysis_quality.py search all.epd ab.json --player alphabeta --seconds 1,3,10
    python benchmarks/chess_analysis_quality.py rate mcts.json ab.json --nodes 2000000

`search` drives `plyzero-uci` through python-chess (`analysis()`, then `stop` after the
budget; a `ucinewgame` before each search, so no tree or table carries over) on every
--every-th position of the EPD, --count of them.  `rate` asks Stockfish (/usr/games/stockfish,
one thread) for each position's best score and each answer's score, both for the side to move,
and prints per player and budget: the mean centipawns lost (scores clipped to +-1000), how
many answers lost 50 / 100 / 300 or more, and how many were Stockfish's own move.
Why: Player auto hands every clocked chess move to alpha-beta (it wins every match up to 3 s a
move); whether analysis without a clock should go there too is a question of longer budgets,
which matches at those budgets cannot answer on two cores in a session.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

import chess
import chess.engine

STOCKFISH = ["/usr/games/stockfish"]
MATE = 10000
CLIP = 1000


def _positions(path: str, every: int, count: int) -> list[str]:
    with open(path, encoding="utf-8") as handle:
        lines = [line.strip() for line in handle if line.strip()]
    fens = []
    for line in lines[::every][:count]:
        fields = line.split()
        fens.append(" ".join(fields[:4] + ["0", "1"]) if len(fields) < 6 else " ".join(fields[:6]))
    return fens


def search(args: argparse.Namespace) -> None:
    budgets = [float(s) for s in args.seconds.split(",")]
    uci = os.path.join(os.path.dirname(sys.executable), "plyzero-uci")
    rows = []
    with chess.engine.SimpleEngine.popen_uci([uci], timeout=30) as engine:
        engine.configure({"Player": args.player})
        for fen in _positions(args.epd, args.every, args.count):
            board = chess.Board(fen)
            for seconds in budgets:
                with engine.analysis(board, game=(fen, seconds)) as analysis:
                    time.sleep(seconds)
                    analysis.stop()
                    best = analysis.wait()
                    info = analysis.info
                rows.append({"fen": fen, "seconds": seconds, "player": args.player, "move": best.move.uci(),
                             "depth": info.get("depth"), "nodes": info.get("nodes")})
                print(f"{len(rows)} {args.player} {seconds:g}s {best.move.uci()} depth {info.get('depth')}",
                      flush=True)
    with open(args.out, "w") as handle:
        json.dump(rows, handle)


def _score(engine, limit, board: chess.Board) -> tuple[int, str]:
    """Stockfish's score for the side to move, clipped, and its move."""
    info = engine.analyse(board, limit)
    return _clip(info["score"].pov(board.turn).score(mate_score=MATE)), info["pv"][0].uci()


def _after(engine, limit, board: chess.Board, move: str) -> int:
    """Stockfish's score after `move`, for the side that played it."""
    board = board.copy()
    board.push_uci(move)
    if board.is_game_over():
        return CLIP if board.is_checkmate() else 0
    return -_score(engine, limit, board)[0]


def _clip(cp: int) -> int:
    return max(-CLIP, min(CLIP, cp))


def rate(args: argparse.Namespace) -> None:
    rows = [row for path in args.searched for row in json.load(open(path))]
    engine = chess.engine.SimpleEngine.popen_uci(STOCKFISH)
    engine.configure({"Threads": 1, "Hash": 64})
    limit = chess.engine.Limit(nodes=args.nodes)
    best: dict[str, tuple[int, str]] = {}
    after: dict[tuple[str, str], int] = {}
    for row in rows:
        board = chess.Board(row["fen"])
        if row["fen"] not in best:
            best[row["fen"]] = _score(engine, limit, board)
        top_score, top_move = best[row["fen"]]
        key = (row["fen"], row["move"])
        if key not in after:
            after[key] = top_score if row["move"] == top_move else _after(engine, limit, board, row["move"])
        row["lost"] = max(0, top_score - after[key])
        row["top"] = row["move"] == top_move
    engine.quit()
    if args.out:
        with open(args.out, "w") as handle:
            json.dump(rows, handle)
    print("| player | seconds | positions | mean cp lost | lost >= 50 / 100 / 300 | Stockfish's move |")
    print("|---|---|---|---|---|---|")
    for player in sorted({r["player"] for r in rows}):
        for seconds in sorted({r["seconds"] for r in rows if r["player"] == player}):
            part = [r for r in rows if r["player"] == player and r["seconds"] == seconds]
            lost = [r["lost"] for r in part]
            print(f"| {player} | {seconds:g} | {len(part)} | {sum(lost) / len(lost):.1f} | "
                  + " / ".join(str(sum(x >= t for x in lost)) for t in (50, 100, 300))
                  + f" | {sum(r['top'] for r in part)} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    s = sub.add_parser("search")
    s.add_argument("epd")
    s.add_argument("out")
    s.add_argument("--player", required=True, help="the UCI option Player: mcts, alphabeta, auto")
    s.add_argument("--seconds", default="1,3,10", help="budgets, comma separated")
    s.add_argument("--every", type=int, default=1)
    s.add_argument("--count", type=int, default=40)
    s.set_defaults(action=search)
    r = sub.add_parser("rate")
    r.add_argument("searched", nargs="+")
    r.add_argument("--nodes", type=int, default=2_000_000)
    r.add_argument("--out")
    r.set_defaults(action=rate)
    args = parser.parse_args()
    args.action(args)


if __name__ == "__main__":
    main()
