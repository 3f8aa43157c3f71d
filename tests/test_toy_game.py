"""A third game is a local change: tic-tac-toe, a package of rules plus a PROFILE
(tests/toy_games/tictactoe) and one registry line, plays through build_player with every
player and through `arena run` (ratings, stored games, exports, the HTML report), the
engine's and the arena's code untouched."""
from __future__ import annotations

import json
import random
import sqlite3

import pytest
from click.testing import CliRunner

import engine.games
from arena.cli import main as arena_main
from engine.games import game_class, game_names, get_game
from engine.players import PlayerOptions, build_player
from engine.types import Limits


@pytest.fixture
def tictactoe(monkeypatch):
    monkeypatch.setitem(engine.games._GAMES, "tictactoe", "toy_games.tictactoe")   # the registry line
    return get_game("tictactoe")


def _cells(game, x_cells, o_cells):
    """The state with X on x_cells and O on o_cells, played alternately."""
    state = game.initial_state()
    for i in range(len(x_cells) + len(o_cells)):
        state = state.play((x_cells if i % 2 == 0 else o_cells)[i // 2])
    return state


def test_the_registry_serves_the_toy_game(tictactoe):
    assert "tictactoe" in game_names() and game_class("tictactoe").name == "tictactoe"
    assert len(tictactoe.initial_state().legal_moves()) == 9


@pytest.mark.parametrize("player, limits", [("mcts", Limits(nodes=400)), ("uct", Limits(nodes=2000)),
                                            ("alphabeta", Limits(depth=9))])
def test_each_player_takes_the_win_and_blocks_the_loss(tictactoe, player, limits):
    built = build_player(tictactoe, PlayerOptions(player=player, seed=1))
    assert built.player == player and not any("unavailable" in note for note in built.notes)
    # X: 0 1 . / O: 3 4 .  X to move wins on 2 (and must not leave O's 5).
    win = _cells(tictactoe, [0, 1], [3, 4])
    assert built.searcher.search(win, limits).best_move == 2
    # O to move: X threatens 0 1 2 with 0, 1; O must block on 2.
    block = _cells(tictactoe, [0, 1, 8], [4, 6])
    assert block.to_play == 1
    assert built.searcher.search(block, limits).best_move == 2


def test_alphabeta_never_loses_and_draws_itself(tictactoe):
    searcher = build_player(tictactoe, PlayerOptions(player="alphabeta")).searcher
    state = tictactoe.initial_state()
    while state.outcome() is None:
        state = state.play(searcher.search(state, Limits(depth=9)).best_move)
    assert state.outcome().winner is None                          # perfect play: a draw
    rng = random.Random(3)
    for game_no in range(6):                                       # against random moves, either colour
        state, ours = tictactoe.initial_state(), game_no % 2
        while state.outcome() is None:
            moves = state.legal_moves()
            move = (searcher.search(state, Limits(depth=9)).best_move if state.to_play == ours
                    else moves[rng.randrange(len(moves))])
            state = state.play(move)
        assert state.outcome().winner in (None, ours)


def test_mcts_without_a_network_says_so_and_plays_the_uniform_evaluator(tictactoe):
    built = build_player(tictactoe, PlayerOptions(player="mcts", nodes=64))
    assert any("no tictactoe network" in note for note in built.notes)
    result = built.searcher.search(tictactoe.initial_state(), Limits(nodes=64))
    assert result.best_move in range(9)


def _arena(*args: str) -> str:
    result = CliRunner().invoke(arena_main, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def test_arena_runs_a_toy_game_tournament(tictactoe, tmp_path):
    db, games_file, html, js = (tmp_path / name for name in ("t.sqlite", "t.txt", "t.html", "t.json"))
    output = _arena("run", "--game", "tictactoe", "--engine", "alphabeta:depth=9", "--engine", "random",
                    "--engine", "mcts:nodes=200", "--games", "4", "--movetime", "0.5", "--seed", "2", "--db", str(db),
                    "--pgn-out", str(games_file))
    assert "Games: 12/12 (12 played now, 0 resumed)" in output and "Rank" in output
    rows = sqlite3.connect(db).execute("SELECT first, second, score, reason, forfeit, moves FROM games").fetchall()
    assert len(rows) == 12 and all(r[4] is None for r in rows), rows          # nobody forfeited
    for first, second, score, reason, _, moves in rows:
        state = tictactoe.initial_state()
        for text in json.loads(moves):                                      # every move legal, in order
            state = state.play(tictactoe.parse_move(state, text))
        assert state.outcome() is not None and reason == state.outcome().reason
        assert score == {None: 0.5, 0: 1.0, 1: 0.0}[state.outcome().winner]
        if "alphabeta" in (first, second):                                  # perfect play never loses
            assert (score if first == "alphabeta" else 1 - score) >= 0.5
    assert games_file.read_text().count("# alphabeta vs random") == 2
    _arena("report", str(db), "--html", str(html), "--json", str(js))
    assert "tictactoe" in html.read_text() and len(json.loads(js.read_text())) == 12


def test_arena_refuses_an_external_engine_for_a_game_without_a_protocol(tictactoe):
    result = CliRunner().invoke(arena_main, ["run", "--game", "tictactoe", "--engine", "random",
                                             "--engine", "name=x,cmd=python3,proto=uci"])
    assert result.exit_code != 0
    assert "protocol" in result.output and "Traceback" not in result.output
