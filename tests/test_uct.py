"""UCT baseline: UCB1 over random rollouts, with the same exact tactics as MCTS."""
from __future__ import annotations

import random

import pytest

from engine.players import PlayerOptions, make_searcher
from engine.games import get_game
from engine.games.chess.heuristic import chess_rollout
from engine.games.gomoku.heuristic import gomoku_rollout
from engine.types import Limits


def uct(game, seed=1, nodes=None):
    return make_searcher(game, PlayerOptions(player="uct", seed=seed, nodes=nodes))


def test_uct_takes_gomoku_win_in_one_and_blocks_a_four():
    game = get_game("gomoku", width=9)
    idx = game.index
    x_four = [idx(x, 4) for x in (2, 3, 4, 5)]
    far = [idx(0, 0), idx(8, 0), idx(0, 8)]
    # X four 2..5 on row 4, blocked by O at 1,4: O to move must take 6,4.
    blocked = game.state_from_moves([x_four[0], far[0], x_four[1], far[1], x_four[2], far[2],
                                     x_four[3], idx(1, 4), idx(8, 8)])
    assert blocked.to_play == 1
    result = uct(game).search(blocked, Limits(nodes=150))
    assert result.best_move == idx(6, 4)
    open_four = game.state_from_moves([x_four[0], far[0], x_four[1], far[1], x_four[2], far[2],
                                       x_four[3], idx(8, 8)])
    assert open_four.to_play == 0
    result = uct(game).search(open_four, Limits(nodes=150))
    assert result.best_move in (idx(1, 4), idx(6, 4)) and result.info.mate_plies == 1


def test_uct_takes_chess_mate_and_avoids_being_mated():
    game = get_game("chess")
    mate = game.state_from_fen("6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1")
    assert game.format_move(mate, uct(game).search(mate, Limits(nodes=100)).best_move) == "d1d8"
    threatened = game.state_from_fen("3r2k1/5ppp/8/8/8/8/5PPP/N5K1 w - - 0 1")
    move = uct(game).search(threatened, Limits(nodes=100)).best_move
    after = threatened.play(move)
    assert not any(after.play(r).outcome() is not None for r in after.legal_moves())


@pytest.mark.parametrize("game_name", ["chess", "gomoku"])
def test_uct_returns_legal_moves_from_random_positions(game_name):
    game = get_game(game_name) if game_name == "chess" else get_game("gomoku", width=9)
    rng = random.Random(2)
    for i in range(6):
        state = game.initial_state()
        for _ in range(rng.randrange(30)):
            if state.outcome() is not None:
                break
            state = state.play(rng.choice(list(state.legal_moves())))
        if state.outcome() is not None:
            continue
        result = uct(game, seed=i).search(state, Limits(nodes=40))
        assert result.best_move in state.legal_moves()
        assert sum(result.visits) in (40, 1)    # 1: a root proven before any playout


def test_rollouts_score_from_the_side_to_move():
    game = get_game("gomoku", width=9)
    idx = game.index
    rng = random.Random(0)
    done = game.state_from_moves([idx(0, 0), idx(0, 1), idx(1, 0), idx(1, 1), idx(2, 0), idx(2, 1),
                                  idx(3, 0), idx(3, 1), idx(4, 0)])
    assert gomoku_rollout(done, rng) == -1.0          # O to move, X has five
    values = {gomoku_rollout(game.initial_state(), rng) for _ in range(30)}
    assert values <= {-1.0, 0.0, 1.0} and len(values) > 1
    chess = get_game("chess")
    mated = chess.state_from_fen("3R2k1/5ppp/8/8/8/8/5PPP/6K1 b - - 1 1")
    assert chess_rollout(mated, rng) == -1.0
    up_a_queen = chess.state_from_fen("4k3/8/8/8/8/8/3Q4/4K3 w - - 0 1")
    assert chess_rollout(up_a_queen, rng, max_plies=0) > 0.3


def test_uct_respects_the_node_budget_and_reports_info():
    game = get_game("gomoku", width=9)
    result = uct(game, nodes=64).search(game.initial_state(), Limits())
    assert result.info.nodes == 64 == sum(result.visits)
    assert result.info.pv and result.info.pv[0] == result.best_move


def test_uct_tries_unvisited_children_in_prior_order():
    """Near the stones first (heuristic priors), not from the corner (index order)."""
    game = get_game("gomoku", width=15)
    state = game.initial_state().play(game.index(7, 7))
    result = uct(game).search(state, Limits(nodes=8))
    tried = [m for m, n in zip(state.legal_moves(), result.visits) if n]
    assert len(tried) == 8
    assert all(max(abs(x - 7), abs(y - 7)) <= 2 for x, y in (game.coords(m) for m in tried))
