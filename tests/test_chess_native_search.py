"""The compiled chess tree (search_kernel.c): its board against python-chess, its evaluation
against ChessSearchBoard's, its search against the Python tree's, and the root driver's use of it."""
from __future__ import annotations

import random
from pathlib import Path

import chess
import pytest

from engine.games import get_game
from engine.games.chess import native_search
from engine.games.chess.alphabeta import ChessSearchBoard
from engine.games.chess.native_search import kernel, position_of
from engine.games.chess.rules import chess960_start
from engine.search.alphabeta import AlphaBeta, AlphaBetaConfig
from engine.types import Limits

pytestmark = pytest.mark.skipif(kernel is None, reason="search_kernel.c not built (no C compiler)")

GAME = get_game("chess")
DATA = Path(__file__).parent / "data"


def _perft_cases():
    for line in (DATA / "perft.epd").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            fen, *depths = line.split(";")
            for item in depths:
                depth, count = item.split()
                if int(depth[1:]) <= 4:
                    yield fen.strip(), int(depth[1:]), int(count)


@pytest.mark.parametrize("fen,depth,count", list(_perft_cases()))
def test_the_kernels_make_move_counts_the_perft_suite(fen, depth, count):
    assert kernel.perft(position_of(chess.Board(fen)), depth) == count


def _random_positions(seed: int, games: int, plies: int, chess960: bool):
    """Boards along random games that castle, promote and take whenever they may (70 %)."""
    rng = random.Random(seed)
    for _ in range(games):
        board = chess960_start(rng.randrange(960)) if chess960 else chess.Board()
        for _ in range(plies):
            moves = list(board.legal_moves)
            if not moves:
                break
            sharp = [m for m in moves if board.is_castling(m) or m.promotion or board.is_en_passant(m)]
            board.push(rng.choice(sharp) if sharp and rng.random() < 0.7 else rng.choice(moves))
            yield board


@pytest.mark.parametrize("chess960", [False, True])
def test_the_kernels_make_move_follows_python_chess_through_random_games(chess960):
    """perft 2 through the kernel's make_move equals python-chess's at every position (each
    child's move count, so castling, en passant and promotions must leave the same board)."""
    checked = 0
    for board in _random_positions(7 + chess960, games=12, plies=80, chess960=chess960):
        expected = 0
        for move in list(board.legal_moves):
            board.push(move)
            expected += board.legal_moves.count()
            board.pop()
        assert kernel.perft(position_of(board), 2) == expected, board.fen()
        checked += 1
    assert checked > 500


def test_the_kernels_key_is_the_position_not_the_path():
    a = chess.Board()
    for uci in ("g1f3", "g8f6", "b1c3", "b8c6"):
        a.push_uci(uci)
    b = chess.Board()
    for uci in ("b1c3", "b8c6", "g1f3", "g8f6"):
        b.push_uci(uci)
    assert kernel.key(position_of(a)) == kernel.key(position_of(b))
    c = chess.Board(a.fen().replace(" w ", " b "))
    assert kernel.key(position_of(c)) != kernel.key(position_of(a))
    no_castling = chess.Board(a.fen().replace("KQkq", "Qkq"))
    assert kernel.key(position_of(no_castling)) != kernel.key(position_of(a))
    # an en passant square counts only where a pawn could take there
    useless_ep = chess.Board("4k3/8/8/8/4P3/8/8/4K3 b - e3 0 1")
    assert kernel.key(position_of(useless_ep)) == kernel.key(position_of(chess.Board("4k3/8/8/8/4P3/8/8/4K3 b - - 0 1")))
    real_ep = chess.Board("4k3/8/8/8/3pP3/8/8/4K3 b - e3 0 1")
    assert kernel.key(position_of(real_ep)) != kernel.key(position_of(chess.Board("4k3/8/8/8/3pP3/8/8/4K3 b - - 0 1")))


def test_the_kernels_pesto_evaluation_is_the_boards_and_its_full_one_is_colour_blind():
    """Without its positional terms the kernel's evaluation is ChessSearchBoard's to the
    centipawn; with them a position and its colour-mirrored twin score the same for the
    side to move, give or take the floor division's rounding (a sign slip in any term breaks that)."""
    checked = 0
    for board in _random_positions(3, games=8, plies=100, chess960=False):
        assert kernel.evaluate(position_of(board), False) == ChessSearchBoard(board.copy()).evaluate()
        assert abs(kernel.evaluate(position_of(board)) - kernel.evaluate(position_of(board.mirror()))) <= 1
        checked += 1
    assert checked > 400


def test_the_positional_terms_reward_the_bishop_pair_mobility_and_open_files():
    def extra(fen: str) -> int:
        position = position_of(chess.Board(fen))
        return kernel.evaluate(position) - kernel.evaluate(position, False)

    # white's two bishops against bishop and knight, everything else symmetric
    assert extra("4k3/pppp1ppp/2n1b3/8/8/2B1B3/PPPP1PPP/4K3 w - - 0 1") > 0
    # the same rook on an open file rather than behind its own pawn
    assert extra("4k3/pppp1ppp/8/8/8/8/PPPP1PPP/4RK2 w - - 0 1") > extra("4k3/pppp1ppp/8/8/8/8/PPPPRPPP/5K2 w - - 0 1")
    # a knight in the centre rather than in the corner
    assert extra("4k3/8/8/8/3N4/8/8/4K3 w - - 0 1") > extra("4k3/8/8/8/8/8/8/N3K3 w - - 0 1")


def test_the_positional_terms_reward_passed_pawns_by_rank_and_the_kings_pawn_shield():
    def extra(fen: str) -> int:
        position = position_of(chess.Board(fen))
        return kernel.evaluate(position) - kernel.evaluate(position, False)

    # the same white pawn on d5: passed, then with a black pawn in front, then beside its file
    passed, blocked = "4k3/8/8/3P4/8/8/8/4K3 w - - 0 1", "4k3/8/3p4/3P4/8/8/8/4K3 w - - 0 1"
    assert extra(passed) > 0 and extra(blocked) < extra(passed)
    assert extra("4k3/2p5/8/3P4/8/8/8/4K3 w - - 0 1") < extra(passed)
    # further up the board is worth more; for black as for white (down the board)
    assert extra("4k3/3P4/8/8/8/8/8/4K3 w - - 0 1") > extra(passed) > extra("4k3/8/8/8/8/3P4/8/4K3 w - - 0 1")
    assert extra("4k3/8/8/8/8/8/3p4/4K3 b - - 0 1") > extra("4k3/8/8/8/3p4/8/8/4K3 b - - 0 1") > 0
    # a castled king behind its three pawns rather than with them pushed two ranks
    shield = "rnbq1rk1/pppppppp/8/8/8/8/PPPPPPPP/RNBQ1RK1 w - - 0 1"
    pushed = "rnbq1rk1/pppppppp/8/8/5PPP/8/PPPPP3/RNBQ1RK1 w - - 0 1"
    assert extra(shield) > extra(pushed)


def test_the_positional_terms_reward_a_queen_led_attack_on_the_king():
    def extra(fen: str) -> int:
        position = position_of(chess.Board(fen))
        return kernel.evaluate(position) - kernel.evaluate(position, False)

    # white's queen on c3 and knight on e5 bear on the squares of a king on g7 (units 14, about
    # 9 cp at this material); the same position with the king on a8: mobility alone moves it
    # by -2 (black has no queen, so no attack of its own counts)
    attacked, away = "1rb2r2/6k1/8/4N3/8/2Q5/8/R1B1KB1R w - - 0 1", "krb2r2/8/8/4N3/8/2Q5/8/R1B1KB1R w - - 0 1"
    assert extra(attacked) - extra(away) >= 5


def test_a_malformed_position_is_an_error_not_a_crash():
    with pytest.raises(TypeError):
        kernel.key((1, 2, 3))
    with pytest.raises(ValueError):
        kernel.key(position_of(chess.Board())[:11] + (99, 0, False))


def _searcher(native: bool) -> AlphaBeta:
    return AlphaBeta(ChessSearchBoard.from_state, AlphaBetaConfig(hash_mb=8, native=native))


def test_the_root_driver_searches_through_the_kernel_and_can_be_told_not_to(monkeypatch):
    calls = []
    search = kernel.search

    def counting(*args):
        calls.append(args[4])
        return search(*args)

    monkeypatch.setattr(native_search.kernel, "search", counting)
    state = GAME.initial_state()
    _searcher(native=False).search(state, Limits(depth=3))
    assert not calls
    result = _searcher(native=True).search(state, Limits(depth=3))
    assert calls and max(calls) == 2           # root moves searched to depth - 1 by the kernel
    assert result.best_move in state.legal_moves()


@pytest.mark.parametrize("fen,mate_plies", [
    ("6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1", 1),                              # back rank
    ("r1bqkb1r/pppp1ppp/2n2n2/4p2Q/2B1P3/8/PPPP1PPP/RNB1K1NR w KQkq - 4 4", 1),  # scholar's
    ("4kb1r/p2n1ppp/4q3/4p1B1/4P3/1Q6/PPP2PPP/2KR4 w k - 1 17", 3),          # Morphy's Opera Game
    ("kr6/pp6/8/8/8/8/8/K6R w - - 0 1", None),                                # no mate: the trees agree on a score
])
def test_both_trees_reach_the_same_verdict(fen, mate_plies):
    state = GAME.state_from_fen(fen)
    results = [_searcher(native).search(state, Limits(depth=5)) for native in (False, True)]
    for result in results:
        assert result.best_move in state.legal_moves()
        if mate_plies is not None:
            assert result.info.mate_plies == mate_plies
            board = state.board.copy()
            for move in result.info.pv:
                board.push(move)
            assert board.is_checkmate()
    if mate_plies is None:
        assert all(result.info.mate_plies is None for result in results)


def test_a_node_limit_holds_through_the_kernel():
    state = GAME.state_from_fen("r1bqkb1r/1p3ppp/p1nppn2/8/3NP3/2N1B3/PPP1BPPP/R2QK2R w KQkq - 0 8")
    result = _searcher(native=True).search(state, Limits(nodes=5000))
    assert result.best_move in state.legal_moves()
    assert 5000 <= result.info.nodes <= 5000 + 64


def test_the_kernel_searches_deeper_than_the_python_tree_in_the_same_nodes():
    """Not a speed test: the same node budget reaches at least the Python tree's depth."""
    state = GAME.state_from_fen("r1bqkb1r/1p3ppp/p1nppn2/8/3NP3/2N1B3/PPP1BPPP/R2QK2R w KQkq - 0 8")
    depths = [_searcher(native).search(state, Limits(nodes=20000)).info.depth for native in (False, True)]
    assert depths[1] >= depths[0] >= 3


def test_the_search_scales_its_score_down_as_the_fifty_move_count_grows():
    """A won ending in which nothing can reset the fifty-move count (no pawn, no capture)
    scores about 0.6 of itself 80 plies into the count; with a pawn to push, the tree takes
    the line that resets it and keeps most of its score."""
    from engine.types import cp_from_value

    def scores(ending: str) -> list[int]:
        return [cp_from_value(_searcher(native=True).search(GAME.state_from_fen(ending.format(clock)),
                                                            Limits(depth=5)).info.value) for clock in (0, 80)]

    fresh, late = scores("8/5k2/8/3K4/8/8/8/4R3 w - - {} 60")
    assert fresh > late > 0 and abs(late - 0.6 * fresh) <= 25
    fresh, late = scores("8/5k2/8/3K4/8/8/4P3/8 w - - {} 60")
    assert late > 0.9 * fresh > 0


def test_new_game_clears_the_kernels_table():
    searcher = _searcher(native=True)
    searcher.search(GAME.initial_state(), Limits(depth=4))
    assert searcher.native_memory and any(searcher.native_memory["tt"])
    searcher.new_game()
    assert not searcher.native_memory


class _ScriptedTree:
    """A compiled tree stand-in: the mover's score of each root move by depth; None stops."""

    SCORES = {1: {"a": 10, "b": 0, "c": -5}, 2: {"a": 10, "b": 5, "c": 0}, 3: {"a": 10, "b": 50, "c": None}}

    def __init__(self, board):
        self.board = board

    def search(self, depth, alpha, beta, ply, poll, nodes, node_limit):
        score = self.SCORES[depth + 1][self.board.stack[-1]]
        return (None if score is None else -score), nodes + 1, ply

    def pv(self, max_len):
        return []

    def hashfull(self):
        return 0


class _RootOnlyBoard:
    """Three root moves whose subtrees only the scripted tree knows."""

    def __init__(self):
        self.stack = ["R"]

    def push(self, move):
        self.stack.append(move)

    def pop(self):
        self.stack.pop()

    def key(self):
        return tuple(self.stack)

    def terminal(self):
        return None

    def evaluate(self):
        return 0

    def ordered_moves(self):
        return [(m, 0) for m in "abc"] if len(self.stack) == 1 else []

    def native_tree(self, memory, hash_mb):
        return _ScriptedTree(self)


class _RootState:
    def legal_moves(self):
        return list("abc")


def test_a_stopped_iteration_still_answers_with_a_better_move_it_finished():
    """Depth 3 is stopped at its third root move, after "b" beat the old best "a" in full:
    the answer is "b", reported at depth 3 (the Python tree would fall back on depth 2's "a")."""
    reports = []
    searcher = AlphaBeta(lambda state: _RootOnlyBoard(), AlphaBetaConfig(hash_mb=1))
    result = searcher.search(_RootState(), Limits(depth=5), on_info=reports.append)
    assert result.best_move == "b"
    assert reports[-1].depth == 3 and reports[-1].pv == ("b",)
    assert [info.pv[0] for info in reports[:-1]] == ["a", "a"]
