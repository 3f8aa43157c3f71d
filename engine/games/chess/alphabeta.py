"""Chess SearchBoard: a private python-chess board with an incremental PeSTO evaluation.

The hot path of the chess searcher lives here, so it trades a little elegance for
speed: the tapered evaluation (middlegame, endgame, phase) is updated per push from
precomputed tables instead of rescanning the board; the key is python-chess's tuple
of bitboards (~1 us, against ~20 us for a Zobrist hash); legal moves are generated
once per node, by rules.legal_move_list (in C when built; quiescence filters its captures
out of the same list); and rule_terminal() spares the search a "has any legal move?" test
per node, since an empty move list says the same.  Move generation was ~40 % of the time
under python-chess's generators (cProfile, bench depth 5); with the C lists `engine bench
--game chess --player alphabeta` went from ~50k to ~84k nodes/s, the same node count.
"""
from __future__ import annotations

from typing import Hashable

import chess

from engine.search.ab_board import TERMINAL_DRAW, TERMINAL_LOSS
from engine.games.chess.pst import PHASE_TOTAL, PHASE_WEIGHT, pst_tables
from engine.games.chess.native_search import NativeTree, kernel as native_kernel
from engine.games.chess.rules import legal_move_list
from engine.games.chess.wdl import wdl_per_mille

__all__ = ["ChessSearchBoard"]

_MG, _EG = pst_tables()
_BB_SQUARES = chess.BB_SQUARES
_PAWN, _KING, _QUEEN = chess.PAWN, chess.KING, chess.QUEEN
# Ordering scores: captures by MVV-LVA, then queen promotions, above any quiet move
# (the core adds history bonuses < 2**29 to quiet moves and ranks killers at 2**30).
_CAPTURE = 1 << 32
_PROMOTION = 1 << 31
_ORDER_VALUE = (0, 1, 3, 3, 5, 9, 20)


def _key(board: chess.Board) -> tuple[int, ...]:
    """python-chess's transposition key with -1 for "no en passant": hash(None) changes from
    run to run before Python 3.12, and with it the TT's collisions and the bench's node counts."""
    ep = board.ep_square
    if ep is not None and not board.has_legal_en_passant():
        ep = None
    return (board.pawns, board.knights, board.bishops, board.rooks, board.queens, board.kings,
            board.occupied_co[True], board.occupied_co[False], board.turn,
            board.clean_castling_rights(), -1 if ep is None else ep)


class ChessSearchBoard:
    """SearchBoard over python-chess (see engine/search/ab_board.py for the contract)."""

    __slots__ = ("board", "_evals")

    def __init__(self, board: chess.Board):
        self.board = board
        self._evals: list[tuple[int, int, int]] = [self._full_eval()]

    @classmethod
    def from_state(cls, state) -> "ChessSearchBoard":
        """A private copy of a ChessState's board, keeping the plies since the last
        irreversible move so the game's earlier positions count as repetitions."""
        board = state.board
        keep = min(board.halfmove_clock, len(board.move_stack))
        return cls(board.copy(stack=keep))

    def _full_eval(self) -> tuple[int, int, int]:
        mg = eg = phase = 0
        for square, piece in self.board.piece_map().items():
            index = piece.color * 7 + piece.piece_type
            mg += _MG[index][square]
            eg += _EG[index][square]
            phase += PHASE_WEIGHT[piece.piece_type]
        return mg, eg, phase

    # -- moves --------------------------------------------------------------------
    def push(self, move: chess.Move) -> None:
        board = self.board
        frm, to = move.from_square, move.to_square
        color = board.turn
        mine = 7 if color else 0
        theirs = 7 - mine
        piece = board.piece_type_at(frm)
        mg, eg, phase = self._evals[-1]
        index = mine + piece  # type: ignore[operator]
        mg_row, eg_row = _MG[index], _EG[index]
        mg -= mg_row[frm]
        eg -= eg_row[frm]
        promotion = move.promotion
        if promotion:
            index = mine + promotion
            phase += PHASE_WEIGHT[promotion]
        if piece == _KING and _BB_SQUARES[to] & board.rooks & board.occupied_co[color]:   # Chess960 castling
            self._push_castling960(move, mg, eg, phase, mine)
            return
        mg += _MG[index][to]
        eg += _EG[index][to]
        if _BB_SQUARES[to] & board.occupied_co[not color]:
            victim = board.piece_type_at(to)
            index = theirs + victim  # type: ignore[operator]
            mg -= _MG[index][to]
            eg -= _EG[index][to]
            phase -= PHASE_WEIGHT[victim]  # type: ignore[index]
        elif piece == _PAWN and to == board.ep_square:
            square = to - 8 if color else to + 8
            index = theirs + _PAWN
            mg -= _MG[index][square]
            eg -= _EG[index][square]
        elif piece == _KING and (to - frm == 2 or frm - to == 2):
            rook_from, rook_to = (frm + 3, frm + 1) if to > frm else (frm - 4, frm - 1)
            index = mine + chess.ROOK
            mg += _MG[index][rook_to] - _MG[index][rook_from]
            eg += _EG[index][rook_to] - _EG[index][rook_from]
        board.push(move)
        self._evals.append((mg, eg, phase))

    def _push_castling960(self, move: chess.Move, mg: int, eg: int, phase: int, mine: int) -> None:
        """push() for a Chess960 castling move (the king onto its own rook): king and rook
        end on the g and f files (kingside) or the c and d files, wherever they started.
        `mg`, `eg`: the evaluation with the king already lifted off its square."""
        frm, rook_from = move.from_square, move.to_square
        rank = chess.square_rank(frm)
        kingside = rook_from > frm
        king_to = chess.square(6 if kingside else 2, rank)
        rook_to = chess.square(5 if kingside else 3, rank)
        king, rook = mine + _KING, mine + chess.ROOK
        mg += _MG[king][king_to] + _MG[rook][rook_to] - _MG[rook][rook_from]
        eg += _EG[king][king_to] + _EG[rook][rook_to] - _EG[rook][rook_from]
        self.board.push(move)
        self._evals.append((mg, eg, phase))

    def push_null(self) -> None:
        """Pass (a null move) for null-move pruning; undone by pop()."""
        self.board.push(chess.Move.null())
        self._evals.append(self._evals[-1])

    def null_move_safe(self) -> bool:
        """The side to move has a piece besides king and pawns: zugzwang is rare enough."""
        board = self.board
        return bool(board.occupied_co[board.turn] & ~(board.pawns | board.kings))

    def pop(self) -> None:
        self.board.pop()
        self._evals.pop()

    def key(self) -> Hashable:
        return _key(self.board)

    def history_keys(self) -> list[Hashable]:
        """Keys of the game's positions before this one, back to the last irreversible move."""
        board = self.board.copy()
        keys: list[Hashable] = []
        while board.move_stack:
            board.pop()
            keys.append(_key(board))
        return keys

    def terminal(self) -> int | None:
        result = self.rule_terminal()
        if result is None and not legal_move_list(self.board):
            return TERMINAL_LOSS if self.board.is_check() else TERMINAL_DRAW
        return result

    def rule_terminal(self) -> int | None:
        """terminal() without the no-legal-move test (a third of a node's time): draws by
        the fifty-move rule or insufficient material.  The core scores an empty move list
        itself (in check: mated, else stalemate), so it needs no separate test."""
        board = self.board
        if board.halfmove_clock >= 100:
            if board.is_check() and not legal_move_list(board):
                return TERMINAL_LOSS  # mate takes precedence over the fifty-move rule
            return TERMINAL_DRAW
        if not (board.pawns | board.rooks | board.queens) and board.is_insufficient_material():
            return TERMINAL_DRAW
        return None

    def evaluate(self) -> int:
        mg, eg, phase = self._evals[-1]
        if phase > PHASE_TOTAL:
            phase = PHASE_TOTAL
        score = (mg * phase + eg * (PHASE_TOTAL - phase)) // PHASE_TOTAL
        return score if self.board.turn else -score

    def wdl(self, score: int) -> tuple[int, int, int]:
        """UCI_ShowWDL's per mille for the side to move here at `score` (fitted to our games)."""
        return wdl_per_mille(score, self.board)

    def ordered_moves(self) -> list[tuple[chess.Move, int]]:
        board = self.board
        theirs = board.occupied_co[not board.turn]
        ep = board.ep_square
        piece_type_at = board.piece_type_at
        scored = []
        for move in legal_move_list(board):
            to = move.to_square
            if _BB_SQUARES[to] & theirs:
                score = (_CAPTURE + 32 * _ORDER_VALUE[piece_type_at(to)]  # type: ignore[index]
                         - _ORDER_VALUE[piece_type_at(move.from_square)])  # type: ignore[index]
                if move.promotion:
                    score += _ORDER_VALUE[move.promotion] - 9
            elif move.promotion:
                score = _PROMOTION + move.promotion
            elif to == ep and piece_type_at(move.from_square) == _PAWN:
                score = _CAPTURE + 31
            else:
                score = 0
            scored.append((move, score))
        return scored

    def noisy_moves(self) -> list[tuple[chess.Move, int]]:
        """Captures (MVV-LVA) and queen promotions for quiescence.  Left to the main search:
        under-promotions, and captures by a more valuable piece onto a defended square.
        One pass over the legal-move list (in C, ~1 us) in python-chess's order: its legal
        captures (en passant last), then the quiet queen promotions."""
        board = self.board
        piece_type_at = board.piece_type_at
        scored = []
        pushes = []
        them = not board.turn
        theirs = board.occupied_co[them]
        ep = board.ep_square
        pawns = board.pawns
        is_attacked_by = board.is_attacked_by
        for move in legal_move_list(board):
            to = move.to_square
            promotion = move.promotion
            if _BB_SQUARES[to] & theirs:
                victim = _ORDER_VALUE[piece_type_at(to)]  # type: ignore[index]
            elif to == ep and _BB_SQUARES[move.from_square] & pawns:
                victim = _ORDER_VALUE[_PAWN]
            else:
                if promotion == _QUEEN:
                    pushes.append((move, 32 * 8))
                continue
            if promotion and promotion != _QUEEN:
                continue
            attacker = _ORDER_VALUE[piece_type_at(move.from_square)]  # type: ignore[index]
            if attacker > victim and not promotion and is_attacked_by(them, to):
                continue  # likely loses material (a cheap SEE < 0): not worth a quiescence node
            scored.append((move, 32 * victim - attacker + (64 if promotion else 0)))
        return scored + pushes

    def is_quiet(self, move: chess.Move) -> bool:
        board = self.board
        if move.promotion or _BB_SQUARES[move.to_square] & board.occupied_co[not board.turn]:
            return False
        return not (move.to_square == board.ep_square and board.piece_type_at(move.from_square) == _PAWN)

    def in_check(self) -> bool:
        return self.board.is_check()

    def native_tree(self, memory: dict, hash_mb: int) -> NativeTree | None:
        """The compiled tree below this root (search_kernel.c), when built; a Board subclass
        (a variant python-chess models) keeps the Python tree."""
        if native_kernel is None or type(self.board) is not chess.Board:
            return None
        return NativeTree(self.board, memory, hash_mb)
