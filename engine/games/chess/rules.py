"""Chess rules: a thin immutable wrapper over python-chess.

The board inside a ChessState is never mutated after construction; `play` copies
it with just enough history (the plies since the last irreversible move) for
repetition detection, so playing is O(halfmove clock), not O(game length).
"""
from __future__ import annotations

import functools
from typing import Hashable, Sequence

import chess

from engine.games.base import GameSetupError, IllegalMoveError, Outcome

__all__ = ["ChessGame", "ChessState", "CHESS960", "BENCH_FENS", "legal_move_list", "board_from_fen_or_epd",
           "needs_chess960", "chess960_start"]


class ChessState:
    __slots__ = ("board", "_moves", "_outcome", "_outcome_known")

    def __init__(self, board: chess.Board):
        self.board = board
        self._moves: list[chess.Move] | None = None
        self._outcome: Outcome | None = None
        self._outcome_known = False

    @property
    def game(self) -> "ChessGame":
        return CHESS960 if self.board.chess960 else STANDARD_CHESS

    @property
    def to_play(self) -> int:
        return 0 if self.board.turn == chess.WHITE else 1

    @property
    def ply(self) -> int:
        return self.board.ply()

    @property
    def last_move(self) -> chess.Move | None:
        return self.board.move_stack[-1] if self.board.move_stack else None

    def legal_moves(self) -> Sequence[chess.Move]:
        if self._moves is None:
            self._moves = legal_move_list(self.board)
        return self._moves

    def play(self, move: chess.Move) -> "ChessState":
        old = self.board
        keep = min(old.halfmove_clock, len(old.move_stack))
        board = old.copy(stack=False)
        if keep:   # new lists, shared entries: Board.copy(stack=keep) also shares the saved
            board.move_stack = old.move_stack[-keep:]   # states, but copies every Move (a
            board._stack = old._stack[-keep:]           # sixth of a node); neither is mutated
        board.push(move)
        return ChessState(board)

    def outcome(self) -> Outcome | None:
        if not self._outcome_known:
            self._outcome = self._compute_outcome()
            self._outcome_known = True
        return self._outcome

    def _compute_outcome(self) -> Outcome | None:
        board = self.board
        if not self.legal_moves():
            if board.is_check():
                return Outcome(winner=1 - self.to_play, reason="checkmate")
            return Outcome(winner=None, reason="stalemate")
        # a pawn, rook or queen anywhere is mating material: that cheap test first
        if not (board.pawns | board.rooks | board.queens) and board.is_insufficient_material():
            return Outcome(winner=None, reason="insufficient material")
        if board.halfmove_clock >= 100:
            return Outcome(winner=None, reason="fifty-move rule")
        if board.halfmove_clock >= 8 and board.is_repetition(3):
            return Outcome(winner=None, reason="threefold repetition")
        return None

    def repeated(self) -> bool:
        """The position occurred before (a twofold repetition).  Search, not the rules, scores
        it as a draw, as lc0 does: the side ahead then steers clear of the repetitions that
        end in a threefold draw, and the side behind heads for them at once."""
        board = self.board
        return board.halfmove_clock >= 4 and board.is_repetition(2)

    def key(self) -> Hashable:
        # python-chess's transposition key is ~1 us against ~20 us for a Zobrist hash.
        return self.board._transposition_key()

    def fen(self) -> str:
        return self.board.fen()

    def __repr__(self) -> str:
        return f"ChessState({self.board.fen()!r})"


def board_from_fen_or_epd(text: str) -> tuple[chess.Board, dict]:
    """A full FEN (six fields, the move counters last) or an EPD line (four fields, then
    opcodes) -> (board, EPD opcodes); position files mix both.  A position whose castling
    rights only Chess960 has comes back as a chess960 board.  Raises ValueError."""
    fields = text.split()
    if len(fields) == 6 and fields[4].isdigit() and fields[5].isdigit():
        return chess.Board(text, chess960=needs_chess960(text)), {}
    return chess.Board.from_epd(text, chess960=needs_chess960(" ".join(fields[:4] + ["0", "1"])))


def needs_chess960(fen: str) -> bool:
    """The FEN's castling rights exist in Chess960 only (a king off e1/e8 or a castling rook
    off the corners, in X-FEN or Shredder-FEN): the game is Chess960.  Why: an opening suite
    or a stored game says it is a Chess960 one by its start position alone, as in cutechess."""
    try:
        return chess.Board(fen, chess960=True).clean_castling_rights() != chess.Board(fen).clean_castling_rights()
    except ValueError:
        return False


def chess960_start(number: int) -> chess.Board:
    """Chess960 start position `number` (0-959, Scharnagl's numbering; 518 is standard chess)."""
    board = chess.Board.from_chess960_pos(number)
    board.chess960 = True
    return board


@functools.lru_cache(maxsize=None)
def move_table() -> tuple[chess.Move | None, ...]:
    """The C kernels' moves by code (movegen_kernel.c, search_kernel.c), (from * 64 + to) * 5 + promotion (0 none, else the
    piece type - 1): every move a position can make (queen lines and knight jumps, and
    promotions one step onto the last rank), built once; None for the other codes."""
    table: list[chess.Move | None] = [None] * (64 * 64 * 5)
    for from_square in chess.SQUARES:
        for to_square in chess.SQUARES:
            code = (from_square * 64 + to_square) * 5
            to_mask = chess.BB_SQUARES[to_square]
            if chess.BB_RAYS[from_square][to_square] or chess.BB_KNIGHT_ATTACKS[from_square] & to_mask:
                table[code] = chess.Move(from_square, to_square)
            if to_mask & chess.BB_BACKRANKS and chess.BB_KING_ATTACKS[from_square] & to_mask \
                    and chess.square_rank(from_square) != chess.square_rank(to_square):
                for piece_type in (chess.KNIGHT, chess.BISHOP, chess.ROOK, chess.QUEEN):
                    table[code + piece_type - 1] = chess.Move(from_square, to_square, piece_type)
    return tuple(table)


try:   # legal-move generation in C (movegen_kernel.c, built by pip install); the same lists
    from engine.games.chess import _movegen_kernel as movegen_kernel   # type: ignore[attr-defined]
    movegen_kernel.bind(move_table())
except ImportError:    # not built (no C compiler or no Python headers): python-chess below, slower
    movegen_kernel = None


def legal_move_list(board: chess.Board) -> list[chess.Move]:
    """list(board.legal_moves), same moves in the same order, faster: 1.1 us on engine
    bench's chess positions with the C kernel, 26 without it (list(board.legal_moves): 27).

    Why: a new MCTS node costs one legal-move list, a quarter of chess MCTS's time under
    py-spy; with the kernel the per-node overhead with a free evaluator fell from ~57 to ~20 us
    (benchmarks/node_overhead.py, quiet; docs/measurements/node-overhead.md).  movegen_kernel.c does python-chess's
    generate_legal_moves step by step in C (in check too) and returns shared, prebuilt Move
    objects (Chess960 boards' castling king-onto-rook, as python-chess's).  Board subclasses
    and the positions the kernel returns None for (a move outside its table, from castling
    rights no game makes) take the Python code below."""
    if movegen_kernel is not None and type(board) is chess.Board:
        occupied_co = board.occupied_co
        moves = movegen_kernel.legal_moves(
            occupied_co[chess.WHITE], occupied_co[chess.BLACK], board.pawns, board.knights, board.bishops,
            board.rooks, board.queens, board.kings, board.promoted, board.turn, board.clean_castling_rights(),
            board.ep_square, board.chess960)
        if moves is not None:
            return moves
    return _python_legal_move_list(board)


def _python_legal_move_list(board: chess.Board) -> list[chess.Move]:
    """legal_move_list without the kernel (25 against python-chess's 27 us on engine bench's
    positions): out of check only king moves, moves of pinned pieces and en passant can be
    illegal, so only those are checked (as python-chess's generate_legal_moves does it,
    with its own _is_safe); in check, or without a king, python-chess does it all."""
    turn = board.turn
    king_mask = board.kings & board.occupied_co[turn]
    if not king_mask:
        return list(board.legal_moves)
    king = chess.msb(king_mask)
    if board.attackers_mask(not turn, king):
        return list(board.legal_moves)
    blockers = board._slider_blockers(king)
    careful = blockers | king_mask
    ep_square = board.ep_square
    is_safe = board._is_safe
    return [move for move in board.generate_pseudo_legal_moves()
            if not ((careful >> move.from_square) & 1 or move.to_square == ep_square)
            or is_safe(king, blockers, move)]


# `engine bench`'s chess positions: (label, FEN); they never change, so benches compare.
BENCH_FENS: tuple[tuple[str, str], ...] = (
    ("start", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"),
    ("kiwipete", "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1"),
    ("perft 3 (rook endgame)", "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1"),
    ("perft 4 (promotions)", "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1"),
    ("perft 5", "rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8"),
    ("perft 6 (italian)", "r4rk1/1pp1qppp/p1np1n2/2b1p1B1/2B1P1b1/P1NP1N2/1PP1QPPP/R4RK1 w - - 0 10"),
    ("sicilian middlegame", "r1bqkb1r/1p3ppp/p1nppn2/8/3NP3/2N1B3/PPP1BPPP/R2QK2R w KQkq - 0 8"),
    ("queen endgame", "6k1/5p1p/6p1/3Q4/8/6P1/q4P1P/6K1 b - - 0 40"),
)


class ChessGame:
    """Standard chess, or with chess960=True Chess960 (Fischer random: any back-rank start,
    castling with the king onto its own rook, python-chess's chess960 boards).  Moves are
    chess.Move; text is UCI long algebraic (e2e4, e7e8q; castling e1g1, or e1h1 in Chess960,
    the notation UCI_Chess960 asks for).  The class attributes are the per-game facts of
    engine/games/base.py's Game."""
    name = "chess"
    sized = False                 # one board: get_game("chess") takes no settings
    width = height = 8
    rule = ""
    protocol = "uci"
    stones = False
    max_plies: int | None = 300   # self-play and teacher games: random-ish chess rarely ends by itself
    bench_depth = 6               # about 10 s on one free core (measured 2026-11)

    def __init__(self, chess960: bool = False):
        self.chess960 = chess960
        self.label = "chess960" if chess960 else "chess"

    def dirichlet_alpha(self, n_moves: int) -> float:
        """AlphaZero's chess value (about 10 / a typical 30 legal moves)."""
        return 0.3

    @classmethod
    def bench_positions(cls) -> list[tuple[str, "ChessState"]]:
        return [(f"{label}: {fen}", STANDARD_CHESS.state_from_fen(fen)) for label, fen in BENCH_FENS]

    def initial_state(self) -> ChessState:
        return ChessState(chess.Board(chess960=self.chess960))

    def state_from_fen(self, fen: str, moves: Sequence[str] = ()) -> ChessState:
        """Position from a FEN (or 'startpos') plus UCI moves; GameSetupError / IllegalMoveError.
        Chess960 reads X-FEN and Shredder-FEN castling fields (KQkq or the rooks' files, HAha)."""
        try:
            board = chess.Board(chess960=self.chess960) if fen == "startpos" else \
                chess.Board(fen, chess960=self.chess960)
        except ValueError as exc:
            raise GameSetupError(f"invalid FEN {fen!r}: {exc}") from None
        if not board.is_valid():
            raise GameSetupError(f"invalid position {fen!r}: {board.status()!r}")
        for text in moves:
            try:
                board.push(board.parse_uci(text))
            except ValueError:
                raise IllegalMoveError(f"illegal move {text!r} in {board.fen()!r}") from None
        return ChessState(board)

    def parse_move(self, state: ChessState, text: str) -> chess.Move:
        try:
            return state.board.parse_uci(text.strip())
        except ValueError:
            raise IllegalMoveError(f"illegal move {text!r} in {state.board.fen()!r}") from None

    def format_move(self, state: ChessState, move: chess.Move) -> str:
        return state.board.uci(move)


STANDARD_CHESS = ChessGame()            # the game of every ChessState on a standard board
CHESS960 = ChessGame(chess960=True)     # and of every one on a chess960 board
