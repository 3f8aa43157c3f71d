"""Alpha-beta's win/draw/loss per mille (engine/games/chess/wdl.py, the searcher's reports)."""
from __future__ import annotations

import chess
import pytest

from engine.games.chess import ChessState
from engine.games.chess.alphabeta import ChessSearchBoard
from engine.games.chess.wdl import material, wdl_per_mille
from engine.search.alphabeta import AlphaBeta, AlphaBetaConfig
from engine.types import Limits, cp_from_value

START = chess.Board()
ENDING = chess.Board("8/5k2/8/3p4/3P4/8/5K2/8 w - - 0 1")


@pytest.mark.parametrize("board", [START, ENDING])
def test_wdl_sums_to_a_thousand_and_follows_the_score(board):
    rows = [wdl_per_mille(cp, board) for cp in range(-2000, 2001, 50)]
    assert all(sum(row) == 1000 and min(row) >= 0 for row in rows)
    wins, losses = [row[0] for row in rows], [row[2] for row in rows]
    assert wins == sorted(wins) and losses == sorted(losses, reverse=True)
    assert rows[0][2] > 950 and rows[-1][0] > 950           # twenty pawns: decided
    assert wdl_per_mille(0, board)[0] == wdl_per_mille(0, board)[2]


@pytest.mark.parametrize("cp", [30, 120, 400])
def test_wdl_is_the_same_seen_from_the_other_side(cp):
    win, draw, loss = wdl_per_mille(cp, START)
    assert wdl_per_mille(-cp, START) == (loss, draw, win)


def test_a_pawn_wins_less_often_in_a_bare_ending_than_with_the_pieces_on():
    """Fitted to our games: the ending's centipawns are larger for the same chances."""
    assert material(ENDING) < material(START)
    assert wdl_per_mille(150, ENDING)[0] < wdl_per_mille(150, START)[0]


def _searcher() -> AlphaBeta:
    return AlphaBeta(ChessSearchBoard.from_state, AlphaBetaConfig(hash_mb=8))


def test_alphabeta_reports_the_model_s_wdl_for_its_score():
    state = ChessState(chess.Board("rnb1kbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 3"))
    infos = []
    result = _searcher().search(state, Limits(depth=4), on_info=infos.append)
    assert infos and all(info.wdl is not None and sum(info.wdl) == 1000 for info in infos)
    assert result.info.wdl[0] > 900                  # a queen up
    expected = wdl_per_mille(cp_from_value(result.info.value), state.board)   # the score, to a centipawn
    assert all(abs(got - want) <= 2 for got, want in zip(result.info.wdl, expected))


def test_a_forced_mate_is_certain():
    state = ChessState(chess.Board("6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1"))   # Ra8 mates
    result = _searcher().search(state, Limits(depth=3))
    assert result.info.mate_plies == 1 and result.info.wdl == (1000, 0, 0)
