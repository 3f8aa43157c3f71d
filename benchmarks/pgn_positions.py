"""Every position our players reached in some PGN files, as distinct FENs: the starts of a chess DAgger round.

    arena report match.sqlite --pgn match.pgn
    python benchmarks/pgn_positions.py starts.epd match.pgn [more.pgn ...]
    engine teacher --game chess --openings starts.epd --opening-plies 0 ...

The teacher plays on from each start, so it labels the positions the student gets into rather
than the ones it would reach itself.  Positions after the first ply up to the last before the
game's end; two positions count as one when the first four FEN fields agree (the move counters
do not change what the network sees).
"""
from __future__ import annotations

import argparse

import chess.pgn


def distinct_positions(paths: list[str]) -> list[str]:
    seen: set[str] = set()
    fens: list[str] = []
    for path in paths:
        with open(path, encoding="utf-8", errors="replace") as handle:
            while (game := chess.pgn.read_game(handle)) is not None:
                board = game.board()
                for move in game.mainline_moves():
                    board.push(move)
                    if board.is_game_over():
                        break
                    key = " ".join(board.fen().split()[:4])
                    if key not in seen:
                        seen.add(key)
                        fens.append(board.fen())
    return fens


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", help="EPD file to write, one FEN a line")
    parser.add_argument("pgn", nargs="+", help="PGN files (e.g. from `arena report DB --pgn`)")
    args = parser.parse_args()
    try:
        fens = distinct_positions(args.pgn)
    except OSError as exc:
        parser.exit(1, f"error: {exc}\n")
    with open(args.out, "w", encoding="utf-8") as out:
        out.write("".join(fen + "\n" for fen in fens))
    print(f"{len(fens)} positions in {args.out}")


if __name__ == "__main__":
    main()
