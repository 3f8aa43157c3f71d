"""Arena building blocks: clocks, configuration, openings, schedule, store, exports."""
from __future__ import annotations

import sqlite3
import sys

import chess
import chess.pgn
import pytest

from arena.clock import Clock, MoveLimits, TimeControl, TimeControlError, parse_tc
from arena.config import Adjudication, ConfigError, build_config, parse_engine
from arena.export import csv_text, games_text, json_text
from arena.openings import OpeningError, opening_for, start_position, suite_for
from arena.records import GameRecord
from arena.referee import Adjudicator
from arena.scheduler import build_schedule, load_openings, sprt_from_records
from arena.store import Store
from engine.games import get_game
from engine.games.chess.openings import builtin_suite as builtin_chess_suite
from engine.games.openings import OpeningBook
from engine.games.chess.openings import read_suite as load_chess_openings
from engine.games.gomoku.openings import generate_opening as generate_gomoku_opening
from engine.games.gomoku.openings import opening_moves


def load_gomoku_openings(path, boards):
    return suite_for("gomoku", path, boards, "freestyle")


def gomoku_moves(opening, width, height):
    return opening_moves(opening, get_game("gomoku", width=width, height=height))


def test_parse_time_controls():
    assert parse_tc("40/60+0.6") == TimeControl(base=60, increment=0.6, moves=40)
    assert parse_tc("10+0.1") == TimeControl(base=10, increment=0.1)
    assert parse_tc("1:30") == TimeControl(base=90)
    for bad in ("", "abc", "10+", "0", "/10", "40/0+1"):
        with pytest.raises(TimeControlError):
            parse_tc(bad)


def test_clock_charges_increments_and_refills_every_n_moves():
    clock = Clock(MoveLimits(tc=TimeControl(base=10, increment=1, moves=2), margin=0.5))
    assert clock.budget() == 10 and clock.moves_to_go() == 2
    assert clock.charge(3.0)
    assert clock.remaining == pytest.approx(8.0) and clock.moves_to_go() == 1
    assert clock.charge(4.0)                    # second move: +increment and +base
    assert clock.remaining == pytest.approx(15.0) and clock.moves_to_go() == 2
    assert not clock.charge(15.6)               # past budget + margin: the flag falls
    movetime = Clock(MoveLimits(movetime=0.1, margin=0.2))
    assert movetime.deadline() == pytest.approx(0.3)
    assert movetime.charge(0.29) and not movetime.charge(0.31)
    assert Clock(MoveLimits(depth=3, timeout=7)).deadline() == pytest.approx(8.0)


def test_parse_engine_forms():
    spec = parse_engine("alphabeta:depth=3,hash=16")
    assert spec.player == "alphabeta" and spec.depth == 3 and dict(spec.settings) == {"hash": "16"}
    argv = spec.argv("chess")
    assert argv[:3] == [sys.executable, "-m", "engine.cli"] and argv[3:6] == ["uci", "--player", "alphabeta"]
    assert "--threads" in argv and argv[argv.index("--threads") + 1] == "1"
    default = parse_engine("auto")             # the shipped default, as plyzero-uci plays with no options
    assert default.name == "auto" and default.argv("gomoku")[3:6] == ["gomocup", "--player", "auto"]
    with pytest.raises(ConfigError, match="unknown player 'best'.*auto"):
        parse_engine("best")
    ext = parse_engine(f"name=sf,cmd='{sys.executable} -u x.py',proto=uci,option.Hash=16")
    assert ext.name == "sf" and ext.command == (sys.executable, "-u", "x.py")
    assert ext.options == (("Hash", "16"),) and ext.protocol == "uci"


def test_config_flags_override_toml_and_defaults():
    toml = {"game": "gomoku", "boards": [9, 13], "games": 4, "limits": {"movetime": 0.5},
            "engine": [{"player": "random"}, {"player": "random", "name": "other", "seed": 3}]}
    config = build_config(toml, {"games": 6, "board": "9"})
    assert config.games == 6 and config.boards == (9,) and config.limits.movetime == 0.5
    assert [e.name for e in config.engines] == ["random", "other"]
    chess_config = build_config({}, {"engine": ("random", "random")})
    assert [e.name for e in chess_config.engines] == ["random", "random-2"]
    assert chess_config.limits.tc == TimeControl(10, 0.1)        # a default clock
    assert chess_config.fingerprint() == build_config({}, {"engine": ("random", "random"), "games": 9,
                                                           "concurrency": 1}).fingerprint()
    with pytest.raises(ConfigError, match="depth"):
        build_config({}, {"game": "gomoku", "engine": ("random", "alphabeta:depth=2")})
    with pytest.raises(ConfigError, match="unknown setting"):
        build_config({"colour": "red", "engine": ["random", "random"]}, {})


def test_builtin_chess_suite_is_legal_and_varied():
    suite = builtin_chess_suite()
    assert 20 <= len(suite) <= 50
    assert len({o.fen for o in suite}) == len(suite)
    for opening in suite:
        board = chess.Board(opening.fen)
        assert board.is_valid() and not board.is_game_over() and board.ply() >= 0
        assert len(board.piece_map()) >= 28    # a few plies deep, little material gone


def test_chess_opening_files(tmp_path):
    pgn = tmp_path / "o.pgn"
    pgn.write_text('[Opening "x"]\n\n1. e4 e5 2. Nf3 *\n\n[Opening "y"]\n\n1. d4 d5 *\n')
    openings = load_chess_openings(str(pgn))
    assert [o.moves for o in openings] == [("e2e4", "e7e5", "g1f3"), ("d2d4", "d7d5")]
    bad = tmp_path / "bad.pgn"
    bad.write_text("1. e4 e5 2. Ke3 *\n")
    with pytest.raises(OpeningError, match="bad.pgn"):
        load_chess_openings(str(bad))
    fens = tmp_path / "fens.epd"
    fens.write_text("r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3\n"
                    "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - id \"e4\";\n")
    assert [(o.fen, o.name) for o in load_chess_openings(str(fens))] == [
        ("r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3", "fens.epd:1"),
        ("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1", "e4")]
    epd = tmp_path / "bad.epd"
    epd.write_text("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR x KQkq -\n")
    with pytest.raises(OpeningError):
        load_chess_openings(str(epd))


def test_gomoku_openings_relative_to_centre(tmp_path):
    path = tmp_path / "g.txt"
    path.write_text("# comment\n0,0 1,1\n-1,0, 0,-1, 2,2\n")
    openings = load_gomoku_openings(str(path), [9, 15])
    assert openings[0].stones == ((0, 0), (1, 1))
    assert gomoku_moves(openings[0], 9, 9) == [4 * 9 + 4, 5 * 9 + 5]
    path.write_text("0,0 9,9\n")
    with pytest.raises(OpeningError, match="9,9"):
        load_gomoku_openings(str(path), [15])
    path.write_text("0,0 0,0\n")
    with pytest.raises(OpeningError, match="stone 0,0 on 9x9: illegal"):
        load_gomoku_openings(str(path), [9])


def test_generated_gomoku_openings_are_seeded_and_balanced():
    a = [generate_gomoku_opening(7, i) for i in range(50)]
    assert a == [generate_gomoku_opening(7, i) for i in range(50)]
    assert a != [generate_gomoku_opening(8, i) for i in range(50)]
    for opening in a:
        assert 2 <= len(opening.stones) <= 4
        assert all(abs(dx) <= 2 and abs(dy) <= 2 for dx, dy in opening.stones)
        gomoku_moves(opening, 5, 5)             # fits even the smallest board


def test_schedule_is_deterministic_pairs_colours_and_openings():
    config = build_config({}, {"game": "gomoku", "board": "9,13", "games": 3,
                               "engine": ("random", "random", "random")})
    jobs = build_schedule(config, load_openings(config))
    assert len(jobs) == 3 * 2 * 3                      # 3 pairings x 2 boards x 3 games
    assert len({j.key for j in jobs}) == len(jobs)
    assert [j.key for j in jobs] == [j.key for j in build_schedule(config, load_openings(config))]
    first, second = jobs[0], jobs[1]
    assert (first.first, first.second) == (second.second, second.first)
    assert first.opening == second.opening and first.pair == second.pair == 0
    gauntlet = build_config({}, {"game": "gomoku", "games": 2, "format": "gauntlet",
                                 "engine": ("random", "random", "random")})
    jobs = build_schedule(gauntlet, None)
    assert all("random" in (j.first.name, j.second.name) for j in jobs) and len(jobs) == 4


def _record(key: str, first: str, second: str, score: float, pair: int = 0, game: str = "gomoku") -> GameRecord:
    moves = ("4,4", "5,5") if game == "gomoku" else ("e2e4", "e7e5")
    return GameRecord(key=key, seq=0, pair=pair, game=game, board="9x9" if game == "gomoku" else "",
                      rule="freestyle", first=first, second=second, opening_name="o", opening="0,0",
                      start_fen=None, moves=moves, opening_plies=1, score=score, reason="test",
                      times=(0.5,), infos=({"depth": 2, "cp": 13},))


def test_store_commits_each_game_and_refuses_duplicates(tmp_path):
    db = str(tmp_path / "r.sqlite")
    with Store(db) as store:
        tid = store.tournament("fp", "gomoku", "{}", [("a", "spec a"), ("b", "spec b")])
        assert store.tournament("fp", "gomoku", "{}", []) == tid
        assert store.add(tid, _record("k1", "a", "b", 1.0))
        assert not store.add(tid, _record("k1", "a", "b", 0.0))
        # another connection sees the game at once: it was committed
        assert sqlite3.connect(db).execute("SELECT COUNT(*) FROM games").fetchone()[0] == 1
        assert store.finished_keys() == {"k1"} and store.players() == ["a", "b"]
        record = store.records()[0]
        assert record.moves == ("4,4", "5,5") and record.infos == ({"depth": 2, "cp": 13},)
        assert store.results()[0].score == 1.0


def test_exports():
    chess_game = _record("c", "w", "b", 0.5, game="chess")
    game = chess.pgn.read_game(__import__("io").StringIO(games_text([chess_game])))
    assert game.headers["White"] == "w" and game.headers["Result"] == "1/2-1/2"
    assert [m.uci() for m in game.mainline_moves()] == ["e2e4", "e7e5"]
    text = games_text([_record("g", "x", "y", 1.0)])
    assert text.startswith("Piskvorky 9x9") and "5,5,0\n6,6,500" in text
    assert csv_text([chess_game]).splitlines()[1].startswith("0,chess,,freestyle,w,b,1/2-1/2")
    assert '"result": "1-0"' in json_text([_record("g", "x", "y", 1.0)])


def test_sprt_uses_pentanomial_pairs():
    config = build_config({}, {"game": "gomoku", "engine": ("random", "alphabeta"),
                               "sprt": "elo0=0 elo1=50 alpha=0.05 beta=0.05"})
    records = []
    for k in range(30):   # a wins both games of every pair
        records += [_record(f"{k}a", "a", "b", 1.0, k), _record(f"{k}b", "b", "a", 0.0, k)]
    status = sprt_from_records(records, "a", "b", config)
    assert status is not None and status.decision == "H1"
    status = sprt_from_records(records, "b", "a", config)
    assert status is not None and status.decision == "H0"


def test_adjudication_resign_draw_and_max_moves():
    resign = Adjudicator(Adjudication(resign_movecount=2, resign_score=500, max_moves=None), 0)
    assert resign.verdict(1, 1, {"cp": -600}) is None
    assert resign.verdict(2, 0, {"cp": 600}) is None
    assert resign.verdict(3, 1, {"mate": -3}) == (1.0, "adjudication: resign")   # Black gives up
    draw = Adjudicator(Adjudication(draw_movenumber=1, draw_movecount=2, draw_score=10, max_moves=None), 0)
    results = [draw.verdict(ply + 1, ply % 2, {"cp": 5}) for ply in range(4)]
    assert results[:3] == [None] * 3 and results[3] == (0.5, "adjudication: draw")
    assert Adjudicator(Adjudication(draw_movenumber=1, draw_movecount=1), 0).verdict(1, 0, {}) is None
    late = Adjudicator(Adjudication(draw_movenumber=30, draw_movecount=1, draw_score=10, max_moves=None), 0)
    assert [late.verdict(ply, ply % 2, {"cp": 0}) for ply in (56, 57)] == [None, None]   # move 29
    assert late.verdict(58, 0, {"cp": 0}) == (0.5, "adjudication: draw")                # move 30 begins
    assert Adjudicator(Adjudication(max_moves=2), 0).verdict(4, 1, {}) == (0.5, "adjudication: max moves")
    assert Adjudicator(Adjudication(max_moves=3), 0).verdict(4, 1, {}) is None
    # a stone game fills its board and ends by itself: no move cap
    assert Adjudicator(Adjudication(max_moves=2), 0, board_fills=True).verdict(4, 1, {}) is None


def test_openings_come_from_the_games_book(tmp_path):
    suite = suite_for("chess", None, (), "freestyle")
    assert suite == builtin_chess_suite() and suite_for("gomoku", None, (15,), "freestyle") is None
    assert opening_for("chess", suite, 5, 3) == opening_for("chess", suite, 5, 3) in suite
    generated = opening_for("gomoku", None, 5, 3, 3)
    assert generated == generate_gomoku_opening(5, 3, 3) and len(generated.stones) == 3
    state, moves = start_position(get_game("gomoku", width=9, height=9), generated)
    assert state.ply == 0 and len(moves) == 3
    pgn = tmp_path / "o.pgn"
    pgn.write_text("1. e4 e5 *\n")
    state, moves = start_position(get_game("chess"), load_chess_openings(str(pgn))[0])
    assert [m.uci() for m in moves] == ["e2e4", "e7e5"] and state.ply == 0
    with pytest.raises(OpeningError, match="no opening files"):     # a game without a book
        OpeningBook().load(str(pgn), (), "freestyle")
    assert OpeningBook().start(get_game("gomoku", width=9, height=9), OpeningBook().generate(1, 2, 3))[1] == []
