"""Generate tests/data/vcf_positions.txt: gomoku positions with a VCF, and defence positions.

Positions are built by seeded tactical self-play (each side picks among the best few
moves of the alpha-beta board's static order, so lines of threes and fours appear), and
kept when the threat solver proves what the line claims.  The test re-proves every line
and checks each proof independently with the rules alone (tests/test_threats.py), so
nothing recorded here is trusted.  Run: python benchmarks/make_vcf_positions.py
The renju and caro set (tests/data/vcf_positions_rules.txt) is made by the same loop:
python benchmarks/make_vcf_positions.py rules; its "vcf-foul" positions are wins where a
forced block would be a forbidden point for black, so black cannot block.
"""
from __future__ import annotations

import random
import sys
import time
from pathlib import Path

from engine.games import get_game
from engine.games.gomoku import GomokuState
from engine.games.gomoku.alphabeta import GomokuSearchBoard
from engine.games.gomoku.threats import ThreatSolver

DATA_DIR = Path(__file__).resolve().parent.parent / "tests" / "data"
OUT = DATA_DIR / "vcf_positions.txt"
HEADER = """\
# Gomoku threat-space positions for tests/test_threats.py (made by benchmarks/make_vcf_positions.py).
#
# One position per line, fields separated by ";":
#   id ; WxH rule ; X stones ; O stones ; kind ; plies ; moves
# - X / O stones: "x,y" cells of the first and second player; X has as many stones as O
#   (X to move) or one more (O to move).  Neither side has a four on the board.
# - kind: vcf          the side to move has a VCF;
#         vcf-counter  likewise, and a forced reply on the proof line makes a four of the
#                      defender's own that the attacker must block with a four;
#         vcf-foul     likewise under renju, and a forced reply on the line is a forbidden
#                      point for black: black cannot block there, the attacker wins;
#         refute       the opponent has a VCF if the side to move does nothing; `moves`
#                      lists tempting moves (best by static order) that do not stop it;
#         counter      likewise, and every move that stops it is a four of the side to move.
# - plies: the length of the proof line found when generated (information only: the test
#   proves each position again and checks the new proof itself).
"""


def _cells(game, moves) -> str:
    return " ".join(f"{m % game.width},{m // game.width}" for m in sorted(moves)) or "-"


def _has_counter_four(state: GomokuState, line) -> bool:
    """Does a forced reply on the proof line give the defender a four?"""
    game = state.game
    board = GomokuSearchBoard.from_state(state)
    attacker = state.to_play
    for i, move in enumerate(line[:-1]):
        board.push(move)
        if i % 2 == 1 and board.has_four(1 - attacker):
            return True
    del game
    return False


def _blocked_by_foul(state: GomokuState, line) -> bool:
    """Is one of the defender's forced replies on the line a forbidden point (renju)?"""
    for i, move in enumerate(line[:-1]):
        if i % 2 == 1 and state.foul(move) is not None:
            return True
        state = state.play(move)
    return False


def _tactical_game(game, rng: random.Random, plies: int) -> list[GomokuState]:
    state = game.initial_state()
    centre = (game.height // 2) * game.width + game.width // 2
    states = []
    for _ in range(plies):
        if state.outcome() is not None:
            break
        board = GomokuSearchBoard.from_state(state)
        ordered = [m for m, _ in board.ordered_moves()] or [centre]
        move = rng.choice(ordered[:4]) if rng.random() < 0.8 else rng.choice(
            [m for m in board.candidates if state.is_legal(m)] or [centre])
        state = state.play(move)
        states.append(state)
    return states


WANTED = {  # (size, rule, kind) -> how many
    **{(size, rule, "vcf"): 9 for size in (15, 20) for rule in ("freestyle", "standard")},
    **{(size, rule, "vcf-counter"): 2 for size in (15, 20) for rule in ("freestyle", "standard")},
    **{(15, rule, "refute"): 3 for rule in ("freestyle", "standard")},
    **{(20, rule, "refute"): 2 for rule in ("freestyle", "standard")},
    **{(size, "freestyle", "counter"): 1 for size in (15, 20)},
}
WANTED_RULES = {
    (15, "renju", "vcf"): 14, (15, "renju", "vcf-counter"): 2, (15, "renju", "vcf-foul"): 3,
    (15, "renju", "refute"): 4, (15, "caro", "vcf"): 8, (15, "caro", "vcf-counter"): 1, (15, "caro", "refute"): 3,
}


def main(seed: int = 20261123, max_seconds: float = 900.0, wanted: dict = WANTED, out: Path = OUT) -> int:
    rng = random.Random(seed)
    started = time.monotonic()
    boards = sorted({(size, rule) for size, rule, _ in wanted})
    found: dict[tuple, list[str]] = {k: [] for k in wanted}
    solvers: dict[tuple[int, str], ThreatSolver] = {}
    for attempt in range(4000):
        if all(len(found[k]) >= n for k, n in wanted.items()):
            break
        size, rule = rng.choice(boards)
        game = get_game("gomoku", width=size, rule=rule)
        solver = solvers.setdefault((size, rule), ThreatSolver(game))
        for state in _tactical_game(game, rng, rng.randint(10, 40)):
            if state.outcome() is not None:
                break
            board = GomokuSearchBoard.from_state(state)
            if board.has_four(0) or board.has_four(1):
                continue
            result = solver.vcf(state, nodes=20_000)
            if result.line is not None:
                plies = len(result.line)
                kind = "vcf-counter" if _has_counter_four(state, result.line) else "vcf"
                if _blocked_by_foul(state, result.line):
                    kind = "vcf-foul"
                key = (size, rule, kind)
                # spread the proof lengths: at most two positions per length and class
                if (key in found and len(found[key]) < wanted[key] and 3 <= plies <= 15
                        and sum(1 for text in found[key] if f"; {plies} ;" in text) < 3):
                    found[key].append(_line(state, kind, plies, ()))
                continue
            defence = solver.defences(state, nodes=50_000)
            if defence.threat is None or not defence.refutations or not defence.complete:
                continue
            everyone = board.ranked(board.candidates)
            tempting = [m for m in everyone if m not in defence.refutations][:3]
            if not tempting:
                continue
            fours = board.four_cells(state.to_play)
            kind = "counter" if defence.refutations <= fours else "refute"
            key = (size, rule, kind)
            if key in found and len(found[key]) < wanted[key]:
                found[key].append(_line(state, kind, len(defence.threat), tempting))
        print(attempt, {k: len(v) for k, v in found.items() if len(v) < wanted[k]}, file=sys.stderr)
        _write(wanted, found, out)
        if time.monotonic() - started > max_seconds:
            break
    print(f"wrote {sum(len(v) for v in found.values())} positions to {out}")
    return 0


def _write(wanted, found, out: Path) -> None:
    lines = [HEADER]
    for key in wanted:
        for n, text in enumerate(found[key]):
            size, rule, kind = key
            lines.append(f"{kind}-{size}-{rule}-{n} ; {text}\n")
    out.write_text("".join(lines))


def _line(state: GomokuState, kind: str, plies: int, moves) -> str:
    game = state.game
    xs = [c for c, v in enumerate(state.cells) if v == 1]
    os_ = [c for c, v in enumerate(state.cells) if v == 2]
    return (f"{game.width}x{game.height} {game.rule} ; {_cells(game, xs)} ; {_cells(game, os_)} ; "
            f"{kind} ; {plies} ; {_cells(game, moves)}")


if __name__ == "__main__":
    if sys.argv[1:] == ["rules"]:
        sys.exit(main(seed=20261127, wanted=WANTED_RULES, out=DATA_DIR / "vcf_positions_rules.txt"))
    sys.exit(main())
