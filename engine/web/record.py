"""A played game as a file: PGN for chess (python-chess writes it), a move list for gomoku.

The gomoku list is one `x,y` per line in Gomocup's coordinates (0-based, x the column: what
the board's edges show and what `engine gomocup` speaks), after `#` header lines.
"""
from __future__ import annotations

from datetime import datetime, timezone
from typing import Any, Sequence

from engine.games import board_view
from engine.games.base import Outcome
from engine.types import Move

__all__ = ["result_text", "game_record"]


def result_text(outcome: Outcome | None) -> str:
    """PGN's result token: 1-0, 0-1, 1/2-1/2, or * while the game goes on."""
    if outcome is None:
        return "*"
    return {0: "1-0", 1: "0-1", None: "1/2-1/2"}[outcome.winner]


def game_record(game: Any, start: Any, moves: Sequence[Move], names: tuple[str, str],
                outcome: Outcome | None) -> tuple[str, str]:
    """(file name, text) of the game played from `start` (a FEN's position or the initial
    one); names are the first and second player's."""
    stamp = datetime.now(tz=timezone.utc)
    suffix, text = board_view(game).game_record(game, start, moves, names, result_text(outcome),
                                                None if outcome is None else outcome.reason,
                                                stamp.strftime("%Y.%m.%d"))
    return f"plyzero-{stamp:%Y%m%d-%H%M%S}{suffix}", text
