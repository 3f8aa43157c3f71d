"""A tournament's openings, asked of the game's own book (engine.games.openings: chess reads
EPD / PGN suites, gomoku stone lists or seeded random openings, a game without a book starts
every game from its initial position).  Every opening is played twice, colours swapped."""
from __future__ import annotations

from typing import Any, Sequence

from engine.games import game_profile
from engine.games.openings import Opening, OpeningError, pick_opening

__all__ = ["Opening", "OpeningError", "suite_for", "opening_for", "start_position"]


def suite_for(game: str, path: str | None, boards: Sequence[int], rule: str) -> list[Opening] | None:
    """The suite of `path` for `game` (None: the game's default; None back: generated per pair).
    Raises OpeningError."""
    return game_profile(game).openings().load(path, boards, rule)


def opening_for(game: str, openings: Sequence[Opening] | None, seed: int, index: int,
                plies: int | None = None) -> Opening:
    """The opening of pair `index`: from the suite (order shuffled by seed), else generated."""
    if openings:
        return pick_opening(openings, seed, index)
    return game_profile(game).openings().generate(seed, index, plies)


def start_position(game: Any, opening: Opening) -> tuple[Any, list[Any]]:
    """(start state, the opening's moves) of `opening` on `game`; OpeningError if it does not fit."""
    return game_profile(game.name).openings().start(game, opening)
