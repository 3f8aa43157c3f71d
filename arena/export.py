"""Game exports: each game in its own record format (the game's RecordFormat: PGN for chess,
piskvork's .psq for gomoku), CSV and JSON of results.  Pure functions of stored records."""
from __future__ import annotations

import csv
import io
import json
from dataclasses import asdict
from typing import Sequence

from arena.records import GameRecord
from engine.games import game_profile

__all__ = ["games_text", "csv_text", "json_text"]


def games_text(records: Sequence[GameRecord]) -> str:
    """Every game in its game's record format, in order (one file can hold several games)."""
    formats = {name: game_profile(name).records() for name in {r.game for r in records}}
    return "".join(formats[r.game].game_text(r) for r in records)


_CSV = ("seq", "game", "board", "rule", "first", "second", "result", "score", "reason", "forfeit",
        "plies", "opening_name", "duration")


def csv_text(records: Sequence[GameRecord]) -> str:
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(_CSV)
    for r in records:
        writer.writerow([r.seq, r.game, r.board, r.rule, r.first, r.second, r.result_text, r.score,
                         r.reason, r.forfeit or "", len(r.moves), r.opening_name, r.duration])
    return out.getvalue()


def json_text(records: Sequence[GameRecord]) -> str:
    return json.dumps([dict(asdict(r), result=r.result_text) for r in records], indent=1)
