"""Chess openings: EPD (one position a line) and PGN (mainlines) suites, the built-in
suite (openings.epd: about 36 common openings, 8-10 plies deep) the arena and the teachers
use when none is given, and the named suite `chess960`: the 960 Chess960 start positions.
A suite's position whose castling rights only Chess960 has is played as a Chess960 game."""
from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Any, Sequence

import chess
import chess.pgn

from engine.games.base import GameSetupError, IllegalMoveError
from engine.games.chess.rules import CHESS960, board_from_fen_or_epd, chess960_start, needs_chess960
from engine.games.openings import Opening, OpeningBook, OpeningError

__all__ = ["ChessOpenings", "builtin_suite", "chess960_suite", "CHESS960_SUITE"]

CHESS960_SUITE = "chess960"    # `arena run --openings chess960`


def _epd_openings(text: str, source: str) -> list[Opening]:
    out: list[Opening] = []
    for number, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith(("#", ";")):
            continue
        try:
            board, ops = board_from_fen_or_epd(line)
        except ValueError as exc:
            raise OpeningError(f"{source}:{number}: bad EPD: {exc}") from None
        if not board.is_valid():
            raise OpeningError(f"{source}:{number}: invalid position ({board.status()!r})")
        name = str(ops.get("id", f"{Path(source).name}:{number}"))
        out.append(Opening(name=name, fen=board.fen(shredder=board.chess960)))
    return out


def _pgn_openings(path: str) -> list[Opening]:
    out: list[Opening] = []
    with open(path, encoding="utf-8", errors="replace") as handle:
        while True:
            game = chess.pgn.read_game(handle)
            if game is None:
                break
            if game.errors:
                raise OpeningError(f"{path}: game {len(out) + 1}: {game.errors[0]}")
            board = game.board()
            if not board.is_valid():
                raise OpeningError(f"{path}: game {len(out) + 1}: invalid start position")
            moves = tuple(m.uci() for m in game.mainline_moves())
            name = game.headers.get("Opening") or game.headers.get("Event") or f"pgn {len(out) + 1}"
            out.append(Opening(name=name, fen=board.fen(shredder=board.chess960), moves=moves))
    return out


def builtin_suite() -> list[Opening]:
    """The shipped suite (openings.epd beside this module)."""
    text = (resources.files("engine.games.chess") / "openings.epd").read_text(encoding="utf-8")
    return _epd_openings(text, "openings.epd")


def chess960_suite() -> list[Opening]:
    """The 960 Chess960 start positions (Shredder-FEN castling, so each reads as Chess960
    wherever it is stored; number 518 is standard chess and plays as such)."""
    return [Opening(name=f"chess960 #{number}", fen=chess960_start(number).fen(shredder=True))
            for number in range(960)]


def read_suite(path: str) -> list[Opening]:
    """EPD or PGN (by the suffix) -> openings; OpeningError with the file and line."""
    try:
        openings = _pgn_openings(path) if path.lower().endswith(".pgn") else \
            _epd_openings(Path(path).read_text(encoding="utf-8"), path)
    except OSError as exc:
        raise OpeningError(f"cannot read {path!r}: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise OpeningError(f"{path}: not text ({exc.reason})") from None
    if not openings:
        raise OpeningError(f"{path}: no openings found")
    return openings


class ChessOpenings(OpeningBook):
    """Suites of positions (and moves after them); chess always plays from one, so it never
    generates an opening."""

    named_suites = (CHESS960_SUITE,)

    def load(self, path: str | None, boards: Sequence[int], rule: str) -> list[Opening]:
        if path == CHESS960_SUITE:
            return chess960_suite()
        return builtin_suite() if path is None else read_suite(path)

    def start(self, game: Any, opening: Opening) -> tuple[Any, list[Any]]:
        """On `game`, or on Chess960 when the opening's castling rights need it."""
        fen = opening.fen or "startpos"
        if fen != "startpos" and needs_chess960(fen):
            game = CHESS960
        try:
            start = state = game.state_from_fen(fen)
            moves = []
            for text in opening.moves:
                moves.append(game.parse_move(state, text))
                state = state.play(moves[-1])
        except (GameSetupError, IllegalMoveError) as exc:
            raise OpeningError(f"opening {opening.name!r}: {exc}") from None
        return start, moves

    def teacher_starts(self, path: str | None) -> dict[str, Any]:
        """The teacher's start positions as FENs (its openings); None: the built-in suite."""
        suite = builtin_suite() if path is None else read_suite(path)
        fens = []
        for opening in suite:
            fen = opening.fen or chess.STARTING_FEN
            board = chess.Board(fen, chess960=needs_chess960(fen))
            for text in opening.moves:
                board.push_uci(text)
            fens.append(board.fen(shredder=board.chess960))
        return {"openings": tuple(fens)}
