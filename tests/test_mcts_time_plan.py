"""MCTS under a clock: soft deadline, doubt, smart pruning.  A scripted clock that only
the evaluator advances (50 ms per batch, a slow network call) and a scripted game whose
positions remember the root move they descend from keep it free of timing and noise."""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pytest

from engine.search.limits import Stopper
from engine.search.mcts import MCTS, MCTSConfig
from engine.types import Evaluation, Limits
from protocols.timeman import parse_go

BATCH_SECONDS = 0.05
WIDTH = 8  # moves per position


class ScriptedClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@dataclass(frozen=True)
class PathState:
    """A position named by its moves from the root; never over.  `width` moves each."""
    path: tuple[int, ...] = ()
    width: int = WIDTH

    @property
    def to_play(self) -> int:
        return len(self.path) % 2

    def legal_moves(self) -> list[int]:
        return list(range(self.width))

    def play(self, move: int) -> "PathState":
        return PathState(self.path + (move,))

    def outcome(self):
        return None

    def repeated(self):
        return False

    def key(self):
        return self.path


class FirstMoveEvaluator:
    """Every position below root move m is worth `scores[m]` to the root player (default
    `rest`); root priors from `priors` (the rest share what is left), uniform below."""

    def __init__(self, clock: ScriptedClock, scores: dict[int, float], priors: dict[int, float],
                 rest: float = 0.0):
        self.clock, self.scores, self.priors, self.rest = clock, scores, priors, rest

    def evaluate(self, states):
        self.clock.now += BATCH_SECONDS
        out = []
        for state in states:
            n = len(state.legal_moves())
            if not state.path:
                others = (1.0 - sum(self.priors.values())) / max(1, n - len(self.priors))
                out.append(Evaluation(priors=np.array([self.priors.get(m, others) for m in range(n)]), value=0.0))
                continue
            score = self.scores.get(state.path[0], self.rest)
            out.append(Evaluation(priors=np.full(n, 1.0 / n), value=score if state.to_play == 0 else -score))
        return out


def _search(scores, priors, rest=0.0, state=PathState(), go="wtime 60000 btime 60000"):
    clock = ScriptedClock()
    searcher = MCTS(FirstMoveEvaluator(clock, scores, priors, rest), MCTSConfig(seed=1), clock=clock)
    limits = parse_go(go.split(), state.to_play).limits
    start = clock.now
    result = searcher.search(state, limits)
    return searcher, result, clock.now - start, limits


def test_clearly_best_move_answers_within_the_soft_budget():
    searcher, result, elapsed, limits = _search({3: 0.8}, {})
    assert result.best_move == 3
    assert searcher.last_stop == "smart pruning"
    assert elapsed < limits.soft_time < limits.time
    visits = sorted(result.visits, reverse=True)
    assert visits[0] > 10 * visits[1]


def test_smart_pruning_stops_once_the_runner_up_cannot_catch_up():
    """At the stop the lead exceeds the playouts left before the soft deadline (at the
    search's own rate), and one batch earlier it did not."""
    searcher, result, elapsed, limits = _search({3: 0.8}, {})
    rate = result.info.nodes / elapsed
    first, second = sorted(result.visits, reverse=True)[:2]
    assert first - second > rate * (limits.soft_time - elapsed)
    assert first - second <= rate * (limits.soft_time - elapsed + 2 * BATCH_SECONDS) + 16


def test_a_fixed_move_time_is_searched_to_its_end():
    """`go movetime`: nothing to save for later moves, so a clearly best move is searched on
    to the deadline (the playouts feed the tree that the next move reuses)."""
    searcher, result, elapsed, limits = _search({3: 0.8}, {}, go="movetime 1000")
    assert result.best_move == 3
    assert searcher.last_stop == "hard deadline"
    assert limits.time - BATCH_SECONDS <= elapsed <= limits.time + BATCH_SECONDS


def test_best_move_in_doubt_runs_past_the_soft_deadline_within_the_hard_one():
    """The most visited move (prior 0.7) scores worse than the runner-up (prior 0.1): the
    search runs past its soft budget until the better move leads, within the hard one."""
    searcher, result, elapsed, limits = _search({0: 0.0, 1: 0.08}, {0: 0.7, 1: 0.1}, rest=-0.6)
    assert limits.soft_time + 10 * BATCH_SECONDS < elapsed <= limits.time + BATCH_SECONDS
    assert result.best_move == 1


def test_soft_deadline_ends_a_search_that_is_not_in_doubt():
    """Two moves equally good and equally visited: more time would not choose better."""
    searcher, result, elapsed, limits = _search({0: 0.0, 1: 0.0}, {0: 0.45, 1: 0.45}, rest=-0.6)
    assert searcher.last_stop == "soft deadline"
    assert limits.soft_time <= elapsed <= limits.soft_time + BATCH_SECONDS


def test_one_legal_move_is_played_without_playouts():
    searcher, result, elapsed, _ = _search({}, {}, state=PathState(width=1))
    assert searcher.last_stop == "one move" and result.best_move == 0
    assert result.info.nodes == 0


def test_node_limits_keep_every_playout():
    """Self-play's node budgets are not a clock: no pruning, exactly n playouts."""
    clock = ScriptedClock()
    searcher = MCTS(FirstMoveEvaluator(clock, {3: 0.8}, {}), MCTSConfig(seed=1), clock=clock)
    result = searcher.search(PathState(), Limits(nodes=300))
    assert sum(result.visits) == 300 and searcher.last_stop == "nodes"


class PerPositionEvaluator(FirstMoveEvaluator):
    """A network whose call costs `seconds` per position (a slow net on a loaded CPU)."""

    def __init__(self, clock: ScriptedClock, seconds: float):
        super().__init__(clock, {}, {})
        self.seconds = seconds

    def evaluate(self, states):
        out = super().evaluate(states)
        self.clock.now += self.seconds * len(states) - BATCH_SECONDS
        return out


def test_a_slow_network_near_the_end_of_a_fast_clock_never_overruns_the_hard_budget():
    """8 ms per position and 16 leaves a batch: 128 ms a full step, more than this move's
    whole budget at 1+0.01 with 400 ms left.  Each later step (and the next search's first)
    takes only the leaves that fit before the hard deadline; only the root's own evaluation
    (one position, needed for any sensible answer) may end past a budget smaller than itself."""
    clock = ScriptedClock()
    searcher = MCTS(PerPositionEvaluator(clock, 0.008), MCTSConfig(seed=1), clock=clock)
    state = PathState()
    searcher.search(state, Limits(nodes=32))          # learns the pace
    for left in (400, 250, 120):
        searcher.new_game()
        limits = parse_go(f"wtime {left} btime {left} winc 10 binc 10".split(), state.to_play).limits
        start = clock.now
        result = searcher.search(state, limits)
        assert clock.now - start <= max(limits.time, 0.008) + 1e-9, (left, clock.now - start, limits.time)
        assert result.best_move is not None


class QuickCheckProver:
    """A solver that keeps 30 % of the time left back for its check of the chosen move and
    finishes that check at once (as gomoku's VCT check often does: a few ms)."""

    def __init__(self) -> None:
        self.checks = 0

    def prove_root(self, root, stopper=None) -> None:
        pass

    def prove_leaf(self, leaf) -> None:
        pass

    def forced_move(self, leaf):
        return None

    def verify_reserve(self, roots, stopper) -> float:
        return 0.3 * max(0.0, stopper.time_left() or 0.0) if stopper is not None and stopper.timed else 0.0

    def verify_choice(self, root, choose, stopper, veto) -> None:
        choose()
        self.checks += 1


def test_time_kept_back_for_checking_the_chosen_move_is_searched_when_the_check_is_quick():
    """A fixed time per move: what the check leaves of its reserve goes back into playouts,
    checked again, until the move's time is spent (found: 0.62 s of a 0.88 s turn searched)."""
    clock = ScriptedClock()
    prover = QuickCheckProver()
    searcher = MCTS(FirstMoveEvaluator(clock, {3: 0.8}, {}), MCTSConfig(seed=1), clock=clock, prover=prover)
    limits = parse_go("movetime 1000".split(), 0).limits
    start = clock.now
    result = searcher.search(PathState(), limits)
    elapsed = clock.now - start
    assert result.best_move == 3
    assert limits.time - BATCH_SECONDS <= elapsed <= limits.time + BATCH_SECONDS
    assert prover.checks >= 2 and searcher.last_stop == "hard deadline"


class SlowCheckProver(QuickCheckProver):
    """Its check spends all but 10 ms of the time it was given back."""

    def __init__(self, clock: ScriptedClock) -> None:
        super().__init__()
        self.clock = clock

    def verify_choice(self, root, choose, stopper, veto) -> None:
        super().verify_choice(root, choose, stopper, veto)
        self.clock.now += max(0.0, stopper.time_left() - 0.01)


class VetoProver(QuickCheckProver):
    """Vetoes root move `bad` whenever it is the choice (chess's alpha-beta check does this to
    a move it sees losing material)."""

    def __init__(self, bad: int) -> None:
        super().__init__()
        self.bad, self.seen = bad, []

    def verify_choice(self, root, choose, stopper, veto) -> None:
        a = choose()
        self.seen.append(a)
        if a == self.bad:
            veto(a)
            self.seen.append(choose())


def test_a_vetoed_move_is_neither_played_nor_searched_on_and_the_next_choice_is_played():
    clock = ScriptedClock()
    prover = VetoProver(bad=3)
    searcher = MCTS(FirstMoveEvaluator(clock, {3: 0.8, 5: 0.3}, {}), MCTSConfig(seed=1), clock=clock, prover=prover)
    result = searcher.search(PathState(), parse_go("movetime 1000".split(), 0).limits)
    assert prover.seen[:2] == [3, 5]              # the search's choice, then the next one once vetoed
    assert result.best_move == 5 and result.info is not None and result.info.pv[0] == 5
    assert 3 not in prover.seen[2:]               # searched on after the veto: 3 never chosen again


def test_a_veto_of_the_only_allowed_move_is_ignored():
    clock = ScriptedClock()
    prover = VetoProver(bad=3)
    searcher = MCTS(FirstMoveEvaluator(clock, {3: 0.8}, {}), MCTSConfig(seed=1), clock=clock, prover=prover)
    limits = replace(parse_go("movetime 1000".split(), 0).limits, searchmoves=(3,))
    assert searcher.search(PathState(), limits).best_move == 3


def test_a_check_that_leaves_too_little_to_search_on_ends_the_search_on_the_clock():
    clock = ScriptedClock()
    searcher = MCTS(FirstMoveEvaluator(clock, {3: 0.8}, {}), MCTSConfig(seed=1), clock=clock,
                    prover=SlowCheckProver(clock))
    searcher.search(PathState(), parse_go("movetime 1000".split(), 0).limits)
    assert searcher.last_stop == "hard deadline"


class BatchRecorder(PerPositionEvaluator):
    """PerPositionEvaluator that keeps the size of every network call."""

    def __init__(self, clock: ScriptedClock, seconds: float):
        super().__init__(clock, seconds)
        self.sizes: list[int] = []

    def evaluate(self, states):
        self.sizes.append(len(states))
        return super().evaluate(states)


def test_a_search_on_a_short_clock_gathers_the_short_search_batch():
    """short_search_seconds 0.5: a 0.3 s search gathers short_search_leaves a step; a 2 s one
    and a node budget (no clock) keep leaves_per_batch; off (0 leaves), every search keeps it."""
    def largest_batches(short_leaves: int) -> list[int]:
        clock = ScriptedClock()
        evaluator = BatchRecorder(clock, 0.001)
        searcher = MCTS(evaluator, MCTSConfig(seed=1, leaves_per_batch=16, short_search_leaves=short_leaves,
                                              short_search_seconds=0.5), clock=clock)
        largest = []
        for limits in (Limits(nodes=300), Limits(time=0.3), Limits(time=2.0)):
            searcher.new_game()
            evaluator.sizes.clear()
            searcher.search(PathState(), limits)
            largest.append(max(evaluator.sizes))
        return largest
    assert largest_batches(4) == [16, 4, 16]
    assert largest_batches(0) == [16, 16, 16]
    with pytest.raises(ValueError, match="short_search"):
        MCTSConfig(short_search_leaves=-1)


def test_a_lower_bound_choice_that_is_not_the_most_visited_keeps_the_search_past_the_soft_deadline():
    """Gomoku plays by lower confidence bound (lcb_z): when that move is not the most visited
    one, more playouts may still change it, so the soft deadline does not end the search, as
    when the runner-up has the better Q.  Without the bound the same tree stops there."""
    from engine.search.tree import Tree
    from tests.test_mcts import _root_with
    # by visits 0 then 1 (Q 0.10 > 0.00: not in doubt by Q); by lower bound 2 (0.35 - 0.055)
    root = _root_with({0: (400, 0.10), 1: (300, 0.00), 2: (120, 0.35)})
    verdicts = {}
    for lcb_z in (0.0, 1.5):
        clock = ScriptedClock()
        stopper = Stopper(Limits(time=2.0, soft_time=0.5), clock=clock)
        clock.now += 0.6                              # past the soft deadline, 1.4 s to the hard one
        tree = Tree(root, root.state, 1)
        tree.playouts = 820                           # ~1,370 playouts a second: 100 visits behind can catch up
        searcher = MCTS(FirstMoveEvaluator(clock, {}, {}), MCTSConfig(seed=1, lcb_z=lcb_z), clock=clock)
        verdicts[lcb_z] = searcher._time_verdict(tree, stopper)
    assert verdicts == {0.0: "soft deadline", 1.5: None}
