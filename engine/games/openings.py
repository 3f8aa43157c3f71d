"""Openings, whatever the game: the value a tournament pair starts from, and what a game's
package says about its openings (`OpeningBook`).

A match plays every opening twice with colours swapped, so an unbalanced opening costs noise,
not bias.  Each game's profile names its book (chess: EPD / PGN suites, a built-in one; gomoku:
stone lists relative to the centre and seeded random openings); a game that names none (the
toy game of the tests) plays every game from its initial position.  The arena and the teachers
ask only this interface, never a game's name.
"""
from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any, Sequence

__all__ = ["Opening", "OpeningError", "OpeningBook", "pick_opening"]


class OpeningError(ValueError):
    """An opening file that cannot be read, or an opening that does not fit the board or rules."""


@dataclass(frozen=True)
class Opening:
    """Where a game starts.  fen + moves (the game's move notation) for games with a position
    text (chess); stones (dx, dy relative to the centre) for board-size-free gomoku openings;
    all empty: the initial position."""
    name: str
    fen: str | None = None
    moves: tuple[str, ...] = ()
    stones: tuple[tuple[int, int], ...] = ()

    def describe(self) -> str:
        if self.stones:
            return " ".join(f"{dx},{dy}" for dx, dy in self.stones)
        if self.fen is None and not self.moves:
            return "initial position"
        return f"{self.fen or 'startpos'} moves {' '.join(self.moves)}" if self.moves else str(self.fen)


class OpeningBook:
    """What the arena and the teachers ask of a game's openings.  This base is a game without
    opening suites: every game starts from the initial position."""

    named_suites: tuple[str, ...] = ()   # built-in suites `load` takes by name in place of a file

    def load(self, path: str | None, boards: Sequence[int], rule: str) -> list[Opening] | None:
        """The suite in `path` (None: the game's built-in suite, or None when the game generates
        an opening per pair instead); OpeningError on a file that cannot be used."""
        if path is not None:
            raise OpeningError(f"this game takes no opening files (got {path!r})")
        return None

    def generate(self, seed: int, index: int, plies: int | None) -> Opening:
        """The opening of pair `index` when there is no suite (seeded: reruns play the same)."""
        return Opening(name="initial position")

    def start(self, game: Any, opening: Opening) -> tuple[Any, list[Any]]:
        """(initial state, the opening's moves in order) for `game`; OpeningError if it does not fit."""
        return game.initial_state(), []

    def teacher_starts(self, path: str | None) -> dict[str, Any]:
        """TeacherConfig fields for a teacher run started from `path` (None: the default)."""
        if path is not None:
            raise OpeningError(f"this game takes no opening files (got {path!r})")
        return {}


def pick_opening(openings: Sequence[Opening], seed: int, index: int) -> Opening:
    """The opening of pair `index` from a suite, its order shuffled by `seed`."""
    order = list(range(len(openings)))
    random.Random(f"openings:{seed}").shuffle(order)
    return openings[order[index % len(order)]]
