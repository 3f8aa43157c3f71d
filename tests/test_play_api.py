"""The web board's JSON API (engine/play), driven like the page drives it, without a browser."""
from __future__ import annotations

import contextlib
import io
import re
import shlex
import signal
import socket
import subprocess
import sys

import chess
import chess.pgn
import pytest
from click.testing import CliRunner

from engine.games import get_game
from engine.play import GameSettings, Opponent, RequestError, parse_settings
from engine.play.look import LiveView
from engine.play.server import TOKEN_HEADER
from engine.search.mcts import MCTS, MCTSConfig
from engine.evaluators import heuristic_evaluator
from engine.types import Limits, SearchInfo
from protocols.cli import main
from protocols.external_searcher import external_searcher


def builtin(player: str, **options) -> Opponent:
    return Opponent(options=(("player", player), *options.items()))


RANDOM = builtin("random", seed=7)


def gomoku_moves(text: str) -> list[str]:
    return [line for line in text.splitlines() if line and not line.startswith("#")]


def pgn_moves(text: str) -> list[str]:
    game = chess.pgn.read_game(io.StringIO(text))
    return [move.uci() for move in game.mainline_moves()]


# --- pages and assets --------------------------------------------------------------------------

def test_page_and_assets_come_from_the_package_with_nothing_from_the_internet(board_server):
    client = board_server(GameSettings(opponent=RANDOM)).client(claim=False)
    status, page = client.request("GET", "/")
    assert status == 200 and '<script src="/static/play.js">' in page
    for name in ("play.js", "play.css"):
        status, body = client.request("GET", f"/static/{name}")
        assert status == 200 and len(body) > 1000
        page += body
    # No fetched resource outside this server: every src/href/url()/import is local.
    remote = re.findall(r"""(?:src|href)\s*=\s*["'](?!/|#|data:)[^"']*|url\((?!#)[^)]*\)|@import""", page)
    assert remote == []
    status, svg = client.request("GET", "/pieces/bN.svg")
    assert status == 200 and svg.startswith("<svg") and "black knight" in svg
    assert client.request("GET", "/pieces/xZ.svg")[0] == 404
    assert client.request("GET", "/static/../server.py")[0] == 404


# --- playing -----------------------------------------------------------------------------------

def test_gomoku_game_against_random_to_five_and_its_move_list(board_server):
    client = board_server(GameSettings(width=15, height=15, opponent=RANDOM, movetime=0.0)).client()
    played: list[str] = []
    snap = client.state()
    row = 7
    while snap["result"] is None:                        # five in a row on x = 3..7 of some row
        cells = snap["board"]["cells"]
        line = [row * 15 + x for x in range(3, 8)]
        if any(cells[i] == "2" for i in line):
            row += 1                                     # the random player blocked it: next row
            continue
        cell = next(i for i in line if cells[i] == "0")
        client.post("/api/move", {"move": f"{cell % 15},{row}"})
        snap = client.wait_for(lambda s: s["turn"] == "human" or s["result"] is not None)
        played = [m["move"] for m in snap["moves"]]
    assert snap["result"]["winner"] == 0 and snap["result"]["reason"] == "five in a row"
    assert snap["result"]["text"] == "1-0"
    status, record = client.request("GET", "/api/record")
    assert status == 200 and record["filename"].endswith(".txt")
    assert gomoku_moves(record["text"]) == played
    assert "# Result: 1-0 (five in a row)" in record["text"]
    state = get_game("gomoku", width=15, height=15).state_from_moves(
        [int(y) * 15 + int(x) for x, y in (m.split(",") for m in played)])
    assert state.outcome() is not None and state.outcome().winner == 0


def test_chess_promotion_undo_and_pgn(board_server):
    fen = "8/P6k/8/8/8/8/1P6/K7 w - - 0 1"
    client = board_server(GameSettings(game="chess", position=fen, opponent=RANDOM, movetime=0.0)).client()
    snap = client.state()
    assert {"a7a8q", "a7a8n"} <= set(snap["board"]["legal"])
    client.post("/api/move", {"move": "a7a8n"})
    snap = client.wait_for(lambda s: len(s["moves"]) == 2)
    assert snap["moves"][0] == {"move": "a7a8n", "label": "a8=N"} and snap["turn"] == "human"
    reply = snap["moves"][1]["move"]
    client.post("/api/move", {"move": "a1b1" if "a1b1" in snap["board"]["legal"] else snap["board"]["legal"][0]})
    snap = client.wait_for(lambda s: len(s["moves"]) == 4 or s["result"] is not None)
    played = [m["move"] for m in snap["moves"]]
    snap = client.post("/api/undo")
    assert [m["move"] for m in snap["moves"]] == played[:2] and snap["turn"] == "human"
    record = client.request("GET", "/api/record")[1]["text"]
    assert pgn_moves(record) == ["a7a8n", reply]
    assert f'[FEN "{fen}"]' in record and '[White "You"]' in record and '[Black "random (seed=7)"]' in record


def test_swap_sides_makes_the_engine_move_and_resign_ends_the_game(board_server):
    client = board_server(GameSettings(game="chess", opponent=RANDOM, movetime=0.0)).client()
    snap = client.post("/api/swap")
    assert snap["settings"]["human"] == 1
    snap = client.wait_for(lambda s: s["turn"] == "human")
    assert len(snap["moves"]) == 1 and snap["to_play"] == 1
    snap = client.post("/api/resign")
    assert snap["result"] == {"winner": 0, "reason": "Black resigns", "text": "1-0"}
    status, data = client.request("POST", "/api/move", {"move": "e7e5"})
    assert status == 409 and data["error"] == "the game is over: Black resigns"
    snap = client.post("/api/undo")                       # takes the resignation back
    assert snap["result"] is None and len(snap["moves"]) == 1
    assert "Termination" not in client.request("GET", "/api/record")[1]["text"]


def test_stop_makes_the_thinking_engine_move_now(board_server):
    client = board_server(GameSettings(game="chess", human=1, opponent=builtin("alphabeta"),
                                       movetime=600.0)).client()
    snap = client.wait_for(lambda s: s["thinking"] == "move" and s["look"] is not None)
    assert snap["look"]["depth"] >= 1 and snap["look"]["nodes"] > 0
    status, data = client.request("POST", "/api/move", {"move": "e2e4"})
    assert status == 409 and "thinking" in data["error"]
    client.post("/api/stop")
    snap = client.wait_for(lambda s: s["thinking"] is None, timeout=120)   # far below the 600 s it had
    assert len(snap["moves"]) == 1 and snap["turn"] == "human"
    assert snap["moves"][0]["move"] == snap["look"]["lines"][0]["moves"][0]


def test_undo_while_the_engine_thinks_drops_its_search(board_server):
    client = board_server(GameSettings(game="chess", opponent=builtin("alphabeta"), movetime=600.0)).client()
    client.post("/api/move", {"move": "e2e4"})
    client.wait_for(lambda s: s["thinking"] == "move")
    snap = client.post("/api/undo")
    assert snap["moves"] == [] and snap["thinking"] is None and snap["turn"] == "human"
    status, data = client.request("POST", "/api/undo", {})
    assert status == 409 and data["error"] == "nothing to undo"


# --- looking inside ----------------------------------------------------------------------------

def test_mcts_analysis_shows_visits_and_priors_while_it_thinks(board_server):
    settings = GameSettings(mode="analysis", position="7,7 8,8 7,8", opponent=builtin("mcts", batch=8))
    client = board_server(settings).client()
    client.post("/api/analyse", {"on": True})
    snap = client.wait_for(lambda s: s["look"] is not None and sum(h["visits"] for h in s["look"]["heat"]) > 0)
    assert snap["thinking"] == "analysis" and snap["turn"] == "either"
    heat = snap["look"]["heat"]
    occupied = {"7,7", "8,8", "7,8"}
    assert occupied.isdisjoint(h["move"] for h in heat)
    assert [h["visits"] for h in heat] == sorted((h["visits"] for h in heat), reverse=True)
    assert sum(h["visits"] for h in heat) <= snap["look"]["nodes"]
    assert 0.9 < sum(h["prior"] for h in heat) <= 1.001
    assert snap["look"]["lines"][0]["moves"][0] == heat[0]["move"]
    snap = client.post("/api/analyse", {"on": False})
    snap = client.idle()
    assert snap["look"]["nodes"] > 0 and snap["analysing"] is False
    # A move in analysis mode is played for whichever side is to move; the board stays free.
    snap = client.post("/api/move", {"move": "9,9"})
    assert snap["moves"][-1]["move"] == "9,9" and snap["turn"] == "either" and snap["thinking"] is None


def test_alphabeta_analysis_reports_its_best_lines(board_server):
    settings = GameSettings(game="chess", mode="analysis", lines=3, opponent=builtin("alphabeta"),
                            position="r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3")
    client = board_server(settings).client()
    client.post("/api/analyse", {"on": True})
    snap = client.wait_for(lambda s: s["look"] is not None and s["look"]["depth"] >= 3
                           and len(s["look"]["lines"]) == 3)
    lines = snap["look"]["lines"]
    assert [line["rank"] for line in lines] == [1, 2, 3]
    assert len({line["moves"][0] for line in lines}) == 3
    board = chess.Board(settings.position)
    for line in lines:                                   # SAN labels of legal UCI lines
        assert line["pv"][0] == board.san(chess.Move.from_uci(line["moves"][0]))
    assert snap["look"]["heat"] == []
    client.post("/api/stop")
    assert client.idle()["thinking"] is None


def test_live_view_turns_values_to_the_first_player_and_sorts_the_heat():
    game = get_game("gomoku", width=5, height=5)
    state = game.state_from_moves([12])                  # second player to move, 24 empty cells
    view = LiveView(game, state, "mcts")
    visits = tuple(3 if j == 4 else 1 if j == 0 else 0 for j in range(24))
    priors = tuple(0.5 if j == 0 else 0.5 / 23 for j in range(24))
    view.add(SearchInfo(depth=2, seldepth=3, value=0.5, nodes=4, time=0.5, pv=(state.legal_moves()[4],),
                        root_visits=visits, root_priors=priors))
    look = view.to_json()
    assert look["wdl"] == [750, 0, 250] and look["wdl_first"] == [250, 0, 750]
    assert [h["move"] for h in look["heat"][:2]] == ["4,0", "0,0"]
    assert look["heat"][0]["visits"] == 3 and len(look["heat"]) == 24


def test_mcts_reports_root_visits_and_priors():
    game = get_game("gomoku", width=9, height=9)
    state = game.initial_state()
    infos: list[SearchInfo] = []
    result = MCTS(heuristic_evaluator(game), MCTSConfig(leaves_per_batch=4)).search(
        state, Limits(nodes=64), on_info=infos.append)
    info = infos[-1]
    assert info.root_visits is not None and info.root_priors is not None
    assert len(info.root_visits) == len(info.root_priors) == len(state.legal_moves())
    assert sum(info.root_visits) == 64 == info.nodes
    assert info.root_visits == result.visits
    assert abs(sum(info.root_priors) - 1.0) < 1e-3


# --- external engines --------------------------------------------------------------------------

def test_external_uci_engine_plays_through_python_chess(board_server, monkeypatch):
    monkeypatch.delenv("PYTHONUNBUFFERED", raising=False)
    client = board_server(GameSettings(game="chess", movetime=0.2), external=external_searcher).client()
    command = shlex.join([sys.executable, "-m", "protocols.cli", "uci", "--player", "alphabeta"])
    snap = client.post("/api/new", {"opponent": {"kind": "external", "command": command}, "lines": 2})
    assert snap["opponent"] == shlex.split(command)[0].rsplit("/", 1)[-1]
    client.post("/api/move", {"move": "e2e4"})
    snap = client.wait_for(lambda s: len(s["moves"]) == 2)
    assert snap["look"]["depth"] >= 1 and snap["look"]["lines"][0]["moves"][0] == snap["moves"][1]["move"]
    status, data = client.request("POST", "/api/new", {"opponent": {"kind": "external",
                                                                    "command": "/nonexistent/engine --uci"}})
    assert status == 400 and data["error"].startswith("cannot start '/nonexistent/engine'")
    assert client.state()["opponent"] == snap["opponent"]          # the old game goes on


def test_external_gomocup_brain_plays_through_our_client(board_server, monkeypatch):
    monkeypatch.delenv("PYTHONUNBUFFERED", raising=False)
    command = shlex.join([sys.executable, "-m", "protocols.cli", "gomocup", "--player", "random"])
    settings = GameSettings(width=9, height=9, movetime=0.5, opponent=Opponent(kind="external",
                                                                               command=tuple(shlex.split(command))))
    client = board_server(settings, external=external_searcher).client()
    client.post("/api/move", {"move": "4,4"})
    snap = client.wait_for(lambda s: len(s["moves"]) == 2)
    client.post("/api/move", {"move": next(f"{x},0" for x in range(9) if snap["board"]["cells"][x] == "0")})
    snap = client.wait_for(lambda s: len(s["moves"]) == 4)
    cells = snap["board"]["cells"]
    assert cells.count("1") == 2 and cells.count("2") == 2


def test_without_the_command_line_external_engines_are_refused(board_server):
    client = board_server(GameSettings(opponent=RANDOM)).client()
    status, data = client.request("POST", "/api/new", {"opponent": {"kind": "external", "command": "x"}})
    assert status == 400 and "`engine play`" in data["error"]
    assert client.request("GET", "/api/options")[1]["external"] is False


# --- bad input and tabs ------------------------------------------------------------------------

@pytest.mark.parametrize("path, body, status, message", [
    ("/api/move", {"move": "e2e5"}, 400, "illegal move 'e2e5'"),
    ("/api/move", {"move": "castle"}, 400, "illegal move 'castle'"),
    ("/api/move", {}, 400, "move: expected a string"),
    ("/api/position", {"position": "rnbqkbnr/pppppppp/8/8 w KQkq"}, 400, "invalid FEN"),
    ("/api/new", {"game": "gomoku", "width": 4}, 400, "board size 4x4 outside 5..26"),
    ("/api/new", {"game": "gomoku", "width": 30, "height": 12}, 400, "board size 30x12 outside 5..26"),
    ("/api/new", {"game": "gomoku", "width": "big"}, 400, "width: expected an integer, got 'big'"),
    ("/api/new", {"game": "go"}, 400, "game: expected one of chess, gomoku, got 'go'"),
    ("/api/new", {"human": 2}, 400, "human: 0 (play first) or 1 (play second), got 2"),
    ("/api/new", {"opponent": {"options": {"player": "nobody"}}}, 400, "unknown player 'nobody'"),
    ("/api/new", {"opponent": {"options": {"weights": "no-such-net", "player": "mcts"}}}, 400, "cannot build"),
    ("/api/new", {"opponent": {"options": {"depth": 3}}}, 400, "unknown player option 'depth'"),
    ("/api/new", {"movetime": "nan"}, 400, "movetime: expected a finite number"),
    ("/api/new", [1, 2], 400, "expected a JSON object"),
    ("/api/nothing", {}, 404, "no such page /api/nothing"),
])
def test_bad_requests_get_one_line_errors_and_the_game_goes_on(board_server, path, body, status, message):
    client = board_server(GameSettings(game="chess", opponent=RANDOM, movetime=0.0)).client()
    got, data = client.request("POST", path, body)
    assert got == status and message in data["error"] and "\n" not in data["error"]
    snap = client.post("/api/move", {"move": "e2e4"})       # still serving the same game
    assert snap["moves"][0]["move"] == "e2e4" and snap["settings"]["game"] == "chess"


def test_malformed_requests_are_refused_cleanly(board_server):
    client = board_server(GameSettings(opponent=RANDOM, movetime=0.0)).client()
    assert client.request("POST", "/api/move", raw=b"{not json")[1]["error"].startswith("malformed JSON")
    status, data = client.request("POST", "/api/move", raw=b'{"move": "7,7"}', headers={"Content-Type": "text/plain"})
    assert status == 415 and "JSON" in data["error"]
    assert client.request("PUT", "/api/move", {"move": "7,7"})[0] == 405
    assert client.request("GET", "/api/move")[0] == 405
    assert client.request("GET", "/api/state?after=x")[0] == 400
    assert client.request("POST", "/api/move", raw=b"x" * 70000)[0] == 413
    status, data = client.request("POST", "/api/move", {"move": "15,3"})
    assert status == 400 and data["error"] == "15,3 is off the 15x15 board"
    client.post("/api/move", {"move": "7,7"})
    snap = client.wait_for(lambda s: len(s["moves"]) == 2)
    taken = snap["moves"][1]["move"]
    status, data = client.request("POST", "/api/move", {"move": taken})
    assert status == 400 and data["error"] == f"{taken} is occupied"
    assert client.request("GET", "/api/state", headers={"Host": "attacker.example:8000"})[0] == 403
    assert client.state()["moves"] == snap["moves"]


def test_a_second_tab_is_told_the_game_is_in_use_and_may_take_it_over(board_server):
    board = board_server(GameSettings(opponent=RANDOM, movetime=0.0))
    first = board.client()
    second = board.client(claim=False)
    status, data = second.claim()
    assert status == 409 and "open in another tab" in data["error"]
    status, data = second.request("GET", "/api/state")
    assert status == 401 and TOKEN_HEADER in data["error"]
    assert second.claim(force=True)[0] == 200
    status, data = first.request("GET", "/api/state")
    assert status == 409 and data["error"] == "this game was taken over by another tab"
    assert first.request("POST", "/api/move", {"move": "7,7"})[0] == 409
    snap = second.post("/api/move", {"move": "7,7"})
    assert snap["moves"][0]["move"] == "7,7"
    assert first.claim()[0] == 409                       # the second tab is active now


# --- settings and the command line -------------------------------------------------------------

def test_settings_keep_what_is_not_sent_and_check_what_is():
    base = GameSettings(game="gomoku", width=12, height=10, rule="standard", opponent=RANDOM)
    settings = parse_settings({"movetime": "2.5", "human": 1}, base)
    assert (settings.width, settings.height, settings.rule, settings.movetime, settings.human) == (12, 10, "standard",
                                                                                                   2.5, 1)
    assert settings.opponent == RANDOM
    assert parse_settings({"width": 9}, base).height == 9
    ext = parse_settings({"opponent": {"kind": "external", "command": "'/opt/my engine' --uci"}}, base)
    assert ext.opponent.command == ("/opt/my engine", "--uci") and ext.opponent.name == "my engine"
    for payload, message in (({"lines": 0}, "lines: 1..8"), ({"movetime": -1}, "movetime: 0..3600"),
                             ({"opponent": {"kind": "external", "command": " "}}, "needs a command line"),
                             ({"opponent": {"kind": "external", "command": "'open"}}, "No closing quotation")):
        with pytest.raises(RequestError, match=message):
            parse_settings(payload, base)


def test_cli_play_rejects_bad_arguments_in_one_line():
    runner = CliRunner()
    result = runner.invoke(main, ["play", "--board", "4", "--no-browser", "--port", "0"])
    assert result.exit_code != 0 and "board size 4x4 outside 5..26" in result.output
    assert "Traceback" not in result.output
    result = runner.invoke(main, ["play", "--board", "big", "--no-browser"])
    assert result.exit_code != 0 and "expected a size like 15 or 12x10" in result.output
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        result = runner.invoke(main, ["play", "--player", "random", "--no-browser", "--port", str(port)])
    assert result.exit_code != 0 and f"cannot serve on 127.0.0.1:{port}" in result.output


@contextlib.contextmanager
def engine_play_console():
    """`engine play` as a person runs it (console script, chess against random, port 0):
    yields (process, port) once it has printed its address; kills it on the way out."""
    from conftest import console_script, default_sigint, engine_env

    process = subprocess.Popen([console_script("engine"), "play", "--game", "chess", "--player", "random",
                                "--no-browser", "--port", "0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, env=engine_env(), preexec_fn=default_sigint)
    try:
        line = process.stdout.readline()
        found = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
        assert found is not None, line
        yield process, int(found.group(1))
    finally:
        process.kill()


def ctrl_c(process: subprocess.Popen) -> str:
    """Send Ctrl-C and wait for a clean exit; returns stderr."""
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=30)
    assert process.returncode == 0 and "Traceback" not in err, err
    return err


def test_engine_play_serves_until_interrupted_and_exits_cleanly():
    """The console script as a person runs it: prints its address, serves the page, and
    Ctrl-C ends it without a traceback."""
    import urllib.request

    with engine_play_console() as (process, port):
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=30) as response:
            assert b'<div id="board"' in response.read()
        ctrl_c(process)


def test_ctrl_c_ends_the_server_while_a_browser_holds_a_connection_open():
    """Browsers keep HTTP/1.1 connections alive (and the live view long-polls): Ctrl-C must
    not wait for them to close."""
    import http.client

    with engine_play_console() as (process, port):
        browser = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        browser.request("GET", "/")                       # keep-alive: the connection stays open
        assert b'<div id="board"' in browser.getresponse().read()
        ctrl_c(process)
        browser.close()
