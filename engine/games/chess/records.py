"""Chess records: PGN with each engine move's score, depth and time as a comment, and the
report viewer's frames (the board after each move, SAN texts)."""
from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

import re

import chess
import chess.pgn
import chess.svg

from engine.games.chess.rules import needs_chess960
from engine.games.records import PlayedGame, RecordFormat, move_note

__all__ = ["ChessRecords", "pgn_game"]


def _comment(record: PlayedGame, ply: int) -> str:
    note = move_note(record, ply)
    if note is None:
        return ""
    parts = [f"{note['seconds']:.3f}s"]
    if "mate" in note:
        parts.insert(0, f"#{note['mate']}")
    elif "cp" in note:
        parts.insert(0, f"{note['cp'] / 100:+.2f}")
    if "depth" in note:
        parts.append(f"d{note['depth']}")
    return " ".join(parts)


def _start(record: PlayedGame) -> chess.Board:
    """The game's start; a Chess960 one when its castling rights need it (the PGN then
    says `Variant "Chess960"` and its castling moves read king-takes-rook)."""
    if not record.start_fen:
        return chess.Board()
    return chess.Board(record.start_fen, chess960=needs_chess960(record.start_fen))


def pgn_game(record: PlayedGame, round_number: int | None = None) -> chess.pgn.Game:
    """The record as a python-chess game, headers and move comments included."""
    board = _start(record)
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


class ChessRecords(RecordFormat):
    suffix = ".pgn"
    colours = ("White", "Black")

    def game_text(self, record: PlayedGame) -> str:
        return f"{pgn_game(record)}\n\n"

    def board_assets(self) -> str:
        """The empty board (with coordinates) and the piece glyphs as <defs>, from python-chess,
        with a layer for the last-move highlight under the pieces' layer: the viewer places
        pieces per ply (one full SVG per position would cost ~20 kB each).  White at the bottom."""
        board = chess.svg.board(chess.Board(None), size=400, coordinates=True)
        board = re.sub(r"<desc>.*?</desc>", "", board, flags=re.S)     # a text diagram of the empty board
        glyphs = "".join(re.sub(r"^<svg[^>]*>|</svg>$", "", chess.svg.piece(chess.Piece.from_symbol(s)))
                         for s in "PNBRQKpnbrqk")
        board = board.replace("<defs />", f"<defs>{glyphs}</defs>", 1)
        return board.replace("</svg>", '<g id="lastmove"></g><g id="pieces"></g></svg>')

    def viewer(self, record: PlayedGame) -> dict[str, Any]:
        board = _start(record)
        frames, sans, labels, moves = [board.board_fen()], [], [], []
        for k, text in enumerate(record.moves):
            move = chess.Move.from_uci(text)
            if move not in board.legal_moves:          # never stored by the referee; guard old data
                break
            n = board.fullmove_number
            labels.append(f"{n}." if board.turn == chess.WHITE else (f"{n}..." if k == 0 else ""))
            sans.append(board.san(move))
            moves.append(text)
            board.push(move)
            frames.append(board.board_fen())
        return {"moves": moves, "frames": frames, "texts": sans, "sans": sans, "labels": labels,
                "pgn": str(pgn_game(record)), "colors": list(self.colours), "draw": "chessboard"}
