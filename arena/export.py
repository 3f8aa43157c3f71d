"""Game exports: PGN for chess (python-chess), piskvork-style move lists for gomoku,
CSV and JSON of results.  Pure functions of stored records."""
from __future__ import annotations

import csv
import io
import json
from dataclasses import asdict
from datetime import datetime, timezone
from typing import Sequence

import chess
import chess.pgn

from arena.records import GameRecord

__all__ = ["pgn_text", "gomoku_text", "games_text", "csv_text", "json_text", "record_board"]


def _comment(record: GameRecord, ply: int) -> str:
    i = ply - record.opening_plies
    if i < 0 or i >= len(record.times):
        return ""
    parts = [f"{record.times[i]:.3f}s"]
    info = record.infos[i] if i < len(record.infos) else {}
    if "mate" in info:
        parts.insert(0, f"#{info['mate']}")
    elif "cp" in info:
        parts.insert(0, f"{info['cp'] / 100:+.2f}")
    if "depth" in info:
        parts.append(f"d{info['depth']}")
    return " ".join(parts)


def pgn_game(record: GameRecord, round_number: int | None = None) -> chess.pgn.Game:
    board = chess.Board(record.start_fen) if record.start_fen else chess.Board()
    game = chess.pgn.Game()
    if record.start_fen and record.start_fen != chess.STARTING_FEN:
        game.setup(board)
    date = datetime.fromtimestamp(record.started or 0, tz=timezone.utc)
    game.headers.update({
        "Event": "PlyZero arena", "Site": "local", "Date": date.strftime("%Y.%m.%d"),
        "Round": str(round_number if round_number is not None else record.seq + 1),
        "White": record.first, "Black": record.second, "Result": record.result_text,
        "Opening": record.opening_name, "Termination": record.reason,
    })
    node: chess.pgn.GameNode = game
    for ply, text in enumerate(record.moves):
        move = chess.Move.from_uci(text)
        if move not in board.legal_moves:  # never stored by the referee; guard old data
            break
        node = node.add_variation(move, comment=_comment(record, ply))
        board.push(move)
    return game


def pgn_text(records: Sequence[GameRecord]) -> str:
    out = io.StringIO()
    for r in records:
        if r.game == "chess":
            print(pgn_game(r), file=out, end="\n\n")
    return out.getvalue()


def gomoku_text(records: Sequence[GameRecord]) -> str:
    """piskvork .psq-like blocks: header `Piskvorky WxH, 11:11, 0`, then `x,y,ms` with 1-based
    coordinates (piskvork's), then the players, the result and the opening, a blank line between games."""
    lines: list[str] = []
    for r in records:
        if r.game != "gomoku":
            continue
        lines.append(f"Piskvorky {r.board}, 11:11, 0")
        for ply, text in enumerate(r.moves):
            x, y = (int(v) for v in text.split(","))
            i = ply - r.opening_plies
            ms = int(1000 * r.times[i]) if 0 <= i < len(r.times) else 0
            lines.append(f"{x + 1},{y + 1},{ms}")
        lines += [f"Black: {r.first}", f"White: {r.second}", f"Result: {r.result_text} ({r.reason})",
                  f"Opening: {r.opening}", f"Rule: {r.rule}", ""]
    return "\n".join(lines)


def games_text(records: Sequence[GameRecord]) -> str:
    """PGN for chess games followed by move lists for gomoku games."""
    return pgn_text(records) + gomoku_text(records)


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


def record_board(record: GameRecord) -> chess.Board:
    """The final chess position of a record."""
    board = chess.Board(record.start_fen) if record.start_fen else chess.Board()
    for text in record.moves:
        board.push_uci(text)
    return board
