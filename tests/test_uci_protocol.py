"""UCI adapter: pure functions (parse_go, allocate, format_info, format_bestmove) and
in-process transcripts through serve() with a scripted searcher and the real players."""
from __future__ import annotations

import itertools
import queue
import threading
import time
from typing import Callable, Iterator

import chess
import pytest

from engine.players import PLAYER_NAMES, PlayerOptions
from engine.games.chess import ChessGame, ChessState
from engine.search.limits import Stopper
from engine.search.random_player import RandomPlayer
from engine.types import Limits, SearchInfo, SearchResult
from protocols.timeman import (BASE_RESERVE, HARD_CAP, LAG_RESERVE, LAST_MOVE_CAPS, MIN_BUDGET, SUDDEN_DEATH_HORIZON, LagMeter,
                               allocate, movetime_budget)
from protocols.uci import format_bestmove, format_info, parse_go, serve

GAME = ChessGame()
START = GAME.initial_state()
MATED_FEN = "rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3"  # fool's mate


def go(text: str, turn: int = 0, overhead: float = 30):
    return parse_go(text.split(), turn, overhead_ms=overhead)


# ----------------------------------------------------------------------------- parse_go

def test_parse_go_cutechess_clock_then_depth():
    cmd = go("wtime 300000 btime 300000 winc 2000 binc 2000 depth 10")
    soft, hard = allocate(300000, 300000, 2000, 2000, None, 0, 30)
    assert cmd.limits.time == pytest.approx(hard) and cmd.limits.soft_time == pytest.approx(soft)
    assert cmd.limits.depth == 10 and not cmd.ponder and not cmd.limits.infinite


def test_parse_go_cutechess_omits_zero_increment_and_sends_movestogo():
    cmd = go("wtime 40000 btime 40000 movestogo 20", turn=1)
    assert cmd.limits.soft_time == pytest.approx((40000 - 150) / 20 / 1000)  # the overhead, once
    assert cmd.limits.time <= (40000 - 30) / 1000


def test_parse_go_fastchess_nodes_before_clock():
    cmd = go("nodes 5000 wtime 8000 btime 9000 winc 100 binc 100")
    assert cmd.limits.nodes == 5000 and cmd.limits.time is not None


def test_parse_go_fastchess_one_side_clock_stands_in_for_the_other():
    white = go("wtime 100", turn=0).limits
    black = go("wtime 100", turn=1).limits
    assert white.time == black.time and 0 < white.time <= 0.07


def test_parse_go_pychess_zero_increments():
    cmd = go("wtime 60000 btime 60000 winc 0 binc 0")
    assert cmd.limits == go("wtime 60000 btime 60000").limits
    assert 1.0 < cmd.limits.soft_time < 3.0


def test_parse_go_uses_own_clock_and_increment():
    soft_w = go("wtime 10000 btime 60000 winc 0 binc 5000", turn=0).limits.soft_time
    soft_b = go("wtime 10000 btime 60000 winc 0 binc 5000", turn=1).limits.soft_time
    assert soft_w < 0.5 < 3.0 < soft_b


def test_parse_go_movetime_lands_just_inside():
    limits = go("movetime 50").limits
    assert 0.035 <= limits.time < 0.05 and limits.soft_time == limits.time
    assert go("movetime 1000").limits.time == pytest.approx(0.97)  # margin capped by the overhead
    assert go("movetime 1000", overhead=0).limits.time == pytest.approx(1.0)
    assert go("movetime 2000 wtime 1000 btime 1000").limits.time == pytest.approx(movetime_budget(2000))


def test_parse_go_infinite_ponder_searchmoves_in_any_order():
    cmd = go("searchmoves e2e4 D2D4 ponder wtime 1000 btime 1000 infinite")
    assert cmd.infinite and cmd.ponder and cmd.searchmoves == ("e2e4", "d2d4")
    ponder = go("ponder wtime 1000 btime 1000 winc 10 binc 10")
    assert ponder.ponder and ponder.limits.time is not None and not ponder.limits.infinite


def test_parse_go_mate_becomes_odd_depth_and_depth_wins():
    assert go("mate 3").limits.depth == 5
    assert go("mate 3 depth 2").limits.depth == 2


def test_parse_go_ignores_garbage_and_bad_numbers():
    cmd = go("foo wtime bar btime 1000 nodes -5 depth 0 bogus 7")
    assert cmd.limits.nodes is None and cmd.limits.depth == 1 and cmd.limits.time is not None
    assert cmd.ignored == ("'foo' (unknown)", "wtime 'bar' (not a number)", "'bogus' (unknown)", "'7' (unknown)")
    bare = go("")
    assert bare.limits == Limits() and not bare.ponder and bare.searchmoves == () and bare.ignored == ()
    assert go("depth movetime 50").ignored == ("depth (no value)",) and go("movetime 50").ignored == ()
    assert go("infinite nodes x").ignored == ("nodes 'x' (not a number)",)


def test_parse_go_negative_clock_moves_at_once():
    assert go("wtime -500 btime 1000").limits.time == MIN_BUDGET


# ----------------------------------------------------------------------------- allocate

def test_allocate_never_plans_past_the_clock_after_overhead():
    for remaining, inc, mtg, overhead in itertools.product(
            (31, 50, 100, 1000, 10_000, 600_000), (None, 0, 10, 1000, 30_000), (None, 1, 2, 40, 100),
            (0, 30, 100)):
        soft, hard = allocate(remaining, remaining, inc, inc, mtg, 0, overhead)
        assert MIN_BUDGET <= soft <= hard
        usable = (remaining - (1 + LAG_RESERVE) * overhead) / 1000
        if usable >= 0.002:
            cap = LAST_MOVE_CAPS[1] if mtg == 1 else HARD_CAP
            assert hard <= cap * usable + 1e-12, (remaining, inc, mtg, overhead)


def test_allocate_sane_slices():
    soft, hard = allocate(60_000, 60_000, None, None, None, 0, 30)
    assert 1.4 < soft < 2.5 and 2 * soft <= hard < 24
    soft, hard = allocate(10_000, 10_000, None, None, 1, 1, 30)
    assert 5 < hard <= 9.97
    soft, hard = allocate(1000, 1000, 1000, 1000, None, 0, 30)  # big increment relative to clock
    assert soft >= 0.15 and hard <= 0.97
    assert allocate(1000, 1000, 10, 10, None, 0, 30)[0] < allocate(1000, 1000, 10, 10, None, 0, 0)[0]


def test_allocate_charges_the_overhead_once_and_spends_most_of_the_increment():
    """1+0.01 with a 30 ms overhead: the first move plans the clock less the overhead and
    its fixed reserve (850 ms) / 40, plus 3/4 of the increment, where reserving 30 ms for
    each of 30 future moves left 12 ms and froze the last 640 ms of the clock."""
    soft, hard = allocate(1000, 1000, 10, 10, None, 0, 30)
    assert soft == pytest.approx((850 / SUDDEN_DEATH_HORIZON + 0.75 * 10) / 1000)
    assert hard == pytest.approx(3 * soft)
    for overhead in (0, 30, 100):  # the overhead shifts the clock, it does not shrink the share
        with_inc, _ = allocate(60_000, 60_000, 1000, 1000, None, 0, overhead)
        without, _ = allocate(60_000, 60_000, 0, 0, None, 0, overhead)
        assert with_inc - without == pytest.approx(0.75)


def test_allocate_spends_the_clock_down_to_the_overhead():
    """A low clock still buys thinking time while it exceeds the overhead (no dead reserve)."""
    soft, hard = allocate(300, 300, 10, 10, None, 0, 30)
    assert soft > 0.01 and hard <= 0.075
    assert allocate(150, 150, 10, 10, None, 0, 30) == (MIN_BUDGET, MIN_BUDGET)


def test_allocate_sets_aside_only_the_lag_the_increment_does_not_pay():
    assert allocate(1000, 1000, 10, 10, None, 0, 30, lag=2) == allocate(1000, 1000, 10, 10, None, 0, 30)
    soft, _ = allocate(1000, 1000, 10, 10, None, 0, 30, lag=8)  # the increment pays the lag first
    assert soft == pytest.approx((850 / SUDDEN_DEATH_HORIZON + 2) / 1000)
    soft, _ = allocate(1000, 1000, 10, 10, None, 0, 30, lag=20)
    assert soft == pytest.approx((850 - 10 * (SUDDEN_DEATH_HORIZON - 1)) / SUDDEN_DEATH_HORIZON / 1000)
    assert allocate(400, 400, 10, 10, None, 0, 30, lag=20) == (MIN_BUDGET, MIN_BUDGET)


def test_lag_meter_keeps_a_running_mean_and_a_fading_worst():
    meter = LagMeter()
    for lag in (10, 10, 60, -5, 10):
        meter.observe(lag)
    assert 10 < meter.mean < 30 and 40 < meter.worst < 60
    assert LagMeter().mean == LagMeter().worst == 0.0


def test_allocate_zero_or_negative_time():
    assert allocate(0, 0, 0, 0, None, 0, 30) == (MIN_BUDGET, MIN_BUDGET)
    assert allocate(-200, 5000, 10, 10, None, 0, 30) == (MIN_BUDGET, MIN_BUDGET)
    with pytest.raises(ValueError):
        allocate(None, None, 0, 0, None, 0, 30)


@pytest.mark.parametrize("base_ms, inc_ms, lag_ms", [(1000, 10, 5), (1000, 10, 9), (10_000, 100, 30),
                                                     (60_000, 1000, 30), (3000, 0, 0.5)])
def test_clock_survives_200_moves_spending_the_hard_limit(base_ms, inc_ms, lag_ms):
    """Worst case: every move uses its whole hard budget plus lag the engine cannot see
    (pipes, process wake-up, the searcher's last poll), for 200 moves of one side.  A
    lag within the overhead never flags while the clock exceeds the overhead; below it,
    the engine moves at once and the increment must pay the lag."""
    remaining = float(base_ms)
    for _ in range(200 if inc_ms else 60):
        _, hard = allocate(remaining, remaining, inc_ms, inc_ms, None, 0, 30)
        remaining -= hard * 1000 + lag_ms
        assert remaining > 0, "flagged"
        remaining += inc_ms


def test_allocate_keeps_a_share_of_the_game_clock_in_reserve():
    soft, _ = allocate(1000, 1000, 10, 10, None, 0, 30, base=1000)
    assert soft == pytest.approx(((1000 - 30 - BASE_RESERVE * 1000) / SUDDEN_DEATH_HORIZON + 7.5) / 1000)
    assert allocate(270, 270, 10, 10, None, 0, 30, base=1000) == (MIN_BUDGET, MIN_BUDGET)
    assert allocate(270, 270, 10, 10, None, 0, 30) > (MIN_BUDGET, MIN_BUDGET)
    # a long game keeps one second, not a quarter of itself
    assert allocate(60_000, 60_000, 0, 0, None, 0, 30, base=60_000)[0] == pytest.approx(
        (60_000 - 30 - 1000) / SUDDEN_DEATH_HORIZON / 1000)


@pytest.mark.parametrize("stall_at", [5, 40, 80, 150])
def test_one_200ms_stall_anywhere_in_a_1s_plus_10ms_game_never_flags(stall_at):
    """What flagged a CI run: every move spends its hard budget plus 5 ms of lag, and at
    one move the machine stalls for 200 ms more than that."""
    remaining = 1000.0
    for move in range(200):
        _, hard = allocate(remaining, remaining, 10, 10, None, 0, 30, base=1000)
        remaining -= hard * 1000 + 5 + (200 if move == stall_at else 0)
        assert remaining > 0, f"flagged at move {move}"
        remaining += 10


@pytest.mark.parametrize("base_ms", [1000, 3000, 60_000])
def test_sudden_death_clock_survives_120_moves_at_the_soft_budget(base_ms):
    remaining = float(base_ms)
    for _ in range(120):
        soft, _ = allocate(remaining, remaining, None, None, None, 0, 30)
        remaining -= soft * 1000 + 0.3
        assert remaining > 0, "flagged"


# ----------------------------------------------------------------------------- formatting

def _info(**kw) -> SearchInfo:
    base = dict(depth=7, seldepth=12, value=0.2449, nodes=12345, time=0.5, pv=())
    base.update(kw)
    return SearchInfo(**base)


def test_format_info_cp_nodes_time_pv():
    pv = tuple(chess.Move.from_uci(m) for m in ("e2e4", "e7e5", "g1f3"))
    line = format_info(_info(pv=pv, hashfull=42), START)
    assert line == ("info depth 7 seldepth 12 score cp 100 nodes 12345 nps 24690 hashfull 42 "
                    "time 500 pv e2e4 e7e5 g1f3")


def test_format_info_mate_sign_in_moves():
    assert " score mate 2 " in format_info(_info(mate_plies=3), START)
    assert " score mate 1 " in format_info(_info(mate_plies=1), START)
    assert " score mate -1 " in format_info(_info(mate_plies=-2), START)
    assert " score mate -3 " in format_info(_info(mate_plies=-6), START)


def test_format_info_wdl_only_when_asked_and_known():
    assert "wdl" not in format_info(_info(wdl=(600, 300, 100)), START)
    assert " wdl 600 300 100 " in format_info(_info(wdl=(600, 300, 100)), START, show_wdl=True)
    assert "wdl" not in format_info(_info(), START, show_wdl=True)


def test_format_info_castling_as_king_move_and_stale_pv_truncated():
    state = GAME.state_from_fen("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1")
    castle = [m for m in state.legal_moves() if state.board.is_castling(m) and m.to_square == chess.G1][0]
    stale = chess.Move.from_uci("a1a8")  # legal for White, not for Black after castling
    line = format_info(_info(pv=(castle, stale)), state)
    assert line.endswith("pv e1g1")
    assert " pv" not in format_info(_info(pv=(stale, chess.Move.from_uci("e7e5"))), START)


def test_format_bestmove_legal_ponder_fallback_and_none():
    e4, e5 = chess.Move.from_uci("e2e4"), chess.Move.from_uci("e7e5")
    info = _info(pv=(e4, e5))
    assert format_bestmove(START, SearchResult(e4, 0.0, info=info)) == ("bestmove e2e4 ponder e7e5", None)
    assert format_bestmove(START, SearchResult(e4, 0.0, ponder_move=chess.Move.from_uci("e2e4"))) \
        == ("bestmove e2e4", None)  # an illegal ponder move is dropped
    line, problem = format_bestmove(START, SearchResult(chess.Move.from_uci("e2e5"), 0.0))
    assert problem and line == f"bestmove {START.legal_moves()[0].uci()}"
    line, problem = format_bestmove(START, SearchResult(None, 0.0))
    assert problem and line.startswith("bestmove ") and line != "bestmove 0000"
    mated = GAME.state_from_fen(MATED_FEN)
    assert format_bestmove(mated, SearchResult(None, -1.0)) == ("bestmove 0000", None)
    promoting = GAME.state_from_fen("7k/P7/8/8/8/8/8/K7 w - - 0 1")
    queen = chess.Move.from_uci("a7a8q")
    assert format_bestmove(promoting, SearchResult(queen, 1.0))[0] == "bestmove a7a8q"


# ----------------------------------------------------------------------------- transcripts

class FakeSearcher:
    """Scripted searcher: records what it was asked, reports one info, honours stop and
    time; plays `choose(state)` (default: the first legal move) or raises `fail`."""

    def __init__(self, choose: Callable | None = None, fail: Exception | None = None,
                 wdl: tuple[int, int, int] | None = None, mate_plies: int | None = None,
                 overrun: float = 0.0, note: str | None = None):
        """overrun: seconds the searcher goes on past its hard deadline (a slow poll);
        note: the info's message for the user."""
        self.choose, self.fail, self.wdl, self.mate_plies = choose, fail, wdl, mate_plies
        self.note = note
        self.overrun = overrun
        self.calls: list[tuple[object, Limits]] = []
        self.stoppers: list[Stopper] = []
        self.new_games = 0

    def new_game(self) -> None:
        self.new_games += 1

    def search(self, state, limits, *, stop=None, on_info=None):
        self.calls.append((state, limits))
        self.stoppers.append(stopper := Stopper(limits, stop))
        if limits.infinite or limits.time is not None:
            deadline = time.monotonic() + 30
            while not stopper.should_stop() and time.monotonic() < deadline:
                stopper.event.wait(0.002)
            time.sleep(self.overrun)
        if self.fail is not None:
            raise self.fail
        moves = list(limits.searchmoves or state.legal_moves())
        move = self.choose(state) if self.choose else moves[0]
        info = SearchInfo(depth=3, seldepth=5, value=0.1, nodes=100, time=0.01, pv=(move,),
                          wdl=self.wdl, mate_plies=self.mate_plies, note=self.note)
        if on_info is not None:
            on_info(info)
        return SearchResult(best_move=move, value=0.1, info=info)


class Pipe:
    """stdin stand-in: iterating blocks until the test sends a line; close() is EOF."""

    def __init__(self) -> None:
        self._lines: queue.Queue[str | None] = queue.Queue()

    def send(self, *lines: str) -> None:
        for line in lines:
            self._lines.put(line + "\n")

    def close(self) -> None:
        self._lines.put(None)

    def __iter__(self) -> Iterator[str]:
        while (line := self._lines.get()) is not None:
            yield line


class Screen:
    """stdout stand-in: collects lines; `expect` waits for one starting with a prefix."""

    def __init__(self) -> None:
        self._lines: queue.Queue[str] = queue.Queue()
        self.seen: list[str] = []
        self._partial = ""

    def write(self, text: str) -> None:
        self._partial += text
        *lines, self._partial = self._partial.split("\n")
        for line in lines:
            self._lines.put(line)

    def flush(self) -> None:
        pass

    def expect(self, prefix: str, timeout: float = 10.0) -> str:
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            try:
                line = self._lines.get(timeout=max(0.0, left))
            except queue.Empty:
                raise AssertionError(f"no line starting {prefix!r}; saw {self.seen}") from None
            self.seen.append(line)
            if line.startswith(prefix):
                return line

    def drain(self, wait: float = 0.1) -> list[str]:
        time.sleep(wait)
        out = []
        while not self._lines.empty():
            out.append(self._lines.get())
        self.seen += out
        return out


class Session:
    """serve() on a thread, driven line by line."""

    def __init__(self, options: PlayerOptions | None = None, searcher=None):
        self.stdin, self.stdout = Pipe(), Screen()
        self.exit_codes: list[int] = []
        self.thread = threading.Thread(
            target=lambda: self.exit_codes.append(
                serve(options or PlayerOptions(), self.stdin, self.stdout, searcher=searcher)),
            daemon=True)
        self.thread.start()

    def send(self, *lines: str) -> None:
        self.stdin.send(*lines)

    def ask(self, line: str, prefix: str, timeout: float = 10.0) -> str:
        self.send(line)
        return self.stdout.expect(prefix, timeout)

    def ready(self) -> None:
        self.ask("isready", "readyok")

    def quit(self) -> int:
        self.send("quit")
        self.thread.join(5)
        assert not self.thread.is_alive(), "serve() did not return after quit"
        return self.exit_codes[0]


@pytest.fixture
def fake():
    return FakeSearcher()


@pytest.fixture
def session(fake):
    s = Session(searcher=fake)
    yield s
    s.stdin.close()
    s.thread.join(5)


def _bestmove(line: str, state=START) -> chess.Move:
    move = chess.Move.from_uci(line.split()[1])
    assert move in state.legal_moves(), line
    return move


def test_uci_handshake_lists_options_and_ends_with_uciok(session):
    session.send("uci")
    assert session.stdout.expect("id name").startswith("id name PlyZero ")
    uciok_seen = session.stdout.expect("uciok")
    assert uciok_seen == "uciok"
    names = [line for line in session.stdout.seen if line.startswith("option name ")]
    for option in ("Player type combo", "WeightsFile type string", "Nodes type spin", "MinibatchSize",
                   "CPuct", "Threads type spin", "Hash type spin", "Move Overhead type spin",
                   "MultiPV type spin", "UCI_ShowWDL type check", "Clear Hash type button"):
        assert any(line.startswith(f"option name {option}") for line in names), option
    assert session.quit() == 0


def test_go_infinite_holds_bestmove_until_stop_and_isready_answers_meanwhile(session):
    session.send("position startpos moves e2e4", "go infinite")
    session.ready()
    assert not [line for line in session.stdout.drain(0.2) if line.startswith("bestmove")]
    _bestmove(session.ask("stop", "bestmove"), GAME.state_from_fen("startpos", ["e2e4"]))
    session.send("stop", "stop")  # PyChess's second stop, and a stray one
    session.ready()
    assert sum(line.startswith("bestmove") for line in session.stdout.seen) == 1


def test_searcher_finishing_early_under_infinite_still_waits_for_stop():
    s = Session(searcher=RandomPlayer(seed=1))  # answers at once, whatever the limits
    s.send("position startpos", "go infinite")
    s.ready()
    assert not [line for line in s.stdout.drain(0.2) if line.startswith("bestmove")]
    _bestmove(s.ask("stop", "bestmove"))
    s.send("position fen " + MATED_FEN, "go infinite")  # no legal move: known at once, held too
    s.ready()
    assert not [line for line in s.stdout.drain(0.2) if line.startswith("bestmove")]
    assert s.ask("stop", "bestmove") == "bestmove 0000"
    assert s.quit() == 0


def test_ponderhit_gives_the_budget_of_a_fresh_go_with_the_same_clock(session, fake):
    """One clock, one budget: the ponder search carries the clock's limits, and they start
    at ponderhit; the fake searcher spends its whole hard budget from there."""
    session.send("position startpos", "go ponder wtime 2000 btime 2000 winc 20 binc 20")
    session.ready()
    fresh = parse_go("wtime 2000 btime 2000 winc 20 binc 20".split(), 0, base_ms=2000).limits
    pondering = fake.calls[-1][1]
    assert pondering.ponder and (pondering.time, pondering.soft_time) == (fresh.time, fresh.soft_time)
    stopper = fake.stoppers[-1]
    assert stopper.hard_deadline is None  # no clock runs while pondering
    assert not [line for line in session.stdout.drain(0.2) if line.startswith("bestmove")]
    hit = time.monotonic()
    _bestmove(session.ask("ponderhit", "bestmove"))
    assert stopper.hard_deadline is not None and stopper.soft_deadline is not None
    assert stopper.hard_deadline - hit == pytest.approx(fresh.time, abs=0.05)
    assert stopper.soft_deadline - hit == pytest.approx(fresh.soft_time, abs=0.05)


def test_lag_the_client_charges_beyond_our_own_time_shrinks_the_next_budgets(session, fake):
    """The client's clock drops 200 ms more per move than the engine measured: from then
    on that lag is the overhead, and what the increment does not pay is set aside."""
    clock = 10_000.0
    session.send("ucinewgame", "position startpos")
    shuffle = ["g1f3", "g8f6", "f3g1", "f6g8"]
    for ply in (0, 2, 4):
        session.send(" ".join(["position startpos moves", *shuffle[:ply]]))
        started = time.monotonic()
        session.send(f"go wtime {clock:.0f} btime 10000 winc 10 binc 10")
        session.stdout.expect("bestmove")
        clock -= 1000 * (time.monotonic() - started) + 200 - 10
    unaware = parse_go(f"wtime {clock:.0f} btime 10000 winc 10 binc 10".split(), 0).limits
    assert fake.calls[-1][1].soft_time < 0.5 * unaware.soft_time


def test_the_engine_learns_its_own_overrun_and_plans_for_it():
    """A searcher that answers 150 ms after its hard deadline, 10 ms increment: the server
    sees the overrun itself (one process playing both sides, so no client lag is seen)
    and sets it aside, so later budgets shrink below those of a clean engine."""
    slow = FakeSearcher(overrun=0.15)
    s = Session(searcher=slow)
    s.send("ucinewgame")
    moves: list[str] = []
    for _ in range(3):
        s.send(" ".join(["position startpos moves", *moves]) if moves else "position startpos",
               "go wtime 10000 btime 10000 winc 10 binc 10")
        moves.append(s.stdout.expect("bestmove").split()[1])
    clean = parse_go("wtime 10000 btime 10000 winc 10 binc 10".split(), 0, base_ms=10_000).limits
    assert slow.calls[-1][1].soft_time < 0.8 * clean.soft_time
    assert s.quit() == 0


def test_movetime_keeps_back_twice_the_measured_latency_within_a_cap():
    assert movetime_budget(1000) == pytest.approx(0.970)
    assert movetime_budget(1000, latency=50) == pytest.approx(0.870)
    assert movetime_budget(1000, latency=400) == pytest.approx(0.700)      # at most 30 % kept back
    assert movetime_budget(50, latency=0) == pytest.approx(0.040)          # 20 % of a short movetime


def test_a_late_answer_under_movetime_makes_the_next_moves_keep_more_back():
    """A searcher that answers 120 ms after its budget (a busy machine): the server sees it
    and the next `go movetime 1000` searches shorter, so the answer lands inside the
    movetime; a clean engine keeps its full budget."""
    slow = FakeSearcher(overrun=0.12)
    s = Session(searcher=slow)
    s.send("ucinewgame")
    moves: list[str] = []
    answers: list[float] = []
    for _ in range(3):
        s.send(" ".join(["position startpos moves", *moves]) if moves else "position startpos")
        started = time.monotonic()
        s.send("go movetime 1000")
        moves.append(s.stdout.expect("bestmove").split()[1])
        answers.append(time.monotonic() - started)
    assert slow.calls[0][1].time == pytest.approx(movetime_budget(1000))
    assert slow.calls[-1][1].time < movetime_budget(1000) - 0.2
    assert answers[0] > 1.05 and answers[-1] < 1.0
    assert s.quit() == 0


def test_the_game_clock_keeps_a_reserve_and_a_new_game_forgets_it(session, fake):
    """The largest clock of the game sets the reserve: at 280 ms left of a one-second
    game (250 ms reserve, 30 ms overhead) the engine moves at once, while a new game that
    starts at 280 ms plans a real move."""
    session.send("ucinewgame", "position startpos", "go wtime 1000 btime 1000 winc 10 binc 10")
    session.stdout.expect("bestmove")
    session.send("position startpos moves e2e4", "go wtime 1000 btime 280 winc 10 binc 10")
    session.stdout.expect("bestmove")
    assert fake.calls[-1][1].time == MIN_BUDGET
    session.send("ucinewgame", "position startpos", "go wtime 280 btime 280 winc 10 binc 10")
    session.stdout.expect("bestmove")
    # A real move: above the at-once budget (normally about 32 ms, soft 11 ms; how far above
    # depends on the lag the session has measured, which a busy CI machine inflates).
    assert fake.calls[-1][1].time > MIN_BUDGET and fake.calls[-1][1].soft_time > MIN_BUDGET


def test_ponder_without_a_clock_answers_at_ponderhit(session, fake):
    session.send("position startpos", "go ponder")
    session.ready()
    assert fake.calls[-1][1].infinite
    _bestmove(session.ask("ponderhit", "bestmove"))


def test_ponder_then_stop_answers_once(session):
    session.send("position startpos", "go ponder wtime 2000 btime 2000")
    session.ready()
    _bestmove(session.ask("stop", "bestmove"))
    session.send("ponderhit", "stop")
    session.ready()
    assert sum(line.startswith("bestmove") for line in session.stdout.seen) == 1


def test_go_during_a_search_answers_both_exactly_once(session):
    session.send("position startpos", "go infinite")
    session.ready()
    session.send("go movetime 30")
    session.stdout.expect("bestmove")
    session.stdout.expect("bestmove")
    session.ready()
    assert sum(line.startswith("bestmove") for line in session.stdout.seen) == 2


def test_movetime_search_gets_the_budget_and_searchmoves(session, fake):
    session.send("position startpos", "go movetime 40 searchmoves g1f3 b1c3 e2e5")
    assert session.stdout.expect("bestmove") == "bestmove g1f3"
    limits = fake.calls[-1][1]
    assert limits.time == pytest.approx(movetime_budget(40)) and not limits.infinite
    assert [m.uci() for m in limits.searchmoves] == ["g1f3", "b1c3"]
    assert any(line.startswith("info depth 3 seldepth 5 score cp") and line.endswith("pv g1f3")
               for line in session.stdout.seen)


def test_malformed_fen_keeps_previous_position(session, fake):
    session.send("position startpos moves e2e4 e7e5")
    session.send("position fen not/a/fen w - - 0 1")
    assert session.stdout.expect("info string error:")
    session.send("position fen")
    assert session.stdout.expect("info string error:")
    session.send("go depth 1")
    session.stdout.expect("bestmove")
    assert fake.calls[-1][0].board.fen() == GAME.state_from_fen("startpos", ["e2e4", "e7e5"]).board.fen()


def test_a_go_with_garbage_says_what_it_ignored_and_still_answers(session, fake):
    session.send("position startpos")
    session.send("go movetime abc depth 2 perft")
    error = session.stdout.expect("info string error:")
    assert "movetime 'abc'" in error and "'perft'" in error
    session.stdout.expect("bestmove")
    assert fake.calls[-1][1].depth == 2 and fake.calls[-1][1].time is None


def test_illegal_move_in_list_uses_the_position_before_it(session, fake):
    session.send("position startpos moves e2e4 e7e5 e1e3 g1f3")
    assert "e1e3" in session.stdout.expect("info string error:")
    session.send("go depth 1")
    session.stdout.expect("bestmove")
    assert fake.calls[-1][0].board.fen() == GAME.state_from_fen("startpos", ["e2e4", "e7e5"]).board.fen()


def test_long_history_is_accepted(session, fake):
    board, moves = chess.Board(), []
    for ply in range(300):  # knights shuffling: a long, legal history
        move = [chess.Move.from_uci(m) for m in ("g1f3", "g8f6", "f3g1", "f6g8")][ply % 4]
        board.push(move)
        moves.append(move.uci())
    session.send("position startpos moves " + " ".join(moves), "go depth 1")
    session.stdout.expect("bestmove")
    assert fake.calls[-1][0].board.fen() == board.fen()


def test_no_legal_moves_gives_0000(session, fake):
    session.send("position fen " + MATED_FEN, "go movetime 20")
    assert session.stdout.expect("bestmove") == "bestmove 0000"
    assert fake.calls == []


def test_searcher_exception_still_gives_a_legal_bestmove():
    s = Session(searcher=FakeSearcher(fail=RuntimeError("boom\nsecond line")))
    s.send("position startpos", "go depth 3")
    assert "boom" in s.stdout.expect("info string error: search failed")
    _bestmove(s.stdout.expect("bestmove"))
    s.ready()
    assert s.quit() == 0


def test_illegal_searcher_move_is_replaced():
    s = Session(searcher=FakeSearcher(choose=lambda state: chess.Move.from_uci("e2e5")))
    s.send("position startpos", "go depth 1")
    _bestmove(s.stdout.expect("bestmove"))
    assert any(line.startswith("info string error:") for line in s.stdout.seen)
    assert s.quit() == 0


def test_garbage_unknown_commands_and_tokens_are_ignored(session):
    session.send("hello there", "\x01\x02 ###", "register later", "joho debug on", "isready")
    session.stdout.expect("readyok")
    session.send("position startpos moves", "go wibble movetime 20 wobble")
    _bestmove(session.stdout.expect("bestmove"))


def test_setoption_names_are_case_insensitive_and_unknown_ones_harmless(fake):
    s = Session(searcher=fake)
    s.send("setoption name move overhead value 250", "setoption name Frobnicate value 3",
           "setoption name Hash value lots", "setoption name uci_showwdl value true",
           "setoption name MultiPV value 3", "setoption name Clear Hash", "setoption")
    s.ready()
    assert any("Frobnicate" in line or "frobnicate" in line for line in s.stdout.seen)
    assert any(line.startswith("info string error: option 'hash'") for line in s.stdout.seen)
    assert fake.new_games == 1  # the button, applied at isready
    s.send("position startpos", "go wtime 1000 btime 1000")
    s.stdout.expect("bestmove")
    assert fake.calls[-1][1].time == pytest.approx(allocate(1000, 1000, 0, 0, None, 0, 250)[1])
    assert s.quit() == 0


def test_show_wdl_and_mate_scores_in_info():
    s = Session(searcher=FakeSearcher(wdl=(700, 200, 100), mate_plies=-4))
    s.send("setoption name UCI_ShowWDL value true", "position startpos", "go depth 2")
    line = s.stdout.expect("info depth")
    assert " score mate -2 wdl 700 200 100 " in line
    s.stdout.expect("bestmove")
    assert s.quit() == 0


def test_a_search_s_note_is_an_info_string_before_its_report():
    s = Session(searcher=FakeSearcher(note="tree full (16384 nodes): raise Hash"))
    s.send("position startpos", "go depth 2")
    assert s.stdout.expect("info string") == "info string tree full (16384 nodes): raise Hash"
    s.stdout.expect("info depth 3")
    s.stdout.expect("bestmove")
    assert s.quit() == 0


def test_quit_during_infinite_search_returns_promptly(session):
    session.send("position startpos", "go infinite")
    session.ready()
    started = time.monotonic()
    assert session.quit() == 0
    assert time.monotonic() - started < 2.0


def test_eof_ends_the_session_with_exit_code_zero():
    s = Session(searcher=FakeSearcher())
    s.send("uci", "position startpos", "go infinite")
    s.stdout.expect("uciok")
    s.stdin.close()
    s.thread.join(5)
    assert s.exit_codes == [0]


def test_bad_player_options_keep_the_previous_player():
    s = Session(PlayerOptions(player="random", seed=1))
    s.ready()
    s.send("setoption name Player value mcts", "setoption name WeightsFile value /nonexistent/net.pt")
    s.ready()
    assert any(line.startswith("info string error: player mcts unavailable") for line in s.stdout.seen)
    s.send("setoption name Player value nonsense")
    assert "unknown player" in s.stdout.expect("info string error:")
    s.send("position startpos moves d2d4", "go movetime 20")
    _bestmove(s.stdout.expect("bestmove"), GAME.state_from_fen("startpos", ["d2d4"]))
    assert s.quit() == 0


def test_a_go_whose_search_cannot_start_still_gets_its_one_bestmove(monkeypatch):
    """A failure before the search starts (here the move list) is an error line, and the GUI
    still gets the bestmove it waits for, from python-chess's own moves."""
    s = Session(PlayerOptions(player="random", seed=1))
    s.ready()

    def broken(state):
        raise RuntimeError("move generator broke")
    monkeypatch.setattr(ChessState, "legal_moves", broken)
    s.send("position startpos moves e2e4", "go movetime 20")
    assert s.stdout.expect("info string error:") == "info string error: go: RuntimeError: move generator broke"
    line = s.stdout.expect("bestmove")
    after_e4 = chess.Board("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1")
    assert chess.Move.from_uci(line.split()[1]) in after_e4.legal_moves
    monkeypatch.undo()
    s.send("go movetime 20")
    _bestmove(s.stdout.expect("bestmove"), GAME.state_from_fen("startpos", ["e2e4"]))
    assert s.quit() == 0


def test_player_switch_rebuilds_lazily(monkeypatch):
    built: list[str] = []
    import engine.players.build as factory
    real = factory.make_searcher

    def spy(game, options, notes=None):
        built.append(options.player)
        return real(game, options, notes)

    monkeypatch.setattr(factory, "make_searcher", spy)
    s = Session(PlayerOptions(player="random"))
    s.send("uci")
    s.stdout.expect("uciok")
    assert built == []  # uciok never waits for a player
    s.ready()
    s.send("setoption name Player value RANDOM", "setoption name Hash value 16")
    s.ready()
    assert built == ["random", "random"]
    assert s.quit() == 0


@pytest.mark.parametrize("player", ["random", "alphabeta"])
def test_real_player_transcript(player):
    s = Session(PlayerOptions(player=player, seed=3))
    s.ask("uci", "uciok")
    s.ready()
    s.send("ucinewgame", "position startpos moves e2e4 c7c5 g1f3", "go movetime 100")
    info = s.stdout.expect("info depth")
    assert " score " in info and " pv " in info
    _bestmove(s.stdout.expect("bestmove"), GAME.state_from_fen("startpos", ["e2e4", "c7c5", "g1f3"]))
    s.send("position fen " + MATED_FEN, "go depth 3")
    assert s.stdout.expect("bestmove") == "bestmove 0000"
    s.send("position startpos", "go infinite")
    s.ready()
    time.sleep(0.1)
    _bestmove(s.ask("stop", "bestmove"))
    assert s.quit() == 0


def test_every_player_in_the_factory_is_offered():
    s = Session(searcher=FakeSearcher())
    line = s.ask("uci", "option name Player")
    for name in PLAYER_NAMES:
        assert f"var {name}" in line
    assert s.quit() == 0


def test_ucinewgame_resets_position_and_searcher(session, fake):
    session.send("position startpos moves e2e4", "ucinewgame", "go depth 1")
    session.stdout.expect("bestmove")
    assert fake.new_games == 1
    assert fake.calls[-1][0].board.fen() == chess.STARTING_FEN


def test_ponderhit_on_go_ponder_infinite_keeps_waiting_for_stop(session):
    session.send("position startpos", "go ponder infinite", "ponderhit")
    session.ready()
    assert not [line for line in session.stdout.drain(0.2) if line.startswith("bestmove")]
    _bestmove(session.ask("stop", "bestmove"))


def test_debug_on_reports_the_limits(session):
    session.send("debug on", "position startpos", "go nodes 500")
    assert "nodes=500" in session.stdout.expect("info string go")
    session.stdout.expect("bestmove")


# ----------------------------------------------------------------------------- strict clients

COMPLIANCE_FEN = "3r2k1/p5n1/1pq1p2p/2p3p1/2P1P1n1/1P1P2pP/PN1Q2K1/5R2 w - - 0 27"


def test_format_info_pv_ends_where_the_game_ends():
    """No move after threefold repetition (the game's earlier moves count) or mate."""
    shuffle = ["g1f3", "g8f6", "f3g1", "f6g8", "g1f3", "g8f6", "f3g1"]
    state = GAME.state_from_fen("startpos", shuffle)
    pv = tuple(chess.Move.from_uci(m) for m in ("f6g8", "g1f3", "g8f6"))
    assert format_info(_info(pv=pv), state).endswith(" pv f6g8")  # startpos a third time
    before_mate = GAME.state_from_fen("startpos", ["f2f3", "e7e5", "g2g4"])
    pv = tuple(chess.Move.from_uci(m) for m in ("d8h4", "e1f2"))
    assert format_info(_info(pv=pv), before_mate).endswith(" pv d8h4")


class SilentSearcher:
    """Answers without a single progress report (a search stopped before depth 1 ends)."""

    def __init__(self, with_info: bool):
        self.with_info = with_info

    def new_game(self) -> None:
        pass

    def search(self, state, limits, *, stop=None, on_info=None):
        move = state.legal_moves()[-1]
        info = SearchInfo(depth=0, seldepth=0, value=-0.3, nodes=7, time=0.001, pv=(move,))
        return SearchResult(best_move=move, value=-0.3, info=info if self.with_info else None)


@pytest.mark.parametrize("with_info", [True, False])
def test_bestmove_always_follows_an_info_with_score_and_pv(with_info):
    s = Session(searcher=SilentSearcher(with_info))
    s.send("position fen " + COMPLIANCE_FEN, "go wtime 100")
    best = s.stdout.expect("bestmove").split()[1]
    infos = [line for line in s.stdout.seen if line.startswith("info ") and not line.startswith("info string")]
    assert len(infos) == 1 and " score cp " in infos[0] and infos[0].endswith(f" pv {best}")
    s.send("position fen " + MATED_FEN, "go wtime 100")
    assert s.stdout.expect("bestmove") == "bestmove 0000"
    assert s.stdout.seen[-2].startswith("info depth 0 seldepth 0 score mate 0 ")
    assert s.quit() == 0


@pytest.mark.parametrize("player", list(PLAYER_NAMES))
def test_cold_first_search_on_a_tiny_clock_reports_before_bestmove(player):
    """fastchess --compliance step 12: the first search after start-up, `go wtime 100`."""
    s = Session(options=PlayerOptions(player=player, seed=1))
    s.send("ucinewgame", "position startpos", "isready")
    s.stdout.expect("readyok", timeout=60)
    s.send("position fen " + COMPLIANCE_FEN, "go wtime 100")
    best = s.stdout.expect("bestmove", timeout=30)
    before = [line for line in s.stdout.seen if line.startswith("info ") and "string" not in line]
    assert before and " score " in before[-1] and " pv " in before[-1], s.stdout.seen
    _bestmove(best, GAME.state_from_fen(COMPLIANCE_FEN))
    assert s.quit() == 0
