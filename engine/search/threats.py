"""Threat-space search for gomoku: VCF, the defence check, and a budgeted VCT.

VCF (victory by continuous fours) for the side to move: every attacking move makes a
four, so the defender's reply is forced (the one cell that completes the five).  The
defender cannot answer with a five of his own (the attacker never plays a four while the
defender has one); when his forced block makes a four of his own, the attacker must
block it, and only a block that is itself a four continues the VCF.  An open four or a
double four (two five cells) wins at once.  The proof is a single line: attacker,
forced reply, ..., the attacker's five.  Both rules come from the pattern table, so
"standard" (exactly five) fours are real fours and overlines never count.

The defence check: the opponent's VCF if the side to move passed, and the moves that
stop it.  Every move that can stop a VCF line L occupies a cell on one of the four
lines within four cells of a cell of L (so it touches a four's window, a forced
reply's lines -- a counter-four -- or the last double threat), or makes a four of its
own; each such candidate is checked by a VCF search, every other move leaves L intact.

VCT (continuous threes and fours): attacking moves are fours and open threes (a three
counts when the attacker would then have a VCF); against a three the defender may play
any candidate cell above, each answered recursively.  It is exact within its limits
but costly: budgets usually bind past 3-4 threats (`max_threats`), so an unfinished
VCT says "not found", never "none".

Budgets are node counts (attacker and defender stones placed); a result says whether the
search finished.  A transposition table (Zobrist key + attacker) keeps proofs and
depth-bounded failures across calls; keep one ThreatSolver per player (not thread-safe).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Iterable, Sequence

from engine.games.gomoku import GomokuGame, GomokuState
from engine.search.ab_gomoku import GomokuSearchBoard
from engine.search.gomoku_patterns import PatternTable
from engine.search.limits import Stopper

__all__ = ["ThreatSolver", "ThreatResult", "Defence", "VctDefence", "TreeProver", "time_cap",
           "DEFAULT_VCF_PLIES", "DEFAULT_VCT_THREATS"]

DEFAULT_VCF_PLIES = 41        # up to 20 fours, then the five
DEFAULT_VCT_THREATS = 4       # attacking threes/fours in a VCT
_MAX_TT = 500_000             # entries before the table is dropped
_ATTACKER_SALT = (0x2545F4914F6CDD1D, 0x9E3779B97F4A7C15)
_VCT_SALT = 0x6A09E667F3BCC909
_STOP_POLL = 32               # nodes between calls of a stop callback
LEAF_FOUR_LINES = 2           # MCTS leaves are tried when the mover can make fours on this many lines
LEAF_MAX_DEPTH = 4            # ... and lie at most this many plies below the root
ROOT_TIME_SHARE = 0.15        # of the time left, for the threat checks before a search
VCT_ENOUGH = 4                # root moves that hold against the opponent's VCT before checks stop
VCT_DEEPEN = 4                # ... then those are checked again with this many times the nodes
VCT_DEEPEN_LEVELS = 2         # ... at most this many times (1,000 -> 4,000 -> 16,000 nodes)
VERIFY_SHARE = 0.3            # of a timed search's time left after the root checks: kept to check the chosen move
VERIFY_MAX_NODES = 64_000     # ... deepening its VCT check up to this many nodes


@dataclass(frozen=True)
class ThreatResult:
    """line: the proof from the position (attacker's move, the reply, ..., the attacker's
    five), None when no win was found.  complete: the search finished within its budget
    (so None means "none within the depth"), False when it ran out."""
    line: tuple[int, ...] | None
    nodes: int
    complete: bool

    @property
    def win(self) -> bool:
        return self.line is not None


@dataclass(frozen=True)
class Defence:
    """The defence check for the side to move.

    threat: the opponent's VCF line if the side to move passed (None: none found).
    refutations: the moves after which no opponent VCF was found (None when there is no
    threat: every move is fine).  losing: move -> the opponent's proof line after it,
    for candidate moves that were checked and lose; every move outside the candidates
    loses to `threat` itself.  complete: every check finished within its budget.
    """
    threat: tuple[int, ...] | None
    refutations: frozenset[int] | None
    losing: dict[int, tuple[int, ...]] = field(default_factory=dict)
    candidates: frozenset[int] = frozenset()
    nodes: int = 0
    complete: bool = True

    def loses(self, move: int) -> tuple[int, ...] | None:
        """The opponent's proof line after `move`, if it is known to lose."""
        if self.threat is None or self.refutations is None or move in self.refutations:
            return None
        return self.losing.get(move, self.threat)


@dataclass(frozen=True)
class VctDefence:
    """The VCT check for the side to move (ThreatSolver.vct_losing_moves).

    threat: the opponent's VCT line if the side to move passed (None: none found).
    losing: tried moves after which the opponent still has a VCT, with its line.
    holding: tried moves after which none was found.  complete: every search finished.
    """
    threat: tuple[int, ...] | None
    losing: dict[int, tuple[int, ...]] = field(default_factory=dict)
    holding: tuple[int, ...] = ()
    nodes: int = 0
    complete: bool = True


class _OutOfBudget(Exception):
    pass


def time_cap(stopper: Stopper | None, share: float) -> Callable[[], bool] | None:
    """A solver stop callback: the search's stop, or `share` of the time it had left spent."""
    if stopper is None:
        return None
    left = stopper.time_left()
    give_up = stopper.elapsed() + (left * share if left is not None else float("inf"))
    return lambda: stopper.should_stop() or stopper.elapsed() > give_up


class ThreatSolver:
    """VCF/VCT/defence checks on gomoku positions of one game (size and rule)."""

    def __init__(self, game: GomokuGame, *, patterns: PatternTable | None = None):
        if patterns is not None and patterns.rule != game.rule:
            raise ValueError(f"pattern table for {patterns.rule!r} used with rule {game.rule!r}")
        self.game = game
        self.patterns = patterns if patterns is not None else PatternTable(game.rule)
        self.tt: dict[int, tuple[tuple[int, ...] | None, int]] = {}
        self._board: GomokuSearchBoard | None = None
        self._nodes = 0
        self._limit = 0
        self._hint: frozenset[int] = frozenset()
        self.stop: Callable[[], bool] | None = None   # polled every _STOP_POLL nodes: True = give up
        self._ticks = 0       # nodes over all calls (the stop poll's clock)

    # -- public ---------------------------------------------------------------------------
    def board_for(self, state: GomokuState) -> GomokuSearchBoard:
        """The solver's own board, synced to `state` (cheap for nearby states)."""
        if state.game != self.game:
            raise ValueError(f"{state.game} is not this solver's {self.game}")
        if self._board is None:
            self._board = GomokuSearchBoard(self.game.width, self.game.height, self.game.rule,
                                            patterns=self.patterns)
        self._board.sync(state)
        return self._board

    def vcf(self, state: GomokuState, *, nodes: int = 20_000, max_plies: int = DEFAULT_VCF_PLIES,
            hint: Iterable[int] = ()) -> ThreatResult:
        """The side to move's VCF: the shortest proof (iterative deepening on the number of
        fours; a proof kept in the table from an earlier call may be longer)."""
        if state.outcome() is not None:
            return ThreatResult(None, 0, True)
        return self.vcf_on(self.board_for(state), nodes=nodes, max_plies=max_plies, hint=hint)

    def vcf_on(self, board: GomokuSearchBoard, *, nodes: int = 20_000,
               max_plies: int = DEFAULT_VCF_PLIES, hint: Iterable[int] = ()) -> ThreatResult:
        """vcf() on a caller's board (alpha-beta's), left as it was found."""
        self._start(nodes, hint)
        line = None
        try:
            for fours in range(1, (max_plies + 1) // 2 + 1):   # iterative deepening: the shortest proof
                line = self._vcf(board, fours)
                if line is not None:
                    break
        except _OutOfBudget:
            return ThreatResult(None, self._nodes, False)
        return ThreatResult(None if line is None else tuple(line), self._nodes, True)

    def defences(self, state: GomokuState, *, nodes: int = 50_000,
                 max_plies: int = DEFAULT_VCF_PLIES) -> Defence:
        """Does the opponent have a VCF if the side to move does nothing; which moves stop it."""
        if state.outcome() is not None:
            return Defence(None, None)
        return self.defences_on(self.board_for(state), nodes=nodes, max_plies=max_plies)

    def defences_on(self, board: GomokuSearchBoard, *, nodes: int = 50_000,
                    max_plies: int = DEFAULT_VCF_PLIES) -> Defence:
        me = board.to_play
        board.pass_turn()
        try:
            threat = self.vcf_on(board, nodes=nodes, max_plies=max_plies)
        finally:
            board.unpass()
        spent = threat.nodes
        if threat.line is None:
            return Defence(None, None, nodes=spent, complete=threat.complete)
        candidates = self._disturbing_cells(board, threat.line, me)
        line = threat.line
        losing, refutations, spent, complete = self._replies(
            board, board.ranked(candidates), spent,
            lambda b, used: self.vcf_on(b, nodes=max(1, nodes - used), max_plies=max_plies, hint=line))
        return Defence(threat.line, frozenset(refutations), losing, frozenset(candidates), spent, complete)

    def _replies(self, board: GomokuSearchBoard, moves: Iterable[int], spent: int,
                 search: Callable[[GomokuSearchBoard, int], ThreatResult], enough: int | None = None
                 ) -> tuple[dict[int, tuple[int, ...]], list[int], int, bool]:
        """Play each of `moves` in turn and search the opponent's threat after it (search gets
        the board and the nodes spent so far): (losing: move -> the opponent's line, holding,
        nodes spent, complete over the holding ones).  With `enough`, stops once that many
        hold or the stop callback fires; without, every move is tried (a move left untried
        would read as lost)."""
        losing: dict[int, tuple[int, ...]] = {}
        holding: list[int] = []
        complete = True
        for move in moves:
            if enough is not None and (len(holding) >= enough or (self.stop is not None and self.stop())):
                break
            board.push(move)
            try:
                answer = search(board, spent)
            finally:
                board.pop()
            spent += answer.nodes
            if answer.line is not None:
                losing[move] = answer.line
            else:
                holding.append(move)
                complete = complete and answer.complete
        return losing, holding, spent, complete

    def vct(self, state: GomokuState, *, nodes: int = 50_000, max_threats: int = DEFAULT_VCT_THREATS,
            vcf_plies: int = DEFAULT_VCF_PLIES) -> ThreatResult:
        """The side to move's VCT: threes and fours; the main line of the proof (the
        defender's replies on it are the ones the search met first)."""
        if state.outcome() is not None:
            return ThreatResult(None, 0, True)
        return self._vct_now(self.board_for(state), nodes, max_threats, vcf_plies)

    def vct_losing_moves(self, state: GomokuState, moves: Iterable[int], *, nodes: int = 5_000,
                         enough: int = 4, max_threats: int = DEFAULT_VCT_THREATS,
                         deepen_to: int = 0) -> VctDefence:
        """The opponent's VCT if the side to move passed, and which of `moves` (tried in the
        order given, best first) still lose to an opponent VCT when played.  A stone of ours
        never helps the opponent, so without a threat no move loses to a VCT (within the
        limits); with one, moves are tried until `enough` of them hold (a VCT's defences
        are not one line's neighbourhood, so untried moves stay unknown).  Each call of
        the VCT search gets `nodes`.

        deepen_to: then, until the stop callback fires, the moves that hold are checked
        again with VCT_DEEPEN times the nodes, up to this many per search, and untried
        moves top the holders up to `enough` at that depth.  Measured on MCTS's lost 20x20
        games: the VCT that refuted the move played needed 2,000-20,000 nodes, where one
        fixed budget of 1,000 judged the move as holding."""
        if state.outcome() is not None:
            return VctDefence(None)
        board = self.board_for(state)
        board.pass_turn()
        try:
            threat = self._vct_now(board, nodes, max_threats)
        finally:
            board.unpass()
        if threat.line is None:
            return VctDefence(None, complete=threat.complete, nodes=threat.nodes)
        order = list(moves)
        losing, holding, spent, complete = self._replies(
            board, order, threat.nodes, self._vct_search(nodes, max_threats), enough)
        level = nodes
        while holding and level * VCT_DEEPEN <= deepen_to and not (self.stop is not None and self.stop()):
            level *= VCT_DEEPEN
            tried = set(losing) | set(holding)
            again = holding + [m for m in order if m not in tried]
            deeper, holding, spent, complete = self._replies(
                board, again, spent, self._vct_search(level, max_threats), enough)
            losing.update(deeper)
        return VctDefence(threat.line, losing, tuple(holding), spent, complete)

    def vct_after(self, state: GomokuState, move: int, *, nodes: int = 5_000,
                  max_threats: int = DEFAULT_VCT_THREATS) -> ThreatResult:
        """The opponent's VCT once the side to move has played `move` (one move's check, as
        vct_losing_moves makes for each move it tries)."""
        if state.outcome() is not None:
            return ThreatResult(None, 0, True)
        board = self.board_for(state)
        board.push(move)
        try:
            if board.terminal() is not None:
                return ThreatResult(None, 0, True)
            return self._vct_now(board, nodes, max_threats)
        finally:
            board.pop()

    def _vct_search(self, nodes: int, max_threats: int) -> Callable[[GomokuSearchBoard, int], ThreatResult]:
        """The side to move's VCT with a fixed budget, as _replies calls it."""
        return lambda board, _: self._vct_now(board, nodes, max_threats)

    def _vct_now(self, board: GomokuSearchBoard, nodes: int, max_threats: int,
                 vcf_plies: int = DEFAULT_VCF_PLIES) -> ThreatResult:
        """The side to move's VCT on `board` (left as it was found)."""
        self._start(nodes, ())
        try:
            line = self._vct(board, max_threats, (vcf_plies + 1) // 2)
        except _OutOfBudget:
            return ThreatResult(None, self._nodes, False)
        return ThreatResult(None if line is None else tuple(line), self._nodes, True)

    # -- VCF ------------------------------------------------------------------------------
    def _start(self, nodes: int, hint: Iterable[int]) -> None:
        self._nodes = 0
        self._limit = nodes
        self._hint = frozenset(hint)
        if len(self.tt) > _MAX_TT:
            self.tt.clear()

    def _count(self) -> None:
        self._nodes += 1
        self._ticks += 1
        if self._nodes > self._limit or (self.stop is not None and not self._ticks % _STOP_POLL
                                         and self.stop()):
            raise _OutOfBudget

    def _vcf(self, board: GomokuSearchBoard, fours: int) -> list[int] | None:
        """Attacker (the side to move) wins by at most `fours` moves that are fours, the last
        one a five: the proof line, else None."""
        a = board.to_play
        d = 1 - a
        if board.has_four(a):
            return [min(board.five_cells(a))]
        key = board.key() ^ _ATTACKER_SALT[a]   # type: ignore[operator]
        known = self.tt.get(key)
        if known is not None and (known[0] is not None or known[1] >= fours):
            return None if known[0] is None else list(known[0])
        if fours <= 1:
            return None
        self._count()
        if board.has_four(d):
            blocks = board.five_cells(d)
            moves = [b for b in blocks if len(blocks) == 1 and b in board.four_cells(a)]
        else:
            makers = board.four_cells(a)
            hinted = [m for m in makers if m in self._hint]
            moves = board.ranked(hinted) + board.ranked(makers.difference(hinted))
        for move in moves:
            board.push(move)
            try:
                fives = board.five_cells_at(move, a)
                if len(fives) >= 2:                     # open four or double four: unstoppable
                    reply, five = sorted(fives)[:2]
                    line: list[int] | None = [move, reply, five]
                elif fives:
                    reply = fives.pop()
                    self._count()
                    board.push(reply)
                    try:
                        rest = self._vcf(board, fours - 1)
                    finally:
                        board.pop()
                    line = None if rest is None else [move, reply] + rest
                else:
                    line = None
            finally:
                board.pop()
            if line is not None:
                self.tt[key] = (tuple(line), fours)
                return line
        self.tt[key] = (None, fours)
        return None

    def _disturbing_cells(self, board: GomokuSearchBoard, line: Iterable[int], defender: int) -> set[int]:
        """Every move of `defender` that might stop the VCF `line` (see the module docstring)."""
        cells = board.cells
        out = {c for c in line if not cells[c]}
        for c in line:
            out.update(n for n in board.line_neighbourhood(c) if not cells[n])
        out |= board.four_cells(defender)
        return out

    # -- VCT ------------------------------------------------------------------------------
    def _threat_moves(self, board: GomokuSearchBoard, a: int) -> list[int]:
        """The attacker's fours, then the moves that add an open three, best first."""
        fours = board.four_cells(a)
        threes = []
        before = board.open_three_count(a)
        for move in board.candidates - fours:
            board.push(move)
            if board.open_three_count(a) > before:
                threes.append(move)
            board.pop()
        return board.ranked(fours) + board.ranked(threes)

    def _vct(self, board: GomokuSearchBoard, threats: int, fours: int) -> list[int] | None:
        a = board.to_play
        d = 1 - a
        line = self._vcf(board, fours)
        if line is not None:
            return line
        if threats <= 0:
            return None
        key = board.key() ^ _ATTACKER_SALT[a] ^ _VCT_SALT   # type: ignore[operator]
        known = self.tt.get(key)
        if known is not None and (known[0] is not None or known[1] >= threats):
            return None if known[0] is None else list(known[0])
        self._count()
        if board.has_four(d):
            blocks = board.five_cells(d)
            moves = list(blocks) if len(blocks) == 1 else []
        else:
            moves = self._threat_moves(board, a)
        for move in moves:
            board.push(move)
            try:
                main = self._after_threat(board, move, a, threats, fours)
            finally:
                board.pop()
            if main is not None:
                self.tt[key] = (tuple(main), threats)
                return main
        self.tt[key] = (None, threats)
        return None

    def _after_threat(self, board: GomokuSearchBoard, move: int, a: int, threats: int,
                      fours: int) -> list[int] | None:
        """Attacker just played `move`: the main line if every defender reply loses, else None."""
        fives = board.five_cells_at(move, a)
        if len(fives) >= 2 and not board.has_four(1 - a):
            reply, five = sorted(fives)[:2]
            return [move, reply, five]
        if fives:
            replies = [fives.pop()]
        else:
            board.pass_turn()                       # is it a threat: a VCF if the defender passes?
            try:
                threat = self._vcf(board, fours)
            finally:
                board.unpass()
            if threat is None:
                return None
            replies = board.ranked(self._disturbing_cells(board, threat, 1 - a))
        main: list[int] | None = None
        for reply in replies:
            self._count()
            board.push(reply)
            try:
                rest = self._vct(board, threats - 1, fours)
            finally:
                board.pop()
            if rest is None:
                return None
            if main is None:
                main = [move, reply] + rest
        return main


class TreeProver:
    """The threat solver inside MCTS: proven wins and losses become exact node values.

    A new leaf at most LEAF_MAX_DEPTH plies below the root whose side to move can make fours
    on LEAF_FOUR_LINES lines and has a VCF within `leaf_nodes` is solved as a win (the
    solver's board is synced to each leaf it looks at: a few line updates even without a
    VCF, about as much as one network evaluation; hence the depth limit); at the
    root (budget `root_nodes`) a VCF is proven on the child it starts with, and when the
    opponent has a VCF every root move that does not stop it is proven lost.  With neither
    (and `vct_nodes`): the root's VCT is proven the same way, else the root moves, by prior,
    after which the opponent has a VCT are proven lost.  While that opponent may still have a VCT,
    a timed search keeps time back (verify_reserve) to check the move it chose (verify_choice).
    Other games' states are left alone.
    One solver per game (size and rule), kept across searches.
    """

    def __init__(self, leaf_nodes: int, root_nodes: int, vct_nodes: int = 0, vct_share: float = 0.3):
        self.leaf_nodes, self.root_nodes, self.vct_nodes = leaf_nodes, root_nodes, vct_nodes
        self.vct_share = vct_share     # of the time left, at most, for the root's VCT checks
        self._solvers: dict[GomokuGame, ThreatSolver] = {}
        self._root_ply: int | None = None   # the last root's ply (lockstep trees: about the same)
        # Roots (by id) whose opponent may have a VCT: one was found on a pass, the check did not
        # finish, or the moves that stop the opponent's VCF were not checked against VCTs.
        self._vct_doubt: set[int] = set()

    def _solver(self, state) -> ThreatSolver | None:
        game = state.game
        if not isinstance(game, GomokuGame) or state.outcome() is not None:
            return None
        solver = self._solvers.get(game)
        if solver is None:
            solver = self._solvers[game] = ThreatSolver(game)
        return solver

    def prove_leaf(self, node) -> None:
        """A freshly expanded node: solved = +1 when its side to move has a VCF."""
        solver = self._solver(node.state) if node.solved is None else None
        if solver is None or self.leaf_nodes <= 0:
            return
        if self._root_ply is not None and node.state.ply - self._root_ply > LEAF_MAX_DEPTH:
            return
        board = solver.board_for(node.state)
        if board.four_lines(board.to_play) < LEAF_FOUR_LINES:
            return                                   # too few fours to start a VCF worth the time
        proof = solver.vcf_on(board, nodes=self.leaf_nodes).line
        if proof is not None:
            node.solved, node.solved_plies = 1.0, len(proof)

    def prove_root(self, root, stopper: Stopper | None = None) -> None:
        """An expanded root: prove its winning child, or the children that lose to a VCF.
        Takes at most ROOT_TIME_SHARE of the time `stopper` has left."""
        self._vct_doubt.discard(id(root))
        if root.solved is not None and root.moves:
            if root.proven is not None and (root.solved <= 0 or (root.proven > 0).any()):
                return                    # proven through its children: the move is known
            root.solved = None            # a leaf's VCF (no move kept): prove it again here
        self._root_ply = root.state.ply
        solver = self._solver(root.state) if root.moves else None
        if solver is None or self.root_nodes <= 0:
            return
        state = root.state
        solver.stop = time_cap(stopper, ROOT_TIME_SHARE)
        try:
            win = solver.vcf(state, nodes=self.root_nodes).line
            defence = None if win is not None else solver.defences(state, nodes=self.root_nodes)
        finally:
            solver.stop = None
        results: dict[int, tuple[float, int]] = {}   # move -> (child's value for its mover, plies)
        if win is not None:
            results[win[0]] = (-1.0, len(win) - 1)
        elif defence is not None and defence.refutations is not None:
            for move in root.moves:
                line = defence.loses(move)
                if line is not None:
                    results[move] = (1.0, len(line))
            self._vct_doubt.add(id(root))           # the moves that stop its VCF may lose to a VCT
        elif self.vct_nodes > 0:
            results = self._vct_results(solver, root, stopper)
        for a, move in enumerate(root.moves):
            if move in results:
                _prove(root, a, *results[move])

    def verify_reserve(self, roots: Sequence, stopper: Stopper | None) -> float:
        """Seconds a timed search keeps back for verify_choice: VERIFY_SHARE of the time left,
        when some root's opponent may have a VCT (see _vct_doubt).  A VCT check that finished finding none on a pass clears every move:
        a stone of ours never helps the opponent."""
        self._vct_doubt &= {id(root) for root in roots}     # roots of earlier searches are gone
        if self.vct_nodes <= 0 or stopper is None or not stopper.timed:
            return 0.0
        if not any(id(root) in self._vct_doubt for root in roots):
            return 0.0
        return max(0.0, stopper.time_left() or 0.0) * VERIFY_SHARE

    def verify_choice(self, root, choose: Callable[[], int], stopper: Stopper | None) -> None:
        """After the search: is the move it chose (choose() -> root index) refuted by the
        opponent's VCT?  Checked with vct_nodes, then 4x as many while time lasts, up to
        VERIFY_MAX_NODES; a refuted move is proven lost and the next choice is checked.
        Why: the root checks before the search try moves by prior with a small budget, and
        measured on MCTS's lost games the VCT that beat the move it played needed
        1,000-20,000 nodes, or the move had not been tried at all."""
        solver = self._solver(root.state) if root.moves and root.solved is None else None
        if solver is None or self.vct_nodes <= 0 or id(root) not in self._vct_doubt:
            return
        solver.stop = time_cap(stopper, 1.0)
        held: dict[int, int] = {}        # root index -> the largest budget it held at
        try:
            while not (solver.stop is not None and solver.stop()):
                a = choose()
                if root.proven is not None and not math.isnan(root.proven[a]):
                    return                        # a proven win, or every move proven lost
                nodes = held[a] * VCT_DEEPEN if a in held else self.vct_nodes
                if nodes > VERIFY_MAX_NODES:
                    return
                result = solver.vct_after(root.state, root.moves[a], nodes=nodes)
                if result.line is not None:
                    _prove(root, a, 1.0, len(result.line))
                elif result.complete:
                    return                        # no VCT within the threat limit: more nodes find none
                else:
                    held[a] = nodes
        finally:
            solver.stop = None

    def _vct_results(self, solver: ThreatSolver, root, stopper: Stopper | None) -> dict[int, tuple[float, int]]:
        """No VCF either way: the root's VCT (its first move proven won), else the root moves
        that walk into the opponent's VCT, tried by prior until VCT_ENOUGH hold (proven lost).
        Measured: every loss of MCTS to alpha-beta in a 20-game 15x15 match began with a
        move after which the opponent had a VCT.  Takes at most `vct_share` of the time left;
        in a timed search the holding moves are checked deeper while that lasts."""
        state = root.state
        prior = root.raw_prior if root.raw_prior is not None else root.prior
        by_prior = [root.moves[a] for a in sorted(range(len(root.moves)), key=lambda a: -float(prior[a]))]
        solver.stop = time_cap(stopper, self.vct_share)
        try:
            own = solver.vct(state, nodes=self.vct_nodes)
            if own.line is not None:
                return {own.line[0]: (-1.0, len(own.line) - 1)}
            timed = stopper is not None and stopper.time_left() is not None   # else nothing stops deepening
            check = solver.vct_losing_moves(state, by_prior, nodes=self.vct_nodes, enough=VCT_ENOUGH,
                                            deepen_to=self.vct_nodes * VCT_DEEPEN ** VCT_DEEPEN_LEVELS if timed else 0)
        finally:
            solver.stop = None
        if check.threat is not None or not check.complete:
            self._vct_doubt.add(id(root))
        return {move: (1.0, len(line)) for move, line in check.losing.items()}


def _prove(root, a: int, value: float, plies: int) -> None:
    """Root child a's exact result: `value` for the side to move at the child, `plies` to it."""
    from engine.search.tree import Node

    child = root.children.get(a)
    if child is None:
        child = root.children[a] = Node(root.state.play(root.moves[a]))
    if child.solved is None:
        child.solved, child.solved_plies = value, plies
    root.prove_child(a, child)
