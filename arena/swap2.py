"""The swap2 opening between two Gomocup brains (`arena run --swap2`), as Gomocup's manager
runs it: SWAP2BOARD to the proposer (no stones: it places three), then to the chooser (three
stones: SWAP to take black, one stone to stay white and play it, two to hand the choice back),
then, after two more stones, to the proposer again (SWAP to take black, or white's sixth).
The brain asked always holds white tentatively (the side to move): SWAP takes black.

The job's first engine proposes, its second chooses; the pair's other game swaps them, so each
engine proposes once a pair.  The colours that come out decide the record's first (black) and
second.  Each request is timed and charged to its engine's clock like a move; a bad answer
(wrong count, an occupied or illegal cell, a five) loses the game for the engine that gave it.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Sequence

from arena.clock import Clock
from arena.engines import EngineFault
from engine.games import IllegalMoveError

__all__ = ["Swap2Result", "Swap2Fault", "play_swap2"]

PROPOSER, CHOOSER = 0, 1


class Swap2Fault(Exception):
    """An engine lost the game in the opening: `side` (PROPOSER / CHOOSER), `reason`."""

    def __init__(self, side: int, reason: str):
        super().__init__(reason)
        self.side, self.reason = side, reason


@dataclass
class Swap2Result:
    """black: PROPOSER or CHOOSER.  stones: the cells placed as the opening (three or five).
    move: white's stone chosen with a stay (the fourth or sixth), the game's first move,
    played in `move_time` seconds; None after a SWAP."""
    black: int
    stones: list[int]
    move: int | None = None
    move_time: float = 0.0


def play_swap2(game: Any, players: Sequence[Any], clocks: Sequence[Clock]) -> Swap2Result:
    """The dialogue; raises Swap2Fault when an engine fails or answers wrongly."""
    three, _ = _ask(game, players, clocks, PROPOSER, [], want=(3,))
    assert three is not None
    reply, spent = _ask(game, players, clocks, CHOOSER, three, want=(1, 2))
    if reply is None:
        return Swap2Result(black=CHOOSER, stones=three)
    if len(reply) == 1:
        return Swap2Result(black=PROPOSER, stones=three, move=reply[0], move_time=spent)
    five = three + reply
    decision, spent = _ask(game, players, clocks, PROPOSER, five, want=(1,))
    if decision is None:
        return Swap2Result(black=PROPOSER, stones=five)
    return Swap2Result(black=CHOOSER, stones=five, move=decision[0], move_time=spent)


def _ask(game: Any, players: Sequence[Any], clocks: Sequence[Clock], side: int, stones: list[int],
         want: tuple[int, ...]) -> tuple[list[int] | None, float]:
    """SWAP2BOARD to `side`: its stones (None: SWAP, allowed once stones are down), and its time."""
    clock = clocks[side]
    deadline = clock.deadline()
    begin = time.monotonic()
    try:
        answer = players[side].swap2([game.coords(cell) for cell in stones], clock, deadline)
    except EngineFault as fault:
        raise Swap2Fault(side, f"{fault.reason}" + (f" ({fault.detail})" if fault.detail else "")) from None
    elapsed = time.monotonic() - begin
    if not clock.charge(elapsed):
        raise Swap2Fault(side, f"time forfeit ({elapsed:.3f} s > {deadline:.3f} s)")
    if answer is None:
        if not stones:
            raise Swap2Fault(side, "bad swap2 answer (SWAP with no stones to choose from)")
        return None, elapsed
    if len(answer) not in want:
        raise Swap2Fault(side, f"bad swap2 answer ({len(answer)} stones, expected {' or '.join(map(str, want))})")
    state = game.state_from_moves(list(stones))
    cells = []
    for x, y in answer:
        try:
            cell = game.parse_move(state, f"{x},{y}")   # off the board, occupied, a foul
            state = state.play(cell)
        except IllegalMoveError as exc:
            raise Swap2Fault(side, f"bad swap2 answer ({exc})") from None
        if state.outcome() is not None:
            raise Swap2Fault(side, f"bad swap2 answer ({x},{y} ends the game in the opening)")
        cells.append(cell)
    return cells, elapsed
