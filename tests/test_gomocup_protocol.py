"""Gomocup brain: pure functions and in-process transcripts through serve() (no subprocess)."""
from __future__ import annotations

import io
import re
import threading
import time

import pytest

from engine.players import PlayerOptions, make_searcher
from engine.games import GameSetupError, get_game
from engine.games.gomoku import GomokuState
from engine.games.gomoku.swap2 import PROPOSE_FINALISTS, PROPOSE_MIN_SECONDS, PROPOSE_SCREEN_SHARE, book_shapes
from engine.types import Limits, SearchInfo, SearchResult
from protocols.gomocup import serve
from protocols.gomocup_policy import (INSTANT_S, MATCH_HARD_SHARES, MATCH_SOFT_SHARE, MEMORY_LIMITED_THREADS,
                                      MOVE_COST_MS, UNLIMITED_MS, brain_threads, fallback_move, format_message,
                                      keep_back_latency, move_budget, moves_to_go)

MOVE = re.compile(r"^\d+,\d+$")


# ---- move_budget ----------------------------------------------------------------------
def test_budget_timeout_turn_zero_moves_at_once():
    limits = move_budget(0, 100_000, 180_000, 10)
    assert limits.depth == 1 and limits.time is not None and limits.time <= 0.05


def test_budget_unlimited_match_spends_most_of_the_turn():
    for time_left, match in ((UNLIMITED_MS, 180_000), (None, None), (50_000, 0)):
        limits = move_budget(1000, time_left, match, 20)
        assert limits.depth is None and limits.soft_time is None
        assert 0.8 <= limits.time < 1.0


def test_budget_match_clock_binds_and_keeps_a_reserve():
    """The soft budget is the clock's share per move (less what is reserved for each later
    move, then the margin), the hard one MATCH_HARD_SHARES of it, both within the turn."""
    limits = move_budget(30_000, 100_000, 180_000, 0)
    assert limits.time is not None and limits.soft_time is not None
    share_s = (100_000 - (moves_to_go(0) + 1) * MOVE_COST_MS) / moves_to_go(0) / 1000
    assert MATCH_SOFT_SHARE * share_s - 0.3 <= limits.soft_time < MATCH_SOFT_SHARE * share_s
    assert MATCH_HARD_SHARES * share_s - 0.3 <= limits.time < MATCH_HARD_SHARES * share_s
    assert limits.time < 30.0 and limits.soft_time < limits.time


@pytest.mark.parametrize("match_ms", [180_000, 90_000, 40_000])
def test_budget_a_match_clock_with_room_for_every_turn_saves_nothing(match_ms):
    """Gomocup sends a match clock with every turn limit: while half of the clock's share
    per move still exceeds the turn, time saved now could never be spent later."""
    limits = move_budget(1000, match_ms, match_ms, 10)
    assert limits.soft_time is None and 0.8 <= limits.time < 1.0


def test_budget_a_match_clock_that_nearly_binds_saves_a_little():
    """A share of 0.8 turns: the soft budget is the share, the hard one the whole turn (a move
    in doubt may take what the clear ones saved)."""
    left = int(800 * moves_to_go(0) + (moves_to_go(0) + 1) * MOVE_COST_MS)   # a share of 800 ms
    limits = move_budget(1000, left, 180_000, 0)
    assert limits.soft_time is not None and limits.time is not None
    assert 0.7 < limits.soft_time < 0.8 and 0.9 < limits.time < 1.0


def test_budget_the_plan_spends_a_short_match_clock():
    """20 s a game, 5 s turns (the measured setting), 15x15 after a 3-stone opening: the first
    searched move plans on the clock less 20 ms for each of its moves the board has room for,
    over moves_to_go, and may take twice that when in doubt."""
    limits = move_budget(5_000, 20_000, 20_000, 3, empty=222)
    assert limits.soft_time is not None and limits.time is not None
    share_s = (20.0 - 111 * MOVE_COST_MS / 1000) / moves_to_go(3)     # 110 later moves and this one
    assert 0.94 * share_s < limits.soft_time < share_s and 1.88 * share_s < limits.time < 2 * share_s


def test_budget_grows_as_the_game_goes_on():
    early = move_budget(30_000, 60_000, 180_000, 0).time
    late = move_budget(30_000, 60_000, 180_000, 100).time
    assert early is not None and late is not None and late > early


@pytest.mark.parametrize("time_left", [0, -1, -5000])
def test_budget_without_time_left_is_minimal(time_left):
    limits = move_budget(5000, time_left, 180_000, 30)
    assert limits.depth == 1 and limits.time is not None and limits.time <= 0.05


def test_budget_default_turn_when_never_told():
    limits = move_budget(None, None, None, 0)
    assert limits.time is not None and 4.5 < limits.time < 5.0


def test_budget_never_exceeds_the_clock():
    for turn in (1, 30, 100, 300, 1000, 5000, 30_000, 300_000):
        for left in (None, 1, 50, 500, 2000, 10_000, 1_000_000, UNLIMITED_MS):
            for stones in (0, 40, 200):
                limits = move_budget(turn, left, 180_000, stones)
                assert limits.time is not None and limits.time > 0
                cap = min(turn, left if left is not None and left < UNLIMITED_MS else turn)
                assert limits.time * 1000 <= max(cap, 50), (turn, left, stones)
                if limits.soft_time is not None:
                    assert limits.soft_time <= limits.time


@pytest.mark.parametrize("turn_ms, match_ms, stall_ms", [
    (30_000, 180_000, 0), (5_000, 120_000, 20), (1_000, 60_000, 150), (300_000, 1_000_000, 300)])
def test_a_long_game_spending_every_hard_limit_keeps_time_to_its_last_move(turn_ms, match_ms, stall_ms):
    """Gomocup's league clocks (groups, fastgame, finals, a tight one) on 20x20 filled to the
    last cell: a brain that spends its whole hard limit on each of its 200 moves, plus a stall
    per move that it sees only as lag on the manager's clock, never runs out."""
    left = match_ms
    for move in range(200):
        stones = 2 * move
        limits = move_budget(turn_ms, left, match_ms, stones, empty=400 - stones, lag_ms=stall_ms)
        assert limits.time is not None
        left -= limits.time * 1000 + stall_ms
        assert left > 0, (move, left)


def test_the_brain_learns_the_lag_the_match_clock_charges():
    """time_left drops 400 ms more per move than the brain spent: later budgets shrink."""
    fake = Recorder()
    script = ["INFO timeout_turn 5000", "INFO timeout_match 60000", "START 15", "INFO time_left 60000", "BEGIN"]
    script += [f"INFO time_left {60000 - 400 * n}\nTURN {n},0" for n in range(1, 6)]
    talk("\n".join(script) + "\n", fake=fake)
    honest = Recorder()
    script = ["INFO timeout_turn 5000", "INFO timeout_match 60000", "START 15", "INFO time_left 60000", "BEGIN"]
    script += [f"INFO time_left 60000\nTURN {n},0" for n in range(1, 6)]
    talk("\n".join(script) + "\n", fake=honest)
    assert fake.limits[-1].time < honest.limits[-1].time - 0.15


def test_budget_tiny_turn_is_a_depth_one_search():
    limits = move_budget(40, None, 0, 0)
    assert limits.depth == 1 and limits.time is not None and limits.time <= 0.04


# ---- small pure helpers ------------------------------------------------------------------
def test_format_message_shows_depth_value_and_pv():
    game = get_game("gomoku", width=15)
    info = SearchInfo(depth=5, seldepth=7, value=0.25, nodes=1234, time=0.31, pv=(7 * 15 + 7, 8 * 15 + 8),
                      mate_plies=3)
    line = format_message(info, game)
    assert line == "MESSAGE depth 5 value +0.250 win_in 3 nodes 1234 time 310ms pv 7,7 8,8"


def test_fallback_move_is_the_free_cell_nearest_the_centre():
    game = get_game("gomoku", width=15)
    assert game.coords(fallback_move(game.initial_state())) == (7, 7)
    state = game.state_from_stones([game.index(7, 7)], [])
    assert fallback_move(state) in {game.index(x, y) for x, y in ((6, 7), (8, 7), (7, 6), (7, 8))}


def test_state_from_stones_equals_replay_and_takes_overlines_under_standard():
    game = get_game("gomoku", width=9)
    moves = [40, 0, 41, 8, 42, 72]
    replayed = game.state_from_moves(moves)
    built = game.state_from_stones(moves[0::2], moves[1::2])
    assert built.key() == replayed.key() and built.cells == replayed.cells and built.to_play == 0
    standard = get_game("gomoku", width=9, rule="standard")
    six = [game.index(x, 4) for x in range(6)]          # an overline: no win under "standard"
    other = [game.index(x, 8) for x in (0, 2, 4, 6, 8)] + [game.index(0, 0)]
    assert standard.state_from_stones(six, other).outcome() is None
    assert game.state_from_stones(six, other).outcome().winner == 0
    with pytest.raises(GameSetupError):
        game.state_from_stones([0, 1, 2], [3])


# ---- transcripts --------------------------------------------------------------------------
class Recorder:
    """A fake searcher: records what it was asked and plays a scripted or the first legal move."""

    def __init__(self, move=None, raise_error=False, hang=0.0, value=0.0):
        self.states: list[GomokuState] = []
        self.limits: list[Limits] = []
        self.options: list[PlayerOptions] = []
        self.move, self.raise_error, self.hang, self.value = move, raise_error, hang, value

    def factory(self, game, options):
        self.options.append(options)
        return self

    def new_game(self) -> None:
        pass

    def search(self, state, limits, *, stop=None, on_info=None):
        self.states.append(state)
        self.limits.append(limits)
        if self.raise_error:
            raise RuntimeError("boom")
        if self.hang:
            time.sleep(self.hang)      # ignores stop on purpose
        move = self.move if self.move is not None else state.legal_moves()[0]
        return SearchResult(best_move=move, value=self.value)


def talk(script: str, *, fake: Recorder | None = None, player: str = "random") -> list[str]:
    out = io.StringIO()
    options = PlayerOptions(player=player, seed=3)
    factory = fake.factory if fake is not None else make_searcher
    assert serve(options, io.StringIO(script), out, searcher_factory=factory) == 0
    return out.getvalue().splitlines()


def answers(lines: list[str]) -> list[str]:
    return [line for line in lines if not line.startswith(("MESSAGE", "DEBUG"))]


def test_start_and_rectstart_answer_ok():
    assert talk("START 15\nRECTSTART 12,17\nSTART 5\nSTART 26\nRECTSTART 26,5\n") == ["OK"] * 5


@pytest.mark.parametrize("command", ["START 4", "START 27", "START abc", "START", "RECTSTART 30,10",
                                     "RECTSTART 10", "RECTSTART 10,4", "START 15,15"])
def test_bad_sizes_are_errors_and_the_brain_keeps_serving(command):
    lines = talk(f"{command}\nSTART 15\n")
    assert lines[0].startswith("ERROR ") and lines[1] == "OK"


def test_info_is_never_answered_even_before_start():
    script = ("INFO timeout_turn 300\nINFO timeout_match 180000\nINFO time_left 2147483647\n"
              "INFO max_memory 350000000\nINFO game_type 1\nINFO rule 0\nINFO folder /tmp\n"
              "INFO evaluate 3,3\nINFO bogus 1\nINFO timeout_turn nonsense\nINFO\nSTART 15\n")
    assert talk(script) == ["OK"]


def test_unknown_command_is_answered_unknown_and_serving_goes_on():
    lines = talk("HELLO there\nSTART 15\nYXSHOWFORBID\nBEGIN\n")
    assert lines[0].startswith("UNKNOWN ") and lines[1] == "OK" and lines[2].startswith("UNKNOWN ")
    assert MOVE.match(answers(lines)[-1])


def test_about_is_one_line_of_key_value_pairs():
    (line,) = talk("ABOUT\n")
    pairs = dict(re.findall(r'(\w+)="([^"]*)"', line))
    assert pairs["name"] == "PlyZero" and pairs["version"] and pairs["author"] and pairs["country"]
    assert pairs["player"] == "random"
    assert re.fullmatch(r'(\w+="[^"]*")(, \w+="[^"]*")*', line)


def test_move_request_before_start_is_an_error():
    lines = talk("BEGIN\nTURN 3,3\nBOARD\nDONE\nRESTART\nSTART 9\nBEGIN\n")
    assert [line.split()[0] for line in lines[:4]] == ["ERROR"] * 4
    assert lines[4] == "OK" and MOVE.match(answers(lines)[-1])


def test_board_brain_as_second_player():
    fake = Recorder()
    lines = talk("START 15\nBOARD\n7,7,2\n8,8,1\n9,9,2\nDONE\n", fake=fake)
    assert answers(lines)[1] == "0,0"            # the first legal move of the fake
    state = fake.states[0]
    game = state.game
    assert state.to_play == 1 and state.ply == 3
    assert state.stone_at(7, 7) == 1 and state.stone_at(9, 9) == 1   # opponent moved first
    assert state.stone_at(8, 8) == 2                                # the brain's own stone


def test_board_brain_as_first_player_and_mark_counts_as_opponent():
    fake = Recorder()
    talk("START 15\nBOARD\n7,7,1\n8,8,2\nDONE\nBOARD\n7,7,1\n8,8,3\nDONE\n", fake=fake)
    for state in fake.states:
        assert state.to_play == 0 and state.stone_at(7, 7) == 1 and state.stone_at(8, 8) == 2


def test_empty_board_request_and_brain_stone_is_remembered():
    fake = Recorder()
    lines = talk("START 15\nBOARD\nDONE\nTURN 7,7\n", fake=fake)
    assert answers(lines) == ["OK", "0,0", "1,0"]
    second = fake.states[1]
    assert second.stone_at(0, 0) == 1 and second.stone_at(7, 7) == 2 and second.to_play == 0


def test_board_not_the_brains_turn_is_an_error():
    lines = talk("START 15\nBOARD\n1,1,1\n2,2,1\nDONE\nBOARD\n1,1,2\n2,2,2\nDONE\nBEGIN\n")
    assert lines[1].startswith("ERROR") and lines[2].startswith("ERROR")
    assert MOVE.match(answers(lines)[-1])


@pytest.mark.parametrize("bad", ["15,3,1", "3,3,4", "a,b,c", "3,3", "-1,0,2"])
def test_bad_board_lines_are_an_error_and_the_old_position_stays(bad):
    fake = Recorder()
    lines = talk(f"START 15\nTURN 5,5\nBOARD\n1,1,2\n{bad}\nDONE\nTURN 6,6\n", fake=fake)
    assert answers(lines)[2].startswith("ERROR")
    last = fake.states[-1]
    assert last.stone_at(5, 5) == 1 and last.stone_at(6, 6) == 1 and last.stone_at(1, 1) == 0


def test_turn_on_occupied_or_off_board_is_an_error_and_serving_goes_on():
    fake = Recorder()
    lines = talk("START 15\nTURN 7,7\nTURN 7,7\nTURN 0,0\nTURN 15,0\nTURN 3,-1\nTURN x\nTURN 8,8\n",
                 fake=fake)
    assert answers(lines)[:2] == ["OK", "0,0"]
    assert all(line.startswith("ERROR") for line in answers(lines)[2:7])   # 7,7 taken; 0,0 is ours
    assert answers(lines)[7] == "1,0"
    last = fake.states[-1]
    assert last.ply == 3 and last.stone_at(7, 7) == 1 and last.stone_at(8, 8) == 1


def test_takeback_removes_the_stone():
    fake = Recorder()
    lines = talk("START 9\nTURN 4,4\nTAKEBACK 0,0\nTAKEBACK 4,4\nTAKEBACK 4,4\nBEGIN\n", fake=fake)
    assert answers(lines)[2:5] == ["OK", "OK", answers(lines)[4]]
    assert answers(lines)[4].startswith("ERROR")
    assert fake.states[-1].ply == 0


def test_crlf_input_gives_the_same_answers():
    script = "START 15\nINFO timeout_turn 200\nTURN 7,7\nTURN 7,7\nFOO\nABOUT\n"
    plain = talk(script, fake=Recorder())
    assert talk(script.replace("\n", "\r\n"), fake=Recorder()) == plain
    assert plain[0] == "OK" and plain[-1].startswith("name=")


def test_play_echoes_and_takes_the_cell():
    fake = Recorder()
    lines = talk("START 9\nPLAY 4,4\nPLAY 4,4\nTURN 1,1\n", fake=fake)
    assert lines[1] == "4,4" and lines[2].startswith("ERROR")
    assert fake.states[-1].stone_at(4, 4) == 1 and fake.states[-1].to_play == 0


def test_restart_clears_the_board():
    fake = Recorder()
    talk("START 9\nTURN 4,4\nRESTART\nBEGIN\n", fake=fake)
    assert fake.states[-1].ply == 0


SWAP2_THREE = "SWAP2BOARD\n7,7\n7,6\n8,8\nDONE\n"
SWAP2_THREE_FIELDS = "SWAP2BOARD\n7,7,2\n7,6,1\n8,8,2\nDONE\n"     # as BOARD's lines (Rapfi's reading)


@pytest.mark.parametrize("board,rule", [(13, 0), (19, 4)])
def test_swap2board_without_stones_proposes_three_near_the_centre_by_search(board, rule):
    fake = Recorder()
    lines = answers(talk(f"INFO timeout_turn 300\nSTART {board}\nINFO rule {rule}\nSWAP2BOARD\nDONE\n", fake=fake))
    cells = [tuple(map(int, part.split(","))) for part in lines[1].split()]
    c = board // 2
    assert len(cells) == 3 and len(set(cells)) == 3
    assert cells[0] == (c, c) and all(max(abs(x - c), abs(y - c)) <= 2 for x, y in cells)
    assert fake.states and all(state.ply == 3 and state.to_play == 1 for state in fake.states)
    assert len(fake.states) <= 0.3 * PROPOSE_SCREEN_SHARE / PROPOSE_MIN_SECONDS + PROPOSE_FINALISTS
    assert all(0 < limits.time <= 0.3 for limits in fake.limits)


@pytest.mark.parametrize("board", [15, 20])
@pytest.mark.parametrize("rule,code", [("freestyle", 0), ("standard", 1), ("renju", 4)])
def test_swap2board_without_stones_proposes_a_book_opening(rule, code, board):
    fake = Recorder()
    lines = answers(talk(f"INFO timeout_turn 300\nSTART {board}\nINFO rule {code}\nSWAP2BOARD\nDONE\n", fake=fake))
    cells = [tuple(map(int, part.split(","))) for part in lines[1].split()]
    game = get_game("gomoku", width=board, rule=rule)
    c = board // 2
    shape = tuple((x - c, y - c) for x, y in cells)
    images = {tuple((sx * (y if t else x), sy * (x if t else y)) for x, y in book)
              for book in book_shapes(game) for sx in (1, -1) for sy in (1, -1) for t in (False, True)}
    assert cells[0] == (c, c) and shape in images
    assert len(fake.states) == 1 and fake.states[0].ply == 3 and 0 < fake.limits[0].time <= 0.3


@pytest.mark.parametrize("block", [SWAP2_THREE, SWAP2_THREE_FIELDS])
@pytest.mark.parametrize("value,swaps", [(-0.3, True), (0.3, False)])
def test_swap2board_with_three_stones_swaps_when_white_is_worse(value, swaps, block):
    fake = Recorder(value=value)
    lines = answers(talk("START 15\n" + block, fake=fake))
    assert fake.states[-1].ply == 3
    assert fake.states[-1].stone_at(7, 7) == 1 and fake.states[-1].stone_at(7, 6) == 2
    if swaps:
        assert lines[1] == "SWAP"
    else:
        assert MOVE.match(lines[1]) and fake.states[-1].is_legal(fake.states[-1].game.parse_move(fake.states[-1], lines[1]))


def test_swap2board_with_five_stones_plays_the_sixth_then_the_game_goes_on():
    fake = Recorder(value=0.1)
    script = ("START 15\nSWAP2BOARD\n7,7\n7,6\n8,8\n6,6\n9,9\nDONE\n"
              "BOARD\n7,7,2\n7,6,1\n8,8,2\n6,6,1\n9,9,2\n0,0,1\n5,5,2\nDONE\n")
    lines = answers(talk(script, fake=fake))
    assert MOVE.match(lines[1]) and MOVE.match(lines[2])
    assert fake.states[-1].ply == 7 and fake.states[-1].to_play == 1


@pytest.mark.parametrize("block", ["7,7\n", "7,7\n7,7\n8,8\n", "7,7\n7,6\n15,8\n", "7,7\nfoo\n8,8\n",
                                   "7,7\n7,6\n8,8\n9,9\n"])
def test_a_bad_swap2board_is_an_error_and_the_brain_keeps_serving(block):
    lines = answers(talk(f"START 15\nSWAP2BOARD\n{block}DONE\nBEGIN\n"))
    assert lines[1].startswith("ERROR") and MOVE.match(lines[2])


def test_finished_game_is_an_error():
    stones = "".join(f"{x},0,2\n{x},1,1\n" for x in range(4)) + "4,0,2\n10,10,1\n"
    lines = talk(f"START 15\nBOARD\n{stones}DONE\n", fake=Recorder())
    assert lines[1].startswith("ERROR") and "over" in lines[1]


def test_rule_reaches_the_game_and_unsupported_bits_are_said():
    fake = Recorder()
    lines = talk("START 15\nINFO rule 1\nBEGIN\nINFO rule 6\nTURN 3,3\nINFO rule 8\nTURN 5,5\n", fake=fake)
    assert [state.game.rule for state in fake.states] == ["standard", "renju", "caro"]
    assert not lines[1].startswith("MESSAGE")
    assert any(line.startswith("MESSAGE") and "continuous" in line for line in lines[2:])


def test_limits_follow_info_and_nodes():
    fake = Recorder()
    talk("INFO timeout_turn 1000\nSTART 15\nBEGIN\nINFO timeout_turn 0\nTURN 1,1\n", fake=fake)
    first, second = fake.limits
    assert first.time is not None and 0.8 < first.time < 1.0
    assert second.depth == 1
    out = io.StringIO()
    fake = Recorder()
    serve(PlayerOptions(player="random", nodes=77), io.StringIO("START 9\nBEGIN\n"), out,
          searcher_factory=fake.factory)
    assert fake.limits[0].nodes == 77


def test_keep_back_latency_takes_twice_the_latency_within_a_share():
    limits = Limits(time=1.0, soft_time=0.5)
    assert keep_back_latency(limits, 0.0) == limits
    assert keep_back_latency(limits, 100.0).time == pytest.approx(0.8)
    assert keep_back_latency(limits, 100.0).soft_time == pytest.approx(0.5)
    assert keep_back_latency(limits, 400.0).time == pytest.approx(0.7)       # at most 30 % kept back
    instant = Limits(depth=1, time=INSTANT_S)
    assert keep_back_latency(instant, 500.0) == instant


class LateAnswers(Recorder):
    """Searches to its hard limit, then answers `late` seconds after it (a busy machine)."""

    def __init__(self, late: float):
        super().__init__()
        self.late = late

    def search(self, state, limits, *, stop=None, on_info=None):
        time.sleep(limits.time + self.late)
        return super().search(state, limits, stop=stop, on_info=on_info)


def test_the_brain_learns_how_late_it_answers_and_keeps_that_back():
    fake = LateAnswers(0.1)
    talk("INFO timeout_turn 1000\nSTART 15\nBEGIN\nTURN 1,1\nTURN 2,2\n", fake=fake)
    first, second, third = (limits.time for limits in fake.limits)
    assert third == pytest.approx(second, abs=0.03) and second < first - 0.15


def test_max_memory_caps_the_search_tables_of_every_player():
    for player in ("alphabeta", "mcts"):
        fake = Recorder()
        talk("START 15\nINFO max_memory 83886080\nBEGIN\n", fake=fake, player=player)
        assert fake.options[-1].hash_mb == 80 // 6


def test_thread_num_sets_the_network_threads_within_the_cpus(monkeypatch):
    """Yixin Board's INFO thread_num: the brain uses what it is allowed, never more CPUs than it has."""
    assert brain_threads(4, cpus=8) == 4
    assert brain_threads(16, cpus=2) == 2
    assert brain_threads(1, cpus=64) == 1
    assert brain_threads(1000, cpus=1000) == 256       # the option's own ceiling
    assert brain_threads(64, max_memory=350 * 2**20, cpus=64) == MEMORY_LIMITED_THREADS
    assert brain_threads(4, max_memory=350 * 2**20, cpus=64) == 4
    monkeypatch.setattr("protocols.gomocup_policy.default_workers", lambda: 16)   # any machine: 16 cores
    for script, threads in (("INFO thread_num 3\nSTART 15\nBEGIN\n", 3),
                            ("START 15\nINFO thread_num 64\nBEGIN\n", 16),
                            ("START 15\nINFO max_memory 367001600\nINFO thread_num 64\nBEGIN\n",
                             MEMORY_LIMITED_THREADS)):
        fake = Recorder()
        talk(script, fake=fake, player="mcts")
        assert fake.options[-1].threads == threads
    fake = Recorder()
    lines = talk("START 15\nINFO thread_num many\nBEGIN\n", fake=fake, player="mcts")
    assert fake.options[-1].threads == PlayerOptions().threads and MOVE.match(answers(lines)[-1])


def test_a_failing_search_still_answers_a_legal_move():
    lines = talk("START 15\nBEGIN\n", fake=Recorder(raise_error=True))
    assert answers(lines) == ["OK", "7,7"]
    assert any(line.startswith("MESSAGE") and "search failed" in line for line in lines)


def test_an_illegal_move_from_the_searcher_is_replaced():
    lines = talk("START 15\nTURN 7,7\n", fake=Recorder(move=7 * 15 + 7))
    assert answers(lines)[1] != "7,7" and MOVE.match(answers(lines)[1])


def test_an_overrunning_search_is_answered_by_the_watchdog():
    started = time.monotonic()
    lines = talk("START 15\nINFO timeout_turn 300\nBEGIN\n", fake=Recorder(hang=3.0))
    assert answers(lines) == ["OK", "7,7"]
    assert time.monotonic() - started < 1.5     # 0.24 s budget + 2 x 0.25 s grace, not 3 s


def test_a_searcher_that_cannot_be_built_falls_back():
    def factory(game, options):
        if options.player != "random":
            raise ImportError("no such player here")
        return make_searcher(game, options)
    out = io.StringIO()
    serve(PlayerOptions(player="uct"), io.StringIO("START 9\nBEGIN\n"), out, searcher_factory=factory)
    lines = out.getvalue().splitlines()
    assert MOVE.match(lines[-1])
    assert any("uct unavailable" in line for line in lines) and any("playing with random" in line
                                                                   for line in lines)


class _SlowInput(io.TextIOBase):
    """stdin that hands out the script line by line, END only after a pause."""

    def __init__(self, lines: list[str], pause_before_last: float):
        self._lines, self._pause = lines, pause_before_last

    def __iter__(self):
        for i, line in enumerate(self._lines):
            if i == len(self._lines) - 1:
                time.sleep(self._pause)
            yield line


def test_end_mid_search_returns_at_once_without_answer():
    returned = threading.Event()

    class StopAware(Recorder):
        def search(self, state, limits, *, stop=None, on_info=None):
            assert stop is not None
            stop.wait(10.0)
            returned.set()
            return SearchResult(best_move=state.legal_moves()[0], value=0.0)

    out = io.StringIO()
    stdin = _SlowInput(["START 15\n", "INFO timeout_turn 20000\n", "BEGIN\n", "END\n"], 0.2)
    started = time.monotonic()
    serve(PlayerOptions(player="random"), stdin, out, searcher_factory=StopAware().factory)
    assert time.monotonic() - started < 1.0
    time.sleep(0.1)
    assert out.getvalue().splitlines() == ["OK"]
    assert returned.wait(0.5)      # END stopped the search too
