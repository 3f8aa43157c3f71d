"""The HTML report: Elo chart geometry, the viewer's game data, self-containment, and (where a
headless Chromium is installed) the page as a browser renders it."""
from __future__ import annotations

import html as htmllib
import json
import re
import subprocess

import chess
import pytest

from arena.html import elo_chart_svg, game_data, html_report
from arena.ratings import GameResult
from arena.records import GameRecord
from arena.report import rating_sections


def _results() -> list[GameResult]:
    out = []
    for a, b, scores in (("alphabeta", "uct", [1, 1, 0.5, 0]), ("alphabeta", "random", [1, 1, 1, 0.5]),
                         ("uct", "random", [1, 0.5, 1, 0])):
        out += [GameResult(a, b, s) for s in scores]
    return out


def _chess(seq: int, moves: tuple[str, ...], fen: str | None = None, first: str = "alphabeta",
           second: str = "random", opening_plies: int = 0) -> GameRecord:
    n = len(moves) - opening_plies
    return GameRecord(key=f"c{seq}", seq=seq, pair=0, game="chess", board="", rule="", first=first,
                      second=second, opening_name="test", opening="", start_fen=fen, moves=moves,
                      opening_plies=opening_plies, score=1.0, reason="checkmate",
                      times=(0.01,) * n, infos=({"cp": 25, "depth": 3},) * n)


def _gomoku(seq: int, moves: tuple[str, ...], board: str = "9x9", opening_plies: int = 2) -> GameRecord:
    n = len(moves) - opening_plies
    return GameRecord(key=f"g{seq}", seq=seq, pair=0, game="gomoku", board=board, rule="freestyle",
                      first="alphabeta", second="random", opening_name="o", opening="0,0 1,1",
                      start_fen=None, moves=moves, opening_plies=opening_plies, score=1.0,
                      reason="five in a row", times=(0.02,) * n, infos=({"value": 0.5, "depth": 1},) * n)


SCHOLAR = ("e2e4", "e7e5", "f1c4", "b8c6", "d1h5", "g8f6", "h5f7")
GOMOKU = ("4,4", "5,5", "0,4", "8,0", "1,4", "8,1", "2,4", "8,2", "3,4")   # black five on row 4


def _embedded(page: str) -> list[dict]:
    text = re.search(r"<script type='application/json' id='games-data'>(.*?)</script>", page, re.S).group(1)
    return json.loads(text)


def test_elo_chart_has_one_row_and_proportional_bar_per_player():
    section = rating_sections(_results(), ["alphabeta", "uct", "random"], "alphabeta")[0]
    svg = elo_chart_svg(section)
    players = section.ratings.players
    rows = re.findall(r'<g class="elo-row" data-player="([^"]+)">', svg)
    assert rows == [p.name for p in players]                          # best first, as in the table
    assert svg.count('class="elo-dot"') == len(players)
    bars = [tuple(float(v) for v in m) for m in
            re.findall(r'class="elo-bar" x1="([\d.]+)" y1="[\d.]+" x2="([\d.]+)"', svg)]
    others = [p for p in players if p.name != "alphabeta"]
    assert len(bars) == len(others)                                   # the anchor has no interval
    # lengths proportional to the intervals, centres ordered like the ratings
    ratio = (bars[0][1] - bars[0][0]) / (bars[1][1] - bars[1][0])
    assert ratio == pytest.approx(others[0].error / others[1].error, rel=1e-2)
    assert (bars[0][0] + bars[0][1]) / 2 > (bars[1][0] + bars[1][1]) / 2
    assert 'class="elo-anchor"' in svg and "anchor alphabeta = 0" in svg
    assert re.search(r">-?\d+</text>", svg)                           # numeric axis labels
    for p in others:
        assert f"{p.elo:+.0f} ± {p.error:.0f}" in svg                 # the value next to each bar


def test_chess_game_data_numbers_moves_and_frames():
    data = game_data(_chess(0, SCHOLAR))
    assert data["sans"] == ["e4", "e5", "Bc4", "Nc6", "Qh5", "Nf6", "Qxf7#"]
    assert data["labels"] == ["1.", "", "2.", "", "3.", "", "4."]
    assert len(data["frames"]) == len(SCHOLAR) + 1
    assert data["frames"][0] == chess.Board().board_fen()
    assert data["frames"][-1] == "r1bqkb1r/pppp1Qpp/2n2n2/4p3/2B1P3/8/PPPP1PPP/RNB1K1NR"
    assert data["notes"][0] == "+0.25, depth 3, 0.010 s"
    # black to move at the start, move 12: '12...' then '13.'
    fen = "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 3 12"
    black = game_data(_chess(1, ("g8f6", "f1c4"), fen=fen))
    assert black["labels"] == ["12...", "13."] and black["sans"] == ["Nf6", "Bc4"]
    # an illegal stored move (old data) ends the replay instead of crashing the report
    broken = game_data(_chess(2, ("e2e4", "e2e4", "e7e5")))
    assert broken["moves"] == ["e2e4"] and len(broken["frames"]) == 2 and len(broken["notes"]) == 1


def test_gomoku_game_data_keeps_protocol_coordinates():
    data = game_data(_gomoku(0, GOMOKU, board="9x9"))
    assert data["moves"] == list(GOMOKU) and data["texts"] == list(GOMOKU)
    assert (data["width"], data["height"]) == (9, 9)
    assert data["labels"] == [str(k) for k in range(1, len(GOMOKU) + 1)]
    assert data["notes"][:3] == ["opening", "opening", "value +0.50, depth 1, 0.020 s"]
    assert data["colors"] == ["Black", "White"]


def test_report_is_self_contained_and_embeds_every_game():
    records = [_chess(0, SCHOLAR, first="</script><b>x"), _gomoku(1, GOMOKU)]
    results = [GameResult(r.first, r.second, r.score) for r in records]
    sections = rating_sections(results, ["</script><b>x", "alphabeta", "random"], "alphabeta")
    page = html_report(sections, records, title="t")
    assert page.count("</script>") == 2                                # the name cannot close a script
    assert "<b>x" not in page and "&lt;/script&gt;&lt;b&gt;x" in page
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", page)
    assert "@import" not in page and "url(" not in page
    games = _embedded(page)
    assert [g["moves"] for g in games] == [list(SCHOLAR), list(GOMOKU)]
    assert games[0]["first"] == "</script><b>x"
    games_table = re.search(r"<table class='games'>.*?</table>", page, re.S).group(0)
    assert page.count('<option value="') == 2 and games_table.count("<tr><td>") == 2
    for key in ("first", "prev", "next", "last"):
        assert f'id="v{key}"' in page
    assert "white-knight" in page and "black-king" in page            # piece glyphs inline
    assert page.count('class="elo-row"') == 3


def test_report_without_games():
    page = html_report([], [], title="empty")
    assert "No games." in page and _embedded(page) == [] and "<script>" not in page


@pytest.mark.parametrize("records", [[_chess(0, SCHOLAR)], [_gomoku(0, GOMOKU)]], ids=["chess", "gomoku"])
def test_browser_renders_the_last_position(tmp_path, records, chromium):
    """The inline script runs without errors and draws the final position of the first game."""
    path = tmp_path / "r.html"
    path.write_text(html_report([], records), encoding="utf-8")
    dom = subprocess.run(chromium("--dump-dom", path.as_uri()), capture_output=True, text=True, timeout=60).stdout
    n = len(records[0].moves)
    ply = re.search(r'<div id="vply">(.*?)</div>', dom).group(1)
    assert htmllib.unescape(ply).startswith(f"Ply {n}/{n}: ")
    if records[0].game == "chess":
        pieces = re.findall(r'<use href="#([a-z-]+)"[^>]*data-square="([a-h][1-8])"', dom)
        board = chess.Board(game_data(records[0])["frames"][-1])
        assert sorted(pieces) == sorted(
            (f"{chess.COLOR_NAMES[p.color]}-{chess.PIECE_NAMES[p.piece_type]}", chess.square_name(sq))
            for sq, p in board.piece_map().items())
        assert re.findall(r'class="hl ([a-h][1-8])"', dom) == ["h5", "f7"]
        assert "4.</span>Qxf7#" in dom
    else:
        stones = re.findall(r'class="stone" data-xy="(\d+,\d+)"[^>]*fill="(#[0-9a-f]+)"', dom)
        assert stones == [(m, "#111" if k % 2 == 0 else "#fafafa") for k, m in enumerate(GOMOKU)]
        labels = re.findall(r'class="cx"[^>]*>(\d+)</text>', dom)
        assert labels == [str(i) for i in range(9)]
