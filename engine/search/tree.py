"""Search-tree nodes shared by MCTS and UCT: per-node child statistics, the exact-result
solver, move choice and the root's one-ply tactics scan.

Frames: a node's `visits`, `value_sum`, `q`, `unvisited`, `prior`, `proven` are arrays
[A] over `node.moves` (= state.legal_moves()); `value_sum[a]`, `q[a]` and `proven[a]` are
from the point of view of the player to move AT THIS NODE (the one choosing a).
Speed: the statistics live in `edges`, a dict {a: [visits, value_sum]} of the children
visited so far (virtual losses included), so an update is a dict lookup and selection
(`select_puct`, `select_ucb1`) looks at the visited children plus ONE unvisited child:
the best unvisited one is the one with the highest prior, found from `order` (the moves
by prior, descending) and a cursor past the visited ones.  A node deep in the tree has
a handful of visited children among hundreds of moves, so this is pure Python over a few
entries instead of whole-array numpy operations (which cost microseconds each on arrays
this small).  The dense arrays `visits`, `value_sum`, `q`, `unvisited` are built on
demand for the cold readers (move choice, reports, the time plan).  Memory matters
(Gomocup allows 350 MB; self-play keeps many trees): children are a dict of the ones
created, and `edges`/`order` are allocated only when a node is first selected from, so
the many leaves visited once hold just their priors.  `value_sum_self`, `value` and
`solved` are from the node's own side to move.
MCTS walks these nodes in C when the tree kernel is built (tree_kernel.c: the same
descent and backup, reading the slots directly); it reads the priors and proven results
through `_prior_view`/`_proven_view`, memoryviews of the arrays that the kernel makes the
first time it selects from a node and remakes when the array changed.
"""
from __future__ import annotations

import math
from typing import Callable, Sequence

import numpy as np

from engine.types import Evaluation, Move

_NO_EDGE = (0.0, 0.0)

__all__ = ["Node", "Tree", "best_child", "ranked_children", "pv_moves", "scan_root_tactics",
           "searchmoves_mask"]


class Node:
    __slots__ = ("state", "moves", "_prior", "_prior_view", "raw_prior", "edges", "order", "cursor",
                 "child_visits", "children",
                 "visit_count", "value_sum_self", "draw_sum", "value", "draw", "has_draw_info",
                 "proven", "_proven_view", "proven_plies", "n_proven", "solved", "solved_plies", "pending",
                 "tactics_done", "forced_evaluation")

    def __init__(self, state):
        self.state = state
        self.moves: Sequence[Move] | None = None      # set by expand()
        self._prior: np.ndarray = None  # type: ignore[assignment]
        self._prior_view: memoryview | None = None    # of _prior, made by the tree kernel (mcts.py)
        self.raw_prior: np.ndarray | None = None
        self.edges: dict[int, list[float]] | None = None  # a -> [visits, value_sum, prior], visited only
        self.order: list[int] | None = None           # moves by prior, highest first (stable)
        self.cursor = 0                 # order[:cursor] are all visited or proven lost
        self.child_visits = 0.0         # sum of visits[], virtual losses included
        self.children: dict[int, Node] = {}
        self.visit_count = 0            # playouts through this node, its own evaluation included
        self.value_sum_self = 0.0
        self.draw_sum = 0.0
        self.value = 0.0                # the evaluator's value (side to move here)
        self.draw = 0.0
        self.has_draw_info = False
        self.proven: np.ndarray | None = None        # [A] exact child results, nan = unknown
        self._proven_view: memoryview | None = None   # of proven, made by the tree kernel
        self.proven_plies: np.ndarray | None = None
        self.n_proven = 0
        self.pending = False            # waiting for evaluation in the current batch
        self.tactics_done = False
        self.forced_evaluation: Evaluation | None = None   # of the one child, until it exists (expand_forced)
        outcome = state.outcome()
        self.solved: float | None = None if outcome is None else outcome.value_for(state.to_play)
        self.solved_plies = 0

    def expand(self, evaluation: Evaluation) -> None:
        moves = self.state.legal_moves()
        prior = np.asarray(evaluation.priors, dtype=np.float32)
        if prior.shape != (len(moves),):
            raise ValueError(f"evaluator gave {prior.size} priors for {len(moves)} legal moves")
        self.moves = moves
        self.prior = prior
        self._take_value(evaluation, 1.0)

    def _take_value(self, evaluation: Evaluation, sign: float) -> None:
        """The evaluation's value (clipped; times sign: -1 for the position after this
        node's move) and draw share as this node's, which waits no more."""
        self.value = sign * min(1.0, max(-1.0, float(evaluation.value)))
        extra = evaluation.extra
        wdl = extra.get("wdl") if extra else None
        if wdl is not None:
            total = float(sum(wdl)) or 1.0
            self.draw = float(wdl[1]) / total
            self.has_draw_info = True
        self.pending = False

    def expand_forced(self, move: Move, child_evaluation: Evaluation) -> None:
        """Expand with one move, the only one that does not lose at once, from the evaluation
        of the position after it: this node's value is that one negated, and the child,
        once made, starts from it (MCTS._step) instead of asking the network again."""
        self.moves = [move]
        self.prior = np.ones(1, dtype=np.float32)
        self._take_value(child_evaluation, -1.0)
        self.forced_evaluation = child_evaluation

    @property
    def prior(self) -> np.ndarray:
        """[A] float32 priors (None before expansion)."""
        return self._prior

    @prior.setter
    def prior(self, prior: np.ndarray) -> None:
        """Replace the priors (root noise on or off): selection's prior order follows them."""
        self._prior = prior
        self._prior_view = None     # the tree kernel views the new array when it needs to
        self.order = None
        self.cursor = 0
        if self.edges:
            for a, edge in self.edges.items():
                edge[2] = prior.item(a)

    def ensure_stats(self) -> None:
        """Allocate the child statistics (on the first selection from this node)."""
        if self.edges is None:
            self.edges = {}

    def _ordered(self) -> Sequence[int]:
        if self.order is None:
            prior = self.prior
            if len(prior) and prior.min() == prior.max():   # uniform: index order
                self.order = range(len(prior))  # type: ignore[assignment]
            else:
                self.order = np.argsort(-prior, kind="stable").tolist()
            self.cursor = 0
        return self.order  # type: ignore[return-value]

    @property
    def visits(self) -> np.ndarray:
        """[A] float32 visits per child (virtual losses included); None before any selection."""
        return self._dense(0)

    @property
    def value_sum(self) -> np.ndarray:
        return self._dense(1)

    @property
    def q(self) -> np.ndarray:
        """[A] float32 value_sum / visits, 0 where unvisited (None before any selection)."""
        if self.edges is None:
            return None  # type: ignore[return-value]
        out = np.zeros(len(self.prior), dtype=np.float32)
        for a, (n, w, _) in self.edges.items():
            out[a] = w / n
        return out

    @property
    def unvisited(self) -> np.ndarray:
        """[A] float32, 1.0 where the child has no visits (None before any selection)."""
        if self.edges is None:
            return None  # type: ignore[return-value]
        out = np.ones(len(self.prior), dtype=np.float32)
        if self.edges:
            out[list(self.edges)] = 0.0
        return out

    def _dense(self, field: int) -> np.ndarray:
        if self.edges is None:
            return None  # type: ignore[return-value]
        out = np.zeros(len(self.prior), dtype=np.float32)
        for a, edge in self.edges.items():
            out[a] = edge[field]
        return out

    def edge(self, a: int) -> tuple[float, float]:
        """(visits, value_sum) of edge a."""
        edge = self.edges.get(a) if self.edges is not None else None
        return (edge[0], edge[1]) if edge is not None else _NO_EDGE

    def update(self, a: int, visits: float, value: float) -> None:
        """Add visits and value to edge a (negative amounts remove a virtual loss)."""
        self.child_visits += visits
        edges = self.edges
        edge = edges.get(a)   # type: ignore[union-attr]
        if edge is None:
            if visits > 0:
                edges[a] = [visits, value, self._prior.item(a)]   # type: ignore[index]
            return
        edge[0] += visits
        edge[1] += value
        if edge[0] <= 0:       # a virtual loss taken back from a child never visited
            del edges[a]       # type: ignore[union-attr]
            if self.order is not None:
                rank = self.order.index(a)
                if rank < self.cursor:
                    self.cursor = rank

    def best_unvisited(self, mask: np.ndarray | None) -> int:
        """The unvisited child with the highest prior (lowest index on ties) that is not
        proven lost and is allowed by mask; -1 when there is none."""
        order = self._ordered()
        edges = self.edges
        proven = self.proven
        i = self.cursor
        n = len(order)
        while i < n:
            a = order[i]
            if a in edges or (proven is not None and proven[a] < 0):   # type: ignore[operator]
                i += 1
                continue
            break
        self.cursor = i
        while i < n:     # past the cursor: skip what the mask forbids (the cursor stays)
            a = order[i]
            if (mask is None or mask[a]) and a not in edges and not (   # type: ignore[operator]
                    proven is not None and proven[a] < 0):
                return a
            i += 1
        return -1

    def select_puct(self, c_puct: float, fpu: float, mask: np.ndarray | None) -> int:
        """argmax Q + c_puct P / (1 + n) over the children, an unvisited one counting
        Q = fpu; proven losses and children outside mask never; ties: the lowest index."""
        edges = self.edges
        if mask is None and self.proven is None:    # the common case, inlined
            if not edges:      # the first selection here: the highest prior, no sort needed
                best = int(self._prior.argmax())
                return best if len(self._prior) else 0
            order = self.order if self.order is not None else self._ordered()
            i, n_moves = self.cursor, len(order)
            while i < n_moves and order[i] in edges:   # type: ignore[operator]
                i += 1
            self.cursor = i
            if i < n_moves:
                best = order[i]
                best_score = fpu + c_puct * self._prior.item(best)
            else:
                best, best_score = -1, -math.inf
            for a, (n, w, p) in edges.items():   # type: ignore[union-attr]
                score = w / n + c_puct * p / (1.0 + n)
                if score > best_score or (score == best_score and a < best):
                    best, best_score = a, score
            return best if best >= 0 else 0
        proven = self.proven
        best, best_score = -1, -math.inf
        u = self.best_unvisited(mask)
        if u >= 0:
            best, best_score = u, fpu + c_puct * self._prior.item(u)
        for a, (n, w, p) in edges.items():   # type: ignore[union-attr]
            if proven is not None and proven[a] < 0 or mask is not None and not mask[a]:
                continue
            score = w / n + c_puct * p / (1.0 + n)
            if score > best_score or (score == best_score and a < best):
                best, best_score = a, score
        return best if best >= 0 else 0

    def select_ucb1(self, c: float, mask: np.ndarray | None) -> int:
        """Unvisited children first in prior order, else argmax Q + c sqrt(ln N / n);
        proven losses and children outside mask never; ties: the lowest index."""
        u = self.best_unvisited(mask)
        if u >= 0:
            return u
        proven = self.proven
        log_total = math.log(max(self.child_visits, 1.0))
        best, best_score = -1, -math.inf
        for a, (n, w, _) in self.edges.items():   # type: ignore[union-attr]
            if proven is not None and proven[a] < 0 or mask is not None and not mask[a]:
                continue
            score = w / n + c * math.sqrt(log_total / max(n, 1.0))
            if score > best_score or (score == best_score and a < best):
                best, best_score = a, score
        return best if best >= 0 else 0

    def new_child(self, a: int) -> "Node":
        """Move a's child, made and linked.  A repeated position (chess) counts as a draw
        below the root; never at a root, since a game goes on from one."""
        assert self.moves is not None, "children hang below an expanded node"
        state = self.state.play(self.moves[a])
        child = self.children[a] = Node(state)
        if child.solved is None and state.repeated():
            child.solved = 0.0
        return child

    def as_root(self, state) -> "Node":
        """This reused node as the new root, on the game's own state.  new_child's repetition
        draw is search's score for reaching the position again, not an end: the game goes on."""
        self.state = state
        if self.solved == 0.0 and self.moves is None and state.outcome() is None:
            self.solved = None
        if self.moves is not None and len(self.moves) == 1 and len(state.legal_moves()) > 1:
            self._widen()
        return self

    def _widen(self) -> None:
        """A forced node (expand_forced: one move kept) made a root: all its legal moves back,
        since a search answers with visits per legal move.  The kept move keeps its index's
        statistics and subtree and all the prior; the others lose at once (the root's
        tactics scan proves it)."""
        moves = list(self.state.legal_moves())
        kept = moves.index(self.moves[0])        # type: ignore[index]
        child, edge = self.children.get(0), (self.edges or {}).get(0)
        self.children = {kept: child} if child is not None else {}
        if self.edges is not None:
            self.edges = {kept: edge} if edge is not None else {}
        if self.proven is not None and self.proven_plies is not None:
            proven, plies = np.full(len(moves), np.nan), np.zeros(len(moves), dtype=np.int64)
            proven[kept], plies[kept] = self.proven[0], self.proven_plies[0]
            self.proven, self.proven_plies, self._proven_view = proven, plies, None
        self.moves = moves
        self.forced_evaluation = None            # it was the kept move's; a new child may be another
        self.raw_prior = None
        prior = np.zeros(len(moves), dtype=np.float32)
        prior[kept] = 1.0
        self.prior = prior

    def prove_child(self, a: int, child: "Node") -> None:
        """Record child a's exact result and solve this node when that settles it."""
        if self.proven is None or self.proven_plies is None:   # both are set together
            self.proven = np.full(len(self.prior), np.nan)
            self.proven_plies = np.zeros(len(self.prior), dtype=np.int64)
        if not math.isnan(self.proven[a]):
            return
        value = -child.solved  # type: ignore[operator]
        self.proven[a] = value
        self.proven_plies[a] = child.solved_plies + 1
        self.n_proven += 1
        if value > 0:
            wins = self.proven > 0
            self.solved, self.solved_plies = 1.0, int(self.proven_plies[wins].min())
        elif self.n_proven == len(self.prior):
            best = float(self.proven.max())
            plies = self.proven_plies[self.proven == best]
            self.solved = best
            self.solved_plies = int(plies.max() if best < 0 else plies.min())

    def value_and_mate(self) -> tuple[float, int | None]:
        """Search value for the side to move here, and signed plies to a proven end."""
        if self.solved is not None:
            if self.solved == 0.0:
                return 0.0, None
            return self.solved, self.solved_plies if self.solved > 0 else -self.solved_plies
        if self.visit_count == 0:
            return self.value, None
        return self.value_sum_self / self.visit_count, None


def searchmoves_mask(moves: Sequence[Move], searchmoves: Sequence[Move] | None) -> np.ndarray | None:
    """[A] bool mask of the root moves a search may choose; None = all (also when none match)."""
    if not searchmoves:
        return None
    wanted = set(searchmoves)
    mask = np.array([m in wanted for m in moves], dtype=bool)
    return mask if mask.any() else None


class Tree:
    """One root being searched: its node, its random stream and its playout statistics."""

    def __init__(self, root: Node, state, seed: int | None):
        self.root = root
        self.root_mask: np.ndarray | None = None
        if seed is None:
            self.rng = np.random.default_rng()
        else:
            self.rng = np.random.default_rng([seed & 0xFFFFFFFFFFFFFFFF,
                                              hash(state.key()) & 0xFFFFFFFFFFFFFFFF])
        self.playouts = 0
        self.depth_sum = 0
        self.seldepth = 0

    def record(self, depth: int) -> None:
        self.playouts += 1
        self.depth_sum += depth
        self.seldepth = max(self.seldepth, depth)

    def resolved(self) -> bool:
        """Nothing left to search: a terminal root, or an exact result over the allowed moves."""
        root = self.root
        if self.root_mask is None or root.moves is None:
            return root.solved is not None
        if root.proven is None:
            return False
        allowed = root.proven[self.root_mask]
        return bool((allowed > 0).any() or not np.isnan(allowed).any())

    def done(self, node_limit: int | None, tree_limit: int | None = None) -> bool:
        """Resolved, out of playouts, or full (the root's visits ~ the nodes below it)."""
        return (self.resolved() or (node_limit is not None and self.playouts >= node_limit)
                or (tree_limit is not None and self.root.visit_count >= tree_limit))


LCB_SIGMA = 0.4        # the spread of one playout's value that the lower bound assumes
LCB_SHARE = 0.1        # a child needs this share of the most visits to be chosen by its bound
LCB_MIN_VISITS = 16    # with fewer visits on the top child the most visited plays


def best_child(node: Node, mask: np.ndarray | None, temperature: float,
               rng: np.random.Generator | None, lcb_z: float = 0.0) -> int:
    """The move to play: a proven win (shortest), else the most visited move that is not
    proven lost (sampled ~ N^(1/T) when temperature > 0; with lcb_z > 0 at temperature 0,
    the highest lower confidence bound Q - lcb_z * LCB_SIGMA / sqrt(N) among the children
    with LCB_SHARE of the most visits), else the longest loss (ties: the most visited, then
    the highest prior).  Why the bound: a move the search found late has fewer visits than
    the one it leaned on, though its value is clearly higher (Leela Zero's LCB choice)."""
    n = len(node.prior)
    node.ensure_stats()
    allowed = np.ones(n, dtype=bool) if mask is None else mask
    proven = node.proven if node.proven is not None else np.full(n, np.nan)
    wins = allowed & (proven > 0)
    if wins.any():
        plies = np.where(wins, node.proven_plies, np.iinfo(np.int64).max)  # type: ignore[arg-type]
        return int(np.argmin(plies))
    candidates = allowed & ~(proven < 0)
    if not candidates.any():   # all lost: the longest, then the most visited, then the network's pick
        # (a root proven lost before any playout has equal plies and no visits everywhere:
        # without the prior it played its first legal move, a gomoku corner, not a block)
        index = np.flatnonzero(allowed)
        plies = node.proven_plies if node.proven_plies is not None else np.zeros(n)
        return int(index[np.lexsort((node.prior[index], node.visits[index], plies[index]))[-1]])
    visits = np.where(candidates, node.visits.astype(np.float64), -1.0)
    if temperature > 0 and rng is not None and visits.max() > 0:
        weights = np.where(candidates, np.power(np.maximum(visits, 0.0) / visits.max(),
                                                1.0 / temperature), 0.0)
        return int(rng.choice(n, p=weights / weights.sum()))
    top = visits.max()
    if lcb_z > 0.0 and top >= LCB_MIN_VISITS:
        bound = node.q - lcb_z * LCB_SIGMA / np.sqrt(np.maximum(visits, 1.0))
        return int(np.argmax(np.where(visits >= LCB_SHARE * top, bound + 1e-9 * visits, -np.inf)))
    return int(np.argmax(visits + 1e-6 * node.prior))  # ties: the higher prior


def ranked_children(node: Node, mask: np.ndarray | None) -> list[int]:
    """Every allowed child, best first, in best_child's order at temperature 0 (its first
    element is best_child's answer): proven wins by plies ascending, then the moves not
    proven lost by visits (ties: the higher prior), then proven losses, longest first.
    MultiPV reports read the top k of this ranking."""
    n = len(node.prior)
    node.ensure_stats()
    proven = node.proven if node.proven is not None else np.full(n, np.nan)
    plies = node.proven_plies if node.proven_plies is not None else np.zeros(n, dtype=np.int64)
    visits = node.visits.astype(np.float64) + 1e-6 * node.prior

    def key(a: int) -> tuple[int, float, float]:
        if proven[a] > 0:
            return 0, float(plies[a]), 0.0
        if proven[a] < 0:
            return 2, -float(plies[a]), -float(visits[a])
        return 1, 0.0, -float(visits[a])

    allowed = range(n) if mask is None else (int(a) for a in np.flatnonzero(mask))
    return sorted(allowed, key=key)


def pv_moves(root: Node, mask: np.ndarray | None, limit: int = 64, lcb_z: float = 0.0) -> list[Move]:
    """The principal variation: best (most visited / proven) children from the root, the
    root's chosen as the search would play it (lcb_z: see best_child)."""
    moves: list[Move] = []
    node: Node | None = root
    while node is not None and node.moves and len(moves) < limit:
        if (node.visits is None or node.child_visits <= 0) and node.proven is None:
            break
        a = best_child(node, mask, 0.0, None, lcb_z)
        moves.append(node.moves[a])
        node, mask, lcb_z = node.children.get(a), None, 0.0
    return moves


def _wins_at_once(state, move: Move) -> bool:
    outcome = state.play(move).outcome()
    return outcome is not None and outcome.winner == state.to_play


def scan_root_tactics(root: Node, give_up: Callable[[], bool] | None = None) -> None:
    """Prove one-ply facts at an expanded root: every move that wins at once, and moves
    after which the opponent wins at once.  The opponent's winning replies are found by
    scanning unsolved children fully until one has some (two scans at most); in the
    other children only those replies are tried.  In gomoku that finds the losing moves
    (a move cannot create an opponent's win, so the threat cells are the same after every
    move); in chess it proves only moves that allow one of those mates, and a mate in one
    that another move newly allows is left to the search.  Costs a few ms per root (about
    3 plays per legal move: tens of ms in chess).  give_up: polled between moves; a scan
    cut short has proved only true facts and runs again from the start next time."""
    if root.tactics_done or not root.moves:
        return
    for a in range(len(root.moves)):
        if give_up is not None and give_up():
            return
        child = root.children.get(a) or root.new_child(a)
        if child.solved is not None:
            root.prove_child(a, child)
    if root.solved is not None and root.solved > 0:
        root.tactics_done = True
        return
    threats: list[Move] = []
    full_scans = 0
    for a, child in sorted(root.children.items()):
        if child.solved is not None:
            continue
        if give_up is not None and give_up():
            return
        state = child.state
        if not threats and full_scans < 2:
            full_scans += 1
            threats = [r for r in state.legal_moves() if _wins_at_once(state, r)]
            wins = bool(threats)
        else:
            legal = state.legal_moves()
            wins = any(r in legal and _wins_at_once(state, r) for r in threats)
        if wins:
            child.solved, child.solved_plies = 1.0, 1
            root.prove_child(a, child)
    root.tactics_done = True
