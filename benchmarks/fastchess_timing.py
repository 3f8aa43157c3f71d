"""Summarise a fastchess PGN for one engine: score, time used per move, depth, time losses.

    python benchmarks/fastchess_timing.py GAMES.pgn [--engine plyzero]

Reads fastchess's move comments (`{+0.25/5 0.012s, tl=0.95s, n=377}`: score/depth,
time used, time left) and its Termination tag ("time forfeit" on a loss on time).
"""
from __future__ import annotations

import argparse
import re
import statistics

import chess.pgn

COMMENT = re.compile(r"(?P<score>[+-]?(?:M)?[\d.]+)/(?P<depth>\d+) (?P<used>[\d.]+)s(?:, tl=(?P<left>[\d.]+)s)?")


def summarise(path: str, engine: str) -> dict[str, float]:
    points = games = time_losses = 0.0
    used: list[float] = []
    depths: list[int] = []
    left: list[float] = []
    with open(path, encoding="utf-8") as handle:
        while (game := chess.pgn.read_game(handle)) is not None:
            headers = game.headers
            if engine not in (headers.get("White"), headers.get("Black")):
                continue
            colour = chess.WHITE if headers["White"] == engine else chess.BLACK
            games += 1
            result = headers.get("Result", "*")
            points += {"1-0": 1.0, "0-1": 0.0, "1/2-1/2": 0.5}.get(result, 0.5) if colour else \
                {"1-0": 0.0, "0-1": 1.0, "1/2-1/2": 0.5}.get(result, 0.5)
            loser_is_us = (result == "0-1") == (colour == chess.WHITE)
            if "time" in headers.get("Termination", "") and loser_is_us:
                time_losses += 1
            for node in game.mainline():
                if node.parent is not None and node.parent.board().turn == colour:
                    match = COMMENT.search(node.comment)
                    if match:
                        used.append(float(match["used"]))
                        depths.append(int(match["depth"]))
                        if match["left"]:
                            left.append(float(match["left"]))
    return {"games": games, "score": points / games if games else 0.0, "points": points,
            "moves": len(used), "mean_ms": 1000 * statistics.fmean(used) if used else 0.0,
            "median_ms": 1000 * statistics.median(used) if used else 0.0,
            "max_ms": 1000 * max(used) if used else 0.0,
            "mean_depth": statistics.fmean(depths) if depths else 0.0,
            "min_left_ms": 1000 * min(left) if left else None, "time_losses": time_losses}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pgn")
    parser.add_argument("--engine", default="plyzero")
    args = parser.parse_args()
    s = summarise(args.pgn, args.engine)
    print(f"{args.engine}: {s['points']:g}/{s['games']:g} ({100 * s['score']:.1f} %), time losses {s['time_losses']:g}; "
          f"per move over {s['moves']} moves: mean {s['mean_ms']:.1f} ms, median {s['median_ms']:.1f} ms, "
          f"max {s['max_ms']:.0f} ms; mean depth {s['mean_depth']:.1f}; lowest clock left "
          + (f"{s['min_left_ms']:.0f} ms" if s["min_left_ms"] is not None else "not in the PGN (no tl= comments)"))


if __name__ == "__main__":
    main()
