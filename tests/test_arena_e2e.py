"""`arena run | ratings | report` end to end with our real engine processes (random vs alphabeta)."""
from __future__ import annotations

import json
import re
import sqlite3

import chess.pgn
import pytest
from click.testing import CliRunner

from arena.cli import main


@pytest.fixture(autouse=True)
def _no_unbuffered(monkeypatch):
    monkeypatch.delenv("PYTHONUNBUFFERED", raising=False)   # engines must flush by themselves


def arena(*args: str) -> str:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def games_in(db) -> list[tuple]:
    return sqlite3.connect(db).execute(
        "SELECT board, first, second, score, reason, forfeit, moves FROM games ORDER BY seq").fetchall()


def test_gomoku_two_board_sizes(tmp_path):
    db, out = tmp_path / "g.sqlite", tmp_path / "g.txt"
    output = arena("run", "--game", "gomoku", "--board", "9,13", "--engine", "random", "--engine", "alphabeta",
                   "--games", "2", "--movetime", "0.05", "--seed", "5", "--concurrency", "2",
                   "--db", str(db), "--pgn-out", str(out))
    assert "Games: 4/4 (4 played now, 0 resumed)" in output
    for title in ("All games: 4 games, anchor alphabeta", "Board 9x9: 2 games", "Board 13x13: 2 games"):
        assert title in output
    assert re.search(r"Score of random vs alphabeta: \d+ - \d+ - \d+", output)
    assert "First player scored" in output
    rows = games_in(db)
    assert sorted(r[0] for r in rows) == ["13x13", "13x13", "9x9", "9x9"]
    assert all(r[5] is None for r in rows), rows            # nobody forfeited
    assert sum(r[3] if r[1] == "alphabeta" else 1 - r[3] for r in rows) >= 3  # alphabeta wins (nearly) all
    text = out.read_text()
    assert text.count("Piskvorky 9x9") == 2 and text.count("Piskvorky 13x13") == 2
    # the same command again resumes: nothing replayed
    again = arena("run", "--game", "gomoku", "--board", "9,13", "--engine", "random", "--engine", "alphabeta",
                  "--games", "2", "--movetime", "0.05", "--seed", "5", "--db", str(db))
    assert "Games: 4/4 (0 played now, 4 resumed)" in again
    assert games_in(db) == rows


def test_chess_match_writes_pgn_and_reports(tmp_path):
    db, pgn = tmp_path / "c.sqlite", tmp_path / "c.pgn"
    output = arena("run", "--game", "chess", "--engine", "random", "--engine", "alphabeta:depth=1",
                   "--games", "2", "--seed", "3", "--maxmoves", "60", "--db", str(db), "--pgn-out", str(pgn))
    assert "Games: 2/2" in output and "Rank" in output and "Elo difference:" in output
    rows = games_in(db)
    assert len(rows) == 2 and all(r[5] is None for r in rows)
    with open(pgn) as handle:
        games = [chess.pgn.read_game(handle) for _ in range(2)]
    for game, row in zip(games, rows):
        assert game.headers["White"] == row[1] and game.headers["Result"] in ("1-0", "0-1", "1/2-1/2")
        assert game.headers["Result"] == {1.0: "1-0", 0.0: "0-1", 0.5: "1/2-1/2"}[row[3]]
        board = game.end().board()
        assert (board.is_checkmate() or board.is_game_over(claim_draw=True) or "adjudication" in row[4]
                or "repetition" in row[4])
    assert games[0].headers["FEN"] == games[1].headers["FEN"]          # one opening, both colours
    assert games[0].headers["White"] == games[1].headers["Black"]

    ratings_json = json.loads(arena("ratings", str(db), "--format", "json", "--anchor", "random"))
    assert ratings_json[0]["anchor"] == "random" and ratings_json[0]["games"] == 2
    assert {p["name"] for p in ratings_json[0]["players"]} == {"random", "alphabeta"}
    assert "| Rank | Name |" in arena("ratings", str(db), "--format", "markdown")
    bad = CliRunner().invoke(main, ["ratings", str(db), "--anchor", "nobody"])
    assert bad.exit_code != 0 and bad.output.strip().startswith("Error: anchor 'nobody' is not a player")
    html_path, csv_path = tmp_path / "r.html", tmp_path / "r.csv"
    arena("report", str(db), "--html", str(html_path), "--csv", str(csv_path))
    page = html_path.read_text()
    assert page.startswith("<!DOCTYPE html>") and "<svg" in page and "games-data" in page
    assert "white-knight" in page                           # python-chess piece glyphs inline
    assert not re.search(r"""(src|href)=["']https?:""", page)   # self-contained
    embedded = json.loads(re.search(r"id='games-data'>(.*?)</script>", page, re.S).group(1))
    assert [g["moves"] for g in embedded] == [json.loads(r[6]) for r in rows]   # the viewer replays the stored games
    assert page.count('class="elo-row"') == 2                   # one chart row per player
    assert len(csv_path.read_text().splitlines()) == 3


def test_the_shipped_default_plays_as_a_builtin_under_a_clock(tmp_path):
    """`auto` is what plyzero-uci plays with no options (here a bullet clock: Player auto's
    switch, its probes at isready and ucinewgame included); it beats random without a forfeit."""
    db = tmp_path / "auto.sqlite"
    output = arena("run", "--game", "chess", "--engine", "auto", "--engine", "random", "--games", "2",
                   "--tc", "3+0.03", "--seed", "5", "--maxmoves", "80", "--concurrency", "1", "--db", str(db))
    assert "Games: 2/2" in output
    rows = games_in(db)
    assert len(rows) == 2 and all(r[5] is None for r in rows)
    auto_score = sum(r[3] if r[1] == "auto" else 1 - r[3] for r in rows)
    assert auto_score >= 1.5


def test_sprt_stops_a_lopsided_match_early(tmp_path):
    db = tmp_path / "s.sqlite"
    output = arena("run", "--game", "gomoku", "--board", "9", "--engine", "alphabeta", "--engine", "random",
                   "--games", "60", "--movetime", "0.03", "--concurrency", "1",
                   "--sprt", "elo0=0 elo1=100 alpha=0.05 beta=0.05", "--db", str(db))
    assert "H1 accepted" in output
    played = len(games_in(db))
    assert 2 <= played < 60
    again = arena("run", "--game", "gomoku", "--board", "9", "--engine", "alphabeta", "--engine", "random",
                  "--games", "60", "--movetime", "0.03", "--concurrency", "1",
                  "--sprt", "elo0=0 elo1=100 alpha=0.05 beta=0.05", "--db", str(db))
    assert "H1 accepted" in again and len(games_in(db)) == played   # a decided test stays decided


def test_gomoku_under_the_judges_habits_records_memory_and_forfeits_a_brain_over_the_limit(tmp_path):
    """--suspend freezes each brain while its opponent thinks, --max-memory is sent as INFO
    max_memory and checked after every move: within it the games play out with each move's
    memory recorded; a limit below what a Python brain needs loses its games by the judge's rule."""
    db = tmp_path / "judge.sqlite"
    arena("run", "--game", "gomoku", "--board", "9", "--engine", "random", "--engine", "alphabeta",
          "--games", "2", "--movetime", "0.05", "--seed", "3", "--concurrency", "1",
          "--suspend", "--max-memory", "4000", "--db", str(db))
    rows = sqlite3.connect(db).execute("SELECT reason, forfeit, infos FROM games").fetchall()
    assert len(rows) == 2 and all(forfeit is None for _, forfeit, _ in rows)
    moves = [info for _, _, infos in rows for info in json.loads(infos)]
    assert moves and all(0 < info["rss_mb"] <= info["vm_mb"] < 4000 for info in moves)
    small = tmp_path / "small.sqlite"
    arena("run", "--game", "gomoku", "--board", "9", "--engine", "random", "--engine", "alphabeta",
          "--games", "2", "--movetime", "0.05", "--seed", "3", "--concurrency", "1",
          "--max-memory", "5", "--db", str(small))
    reasons = [reason for reason, in sqlite3.connect(small).execute("SELECT reason FROM games")]
    assert len(reasons) == 2 and all("memory limit" in reason for reason in reasons)


def test_gomoku_even_openings_come_from_the_book_for_the_rule_and_board(tmp_path):
    from engine.games.gomoku.swap2 import symmetries
    from engine.games.gomoku.swap2_book import EVEN_OPENINGS

    db = tmp_path / "even.sqlite"
    output = arena("run", "--game", "gomoku", "--rule", "renju", "--board", "15", "--openings", "even",
                   "--engine", "random", "--engine", "alphabeta", "--games", "4", "--movetime", "0.05",
                   "--seed", "7", "--concurrency", "2", "--db", str(db))
    assert "Games: 4/4" in output
    rows = sqlite3.connect(db).execute("SELECT opening_name, opening, opening_plies FROM games").fetchall()
    book = {tuple(turn(p) for p in shape) for shape, _ in EVEN_OPENINGS[("renju", 15)] for turn in symmetries()}
    assert len(rows) == 4 and len({r[1] for r in rows}) == 2         # two pairs, one opening each
    for name, opening, plies in rows:
        stones = tuple(tuple(int(n) for n in cell.split(",")) for cell in opening.split())
        assert name.startswith("even renju 15:") and stones in book and plies == 3
