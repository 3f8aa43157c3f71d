"""Mop-up endgame knowledge: values that lead a lone king to the edge, and MCTS that mates with them."""
from __future__ import annotations

import chess
import numpy as np
import pytest

from engine.evaluators import UniformEvaluator
from engine.games import game_profile, get_game
from engine.games.chess.alphabeta import ChessSearchBoard
from engine.search.alphabeta import AlphaBeta, AlphaBetaConfig
from engine.games.chess.endgames import MOP_UP_FLOOR, MOP_UP_SPAN, MopUpEvaluator, mop_up_value
from engine.search.mcts import MCTS, MCTSConfig
from engine.types import Limits

CHESS = get_game("chess")


def value(fen: str) -> float | None:
    return mop_up_value(chess.Board(fen), 1.0)


@pytest.mark.parametrize("fen", [
    "8/8/4k3/8/8/2K5/R7/8 w - - 0 1",
    "8/8/4k3/8/8/2KBB3/8/8 w - - 0 1",         # d3 light, e3 dark: mate can be forced
    "8/8/4k3/8/8/2KBN3/8/8 w - - 0 1",
])
def test_with_mating_material_the_mop_up_value_replaces_the_networks(fen):
    assert value(fen) == mop_up_value(chess.Board(fen), -0.5)


@pytest.mark.parametrize("fen", [
    "8/8/4k3/8/8/2KP4/8/8 w - - 0 1",          # a pawn: the network judges whether it wins
    "8/8/4k3/8/8/2KNN3/8/8 w - - 0 1",         # two knights cannot force mate
    "8/8/4k3/8/8/2K1B3/8/2B5 w - - 0 1",       # e3 and c1, both dark: nor can these
])
def test_without_it_the_network_judges_and_its_won_value_is_capped(fen):
    board = chess.Board(fen)
    assert mop_up_value(board, 0.1) == 0.1
    assert mop_up_value(board, -0.4) == -0.4
    capped = mop_up_value(board, 1.0)
    assert capped is not None and capped < MOP_UP_FLOOR + MOP_UP_SPAN


def test_promoting_against_a_lone_king_looks_better_than_waiting():
    """The network calls the pawn on e2 won (1.0); uncapped, promoting to a mop-up value
    below 1.0 would look like a loss of value and the search would put it off."""
    before = chess.Board("7k/8/8/8/8/8/4p3/K7 b - - 0 1")
    after = before.copy()
    after.push_uci("e2e1q")
    assert -mop_up_value(after, -1.0) > mop_up_value(before, 1.0)


@pytest.mark.parametrize("fen", [chess.STARTING_FEN, "8/8/4k3/3p4/8/2K5/R7/8 w - - 0 1", "8/8/4k3/8/8/2K5/8/8 w - - 0 1"])
def test_no_lone_king_no_mop_up_value(fen):
    assert mop_up_value(chess.Board(fen), 0.3) is None


def test_the_stronger_side_is_winning_from_either_side_to_move():
    strong = value("8/8/4k3/8/8/2K5/R7/8 w - - 0 1")
    weak = value("8/8/4k3/8/8/2K5/R7/8 b - - 0 1")
    assert strong is not None and weak is not None
    assert MOP_UP_FLOOR <= strong <= MOP_UP_FLOOR + MOP_UP_SPAN
    assert weak == pytest.approx(-strong)
    black_strong = value("8/8/4K3/8/8/2k5/q7/8 b - - 0 1")
    assert black_strong == pytest.approx(value("8/8/4k3/8/8/2K5/Q7/8 w - - 0 1"))


def test_the_lone_king_is_worse_off_at_the_edge_and_near_the_enemy_king():
    centre = value("8/8/8/3k4/8/8/R7/K7 w - - 0 1")
    edge = value("3k4/8/8/8/8/8/R7/K7 w - - 0 1")
    corner = value("k7/8/8/8/8/8/R7/7K w - - 0 1")
    near_corner = value("k7/8/2K5/8/8/8/R7/8 w - - 0 1")
    assert centre < edge
    assert edge < corner < near_corner
    assert value("8/8/8/3k4/8/8/R7/K7 w - - 0 1") < value("8/8/8/3k4/8/3K4/R7/8 w - - 0 1")


def test_bishop_and_knight_drive_to_the_bishops_corner():
    # light-squared bishop (f1): a8 and h1 are its corners, a1 and h8 are not
    bishop_corner = value("k7/8/2K5/8/8/8/8/4NB2 w - - 0 1")
    wrong_corner = value("7k/8/5K2/8/8/8/8/4NB2 w - - 0 1")
    assert bishop_corner is not None and wrong_corner is not None
    on_its_diagonal = value("8/8/1K6/3k4/8/8/8/4NB2 w - - 0 1")  # d5, light, mid-board
    assert bishop_corner > wrong_corner and bishop_corner > on_its_diagonal


def test_the_evaluator_changes_only_mop_up_values():
    krk = CHESS.state_from_fen("8/8/4k3/8/8/2K5/R7/8 b - - 0 1")
    start = CHESS.initial_state()
    inner = UniformEvaluator()
    plain = inner.evaluate([start, krk])
    wrapped = MopUpEvaluator(inner).evaluate([start, krk])
    assert wrapped[0].value == plain[0].value and wrapped[0].extra == plain[0].extra
    np.testing.assert_allclose(wrapped[0].priors, plain[0].priors)
    np.testing.assert_allclose(wrapped[1].priors, plain[1].priors)
    assert wrapped[1].value == pytest.approx(value(krk.fen()))
    win, draw, loss = wrapped[1].extra["wdl"]
    assert win == 0 and loss == pytest.approx(-wrapped[1].value) and win + draw + loss == pytest.approx(1)


def test_chess_names_the_mop_up_evaluator_and_gomoku_none():
    assert game_profile("chess").leaf_value() is MopUpEvaluator
    assert game_profile("gomoku").leaf_value is None


def test_mcts_with_mop_up_values_mates_a_lone_king_that_defends():
    """Uniform priors and a value that is flat everywhere else: the mop-up gradient alone
    must take king and rook to mate within the fifty moves, against a defender that
    searches three plies for the best escape (the Python tree's three plies, which this
    test was measured against: the compiled tree's, with its pruning, defends better and
    needs 1,600 playouts, not 800, from this start)."""
    mcts = MCTS(MopUpEvaluator(UniformEvaluator()), MCTSConfig(seed=3))
    defender = AlphaBeta(ChessSearchBoard.from_state, AlphaBetaConfig(hash_mb=8, native=False))
    state = CHESS.state_from_fen("8/8/8/3k4/8/8/8/R3K3 w - - 0 1")
    for _ in range(100):
        if state.outcome() is not None:
            break
        if state.board.turn == chess.WHITE:
            move = mcts.search(state, Limits(nodes=800)).best_move
        else:
            move = defender.search(state, Limits(depth=3)).best_move
        state = state.play(move)
    assert state.board.is_checkmate() and state.board.turn == chess.BLACK


def test_the_compiled_alpha_beta_mates_a_lone_king_that_defends_within_the_fifty_moves():
    attacker = AlphaBeta(ChessSearchBoard.from_state, AlphaBetaConfig(hash_mb=8))
    defender = AlphaBeta(ChessSearchBoard.from_state, AlphaBetaConfig(hash_mb=8))
    state = CHESS.state_from_fen("8/8/8/3k4/8/8/8/R3K3 w - - 0 1")
    for _ in range(100):
        if state.outcome() is not None:
            break
        limits = Limits(nodes=100_000) if state.board.turn == chess.WHITE else Limits(depth=3)
        state = state.play((attacker if state.board.turn == chess.WHITE else defender).search(state, limits).best_move)
    assert state.board.is_checkmate() and state.board.turn == chess.BLACK


def test_the_chess_mcts_player_searches_with_endgame_knowledge():
    from engine.players.build import make_searcher
    from engine.players.options import PlayerOptions
    searcher = make_searcher(CHESS, PlayerOptions(player="mcts", weights="chess-dagger3-res6x64"))
    assert isinstance(searcher.evaluator, MopUpEvaluator)
    krk = CHESS.state_from_fen("8/8/4k3/8/8/2K5/R7/8 w - - 0 1")
    assert searcher.evaluator.evaluate([krk])[0].value == pytest.approx(value(krk.fen()))
