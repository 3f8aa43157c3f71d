"""The unit of work and its result: a GameJob in, a GameRecord out.

Both are plain frozen values (picklable), so a thread, a process pool or a Ray task
can run `referee.play_game(job)` and hand the record back to the driver, which alone
writes the store.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from arena.clock import MoveLimits
from arena.config import Adjudication, EngineSpec
from arena.openings import Opening

__all__ = ["GameJob", "GameRecord", "RESULT_TEXT"]

RESULT_TEXT = {1.0: "1-0", 0.0: "0-1", 0.5: "1/2-1/2"}


@dataclass(frozen=True)
class GameJob:
    """One scheduled game.  key: stable identity (resume skips finished keys).  seq: position in
    the schedule.  pair: opening-pair number (its two games share it, colours swapped)."""
    key: str
    seq: int
    pair: int
    game: str
    board: int | None              # gomoku square board size; None for chess
    rule: str
    first: EngineSpec              # moves first: White / black stones
    second: EngineSpec
    opening: Opening
    limits: MoveLimits
    adjudication: Adjudication = field(default_factory=Adjudication)
    swap2: bool = False            # gomoku: the engines place the opening (first proposes; arena/swap2.py)

    @property
    def board_label(self) -> str:
        return f"{self.board}x{self.board}" if self.board else ""


@dataclass(frozen=True)
class GameRecord:
    """A finished game.  score: points of the first player (1, 0.5, 0).  forfeit: the name of the
    engine that lost by a fault (crash, time, illegal move, protocol), else None.
    moves: every move from the start position in protocol text (UCI / Gomocup x,y), the
    opening's moves included; `opening_plies` of them came from the opening.
    times[i], infos[i]: seconds and engine info (depth/nodes/score) of move opening_plies + i."""
    key: str
    seq: int
    pair: int
    game: str
    board: str
    rule: str
    first: str
    second: str
    opening_name: str
    opening: str
    start_fen: str | None
    moves: tuple[str, ...]
    opening_plies: int
    score: float
    reason: str
    forfeit: str | None = None
    times: tuple[float, ...] = ()
    infos: tuple[dict[str, Any], ...] = ()
    started: float = 0.0
    duration: float = 0.0

    @property
    def result_text(self) -> str:
        return RESULT_TEXT[self.score]
