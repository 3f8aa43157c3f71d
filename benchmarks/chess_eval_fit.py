"""Fit PeSTO's tables to Stockfish's scores (Texel-style): label positions, then fit.

  python benchmarks/chess_eval_fit.py label OUT.jsonl DEPTH DB...   # resumable: skips labelled FENs
  python benchmarks/chess_eval_fit.py fit OUT.jsonl TABLES.json [--steps 3000] [--l2 1e-9]

label: every position after ply 8 of every game in the arena databases, not in check and not
just after a capture, scored by Stockfish (/usr/games/stockfish) at DEPTH; mates are left out.
fit: PeSTO's 768 numbers (value + square, middle game and ending, White's tables as published;
Black's mirrored) under the compiled evaluation's positional terms (fixed, read from the kernel),
loss mean (sigmoid(ours/400) - sigmoid(S * stockfish/400))^2 with S the scale at which PeSTO as
published fits best, full-batch Adam from PeSTO with an L2 pull towards it; every tenth block of
500 consecutive positions (about whole games) held out.  Prints both losses; writes the rounded
tables as {"mg": [6][64], "eg": [6][64]} (pawn .. king, published square order, a8 first).
Measured and not kept (docs/measurements/chess-native-search.md): 40,000 positions overfit.
"""
from __future__ import annotations

import json
import os
import sqlite3
import sys

import chess
import chess.engine
import numpy as np

K = 400.0
BLOCK = 500


def label(out: str, depth: int, databases: list[str]) -> None:
    done: set[str] = set()
    if os.path.exists(out):
        with open(out) as existing:
            done = {json.loads(line)["fen"] for line in existing}
    todo: list[tuple[str, bool]] = []
    for database in databases:
        for start, moves in sqlite3.connect(database).execute("select start_fen, moves from games"):
            board = chess.Board(start, chess960="chess960" in database) if start else chess.Board()
            for ply, uci in enumerate(json.loads(moves)):
                move = chess.Move.from_uci(uci)
                capture = board.is_capture(move)
                board.push(move)
                if ply < 8 or capture or board.is_check() or board.is_game_over():
                    continue
                fen = board.fen()
                if fen not in done:
                    done.add(fen)
                    todo.append((fen, board.chess960))
    print(f"{len(todo)} positions to label", file=sys.stderr)
    engine = chess.engine.SimpleEngine.popen_uci(["/usr/games/stockfish"])
    engine.configure({"Threads": 1, "Hash": 16})
    try:
        with open(out, "a") as sink:
            for fen, chess960 in todo:
                score = engine.analyse(chess.Board(fen, chess960=chess960), chess.engine.Limit(depth=depth))["score"].white()
                if not score.is_mate():
                    sink.write(json.dumps({"fen": fen, "c960": chess960, "cp": score.score()}) + "\n")
    finally:
        engine.quit()


def features(rows: list[dict]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(X [n, 768] tapered piece-square counts, White positive; the positional terms; Stockfish's cp)."""
    from engine.games.chess import pst
    from engine.games.chess.native_search import kernel, position_of
    x = np.zeros((len(rows), 768))
    offset, cp = np.zeros(len(rows)), np.zeros(len(rows))
    for r, row in enumerate(rows):
        board = chess.Board(row["fen"], chess960=row["c960"])
        pieces = board.piece_map()
        phase = min(pst.PHASE_TOTAL, sum(pst.PHASE_WEIGHT[p.piece_type] for p in pieces.values()))
        for square, piece in pieces.items():
            column = (piece.piece_type - 1) * 64 + (square ^ 56 if piece.color else square)
            sign = 1 if piece.color else -1
            x[r, column] += sign * phase / pst.PHASE_TOTAL
            x[r, 384 + column] += sign * (pst.PHASE_TOTAL - phase) / pst.PHASE_TOTAL
        position = position_of(board)
        turn = 1 if board.turn else -1
        offset[r] = turn * (kernel.evaluate(position, True) - kernel.evaluate(position, False))
        cp[r] = row["cp"]
    return x, offset, cp


def fit(labels: str, out: str, steps: int, l2: float) -> None:
    from engine.games.chess import pst
    rows = [json.loads(line) for line in open(labels)]
    x, offset, cp = features(rows)
    held = (np.arange(len(rows)) // BLOCK) % 10 == 0
    w0 = np.array([pst.MG_VALUE[t] + pst._MG[t][j] for t in range(1, 7) for j in range(64)]
                  + [pst.EG_VALUE[t] + pst._EG[t][j] for t in range(1, 7) for j in range(64)], dtype=float)

    def sigmoid(v: np.ndarray) -> np.ndarray:
        return 1 / (1 + np.exp(-v / K))

    def loss(w: np.ndarray, scale: float, mask: np.ndarray) -> float:
        return float(np.mean((sigmoid(x[mask] @ w + offset[mask]) - sigmoid(scale * cp[mask])) ** 2))

    train = ~held
    scale = min(np.linspace(0.3, 2.0, 69), key=lambda s: loss(w0, s, train))
    print(f"{len(rows)} positions, {held.sum()} held out; scale {scale:.3f}; "
          f"PeSTO: train {loss(w0, scale, train):.6f}, held out {loss(w0, scale, held):.6f}")
    xt, ot, target = x[train], offset[train], sigmoid(scale * cp[train])
    w, m, v = w0.copy(), np.zeros_like(w0), np.zeros_like(w0)
    for step in range(1, steps + 1):
        s = sigmoid(xt @ w + ot)
        grad = xt.T @ ((s - target) * s * (1 - s) / K) * 2 / len(target) + 2 * l2 * (w - w0)
        m = 0.9 * m + 0.1 * grad
        v = 0.999 * v + 0.001 * grad ** 2
        w -= (m / (1 - 0.9 ** step)) / (np.sqrt(v / (1 - 0.999 ** step)) + 1e-12)
    rounded = np.rint(w)
    print(f"fitted (rounded): train {loss(rounded, scale, train):.6f}, held out {loss(rounded, scale, held):.6f}")
    with open(out, "w") as sink:
        json.dump({"mg": rounded[:384].astype(int).reshape(6, 64).tolist(),
                   "eg": rounded[384:].astype(int).reshape(6, 64).tolist()}, sink)


def main(argv: list[str]) -> None:
    if len(argv) >= 4 and argv[0] == "label":
        label(argv[1], int(argv[2]), argv[3:])
    elif len(argv) >= 3 and argv[0] == "fit":
        steps = int(argv[argv.index("--steps") + 1]) if "--steps" in argv else 3000
        l2 = float(argv[argv.index("--l2") + 1]) if "--l2" in argv else 1e-9
        fit(argv[1], argv[2], steps, l2)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
