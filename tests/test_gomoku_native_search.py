"""The compiled gomoku alpha-beta tree (threat_kernel.c, tk_ab_search; engine/games/gomoku/native_search.py):
its incremental evaluation, its forcing rules, its answers against the Python tree's on
tactics, limits and stops, and which rules it searches."""
from __future__ import annotations

import random
import threading

import pytest

from engine.games import get_game
from engine.games.gomoku.alphabeta import GomokuSearchBoard, board_maker
from engine.games.gomoku.threat_kernel import KernelBoard, ThreatKernelUnavailable, library
from engine.search.ab_board import MATE_SCORE
from engine.search.alphabeta import AlphaBeta, AlphaBetaConfig
from engine.types import Limits

try:
    library()
except ThreatKernelUnavailable:
    pytest.skip("the threat kernel is not built (no C compiler at install)", allow_module_level=True)

from tests.test_alphabeta_gomoku import TACTIC_CASES  # noqa: E402  (after the skip: it loads the tactics)


def searcher(game, native: bool = True) -> AlphaBeta:
    return AlphaBeta(board_maker(game), AlphaBetaConfig(native=native))


def random_cells(game, rng: random.Random, stones: int) -> bytearray:
    """A position of `stones` random stones (alternating colours) without five in a row."""
    while True:
        state = game.initial_state()
        for _ in range(stones):
            state = state.play(rng.choice(state.legal_moves()))
            if state.outcome() is not None:
                break
        else:
            return bytearray(state.cells)


@pytest.mark.parametrize("rule", ["freestyle", "standard"])
def test_incremental_evaluation_matches_a_fresh_board(rule):
    game = get_game("gomoku", width=15, height=15, rule=rule)
    rng = random.Random(7)
    walked = KernelBoard(15, 15, rule)
    walked.ab_track()
    for _ in range(20):
        cells = random_cells(game, rng, rng.randrange(4, 60))
        walked.sync(cells)                     # pops and pushes from the last position
        fresh = KernelBoard(15, 15, rule)
        fresh.sync(cells)
        fresh.ab_track()        # counted once from the stones, not kept through pushes
        for me in (0, 1):
            assert walked.ab_evaluate(me, MATE_SCORE) == fresh.ab_evaluate(me, MATE_SCORE)


def test_evaluation_is_symmetric_in_the_colours():
    game = get_game("gomoku", width=15, height=15)
    rng = random.Random(11)
    board, swapped_board = KernelBoard(15, 15, "freestyle"), KernelBoard(15, 15, "freestyle")
    board.ab_track()
    swapped_board.ab_track()
    for _ in range(20):
        cells = random_cells(game, rng, rng.randrange(4, 50))
        swapped = bytearray((0, 2, 1)[c] for c in cells)
        board.sync(cells)
        swapped_board.sync(swapped)
        for me in (0, 1):
            assert board.ab_evaluate(me, MATE_SCORE) == swapped_board.ab_evaluate(1 - me, MATE_SCORE)


def test_the_side_to_moves_threats_count_for_it():
    game = get_game("gomoku", width=15, height=15)
    board = KernelBoard(15, 15, "freestyle")
    board.ab_track()
    state = game.state_from_moves([game.index(7, 7), game.index(0, 0), game.index(8, 7), game.index(0, 14)])
    board.sync(state.cells)
    # The first player's connected two against two corner stones: better for it, either to move.
    assert board.ab_evaluate(0, MATE_SCORE) > 0
    assert board.ab_evaluate(1, MATE_SCORE) < 0


@pytest.mark.parametrize("case", TACTIC_CASES, ids=[c[0] for c in TACTIC_CASES])
def test_compiled_tree_solves_the_tactics(case):
    ident, game, state, kind, answers = case
    result = searcher(game).search(state, Limits(depth=6, time=30.0))
    assert result.best_move in answers, f"{ident}: {game.format_move(state, result.best_move)}"
    mate = result.info.mate_plies
    if kind == "win1":
        assert mate == 1
    elif kind in ("win2", "win3"):
        assert mate is not None and 0 < mate <= (3 if kind == "win2" else 5)


def test_compiled_tree_sees_every_forced_result_the_python_tree_sees():
    """At the same depth the compiled tree finds each win or loss the Python tree finds (it
    may find more: its forced blocks use no depth, its leaves try a VCF), and each it finds
    alone the Python tree confirms two plies deeper than the win's length."""
    for ident, game, state, _, _ in TACTIC_CASES:
        fast = searcher(game).search(state, Limits(depth=4)).info.mate_plies
        slow = searcher(game, native=False).search(state, Limits(depth=4)).info.mate_plies
        if slow is not None:
            assert fast is not None and (fast > 0) == (slow > 0), ident
        elif fast is not None:
            deeper = searcher(game, native=False).search(state, Limits(depth=abs(fast) + 2)).info.mate_plies
            assert deeper is not None and (deeper > 0) == (fast > 0), ident


def test_an_opponents_four_is_blocked():
    game = get_game("gomoku", width=15, height=15)
    # White has four in a row on row 0 (open at x=4); black to move must block at (4, 0).
    moves = []
    for x in range(4):
        moves += [game.index(x + 5, 7 + (x % 2) * 3), game.index(x, 0)]
    state = game.state_from_moves(moves)
    assert state.to_play == 0
    result = searcher(game).search(state, Limits(depth=5))
    assert result.best_move == game.index(4, 0)


def test_node_limit_and_stop_are_obeyed():
    game = get_game("gomoku", width=20, height=20)
    state = game.state_from_moves([210, 211, 189, 231, 168, 147])
    result = searcher(game).search(state, Limits(nodes=3000))
    assert result.best_move in state.legal_moves()
    assert result.info.nodes <= 3000 + 64
    stop = threading.Event()
    timer = threading.Timer(0.3, stop.set)
    timer.start()
    result = searcher(game).search(state, Limits(infinite=True), stop=stop)
    timer.cancel()
    assert result.best_move in state.legal_moves()


def test_pv_is_a_line_of_empty_cells():
    game = get_game("gomoku", width=15, height=15)
    rng = random.Random(3)
    for _ in range(5):
        state = game.initial_state()
        for _ in range(12):
            state = state.play(rng.choice(state.legal_moves()))
        if state.outcome() is not None:
            continue
        result = searcher(game).search(state, Limits(depth=6))
        for move in result.info.pv:
            assert move in state.legal_moves()
            state = state.play(move)
            if state.outcome() is not None:
                break


@pytest.mark.parametrize("rule, native", [("freestyle", True), ("standard", True), ("renju", False),
                                          ("caro", False)])
def test_which_rules_the_compiled_tree_searches(rule, native):
    game = get_game("gomoku", width=15, height=15, rule=rule)
    board = GomokuSearchBoard.from_state(game.state_from_moves([112, 113]))
    assert (board.native_tree({}, 1) is not None) == native
