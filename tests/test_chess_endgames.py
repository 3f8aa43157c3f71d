"""Mop-up endgame knowledge: values that lead a lone king to the edge, and MCTS that mates with them."""
from __future__ import annotations

import chess
import numpy as np
import pytest

from engine.evaluators import UniformEvaluator
from engine.games import get_game, load_named
from engine.search.ab_chess import ChessSearchBoard
from engine.search.alphabeta import AlphaBeta, AlphaBetaConfig
from engine.search.chess_endgames import MOP_UP_FLOOR, MOP_UP_SPAN, MopUpEvaluator, mop_up_value
from engine.search.mcts import MCTS, MCTSConfig
from engine.types import Limits

CHESS = get_game("chess")


def value(fen: str) -> float | None:
    return mop_up_value(chess.Board(fen))


@pytest.mark.parametrize("fen, applies", [
    (chess.STARTING_FEN, False),
    ("8/8/4k3/8/8/2K5/R7/8 w - - 0 1", True),
    ("8/8/4k3/8/8/2KP4/8/8 w - - 0 1", False),         # a pawn is the network's to judge
    ("8/8/4k3/8/8/2KNN3/8/8 w - - 0 1", False),        # two knights cannot force mate
    ("8/8/4k3/8/8/2KBB3/8/8 w - - 0 1", True),         # d3 light, e3 dark: mate can be forced
    ("8/8/4k3/8/8/2K1B3/8/2B5 w - - 0 1", False),      # e3 and c1, both dark: it cannot
    ("8/8/4k3/8/8/2KBN3/8/8 w - - 0 1", True),
    ("8/8/4k3/3p4/8/2K5/R7/8 w - - 0 1", False),       # the defender still has a pawn
])
def test_only_lone_kings_against_mating_material_get_a_mop_up_value(fen, applies):
    assert (value(fen) is not None) is applies


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
    assert load_named(CHESS.endgames) is MopUpEvaluator
    assert get_game("gomoku", width=9, height=9).endgames is None


def test_mcts_with_mop_up_values_mates_a_lone_king_that_defends():
    """Uniform priors and a value that is flat everywhere else: the mop-up gradient alone
    must take king and rook to mate within the fifty moves, against a defender that
    searches three plies for the best escape."""
    mcts = MCTS(MopUpEvaluator(UniformEvaluator()), MCTSConfig(seed=3))
    defender = AlphaBeta(ChessSearchBoard.from_state, AlphaBetaConfig(hash_mb=8))
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


def test_the_chess_mcts_player_searches_with_endgame_knowledge():
    from engine.players.build import make_searcher
    from engine.players.options import PlayerOptions
    searcher = make_searcher(CHESS, PlayerOptions(player="mcts", weights="chess-dagger3-res6x64"))
    assert isinstance(searcher.evaluator, MopUpEvaluator)
    krk = CHESS.state_from_fen("8/8/4k3/8/8/2K5/R7/8 w - - 0 1")
    assert searcher.evaluator.evaluate([krk])[0].value == pytest.approx(value(krk.fen()))
