"""The capture-search correction of chess MCTS leaf values (engine/search/chess_quiescence.py)."""
from __future__ import annotations

import chess
import numpy as np

from engine.evaluators import UniformEvaluator
from engine.games import get_game
from engine.nn.checkpoint import create_random_checkpoint
from engine.players.build import make_searcher
from engine.players.options import PlayerOptions
from engine.search.chess_quiescence import QuiescenceValueEvaluator, quiescence_gain
from engine.types import Evaluation

CHESS = get_game("chess")
FREE_QUEEN = "rnb1kbnr/pppp1ppp/8/4p1q1/3P4/2N5/PPP1PPPP/R1BQKBNR w KQkq - 0 3"   # Bxg5 wins her
DEFENDED_PAWN = "rnbqkbnr/ppp2ppp/3p4/4p3/3PP3/8/PPP2PPP/RNBQKBNR w KQkq - 0 3"   # dxe5 dxe5: even


def test_the_capture_search_counts_what_captures_win():
    static, gain = quiescence_gain(chess.Board(FREE_QUEEN))
    assert gain > 800                                  # a queen, less nothing
    assert quiescence_gain(chess.Board())[1] == 0      # nothing to capture
    assert abs(quiescence_gain(chess.Board(DEFENDED_PAWN))[1]) < 60   # an even trade wins nothing
    # the side that would lose the queen: it stands pat, and the capture search is White's worry
    assert quiescence_gain(chess.Board(FREE_QUEEN.replace(" w ", " b ")))[1] < 200


def test_in_check_the_search_tries_every_evasion_and_sees_a_mate():
    checked_by_a_knight = chess.Board("6k1/5pp1/7N/8/8/8/8/6K1 b - - 0 1")   # gxh6 takes the checker
    assert quiescence_gain(checked_by_a_knight)[1] > 200
    for mated in ("6rk/5Npp/8/8/8/8/8/6K1 b - - 0 1", "R5k1/5ppp/8/8/8/8/8/6K1 b - - 0 1"):
        assert quiescence_gain(chess.Board(mated))[1] <= -1000    # smothered, back rank


def _state(fen: str):
    return CHESS.state_from_fen(fen)


def test_the_evaluator_shifts_the_value_and_keeps_the_priors():
    inner = UniformEvaluator()
    wrapped = QuiescenceValueEvaluator(inner, weight=1.0)
    states = [_state(FREE_QUEEN), CHESS.initial_state(), _state(DEFENDED_PAWN)]
    plain, corrected = inner.evaluate(states), wrapped.evaluate(states)
    for a, b in zip(plain, corrected):
        assert np.array_equal(np.asarray(a.priors), np.asarray(b.priors))
    assert corrected[0].value > 0.6                   # a free queen is worth most of a win
    assert corrected[1].value == plain[1].value == 0.0   # quiet: the network's value exactly
    assert abs(corrected[2].value) < 0.15
    half = QuiescenceValueEvaluator(inner, weight=0.5).evaluate(states[:1])[0].value
    assert abs(half - corrected[0].value / 2) < 1e-9


def test_the_corrected_value_stays_inside_minus_one_to_one():
    class Winning:
        def evaluate(self, states):
            return [Evaluation(priors=np.full(len(s.legal_moves()), 1 / len(s.legal_moves())), value=0.99)
                    for s in states]
    value = QuiescenceValueEvaluator(Winning(), weight=2.0).evaluate([_state(FREE_QUEEN)])[0].value
    assert 0.99 < value < 1.0


def test_chess_mcts_wraps_its_network_when_the_weight_is_positive(tmp_path):
    net = tmp_path / "chess.pt"
    create_random_checkpoint(net, "chess", "res2x32", seed=1)
    options = PlayerOptions(player="mcts", weights=str(net), device="cpu", precision="fp32")
    on = make_searcher(CHESS, options.with_changes(quiescence=0.75))
    assert isinstance(on.evaluator, QuiescenceValueEvaluator) and on.evaluator.weight == 0.75
    off = make_searcher(CHESS, options.with_changes(quiescence=0.0))
    assert not isinstance(off.evaluator, QuiescenceValueEvaluator)
    gomoku = make_searcher(get_game("gomoku"), PlayerOptions(player="mcts", quiescence=1.0, device="cpu"))
    assert not isinstance(gomoku.evaluator, QuiescenceValueEvaluator)
