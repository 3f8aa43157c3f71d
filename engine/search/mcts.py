"""Neural MCTS: batched PUCT over an Evaluator, with an exact-result solver and subtree reuse.

A search is a batch of trees (`search_many`); `search` is a batch of one.  Each step
descends every tree up to `leaves_per_batch` times under a virtual loss, evaluates all
new leaves of all trees in ONE `evaluator.evaluate` call, backs the values up (negated
once per ply) and removes the virtual loss.  Search sees moves and numbers only: the
network comes in through `engine.evaluators.Evaluator`.

The descent (PUCT) and the backup run in C when engine/search/tree_kernel.c is built
(pip install does): the same search over the same nodes, about 2.5x cheaper per node.

Counting: a playout is one backed-up path from the root; the root's own first
evaluation is not one.  With `Limits(nodes=n)` on a fresh tree the root's visit counts
sum to exactly n.

MultiPV (`Limits.multipv` = k > 1) costs nothing extra: each report becomes k lines, the
root's top k children (ranked_children), each with its own Q and most-visited path.

The time plan (only while a clock runs: `Limits.time`, after ponderhit when pondering):
a tree stops at the soft deadline unless its best move is in doubt (the runner-up by
visits has the better Q, or the move it would play by lower confidence bound, lcb_z, is not
the most visited), then it may run on toward the hard one; and it stops as soon
as no other root move can overtake the most visited one in the playouts left before
the deadline it is working to (hard when in doubt, else soft), estimated from this
search's playout rate (lc0's smart pruning).  One root move left (one legal move, or all others proven lost) ends it at
once.  A fixed time per move (`go movetime`: soft = hard) has no time to save, so only that
ends it early: the playouts go on into the subtree that the next move reuses.
A game's solver may keep time back to check the chosen move (gomoku: against the
opponent's VCT); what the check leaves goes back into playouts, checked again at the end.
The solver sees each new leaf before the network does: a leaf it proves is not evaluated,
and a leaf with one move that does not lose at once (gomoku: the block of a five) keeps
that move alone and is evaluated after it, one network call for the two plies.
`MCTS.last_stop` says why the last search ended.
"""
from __future__ import annotations

import math
import threading
import time
from dataclasses import dataclass, replace
from functools import partial
from typing import Any, Callable, Sequence

import numpy as np

from engine.search.limits import Stopper
from engine.search.prover import Prover
from engine.search.tree import (Node, Tree, best_child, pv_moves, ranked_children, scan_root_tactics,
                               searchmoves_mask)
from engine.types import Evaluation, Limits, Move, SearchInfo, SearchResult

try:   # the descent and backup in C (tree_kernel.c, built by pip install); the same search
    from engine.search import _tree_kernel as tree_kernel   # type: ignore[attr-defined]
    tree_kernel.bind(Node)
except ImportError:    # not built (no C compiler or no Python headers): the Python below, slower
    tree_kernel = None

__all__ = ["MCTSConfig", "MCTS", "tree_node_budget"]

INFO_INTERVAL = 0.5  # seconds between periodic SearchInfo reports
MIN_RATE_PLAYOUTS = 8  # playouts this search before its playout rate is trusted for pruning
RESUME_MIN_S = 0.02    # time left after the chosen move's check worth searching on for


@dataclass(frozen=True)
class MCTSConfig:
    """Search settings; defaults are the AlphaZero paper's where it has one.

    fpu_reduction: an unvisited child counts as Q(parent) - fpu_reduction (first-play urgency).
    policy_temperature: priors become p^(1/T), renormalised (lc0's policy softmax temperature:
    above 1 spreads a sharp network's visits at low node counts).
    virtual_loss: visits (each a loss) added on a path while its leaf awaits evaluation.
    dirichlet_alpha: None = the game's (Game.dirichlet_alpha: 0.3 chess, 10 / legal moves for gomoku).
    formula: "puct" (AlphaZero) or "ucb1" (classic UCT: Q + ucb1_c * sqrt(ln N / n),
    unvisited children first in prior order).
    default_nodes: playouts per search when the limits name no node or time budget.
    max_tree_nodes: stop growing (end the search, or idle until stop when infinite) once the
    tree holds about this many nodes, reused ones included (~4 KB each); None = no cap.
    forced_playouts: KataGo's k for self-play (only with root noise; 0 = off): a visited root
    child with fewer than sqrt(k P N) visits is searched next, so noise-raised moves get a fair
    look, and the result's visits are then the pruned policy target (`pruned_visits`: the
    forced playouts a child did not earn are taken back, so the network does not learn them).
    lcb_z: the move played (temperature 0) is the root child with the highest lower
    confidence bound of its value, not the most visited (tree.best_child); 0 = most visited.
    short_search_leaves: leaves per tree per step, instead of leaves_per_batch, for a search
    with less than short_search_seconds on its clock (0 = off): with few playouts a big batch
    under the virtual loss spreads a larger share of the tree over moves it would not choose.
    """
    c_base: float = 19652.0
    c_init: float = 1.25
    fpu_reduction: float = 0.25
    policy_temperature: float = 1.0
    leaves_per_batch: int = 16
    virtual_loss: float = 1.0
    dirichlet_alpha: float | None = None
    dirichlet_epsilon: float = 0.25
    noise: bool = False
    temperature: float = 0.0
    seed: int | None = None
    default_nodes: int = 800
    max_tree_nodes: int | None = None
    formula: str = "puct"
    ucb1_c: float = math.sqrt(2.0)
    root_tactics: bool = True
    forced_playouts: float = 0.0
    lcb_z: float = 0.0
    short_search_leaves: int = 0
    short_search_seconds: float = 0.0

    def __post_init__(self) -> None:
        if self.leaves_per_batch < 1:
            raise ValueError("leaves_per_batch must be >= 1")
        if self.short_search_leaves < 0 or not self.short_search_seconds >= 0.0:
            raise ValueError("short_search_leaves and short_search_seconds must be >= 0")
        if not self.forced_playouts >= 0.0:
            raise ValueError("forced_playouts must be >= 0")
        if not self.lcb_z >= 0.0:
            raise ValueError("lcb_z must be >= 0")
        if not self.policy_temperature > 0.0:
            raise ValueError("policy_temperature must be > 0")
        if self.formula not in ("puct", "ucb1"):
            raise ValueError(f"unknown formula {self.formula!r} (expected puct or ucb1)")


def _dirichlet_alpha(state, n_moves: int, configured: float | None) -> float:
    """The configured alpha, else the game's (Game.dirichlet_alpha)."""
    return configured if configured is not None else float(state.game.dirichlet_alpha(n_moves))


class MCTS:
    """Implements the Searcher protocol, plus `search_many` for lockstep self-play."""

    def __init__(self, evaluator, config: MCTSConfig | None = None, *, prover: Prover | None = None,
                 clock: Callable[[], float] = time.monotonic):
        """prover: a game's solver, whose proven results become exact node values
        (engine/search/prover.py); clock: what the Stopper reads (tests pass a scripted one)."""
        self.evaluator = evaluator
        self.config = config or MCTSConfig()
        self.prover = prover
        self._clock = clock
        self._roots: list[Node | None] = []   # per slot of the last search_many, for reuse
        self._answers: list[Move | None] = []  # per slot: the move that search answered
        self.last_stop = ""                    # why the last search ended (tree 0)
        # Seconds per evaluated position in the last step, network call and tree work included;
        # kept across searches so a search's first step already knows the pace.
        self._seconds_per_position = 0.0
        self._leaves = self.config.leaves_per_batch   # leaves per tree per step in this search

    def new_game(self) -> None:
        self._roots = []
        self._answers = []

    # --- the Searcher API -----------------------------------------------------------------

    def search(self, state, limits: Limits, *, stop: threading.Event | None = None,
               on_info: Callable[[SearchInfo], None] | None = None) -> SearchResult:
        return self.search_many([state], limits, stop=stop, on_info=on_info)[0]

    def search_many(self, states: Sequence, limits: Limits, *, stop: threading.Event | None = None,
                    seeds: Sequence[int | None] | None = None,
                    on_info: Callable[[SearchInfo], None] | None = None) -> list[SearchResult]:
        """Search [B] states together (one evaluator call per step over all trees' leaves).

        Tree i draws its randomness from (seeds[i] or config.seed, state key), so the
        same seed gives the same results batched or one by one.  on_info reports tree 0.
        Slot i's tree is kept and reused when the next call's states[i] follows from it.
        """
        limits = self._effective_limits(limits)
        stopper = Stopper(limits, stop, clock=self._clock)
        seeds = list(seeds) if seeds is not None else [self.config.seed] * len(states)
        if len(seeds) != len(states):
            raise ValueError("seeds must match states")
        old = self._roots + [None] * (len(states) - len(self._roots))
        answers = self._answers + [None] * (len(states) - len(self._answers))
        trees = [Tree(self._reuse(old[i], s, answers[i]), s, seeds[i]) for i, s in enumerate(states)]
        self._roots = [t.root for t in trees]
        self._prepare_roots(trees, limits.searchmoves, stopper)
        self._leaves = self._leaves_for(stopper)
        node_limit = limits.nodes if not limits.infinite else None
        decided: dict[int, str] = {}   # id(tree) -> why the time plan ended it
        reports = _Reports(on_info)
        held = self._hold_back_for_verify(trees, stopper)
        while True:
            self._grow(trees, stopper, limits, node_limit, decided, reports)
            if held <= 0.0:
                break
            assert self.prover is not None
            stopper.give_back()
            for tree in trees:
                self.prover.verify_choice(tree.root, partial(_chosen, tree, self.config.lcb_z), stopper,
                                           partial(_veto, tree))
            if not self._time_to_resume(trees, stopper, node_limit, decided):
                break
            held = self._hold_back_for_verify(trees, stopper)   # what the check left: search on
        self.last_stop = decided.get(id(trees[0])) or self._stop_reason(trees[0], stopper, node_limit)
        results = [self._result(t, stopper.elapsed()) for t in trees]
        self._answers = [r.best_move for r in results]
        head = results[0]
        if on_info is not None and head.info is not None:
            root = trees[0].root
            first = root.moves.index(head.best_move) if limits.multipv > 1 and root.moves else None
            for info in self._lines(trees[0], head.info, limits.multipv, first):
                on_info(info)
        return results

    def _grow(self, trees: list[Tree], stopper: Stopper, limits: Limits, node_limit: int | None,
              decided: dict[int, str], reports: "_Reports") -> None:
        """Playouts until every tree is decided or done, or a limit stops the search."""
        told_full = False
        while True:
            active = self._undecided(trees, decided, node_limit)
            if active and stopper.timed and not stopper.should_stop():
                for tree in active:
                    verdict = self._time_verdict(tree, stopper)
                    if verdict is not None:
                        decided[id(tree)] = verdict
                active = [t for t in active if id(t) not in decided]
            if not active:
                if limits.infinite and not stopper.should_stop():
                    if not told_full and reports.on_info is not None and self._full(trees[0]):
                        told_full = True   # else a GUI sees the counts stop and cannot tell why
                        reports.send(replace(self._info(trees[0], stopper.elapsed()), note=(
                            f"tree full ({self.config.max_tree_nodes} nodes): the search waits for stop; "
                            "a larger Hash lets it search on")))
                    stopper.event.wait(0.01)   # proven, empty or full roots: wait for stop
                    continue
                return
            if stopper.should_stop(min(t.playouts for t in active)):
                return
            batch = self._batch_that_fits(stopper)
            if batch == 0:
                stopper.stopped = True      # the next network call would overrun the hard deadline
                return
            started = stopper.elapsed()
            evaluated = self._step(active, node_limit, batch)
            if evaluated:
                self._seconds_per_position = (stopper.elapsed() - started) / evaluated
            if reports.due(stopper.elapsed()):
                for info in self._lines(trees[0], self._info(trees[0], stopper.elapsed()), limits.multipv):
                    reports.send(info)

    def _full(self, tree: Tree) -> bool:
        """The tree stopped growing because it holds max_tree_nodes, not because it is resolved."""
        return not tree.resolved() and tree.done(None, self.config.max_tree_nodes)

    def _hold_back_for_verify(self, trees: list[Tree], stopper: Stopper) -> float:
        """Seconds the prover asks to keep back from the search to check the chosen move."""
        held = self.prover.verify_reserve([t.root for t in trees], stopper) if self.prover is not None else 0.0
        stopper.hold_back(held)
        return held

    def _time_to_resume(self, trees: list[Tree], stopper: Stopper, node_limit: int | None,
                        decided: dict[int, str]) -> bool:
        """After the chosen move's check: search on when the held-back deadline, not the time
        plan, ended the search and the check left time (it often takes a few ms of the
        VERIFY_SHARE it was given: measured, a 1 s Gomocup turn then searched 0.62 s)."""
        if not stopper.timed or stopper.event.is_set() or stopper.should_stop():
            return False
        if (stopper.time_left() or 0.0) < RESUME_MIN_S:
            stopper.stopped = True     # the clock ends it (last_stop says "hard deadline")
            return False
        return bool(self._undecided(trees, decided, node_limit))

    def _undecided(self, trees: list[Tree], decided: dict[int, str], node_limit: int | None) -> list[Tree]:
        """The trees still searching: not ended by the time plan, not resolved, out of playouts or full."""
        return [t for t in trees if id(t) not in decided and not t.done(node_limit, self.config.max_tree_nodes)]

    # --- the time plan -------------------------------------------------------------------

    def _time_verdict(self, tree: Tree, stopper: Stopper) -> str | None:
        """Why the time plan ends this tree now, or None to search on (see the module doc)."""
        root = tree.root
        if root.moves is None:
            return None
        root.ensure_stats()
        allowed = np.ones(len(root.moves), dtype=bool) if tree.root_mask is None else tree.root_mask
        if root.proven is not None:
            allowed = allowed & ~(root.proven < 0)
        candidates = np.flatnonzero(allowed)
        if len(candidates) <= 1:
            return "one move"
        if stopper.fixed_time:     # the playouts it would save go into the tree the next move reuses
            return None
        visits = root.visits[candidates]
        first, second = np.argsort(-visits, kind="stable")[:2]
        soft_left, hard_left = stopper.soft_left(), stopper.time_left()
        if soft_left is None or hard_left is None:
            return None
        # in doubt: the runner-up has the better Q, or the move to play is not the most visited
        # (the lower-bound choice, lcb_z: more playouts may yet change it)
        in_doubt = bool(root.q[candidates[second]] > root.q[candidates[first]]
                        or (self.config.lcb_z > 0 and _chosen(tree, self.config.lcb_z) != candidates[first]))
        if soft_left <= 0 and not in_doubt:
            return "soft deadline"
        elapsed = stopper.elapsed()
        if tree.playouts < MIN_RATE_PLAYOUTS or elapsed <= 0:
            return None
        horizon = hard_left if in_doubt else soft_left   # in doubt, the plan reaches to hard
        if visits[first] - visits[second] > tree.playouts / elapsed * max(0.0, horizon):
            return "smart pruning"
        return None

    @staticmethod
    def _stop_reason(tree: Tree, stopper: Stopper, node_limit: int | None) -> str:
        if tree.resolved():
            return "resolved"
        if stopper.event.is_set():
            return "stop"
        if node_limit is not None and tree.playouts >= node_limit:
            return "nodes"
        if stopper.stopped:
            return "hard deadline"
        return "tree full"

    # --- steps ----------------------------------------------------------------------------

    def _effective_limits(self, limits: Limits) -> Limits:
        """Depth means nothing to MCTS; with no node or time budget use the default nodes."""
        if not limits.infinite and limits.nodes is None and limits.time is None:
            return replace(limits, nodes=self.config.default_nodes)
        return limits

    def _reuse(self, old: Node | None, state, answer: Move | None = None) -> Node:
        """The old tree's node for `state` (itself, a child or a grandchild), else a new root.
        Followed directly along the played moves (our answer, then the reply that is
        `state.last_move`) when they are known; else looked up by key."""
        if old is not None:
            key = state.key()
            node: Node | None = old
            for move in (answer, getattr(state, "last_move", None), None):
                if node is None:
                    break
                if node.state.to_play == state.to_play and node.state.key() == key:
                    return node.as_root(state)
                if move is None or node.moves is None or move not in node.moves:
                    break
                node = node.children.get(node.moves.index(move))
            frontier = [old]
            for _ in range(3):                         # the old root, children, grandchildren
                for node in frontier:
                    if node.state.to_play == state.to_play and node.state.key() == key:
                        return node.as_root(state)
                frontier = [c for n in frontier for c in n.children.values()]
        return Node(state)

    def _prepare_roots(self, trees: list[Tree], searchmoves: Sequence[Move] | None,
                       stopper: Stopper | None = None) -> None:
        """Evaluate unexpanded roots in one call, add root noise, prove wins/losses in one."""
        # A reused node may be solved yet unexpanded (proven by its parent's tactics scan):
        # it still needs its moves to answer with one.
        fresh = [t.root for t in trees if t.root.moves is None and t.root.state.outcome() is None]
        self._expand(fresh)
        for root in fresh:                 # the root's own evaluation: a visit, not a playout
            root.visit_count += 1
            root.value_sum_self += root.value
            root.draw_sum += root.draw
        for tree in trees:
            root = tree.root
            if root.moves is None:
                continue
            tree.root_mask = searchmoves_mask(root.moves, searchmoves)
            if self.config.noise:
                self._add_noise(tree)
            elif root.raw_prior is not None:          # reused root that had noise: drop it
                root.prior = root.raw_prior
                root.raw_prior = None
            if self.config.root_tactics:
                scan_root_tactics(root, _tactics_cutoff(stopper))
            if self.prover is not None:
                self.prover.prove_root(root, stopper)

    def _add_noise(self, tree: Tree) -> None:
        root = tree.root
        if root.raw_prior is None:
            root.raw_prior = root.prior
        assert root.moves is not None, "noise is added to an expanded root"
        n = len(root.moves)
        alpha = _dirichlet_alpha(root.state, n, self.config.dirichlet_alpha)
        eps = self.config.dirichlet_epsilon
        noise = tree.rng.dirichlet(np.full(n, alpha))
        root.prior = ((1.0 - eps) * root.raw_prior + eps * noise).astype(np.float32)

    def _leaves_for(self, stopper: Stopper) -> int:
        """Leaves per tree per step for this search: short_search_leaves when its clock (to the
        soft deadline where there is one) holds less than short_search_seconds, else
        leaves_per_batch (node budgets and infinite searches included)."""
        cfg = self.config
        soft = stopper.soft_left()
        left = soft if soft is not None else stopper.time_left()
        short = cfg.short_search_leaves > 0 and left is not None and left < cfg.short_search_seconds
        return cfg.short_search_leaves if short else cfg.leaves_per_batch

    def _batch_that_fits(self, stopper: Stopper) -> int:
        """Leaves per tree for the next step: this search's batch, fewer when at the last
        step's pace (seconds per evaluated position; a step evaluates at most as many
        positions as it asks leaves) it would end after the hard deadline (a slow network
        near the end of a fast clock), 0 when not even one leaf fits."""
        k, pace = self._leaves, self._seconds_per_position
        left = stopper.time_left() if stopper.timed else None
        if left is None or pace <= 0.0 or pace * k <= left:
            return k
        return min(k, int(left / pace))

    def _step(self, trees: list[Tree], node_limit: int | None, batch: int | None = None) -> int:
        """Collect leaves from every tree (`batch` each, default the configured batch),
        evaluate them in one call, back everything up.  Returns the positions evaluated."""
        k = batch or self.config.leaves_per_batch
        vl = self.config.virtual_loss
        forcing = self.config.forced_playouts if self.config.noise else 0.0
        paths: list[tuple[Tree, list[tuple[Node, int]], Node]] = []
        to_eval: list[Node] = []
        replies: list[tuple[Move, Any] | None] = []  # per to_eval: its forced move and the state after it
        ready: list[tuple[Node, Evaluation]] = []     # leaves whose evaluation is known already
        for tree in trees:
            budget = k if node_limit is None else min(k, node_limit - tree.playouts)
            for _ in range(budget):
                path, leaf = self._descend(tree, vl, forced_child_mask(tree, forcing) if forcing else None)
                if leaf is None:                       # collided with a pending leaf: dropped
                    for node, a in path:
                        node.update(a, -vl, vl)
                    continue
                if leaf.solved is None:
                    known, forced = self._before_evaluation(path, leaf)
                    if leaf.solved is None:
                        leaf.pending = True
                        if known is None:
                            to_eval.append(leaf)
                            replies.append(forced)
                        else:
                            ready.append((leaf, known))
                paths.append((tree, path, leaf))
        evaluated = self._expand(to_eval, replies)
        for leaf, evaluation in ready:
            leaf.expand(evaluation)
        for tree, path, leaf in paths:
            tree.record(self._backup(path, leaf, vl))
        return evaluated

    def _before_evaluation(self, path: list[tuple[Node, int]],
                           leaf: Node) -> tuple[Evaluation | None, tuple[Move, Any] | None]:
        """A new leaf before the network, with the game's solver: proven, it needs no evaluation
        (a third of gomoku's leaves are).  Forced (one move does not lose at once), the position
        after that move is proven or evaluated instead: returns (None, (move, state after)).
        The one child of a forced node (Node.expand_forced) has the evaluation its parent
        already made, and its proof was looked for then: returns (that evaluation, None).
        (None, None): evaluate the leaf itself."""
        if self.prover is None:
            return None, None
        parent = path[-1][0] if path else None
        known = None
        if parent is not None and parent.forced_evaluation is not None:
            known, parent.forced_evaluation = parent.forced_evaluation, None   # this leaf's, its one child
        if known is None:
            self.prover.prove_leaf(leaf)
            if leaf.solved is not None:
                return None, None
        move = self.prover.forced_move(leaf)
        if move is None:
            return known, None
        after = leaf.state.play(move)           # forced (in turn, when the block made a four)
        if after.outcome() is not None:
            return None, None
        probe = Node(after)
        self.prover.prove_leaf(probe)
        if probe.solved is not None:
            leaf.solved, leaf.solved_plies = -probe.solved, probe.solved_plies + 1
            return None, None
        return None, (move, after)

    def _descend(self, tree: Tree, vl: float,
                 root_mask: np.ndarray | None = None) -> tuple[list[tuple[Node, int]], Node | None]:
        """Select from the root to a leaf, adding a virtual loss on each edge taken; the
        root chooses among `root_mask`'s moves (default the tree's: searchmoves).

        Returns (path, leaf); leaf is None when the path ran into a leaf that already
        waits for evaluation in this batch.
        """
        cfg = self.config
        puct = cfg.formula == "puct"
        root_mask = tree.root_mask if root_mask is None else root_mask
        if puct and tree_kernel is not None:
            steps, stop_node, a = tree_kernel.descend(tree.root, root_mask, cfg.c_base, cfg.c_init,
                                                      cfg.fpu_reduction, vl)
            if a >= 0:          # the new leaf: stop_node's child a
                return steps, stop_node.new_child(a)
            return steps, stop_node
        node = tree.root
        path: list[tuple[Node, int]] = []
        c_base, c_init, fpu_reduction = cfg.c_base, cfg.c_init, cfg.fpu_reduction
        root = tree.root
        while node.solved is None or (node is root and root_mask is not None):
            if node.moves is None:
                return (path, None) if node.pending else (path, node)
            if node.edges is None:
                node.edges = {}
            mask = root_mask if node is root else None
            if puct:    # argmax Q + c(s) P sqrt(N) / (1 + n), unvisited Q = Q(node) - fpu_reduction
                total = node.child_visits
                c = math.log((1.0 + total + c_base) / c_base) + c_init
                fpu = node.value_sum_self / node.visit_count - fpu_reduction
                a = node.select_puct(c * math.sqrt(total if total > 1.0 else 1.0), fpu, mask)
            else:
                a = self._select_ucb1(node, mask)
            node.update(a, vl, -vl)
            path.append((node, a))
            node = node.children.get(a) or node.new_child(a)
        return path, node

    def _select_ucb1(self, node: Node, mask: np.ndarray | None) -> int:
        """argmax Q + C sqrt(ln N / n); unvisited children first, in prior order."""
        return node.select_ucb1(self.config.ucb1_c, mask)

    def _expand(self, leaves: list[Node], forced: Sequence[tuple[Move, Any] | None] | None = None) -> int:
        """Evaluate leaves in one call (each distinct position once) and expand them;
        returns how many distinct positions went to the evaluator.  forced[i]: leaf i's one
        move that does not lose at once and the state after it, evaluated instead."""
        if not leaves:
            return 0
        replies = list(forced) if forced is not None else [None] * len(leaves)
        index: dict[object, int] = {}
        unique: list = []
        slots = []
        for leaf, reply in zip(leaves, replies):
            state = leaf.state if reply is None else reply[1]
            key = state.key()
            slot = index.get(key)
            if slot is None:
                slot = index[key] = len(unique)
                unique.append(state)
            slots.append(slot)
        evaluations = self.evaluator.evaluate(unique)
        if len(evaluations) != len(unique):
            raise ValueError(f"evaluator returned {len(evaluations)} results for {len(unique)} states")
        inverse_t = 1.0 / self.config.policy_temperature
        if inverse_t != 1.0:
            evaluations = [_tempered(e, inverse_t) for e in evaluations]
        for leaf, slot, reply in zip(leaves, slots, replies):
            if reply is None:
                leaf.expand(evaluations[slot])
            else:
                leaf.expand_forced(reply[0], evaluations[slot])
        return len(unique)

    @staticmethod
    def _backup(path: list[tuple[Node, int]], leaf: Node, vl: float) -> int:
        """Add the leaf's value along the path (negated once per ply), remove the virtual
        loss, and carry exact results upwards.  Returns the leaf's depth."""
        if tree_kernel is not None:
            return tree_kernel.backup(path, leaf, vl)
        value = leaf.solved if leaf.solved is not None else leaf.value
        draw = 1.0 if leaf.solved == 0.0 else leaf.draw
        leaf.visit_count += 1
        leaf.value_sum_self += value
        leaf.draw_sum += draw
        child = leaf
        for node, a in reversed(path):
            value = -value
            node.update(a, 1.0 - vl, value + vl)
            node.visit_count += 1
            node.value_sum_self += value
            node.draw_sum += draw
            if child.solved is not None:
                node.prove_child(a, child)
            child = node
        return len(path)

    # --- results --------------------------------------------------------------------------

    def _info(self, tree: Tree, elapsed: float) -> SearchInfo:
        root = tree.root
        value, mate = root.value_and_mate()
        depth = round(tree.depth_sum / tree.playouts) if tree.playouts else 0
        return SearchInfo(depth=max(depth, 1), seldepth=max(tree.seldepth, 1), value=value,
                          nodes=tree.playouts, time=elapsed,
                          pv=tuple(pv_moves(root, tree.root_mask, lcb_z=self.config.lcb_z)),
                          mate_plies=mate, wdl=_wdl(root, value),
                          root_visits=None if root.visits is None else tuple(int(v) for v in root.visits),
                          root_priors=_raw_priors(root))

    def _lines(self, tree: Tree, head: SearchInfo, multipv: int, first: int | None = None) -> list[SearchInfo]:
        """MultiPV: the top `multipv` root children (ranked_children's order, `first` moved to
        the front when given: the move actually chosen), each reported with its own value from
        the root side's point of view (proven result, else its Q) and pv (the child, then its
        most visited path); depth, nodes and time are head's.  [head] when multipv <= 1."""
        root = tree.root
        if multipv <= 1 or not root.moves:
            return [head]
        ranked = ranked_children(root, tree.root_mask)
        if first is not None and first in ranked:
            ranked.remove(first)
            ranked.insert(0, first)
        lines = []
        for rank, a in enumerate(ranked[:multipv], 1):
            child = root.children.get(a)
            value, mate = self._child_value(root, a, child, head.value)
            pv = (root.moves[a], *(pv_moves(child, None) if child is not None else ()))
            lines.append(replace(head, multipv=rank, value=value, mate_plies=mate, pv=pv,
                                 wdl=_wdl(child, value) if child is not None else None))
        return lines

    def _child_value(self, root: Node, a: int, child: Node | None, root_value: float) -> tuple[float, int | None]:
        """Root child a's value for the side to move at the root, and signed plies to a
        proven end.  An unsearched child gets what selection assumes for it (FPU)."""
        if root.proven is not None and root.proven_plies is not None and not math.isnan(root.proven[a]):
            proven = float(root.proven[a])
            plies = int(root.proven_plies[a])
            return proven, (None if proven == 0.0 else plies if proven > 0 else -plies)
        if root.visits is not None and root.visits[a] > 0:
            return float(root.q[a]), None
        if child is not None and child.moves is not None:   # evaluated, but its visits went elsewhere
            return -child.value, None
        return max(-1.0, root_value - self.config.fpu_reduction), None

    def _result(self, tree: Tree, elapsed: float) -> SearchResult:
        root = tree.root
        if not root.moves:                              # terminal root: nothing to play
            value = root.solved if root.solved is not None else 0.0
            return SearchResult(best_move=None, value=value)
        info = self._info(tree, elapsed)
        a = best_child(root, tree.root_mask, self.config.temperature, tree.rng, self.config.lcb_z)
        move: Move = root.moves[a]
        pv = info.pv if info.pv and info.pv[0] == move else (move,)
        if pv is not info.pv:
            info = replace(info, pv=pv)
        root.ensure_stats()
        visits = tuple(int(v) for v in root.visits)
        if not any(visits):        # proven before any playout: the proven move is the target
            visits = tuple(int(j == a) for j in range(len(visits)))
        elif self.config.noise and self.config.forced_playouts > 0.0:
            visits = pruned_visits(root, a, self.config)
        return SearchResult(best_move=move, value=info.value, info=info,
                            ponder_move=pv[1] if len(pv) > 1 else None, visits=visits)


def forced_child_mask(tree: Tree, k: float) -> np.ndarray | None:
    """The root move that forced playouts (KataGo) search next, as a one-move root mask: of
    the visited, unproven children allowed at the root, the one furthest below sqrt(k P N)
    visits (P the noised prior, N the root's child visits); None when none is below."""
    root = tree.root
    if root.solved is not None or not root.edges or root.moves is None:
        return None
    total, allowed, proven = root.child_visits, tree.root_mask, root.proven
    pick, widest = -1, 0.0
    for a, (n, _, p) in root.edges.items():
        gap = math.sqrt(k * p * total) - n
        if (gap > widest and n >= 1.0 and (allowed is None or allowed[a])
                and (proven is None or math.isnan(proven[a]))):
            pick, widest = a, gap
    if pick < 0:
        return None
    mask = np.zeros(len(root.moves), dtype=bool)
    mask[pick] = True
    return mask


def pruned_visits(root: Node, best: int, config: MCTSConfig) -> tuple[int, ...]:
    """The root's visits as a policy target with the forced playouts taken back (KataGo's
    policy target pruning): every child but `best` loses up to sqrt(k P N) visits, as many as
    leave its PUCT score no higher than best's; a child left with one visit drops to zero."""
    visits = root.visits.astype(np.float64)
    q, prior = root.q.astype(np.float64), root.prior.astype(np.float64)
    total = float(visits.sum())
    scale = (math.log((1.0 + total + config.c_base) / config.c_base) + config.c_init) * math.sqrt(total)
    bound = q[best] + scale * prior[best] / (1.0 + visits[best])
    out = visits.copy()
    for a in np.flatnonzero(visits > 0):
        gap = bound - q[a]
        if a == best or gap <= 0.0:
            continue
        floor = visits[a] - math.sqrt(config.forced_playouts * prior[a] * total)
        out[a] = min(visits[a], max(floor, math.ceil(scale * prior[a] / gap - 1.0)))
        if out[a] <= 1.0:
            out[a] = 0.0
    return tuple(int(math.ceil(v)) for v in out)


TACTICS_SHARE = 0.25   # of a timed search's soft budget, at most, for the root tactics scan


def _chosen(tree: Tree, lcb_z: float) -> int:
    """The root move the search would play now (the prover's checks read it after each veto)."""
    return best_child(tree.root, tree.root_mask, 0.0, None, lcb_z)


def _veto(tree: Tree, a: int) -> None:
    """Take root move a out of the tree's choice and further search, as searchmoves would;
    the last allowed move is never taken out."""
    moves = tree.root.moves or ()
    mask = np.ones(len(moves), dtype=bool) if tree.root_mask is None else tree.root_mask.copy()
    mask[a] = False
    if mask.any():
        tree.root_mask = mask


def _tactics_cutoff(stopper: Stopper | None) -> Callable[[], bool] | None:
    """When a timed search's root tactics scan must give up: it costs tens of ms in chess,
    more than the whole budget of a move at fast clocks (1+0.01), and proves no playout."""
    if stopper is None or not stopper.timed or stopper.soft_deadline is None:
        return None
    allowed = TACTICS_SHARE * (stopper.soft_deadline - stopper.start)
    return lambda: stopper.elapsed() >= allowed


def _tempered(evaluation: Evaluation, inverse_t: float) -> Evaluation:
    """The evaluation with priors p^(1/T), renormalised (softmax temperature T on the logits)."""
    priors = np.asarray(evaluation.priors, dtype=np.float64)
    if priors.size == 0:
        return evaluation
    powered = np.power(np.maximum(priors, 0.0), inverse_t)
    total = powered.sum()
    if not total > 0.0:
        return evaluation
    return Evaluation(priors=(powered / total).astype(np.float32), value=evaluation.value,
                      extra=evaluation.extra)


def _raw_priors(root: Node) -> tuple[float, ...] | None:
    """The evaluator's priors at the root, before any self-play noise."""
    prior = root.raw_prior if root.raw_prior is not None else root.prior
    return None if prior is None else tuple(float(p) for p in prior)


def _wdl(node: Node, value: float) -> tuple[int, int, int] | None:
    """(win, draw, loss) per mille for `value`'s side, when the evaluator reported draws.
    The draw rate is the same from either side, so a child's serves its parent's view."""
    if not node.has_draw_info or not node.visit_count:
        return None
    d = node.draw_sum / node.visit_count
    win = min(max(0.0, (1.0 + value - d) / 2.0), 1.0 - d)
    return round(1000 * win), round(1000 * d), 1000 - round(1000 * win) - round(1000 * d)


NODE_BYTES = 4096  # measured: ~4.2 KB per expanded node (15x15 gomoku and chess)


class _Reports:
    """When the periodic SearchInfo reports of one search are due, and where they go."""

    def __init__(self, on_info: Callable[[SearchInfo], None] | None):
        self.on_info = on_info
        self.next_at = INFO_INTERVAL

    def due(self, elapsed: float) -> bool:
        if self.on_info is None or elapsed < self.next_at:
            return False
        self.next_at = elapsed + INFO_INTERVAL
        return True

    def send(self, info: SearchInfo) -> None:
        assert self.on_info is not None
        self.on_info(info)


def tree_node_budget(memory_mb: int) -> int:
    """Nodes that fit in `memory_mb` (the UCI Hash / --hash setting is the tree's budget)."""
    return max(1000, memory_mb * 2**20 // NODE_BYTES)
