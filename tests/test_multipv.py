"""MultiPV: alpha-beta searches the root k times per depth, MCTS reports its top k root
children, and the UCI server prints one `info … multipv i …` line per reported line."""
from __future__ import annotations

import itertools

import chess
import chess.engine
import pytest

from conftest import console_script, engine_env
from engine.evaluators import UniformEvaluator
from engine.players import PlayerOptions, make_searcher
from engine.games import get_game
from engine.games.chess.alphabeta import ChessSearchBoard
from engine.search.alphabeta import AlphaBeta, AlphaBetaConfig
from engine.search.mcts import MCTS, MCTSConfig
from engine.types import Limits, SearchInfo
from protocols.uci import UciServer, format_info

GAME = get_game("chess")
SICILIAN = "r1bqkb1r/1p3ppp/p1nppn2/8/3NP3/2N1B3/PPP1BPPP/R2QK2R w KQkq - 0 8"
KIWIPETE = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1"
MATE_IN_2 = "4kb1r/p2n1ppp/4q3/4p1B1/4P3/1Q6/PPP2PPP/2KR4 w k - 0 1"  # Morphy: 1.Qb8+ Nxb8 2.Rd8#
MATE_IN_1 = "k7/8/1K6/8/8/8/8/7R w - - 0 1"                         # Rh8#


def _alphabeta() -> AlphaBeta:
    return AlphaBeta(ChessSearchBoard.from_state, AlphaBetaConfig(hash_mb=8))


def _search(searcher, state, limits: Limits):
    infos: list[SearchInfo] = []
    result = searcher.search(state, limits, on_info=infos.append)
    return result, infos


def _by_depth(infos: list[SearchInfo]) -> list[list[SearchInfo]]:
    """Alpha-beta reports each completed depth as consecutive lines 1..k."""
    return [list(group) for _, group in itertools.groupby(infos, key=lambda info: info.depth)]


def _rank_key(info: SearchInfo) -> float:
    """Larger is better, mates ordered by distance (a nearer win first, a later loss first)."""
    if info.mate_plies is None:
        return info.value
    return 2.0 - info.mate_plies / 1000 if info.mate_plies > 0 else -2.0 - info.mate_plies / 1000


# ----------------------------------------------------------------------------- alpha-beta

@pytest.mark.parametrize("fen", [SICILIAN, KIWIPETE])
def test_alphabeta_multipv_3_reports_three_distinct_lines_per_depth_best_first(fen):
    state = GAME.state_from_fen(fen)
    result, infos = _search(_alphabeta(), state, Limits(depth=4, multipv=3))
    depths = _by_depth(infos)
    assert [group[0].depth for group in depths] == [1, 2, 3, 4]
    for group in depths:
        assert [info.multipv for info in group] == [1, 2, 3]
        firsts = [info.pv[0] for info in group]
        assert len(set(firsts)) == 3 and all(move in state.legal_moves() for move in firsts)
        keys = [_rank_key(info) for info in group]
        assert keys == sorted(keys, reverse=True)
    assert depths[-1][0].pv[0] == result.best_move
    assert result.info is not None and result.info.pv == depths[-1][0].pv


@pytest.mark.parametrize("fen", [SICILIAN, KIWIPETE])
def test_alphabeta_multipv_1_is_the_plain_search(fen):
    state = GAME.state_from_fen(fen)
    plain, plain_infos = _search(_alphabeta(), state, Limits(depth=4))
    one, one_infos = _search(_alphabeta(), state, Limits(depth=4, multipv=1))
    three, three_infos = _search(_alphabeta(), state, Limits(depth=4, multipv=3))
    assert one.best_move == plain.best_move
    # three lines search the root in another order and window, so a near tie may swap lines 1
    # and 2 (pruning depends on the window); the plain search's move is still among them
    last = _by_depth(three_infos)[-1]
    assert plain.best_move in [info.pv[0] for info in last] and three.best_move == last[0].pv[0]
    assert one.info is not None and plain.info is not None
    assert one.info.nodes == plain.info.nodes
    assert [(i.depth, i.multipv, i.value, i.pv) for i in one_infos] == \
        [(i.depth, 1, i.value, i.pv) for i in plain_infos]


def test_alphabeta_multipv_2_reports_the_mate_in_2_as_line_1():
    state = GAME.state_from_fen(MATE_IN_2)
    result, infos = _search(_alphabeta(), state, Limits(depth=4, multipv=2))
    last = _by_depth(infos)[-1]
    assert [info.multipv for info in last] == [1, 2]
    assert last[0].mate_plies == 3 and last[0].pv[0] == chess.Move.from_uci("b3b8")
    assert last[1].pv[0] != last[0].pv[0] and (last[1].mate_plies or 0) <= 0
    assert result.best_move == chess.Move.from_uci("b3b8")


def test_alphabeta_multipv_is_capped_at_the_root_moves():
    state = GAME.state_from_fen("7k/8/8/8/8/8/8/K7 w - - 0 1")  # bare kings: king moves only
    _, infos = _search(_alphabeta(), state, Limits(depth=3, multipv=50))
    assert all(len(group) == 3 for group in _by_depth(infos))  # Ka1: a2, b1, b2
    searchmoves = tuple(chess.Move.from_uci(m) for m in ("e2e4", "d2d4"))
    _, infos = _search(_alphabeta(), GAME.initial_state(), Limits(depth=3, multipv=3, searchmoves=searchmoves))
    for group in _by_depth(infos):
        assert sorted(info.pv[0].uci() for info in group) == ["d2d4", "e2e4"]


def test_alphabeta_multipv_stopped_mid_depth_reports_only_whole_depths():
    state = GAME.state_from_fen(SICILIAN)
    result, infos = _search(_alphabeta(), state, Limits(nodes=20000, multipv=4))
    groups = _by_depth(infos)
    assert groups and all([info.multipv for info in group] == [1, 2, 3, 4] for group in groups)
    assert result.info is not None and result.info.nodes >= 20000  # the limit ended it mid-depth
    assert result.best_move == groups[-1][0].pv[0]


# ----------------------------------------------------------------------------- MCTS and UCT

def _mcts_lines(searcher, state, limits: Limits):
    result, infos = _search(searcher, state, limits)
    final = infos[-limits.multipv:]
    return result, final


@pytest.mark.parametrize("game_name", ["chess", "gomoku"])
def test_mcts_multipv_reports_top_children_by_visits(game_name):
    game = get_game(game_name) if game_name == "chess" else get_game("gomoku", width=9, height=9)
    state = game.initial_state()
    searcher = MCTS(UniformEvaluator(), MCTSConfig(seed=1))
    result, lines = _mcts_lines(searcher, state, Limits(nodes=300, multipv=3))
    assert [info.multipv for info in lines] == [1, 2, 3]
    legal = list(state.legal_moves())
    firsts = [info.pv[0] for info in lines]
    assert len(set(firsts)) == 3 and all(move in legal for move in firsts)
    assert firsts[0] == result.best_move
    assert result.visits is not None
    visits = [result.visits[legal.index(move)] for move in firsts]
    assert visits == sorted(visits, reverse=True)
    assert max(result.visits) == visits[0]
    for info in lines:      # each pv is a legal line from the root
        s = state
        for move in info.pv:
            assert move in s.legal_moves()
            s = s.play(move)


def test_mcts_multipv_periodic_reports_come_in_whole_groups(monkeypatch):
    monkeypatch.setattr("engine.search.mcts.INFO_INTERVAL", 0.0)
    searcher = MCTS(UniformEvaluator(), MCTSConfig(seed=1, leaves_per_batch=4))
    _, infos = _search(searcher, GAME.initial_state(), Limits(nodes=64, multipv=2))
    assert len(infos) > 2 and len(infos) % 2 == 0
    assert [info.multipv for info in infos] == [1, 2] * (len(infos) // 2)


def test_mcts_multipv_line_values_are_from_the_root_side():
    state = GAME.state_from_fen(MATE_IN_1)
    result, lines = _mcts_lines(MCTS(UniformEvaluator(), MCTSConfig(seed=1)), state, Limits(nodes=100, multipv=2))
    assert result.best_move == chess.Move.from_uci("h1h8")
    assert lines[0].pv[0] == result.best_move and lines[0].mate_plies == 1 and lines[0].value == 1.0
    assert lines[1].pv[0] != result.best_move and -1.0 <= lines[1].value <= 1.0


def test_mcts_multipv_respects_searchmoves_and_caps_k():
    searchmoves = tuple(chess.Move.from_uci(m) for m in ("a2a3", "h2h4"))
    searcher = MCTS(UniformEvaluator(), MCTSConfig(seed=1))
    result, infos = _search(searcher, GAME.initial_state(), Limits(nodes=100, multipv=5, searchmoves=searchmoves))
    final = infos[-2:]
    assert [info.multipv for info in final] == [1, 2] and max(info.multipv for info in infos) == 2
    assert sorted(info.pv[0].uci() for info in final) == ["a2a3", "h2h4"]
    assert result.best_move == final[0].pv[0]


def test_uct_multipv_reports_distinct_legal_moves():
    searcher = make_searcher(GAME, PlayerOptions(player="uct", seed=1, nodes=200))
    result, lines = _mcts_lines(searcher, GAME.initial_state(), Limits(nodes=200, multipv=3))
    legal = GAME.initial_state().legal_moves()
    assert [info.multipv for info in lines] == [1, 2, 3]
    assert len({info.pv[0] for info in lines}) == 3 and all(info.pv[0] in legal for info in lines)
    assert lines[0].pv[0] == result.best_move


# ----------------------------------------------------------------------------- UCI

def test_format_info_names_line_1_only_when_asked():
    info = SearchInfo(depth=3, seldepth=3, value=0.0, nodes=10, time=0.1)
    assert "multipv" not in format_info(info, GAME.initial_state())
    assert " multipv 1 " in format_info(info, GAME.initial_state(), show_multipv=True)
    line = format_info(SearchInfo(depth=3, seldepth=3, value=0.0, nodes=10, time=0.1, multipv=2),
                       GAME.initial_state())
    assert " multipv 2 " in line


def test_uci_server_passes_multipv_and_prints_a_line_per_pv():
    lines: list[str] = []
    server = UciServer(PlayerOptions(), lines.append, searcher=_alphabeta())
    for command in ("setoption name MultiPV value 2", f"position fen {MATE_IN_2}", "go depth 4"):
        server.handle(command)
    assert server.engine is not None
    server.engine.wait(30)
    infos = [line.split() for line in lines if line.startswith("info depth")]
    assert not any("error" in line for line in lines)
    last = [tokens for tokens in infos if tokens[2] == "4"]
    assert [tokens[tokens.index("multipv") + 1] for tokens in last] == ["1", "2"]
    assert "score mate 2" in " ".join(last[0]) and last[0][last[0].index("pv") + 1] == "b3b8"
    assert lines[-1].startswith("bestmove b3b8")
    seen = len(lines)
    server.handle("setoption name MultiPV value 1")
    server.handle("go depth 2")
    server.engine.wait(30)
    assert lines[-1].startswith("bestmove ") and len(lines) > seen + 1
    assert not any("multipv" in line for line in lines[seen:])


def test_python_chess_analyse_with_multipv_3():
    """Alpha-beta's depth-limited MultiPV (plyzero-uci's default player is mcts once a chess
    network ships, and depth means nothing to mcts)."""
    board = chess.Board(SICILIAN)
    command = [console_script("engine"), "uci", "--player", "alphabeta"]
    with chess.engine.SimpleEngine.popen_uci(command, env=engine_env()) as engine:
        infos = engine.analyse(board, chess.engine.Limit(depth=4), multipv=3)
    assert len(infos) == 3
    firsts = [info["pv"][0] for info in infos]
    assert len(set(firsts)) == 3 and all(move in board.legal_moves for move in firsts)
    assert [info["multipv"] for info in infos] == [1, 2, 3]
    assert all(info["depth"] == 4 for info in infos)
    scores = [info["score"].relative for info in infos]
    assert scores == sorted(scores, reverse=True)
