"""Fit the chess alpha-beta's win/draw/loss model to its own games (engine/games/chess/wdl.py).

    python benchmarks/chess_wdl_fit.py [--engines NAME,...] DB [DB ...]

Every move of the named engines (default: every engine that reported centipawns) in the arena
databases becomes a sample (cp for the side to move, the material on the board, the game's result
for that side); mate scores and the opening's own plies are left out.  The model is Stockfish's
shape: P(win) = sigmoid((cp - a) / b), P(loss) = sigmoid((-cp - a) / b), the draw the rest, with
a and b quadratic in the material (pawn 1, knight and bishop 3, rook 5, queen 9; clamped to 5..78 and
scaled by 1/58).  Fitted by maximum likelihood (full-batch steps along the numerical gradient, the
step halved when it fails and grown when it works), every tenth game held out.  Prints the six
numbers, both log losses, and a calibration
table (predicted against observed results by material and cp bucket, held-out games) to paste into the docs.
Why: UCI_ShowWDL asks for win/draw/loss per mille; alpha-beta knows only a score, and what that
score means in results depends on how the engine plays on from there, which only its games say.
"""
from __future__ import annotations

import argparse
import json
import sqlite3

import chess
import numpy as np

from engine.games.chess.wdl import MATERIAL_MAX, MATERIAL_MIN, MATERIAL_SCALE, material


def samples(databases: list[str], engines: set[str] | None) -> tuple[np.ndarray, ...]:
    """(cp, scaled material, outcome 1/0.5/0, game index) of every usable report (a mate is
    stored as `mate`, without `cp`, so it is left out)."""
    rows: list[tuple[float, float, float, int]] = []
    game_index = 0
    for database in databases:
        query = "select first, second, score, moves, infos, start_fen, opening_plies from games"
        for first, second, score, moves, infos, start, opening in sqlite3.connect(database).execute(query):
            board = chess.Board(start) if start else chess.Board()
            reports = json.loads(infos)
            for ply, uci in enumerate(json.loads(moves)):
                mover_is_first = ply % 2 == 0
                name = first if mover_is_first else second
                report = reports[ply] if ply < len(reports) else None
                if (ply >= opening and isinstance(report, dict) and "cp" in report
                        and (engines is None or name in engines)):
                    result = score if mover_is_first else 1.0 - score
                    rows.append((float(report["cp"]), material(board), result, game_index))
                board.push_uci(uci)
            game_index += 1
    data = np.array(rows, dtype=np.float64)
    return data[:, 0], data[:, 1], data[:, 2], data[:, 3].astype(np.int64)


def probabilities(params: np.ndarray, cp: np.ndarray, m: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    a = params[0] + params[1] * m + params[2] * m * m
    b = np.maximum(params[3] + params[4] * m + params[5] * m * m, 1.0)
    win = 1.0 / (1.0 + np.exp(-(cp - a) / b))
    loss = 1.0 / (1.0 + np.exp(-(-cp - a) / b))
    return win, loss


def log_loss(params: np.ndarray, cp: np.ndarray, m: np.ndarray, outcome: np.ndarray) -> float:
    win, loss = probabilities(params, cp, m)
    draw = np.clip(1.0 - win - loss, 1e-6, 1.0)
    p = np.where(outcome == 1.0, win, np.where(outcome == 0.0, loss, draw))
    return float(-np.mean(np.log(np.clip(p, 1e-9, 1.0))))


def fit(cp: np.ndarray, m: np.ndarray, outcome: np.ndarray, steps: int = 3000) -> np.ndarray:
    """Gradient descent on the log loss with numerical gradients (six parameters) and a
    step that halves when it fails and grows when it works."""
    params = np.array([150.0, 0.0, 0.0, 100.0, 0.0, 0.0])
    loss = log_loss(params, cp, m, outcome)
    step = 50.0
    for _ in range(steps):
        grad = np.zeros(6)
        for k in range(6):
            shift = np.zeros(6)
            shift[k] = 1e-3
            grad[k] = (log_loss(params + shift, cp, m, outcome) - log_loss(params - shift, cp, m, outcome)) / 2e-3
        norm = float(np.linalg.norm(grad))
        if norm < 1e-9:
            break
        trial = params - step * grad / norm
        trial_loss = log_loss(trial, cp, m, outcome)
        if trial_loss < loss:
            params, loss, step = trial, trial_loss, step * 1.2
        else:
            step *= 0.5
            if step < 1e-4:
                break
    return params


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("databases", nargs="+")
    parser.add_argument("--engines", help="comma-separated engine names whose reports count")
    args = parser.parse_args()
    engines = set(args.engines.split(",")) if args.engines else None
    cp, m, outcome, game = samples(args.databases, engines)
    held = game % 10 == 0
    params = fit(cp[~held], m[~held], outcome[~held])
    print(f"samples {len(cp)} (held out {int(held.sum())}) from {int(game.max()) + 1} games; "
          f"wins {np.mean(outcome == 1):.3f} draws {np.mean(outcome == 0.5):.3f}")
    print(f"A = ({params[0]:.1f}, {params[1]:.1f}, {params[2]:.1f}), B = ({params[3]:.1f}, {params[4]:.1f}, "
          f"{params[5]:.1f}): a = A0 + A1 m + A2 m^2, b likewise "
          f"(m = clamp(material, {MATERIAL_MIN}, {MATERIAL_MAX}) / {MATERIAL_SCALE})")
    print(f"log loss: fitted {log_loss(params, cp[~held], m[~held], outcome[~held]):.4f}, "
          f"held out {log_loss(params, cp[held], m[held], outcome[held]):.4f}")
    win, loss = probabilities(params, cp[held], m[held])
    print("| material (scaled) | cp (held out) | positions | predicted W/D/L % | observed W/D/L % |")
    print("|---|---|---|---|---|")
    edges = [-300, -150, -75, -25, 25, 75, 150, 300]
    for m_low, m_high in ((0.0, 0.5), (0.5, 0.9), (0.9, 9.0)):
        for low, high in zip(edges, edges[1:]):
            inside = (cp[held] >= low) & (cp[held] < high) & (m[held] >= m_low) & (m[held] < m_high)
            if inside.sum() < 50:
                continue
            w, lo = win[inside].mean(), loss[inside].mean()
            o = outcome[held][inside]
            print(f"| {m_low}..{m_high} | {low}..{high} | {int(inside.sum())} | {100 * w:.0f}/{100 * (1 - w - lo):.0f}/"
                  f"{100 * lo:.0f} | {100 * np.mean(o == 1):.0f}/{100 * np.mean(o == 0.5):.0f}/{100 * np.mean(o == 0):.0f} |")

if __name__ == "__main__":
    main()
