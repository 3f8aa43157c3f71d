"""Generate tests/data/renju_fouls.txt: black-to-move renju positions and black's forbidden
points as another engine reports them (Rapfi's `YXSHOWFORBID`), for the referee test.

Positions come from seeded random boards with black's stones crowded into a small square
(so threes and fours cross and fouls appear) and white's scattered around them; a board
where either side already has five is dropped.  Rapfi (public repository dhbloo/rapfi, built
outside the tree as the README says) is given each board with `YXBOARD` in move order under
`INFO rule 4` and asked for the forbidden points.  Positions where a one-level check (threes
counted without asking whether their extension point is itself forbidden) disagrees with
Rapfi are marked `recursive`: those are the tricky ones to look at by hand.

Run: python benchmarks/make_renju_fouls.py /path/to/pbrain-rapfi [count]
"""
from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

from engine.games.gomoku import GomokuGame
from engine.games import renju

OUT = Path(__file__).resolve().parent.parent / "tests" / "data" / "renju_fouls.txt"
HEADER = """\
# Renju forbidden points for tests/test_renju.py (made by benchmarks/make_renju_fouls.py with
# Rapfi's YXSHOWFORBID under INFO rule 4; nothing here comes from our own detector).
# One position per line, fields separated by ";":
#   id ; 15x15 ; black stones ; white stones ; forbidden points ; tags
# Black to move (as many black as white stones).  Cells are "x,y"; forbidden points are
# black's, in any order ("-" for none).  tags: "recursive" where a one-level three count
# gets this position wrong (the points that need the recursive check).
"""


def random_board(game: GomokuGame, rng: random.Random) -> tuple[list[int], list[int]] | None:
    """Black crowded into a small square, white around it; None when someone has five."""
    size = rng.choice((6, 7, 8))
    x0, y0 = rng.randrange(0, game.width - size + 1), rng.randrange(0, game.height - size + 1)
    square = [game.index(x0 + dx, y0 + dy) for dx in range(size) for dy in range(size)]
    black = rng.sample(square, rng.randrange(7, min(20, len(square) // 2)))
    free = [c for c in range(game.width * game.height) if c not in set(black)]
    near = [c for c in free if c in set(square)]
    whites = rng.randrange(max(1, len(black) // 3), len(black) // 2 + 2)
    white = rng.sample(near, min(whites, len(near)))
    rest = [c for c in free if c not in set(white)]
    white += rng.sample(rest, len(black) - len(white))
    cells = bytearray(game.width * game.height)
    for c in black:
        cells[c] = 1
    for c in white:
        cells[c] = 2
    freestyle = GomokuGame(game.width, game.height)   # five or more, either side
    if any(freestyle.makes_five(bytes(cells), c) for c in black + white):
        return None
    return black, white


class Rapfi:
    def __init__(self, command: str):
        self.proc = subprocess.Popen([command], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, text=True, bufsize=1)
        self.send("START 15")
        self.expect("OK")
        self.send("INFO rule 4")

    def send(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + "\n")

    def expect(self, prefix: str) -> str:
        assert self.proc.stdout is not None
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError("rapfi exited")
            if line.startswith(prefix):
                return line.strip()

    def forbidden(self, game: GomokuGame, black: list[int], white: list[int]) -> list[int]:
        self.send("YXBOARD")
        for b, w in zip(black, white):
            self.send("%d,%d,1" % game.coords(b))
            self.send("%d,%d,2" % game.coords(w))
        self.send("DONE")
        self.send("YXSHOWFORBID")
        text = self.expect("FORBID").split(" ", 1)[1].rstrip(".")
        return sorted(game.index(int(text[i:i + 2]), int(text[i + 2:i + 4])) for i in range(0, len(text), 4))

    def close(self) -> None:
        self.send("END")
        self.proc.wait(timeout=5)


def one_level(game: GomokuGame, black: list[int], white: list[int]) -> list[int]:
    """The forbidden points when no three's extension point is checked (depth cap 0)."""
    saved = renju.MAX_DEPTH
    renju.MAX_DEPTH = 0
    try:
        return game.state_from_stones(black, white).forbidden_points()
    finally:
        renju.MAX_DEPTH = saved


def main() -> None:
    command, count = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 240
    game = GomokuGame(15, rule="renju")
    rng = random.Random(2027)
    rapfi = Rapfi(command)
    lines, with_fouls, recursive = [], 0, 0
    while len(lines) < count:
        board = random_board(game, rng)
        if board is None:
            continue
        black, white = board
        points = rapfi.forbidden(game, black, white)
        if not points and rng.random() < 0.85:   # mostly positions that have fouls
            continue
        tags = "recursive" if one_level(game, black, white) != points else ""
        with_fouls += bool(points)
        recursive += bool(tags)
        cells = lambda cs: " ".join("%d,%d" % game.coords(c) for c in cs)  # noqa: E731
        lines.append(f"{len(lines) + 1};15x15;{cells(black)};{cells(white)};{cells(points) or '-'};{tags}")
    rapfi.close()
    OUT.write_text(HEADER + "\n".join(lines) + "\n")
    print(f"{len(lines)} positions ({with_fouls} with forbidden points, {recursive} recursive) -> {OUT}")


if __name__ == "__main__":
    main()
