"""Count the renju fouls in an arena database's renju games, as a referee would.

Every game is replayed stone by stone under freestyle (so a forbidden move would still be
placed) and each black move is checked with the renju foul detector
(engine/games/gomoku/renju.py) on the position before it; forfeits are listed with their reason.
The arena's referee plays renju games through GomokuState, which refuses fouls (the mover
forfeits), so a clean database shows 0 fouls and no "illegal move" forfeits.

Run: python benchmarks/fouls_in_games.py arena.sqlite [more.sqlite ...]
"""
from __future__ import annotations

import sys
from collections import Counter

from arena.store import Store
from engine.games.gomoku import GomokuGame


def main(paths: list[str]) -> int:
    for path in paths:
        records = Store(path).records()
        fouls: Counter[str] = Counter()
        black_moves: Counter[str] = Counter()
        forfeits = [(r.key, r.forfeit, r.reason) for r in records if r.forfeit]
        for r in records:
            if r.rule != "renju":
                continue          # fouls exist under renju only
            size = int(r.board.split("x")[0])
            game = GomokuGame(size, rule="freestyle")
            renju = GomokuGame(size, rule="renju")
            cells = bytearray(size * size)
            for ply, text in enumerate(r.moves):
                move = game.index(*map(int, text.split(",")))
                if ply % 2 == 0 and ply >= r.opening_plies:
                    mover = r.first                      # black: the first player's stones
                    black_moves[mover] += 1
                    state = renju.state_from_stones([c for c, v in enumerate(cells) if v == 1],
                                                    [c for c, v in enumerate(cells) if v == 2])
                    if state.foul(move) is not None:
                        fouls[mover] += 1
                cells[move] = 1 + ply % 2
        rules = sorted({r.rule for r in records})
        print(f"{path}: {len(records)} games ({', '.join(rules)}), black moves by player "
              f"{dict(black_moves)}, fouls {dict(fouls) or 0}, forfeits {forfeits or 0}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
