"""Misbehaving engines lose with the right reason, get restarted, and the tournament finishes;
a tournament killed with SIGKILL resumes to exactly the planned games."""
from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from arena.cli import main
from conftest import console_script, engine_env

FAKES = Path(__file__).parent / "fakes"


@pytest.fixture(autouse=True)
def _no_unbuffered(monkeypatch):
    monkeypatch.delenv("PYTHONUNBUFFERED", raising=False)


def write_config(path: Path, game: str, fake: str, mode: str, when: int, games: int = 2, **extra) -> Path:
    script = FAKES / ("uci_fake.py" if game == "chess" else "gomocup_fake.py")
    lines = [f'game = "{game}"', f"games = {games}", "seed = 2", "concurrency = 2"]
    if game == "gomoku":
        lines.append("board = 9")
    lines += [f"{k} = {json.dumps(v)}" for k, v in extra.items()]
    lines += ["[limits]", "movetime = 0.05", "margin = 0.3",
              "[[engine]]", f'name = "{fake}"', f"cmd = {json.dumps([sys.executable, str(script), mode, str(when)])}",
              "[[engine]]", 'player = "random"']
    path.write_text("\n".join(lines) + "\n")
    return path


EXPECTED = {"crash": "crash", "hang": "time forfeit", "illegal": "illegal move", "garbage": "malformed move"}


@pytest.mark.parametrize("game", ["chess", "gomoku"])
@pytest.mark.parametrize("mode", sorted(EXPECTED))
def test_faulty_engine_loses_with_reason_and_is_restarted(tmp_path, game, mode):
    config = write_config(tmp_path / "t.toml", game, "fake", mode, when=3)
    db = tmp_path / "f.sqlite"
    result = CliRunner().invoke(main, ["run", "--config", str(config), "--db", str(db), "--no-check"])
    assert result.exit_code == 0, result.output
    assert "Games: 2/2" in result.output
    rows = sqlite3.connect(db).execute(
        "SELECT first, second, score, reason, forfeit, moves, opening_plies FROM games ORDER BY seq").fetchall()
    assert len(rows) == 2
    for first, second, score, reason, forfeit, moves, opening_plies in rows:
        assert forfeit == "fake"
        assert reason.startswith(f"fake {EXPECTED[mode]}"), reason
        assert score == (0.0 if first == "fake" else 1.0)
        # the fault came on the fake's third move request of this game (after two good moves and
        # the opponent's two or three), so every game got a fresh process
        assert len(json.loads(moves)) - opening_plies in (4, 5), (moves, first)


def test_new_game_housekeeping_is_not_charged_to_the_first_move(tmp_path):
    """ucinewgame and isready go before the clock starts, as in cutechess and fastchess: a
    fake that spends 0.6 s over each ucinewgame, at 0.05 s a move with a 0.3 s margin,
    loses no game on time, and none of its moves is timed over the margin."""
    config = write_config(tmp_path / "t.toml", "chess", "fake", "slownew", when=1, games=2)
    config.write_text(config.read_text().replace('"slownew", "1"]', '"slownew", "1", "600"]'))
    db = tmp_path / "n.sqlite"
    result = CliRunner().invoke(main, ["run", "--config", str(config), "--db", str(db), "--no-check"])
    assert result.exit_code == 0, result.output
    rows = sqlite3.connect(db).execute("SELECT first, forfeit, reason, times FROM games").fetchall()
    assert len(rows) == 2
    for first, forfeit, reason, times in rows:
        assert forfeit is None, reason
        own = json.loads(times)[0 if first == "fake" else 1::2]
        assert own and max(own) < 0.35, own


def test_engine_that_cannot_start_loses_and_tournament_finishes(tmp_path):
    config = tmp_path / "t.toml"
    config.write_text('game = "gomoku"\nboard = 9\ngames = 2\n[limits]\nmovetime = 0.05\n'
                      f'[[engine]]\nname = "dead"\ncmd = {json.dumps([sys.executable, "-c", "import sys; sys.exit(1)"])}\n'
                      '[[engine]]\nplayer = "random"\n')
    db = tmp_path / "d.sqlite"
    result = CliRunner().invoke(main, ["run", "--config", str(config), "--db", str(db), "--no-check"])
    assert result.exit_code == 0, result.output
    rows = sqlite3.connect(db).execute("SELECT forfeit, reason FROM games").fetchall()
    assert len(rows) == 2 and all(f == "dead" for f, _ in rows)


def test_resume_after_sigkill_loses_and_replays_nothing(tmp_path):
    planned = 10
    config = write_config(tmp_path / "t.toml", "gomoku", "slow", "ok", when=1, games=planned)
    # the fake sleeps 40 ms per move, so games take a while and the kill lands mid-tournament
    text = config.read_text().replace('"ok", "1"]', '"ok", "1", "40"]')
    config.write_text(text.replace("concurrency = 2", "concurrency = 1"))
    db = tmp_path / "k.sqlite"
    argv = [console_script("arena"), "run", "--config", str(config), "--db", str(db), "--no-check"]
    proc = subprocess.Popen(argv, env=engine_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        stored = 0
        while time.monotonic() < deadline and proc.poll() is None:
            if db.exists():
                try:
                    stored = sqlite3.connect(db).execute("SELECT COUNT(*) FROM games").fetchone()[0]
                except sqlite3.OperationalError:
                    stored = 0
                if stored >= 2:
                    break
            time.sleep(0.05)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)   # the arena and its engines, at once
        proc.wait(timeout=10)
    before = sqlite3.connect(db).execute("SELECT job_key, moves, score FROM games ORDER BY seq").fetchall()
    assert 2 <= len(before) < planned, "the arena finished before the kill; the test proves nothing"
    rerun = subprocess.run(argv, env=engine_env(), capture_output=True, text=True, timeout=300)
    assert rerun.returncode == 0, rerun.stderr
    assert f"Games: {planned}/{planned} ({planned - len(before)} played now, {len(before)} resumed)" in rerun.stdout
    after = sqlite3.connect(db).execute("SELECT job_key, moves, score FROM games ORDER BY seq").fetchall()
    assert len(after) == planned and len({k for k, _, _ in after}) == planned
    assert after[:len(before)] == before or set(before) <= set(after)


def test_a_brains_figures_come_from_all_its_messages_for_the_move(tmp_path):
    # the "eval" fake prints Rapfi's figures line, then a Bestline: both are read, per move
    config = write_config(tmp_path / "t.toml", "gomoku", "fake", "eval", when=1)
    db = tmp_path / "f.sqlite"
    result = CliRunner().invoke(main, ["run", "--config", str(config), "--db", str(db), "--no-check"])
    assert result.exit_code == 0, result.output
    for first, infos in sqlite3.connect(db).execute("SELECT first, infos FROM games"):
        fake_moves = json.loads(infos)[0 if first == "fake" else 1::2]
        assert len(fake_moves) >= 3
        for info in fake_moves:
            assert info["depth"] == 3 and info["nodes"] == 10 and "eval" in info
        # Eval is 40 * (own stones - opponent's) as the fake saw them, move by move, never a stale copy
        assert [info["eval"] for info in fake_moves[:2]] == ([0, 0] if first == "fake" else [-40, -40])
