"""How closely a network's int8 export (`engine quantize`) evaluates like the float network.

    python benchmarks/int8_agreement.py WEIGHTS ARENA.sqlite [ARENA.sqlite ...] [--positions 2000]

The positions are those of the games in the arena stores (every position after each move of
every game of the network's game, all board sizes), `--positions` of them drawn at random per
board (seed 0).  Printed per board: how often the two agree on the policy's top move, and the
mean and largest difference of the value (W - L, on [-1, 1]).  Nothing is timed: it may run
beside other work.
"""
from __future__ import annotations

import argparse
import json
import random
import sqlite3
from collections import defaultdict

import numpy as np

from engine.games import game_on_board
from engine.nn.evaluator import NetworkEvaluator
from engine.players.networks import find_weights


def arena_positions(stores: list[str], game_name: str) -> dict[str, list]:
    """{board label: positions} from every finished game of `game_name` in the stores."""
    found: dict[str, list] = defaultdict(list)
    for store in stores:
        with sqlite3.connect(f"file:{store}?mode=ro", uri=True) as db:
            rows = db.execute("SELECT board, rule, start_fen, moves FROM games WHERE game = ?",
                              (game_name,)).fetchall()
        for board, rule, start_fen, moves in rows:
            width, _, height = (board or "0x0").partition("x")
            game = game_on_board(game_name, int(width), int(height or width), rule)
            state = game.state_from_fen(start_fen) if start_fen else game.initial_state()
            for text in json.loads(moves):
                state = state.play(game.parse_move(state, text))
                if state.outcome() is None:
                    found[game.label].append(state)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("weights")
    parser.add_argument("stores", nargs="+")
    parser.add_argument("--positions", type=int, default=2000)
    args = parser.parse_args()
    weights = find_weights(args.weights)
    quantized = NetworkEvaluator(weights, device="cpu", precision="int8", cache_size=0)
    exact = NetworkEvaluator(weights, device="cpu", precision="fp32", cache_size=0)
    rng = random.Random(0)
    for label, states in sorted(arena_positions(args.stores, quantized.game).items()):
        states = rng.sample(states, min(args.positions, len(states)))
        pairs = list(zip(quantized.evaluate(states), exact.evaluate(states)))
        agree = np.mean([int(np.argmax(q.priors) == np.argmax(f.priors)) for q, f in pairs])
        value = np.array([abs(q.value - f.value) for q, f in pairs])
        print(f"{label}: {len(states)} positions, top move agrees {agree:.1%}, "
              f"value differs {value.mean():.3f} on average, {value.max():.3f} at most")


if __name__ == "__main__":
    main()
