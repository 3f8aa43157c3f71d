"""The web board in a real headless Chromium (selenium): games played by clicks, the live
heat map and arrows, undo, the saved record, bad input and a second tab.  Skipped with the
reason where there is no browser (see tests/browser.py)."""
from __future__ import annotations

import io
import sys
from pathlib import Path
from typing import Any, Callable

import chess
import chess.pgn
import pytest

from browser import downloads_dir

from engine.web import AllowList, GameSettings, Opponent

pytestmark = pytest.mark.timeout(600)

RANDOM = Opponent(options=(("player", "random"), ("seed", 11)))
WAIT = 90.0


def wait(driver: Any, condition: Callable[[Any], Any], timeout: float = WAIT, what: str = "") -> Any:
    from selenium.webdriver.support.ui import WebDriverWait
    return WebDriverWait(driver, timeout, poll_frequency=0.05).until(condition, what)


def open_board(driver: Any, board: Any) -> None:
    driver.get(board.url)
    wait(driver, lambda d: page_state(d)["moves"] is not None, what="the page's first snapshot")


def page_state(driver: Any) -> dict[str, Any]:
    """What the page shows: its move list, status, result, error, record, banner."""
    return driver.execute_script("""
        const text = (id) => document.getElementById(id).textContent;
        const status = text('status');
        return {moves: status === 'connecting…' ? null
                       : [...document.querySelectorAll('#moves li')].map(li => li.dataset.move),
                status, result: text('result'), error: text('error'),
                record: document.getElementById('record').hidden ? null : document.getElementById('record').value,
                banner: document.getElementById('banner').hidden ? null : text('banner-text')};""")


def click(driver: Any, selector: str) -> None:
    driver.find_element("css selector", selector).click()


def wait_moves(driver: Any, count: int) -> list[str]:
    """The move list once it has `count` moves (or the game ended)."""
    state = wait(driver, lambda d: (lambda s: s if len(s["moves"] or []) >= count or s["result"] else None)(
        page_state(d)), what=f"{count} moves")
    return state["moves"]


def saved_record(driver: Any, folder: Path) -> str:
    """Press Save: the record the page shows, checked equal to the file the browser downloaded."""
    click(driver, "#save")
    shown = wait(driver, lambda d: page_state(d)["record"], what="the saved record")
    files = wait(driver, lambda d: finished_downloads(downloads_dir(folder)), what="the downloaded file")
    assert files[0].read_text() == shown
    return shown


def finished_downloads(folder: Path) -> list[Path]:
    """Saved records with content; Chromium's `.crdownload` part file is renamed away under our
    feet (seen in CI: the glob found it, then stat() did not), so it never counts."""
    found = []
    for path in folder.glob("plyzero-*"):
        try:
            if not path.name.endswith(".crdownload") and path.stat().st_size:
                found.append(path)
        except FileNotFoundError:
            pass
    return found


def stones(driver: Any) -> dict[str, str]:
    return driver.execute_script("""return Object.fromEntries([...document.querySelectorAll('#stones .stone')]
        .map(s => [s.dataset.xy, s.classList.contains('black') ? 'black' : 'white']));""")


def test_full_gomoku_game_on_15x15_by_clicks_against_random(browser, board_server, tmp_path):
    board = board_server(GameSettings(width=15, height=15, opponent=RANDOM, movetime=0.0))
    open_board(browser, board)
    labels = browser.execute_script("return [...document.querySelectorAll('.cx')].map(t => t.textContent)")
    assert labels[:4] == ["0", "0", "1", "1"] and len(labels) == 30          # top and bottom edges, 0..14
    assert len(browser.find_elements("css selector", ".cell")) == 225
    clicked: list[str] = []
    row = 7
    while not page_state(browser)["result"]:
        on_board = stones(browser)
        line = [f"{x},{row}" for x in range(3, 8)]
        if any(on_board.get(xy) == "white" for xy in line):
            row += 1                                     # the random player blocked it: next row
            continue
        xy = next(xy for xy in line if xy not in on_board)
        click(browser, f'.cell[data-xy="{xy}"]')
        clicked.append(xy)
        moves = wait_moves(browser, 2 * len(clicked))
    state = page_state(browser)
    assert state["result"] == "1-0 — five in a row" and state["status"] == "Game over: 1-0 (five in a row)"
    assert moves[0::2] == clicked and len(moves) == 2 * len(clicked) - 1
    assert all(stones(browser)[xy] == "black" for xy in clicked)
    record = saved_record(browser, tmp_path)
    assert [line for line in record.splitlines() if not line.startswith("#")] == moves


def test_short_chess_game_by_clicks_and_drag_with_undo_and_pgn(browser, board_server, tmp_path):
    board = board_server(GameSettings(game="chess", opponent=RANDOM, movetime=0.0))
    open_board(browser, board)
    assert len(browser.find_elements("css selector", "img.piece")) == 32
    click(browser, '.sq[data-square="e2"]')
    targets = {e.get_attribute("data-square") for e in browser.find_elements("css selector", ".sq.target")}
    assert targets == {"e3", "e4"}
    assert browser.find_element("css selector", ".sq.sel").get_attribute("data-square") == "e2"
    click(browser, '.sq[data-square="e4"]')
    moves = wait_moves(browser, 2)
    assert moves[0] == "e2e4"

    from selenium.webdriver.common.action_chains import ActionChains
    ActionChains(browser).drag_and_drop(browser.find_element("css selector", '.sq[data-square="g1"]'),
                                        browser.find_element("css selector", '.sq[data-square="f3"]')).perform()
    moves = wait_moves(browser, 4)
    assert moves[2] == "g1f3"
    replay = chess.Board()
    for text in moves:
        replay.push_uci(text)
    for _ in range(2):                                   # two more moves, click-click
        move = sorted(replay.legal_moves, key=lambda m: (m.uci() not in ("f1c4", "d2d3", "b1c3"), m.uci()))[0]
        click(browser, f'.sq[data-square="{chess.square_name(move.from_square)}"]')
        click(browser, f'.sq[data-square="{chess.square_name(move.to_square)}"]')
        moves = wait_moves(browser, len(moves) + 2)
        replay = chess.Board()
        for text in moves:
            replay.push_uci(text)
    pieces = browser.execute_script(
        "return [...document.querySelectorAll('.sq')].filter(s => s.dataset.piece).map(s => s.dataset.square + s.dataset.piece)")
    assert sorted(pieces) == sorted(chess.square_name(sq) + p.symbol() for sq, p in replay.piece_map().items())

    click(browser, "#undo")
    after = wait(browser, lambda d: (lambda s: s["moves"] if len(s["moves"]) == len(moves) - 2 else None)(
        page_state(d)), what="undo")
    assert after == moves[:-2] and page_state(browser)["status"] == "Your move (White)"
    game = chess.pgn.read_game(io.StringIO(saved_record(browser, tmp_path)))
    assert [m.uci() for m in game.mainline_moves()] == after


def test_promotion_choice_and_bad_input_in_the_page(browser, board_server):
    fen = "8/P6k/8/8/8/8/1P6/K7 w - - 0 1"
    board = board_server(GameSettings(game="chess", position=fen, opponent=RANDOM, movetime=0.0))
    open_board(browser, board)
    click(browser, '.sq[data-square="a7"]')
    click(browser, '.sq[data-square="a8"]')
    assert browser.find_element("id", "promo").is_displayed()
    click(browser, '#promo button[data-piece="n"]')
    assert wait_moves(browser, 2)[0] == "a7a8n"
    assert browser.find_element("css selector", '.sq[data-square="a8"]').get_attribute("data-piece") == "N"

    browser.execute_script("document.getElementById('position').value = 'not a fen'")
    click(browser, "#setpos")
    error = wait(browser, lambda d: page_state(d)["error"], what="an error line")
    assert error.startswith("invalid FEN 'not a fen'")
    click(browser, "#setup summary")
    browser.execute_script("""document.getElementById('game').value = 'gomoku';
                              document.getElementById('width').value = '30';""")
    click(browser, "#start")
    wait(browser, lambda d: "outside 5..26" in page_state(d)["error"], what="the board size error")
    assert len(page_state(browser)["moves"]) == 2          # the chess game is still there
    browser.execute_script("""document.getElementById('width').value = '9';
                              document.getElementById('height').value = '9';
                              document.getElementById('more').value = 'depth=3';""")
    click(browser, "#start")
    wait(browser, lambda d: "unknown player option 'depth'" in page_state(d)["error"], what="the option error")
    browser.execute_script("document.getElementById('more').value = 'seed=5 batch=4'")
    click(browser, "#start")
    wait(browser, lambda d: len(d.find_elements("css selector", ".cell")) == 81, what="the 9x9 board")
    assert browser.find_element("id", "more").get_attribute("value") == "seed=5 batch=4"
    assert page_state(browser)["moves"] == [] and page_state(browser)["status"] == "Your move (Black)"


def test_heat_map_while_mcts_analyses_gomoku_and_arrows_for_chess(browser, board_server):
    settings = GameSettings(mode="analysis", position="7,7 8,7 7,8", opponent=Opponent(
        options=(("player", "mcts"), ("batch", 8))))
    board = board_server(settings)
    open_board(browser, board)
    click(browser, "#analyse")
    heat = wait(browser, lambda d: d.execute_script(
        "return [...document.querySelectorAll('#heat .heat')].map(h => [h.dataset.xy, Number(h.dataset.visits)])")
        or None, what="the heat map")
    assert page_state(browser)["status"].startswith("Analysing")
    assert sum(visits for _, visits in heat) > 0
    assert {xy for xy, _ in heat}.isdisjoint({"7,7", "8,7", "7,8"})
    nodes = int(browser.find_element("id", "nodes").get_attribute("data-nodes"))
    assert nodes > 0 and browser.find_element("id", "wdl").get_attribute("data-wdl")
    click(browser, "#priors")
    priors = wait(browser, lambda d: d.execute_script(
        "return [...document.querySelectorAll('#heat .heat')].map(h => Number(h.dataset.prior))") or None)
    assert len(priors) >= len(heat) and all(p > 0 for p in priors)
    click(browser, "#stop")
    wait(browser, lambda d: not page_state(d)["status"].startswith("Analysing"), what="the analysis to stop")

    click(browser, "#setup summary")
    browser.execute_script("document.getElementById('game').value = 'chess'")
    click(browser, "#start")
    wait(browser, lambda d: d.find_elements("css selector", ".sq"), what="the chess board")
    click(browser, "#analyse")
    arrows = wait(browser, lambda d: d.execute_script(
        "return [...document.querySelectorAll('#arrow-layer .arrow')].map(a => a.dataset.move)") or None,
        what="arrows")
    assert set(arrows) <= {m.uci() for m in chess.Board().legal_moves}
    click(browser, "#stop")


def test_a_second_tab_is_told_and_can_take_the_game_over(browser, board_server):
    board = board_server(GameSettings(opponent=RANDOM, movetime=0.0))
    open_board(browser, board)
    first = browser.current_window_handle
    browser.switch_to.new_window("tab")
    browser.get(board.url)
    banner = wait(browser, lambda d: page_state(d)["banner"], what="the in-use banner")
    assert "open in another tab" in banner
    click(browser, "#takeover")
    wait(browser, lambda d: page_state(d)["banner"] is None and d.find_elements("css selector", ".cell"),
         what="the board in the second tab")
    click(browser, '.cell[data-xy="7,7"]')
    assert wait_moves(browser, 2)[0] == "7,7"
    browser.switch_to.window(first)
    banner = wait(browser, lambda d: page_state(d)["banner"], what="the taken-over banner")
    assert banner == "this game was taken over by another tab"


def test_external_engines_are_picked_by_name_from_the_command_lines_list(browser, board_server, monkeypatch):
    from selenium.webdriver.support.ui import Select

    from protocols.external_searcher import external_searcher

    monkeypatch.delenv("PYTHONUNBUFFERED", raising=False)
    allowed = AllowList(engines={"brain": (sys.executable, "-m", "engine.cli", "gomocup", "--player", "random")})
    board = board_server(GameSettings(width=9, height=9, opponent=RANDOM, movetime=0.2),
                         external=external_searcher, allowed=allowed)
    open_board(browser, board)
    click(browser, "#setup summary")
    assert browser.find_elements("id", "command") == []                 # no command line to type
    Select(browser.find_element("id", "kind")).select_by_value("external")
    assert [o.get_attribute("value") for o in Select(browser.find_element("id", "engine")).options] == ["brain"]
    click(browser, "#start")
    wait(browser, lambda d: d.find_elements("css selector", ".cell") and page_state(d)["status"].startswith("Your"),
         what="the new game")
    click(browser, '.cell[data-xy="4,4"]')
    assert wait_moves(browser, 2)[0] == "4,4"
    assert board.server.session.settings.opponent == allowed.external("brain")


def test_a_network_board_works_from_the_address_with_its_key(browser, board_server):
    board = board_server(GameSettings(opponent=RANDOM, movetime=0.0), host="0.0.0.0")
    assert "?key=" in board.url
    open_board(browser, board)                     # its script and fetches carry the key
    click(browser, '.cell[data-xy="7,7"]')
    assert wait_moves(browser, 2)[0] == "7,7"
    assert browser.execute_script("return document.cookie") == ""       # HttpOnly: no script reads it
    browser.delete_all_cookies()
    browser.get(board.url.split("?")[0])
    assert "open the address `engine play` printed" in browser.page_source
