"""How the web board (engine/web) shows chess: SAN labels, PGN records, a FEN set-up and
the board snapshot the page draws (play.js)."""
from __future__ import annotations

from typing import Any, Sequence

from engine.types import Move

COLOURS = ("White", "Black")


def move_label(state: Any, move: Move) -> str:
    return str(state.board.san(move))


def game_record(game: Any, start: Any, moves: Sequence[Move], names: tuple[str, str], result: str,
                reason: str | None, date: str) -> tuple[str, str]:
    """(file suffix, text): the game as PGN.  names: first and second player; result: PGN's
    token; reason: how it ended (None while it goes on); date: YYYY.MM.DD."""
    import chess.pgn
    board = start.board.copy(stack=False)
    for move in moves:
        board.push(move)
    pgn = chess.pgn.Game.from_board(board)
    pgn.headers.update({"Event": "PlyZero web board", "Site": "local", "Date": date, "Round": "-",
                        "White": names[0], "Black": names[1], "Result": result})
    if reason is not None:
        pgn.headers["Termination"] = reason
    return ".pgn", str(pgn) + "\n"


def position(game: Any, text: str) -> tuple[Any, list[Move]]:
    """Start state and set-up moves from a FEN (empty: the initial position), a Chess960 one
    when its castling rights need it (castling is then the king's move onto its rook);
    GameSetupError."""
    from engine.games.chess.rules import CHESS960, needs_chess960
    if text and needs_chess960(text):
        game = CHESS960
    return (game.state_from_fen(text) if text else game.initial_state()), []


def snapshot(game: Any, state: Any) -> dict[str, Any]:
    board = state.board
    king = board.king(board.turn) if board.is_check() else None
    return {"fen": board.fen(), "legal": [game.format_move(state, m) for m in state.legal_moves()],
            "check": None if king is None else "abcdefgh"[king % 8] + str(king // 8 + 1)}
