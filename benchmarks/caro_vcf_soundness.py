"""Are the threat solver's caro VCFs proofs?  Checked on the positions of real caro games.

Under caro a five blocked at both ends does not win, so a four can have more than one stop:
its five cell, and the far end of a five-to-be already blocked at one end.  For every
position of the caro games in arena databases, the side to move's VCF (the solver's, its
table kept across a game's positions as a player keeps it) is replayed move by move; at each
defender turn every stone that stops the attacker's fives under the real rule is tried, not
only the line's block, and after each other stop the solver must find a VCF again (checked
the same way, two levels deep).  A line one of those stops escapes is "unsound".

Run: python benchmarks/caro_vcf_soundness.py arena.sqlite [more.sqlite ...]
"""
from __future__ import annotations

import sys
from collections import Counter

from arena.store import Store
from engine.games.gomoku import GomokuGame, GomokuState
from engine.games.gomoku.threats import ThreatSolver, winning_cells

DEPTH = 2          # how many escapes deep a line is re-proved


def stops(state: GomokuState, attacker: int) -> list[int]:
    """Every legal cell where the defender's stone leaves the attacker no five (a full scan,
    independent of the solver's own stopping_cells)."""
    out = []
    for cell in state.legal_moves():
        after = bytearray(state.cells)
        after[cell] = 2 - attacker
        if not winning_cells(state.game, after, attacker):
            out.append(cell)
    return out


def holds(solver: ThreatSolver, state: GomokuState, line, depth: int, counts: Counter) -> bool:
    """Does `line` (the side to move attacks) win against every stop?"""
    attacker = state.to_play
    for i in range(0, len(line), 2):
        state = state.play(line[i])
        if state.outcome() is not None:
            return True
        if i + 1 >= len(line) or winning_cells(state.game, bytearray(state.cells), 1 - attacker):
            return False
        counts["defender turns"] += 1
        others = [cell for cell in stops(state, attacker) if cell != line[i + 1]]
        counts["turns with another stop"] += bool(others)
        for cell in others:
            after = state.play(cell)
            answer = solver.vcf(after, nodes=20_000) if depth > 0 else None
            if answer is None or answer.line is None or not holds(solver, after, answer.line, depth - 1, counts):
                counts["escapes"] += 1
                return False
        state = state.play(line[i + 1])
    return False


def main(paths: list[str]) -> int:
    counts: Counter[str] = Counter()
    examples = []
    for path in paths:
        for record in Store(path).records(game="gomoku"):
            if record.rule != "caro":
                continue
            width, height = (int(n) for n in record.board.split("x"))
            game = GomokuGame(width, height, rule="caro")
            solver = ThreatSolver(game)          # one per game, as a player keeps it
            state = game.initial_state()
            for text in record.moves:
                if state.outcome() is not None:
                    break
                counts["positions"] += 1
                line = solver.vcf(state, nodes=20_000).line
                if line is not None:
                    counts["vcfs"] += 1
                    if not holds(solver, state, line, DEPTH, counts):
                        counts["unsound"] += 1
                        examples.append((record.key, state.ply, [game.format_move(None, m) for m in line]))
                state = state.play(game.parse_move(state, text))
    print(", ".join(f"{name} {counts[name]}" for name in
                    ("positions", "vcfs", "unsound", "defender turns", "turns with another stop", "escapes")))
    for key, ply, line in examples[:5]:
        print(f"unsound: game {key} ply {ply}: {' '.join(line)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
