"""The Gomocup brain as a real process (`pbrain-plyzero`, `engine gomocup`) through GomocupClient.

Started without PYTHONUNBUFFERED (a missing flush must show) and as argument lists.
The test plays a seeded random mover on its own GomokuState and checks every answer.
"""
from __future__ import annotations

import os
import random
import time

import pytest

from conftest import console_script, engine_env
from engine.games import get_game
from engine.games.gomoku import GomokuGame, GomokuState
from protocols.gomocup_client import (GomocupClient, GomocupCrashed, GomocupError, GomocupTimeout,
                                      parse_about, parse_move)

PLAYER = "alphabeta"
TURN_MS = 400
TOLERANCE_S = 0.6     # beyond timeout_turn: this machine is shared (managers allow 1.0 s)


def brain(*extra: str, script: str = "pbrain-plyzero") -> GomocupClient:
    if script == "engine":
        argv = [console_script("engine"), "gomocup", "--player", PLAYER, *extra]
    else:
        argv = [console_script(script), "--player", PLAYER, *extra]
    return GomocupClient(argv, env=engine_env())


def brain_move(game: GomokuGame, state: GomokuState, answer: tuple[int, int],
               client: GomocupClient) -> GomokuState:
    x, y = answer
    move = game.index(x, y)
    assert state.is_legal(move), f"illegal brain move {x},{y}\n{state}"
    assert client.last_move_time is not None and client.last_move_time < TURN_MS / 1000 + TOLERANCE_S
    return state.play(move)


def play_game(client: GomocupClient, width: int, height: int, *, brain_first: bool, board_first: bool,
              seed: int, max_brain_moves: int = 30) -> tuple[GomokuState, float]:
    """Random mover vs the brain; returns the final state and the slowest answer (s)."""
    rng = random.Random(seed)
    game = get_game("gomoku", width=width, height=height)
    assert isinstance(game, GomokuGame)
    client.start(width, height)
    client.info("timeout_turn", TURN_MS)
    client.info("timeout_match", 0)
    client.info("rule", 0)
    state = game.initial_state()
    timeout = TURN_MS / 1000 + 2.0
    slowest = 0.0
    for n in range(max_brain_moves):
        if not (brain_first and n == 0):
            move = rng.choice(state.legal_moves())
            state = state.play(move)
            if state.outcome() is not None:
                break
            x, y = game.coords(move)
            if board_first and n == 0:
                answer = client.board([(x, y, 2)], timeout=timeout)
            else:
                client.info("time_left", 2147483647)
                answer = client.turn(x, y, timeout=timeout)
        elif board_first:
            answer = client.board([], timeout=timeout)
        else:
            answer = client.begin(timeout=timeout)
        state = brain_move(game, state, answer, client)
        slowest = max(slowest, client.last_move_time or 0.0)
        if state.outcome() is not None:
            break
    return state, slowest


def vm_size_mb(pid: int) -> float | None:
    """Virtual size (what the Gomocup judge sums against max_memory), Linux only."""
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None


@pytest.mark.parametrize("width, height, brain_first, board_first", [
    (15, 15, True, False), (20, 20, False, False), (12, 17, False, True)])
def test_full_game_against_a_random_mover(width, height, brain_first, board_first):
    with brain() as client:
        client.info("max_memory", 350_000_000)
        state, slowest = play_game(client, width, height, brain_first=brain_first, board_first=board_first,
                                   seed=width * 100 + height)
        assert client.stderr_lines == []
        vm = vm_size_mb(client.pid)
        assert vm is None or vm < 300, f"VmSize {vm:.0f} MB: the judge counts it against 350 MB"
        assert not any("unavailable" in m for m in client.messages), client.messages
    outcome = state.outcome()
    brain_colour = 0 if brain_first else 1
    assert outcome is not None and outcome.winner == brain_colour, state


def test_engine_gomocup_plays_too_and_reports_search_messages():
    with brain(script="engine") as client:
        state, _ = play_game(client, 15, 15, brain_first=False, board_first=False, seed=5, max_brain_moves=4)
        assert state.ply >= 7
        assert client.last_message is not None and "depth" in client.last_message
        assert client.stderr_lines == []


def test_board_is_a_valid_first_request_even_empty():
    game = get_game("gomoku", width=15)
    with brain() as client:
        client.start(15)
        client.info("timeout_turn", 300)
        first = client.board([], timeout=3.0)
        assert 0 <= first[0] < 15 and 0 <= first[1] < 15
        client.restart()
        x, y = client.board([(7, 7, 2), (8, 8, 1), (6, 6, 2)], timeout=3.0)
        assert (x, y) not in {(7, 7), (8, 8), (6, 6)}
        assert game.index(x, y) in range(225)
        client.takeback(x, y)                       # the brain's own stone
        client.takeback(6, 6)
        assert client.play(6, 6) == (6, 6)          # now the brain's stone
        x2, y2 = client.turn(5, 5, timeout=3.0)
        assert (x2, y2) not in {(7, 7), (8, 8), (6, 6), (5, 5)}
        assert client.stderr_lines == []


@pytest.mark.parametrize("player", ["alphabeta", "mcts"])
def test_a_swap2_opening_then_the_game(player):
    """The manager's swap2 dialogue (Gomocup's experimental tournament, exactly five): the brain
    proposes three stones, then, given them, takes a side; the game goes on with BOARD."""
    game = get_game("gomoku", width=15, rule="standard")
    argv = [console_script("pbrain-plyzero"), "--player", player]
    with GomocupClient(argv, env=engine_env()) as client:
        client.start(15)
        client.info("timeout_turn", TURN_MS)
        client.info("rule", 1)
        proposed = client.swap2board([], timeout=TURN_MS / 1000 + 5.0)   # the first request may load a network
        assert proposed is not None and len(set(proposed)) == 3
        state = game.state_from_moves([game.index(x, y) for x, y in proposed])
        assert all(max(abs(x - 7), abs(y - 7)) <= 4 for x, y in proposed)   # the book reaches four cells
        answer = client.swap2board(proposed, timeout=TURN_MS / 1000 + TOLERANCE_S)
        if answer is None:                      # it took black: white (the test) plays the fourth stone
            state = state.play(game.index(7, 9) if state.is_legal(game.index(7, 9)) else state.legal_moves()[0])
        else:
            assert len(answer) == 1 and state.is_legal(game.index(*answer[0]))
            state = state.play(game.index(*answer[0]))
            state = state.play(next(m for m in state.legal_moves() if m != game.index(7, 9)))  # black's fifth
        brain_colour = state.to_play
        stones = [(*game.coords(m), 1 if state.cells[m] == brain_colour + 1 else 2)
                  for m in range(225) if state.cells[m]]
        x, y = client.board(stones, timeout=TURN_MS / 1000 + TOLERANCE_S)
        assert state.is_legal(game.index(x, y))
        assert client.stderr_lines == []


def test_bad_input_gets_answers_and_the_brain_keeps_playing():
    with brain() as client:
        assert client.request("HELLO world").startswith("UNKNOWN")
        with pytest.raises(GomocupError):
            client.start(27)
        with pytest.raises(GomocupError):
            client.start(12, 4)
        client.start(15)
        client.info("timeout_turn", 300)
        first = client.turn(7, 7, timeout=3.0)
        with pytest.raises(GomocupError, match="occupied"):
            client.turn(7, 7, timeout=3.0)
        with pytest.raises(GomocupError, match="off the"):
            client.turn(15, 2, timeout=3.0)
        with pytest.raises(GomocupError, match="bad field"):
            client.board([(1, 1, 7)], timeout=3.0)
        assert client.request("TURN 3;4").startswith("ERROR malformed")
        assert client.request("XYZZY 1,2").startswith("UNKNOWN")
        second = client.turn(0, 0, timeout=3.0)
        assert second not in {first, (7, 7), (0, 0)}
        about = client.about()
        assert about["name"] == "PlyZero" and about["player"] == PLAYER
        assert client.stderr_lines == []


@pytest.mark.parametrize("request_lines", [["BEGIN"], ["SWAP2BOARD", "DONE"]])
def test_end_exits_at_once_even_mid_search(request_lines):
    with brain() as client:
        client.start(15)
        client.info("timeout_turn", 20000)
        for line in request_lines:
            client.send(line)
        time.sleep(0.5)                     # the brain is thinking now (20 s budget)
        started = time.monotonic()
        code = client.end(wait=1.0)
        elapsed = time.monotonic() - started
        assert code == 0, "the brain had to be killed"
        assert elapsed < 1.0
        assert client.stderr_lines == []


def test_idle_end_exit_code_and_crash_is_reported():
    with brain() as client:
        client.start(9)
        assert client.end() == 0
        with pytest.raises(GomocupCrashed):
            client.begin(timeout=1.0)


def test_client_reports_timeouts_and_garbage():
    assert parse_move("7,8") == (7, 8)
    with pytest.raises(GomocupError, match="malformed"):
        parse_move("hello")
    with pytest.raises(GomocupError):
        parse_move("ERROR nope")
    assert parse_about('name="X", version="1.0", author="A B"') == {"name": "X", "version": "1.0",
                                                                     "author": "A B"}
    with GomocupClient([console_script("pbrain-plyzero"), "--player", "random"], env=engine_env()) as client:
        with pytest.raises(GomocupTimeout):
            client.read_answer(0.2)           # nothing was asked: nothing comes
        client.start(9)
        assert client.request("TAKEBACK 3,3").startswith("ERROR")


def _process_state(pid: int, wanted: str = "", wait: float = 2.0) -> str:
    """The process's state letter (R, S, T...), polled up to `wait` s for `wanted` (signals land late)."""
    deadline = time.monotonic() + wait
    while True:
        with open(f"/proc/{pid}/status") as status:
            state = next(line.split()[1] for line in status if line.startswith("State:"))
        if state in wanted or not wanted or time.monotonic() > deadline:
            return state
        time.sleep(0.01)


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="the judge's habits are read from /proc (Linux)")
def test_the_judges_suspension_and_memory_check_cost_the_brain_nothing():
    """As the Gomocup judge plays: the brain is frozen (SIGSTOP) while its opponent thinks,
    and resumed by the next command; its process tree's memory is readable at every turn."""
    game = get_game("gomoku", width=15, height=15)
    with brain() as client:
        client.start(15)
        client.info("timeout_turn", TURN_MS)
        client.info("max_memory", 350 * 2**20)
        state = game.initial_state()
        state = brain_move(game, state, client.begin(timeout=TURN_MS / 1000 + 2.0), client)
        for n in range(4):
            memory = client.memory()
            assert memory is not None and memory.virtual >= memory.resident > 10 * 2**20
            client.suspend()
            assert _process_state(client.pid, "T") == "T"          # stopped while the opponent thinks
            time.sleep(0.3)
            move = next(m for m in state.legal_moves() if m not in (0, 1, 2, 3))
            state = state.play(move)
            started = time.monotonic()
            answer = client.turn(*game.coords(move), timeout=TURN_MS / 1000 + 2.0)
            assert time.monotonic() - started < TURN_MS / 1000 + TOLERANCE_S   # its clock did not run frozen
            state = brain_move(game, state, answer, client)
            assert _process_state(client.pid, "SR") in "SR"
        client.suspend()
    assert client.process.returncode is not None              # END still reached a frozen brain


def test_message_numbers_read_our_brain_and_rapfi_alike():
    from arena.engines import message_numbers
    assert message_numbers("depth 4 value +0.333 nodes 840 time 462ms pv 7,7 8,7") == {
        "depth": 4, "value": 0.333, "nodes": 840}
    assert message_numbers("Speed 1048K | Depth 20-44 | Eval 193 | Node 1023K | Time 976ms") == {
        "depth": 20, "eval": 193, "nodes": 1_023_000}
    assert message_numbers("Eval -M12 | Node 2M") == {"nodes": 2_000_000}
    assert message_numbers("Realtime best 7,7") == {}
