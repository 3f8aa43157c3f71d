"""Game records, whatever the game: what a played game carries (`PlayedGame`) and how a
game's package writes and shows it (`RecordFormat`).

The arena stores games as move texts in the game's own notation; writing them out (chess:
PGN, gomoku: piskvork's .psq) and the frames of the report's game viewer are game knowledge,
so each game's profile names its format.  This base writes any game as a commented move
list and shows it as a list of moves (the toy game of the tests uses it).
"""
from __future__ import annotations

from typing import Any, Protocol

__all__ = ["PlayedGame", "RecordFormat", "move_note"]


class PlayedGame(Protocol):
    """The fields of a finished game that record formats read (arena.records.GameRecord).
    moves: every move from the start position in the game's notation, the opening's first
    `opening_plies` of them; times[i], infos[i]: seconds and engine info of move opening_plies + i.
    Read-only, as a frozen record is."""
    @property
    def seq(self) -> int: ...
    @property
    def board(self) -> str: ...
    @property
    def rule(self) -> str: ...
    @property
    def first(self) -> str: ...
    @property
    def second(self) -> str: ...
    @property
    def opening_name(self) -> str: ...
    @property
    def opening(self) -> str: ...
    @property
    def start_fen(self) -> str | None: ...
    @property
    def moves(self) -> tuple[str, ...]: ...
    @property
    def opening_plies(self) -> int: ...
    @property
    def reason(self) -> str: ...
    @property
    def times(self) -> tuple[float, ...]: ...
    @property
    def infos(self) -> tuple[dict[str, Any], ...]: ...
    @property
    def started(self) -> float: ...
    @property
    def result_text(self) -> str: ...


def move_note(record: PlayedGame, ply: int) -> dict[str, Any] | None:
    """(seconds, engine info) of move `ply` when an engine played it, else None (opening)."""
    i = ply - record.opening_plies
    if i < 0 or i >= len(record.times):
        return None
    return dict(record.infos[i] if i < len(record.infos) else {}, seconds=record.times[i])


class RecordFormat:
    """How a played game is written to a file and drawn by the report's viewer.  This base:
    a plain move list (suffix .txt), the viewer listing the moves without a board."""
    suffix = ".txt"
    colours: tuple[str, str] = ("First", "Second")

    def game_text(self, record: PlayedGame) -> str:
        """One game as text in the game's record format (several games are concatenated)."""
        lines = [f"# {record.first} vs {record.second}: {record.result_text} ({record.reason})",
                 f"# Opening: {record.opening}", *record.moves, ""]
        return "\n".join(lines) + "\n"

    def board_assets(self) -> str:
        """SVG the viewer's board drawing needs once per page ('' for none)."""
        return ""

    def viewer(self, record: PlayedGame) -> dict[str, Any]:
        """What the report's viewer needs: texts[k] the move, labels[k] the number before it,
        colours, and `draw` naming the board drawing the page has for it (None: none)."""
        return {"moves": list(record.moves), "texts": list(record.moves),
                "labels": [str(k + 1) for k in range(len(record.moves))], "colors": list(self.colours),
                "draw": None}
