"""Threat-space search for gomoku: VCF, the defence check, and a budgeted VCT.

VCF (victory by continuous fours) for the side to move: every attacking move makes a
four, so the defender's reply is forced (the one cell that completes the five).  The
defender cannot answer with a five of his own (the attacker never plays a four while the
defender has one); when his forced block makes a four of his own, the attacker must
block it, and only a block that is itself a four continues the VCF.  An open four or a
double four (two five cells) wins at once.  The proof is a single line: attacker,
forced reply, ..., the attacker's five.  Both rules come from the cell patterns of
threat_kernel.py, so "standard" (exactly five) fours are real fours and overlines never count.

The defence check: the opponent's VCF if the side to move passed, and the moves that
stop it.  Every move that can stop a VCF line L occupies a cell on one of the four
lines within four cells of a cell of L (so it touches a four's window, a forced
reply's lines -- a counter-four -- or the last double threat), or makes a four of its
own; each such candidate is checked by a VCF search, every other move leaves L intact.

VCT (continuous threes and fours): attacking moves are fours and open threes (a three
counts when the attacker would then have a VCF); against a three the defender may play
any candidate cell above, each answered recursively.  It is exact within its limits
but costly, so it deepens on the number of threats (1, 2, ... `max_threats`), as VCF
deepens on fours: the short proofs come first and a budget spent on a search that allows
many threats from the start is not lost in its widest lines.  Each search first allows only
dependent threes after its first threat (on a line within reach of an earlier threat's
stone: the threats that build on each other, as in Allis's threat-space search), and only
when that left a three out and found nothing, every three with the nodes left; a proof
either way is a proof, and "none" needs the full search.  An unfinished VCT says
"not found", never "none".

Under renju the patterns give black exactly five and white five or more, and black's
attacking moves skip every cell that might be a foul (threat_kernel.c, may_foul: every foul
and about 1 % of the legal cells), so both colours' VCFs and VCTs are proofs; only a white
VCF that wins because black's block might be a foul is replayed under the rules (line_holds).
Under caro (a five blocked at both ends does not win, which the patterns cannot see) every VCF
is replayed, and a line holds only where each of the defender's replies is his only stop: a
stone at the far end of a five-to-be already blocked at one end stops it too (stopping_cells).
No VCT is searched there.

Budgets are node counts (attacker and defender stones placed); a result says whether the
search finished.  A transposition table (Zobrist key + attacker) keeps proofs and
depth-bounded failures across calls; keep one ThreatSolver per player (not thread-safe).
The searches run in C (engine/games/gomoku/threat_kernel.c, loaded by threat_kernel.py): a few us
per node against about 57 in the Python solver they replace, measured on the VCTs that beat
MCTS (benchmarks/gomoku_fatal_moves.py's positions); this module is their Python API.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import partial
from typing import Callable, Iterable, Sequence

import numpy as np

from engine.games.gomoku import GomokuGame, GomokuState
from engine.games.gomoku.alphabeta import GomokuSearchBoard
from engine.search.limits import Stopper
from engine.games.gomoku.renju import foul
from engine.games.gomoku.threat_kernel import MAX_FOURS, MAX_THREATS, PATTERN_RULES, KernelBoard

__all__ = ["ThreatSolver", "ThreatResult", "Defence", "VctDefence", "TreeProver", "time_cap",
           "DEFAULT_VCF_PLIES", "DEFAULT_VCT_THREATS"]

DEFAULT_VCF_PLIES = 41        # up to 20 fours, then the five
DEFAULT_VCT_THREATS = 8       # attacking threes/fours in a VCT (deepened to; see above)
LEAF_FOUR_MAKERS = 2          # MCTS leaves are tried when the mover can make this many fours (cell, line)
LEAF_MAX_DEPTH = 40           # ... and lie at most this many plies below the root (by match at 1 s: 12 over 4, 40 over 12)
ROOT_TIME_SHARE = 0.15        # of the time left, for the threat checks before a search
VCT_ENOUGH = 4                # root moves that hold against the opponent's VCT before checks stop
VCT_DEEPEN = 4                # ... then those are checked again with this many times the nodes
VCT_DEEPEN_LEVELS = 2         # ... at most this many times (1,000 -> 4,000 -> 16,000 nodes)
OWN_VCT_SHARE = 0.1           # of a timed search's time left: the root's own VCT, deepened ...
OWN_VCT_MAX_NODES = 256_000   # ... by VCT_DEEPEN up to this many nodes
VERIFY_SHARE = 0.3            # of a timed search's time left after the root checks: kept to check the chosen move
VERIFY_MAX_NODES = 256_000    # ... deepening its VCT check up to this many nodes


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


# A pessimistic cost per solver node: a time cap's node budget.  Measured (benchmarks/vct_speed.py,
# searches of 10k nodes or more): median 1.2 us on 15x15 and 2.0 us on 20x20, slowest 3.2 us; it
# was 20 us, which held the check of the chosen move (VERIFY_MAX_NODES) to a tenth of its time.
NODE_SECONDS = 5e-6


class _TimeCap:
    """A solver stop callback: the search's stop, or `share` of the time it had left spent.
    seconds_left() lets the solver cap a call's node budget, since a compiled search is not
    interrupted."""

    def __init__(self, stopper: Stopper, share: float):
        left = stopper.time_left()
        self._stopper = stopper
        self._give_up = stopper.elapsed() + (left * share if left is not None else float("inf"))

    def __call__(self) -> bool:
        return self._stopper.should_stop() or self._stopper.elapsed() > self._give_up

    def seconds_left(self) -> float:
        return self._give_up - self._stopper.elapsed()


def time_cap(stopper: Stopper | None, share: float) -> Callable[[], bool] | None:
    """A solver stop callback: the search's stop, or `share` of the time it had left spent."""
    return None if stopper is None else _TimeCap(stopper, share)


class ThreatSolver:
    """VCF/VCT/defence checks on gomoku positions of one game (size and rule).

    The searches run compiled (engine/games/gomoku/threat_kernel.py) on the solver's own board,
    synced to each position asked about (only the cells that differ change).  `stop`, when
    set, is polled between searches, and a time cap (time_cap) also bounds each search's
    nodes by the time left.  dependent_first: each VCT search tries the threats that build on
    its earlier ones first (threat_kernel.c, tk_vct); False searches every three from the start,
    as benchmarks compare."""

    def __init__(self, game: GomokuGame, dependent_first: bool = True):
        self.game = game
        self.dependent_first = dependent_first
        # Renju's fives are the kernel's (black exactly five, white five or more), and black's
        # attacks there skip every cell that might be a foul (threat_kernel.c, may_foul), so
        # both colours' proofs hold: white's only let black defend with more moves than he
        # may, black's never play a foul.  White's VCF also wins when black's only block
        # might be a foul: those lines are replayed under the rules (line_holds).  Caro is
        # searched as exactly-five and every VCF replayed under its rule; no VCT there.
        self.checked = game.rule not in PATTERN_RULES
        self.kernel = KernelBoard(game.width, game.height, game.rule if game.rule in PATTERN_RULES else "standard")
        self._hint = np.zeros(game.width * game.height, dtype=np.uint8)
        self._synced = bytes(game.width * game.height)
        self._pushed: dict[int, int] = {}    # stones the kernel holds beyond _synced (cell -> stone)
        self.stop: Callable[[], bool] | None = None

    # -- public ---------------------------------------------------------------------------
    def clear(self) -> None:
        """Forget the proofs and failures kept from earlier calls."""
        self.kernel.clear_table()

    def sync(self, cells: bytes | bytearray) -> None:
        """Put the solver's board on `cells` (a GomokuState's or a GomokuSearchBoard's); nothing
        to do when it holds them already (an MCTS leaf is counted, then searched)."""
        if len(cells) != self.game.width * self.game.height:
            raise ValueError("cells of another board size")
        snapshot = bytes(cells)
        if snapshot != self._synced:          # searches leave the board as they found it
            self.kernel.sync(snapshot)
            self._synced = snapshot

    def four_makers(self, state: GomokuState) -> int:
        """(cell, line) pairs where the side to move makes a four: 0 means no VCF to look for."""
        self.sync(state.cells)
        return self.kernel.makers(state.to_play)

    def fives(self, state: GomokuState, colour: int) -> list[int]:
        """The cells where `colour` wins at once: the C patterns' fives, each replayed under
        the game's rule where the patterns are exactly-five's (caro: a five blocked at both
        ends does not win; its wins are among these)."""
        self.sync(state.cells)
        return self._fives(bytearray(state.cells), colour)

    def _fives(self, board: bytearray, colour: int) -> list[int]:
        """fives() on the kernel's board as it stands (`board`: the same cells, for the rule)."""
        fives = self.kernel.five_cells(colour)
        if not self.checked or not fives:
            return fives
        out = []
        for cell in fives:
            board[cell] = colour + 1
            if self.game.makes_five(board, cell):
                out.append(cell)
            board[cell] = 0
        return out

    def ranked(self, state: GomokuState, moves: Iterable[int]) -> list[int]:
        """`moves` best first for the side to move (the solver's own move ordering)."""
        self.sync(state.cells)
        return self.kernel.rank(moves, state.to_play)

    def vcf(self, state: GomokuState, *, nodes: int = 20_000, max_plies: int = DEFAULT_VCF_PLIES,
            hint: Iterable[int] = ()) -> ThreatResult:
        """The side to move's VCF: the shortest proof (iterative deepening on the number of
        fours; a proof kept in the table from an earlier call may be longer)."""
        if state.outcome() is not None:
            return ThreatResult(None, 0, True)
        self.sync(state.cells)
        return self._vcf(state.to_play, nodes, max_plies, hint)

    def vcf_on(self, board: GomokuSearchBoard, *, nodes: int = 20_000,
               max_plies: int = DEFAULT_VCF_PLIES, hint: Iterable[int] = ()) -> ThreatResult:
        """vcf() on alpha-beta's board (its side to move; the board is only read)."""
        self.sync(board.cells)
        return self._vcf(board.to_play, nodes, max_plies, hint)

    def defences(self, state: GomokuState, *, nodes: int = 50_000,
                 max_plies: int = DEFAULT_VCF_PLIES) -> Defence:
        """Does the opponent have a VCF if the side to move does nothing; which moves stop it."""
        if state.outcome() is not None:
            return Defence(None, None)
        self.sync(state.cells)
        return self._defences(state.to_play, nodes, max_plies)

    def defences_on(self, board: GomokuSearchBoard, *, nodes: int = 50_000,
                    max_plies: int = DEFAULT_VCF_PLIES) -> Defence:
        """defences() on alpha-beta's board."""
        self.sync(board.cells)
        return self._defences(board.to_play, nodes, max_plies)

    def vct(self, state: GomokuState, *, nodes: int = 50_000, max_threats: int = DEFAULT_VCT_THREATS,
            vcf_plies: int = DEFAULT_VCF_PLIES) -> ThreatResult:
        """The side to move's VCT: threes and fours; the main line of the proof (the
        defender's replies on it are the ones the search met first)."""
        if state.outcome() is not None:
            return ThreatResult(None, 0, True)
        self.sync(state.cells)
        return self._vct(state.to_play, nodes, max_threats, vcf_plies)

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
        self.sync(state.cells)
        me = state.to_play
        threat = self._vct(1 - me, nodes, max_threats)
        if threat.line is None:
            return VctDefence(None, complete=threat.complete, nodes=threat.nodes)
        order = list(moves)
        losing, holding, spent, complete = self._replies(
            me, order, threat.nodes, partial(self._vct_fixed, 1 - me, nodes, max_threats), enough)
        level = nodes
        while holding and level * VCT_DEEPEN <= deepen_to and not self._stopped():
            level *= VCT_DEEPEN
            tried = set(losing) | set(holding)
            again = holding + [m for m in order if m not in tried]
            deeper, holding, spent, complete = self._replies(
                me, again, spent, partial(self._vct_fixed, 1 - me, level, max_threats), enough)
            losing.update(deeper)
        return VctDefence(threat.line, losing, tuple(holding), spent, complete)

    def vct_after(self, state: GomokuState, move: int, *, nodes: int = 5_000,
                  max_threats: int = DEFAULT_VCT_THREATS) -> ThreatResult:
        """The opponent's VCT once the side to move has played `move` (one move's check, as
        vct_losing_moves makes for each move it tries)."""
        if state.outcome() is not None:
            return ThreatResult(None, 0, True)
        self.sync(state.cells)
        me = state.to_play
        if self.kernel.makes_five(move, me):
            return ThreatResult(None, 0, True)
        self._push(move, me)
        try:
            return self._vct(1 - me, nodes, max_threats)
        finally:
            self._pop(move)

    # -- on the synced board ----------------------------------------------------------------
    def _stopped(self) -> bool:
        return self.stop is not None and self.stop()

    def _budget(self, nodes: int) -> int:
        """`nodes`, fewer when the time cap would run out first."""
        seconds_left = getattr(self.stop, "seconds_left", None)
        if seconds_left is None:
            return nodes
        return max(1, int(min(nodes, seconds_left() / NODE_SECONDS)))

    def _vcf(self, attacker: int, nodes: int, max_plies: int, hint: Iterable[int] = ()) -> ThreatResult:
        if self._stopped():
            return ThreatResult(None, 0, False)
        mask = None
        hinted = list(hint)
        if hinted:
            mask = self._hint
            mask[:] = 0
            mask[hinted] = 1
        foul_wins = self.game.fouls and attacker == 1
        result = ThreatResult(*self.kernel.vcf(attacker, self._budget(nodes), min((max_plies + 1) // 2, MAX_FOURS),
                                               mask, foul_wins))
        line = result.line
        if line is None:
            return result
        through_foul = len(line) % 2 == 0             # ends on a four whose block is black's foul
        if through_foul:
            line = self._through_foul(line)
        if (self.checked or through_foul) and not self._line_holds(attacker, line):
            return ThreatResult(None, result.nodes, False)   # the rule says no: not found
        return ThreatResult(line, result.nodes, result.complete)

    def _line_holds(self, attacker: int, line: Sequence[int]) -> bool:
        """line_holds() with the five cells read off the kernel's patterns (narrowed by the
        rule) as the line's stones go on, instead of a scan of every cell.  Why: under caro,
        where every VCF is replayed, the scans were over half of a search's time."""
        placed: list[int] = []

        def put(cell: int, colour: int) -> None:
            self._push(cell, colour)
            placed.append(cell)

        try:
            return line_holds(self.game, self._cells(), attacker, line, fives=self._fives, put=put)
        finally:
            for cell in reversed(placed):
                self._pop(cell)

    def _through_foul(self, line: tuple[int, ...]) -> tuple[int, ...]:
        """The kernel's line that ends on a four whose block is black's foul (attack, foul
        point) made a whole line: black moves elsewhere (its best-ranked allowed cell), then
        the five, so every line is a playable sequence ending in the five."""
        board = self._cells()
        for i, move in enumerate(line[:-1]):
            board[move] = 2 if i % 2 == 0 else 1        # white attacks, black blocks
        rays = self.game._rays()
        empties = [c for c, stone in enumerate(board) if not stone and c != line[-1]]
        reply = next((c for c in self.kernel.rank(empties, 0) if foul(board, rays, c) is None), empties[0])
        return (*line[:-1], reply, line[-1])

    def _cells(self) -> bytearray:
        """The cells the kernel is searching: the synced ones plus its pushed stones."""
        cells = bytearray(self._synced)
        for cell, stone in self._pushed.items():
            cells[cell] = stone
        return cells

    def _push(self, move: int, colour: int) -> None:
        self.kernel.push(move, colour)
        self._pushed[move] = colour + 1

    def _pop(self, move: int) -> None:
        self.kernel.pop(move)
        del self._pushed[move]

    def _vct(self, attacker: int, nodes: int, max_threats: int,
             vcf_plies: int = DEFAULT_VCF_PLIES) -> ThreatResult:
        if self._stopped() or self.checked:
            return ThreatResult(None, 0, False)
        return ThreatResult(*self.kernel.vct(attacker, self._budget(nodes), min(max_threats, MAX_THREATS),
                                             min((vcf_plies + 1) // 2, MAX_FOURS), self.dependent_first))

    def _vct_fixed(self, attacker: int, nodes: int, max_threats: int, _spent: int) -> ThreatResult:
        """_vct with a fixed budget, as _replies calls it."""
        return self._vct(attacker, nodes, max_threats)

    def _defences(self, me: int, nodes: int, max_plies: int) -> Defence:
        threat = self._vcf(1 - me, nodes, max_plies)
        spent = threat.nodes
        if threat.line is None:
            return Defence(None, None, nodes=spent, complete=threat.complete)
        line = threat.line
        candidates = self.kernel.disturbing(line, me)
        losing, refutations, spent, complete = self._replies(
            me, self.kernel.rank(candidates, me), spent,
            lambda used: self._vcf(1 - me, max(1, nodes - used), max_plies, hint=line))
        return Defence(line, frozenset(refutations), losing, frozenset(candidates), spent, complete)

    def _replies(self, me: int, moves: Iterable[int], spent: int, search: Callable[[int], ThreatResult],
                 enough: int | None = None) -> tuple[dict[int, tuple[int, ...]], list[int], int, bool]:
        """Play each of `moves` for `me` in turn and search the opponent's threat after it
        (search gets the nodes spent so far): (losing: move -> the opponent's line, holding,
        nodes spent, complete over the holding ones).  With `enough`, stops once that many
        hold or the stop callback fires; without, every move is tried (a move left untried
        would read as lost)."""
        losing: dict[int, tuple[int, ...]] = {}
        holding: list[int] = []
        complete = True
        for move in moves:
            if enough is not None and (len(holding) >= enough or self._stopped()):
                break
            self._push(move, me)
            try:
                answer = search(spent)
            finally:
                self._pop(move)
            spent += answer.nodes
            if answer.line is not None:
                losing[move] = answer.line
            else:
                holding.append(move)
                complete = complete and answer.complete
        return losing, holding, spent, complete


def winning_cells(game: GomokuGame, cells: bytearray, colour: int) -> list[int]:
    """The empty cells where `colour` (0 first, 1 second) wins at once under the game's rule
    (a five is never a forbidden point, so these are legal for either colour)."""
    stone = colour + 1
    rays = game._rays()
    out = []
    for cell, here in enumerate(cells):
        if here:
            continue
        if not any(sum(1 for c in forward[:4] if cells[c] == stone) + sum(1 for c in backward[:4] if cells[c] == stone)
                   >= 4 for forward, backward in rays[cell]):
            continue
        cells[cell] = stone
        if game.makes_five(cells, cell):
            out.append(cell)
        cells[cell] = 0
    return out


def stopping_cells(game: GomokuGame, board: bytearray, attacker: int, threats: Sequence[int]) -> list[int]:
    """The empty cells where one defender stone leaves `attacker` none of his fives at
    `threats` (his winning cells), in cell order.  Under caro that is the five's cell and,
    where the five-to-be is already blocked at one end, the cell at its other end."""
    rays = game._rays()
    near = {cell for t in threats for pair in rays[t] for ray in pair for cell in ray} | set(threats)
    stone, wall = attacker + 1, 2 - attacker
    out = []
    for cell in sorted(near):
        if board[cell]:
            continue
        board[cell] = wall
        alive = False
        for t in threats:
            if t != cell:
                board[t] = stone
                alive = game.makes_five(board, t)
                board[t] = 0
                if alive:
                    break
        board[cell] = 0
        if not alive:
            out.append(cell)
    return out


def line_holds(game: GomokuGame, cells: bytes | bytearray, attacker: int, line: Sequence[int], *,
               fives: Callable[[bytearray, int], list[int]] | None = None,
               put: Callable[[int, int], None] | None = None) -> bool:
    """Does a VCF line (attacker's four, the forced block, ..., the five) win under the
    game's own rule?  Each attacking move must be legal (under renju black's fours may not be
    forbidden points), threaten a five the rule counts (caro: not blocked at both ends) and
    block the defender's five when he has one; the defender's block must be the line's reply.
    A threat the defender cannot stop (two fives, or the only block a forbidden point for
    black) wins at once.  fives(board, colour): the colour's winning cells (default: every
    cell scanned, winning_cells), told of each stone the line puts on by put(cell, colour)."""
    board = bytearray(cells)
    defender = 1 - attacker
    renju, caro = game.rule == "renju", game.rule == "caro"
    fives = fives or partial(winning_cells, game)
    for i in range(0, len(line), 2):
        move = line[i]
        if board[move] or (renju and attacker == 0 and foul(board, game._rays(), move) is not None):
            return False
        board[move] = attacker + 1
        if game.makes_five(board, move):
            return True                          # a five, at the line's end or before it
        board[move] = 0
        if any(cell != move for cell in fives(board, defender)):
            return False                         # the defender's five comes first
        board[move] = attacker + 1
        if put is not None:
            put(move, attacker)
        threats = fives(board, attacker)
        if not threats or i + 1 >= len(line):
            return False
        blocks = [t for t in threats if not (renju and defender == 0 and foul(board, game._rays(), t) is not None)]
        if caro:
            # A five blocked at both ends does not win, so a stone at the far end of the
            # five-to-be also stops it: the line's block must be the only stop.
            stops = stopping_cells(game, board, attacker, threats)
            if not stops:
                return True                      # no one stone stops them all
            if len(threats) >= 2 or stops != threats:
                return False                     # not a forced reply: no proof
        elif len(threats) >= 2 or not blocks:
            return True
        if line[i + 1] != blocks[0]:
            return False
        board[blocks[0]] = defender + 1
        if put is not None:
            put(blocks[0], defender)
    return False


class TreeProver:
    """The threat solver inside MCTS: proven wins and losses become exact node values.

    A new leaf at most LEAF_MAX_DEPTH plies below the root whose side to move can make fours
    LEAF_FOUR_MAKERS fours and has a VCF within `leaf_nodes` is solved as a win (the
    solver's board is synced to each leaf it looks at, a few stones' updates even without
    a VCF, hence a depth limit, now past what a 1 s tree reaches: 12 plies beat 4 by 59.5/100
    at 1 s on 15x15, and 40 beat 12 by 56.5/100); at the
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
        if solver.four_makers(node.state) < LEAF_FOUR_MAKERS:
            return                                   # too few fours to start a VCF worth the time
        proof = solver.vcf(node.state, nodes=self.leaf_nodes).line
        if proof is not None:
            node.solved, node.solved_plies = 1.0, len(proof)

    def forced_move(self, node) -> int | None:
        """The block of the opponent's five when that is the node's only move that does not
        lose at once: its side to move has no five and the opponent exactly one five cell.
        Under renju a block on black's forbidden point is no move (every move loses: the
        search finds that out)."""
        solver = self._solver(node.state) if node.solved is None else None
        if solver is None:
            return None
        state = node.state
        if solver.fives(state, state.to_play):
            return None
        threats = solver.fives(state, 1 - state.to_play)
        if len(threats) != 1:
            return None
        game = state.game
        if game.fouls and state.to_play == 0 and foul(bytearray(state.cells), game._rays(), threats[0]) is not None:
            return None
        return threats[0]

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

    def verify_choice(self, root, choose: Callable[[], int], stopper: Stopper | None,
                      veto: Callable[[int], None] | None = None) -> None:
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

    def _own_vct(self, solver: ThreatSolver, state, stopper: Stopper | None) -> ThreatResult:
        """The side to move's VCT: vct_nodes, then in a timed search VCT_DEEPEN times as many
        while OWN_VCT_SHARE of the time left lasts, up to OWN_VCT_MAX_NODES.  Why: a forced win
        past the first budget is rare but decisive: 2 of the 56 games loop8 did not win against
        Rapfi had one that 64,000 nodes find, and one of them was not played
        (benchmarks/missed_vct.py)."""
        cap = solver.stop = time_cap(stopper, OWN_VCT_SHARE)
        nodes = self.vct_nodes
        own = solver.vct(state, nodes=nodes)
        while cap is not None and own.line is None and not own.complete and nodes < OWN_VCT_MAX_NODES and not cap():
            nodes *= VCT_DEEPEN
            own = solver.vct(state, nodes=nodes)
        return own

    def _vct_results(self, solver: ThreatSolver, root, stopper: Stopper | None) -> dict[int, tuple[float, int]]:
        """No VCF either way: the root's VCT (its first move proven won), else the root moves
        that walk into the opponent's VCT, tried by prior until VCT_ENOUGH hold (proven lost).
        Measured: every loss of MCTS to alpha-beta in a 20-game 15x15 match began with a
        move after which the opponent had a VCT.  Takes at most `vct_share` of the time left;
        in a timed search the holding moves are checked deeper while that lasts."""
        state = root.state
        prior = root.raw_prior if root.raw_prior is not None else root.prior
        by_prior = [root.moves[a] for a in sorted(range(len(root.moves)), key=lambda a: -float(prior[a]))]
        timed = stopper is not None and stopper.time_left() is not None   # else nothing stops deepening
        try:
            own = self._own_vct(solver, state, stopper if timed else None)
            if own.line is not None:
                return {own.line[0]: (-1.0, len(own.line) - 1)}
            solver.stop = time_cap(stopper, self.vct_share)
            check = solver.vct_losing_moves(state, by_prior, nodes=self.vct_nodes, enough=VCT_ENOUGH,
                                            deepen_to=self.vct_nodes * VCT_DEEPEN ** VCT_DEEPEN_LEVELS if timed else 0)
        finally:
            solver.stop = None
        if check.threat is not None or not check.complete:
            self._vct_doubt.add(id(root))
        return {move: (1.0, len(line)) for move, line in check.losing.items()}


def _prove(root, a: int, value: float, plies: int) -> None:
    """Root child a's exact result: `value` for the side to move at the child, `plies` to it."""
    child = root.children.get(a) or root.new_child(a)
    if child.solved is None:
        child.solved, child.solved_plies = value, plies
    root.prove_child(a, child)
