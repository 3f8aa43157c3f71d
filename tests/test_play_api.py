"""The web board's JSON API (engine/web), driven like the page drives it, without a browser."""
from __future__ import annotations

import contextlib
import io
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections import Counter

import chess
import chess.pgn
import pytest
from click.testing import CliRunner

from engine.games import get_game
from engine.web import AllowList, GameSettings, Opponent, RequestError, ServerLimits, allow_list, parse_settings
from engine.web.guard import KEY_HEADER, ConnectionCap
from engine.web.look import LiveView
from engine.web.server import MAX_BODY, TOKEN_HEADER
from engine.web.settings import external_engine
from engine.search.mcts import MCTS, MCTSConfig
from engine.games import game_profile
from engine.types import Limits, SearchInfo
from engine.cli import main
from protocols.external_searcher import external_searcher


def builtin(player: str, **options) -> Opponent:
    return Opponent(options=(("player", player), *options.items()))


RANDOM = builtin("random", seed=7)
PYTHON_ENGINE = [sys.executable, "-m", "engine.cli"]     # `engine` as the arena launches it


def engines(**argvs: list[str]) -> AllowList:
    """The allow-list `engine play --external NAME=COMMAND ...` would make."""
    return AllowList(engines={name: tuple(argv) for name, argv in argvs.items()})


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
    result = MCTS(game_profile(game.name).heuristic(), MCTSConfig(leaves_per_batch=4)).search(
        state, Limits(nodes=64), on_info=infos.append)
    info = infos[-1]
    assert info.root_visits is not None and info.root_priors is not None
    assert len(info.root_visits) == len(info.root_priors) == len(state.legal_moves())
    assert sum(info.root_visits) == 64 == info.nodes
    assert info.root_visits == result.visits
    assert abs(sum(info.root_priors) - 1.0) < 1e-3


# --- external engines: only those the command line lists -------------------------------------

def test_external_uci_engine_plays_through_python_chess(board_server, monkeypatch):
    monkeypatch.delenv("PYTHONUNBUFFERED", raising=False)
    allowed = engines(ab=[*PYTHON_ENGINE, "uci", "--player", "alphabeta"], gone=["/nonexistent/engine", "--uci"])
    client = board_server(GameSettings(game="chess", movetime=0.2), external=external_searcher,
                          allowed=allowed).client()
    assert client.request("GET", "/api/options")[1]["external"] == ["ab", "gone"]
    snap = client.post("/api/new", {"opponent": {"kind": "external", "name": "ab"}, "lines": 2})
    assert snap["opponent"] == "ab" and snap["settings"]["opponent"]["engine"] == "ab"
    client.post("/api/move", {"move": "e2e4"})
    snap = client.wait_for(lambda s: len(s["moves"]) == 2)
    assert snap["look"]["depth"] >= 1 and snap["look"]["lines"][0]["moves"][0] == snap["moves"][1]["move"]
    status, data = client.request("POST", "/api/new", {"opponent": {"kind": "external", "name": "gone"}})
    assert status == 400 and data["error"].startswith("cannot start '/nonexistent/engine'")
    assert client.state()["opponent"] == snap["opponent"]          # the old game goes on


def test_external_gomocup_brain_plays_through_our_client(board_server, monkeypatch):
    monkeypatch.delenv("PYTHONUNBUFFERED", raising=False)
    allowed = engines(brain=[*PYTHON_ENGINE, "gomocup", "--player", "random"])
    settings = GameSettings(width=9, height=9, movetime=0.5, opponent=allowed.external("brain"))
    client = board_server(settings, external=external_searcher, allowed=allowed).client()
    client.post("/api/move", {"move": "4,4"})
    snap = client.wait_for(lambda s: len(s["moves"]) == 2)
    client.post("/api/move", {"move": next(f"{x},0" for x in range(9) if snap["board"]["cells"][x] == "0")})
    snap = client.wait_for(lambda s: len(s["moves"]) == 4)
    cells = snap["board"]["cells"]
    assert cells.count("1") == 2 and cells.count("2") == 2 and snap["opponent"] == "brain"


def test_without_the_command_line_external_engines_are_refused(board_server):
    client = board_server(GameSettings(opponent=RANDOM)).client()
    status, data = client.request("POST", "/api/new", {"opponent": {"kind": "external", "name": "x"}})
    assert status == 400 and "`engine play --external`" in data["error"]
    assert client.request("GET", "/api/options")[1]["external"] == []


def test_requests_cannot_choose_a_program_to_run(board_server, monkeypatch, tmp_path):
    """Not a command, not an unlisted name, not even the listed command line itself: only
    a listed name starts a process, and nothing else runs."""
    monkeypatch.delenv("PYTHONUNBUFFERED", raising=False)
    listed = [*PYTHON_ENGINE, "uci", "--player", "random"]
    client = board_server(GameSettings(game="chess", movetime=0.05), external=external_searcher,
                          allowed=engines(rnd=listed)).client()
    pwned = tmp_path / "pwned"
    for opponent in ({"kind": "external", "command": f"touch {pwned}"},
                     {"kind": "builtin", "command": f"touch {pwned}"},
                     {"kind": "external", "command": " ".join(listed)},
                     {"kind": "external", "name": "rnd", "command": " ".join(listed)},
                     {"kind": "external", "name": "touch"},
                     {"kind": "external", "name": f"touch {pwned}"},
                     {"kind": "external"},
                     {"kind": "external", "name": "rnd", "argv": ["touch", str(pwned)]}):
        status, data = client.request("POST", "/api/new", {"opponent": opponent})
        assert status == 400 and "\n" not in data["error"], (opponent, data)
        assert "engine play --external" in data["error"] or "unknown key 'argv'" in data["error"]
    assert not pwned.exists()
    assert client.state()["opponent"] == "auto"                      # the first game goes on
    snap = client.post("/api/new", {"opponent": {"kind": "external", "name": "rnd"}})
    assert snap["opponent"] == "rnd"
    client.post("/api/move", {"move": "e2e4"})
    snap = client.wait_for(lambda s: len(s["moves"]) == 2)
    assert snap["moves"][1]["move"] in {m.uci() for m in chess.Board(
        "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1").legal_moves}


def test_networks_are_the_shipped_ones_or_the_command_lines(board_server, tmp_path):
    """A request cannot make the server open a file by naming it as a network."""
    given = str(tmp_path / "mine.pt")
    board = board_server(GameSettings(opponent=builtin("random", weights=given)))
    client = board.client()
    assert given in client.request("GET", "/api/options")[1]["networks"]["gomoku"]
    for weights in ("/etc/passwd", "../weights/gomoku.pt", str(tmp_path / "other.pt"), "gomoku.pt"):
        status, data = client.request("POST", "/api/new", {"opponent": {"options": {"player": "random",
                                                                                    "weights": weights}}})
        assert status == 400 and data["error"].startswith(f"weights: {weights!r} is not a network this board")
    snap = client.post("/api/new", {"opponent": {"options": {"player": "random", "weights": given}}})
    assert snap["settings"]["opponent"]["options"]["weights"] == given
    snap = client.post("/api/new", {"opponent": {"options": {"player": "random", "weights": "gomoku"}}})
    assert snap["settings"]["opponent"]["options"]["weights"] == "gomoku"


def test_external_specs_are_named_and_split_like_a_shell():
    assert external_engine("sf=/usr/games/stockfish") == ("sf", ("/usr/games/stockfish",))
    assert external_engine("'/opt/my engine' --uci") == ("my engine", ("/opt/my engine", "--uci"))
    assert external_engine("stockfish --opt=1") == ("stockfish", ("stockfish", "--opt=1"))
    assert external_engine("b2 = pbrain-x  -v") == ("b2", ("pbrain-x", "-v"))
    for spec, message in (("", "no command to run"), ("sf=", "no command to run"), ("  ", "no command to run"),
                          ("'open", "No closing quotation")):
        with pytest.raises(ValueError, match=message):
            external_engine(spec)
    with pytest.raises(ValueError, match="two external engines named 'python'"):
        allow_list([f"{sys.executable} -m a", f"{sys.executable} -m b"])
    assert allow_list(["a=x", "b=x"]).names() == ["a", "b"]


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
    ("/api/new", {"opponent": {"options": {"weights": "no-such-net", "player": "mcts"}}}, 400,
     "weights: 'no-such-net' is not a network this board offers"),
    ("/api/new", {"opponent": {"options": {"depth": 3}}}, 400, "unknown player option 'depth'"),
    ("/api/new", {"opponent": {"options": {"hash_mb": 65536}}}, 400, "hash_mb: 1..4096 on this board, got 65536"),
    ("/api/new", {"opponent": {"options": {"threads": 0}}}, 400, "threads: 1.."),
    ("/api/new", {"opponent": {"options": {"batch": 100000}}}, 400, "batch: 1..256 on this board"),
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


# --- on a network: the key; for everyone: the limits ------------------------------------------

def test_a_network_board_needs_its_key_in_the_url_a_header_or_the_cookie(board_server):
    board = board_server(GameSettings(opponent=RANDOM, movetime=0.0), host="0.0.0.0")
    key = board.key
    assert key is not None and len(key) >= 32 and board.url == f"http://127.0.0.1:{board.port}/?key={key}"
    anyone = board.client(claim=False, with_key=False)
    for path, headers in (("/", {}), ("/static/play.js", {}), ("/pieces/wN.svg", {}), ("/api/options", {}),
                          ("/nothing", {}), ("/?key=wrong", {}), (f"/?key={key[:-1]}", {}),
                          ("/api/options", {KEY_HEADER: "wrong"}), ("/api/options", {KEY_HEADER: key + "x"}),
                          ("/api/options", {KEY_HEADER: "\xe9t\xe9"}),
                          ("/api/options", {"Cookie": "plyzero_key=wrong"}),
                          ("/api/options", {"Cookie": 'plyzero_key="; \\'})):
        status, data = anyone.request("GET", path, headers=headers)
        assert status == 403, (path, headers, status)
        assert "open the address `engine play` printed" in data["error"] and "\n" not in data["error"]
    assert anyone.request("POST", "/api/claim", {})[0] == 403
    # In the URL: the page, with a cookie that carries the key for its script, images and fetches.
    status, page = anyone.request("GET", f"/?key={key}")
    assert status == 200 and '<div id="board"' in page
    cookie = anyone.headers["Set-Cookie"]
    assert cookie == f"plyzero_key={key}; HttpOnly; SameSite=Strict; Path=/"
    for path in ("/static/play.js", "/pieces/wN.svg", "/api/options"):
        status, _ = anyone.request("GET", path, headers={"Cookie": f"theme=dark; {cookie.split(';')[0]}"})
        assert status == 200 and "Set-Cookie" not in anyone.headers
    assert anyone.request("GET", f"/api/options?key={key}")[0] == 200
    # In the header: the API as a script drives it.
    client = board.client()
    client.post("/api/move", {"move": "7,7"})
    assert len(client.wait_for(lambda s: len(s["moves"]) == 2)["moves"]) == 2


def test_a_loopback_board_needs_no_key_unless_it_was_given_one(board_server):
    plain = board_server(GameSettings(opponent=RANDOM))
    assert plain.key is None and "key" not in plain.url
    assert plain.client(claim=False).request("GET", "/api/options")[0] == 200
    keyed = board_server(GameSettings(opponent=RANDOM), key="k" * 20)
    assert keyed.url.endswith("/?key=" + "k" * 20)
    assert keyed.client(claim=False, with_key=False).request("GET", "/api/options")[0] == 403
    assert keyed.client(claim=False).request("GET", "/api/options")[0] == 200


def test_an_oversized_body_gets_413_and_the_game_goes_on(board_server):
    client = board_server(GameSettings(opponent=RANDOM, movetime=0.0)).client()
    status, data = client.request("POST", "/api/new", raw=b"{" + b" " * MAX_BODY + b"}")
    assert status == 413 and data["error"] == f"request body over {MAX_BODY} bytes"
    # Refused from the header alone: the body is never waited for.
    status, data = client.request("POST", "/api/move", raw=b"{}", headers={"Content-Length": str(10 ** 9)},
                                  timeout=5)
    assert status == 413
    assert client.post("/api/move", {"move": "7,7"})["moves"][0]["move"] == "7,7"


def half_requests(port: int, count: int, source: str = "127.0.0.1") -> list[socket.socket]:
    """Connections that send half a request line and then nothing."""
    held = []
    for _ in range(count):
        conn = socket.create_connection(("127.0.0.1", port), timeout=15, source_address=(source, 0))
        conn.sendall(b"GET /api/opt")
        held.append(conn)
    return held


def test_slow_clients_do_not_stop_others_and_are_closed_after_the_timeout(board_server):
    board = board_server(GameSettings(opponent=RANDOM, movetime=0.0), limits=ServerLimits(timeout=2.0))
    started = time.monotonic()
    slow = half_requests(board.port, 20)
    client = board.client()
    client.post("/api/move", {"move": "7,7"})
    assert len(client.wait_for(lambda s: len(s["moves"]) == 2)["moves"]) == 2
    assert board.server.connections.open_count() >= 20          # served while all twenty hang
    for conn in slow:
        assert conn.recv(100) == b""                               # closed, unanswered
        conn.close()
    assert 1.5 < time.monotonic() - started < 12                  # by the 2 s timeout
    assert client.state()["moves"]


def wait_until(predicate, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def test_connections_over_the_cap_get_503_at_once(board_server):
    board = board_server(GameSettings(opponent=RANDOM, movetime=0.0),
                         limits=ServerLimits(timeout=30.0, per_client=4, total=6))
    held = half_requests(board.port, 4)
    over = half_requests(board.port, 1)[0]
    started = time.monotonic()
    answer = over.recv(1000)
    assert answer.startswith(b"HTTP/1.1 503 ") and b"too many open connections" in answer
    assert over.recv(100) == b"" and time.monotonic() - started < 5
    try:                                     # the cap in all: 127.0.0.2 is this machine too
        others = half_requests(board.port, 2, source="127.0.0.2")
    except OSError as exc:
        pytest.skip(f"no second loopback address here: {exc}")
    third = half_requests(board.port, 1, source="127.0.0.2")[0]
    assert third.recv(1000).startswith(b"HTTP/1.1 503 ")
    for conn in [*held, *others, over, third]:
        conn.close()
    wait_until(lambda: board.server.connections.open_count() == 0)
    client = board.client()
    assert client.post("/api/move", {"move": "7,7"})["moves"][0]["move"] == "7,7"


def test_connection_cap_counts_per_client_and_in_all():
    cap = ConnectionCap(per_client=2, total=3)
    assert [cap.admit("a"), cap.admit("a"), cap.admit("a")] == [True, True, False]
    assert [cap.admit("b"), cap.admit("c")] == [True, False]
    cap.release("a")
    assert cap.admit("c") and cap.open_count() == 3 and cap.open_count("a") == 1


def test_a_flood_of_requests_does_not_stall_the_game(board_server):
    """300 requests from 6 threads (good keys and bad, some asking to run a program) while
    the engine plays: every one is answered, and the engine keeps answering moves."""
    key = "flood-key-0123456789"
    board = board_server(GameSettings(opponent=builtin("random", seed=3), movetime=0.05), key=key,
                         limits=ServerLimits(timeout=5.0))
    client = board.client()
    requests = [("GET", "/api/options", {KEY_HEADER: key}, None),
                ("GET", "/api/state", {KEY_HEADER: "bad"}, None),
                ("GET", "/static/play.css", {"Cookie": f"plyzero_key={key}"}, None),
                ("GET", "/?key=bad", {}, None),
                ("POST", "/api/new", {KEY_HEADER: key, TOKEN_HEADER: client.token},
                 {"opponent": {"kind": "external", "command": "sleep 100"}}),
                ("POST", "/api/new", {KEY_HEADER: "bad"}, {"opponent": {"kind": "external", "command": "x"}})]
    answered: Counter[int] = Counter()
    lock = threading.Lock()
    deadline = time.monotonic() + 60

    def flood(offset: int) -> None:
        flooder = board.client(claim=False, with_key=False)
        for n in range(50):
            if time.monotonic() > deadline:
                return
            method, path, headers, body = requests[(offset + n) % len(requests)]
            status, _ = flooder.request(method, path, body, headers=headers, timeout=20)
            with lock:
                answered[status] += 1

    threads = [threading.Thread(target=flood, args=(n,), daemon=True) for n in range(6)]
    for thread in threads:
        thread.start()
    for x in range(0, 10, 2):                       # stones two apart: never five in a row
        snap = client.state()
        if snap["board"]["cells"][x] != "0":
            continue
        client.post("/api/move", {"move": f"{x},0"})
        snap = client.wait_for(lambda s: s["turn"] == "human", timeout=30)
    for thread in threads:
        thread.join(90)
    assert sum(answered.values()) == 300 and set(answered) == {200, 400, 403}, answered
    assert len(snap["moves"]) >= 8 and snap["moves"] == client.state()["moves"]
    assert board.server.session.settings.opponent.name == "random (seed=3)"
    wait_until(lambda: board.server.connections.open_count() == 0)


# --- settings and the command line -------------------------------------------------------------

def test_settings_keep_what_is_not_sent_and_check_what_is():
    base = GameSettings(game="gomoku", width=12, height=10, rule="standard", opponent=RANDOM)
    settings = parse_settings({"movetime": "2.5", "human": 1}, base)
    assert (settings.width, settings.height, settings.rule, settings.movetime, settings.human) == (12, 10, "standard",
                                                                                                   2.5, 1)
    assert settings.opponent == RANDOM
    assert parse_settings({"width": 9}, base).height == 9
    allowed = allow_list(["'/opt/my engine' --uci"])
    ext = parse_settings({"opponent": {"kind": "external", "name": "my engine"}}, base, allowed)
    assert ext.opponent.command == ("/opt/my engine", "--uci") and ext.opponent.name == "my engine"
    assert allowed.allows(ext.opponent) and not allowed.allows(Opponent(kind="external", command=("sh",),
                                                                        engine="my engine"))
    for payload, message in (({"lines": 0}, "lines: 1..8"), ({"movetime": -1}, "movetime: 0..3600"),
                             ({"opponent": {"kind": "external", "name": ""}}, "picked by name"),
                             ({"opponent": {"kind": "external", "name": "sh"}}, "no external engine 'sh'"),
                             ({"opponent": {"kind": "external", "command": "'/opt/my engine' --uci"}},
                              "cannot name a program to run"),
                             ({"opponent": {"options": {"weights": "/tmp/x.pt"}}}, "not a network")):
        with pytest.raises(RequestError, match=message):
            parse_settings(payload, base, allowed)
    with pytest.raises(RequestError, match="offers no external engine"):
        parse_settings({"opponent": {"kind": "external", "name": "my engine"}}, base)


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
    for args, message in ((["--external", ""], "no command to run"),
                          (["--external", "sf=/bin/a", "--external", "sf=/bin/b"], "two external engines named 'sf'"),
                          (["--external", "/bin/a", "--external", "/usr/bin/a"], "two external engines named 'a'"),
                          (["--external", "'open"], "No closing quotation"),
                          (["--key", "short"], "a key is 16 to 128 characters")):
        result = runner.invoke(main, ["play", "--no-browser", "--port", "0", *args])
        assert result.exit_code == 2 and isinstance(result.exception, SystemExit), result.output
        error = [line for line in result.output.splitlines() if line.startswith("Error:")]
        assert len(error) == 1 and message in error[0] and "Traceback" not in result.output


@contextlib.contextmanager
def engine_play_console(*args: str):
    """`engine play` as a person runs it (console script, chess against random, port 0):
    yields (process, port, first line) once it has printed its address; kills it on the way out."""
    from conftest import console_script, default_sigint, engine_env

    process = subprocess.Popen([console_script("engine"), "play", "--game", "chess", "--player", "random",
                                "--no-browser", "--port", "0", *args], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, env=engine_env(), preexec_fn=default_sigint)
    try:
        line = process.stdout.readline()
        found = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
        assert found is not None, line
        yield process, int(found.group(1)), line
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

    with engine_play_console() as (process, port, _):
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=30) as response:
            assert b'<div id="board"' in response.read()
        ctrl_c(process)


def test_ctrl_c_ends_the_server_while_a_browser_holds_a_connection_open():
    """Browsers keep HTTP/1.1 connections alive (and the live view long-polls): Ctrl-C must
    not wait for them to close."""
    import http.client

    with engine_play_console() as (process, port, _):
        browser = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        browser.request("GET", "/")                       # keep-alive: the connection stays open
        assert b'<div id="board"' in browser.getresponse().read()
        ctrl_c(process)
        browser.close()


def test_engine_play_on_the_network_prints_its_key_and_wants_it():
    import urllib.error
    import urllib.request

    with engine_play_console("--host", "0.0.0.0") as (process, port, line):
        found = re.search(r"(http://127\.0\.0\.1:\d+/\?key=([A-Za-z0-9_-]{32,}))", line)
        assert found is not None, line
        notice = process.stdout.readline()
        assert "every request needs the key" in notice and "--external" in notice
        with urllib.request.urlopen(found.group(1), timeout=30) as response:
            assert b'<div id="board"' in response.read()
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/api/options", timeout=30)
        assert refused.value.code == 403
        ctrl_c(process)


def test_renju_board_refuses_black_s_forbidden_point_with_its_reason(board_server):
    """The web board plays the rules the referee does: under renju a double three typed for
    black is refused with the reason, and the same point is open to white."""
    stones = "3,1 14,14 3,2 14,0 1,3 8,14 2,3 14,8"          # black, white, ... : black to move
    settings = GameSettings(width=15, height=15, rule="renju", mode="analysis", opponent=RANDOM,
                            position=stones)
    client = board_server(settings).client()
    status, data = client.request("POST", "/api/move", {"move": "3,3"})
    assert status == 400 and "forbidden point for black (double-three)" in data["error"]
    client.post("/api/move", {"move": "10,10"})               # black elsewhere; now white may take 3,3
    snap = client.post("/api/move", {"move": "3,3"})
    assert snap["moves"][-1]["move"] == "3,3"
