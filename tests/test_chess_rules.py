"""Chess rules through our ChessGame/ChessState API: special moves, game ends, FEN, keys, errors;
legal_move_list, through the C kernel and through its Python fallback, against python-chess."""
from __future__ import annotations

import chess
import pytest

from engine.games import GameSetupError, IllegalMoveError, get_game
from engine.games.chess import legal_move_list, rules

GAME = get_game("chess")


def _uci(state) -> set[str]:
    return {move.uci() for move in state.legal_moves()}


def _play(state, *moves: str):
    for text in moves:
        state = state.play(GAME.parse_move(state, text))
    return state


def test_castling_both_sides_is_legal_and_moves_the_rook():
    state = GAME.state_from_fen("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1")
    assert {"e1g1", "e1c1"} <= _uci(state)
    after = _play(state, "e1g1")
    assert after.board.piece_at(chess.F1) == chess.Piece(chess.ROOK, chess.WHITE)
    assert "e8c8" in _uci(after) and "e8g8" not in _uci(after)  # f8 is attacked by the rook
    assert GAME.format_move(after, GAME.parse_move(after, "e8c8")) == "e8c8"


def test_no_castling_through_check_or_after_the_king_moved():
    through_check = GAME.state_from_fen("r3k2r/8/8/8/8/8/5r2/R3K2R w KQkq - 0 1")
    assert "e1g1" not in _uci(through_check) and "e1c1" in _uci(through_check)  # f1 attacked
    in_check = GAME.state_from_fen("r3k2r/8/8/4r3/8/8/8/R3K2R w KQkq - 0 1")
    assert "e1g1" not in _uci(in_check) and "e1c1" not in _uci(in_check)
    state = _play(GAME.state_from_fen("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1"), "e1f1", "a8b8", "f1e1", "b8a8")
    assert "e1g1" not in _uci(state)


def test_en_passant_capture_removes_the_passed_pawn():
    state = _play(GAME.initial_state(), "e2e4", "a7a6", "e4e5", "d7d5")
    assert "e5d6" in _uci(state)
    after = _play(state, "e5d6")
    assert after.board.piece_at(chess.D5) is None and after.board.piece_at(chess.D6) is not None
    later = _play(state, "a2a3", "a6a5")  # the right expires after one move
    assert "e5d6" not in _uci(later)


def test_under_promotions_are_legal_moves():
    state = GAME.state_from_fen("8/P6k/8/8/8/8/8/K7 w - - 0 1")
    assert {"a7a8q", "a7a8r", "a7a8b", "a7a8n"} <= _uci(state)
    knight = _play(state, "a7a8n")
    assert knight.board.piece_at(chess.A8) == chess.Piece(chess.KNIGHT, chess.WHITE)


def test_checkmate_is_a_win_for_the_mating_side():
    state = _play(GAME.initial_state(), "f2f3", "e7e5", "g2g4", "d8h4")
    outcome = state.outcome()
    assert outcome is not None and outcome.winner == 1 and outcome.reason == "checkmate"
    assert outcome.value_for(0) == -1.0 and not state.legal_moves()


def test_stalemate_is_a_draw():
    outcome = GAME.state_from_fen("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1").outcome()
    assert outcome is not None and outcome.winner is None and outcome.reason == "stalemate"


def test_threefold_repetition_is_a_draw():
    shuffle = ("g1f3", "g8f6", "f3g1", "f6g8")
    state = _play(GAME.initial_state(), *shuffle)
    assert state.outcome() is None  # twice is not enough
    state = _play(state, *shuffle)
    outcome = state.outcome()
    assert outcome is not None and outcome.winner is None and outcome.reason == "threefold repetition"


def test_fifty_move_rule_is_a_draw():
    state = GAME.state_from_fen("8/8/4k3/8/8/4K3/8/R7 w - - 99 80")
    assert state.outcome() is None
    outcome = _play(state, "a1a2").outcome()
    assert outcome is not None and outcome.reason == "fifty-move rule"
    assert _play(state, "a1a6").outcome() is not None and "checkmate" != _play(state, "a1a6").outcome().reason


def test_checkmate_takes_precedence_over_the_fifty_move_rule():
    outcome = _play(GAME.state_from_fen("7k/8/6K1/8/8/8/8/R7 w - - 99 80"), "a1a8").outcome()
    assert outcome is not None and outcome.reason == "checkmate" and outcome.winner == 0


@pytest.mark.parametrize("fen", [
    "8/8/4k3/8/8/4K3/8/8 w - - 0 1",       # K v K
    "8/8/4k3/8/8/4KB2/8/8 w - - 0 1",      # K+B v K
    "8/8/4k3/8/8/4KN2/8/8 b - - 0 1",      # K+N v K
])
def test_insufficient_material_is_a_draw(fen):
    outcome = GAME.state_from_fen(fen).outcome()
    assert outcome is not None and outcome.winner is None and outcome.reason == "insufficient material"


def test_rook_is_sufficient_material():
    assert GAME.state_from_fen("8/8/4k3/8/8/4KR2/8/8 w - - 0 1").outcome() is None


def test_fen_round_trip_and_startpos():
    fen = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1"
    assert GAME.state_from_fen(fen).fen() == fen
    start = GAME.state_from_fen("startpos", ["e2e4", "e7e5"])
    assert start.fen() == "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2"
    assert start.ply == 2 and start.to_play == 0


def test_transposed_move_orders_share_a_key_and_other_positions_do_not():
    a = _play(GAME.initial_state(), "g1f3", "g8f6", "b1c3")
    b = _play(GAME.initial_state(), "b1c3", "g8f6", "g1f3")
    assert a.key() == b.key()
    assert a.key() != _play(GAME.initial_state(), "b1c3", "b8c6", "g1f3").key()
    # same pieces, other side to move, or other castling rights: different keys
    assert GAME.state_from_fen("4k3/8/8/8/8/8/8/4K2R w K - 0 1").key() != \
        GAME.state_from_fen("4k3/8/8/8/8/8/8/4K2R b K - 0 1").key()
    assert GAME.state_from_fen("4k3/8/8/8/8/8/8/4K2R w K - 0 1").key() != \
        GAME.state_from_fen("4k3/8/8/8/8/8/8/4K2R w - - 0 1").key()


@pytest.mark.parametrize("fen", [
    "not a fen",
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR x KQkq - 0 1",   # bad side to move
    "8/8/8/8/8/8/8/8 w - - 0 1",                                  # no kings
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBN w KQkq - 0 1",    # short rank
])
def test_bad_fen_raises_game_setup_error(fen):
    with pytest.raises(GameSetupError):
        GAME.state_from_fen(fen)


@pytest.mark.parametrize("text", ["e2e5", "e1g1", "zz", "", "e7e8q", "e2"])
def test_illegal_or_malformed_move_raises_illegal_move_error(text):
    with pytest.raises(IllegalMoveError):
        GAME.parse_move(GAME.initial_state(), text)


def test_illegal_move_in_a_position_command_raises_illegal_move_error():
    with pytest.raises(IllegalMoveError):
        GAME.state_from_fen("startpos", ["e2e4", "e2e4"])


def test_legal_moves_are_deterministic_and_formatting_is_lower_case_uci():
    state = GAME.state_from_fen("8/P6k/8/8/8/8/8/K7 w - - 0 1")
    assert [m.uci() for m in state.legal_moves()] == [m.uci() for m in
                                                       GAME.state_from_fen(state.fen()).legal_moves()]
    assert GAME.format_move(state, chess.Move.from_uci("a7a8q")) == "a7a8q"


def _no_fallback(board: chess.Board):
    pytest.fail(f"the movegen kernel left {board.fen()} to python-chess")


@pytest.fixture(params=["kernel", "python"])
def movegen(request, monkeypatch):
    """legal_move_list through movegen_kernel.c (any fallback to python-chess fails the
    test), or through its Python fallback (the kernel taken away, as without a compiler)."""
    if request.param == "kernel":
        if rules.movegen_kernel is None:
            pytest.skip("the movegen kernel did not build (no C compiler)")
        monkeypatch.setattr(rules, "_python_legal_move_list", _no_fallback)
    else:
        monkeypatch.setattr(rules, "movegen_kernel", None)
    return request.param


def test_fast_legal_move_list_equals_python_chess_in_order(movegen):
    """legal_move_list skips python-chess's king-safety check for moves that cannot expose
    the king (in Python), or generates in C; over random games from tricky positions (pins,
    en passant, checks, castling) it must give exactly python-chess's list, in its order."""
    import random

    rng = random.Random(5)
    fens = [line.split(";")[0].strip() for line in open("tests/data/perft.epd")
            if line.strip() and not line.startswith("#")]
    fens += ["4k3/8/8/2KPp2r/8/8/8/8 w - e6 0 2",          # en passant would expose the king
             "4k3/4r3/8/8/8/8/4B3/4K3 w - - 0 1",           # a pinned bishop
             "4k3/8/8/8/1b6/8/3P4/4K3 w - - 0 1"]           # a pinned pawn
    checked = in_check = 0
    for fen in fens:
        board = chess.Board(fen) if len(fen.split()) >= 4 else chess.Board(fen + " 0 1")
        for _ in range(60):
            expected = list(board.legal_moves)
            assert legal_move_list(board) == expected, board.fen()
            checked += 1
            in_check += board.is_check()
            if not expected:
                break
            board.push(rng.choice(expected))
    assert checked > 300 and in_check > 10


SPECIAL_POSITIONS = [   # (FEN, some legal moves, some illegal ones), checked one ply deeper too
    ("4k3/8/8/2KPp2r/8/8/8/8 w - e6 0 2", ["d5d6"], ["d5e6"]),        # en passant would expose the king
    ("4k3/8/8/3pP3/4K3/8/8/8 w - d6 0 2", ["e5d6", "e4d5"], ["e5e6"]),  # en passant takes the checking pawn
    ("4k3/8/8/3pP3/1b6/8/8/4K3 w - d6 0 2", ["e1f2"], ["e5d6"]),       # en passant leaves the bishop's check
    ("4k3/8/r6K/2PpP3/8/8/8/8 w - d6 0 2", ["e5d6", "c5d6"], []),      # en passant blocks a check
    ("4k3/4r3/8/8/8/8/4R3/4K3 w - - 0 1", ["e2e7", "e2e3"], ["e2d2"]),  # a pinned rook moves along the pin
    ("4k3/8/8/8/8/2b5/3P4/4K3 w - - 0 1", ["d2c3"], ["d2d3", "d2d4"]),  # a pinned pawn takes its pinner
    ("4k3/4r3/8/8/8/8/4N3/4K3 w - - 0 1", ["e1d1"], ["e2c3", "e2g1"]),  # a pinned knight stays
    ("4k3/8/8/8/1b6/8/3B4/4K3 w - - 0 1", ["d2c3", "d2b4"], ["d2e3"]),  # a pinned bishop moves along the pin
    ("r3k2r/8/8/8/8/8/5r2/R3K2R w KQkq - 0 1", ["e1c1"], ["e1g1"]),     # castling through check (f1)
    ("r3k2r/8/8/8/8/8/6r1/R3K2R w KQkq - 0 1", ["e1c1"], ["e1g1"]),     # castling into check (g1)
    ("r3k2r/8/8/4r3/8/8/8/R3K2R w KQkq - 0 1", [], ["e1g1", "e1c1"]),   # castling out of check
    ("1r2k2r/8/8/8/8/8/8/R3K2R w KQk - 0 1", ["e1c1", "e1g1"], []),     # b1 attacked: queenside still legal
    ("r3k2r/8/8/8/8/8/8/4K2R w Kkq - 0 1", ["e1g1"], ["e1c1"]),         # one rook gone
    ("r3k2r/8/8/8/8/8/8/R3K3 w KQkq - 0 1", ["e1c1"], ["e1g1"]),        # rights without the h1 rook
    ("n1n4k/1P6/8/8/8/8/8/K7 w - - 0 1", ["b7a8q", "b7c8n", "b7b8r"], []),   # promotions with capture
    ("4k3/8/8/7B/8/5n2/8/r3K3 w - - 0 1", ["e1f2", "e1e2"], ["h5f3", "e1d2"]),  # double check: the king moves
    ("4r1k1/8/8/3pP3/8/8/8/4K3 w - d6 0 2", ["e5e6"], ["e5d6"]),        # en passant off a file pin
    ("1b2k3/8/8/3pP3/8/8/7K/8 w - d6 0 2", ["e5d6"], ["e5e6"]),         # en passant along a diagonal pin
    ("1b2k3/8/8/4Pp2/8/8/7K/8 w - f6 0 2", [], ["e5f6", "e5e6"]),       # en passant off a diagonal pin
    ("3qk3/qqqqqqqq/8/8/8/8/QQQQQQQQ/3QK3 w - - 0 1", ["a2a7"], ["d1d7"]),  # nine queens a side
    ("R6R/3Q4/1Q4Q1/4Q3/2Q4Q/Q4Q2/pp1Q4/kBNN1KB1 w - - 0 1", ["a8a7"], []),   # 218 legal moves
    ("4k3/8/8/8/8/8/8/R7 w - - 0 1", ["a1a8"], []),                     # no white king
    ("8/8/8/8/k2Pp2Q/8/8/3K4 b - d3 0 1", ["e4e3"], ["e4d3"]),          # en passant exposes the king (queen)
    ("8/8/8/2k5/3Pp3/8/8/4K3 b - d3 0 1", ["e4d3"], []),                # en passant takes the checking pawn
]


@pytest.mark.parametrize("fen,legal,illegal", SPECIAL_POSITIONS)
def test_legal_move_list_in_special_positions(movegen, fen, legal, illegal):
    board = chess.Board(fen)
    expected = list(board.legal_moves)
    assert legal_move_list(board) == expected
    assert set(legal) <= {m.uci() for m in expected} and not set(illegal) & {m.uci() for m in expected}
    for move in expected:
        board.push(move)
        assert legal_move_list(board) == list(board.legal_moves), board.fen()
        board.pop()


def test_legal_move_list_leaves_chess960_and_odd_castling_rights_to_python_chess():
    """Chess960 castles king-takes-rook (e1h1), which the kernel does not generate; a
    castling right on the king's own square (assigned, not from a FEN) makes python-chess
    list e1e1, a move outside the kernel's table: python-chess answers both."""
    board = chess.Board("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", chess960=True)
    assert legal_move_list(board) == list(board.legal_moves)
    assert chess.Move(chess.E1, chess.H1) in board.legal_moves
    board = chess.Board("4k3/p7/8/8/8/8/P7/4K3 w - - 0 1")
    board.push_uci("a2a3")
    board.push_uci("a7a6")
    board.castling_rights = chess.BB_E1     # with a move stack, python-chess uses it as it is
    assert legal_move_list(board) == list(board.legal_moves)
    assert chess.Move(chess.E1, chess.E1) in legal_move_list(board)
