"""Results store: SQLite, one file per tournament (or several tournaments in one file).

Every finished game is one INSERT in its own transaction, committed before the next
game is booked, and the database runs in WAL mode: a `kill -9` of the arena loses
at most the games still being played.  `job_key` is UNIQUE, so a resumed run can
never store a game twice.  Only the driver writes; workers hand back records.
"""
from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path
from typing import Iterable

from arena.ratings import GameResult
from arena.records import GameRecord

__all__ = ["Store", "StoreError"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS tournaments (
    id INTEGER PRIMARY KEY,
    fingerprint TEXT UNIQUE NOT NULL,
    game TEXT NOT NULL,
    settings TEXT NOT NULL,
    created REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS players (
    tournament INTEGER NOT NULL REFERENCES tournaments(id),
    name TEXT NOT NULL,
    spec TEXT NOT NULL,
    PRIMARY KEY (tournament, name)
);
CREATE TABLE IF NOT EXISTS games (
    id INTEGER PRIMARY KEY,
    tournament INTEGER NOT NULL REFERENCES tournaments(id),
    job_key TEXT UNIQUE NOT NULL,
    seq INTEGER NOT NULL,
    pair INTEGER NOT NULL,
    game TEXT NOT NULL,
    board TEXT NOT NULL,
    rule TEXT NOT NULL,
    first TEXT NOT NULL,
    second TEXT NOT NULL,
    opening_name TEXT NOT NULL,
    opening TEXT NOT NULL,
    start_fen TEXT,
    moves TEXT NOT NULL,
    opening_plies INTEGER NOT NULL,
    score REAL NOT NULL,
    result TEXT NOT NULL,
    reason TEXT NOT NULL,
    forfeit TEXT,
    times TEXT NOT NULL,
    infos TEXT NOT NULL,
    started REAL NOT NULL,
    duration REAL NOT NULL
);
"""

_COLUMNS = ("job_key", "seq", "pair", "game", "board", "rule", "first", "second", "opening_name",
            "opening", "start_fen", "moves", "opening_plies", "score", "reason", "forfeit", "times",
            "infos", "started", "duration")


class StoreError(RuntimeError):
    """The database cannot be opened or is not an arena database."""


class Store:
    def __init__(self, path: str, *, create: bool = True):
        if not create and not Path(path).is_file():
            raise StoreError(f"no such database: {path}")
        try:
            self.conn = sqlite3.connect(path, timeout=30.0, isolation_level=None)
            self.conn.execute("PRAGMA journal_mode=WAL")
            self.conn.execute("PRAGMA synchronous=NORMAL")  # WAL + NORMAL: a process crash loses nothing committed
            if create:
                self.conn.executescript(_SCHEMA)
            else:
                self.conn.execute("SELECT 1 FROM games LIMIT 1")
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{path}: not an arena database ({exc})") from None
        self.path = path

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def tournament(self, fingerprint: str, game: str, settings: str,
                   players: Iterable[tuple[str, str]]) -> int:
        """Id of the tournament with this fingerprint, created (with its players) if new."""
        row = self.conn.execute("SELECT id FROM tournaments WHERE fingerprint = ?", (fingerprint,)).fetchone()
        if row:
            return int(row[0])
        with self.conn:
            self.conn.execute("BEGIN")
            cur = self.conn.execute(
                "INSERT INTO tournaments (fingerprint, game, settings, created) VALUES (?, ?, ?, ?)",
                (fingerprint, game, settings, time.time()))
            tid = int(cur.lastrowid or 0)
            self.conn.executemany("INSERT OR IGNORE INTO players VALUES (?, ?, ?)",
                                  [(tid, name, spec) for name, spec in players])
        return tid

    def finished_keys(self) -> set[str]:
        return {row[0] for row in self.conn.execute("SELECT job_key FROM games")}

    def add(self, tournament: int, record: GameRecord) -> bool:
        """Commit one finished game at once; False when its key was already stored."""
        values = [getattr(record, c) if c != "job_key" else record.key for c in _COLUMNS]
        for i, c in enumerate(_COLUMNS):
            if c in ("moves", "times", "infos"):
                values[i] = json.dumps(list(values[i]))
        with self.conn:
            self.conn.execute("BEGIN IMMEDIATE")
            cur = self.conn.execute(
                f"INSERT OR IGNORE INTO games (tournament, result, {', '.join(_COLUMNS)}) "
                f"VALUES (?, ?, {', '.join('?' * len(_COLUMNS))})",
                [tournament, record.result_text, *values])
        return cur.rowcount == 1

    def records(self, *, game: str | None = None) -> list[GameRecord]:
        query = f"SELECT {', '.join(_COLUMNS)} FROM games"
        args: tuple = ()
        if game is not None:
            query += " WHERE game = ?"
            args = (game,)
        out = []
        for row in self.conn.execute(query + " ORDER BY tournament, seq", args):
            data = dict(zip(_COLUMNS, row))
            data["key"] = data.pop("job_key")
            for c in ("moves", "times", "infos"):
                data[c] = tuple(json.loads(data[c]))
            out.append(GameRecord(**data))
        return out

    def results(self) -> list[GameResult]:
        return [GameResult(first, second, score, board, (tournament, pair))
                for first, second, score, board, tournament, pair in
                self.conn.execute("SELECT first, second, score, board, tournament, pair FROM games "
                                  "ORDER BY tournament, seq")]

    def players(self) -> list[str]:
        """Player names in the order they were declared (the first is the default anchor)."""
        names: list[str] = []
        for (name,) in self.conn.execute("SELECT name FROM players ORDER BY tournament, rowid"):
            if name not in names:
                names.append(name)
        return names

    def player_specs(self) -> dict[str, str]:
        return {name: spec for name, spec in self.conn.execute("SELECT name, spec FROM players")}

    def count(self) -> int:
        return int(self.conn.execute("SELECT COUNT(*) FROM games").fetchone()[0])
