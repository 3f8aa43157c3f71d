"""Chess MCTS's alpha-beta check of its chosen move: a move that hangs material is vetoed
under a clock, a sound one stands, and searches without a clock are left alone."""
from __future__ import annotations

import chess
import numpy as np
import pytest

from engine.games import get_game
from engine.games.chess.move_check import CHECK_SHARE, AlphaBetaCheck
from engine.players import PlayerOptions
from engine.players.build import make_searcher, mcts_config, mcts_prover
from engine.search.limits import Stopper
from engine.search.mcts import MCTS
from engine.types import Evaluation, Limits

# White: queen d1, king e1; Black: king e8, knight d4.  Qxd4 wins the knight; Qc2 and Qe2
# walk into it (Qc2 loses the queen for nothing).
FEN = "4k3/8/8/8/3n4/8/8/3QK3 w - - 0 1"


class FavouringEvaluator:
    """Every position is a draw to it; at the root it puts `share` of the prior on one move,
    so the search's visits (and its choice) go there."""

    def __init__(self, favourite: chess.Move, share: float = 0.9):
        self.favourite, self.share = favourite, share

    def evaluate(self, states):
        out = []
        for state in states:
            moves = list(state.legal_moves())
            priors = np.full(len(moves), (1.0 - self.share) / max(1, len(moves) - 1))
            if self.favourite in moves and state.fen().startswith(FEN.split(" ")[0]):
                priors[moves.index(self.favourite)] = self.share if len(moves) > 1 else 1.0
            out.append(Evaluation(priors=priors / priors.sum(), value=0.0))
        return out


class Root:
    """What the checker reads of an MCTS root."""

    def __init__(self, state):
        self.state, self.moves = state, list(state.legal_moves())
        self.solved, self.proven = None, None


def check(uci: str, seconds: float = 1.0) -> tuple[list[str], AlphaBetaCheck]:
    """The checker on FEN with `uci` as the search's choice (then the next legal move after
    each veto); returns the vetoed moves."""
    game = get_game("chess")
    root = Root(game.state_from_fen(FEN))
    checker = AlphaBetaCheck()
    allowed = list(range(len(root.moves)))
    choice = [root.moves.index(chess.Move.from_uci(uci))]
    vetoed: list[str] = []

    def veto(a: int) -> None:
        vetoed.append(root.moves[a].uci())
        allowed.remove(a)
        choice[0] = allowed[0]

    stopper = Stopper(Limits(time=seconds))
    held = checker.verify_reserve([root], stopper)
    assert held == pytest.approx(CHECK_SHARE * seconds, abs=0.05)
    stopper.hold_back(held)
    stopper.give_back()
    checker.verify_choice(root, lambda: choice[0], stopper, veto)
    return vetoed, checker


def test_a_move_that_hangs_the_queen_is_vetoed():
    vetoed, checker = check("d1c2")
    assert vetoed[:1] == ["d1c2"] and checker.vetoed == len(vetoed)


def test_the_move_alpha_beta_also_finds_best_stands():
    vetoed, _ = check("d1d4")
    assert vetoed == []


def test_no_time_kept_back_and_nothing_vetoed_without_a_clock():
    game = get_game("chess")
    root = Root(game.state_from_fen(FEN))
    checker = AlphaBetaCheck()
    stopper = Stopper(Limits(nodes=100))
    assert checker.verify_reserve([root], stopper) == 0.0
    calls = []
    checker.verify_choice(root, lambda: root.moves.index(chess.Move.from_uci("d1c2")), stopper, calls.append)
    assert calls == []


def played_move(check_share: float | None, limits: Limits) -> tuple[chess.Move, MCTS]:
    game = get_game("chess")
    options = PlayerOptions(player="mcts", check_share=check_share, seed=1)
    searcher = MCTS(FavouringEvaluator(chess.Move.from_uci("d1c2")), mcts_config(game, options),
                    prover=mcts_prover(game, options))
    return searcher.search(game.state_from_fen(FEN), limits).best_move, searcher


def test_the_played_mcts_does_not_hang_its_queen_under_a_clock_but_does_with_the_check_off():
    # 2 s, so the check's 30 % leaves alpha-beta time to spare on a loaded CI machine (at 0.8 s
    # one full-suite run on two cores got no verdict in time).
    move, searcher = played_move(None, Limits(time=2.0))
    assert isinstance(searcher.prover, AlphaBetaCheck) and searcher.prover.vetoed >= 1
    assert move != chess.Move.from_uci("d1c2")
    board = chess.Board(FEN)
    board.push(move)
    assert not any(board.piece_type_at(m.to_square) == chess.QUEEN and board.is_capture(m) for m in board.legal_moves)
    off, searcher = played_move(0.0, Limits(time=2.0))
    assert off == chess.Move.from_uci("d1c2") and searcher.prover.vetoed == 0


def test_fixed_playouts_are_not_checked():
    move, searcher = played_move(None, Limits(nodes=200))
    assert move == chess.Move.from_uci("d1c2") and searcher.prover.vetoed == 0


def test_the_check_share_option_reaches_the_chess_player():
    game = get_game("chess")
    assert make_searcher(game, PlayerOptions(player="mcts")).prover.share == CHECK_SHARE
    assert make_searcher(game, PlayerOptions(player="mcts", check_share=0.5)).prover.share == 0.5
    # the gomoku threat solver's switch is not the chess check's
    assert make_searcher(game, PlayerOptions(player="mcts", threat_solver="off")).prover.share == CHECK_SHARE
