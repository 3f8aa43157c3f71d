"""Evaluators: priors over exactly the legal moves, values from the side to move."""
from __future__ import annotations

import random

import numpy as np
import pytest

from engine.evaluators import UniformEvaluator
from engine.games import game_profile, get_game
from engine.games.chess.heuristic import ChessMaterialEvaluator
from engine.games.gomoku.heuristic import GomokuHeuristicEvaluator


def heuristic_evaluator(game):
    return game_profile(game.name).heuristic()


def _positions():
    rng = random.Random(5)
    out = []
    for game in (get_game("chess"), get_game("gomoku", width=9), get_game("gomoku", width=15, height=11)):
        state = game.initial_state()
        for _ in range(12):
            if state.outcome() is not None:
                break
            out.append((game, state))
            state = state.play(rng.choice(list(state.legal_moves())))
    return out


@pytest.mark.parametrize("make", [lambda g: UniformEvaluator(), heuristic_evaluator])
def test_priors_sum_to_one_over_the_legal_moves(make):
    for game, state in _positions():
        (evaluation,) = make(game).evaluate([state])
        priors = np.asarray(evaluation.priors)
        assert priors.shape == (len(state.legal_moves()),)
        assert priors.sum() == pytest.approx(1.0) and (priors >= 0).all()
        assert -1.0 <= evaluation.value <= 1.0


def test_uniform_evaluator_is_uniform_and_neutral():
    state = get_game("gomoku", width=9).initial_state()
    (evaluation,) = UniformEvaluator().evaluate([state])
    np.testing.assert_allclose(evaluation.priors, np.full(81, 1 / 81))
    assert evaluation.value == 0.0


def test_gomoku_heuristic_prefers_winning_then_blocking_cells():
    game = get_game("gomoku", width=15)
    idx = game.index
    # X: four on row 7 (3..6) blocked at 2; O: four on row 10 (3..6) blocked at 2; X to move.
    x_stones = [idx(x, 7) for x in (3, 4, 5, 6)] + [idx(2, 10)]
    o_stones = [idx(x, 10) for x in (3, 4, 5, 6)] + [idx(2, 7)]
    moves = [m for pair in zip(x_stones, o_stones) for m in pair]
    state = game.state_from_moves(moves)
    assert state.to_play == 0
    (evaluation,) = GomokuHeuristicEvaluator().evaluate([state])
    order = np.argsort(-np.asarray(evaluation.priors))
    legal = state.legal_moves()
    assert legal[order[0]] == idx(7, 7)        # complete five first
    assert legal[order[1]] == idx(7, 10)       # then block the enemy four


def test_gomoku_heuristic_value_favours_the_side_with_more_lines():
    game = get_game("gomoku", width=9)
    idx = game.index
    state = game.state_from_moves([idx(4, 4), idx(0, 0), idx(5, 4), idx(0, 8), idx(6, 4)])
    (for_o,) = GomokuHeuristicEvaluator().evaluate([state])
    assert for_o.value < 0                      # O to move faces X's open three


def test_chess_material_value_and_capture_priors():
    game = get_game("chess")
    white = game.state_from_fen("4k3/8/8/3q4/8/8/8/4K2N w - - 0 1")
    (evaluation,) = ChessMaterialEvaluator().evaluate([white])
    assert evaluation.value < 0                # white is a queen against a knight down
    up = game.state_from_fen("4k3/8/8/8/8/8/3Q4/4K3 b - - 0 1")
    (black_view,) = ChessMaterialEvaluator().evaluate([up])
    assert black_view.value < -0.5
    capture = game.state_from_fen("4k3/8/8/3q4/8/4N3/8/4K3 w - - 0 1")  # Ne3 takes d5
    (evaluation,) = ChessMaterialEvaluator().evaluate([capture])
    moves = capture.legal_moves()
    best = moves[int(np.argmax(evaluation.priors))]
    assert game.format_move(capture, best) == "e3d5"


def test_evaluators_answer_a_batch_in_order():
    game = get_game("gomoku", width=9)
    states = [game.initial_state(), game.initial_state().play(40)]
    out = heuristic_evaluator(game).evaluate(states)
    assert [len(e.priors) for e in out] == [81, 80]
