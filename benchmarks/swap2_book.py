"""Swap2: the three-stone openings a strong Gomocup brain (Rapfi) judges most even, for the book
the brain proposes from (engine/games/gomoku/swap2_book.py).

    python benchmarks/swap2_book.py --brain /path/to/pbrain-rapfi --rule freestyle --board 15 \
        [--screen-nodes 500000] [--finalists 40] [--nodes 8000000] [--keep 16] [--out judged.csv]

Every opening with black's first stone in the centre, white's within three cells of it and
black's second within four (one of each set of mirror images: 495 shapes) is searched by the
brain at `--screen-nodes` with white to move; the `--finalists` nearest to even are searched
again at `--nodes`, and the `--keep` nearest to even then are printed as the book's lines, each
with the brain's win rate for white.  A node cap, not a clock: the judgement is the same on a busy
machine.  Why a book: the proposer's old candidates (within two cells) are nearly all black's by
Rapfi's reading, so the one our search found "most even" was one the opponent took black on
(docs/measurements/swap2.md).
"""
from __future__ import annotations

import argparse
import csv

from engine.games import get_game
from engine.games.gomoku.swap2 import Shape, symmetries
from engine.train.teacher import TeacherConfig
from protocols.gomocup_teacher import gomocup_teacher


def candidate_shapes(white_reach: int = 3, black_reach: int = 4) -> list[Shape]:
    """(dx, dy) of black, white, black about the centre, one of each set of mirror images."""
    seen = set()
    for wx in range(-white_reach, white_reach + 1):
        for wy in range(-white_reach, white_reach + 1):
            for bx in range(-black_reach, black_reach + 1):
                for by in range(-black_reach, black_reach + 1):
                    if (wx, wy) != (0, 0) and (bx, by) not in ((0, 0), (wx, wy)):
                        seen.add(min((turn((wx, wy)), turn((bx, by))) for turn in symmetries()))
    return [((0, 0), white, black) for white, black in sorted(seen)]


def judge(teach, game, shapes: list[Shape]) -> list[tuple[float, Shape]]:
    """The brain's win rate for white to move after each shape's three stones."""
    c = game.width // 2
    judged = []
    for index, shape in enumerate(shapes):
        state = game.state_from_moves([game.index(c + dx, c + dy) for dx, dy in shape])
        advice = teach(state, index)
        if advice.wdl is None:
            raise SystemExit("the brain printed no evaluation (Rapfi's `Eval` in its MESSAGE lines)")
        judged.append((float(advice.wdl[0]), shape))
    return judged


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--brain", required=True, help="the judge: a Gomocup brain that prints Eval (Rapfi)")
    parser.add_argument("--rule", default="freestyle", choices=["freestyle", "standard", "renju"])
    parser.add_argument("--board", type=int, default=15)
    parser.add_argument("--screen-nodes", type=int, default=500_000)
    parser.add_argument("--finalists", type=int, default=40)
    parser.add_argument("--nodes", type=int, default=8_000_000)
    parser.add_argument("--keep", type=int, default=16)
    parser.add_argument("--out", help="write every judgement here (CSV: stage, shape, white's win rate)")
    args = parser.parse_args()
    game = get_game("gomoku", width=args.board, height=args.board, rule=args.rule)
    rows = []
    teach, close = gomocup_teacher(TeacherConfig(depth=None, nodes=args.screen_nodes, gomocup=(args.brain,)))
    try:
        screened = judge(teach, game, candidate_shapes())
    finally:
        close()
    rows += [("screen", shape, win) for win, shape in screened]
    finalists = [shape for _, shape in sorted(screened, key=lambda judged: abs(judged[0] - 0.5))[:args.finalists]]
    teach, close = gomocup_teacher(TeacherConfig(depth=None, nodes=args.nodes, gomocup=(args.brain,)))
    try:
        final = judge(teach, game, finalists)
    finally:
        close()
    rows += [("final", shape, win) for win, shape in final]
    if args.out:
        with open(args.out, "w", newline="") as handle:
            out = csv.writer(handle)
            out.writerow(["stage", "shape", "white_win_rate"])
            out.writerows((stage, str(shape), f"{win:.4f}") for stage, shape, win in rows)
    print(f"# {args.rule} {args.board}x{args.board}: {len(screened)} shapes at {args.screen_nodes} nodes, "
          f"{len(final)} again at {args.nodes}")
    for win, shape in sorted(final, key=lambda judged: abs(judged[0] - 0.5))[:args.keep]:
        print(f"    ({shape}, {win:.3f}),")


if __name__ == "__main__":
    main()
