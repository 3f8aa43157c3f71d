"""Would a gomoku network evaluated on a window around the stones do?  Agreement and cells saved.

Why: on a CPU the network is most of an MCTS node, and on 20x20 the stones of a real game
cover a small part of the board, so evaluating only the stones' bounding box plus a margin
would be cheaper.  But outside the window the network sees zeros, the encoding of "off the
board", so it reads the window's sides as edges.  This measures what that costs on the
positions of arena games: the full board against the window, one position at a time, for
several margins (the window is clipped to the real board).

    python benchmarks/crop_agreement.py --board 20 games.sqlite [more.sqlite ...]

Prints, per margin: how often the window's best move is the full board's, the mean absolute
difference of the value (win - loss), the full policy's mass on moves outside the window
(which the window can never play) and the window's cells as a share of the board.
"""
from __future__ import annotations

import argparse
import json
import sqlite3

import numpy as np

from engine.games import get_game
from engine.games.gomoku import codec
from engine.nn.evaluator import NetworkEvaluator


def arena_positions(db: str, size: int) -> list:
    """Every position before the end of every game in an arena database (one board size)."""
    game = get_game("gomoku", width=size, height=size)
    out = []
    for (moves,) in sqlite3.connect(db).execute("select moves from games where board = ?", (f"{size}x{size}",)):
        state = game.initial_state()
        for text in json.loads(moves):
            x, y = (int(v) for v in text.split(","))
            state = state.play(game.index(x, y))
            if state.outcome() is not None:
                break
            out.append(state)
    return out


def stones_window(state, margin: int) -> tuple[int, int, int, int]:
    """(y0, y1, x0, x1): the stones' bounding box grown by `margin`, clipped to the board."""
    cells = np.frombuffer(state.cells, dtype=np.uint8).reshape(state.height, state.width)
    ys, xs = np.nonzero(cells)
    return (max(0, ys.min() - margin), min(state.height, ys.max() + margin + 1),
            max(0, xs.min() - margin), min(state.width, xs.max() + margin + 1))


def _softmax(x: np.ndarray) -> np.ndarray:
    z = np.exp(x - x.max())
    return z / z.sum()


def compare(run, states: list, margin: int) -> dict[str, float]:
    """The window against the full board over `states` (run: planes -> [policy, wdl])."""
    agree = value_gap = outside = cells = 0.0
    for state in states:
        full = codec.encode([state])
        policy, wdl = run(full)
        legal = np.asarray(state.legal_moves())
        prior = _softmax(policy[0].reshape(-1)[legal].astype(np.float64))
        value = float(np.dot(_softmax(wdl[0].astype(np.float64)), (1.0, 0.0, -1.0)))
        y0, y1, x0, x1 = stones_window(state, margin)
        crop_policy, crop_wdl = run(np.ascontiguousarray(full[:, :, y0:y1, x0:x1]))
        ly, lx = legal // state.width, legal % state.width
        inside = (ly >= y0) & (ly < y1) & (lx >= x0) & (lx < x1)
        logits = np.full(len(legal), -np.inf)
        logits[inside] = crop_policy[0][ly[inside] - y0, lx[inside] - x0]
        agree += float(np.argmax(logits) == np.argmax(prior))
        value_gap += abs(float(np.dot(_softmax(crop_wdl[0].astype(np.float64)), (1.0, 0.0, -1.0))) - value)
        outside += float(prior[~inside].sum())
        cells += (y1 - y0) * (x1 - x0) / (state.width * state.height)
    n = max(1, len(states))
    return {"top1": agree / n, "value_gap": value_gap / n, "outside": outside / n, "cells": cells / n}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("databases", nargs="+", help="arena SQLite databases (gomoku games)")
    parser.add_argument("--board", type=int, default=20)
    parser.add_argument("--weights", default="weights/gomoku-loop11-res6x32.pt")
    parser.add_argument("--margins", default="4,5,6,7")
    parser.add_argument("--every", type=int, default=3, help="use every k-th position")
    args = parser.parse_args()
    evaluator = NetworkEvaluator(args.weights, cache_size=0)
    states = [s for db in args.databases for s in arena_positions(db, args.board)][::args.every]
    print(f"{len(states)} positions, {evaluator.precision}")
    for margin in (int(m) for m in args.margins.split(",")):
        r = compare(evaluator._runner.run, states, margin)
        print(f"margin {margin}: top-1 agreement {r['top1']:.4f}  mean |value diff| {r['value_gap']:.4f}  "
              f"full policy mass outside {r['outside']:.4f}  cells {r['cells']:.3f} of the board")


if __name__ == "__main__":
    main()
