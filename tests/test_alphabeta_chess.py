"""Alpha-beta on chess: mates, limits, stop, info, searchmoves; the core on a fake board."""
from __future__ import annotations

import threading
import time
from pathlib import Path

import chess
import pytest

from engine.players import PlayerOptions, make_searcher
from engine.games import get_game
from engine.search.ab_board import MATE_SCORE
from engine.games.chess.alphabeta import ChessSearchBoard
from engine.search.alphabeta import AlphaBeta, AlphaBetaConfig, TranspositionTable
from engine.types import Limits, SearchInfo

GAME = get_game("chess")
MATES = Path(__file__).parent / "data" / "mate_in_2.epd"
KIWIPETE = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1"


def _searcher(hash_mb: int = 8) -> AlphaBeta:
    return AlphaBeta(ChessSearchBoard.from_state, AlphaBetaConfig(hash_mb=hash_mb))


def _mate_in_1_moves(board: chess.Board) -> list[chess.Move]:
    found = []
    for move in list(board.legal_moves):
        board.push(move)
        if board.is_checkmate():
            found.append(move)
        board.pop()
    return found


def _mates_in_2(board: chess.Board) -> set[chess.Move]:
    """Every move after which each reply allows a mate in 1 (brute force with python-chess)."""
    found = set()
    for move in list(board.legal_moves):
        board.push(move)
        replies = list(board.legal_moves)
        ok = bool(replies)
        for reply in replies:
            board.push(reply)
            ok = ok and bool(_mate_in_1_moves(board))
            board.pop()
            if not ok:
                break
        board.pop()
        if ok:
            found.add(move)
    return found


def _mate_cases() -> list[tuple[str, set[chess.Move], str]]:
    cases = []
    for line in MATES.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            board, ops = chess.Board.from_epd(line)
            cases.append((board.fen(), set(ops["bm"]), ops["id"]))
    return cases


MATE_CASES = _mate_cases()


def test_mate_suite_has_enough_positions_and_each_is_exactly_mate_in_2():
    assert len(MATE_CASES) >= 8
    for fen, best, name in MATE_CASES:
        board = chess.Board(fen)
        assert not _mate_in_1_moves(board), name
        assert _mates_in_2(board) == best, name


@pytest.mark.parametrize("fen,best,name", MATE_CASES, ids=[c[2] for c in MATE_CASES])
def test_solves_mate_in_2_within_depth_4(fen, best, name):
    state = GAME.state_from_fen(fen)
    result = _searcher().search(state, Limits(depth=4))
    assert result.best_move in best
    assert result.info is not None and result.info.mate_plies == 3 and result.value == 1.0
    board = chess.Board(fen)
    for move in result.info.pv[:3]:
        assert move in board.legal_moves
        board.push(move)
    assert len(result.info.pv) >= 3 and board.is_checkmate()
    assert result.ponder_move == result.info.pv[1]


def test_takes_a_mate_in_1_and_prefers_it_to_longer_mates():
    state = GAME.state_from_fen("k7/8/1K6/8/8/8/8/7R w - - 0 1")  # Rh8# now; many mates later
    result = _searcher().search(state, Limits(depth=5))
    assert result.best_move == chess.Move.from_uci("h1h8")
    assert result.info.mate_plies == 1


def test_avoids_walking_into_a_mate_in_1():
    fen = "6k1/5ppp/8/8/8/8/5PPP/R5K1 b - - 0 1"  # Ra8# is threatened after a careless move
    result = _searcher().search(GAME.state_from_fen(fen), Limits(depth=4))
    board = chess.Board(fen)
    board.push(result.best_move)
    assert not _mate_in_1_moves(board)


def test_losing_side_prefers_the_longest_defence():
    fen = "8/8/8/8/8/5K2/4Q2k/8 b - - 0 1"  # Kh1/Kg1 allow mate at once; Kh3 lasts longer
    result = _searcher().search(GAME.state_from_fen(fen), Limits(depth=5))
    assert result.best_move == chess.Move.from_uci("h2h3")
    assert result.info.mate_plies is not None and result.info.mate_plies <= -4
    assert result.value == -1.0


def test_no_legal_move_returns_none():
    for fen in ("7k/6Q1/6K1/8/8/8/8/8 b - - 0 1", "7k/5Q2/6K1/8/8/8/8/8 b - - 0 1"):  # mate, stalemate
        result = _searcher().search(GAME.state_from_fen(fen), Limits(depth=3))
        assert result.best_move is None


def test_avoids_stalemating_a_lone_king():
    fen = "7k/8/5K2/8/8/8/8/6Q1 w - - 0 1"
    result = _searcher().search(GAME.state_from_fen(fen), Limits(depth=3))
    board = chess.Board(fen)
    board.push(result.best_move)
    assert not board.is_stalemate() and result.info.mate_plies == 1


def test_info_after_every_iteration_and_depth_limit_obeyed():
    infos: list[SearchInfo] = []
    result = _searcher().search(GAME.initial_state(), Limits(depth=4), on_info=infos.append)
    assert [info.depth for info in infos] == [1, 2, 3, 4]
    assert result.info.depth == 4 and result.best_move == infos[-1].pv[0]
    assert all(b.nodes > a.nodes for a, b in zip(infos, infos[1:]))
    for info in infos:
        board = chess.Board()
        for move in info.pv:
            assert move in board.legal_moves
            board.push(move)
        assert info.seldepth >= info.depth and 0 <= info.hashfull <= 1000
        assert -1.0 < info.value < 1.0 and info.mate_plies is None


def test_node_limit_is_obeyed():
    result = _searcher().search(GAME.state_from_fen(KIWIPETE), Limits(nodes=600))
    assert 0 < result.info.nodes <= 600
    assert result.best_move in GAME.state_from_fen(KIWIPETE).legal_moves()


def test_tiny_node_limit_still_answers_a_legal_move():
    state = GAME.state_from_fen(KIWIPETE)
    result = _searcher().search(state, Limits(nodes=1))
    assert result.best_move in state.legal_moves()


def test_time_limit_is_obeyed():
    state = GAME.state_from_fen(KIWIPETE)
    start = time.monotonic()
    result = _searcher().search(state, Limits(time=0.3))
    elapsed = time.monotonic() - start
    assert elapsed < 0.3 + 0.7  # generous margin: two cores shared with other work
    assert result.best_move in state.legal_moves()


def test_unlimited_limits_end_on_the_default_time():
    searcher = AlphaBeta(ChessSearchBoard.from_state, AlphaBetaConfig(hash_mb=8, default_time=0.2))
    start = time.monotonic()
    result = searcher.search(GAME.state_from_fen(KIWIPETE), Limits())
    assert time.monotonic() - start < 0.2 + 0.7
    assert result.best_move is not None


def test_stop_answers_with_the_last_completed_depth():
    state = GAME.state_from_fen(KIWIPETE)
    stop = threading.Event()
    infos: list[SearchInfo] = []
    results = []
    worker = threading.Thread(target=lambda: results.append(
        _searcher().search(state, Limits(infinite=True), stop=stop, on_info=infos.append)))
    worker.start()
    deadline = time.monotonic() + 20
    while len(infos) < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.05)  # let it get into the middle of the next depth
    stop.set()
    stopped_at = time.monotonic()
    worker.join(5)
    assert not worker.is_alive() and time.monotonic() - stopped_at < 1.0
    result = results[0]
    assert infos and result.best_move == infos[-1].pv[0]
    assert result.best_move in state.legal_moves()
    assert result.info.depth == infos[-1].depth


def test_infinite_search_waits_for_stop_even_after_a_forced_mate():
    state = GAME.state_from_fen("k7/8/1K6/8/8/8/8/7R w - - 0 1")
    stop = threading.Event()
    results = []
    worker = threading.Thread(target=lambda: results.append(
        _searcher().search(state, Limits(infinite=True), stop=stop)))
    worker.start()
    time.sleep(0.5)
    assert worker.is_alive() and not results
    stop.set()
    worker.join(5)
    assert results[0].best_move == chess.Move.from_uci("h1h8")


def test_searchmoves_restricts_the_root():
    fen, best, _ = MATE_CASES[0]
    state = GAME.state_from_fen(fen)
    others = tuple(move for move in state.legal_moves() if move not in best)[:3]
    result = _searcher().search(state, Limits(depth=3, searchmoves=others))
    assert result.best_move in others and result.info.pv[0] in others


def test_repetition_of_a_game_position_counts_as_a_draw():
    # White is a queen down; Kh1 goes back to a position the game has already seen.
    start = "6k1/5q2/8/8/8/8/8/6K1 w - - 0 1"
    state = GAME.state_from_fen(start, ["g1h1", "g8h8", "h1g1", "h8g8"])
    board = ChessSearchBoard.from_state(state)
    assert len(board.history_keys()) == 4 and board.key() in board.history_keys()
    repeat = (chess.Move.from_uci("g1h1"),)
    for depth in (1, 3):
        assert _searcher().search(state, Limits(depth=depth, searchmoves=repeat)).value == 0.0
    fresh = GAME.state_from_fen(start)
    assert _searcher().search(fresh, Limits(depth=3, searchmoves=repeat)).value < -0.5


def _depths(state, limits: Limits) -> tuple[list[int], object]:
    infos: list[SearchInfo] = []
    result = _searcher().search(state, limits, on_info=infos.append)
    return [info.depth for info in infos], result


CLOCK = Limits(time=20.0, soft_time=10.0)  # far more than any of these positions needs


def test_one_legal_move_ends_the_search_after_depth_1():
    state = GAME.state_from_fen("k7/8/8/8/8/8/1q6/K7 w - - 0 1")  # Kxb2 is forced
    depths, result = _depths(state, CLOCK)
    assert depths == [1] and result.best_move == chess.Move.from_uci("a1b2")
    assert _depths(state, Limits(depth=4))[0] == [1, 2, 3, 4]  # an asked-for depth is searched


def test_root_moves_that_all_repeat_the_game_end_the_search():
    """Both king moves return to positions of the game: one line, not one per depth to 64."""
    state = GAME.state_from_fen("2r4k/8/8/8/8/3n4/8/1K6 w - - 0 1",
                                "b1a1 h8h7 a1b1 h7h8 b1a2 h8h7 a2b1 h7h8".split())
    depths, result = _depths(state, CLOCK)
    assert depths == [1] and result.value == 0.0 and len(result.info.pv) == 1


def test_a_settled_forced_mate_ends_the_search():
    depths, result = _depths(GAME.state_from_fen("k7/8/1K6/8/8/8/8/7R w - - 0 1"), CLOCK)
    assert result.best_move == chess.Move.from_uci("h1h8") and result.info.mate_plies == 1
    assert len(depths) <= 6


def test_pv_ends_at_a_repetition_of_the_game():
    state = GAME.state_from_fen("2r4k/8/8/8/8/3n4/8/1K6 w - - 0 1", ["b1a1", "h8h7", "a1b1", "h7h8"])
    result = _searcher().search(state, Limits(depth=4, searchmoves=(chess.Move.from_uci("b1a1"),)))
    assert result.info.pv == (chess.Move.from_uci("b1a1"),)


def test_new_game_clears_the_table():
    searcher = _searcher()
    searcher.search(GAME.initial_state(), Limits(depth=3))
    assert searcher.tt.hashfull() > 0 or any(searcher.tt._slots)
    searcher.new_game()
    assert searcher.tt.hashfull() == 0 and not searcher.history


def test_factory_builds_the_chess_alphabeta_player():
    searcher = make_searcher(GAME, PlayerOptions(player="alphabeta", hash_mb=4))
    assert isinstance(searcher, AlphaBeta)
    assert searcher.search(GAME.initial_state(), Limits(depth=2)).best_move in GAME.initial_state().legal_moves()


def test_transposition_table_keeps_deeper_entries_and_sizes_from_megabytes():
    table = TranspositionTable(1, entry_bytes=128)
    assert len(table) == 8192
    table.store(5, 6, 0, 10, "a")
    table.store(5, 2, 1, 20, None)   # shallower bound for the same key: kept out
    assert table.probe(5) == (5, 6, 0, 10, "a")
    table.store(5 + 8192, 1, 1, 30, "b")  # another key in the same slot replaces it
    assert table.probe(5) is None and table.probe(5 + 8192)[4] == "b"


# -- the generic core on a fake game --------------------------------------------------------

class CycleBoard:
    """Root R: move "a" reaches A (static -200 for the root side); move "b" reaches B, whose
    only move "back" returns to R.  Only repetition detection makes "b" worth 0 > -200."""

    EVAL = {"R": -300, "A": 200, "B": 300}     # side to move at that node
    MOVES = {"R": ["a", "b"], "A": ["x"], "B": ["back"]}
    NEXT = {("R", "a"): "A", ("R", "b"): "B", ("B", "back"): "R", ("A", "x"): "A2"}

    def __init__(self, root: str = "R"):
        self.stack = [root]

    @classmethod
    def from_state(cls, state) -> "CycleBoard":
        return cls()

    def push(self, move):
        self.stack.append(self.NEXT[(self.stack[-1], move)])

    def pop(self):
        self.stack.pop()

    def key(self):
        return self.stack[-1]

    def terminal(self):
        return None

    def evaluate(self):
        return self.EVAL.get(self.stack[-1], -200)  # A2: -200 for its mover = +200 for A's mover

    def ordered_moves(self):
        return [(m, 0) for m in self.MOVES.get(self.stack[-1], ["x"] if self.stack[-1] == "A2" else [])]

    def noisy_moves(self):
        return []

    def is_quiet(self, move):
        return True

    def in_check(self):
        return False


class _CycleState:
    def legal_moves(self):
        return ["a", "b"]


def test_core_scores_a_repetition_as_a_draw():
    CycleBoard.NEXT[("A2", "x")] = "A"
    searcher = AlphaBeta(CycleBoard.from_state, AlphaBetaConfig(hash_mb=1))
    result = searcher.search(_CycleState(), Limits(depth=4))
    assert result.best_move == "b" and result.value == 0.0


def test_mate_scores_are_stored_relative_to_the_node():
    from engine.search.alphabeta import _from_tt, _to_tt
    score_at_ply_3 = MATE_SCORE - 5  # mate 5 plies from the root, seen 3 plies deep
    stored = _to_tt(score_at_ply_3, 3)
    assert stored == MATE_SCORE - 2 and _from_tt(stored, 1) == MATE_SCORE - 3


def test_incremental_evaluation_matches_a_full_rescan():
    import random
    rng = random.Random(5)
    fens = [KIWIPETE, "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
            "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3"]
    checked = 0
    for fen in fens:
        for _ in range(10):
            board = ChessSearchBoard(chess.Board(fen))
            for _ply in range(30):
                moves = [move for move, _ in board.ordered_moves()]
                if not moves:
                    break
                board.push(rng.choice(moves))
                assert board._evals[-1] == board._full_eval(), board.board.fen()
                checked += 1
            while board.board.move_stack:
                board.pop()
            assert board._evals == [board._full_eval()]
    assert checked > 500
    special = [  # (FEN, moves): every castling, en passant for both colours, promotions
        ("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", ["e1g1", "e8c8", "f1f7", "d8d1"]),
        ("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", ["e1c1", "e8g8"]),
        ("rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3", ["e5f6"]),
        ("rnbqkbnr/pppp1ppp/8/8/3Pp3/8/PPP1PPPP/RNBQKBNR b KQkq d3 0 3", ["e4d3"]),
        ("1n2k3/P7/8/8/8/8/1p6/R3K3 w - - 0 1", ["a7b8q", "b2a1n", "e1d2"]),
    ]
    for fen, line in special:
        board = ChessSearchBoard(chess.Board(fen))
        for text in line:
            board.push(chess.Move.from_uci(text))
            assert board._evals[-1] == board._full_eval(), (fen, text)


def test_board_scores_captures_above_quiet_moves_and_quiescence_sees_promotions():
    board = ChessSearchBoard(chess.Board("4k3/P7/8/8/8/2q5/1P6/7K w - - 0 1"))
    scores = dict(board.ordered_moves())
    assert scores[chess.Move.from_uci("b2c3")] > scores[chess.Move.from_uci("b2b3")]
    noisy = {move for move, _ in board.noisy_moves()}
    assert chess.Move.from_uci("b2c3") in noisy and chess.Move.from_uci("a7a8q") in noisy
    assert chess.Move.from_uci("a7a8n") not in noisy and not board.is_quiet(chess.Move.from_uci("a7a8n"))
    assert board.is_quiet(chess.Move.from_uci("b2b3")) and not board.is_quiet(chess.Move.from_uci("b2c3"))


def test_noisy_moves_are_python_chess_legal_captures_then_queen_pushes():
    """noisy_moves filters the fast legal-move list; it must give what python-chess's own
    capture generator gives, in its order (en passant last, then quiet queen promotions),
    with under-promotions and captures by a bigger piece onto a defended square left out."""
    import random
    rng = random.Random(11)
    values = (0, 1, 3, 3, 5, 9, 20)

    def reference(board: chess.Board) -> list[tuple[chess.Move, int]]:
        them, out = not board.turn, []
        for move in board.generate_legal_captures():
            if move.promotion and move.promotion != chess.QUEEN:
                continue
            victim = values[board.piece_type_at(move.to_square) or chess.PAWN]
            attacker = values[board.piece_type_at(move.from_square)]
            if attacker > victim and not move.promotion and board.is_attacked_by(them, move.to_square):
                continue
            out.append((move, 32 * victim - attacker + (64 if move.promotion else 0)))
        return out + [(move, 32 * 8) for move in board.generate_legal_moves(to_mask=~board.occupied)
                      if move.promotion == chess.QUEEN]

    fens = [KIWIPETE, "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
            "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3",
            "4k3/8/8/2KPp2r/8/8/8/8 w - e6 0 2", "1n2k3/P7/8/8/8/8/1p6/R3K3 w - - 0 1"]
    checked = captures = in_check = 0
    for fen in fens:
        for _ in range(8):
            board = ChessSearchBoard(chess.Board(fen))
            for _ply in range(40):
                expected = reference(board.board)
                assert board.noisy_moves() == expected, board.board.fen()
                checked += 1
                captures += bool(expected)
                in_check += board.board.is_check()
                moves = list(board.board.legal_moves)
                if not moves:
                    break
                board.push(rng.choice(moves))
    assert checked > 500 and captures > 200 and in_check > 10
