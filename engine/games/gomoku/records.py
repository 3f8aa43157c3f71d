"""Gomoku records: piskvork's .psq blocks (what Gomocup tools and `engine teacher --openings`
read back, psq.py) and the report viewer's grid."""
from __future__ import annotations

from typing import Any

from engine.games.records import PlayedGame, RecordFormat, move_note

__all__ = ["GomokuRecords"]


def _size(record: PlayedGame) -> tuple[int, int]:
    w, _, h = record.board.partition("x")
    return int(w), int(h or w)


class GomokuRecords(RecordFormat):
    """.psq: header `Piskvorky WxH, 11:11, 0`, then `x,y,ms` a move with 1-based coordinates,
    then the players, the result, the opening and the rule, a blank line after the game."""
    suffix = ".psq"
    colours = ("Black", "White")

    def game_text(self, record: PlayedGame) -> str:
        width, height = _size(record)
        lines = [f"Piskvorky {width}x{height}, 11:11, 0"]
        for ply, text in enumerate(record.moves):
            x, y = (int(v) for v in text.split(","))
            note = move_note(record, ply)
            lines.append(f"{x + 1},{y + 1},{int(1000 * note['seconds']) if note else 0}")
        lines += [f"Black: {record.first}", f"White: {record.second}",
                  f"Result: {record.result_text} ({record.reason})", f"Opening: {record.opening}",
                  f"Rule: {record.rule}", ""]
        return "\n".join(lines) + "\n"

    def viewer(self, record: PlayedGame) -> dict[str, Any]:
        width, height = _size(record)
        return dict(super().viewer(record), width=width, height=height, draw="grid")
