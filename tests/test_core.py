"""The skeleton's contracts: import boundaries, Stopper, SearchThread threading, factory."""
from __future__ import annotations

import subprocess
import sys
import threading
import time

import pytest

from engine.players import PlayerOptions, UnknownPlayerError, make_searcher, resolve_player
from engine.games import GameSetupError, get_game
from engine.search_thread import SearchThread
from engine.search.limits import Stopper, StopSignal
from engine.types import Limits, SearchResult, cp_from_value, value_from_cp


def _torch_loaded_after(code: str) -> bool:
    """Run `code` in a fresh interpreter; was torch imported by then?"""
    probe = code + "\nimport sys\nprint('torch' in sys.modules)\n"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return out.stdout.strip() == "True"


def test_rules_search_and_protocol_modules_never_import_torch():
    assert not _torch_loaded_after(
        "import engine.types, engine.games, engine.games.chess, engine.games.gomoku\n"
        "import engine.search, engine.search.limits, engine.players, engine.search_thread\n"
        "import engine.search.alphabeta, engine.search.mcts, engine.search.uct\n"
        "import protocols.uci, protocols.gomocup, engine.cli")


def test_alphabeta_player_is_built_without_torch():
    assert not _torch_loaded_after(
        "from engine.games import get_game\n"
        "from engine.players import make_searcher, PlayerOptions\n"
        "from engine.types import Limits\n"
        "for game in (get_game('chess'), get_game('gomoku', width=9)):\n"
        "    s = make_searcher(game, PlayerOptions(player='alphabeta'))\n"
        "    s.search(game.initial_state(), Limits(depth=1))")


def test_cp_value_round_trip():
    for cp in (-900, -150, -1, 0, 1, 35, 250, 1200):
        assert cp_from_value(value_from_cp(cp)) == cp
    assert cp_from_value(1.0) > 2000 and cp_from_value(-1.0) < -2000


def test_stopper_node_and_depth_limits():
    stopper = Stopper(Limits(nodes=100, depth=3))
    assert not stopper.should_stop(99)
    assert stopper.should_stop(100)
    assert stopper.should_stop(0)  # sticky once stopped
    stopper = Stopper(Limits(depth=3))
    assert stopper.may_start_iteration(3)
    assert not stopper.may_start_iteration(4)


def test_stopper_uses_its_clock_for_soft_and_hard_deadlines():
    now = [100.0]
    stopper = Stopper(Limits(time=2.0, soft_time=0.5), clock=lambda: now[0])
    assert stopper.may_start_iteration(5)
    now[0] = 100.6
    assert not stopper.may_start_iteration(5) and not stopper.should_stop()
    now[0] = 102.0
    assert stopper.should_stop()


def test_stopper_holds_time_back_for_after_the_search_and_gives_it_back():
    now = [100.0]
    stopper = Stopper(Limits(time=2.0, soft_time=1.8), clock=lambda: now[0])
    stopper.hold_back(0.5)
    assert (stopper.hard_deadline, stopper.soft_deadline) == (101.5, 101.5)
    now[0] = 101.6
    assert stopper.should_stop()                     # the main search ends at the pulled-in deadline
    stopper.give_back()
    assert (stopper.hard_deadline, stopper.soft_deadline) == (102.0, 101.8)
    assert not stopper.should_stop() and stopper.time_left() == pytest.approx(0.4)
    now[0] = 102.0
    assert stopper.should_stop()
    # a stop event is not lifted; a search with no clock holds nothing back
    event = threading.Event()
    stopped = Stopper(Limits(time=2.0), event, clock=lambda: now[0])
    stopped.hold_back(0.5)
    event.set()
    assert stopped.should_stop()
    stopped.give_back()
    assert stopped.should_stop()
    untimed = Stopper(Limits(nodes=100))
    untimed.hold_back(0.5)
    assert untimed.hard_deadline is None and not untimed.should_stop(50)


def test_stopper_ponder_starts_the_same_budget_at_ponderhit():
    now = [100.0]
    signal = StopSignal()
    limits = Limits(time=2.0, soft_time=0.5, ponder=True)
    stopper = Stopper(limits, signal, clock=lambda: now[0])
    now[0] = 150.0  # pondering for 50 s: no clock runs
    assert not stopper.should_stop() and stopper.may_start_iteration(9) and not stopper.timed
    signal.ponderhit()
    now[0] = 160.0
    assert not stopper.should_stop()
    fresh = Stopper(Limits(time=2.0, soft_time=0.5), clock=lambda: now[0])
    assert (stopper.hard_deadline, stopper.soft_deadline) == (fresh.hard_deadline, fresh.soft_deadline)
    now[0] = 162.0
    assert stopper.should_stop()


def test_stopper_skips_an_iteration_that_would_end_past_the_hard_deadline():
    now = [0.0]
    stopper = Stopper(Limits(time=1.0, soft_time=0.5), clock=lambda: now[0])
    now[0] = 0.3
    assert stopper.may_start_iteration(5, expected_time=0.6)
    assert not stopper.may_start_iteration(5, expected_time=0.8)
    now[0] = 0.9  # past soft, and the first iteration is always tried
    assert not stopper.may_start_iteration(2) and stopper.may_start_iteration(1)


def test_stopper_infinite_ignores_clock_until_event():
    now = [0.0]
    event = threading.Event()
    stopper = Stopper(Limits(infinite=True, time=1.0), event, clock=lambda: now[0])
    now[0] = 1e6
    assert not stopper.should_stop(10**9)
    event.set()
    assert stopper.should_stop()


def test_stopper_default_time_applies_only_without_limits():
    now = [0.0]
    assert Stopper(Limits(), default_time=1.0, clock=lambda: now[0]).hard_deadline == 1.0
    assert Stopper(Limits(depth=4), default_time=1.0, clock=lambda: now[0]).hard_deadline is None


class _SlowSearcher:
    """Searches until stopped; reports how often it was called."""
    def __init__(self):
        self.calls = 0

    def new_game(self):
        pass

    def search(self, state, limits, *, stop=None, on_info=None):
        self.calls += 1
        stopper = Stopper(limits, stop)
        while not stopper.should_stop():
            time.sleep(0.002)
        move = state.legal_moves()[0]
        return SearchResult(best_move=move, value=0.0)


def test_engine_go_is_asynchronous_and_delivers_one_result_per_go():
    game = get_game("gomoku", width=9)
    engine = SearchThread(_SlowSearcher())
    results: list[SearchResult] = []
    engine.go(game.initial_state(), Limits(infinite=True), on_done=results.append)
    time.sleep(0.05)
    assert engine.searching and not results
    engine.stop()
    engine.wait(2.0)
    assert len(results) == 1 and results[0].best_move == 0
    engine.go(game.initial_state(), Limits(infinite=True), on_done=results.append)
    engine.go(game.initial_state(), Limits(time=0.01), on_done=results.append)  # stops the first
    engine.wait(2.0)
    assert len(results) == 3


_COLLECTOR_SCRIPT = """
import gc, time
from engine.games import get_game
from engine.search_thread import SearchThread
from engine.search.limits import Stopper
from engine.types import Limits, SearchResult

class Watching:
    def new_game(self):
        pass
    def search(self, state, limits, *, stop=None, on_info=None):
        self.collector_on = gc.isenabled()
        stopper = Stopper(limits, stop)
        while not stopper.should_stop():
            time.sleep(0.002)
        return SearchResult(best_move=state.legal_moves()[0], value=0.0)

game = get_game("gomoku", width=9)
searcher = Watching()
engine = SearchThread(searcher)
done = []
before = gc.isenabled()
engine.go(game.initial_state(), Limits(time=0.02), on_done=done.append)
engine.wait(5.0)
after = (gc.isenabled(), gc.get_freeze_count() > 0)
engine.new_game()
print(before, searcher.collector_on, *after, gc.isenabled(), gc.get_freeze_count(), len(done))
"""


def test_no_garbage_collection_runs_during_a_search_and_a_new_game_collects():
    """A full collection of a grown tree stalled searches by up to 322 ms: the collector is
    off while the search runs, back on after it with the survivors frozen, and a new game
    (no clock running) collects everything.  In a fresh interpreter: the collector is
    process-wide, and other tests' searches may still be running here."""
    import subprocess
    import sys
    out = subprocess.run([sys.executable, "-c", _COLLECTOR_SCRIPT], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["True", "False", "True", "True", "True", "0", "1"]


def test_engine_reports_search_errors_instead_of_dying():
    class Broken:
        def new_game(self):
            pass

        def search(self, state, limits, *, stop=None, on_info=None):
            raise RuntimeError("boom")

    errors: list[BaseException] = []
    engine = SearchThread(Broken())
    engine.go(get_game("chess").initial_state(), Limits(depth=1), on_error=errors.append)
    engine.wait(2.0)
    assert [str(e) for e in errors] == ["boom"]


def test_factory_rejects_unknown_player_and_resolves_auto():
    game = get_game("gomoku", width=9)
    with pytest.raises(UnknownPlayerError):
        make_searcher(game, PlayerOptions(player="nonsense"))
    resolved = resolve_player(game, PlayerOptions(player="auto", weights="some.pt"))
    assert resolved.player == "mcts" and resolved.weights == "some.pt"
    assert resolve_player(game, PlayerOptions(player="alphabeta")).player == "alphabeta"


def test_get_game_rejects_bad_settings():
    with pytest.raises(GameSetupError):
        get_game("go")
    with pytest.raises(GameSetupError):
        get_game("gomoku", width=4)
    with pytest.raises(GameSetupError):
        get_game("gomoku", width=15, rule="continuous")


def test_engine_library_starts_no_engine_processes():
    """DESIGN: engine/ has no subprocesses; engine processes are protocols'/arena's business."""
    import pathlib

    import engine
    root = pathlib.Path(engine.__file__).parent
    offenders = [str(path.relative_to(root)) for path in root.rglob("*.py")
                 if any(word in path.read_text() for word in ("import subprocess", "popen_uci", "Popen("))]
    assert offenders == []
