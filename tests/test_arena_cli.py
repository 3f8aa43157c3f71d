"""Bad input stops `arena` with one `Error: ...` line before any game starts."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from arena.cli import main

FAKES = Path(__file__).parent / "fakes"


@pytest.fixture(autouse=True)
def _no_unbuffered(monkeypatch):
    monkeypatch.delenv("PYTHONUNBUFFERED", raising=False)


def fails(args: list[str], match: str, tmp_path: Path) -> None:
    db = tmp_path / "never.sqlite"
    result = CliRunner().invoke(main, args + (["--db", str(db)] if args[0] == "run" else []))
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert result.exit_code != 0, result.output
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.output
    assert match in lines[0], lines[0]
    assert not db.exists() or db.stat().st_size == 0 or "games" not in db.read_bytes().decode("latin-1")


def test_malformed_toml(tmp_path):
    bad = tmp_path / "t.toml"
    bad.write_text("game = 'chess'\nengine = [\n")
    fails(["run", "--config", str(bad)], "malformed TOML", tmp_path)


def test_unknown_setting_in_toml(tmp_path):
    bad = tmp_path / "t.toml"
    bad.write_text("game = 'chess'\ncolour = 'red'\n")
    fails(["run", "--config", str(bad), "--engine", "random", "--engine", "random"], "unknown setting", tmp_path)


def test_engine_command_that_does_not_exist(tmp_path):
    fails(["run", "--engine", "name=x,cmd=/no/such/engine", "--engine", "random"], "not found", tmp_path)
    fails(["run", "--engine", "cmd=no-such-engine-on-path", "--engine", "random"], "not found", tmp_path)


def test_unknown_player_and_setting(tmp_path):
    fails(["run", "--engine", "stockfish9000", "--engine", "random"], "unknown player", tmp_path)
    fails(["run", "--engine", "alphabeta:depht=3", "--engine", "random"], "unknown setting 'depht'", tmp_path)
    fails(["run", "--engine", "random"], "at least two engines", tmp_path)


def test_unknown_uci_option_is_caught_before_games(tmp_path):
    cmd = f"'{sys.executable} {FAKES / 'uci_fake.py'}'"
    fails(["run", "--game", "chess", "--engine", f"name=f,cmd={cmd},option.NoSuchOption=1", "--engine", "random"],
          "NoSuchOption", tmp_path)


def test_brain_refusing_a_board_size(tmp_path):
    cmd = f"'{sys.executable} {FAKES / 'gomocup_fake.py'} bigboard'"
    fails(["run", "--game", "gomoku", "--board", "9,15", "--engine", f"name=f,cmd={cmd}", "--engine", "random"],
          "board 15x15", tmp_path)


def test_opening_files_with_illegal_moves(tmp_path):
    pgn = tmp_path / "o.pgn"
    pgn.write_text("1. e4 e5 2. Ke3 *\n")
    fails(["run", "--game", "chess", "--openings", str(pgn), "--engine", "random", "--engine", "random"],
          "o.pgn", tmp_path)
    stones = tmp_path / "g.txt"
    stones.write_text("0,0 1,1\n0,0 12,0\n")
    fails(["run", "--game", "gomoku", "--board", "15", "--openings", str(stones), "--engine", "random",
           "--engine", "random"], "g.txt:2", tmp_path)
    fails(["run", "--openings", str(tmp_path / "missing.epd"), "--engine", "random", "--engine", "random"],
          "not found", tmp_path)


def test_board_size_and_limits_out_of_range(tmp_path):
    fails(["run", "--game", "gomoku", "--board", "30", "--engine", "random", "--engine", "random"],
          "board size 30 outside 5..26", tmp_path)
    fails(["run", "--game", "gomoku", "--board", "9,x", "--engine", "random", "--engine", "random"],
          "board size", tmp_path)
    fails(["run", "--tc", "ten minutes", "--engine", "random", "--engine", "random"], "time control", tmp_path)
    fails(["run", "--sprt", "elo0=5 elo1=0", "--engine", "random", "--engine", "random"], "sprt", tmp_path)
    fails(["run", "--game", "gomoku", "--tc", "10+1", "--engine", "random", "--engine", "random"],
          "increment", tmp_path)
    fails(["run", "--game", "chess", "--suspend", "--engine", "random", "--engine", "random"],
          "the Gomocup judge's settings: chess speaks uci", tmp_path)


def test_ratings_and_report_need_a_database(tmp_path):
    fails(["ratings", str(tmp_path / "missing.sqlite")], "no such database", tmp_path)
    fails(["report", str(tmp_path / "missing.sqlite")], "no such database", tmp_path)
    junk = tmp_path / "junk.sqlite"
    junk.write_text("not a database at all" * 100)
    fails(["ratings", str(junk)], "not an arena database", tmp_path)


def test_even_openings_need_one_board_with_a_book(tmp_path):
    fails(["run", "--game", "gomoku", "--board", "15,20", "--openings", "even", "--engine", "random",
           "--engine", "random"], "judged per board", tmp_path)
    fails(["run", "--game", "gomoku", "--rule", "caro", "--board", "15", "--openings", "even", "--engine", "random",
           "--engine", "random"], "no 'even' openings for caro on 15x15", tmp_path)
    fails(["run", "--game", "chess", "--openings", "even", "--engine", "random", "--engine", "random"],
          "openings file 'even' not found", tmp_path)
