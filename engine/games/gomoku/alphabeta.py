"""Gomoku side of the alpha-beta SearchBoard contract (engine/search/ab_board.py).

A private, mutable board: a flat bytearray (cell = y * width + x, as GomokuState),
each board line read as one `bytes` slice and looked up in a PatternTable cache, so a
push re-reads only the four lines through the changed cell and adjusts running sums.
Candidates are empty cells within two of a stone (kept in a set by neighbour counts).

Forcing, in ordered_moves (the same order as a player would think):
  1. the side to move can complete five -> only that move;
  2. the opponent has a four            -> only the cell(s) that block it;
  3. the opponent has an open three     -> own four-making moves and the cells that
     defend the three (any other move lets an open four through);
  4. otherwise candidates ranked by attack + defence value, best `max_candidates`.
Under renju black's forbidden points are left out of every list (engine/games/gomoku/renju.py), and
the patterns read black's fives as exactly five, white's as five or more.

With a threat solver (engine/games/gomoku/threats.py, `board_maker(threat_nodes=n,
root_threat_nodes=r)`):
  - root_plan(): before the search (within r nodes and ROOT_THREAT_TIME_SHARE of the time
    left), a VCF of the side to move is played at once, and when the opponent has a VCF
    the root is restricted to the moves that stop it;
  - evaluate(): a leaf whose side to move can make fours on LEAF_VCF_LINES lines and has
    a VCF found within `threat_nodes` scores as won (WIN_SOON less the proof's length).
"""
from __future__ import annotations

from operator import itemgetter
from typing import TYPE_CHECKING, Callable, Hashable, Iterable, Sequence

import numpy as np

from engine.games.gomoku import GomokuGame, GomokuState, zobrist_code
from engine.games.gomoku.renju import forbidden_points
from engine.search.ab_board import TERMINAL_DRAW, TERMINAL_LOSS, TERMINAL_WIN, NoTactics
from engine.search.limits import Stopper
from engine.games.gomoku.patterns import (
    BALANCE, DEFENCES, FIVES, FOUR, FOUR_MAKERS, MADE_FIVE, OPEN_THREES, ORDER, PATTERN_SCORES, THREE,
    LineInfo, PatternTable)
from engine.types import Move

if TYPE_CHECKING:
    from engine.games.gomoku.threats import ThreatSolver

__all__ = ["GomokuSearchBoard", "board_maker", "DEFAULT_MAX_CANDIDATES", "WIN_SOON"]

DEFAULT_MAX_CANDIDATES = 16
WIN_SOON = 50_000      # static score of a won-by-force position (below MATE_BOUND)
TEMPO = 30             # the side to move gets to play first
SPENT_FOUR = PATTERN_SCORES[FOUR] - PATTERN_SCORES[THREE]  # a four about to be blocked
_FORCED = 1_000_000    # ordering score of a forced move
LEAF_VCF_LINES = 2        # a leaf is tried for a VCF when its mover can make fours on this many lines
ROOT_THREAT_TIME_SHARE = 0.15  # of the time left, for the root's threat checks
_SECOND = itemgetter(1)


def _lines(width: int, height: int) -> list[list[int]]:
    """Every row, column and diagonal as cell lists (diagonals shorter than five too, so
    every cell lies on exactly four lines; their patterns are simply empty)."""
    lines: list[list[int]] = []
    for dx, dy in ((1, 0), (0, 1), (1, 1), (-1, 1)):  # all index steps positive
        for y in range(height):
            for x in range(width):
                px, py = x - dx, y - dy
                if 0 <= px < width and 0 <= py < height:
                    continue  # not the start of a line
                cells = []
                cx, cy = x, y
                while 0 <= cx < width and 0 <= cy < height:
                    cells.append(cy * width + cx)
                    cx, cy = cx + dx, cy + dy
                lines.append(cells)
    return lines


class GomokuSearchBoard(NoTactics):
    """Mutable gomoku position for one search; scores from the side to move.

    `patterns` carries the pattern caches; pass the same PatternTable to every board
    of one player (see `board_maker`) so the caches outlive a single search.
    """

    def __init__(self, width: int, height: int, rule: str, *, patterns: PatternTable | None = None,
                 max_candidates: int = DEFAULT_MAX_CANDIDATES):
        if patterns is not None and patterns.rule != rule:
            raise ValueError(f"pattern table for {patterns.rule!r} used with rule {rule!r}")
        self.width, self.height, self.rule = width, height, rule
        self.patterns = patterns if patterns is not None else PatternTable(rule)
        self._fouls = rule == "renju"            # black's forbidden points are never searched
        self._rays = GomokuGame(width, height, rule)._rays() if self._fouls else []
        self.max_candidates = max_candidates
        n = width * height
        self.cells = bytearray(n)
        lines = _lines(width, height)
        # line id -> slice of self.cells and -> its cells; cell -> (line, offset) x 4, flat
        self._slices = [(cells[0], cells[-1] + 1, cells[1] - cells[0] if len(cells) > 1 else 1)
                        for cells in lines]
        self._line_cells = lines
        on_lines: list[list[int]] = [[] for _ in range(n)]
        for lid, cells in enumerate(lines):
            for off, cell in enumerate(cells):
                on_lines[cell] += (lid, off)
        self._cell_lines = [tuple(pairs) for pairs in on_lines]
        self._line_ids = [tuple(pairs[0::2]) for pairs in on_lines]
        self._neighbours = [tuple(
            (y + k * dy) * width + x + k * dx
            for dx, dy in ((1, 0), (0, 1), (1, 1), (-1, 1)) for k in (-2, -1, 1, 2)
            if 0 <= x + k * dx < width and 0 <= y + k * dy < height)
            for y in range(height) for x in range(width)]
        self._zobrist = (tuple(zobrist_code(1, i % width, i // width) for i in range(n)),
                         tuple(zobrist_code(2, i % width, i // width) for i in range(n)))
        self._near = [0] * n
        self.candidates: set[int] = set()
        self._infos: list[LineInfo] = [self.patterns.line(bytes(len(c))) for c in lines]
        self._orders = ([info[ORDER] for info in self._infos], [info[ORDER + 1] for info in self._infos])
        self._balance = 0       # pattern score of the first player minus the second's
        self._fours = [0, 0]    # lines where the colour has a cell completing five
        self._makers = [0, 0]   # lines where the colour has a cell making a four
        self._threes = [0, 0]   # open threes of the colour
        self._key = 0
        self.ply = 0
        self._history: list[tuple[int, list[LineInfo], tuple[int, int, int, int, int, int, int]]] = []
        self._winner: int | None = None  # colour that has five (the last mover, in search)
        self.threats: ThreatSolver | None = None   # set by board_maker (a budget > 0)
        self.threat_nodes = 0        # per leaf; 0 = no leaf checks
        self.root_threat_nodes = 0   # before the search; 0 = no root plan

    @classmethod
    def from_state(cls, state: GomokuState, *, patterns: PatternTable | None = None,
                   max_candidates: int = DEFAULT_MAX_CANDIDATES) -> "GomokuSearchBoard":
        """A board holding `state`'s stones; its key() equals state.key()."""
        game = state.game
        board = cls(game.width, game.height, game.rule, patterns=patterns,
                    max_candidates=max_candidates)
        for cell, stone in enumerate(state.cells):
            if stone:
                board._place(cell, stone)
        board.ply = state.ply
        board._history.clear()
        outcome = state.outcome()
        board._winner = None if outcome is None else outcome.winner
        return board

    # -- SearchBoard ------------------------------------------------------------------------
    @property
    def to_play(self) -> int:
        return self.ply & 1

    def push(self, move: Move) -> None:
        self._place(move, (self.ply & 1) + 1)
        self.ply += 1

    def pop(self) -> None:
        move, old_infos, (self._balance, f0, f1, t0, t1, m0, m1) = self._history.pop()
        self._fours = [f0, f1]
        self._threes = [t0, t1]
        self._makers = [m0, m1]
        stone = self.cells[move]
        self.cells[move] = 0
        self.ply -= 1
        self._key ^= self._zobrist[stone - 1][move]
        infos, (orders0, orders1) = self._infos, self._orders
        for lid, info in zip(self._line_ids[move], old_infos):
            infos[lid] = info
            orders0[lid] = info[ORDER]
            orders1[lid] = info[ORDER + 1]
        self._winner = None
        near, cands = self._near, self.candidates
        for cell in self._neighbours[move]:
            near[cell] -= 1
            if not near[cell]:
                cands.discard(cell)
        if near[move]:
            cands.add(move)

    def key(self) -> Hashable:
        return self._key

    def terminal(self) -> int | None:
        if self._winner is not None:
            return TERMINAL_WIN if self._winner == self.ply & 1 else TERMINAL_LOSS
        if self.ply >= len(self.cells):
            return TERMINAL_DRAW
        return None

    def evaluate(self) -> int:
        me = self.ply & 1
        you = 1 - me
        if self._fours[me]:
            return WIN_SOON                       # five next move
        if self._fours[you] and len(self.five_cells(you)) >= 2:
            return -WIN_SOON                      # two fives to stop, none of ours
        if self._threes[me] and not self._fours[you]:
            return WIN_SOON // 2                  # open four next, nothing forcing back
        if self.threat_nodes and self.threats is not None and self._makers[me] >= LEAF_VCF_LINES:
            proof = self.threats.vcf_on(self, nodes=self.threat_nodes).line
            if proof is not None:
                return WIN_SOON - len(proof)      # won by force: sooner is better
        score = (self._balance if me == 0 else -self._balance) + TEMPO
        if self._fours[you]:
            # Their (single) four is blocked next move: count it as spent, not as 1000 for them,
            # or the horizon rewards throwing fours away.
            score += self._fours[you] * SPENT_FOUR
        return score

    def ordered_moves(self) -> Sequence[tuple[Move, int]]:
        moves = self._ordered_moves()
        if not self._fouls or self.ply & 1:
            return moves
        # Renju, black to move: never a forbidden point (all of them at once: compiled, they
        # cost less than a few cells' checks in Python).
        forbidden = set(forbidden_points(self.cells, self.width, self.height, self._rays))
        allowed = [(m, v) for m, v in moves if m not in forbidden]
        if allowed or not moves:
            return allowed
        # Every move the order offers is forbidden (the only block of a four, say): any
        # other move then, all of them lost.
        rest = [m for m in sorted(self.candidates) if m not in forbidden]
        return [(m, 0) for m in rest[:self.max_candidates]] or moves

    def _ordered_moves(self) -> Sequence[tuple[Move, int]]:
        me = self.ply & 1
        you = 1 - me
        if self._winner is not None or self.ply >= len(self.cells):
            return []
        if self._fours[me]:
            return [(min(self.five_cells(me)), _FORCED)]
        if self._fours[you]:
            return [(cell, _FORCED) for cell in sorted(self.five_cells(you))]
        if not self.candidates:
            if self.ply:  # no stone near an empty cell cannot happen with stones; be safe
                return [(cell, 0) for cell in range(len(self.cells)) if not self.cells[cell]]
            return [((self.height // 2) * self.width + self.width // 2, 0)]
        if self._threes[you]:
            moves = self._cells_of(FOUR_MAKERS + me) | self._cells_of(DEFENCES + you)
            return sorted(self._scored(sorted(moves)), key=_SECOND, reverse=True)
        # sorted cells first: ties break the same way however the position was reached
        scored = sorted(self._scored(sorted(self.candidates)), key=_SECOND, reverse=True)
        return scored[:self.max_candidates]

    def root_plan(self, stopper: Stopper | None = None
                  ) -> tuple[tuple[Move, ...] | None, Sequence[Move] | None]:
        """Alpha-beta's optional root hook: (a proven winning line, else None; the moves that
        avoid a proven loss when the opponent has a VCF, else None = no restriction).
        Takes at most ROOT_THREAT_TIME_SHARE of the time `stopper` has left."""
        threats, budget = self.threats, self.root_threat_nodes
        if threats is None or not budget or self._winner is not None:
            return None, None
        from engine.games.gomoku.threats import time_cap
        threats.stop = time_cap(stopper, ROOT_THREAT_TIME_SHARE)
        try:
            win = threats.vcf_on(self, nodes=budget)
            if win.line is not None:
                return win.line, None
            defence = threats.defences_on(self, nodes=budget)
        finally:
            threats.stop = None
        if defence.refutations:
            return None, self.ranked(defence.refutations)
        return None, None

    def native_tree(self, memory: dict, hash_mb: int):
        """Alpha-beta's optional hook: the compiled tree below the root (freestyle and
        standard, when built; engine/games/gomoku/native_search.py), else None."""
        from engine.games.gomoku.native_search import NativeTree, available
        if self._winner is not None or not available(self.rule):
            return None
        return NativeTree(self, memory, hash_mb)

    # -- threat queries (engine/games/gomoku/threats.py) -------------------------------------------
    def four_lines(self, colour: int) -> int:
        """On how many lines can `colour` make a four (or open four) with one stone?"""
        return self._makers[colour]

    def has_four(self, colour: int) -> bool:
        """Does `colour` (0 first player, 1 second) have a cell that completes five?"""
        return self._fours[colour] > 0

    def five_cells(self, colour: int) -> set[int]:
        """Every empty cell where `colour` completes five (under the board's rule)."""
        return self._cells_of(FIVES + colour)

    def five_cells_at(self, move: int, colour: int) -> set[int]:
        """The cells where `colour` completes five on the four lines through `move` (after a
        stone on `move`, the only lines whose five cells can have changed)."""
        return self._cells_of(FIVES + colour, self._line_ids[move])

    def four_cells(self, colour: int) -> set[int]:
        """Every empty cell where a `colour` stone makes a four or an open four."""
        return self._cells_of(FOUR_MAKERS + colour)

    def open_three_count(self, colour: int) -> int:
        return self._threes[colour]

    def three_defences(self, colour: int) -> set[int]:
        """Cells whose stone leaves `colour` with less than each open three it has."""
        return self._cells_of(DEFENCES + colour)

    def ranked(self, moves: Iterable[int]) -> list[int]:
        """`moves` best first by the board's static ordering value for the side to move."""
        return [cell for cell, _ in sorted(self._scored(sorted(moves)), key=_SECOND, reverse=True)]

    def line_neighbourhood(self, cell: int, reach: int = 4) -> list[int]:
        """Cells on the four lines through `cell` within `reach` of it (itself excluded)."""
        out = []
        for lid, off in zip(self._cell_lines[cell][0::2], self._cell_lines[cell][1::2]):
            cells = self._line_cells[lid]
            out.extend(cells[max(0, off - reach):off] + cells[off + 1:off + 1 + reach])
        return out

    def pass_turn(self) -> None:
        """The side to move passes (threat analysis: 'what if I did nothing'); undo with unpass."""
        self.ply += 1

    def unpass(self) -> None:
        self.ply -= 1

    def sync(self, state: GomokuState) -> None:
        """Make this board hold `state` by taking back and placing only the stones that
        differ (cheap between nearby states, as MCTS leaves are); the move history before
        the sync is the order stones were placed in, not the game's."""
        cells, target = self.cells, state.cells
        if len(target) != len(cells):
            raise ValueError("state of another board size")
        history = self._history
        keep = next((i for i, (m, _, _) in enumerate(history) if cells[m] != target[m]), len(history))
        while len(history) > keep:
            self.pop()      # steps the ply back too; the ply is set from the state below
        differ = np.flatnonzero(np.frombuffer(cells, dtype=np.uint8) != np.frombuffer(target, dtype=np.uint8))
        for cell in differ.tolist():
            if cells[cell]:
                raise ValueError("sync: a stone to remove was placed before the board's history")
            self._place(cell, target[cell])
        self.ply = state.ply
        outcome = state.outcome()
        self._winner = None if outcome is None else outcome.winner

    # -- helpers ----------------------------------------------------------------------------
    def _place(self, move: int, stone: int) -> None:
        cells = self.cells
        if not 0 <= move < len(cells) or cells[move]:
            raise ValueError(f"cell {move} is off the board or occupied")
        cells[move] = stone
        self._key ^= self._zobrist[stone - 1][move]
        balance, (f0, f1), (t0, t1), (m0, m1) = self._balance, self._fours, self._threes, self._makers
        self._history.append((move, [self._infos[lid] for lid in self._line_ids[move]],
                              (balance, f0, f1, t0, t1, m0, m1)))
        line, slices, infos, (orders0, orders1) = self.patterns.line, self._slices, self._infos, self._orders
        made = MADE_FIVE + stone - 1
        for lid in self._line_ids[move]:
            start, stop, step = slices[lid]
            info = line(bytes(cells[start:stop:step]))
            old = infos[lid]
            infos[lid] = info
            orders0[lid] = info[ORDER]
            orders1[lid] = info[ORDER + 1]
            balance += info[BALANCE] - old[BALANCE]
            f0 += (not old[FIVES]) - (not info[FIVES])
            f1 += (not old[FIVES + 1]) - (not info[FIVES + 1])
            t0 += info[OPEN_THREES] - old[OPEN_THREES]
            t1 += info[OPEN_THREES + 1] - old[OPEN_THREES + 1]
            m0 += (not old[FOUR_MAKERS]) - (not info[FOUR_MAKERS])
            m1 += (not old[FOUR_MAKERS + 1]) - (not info[FOUR_MAKERS + 1])
            if info[made]:
                self._winner = stone - 1
        self._balance = balance
        self._fours = [f0, f1]
        self._threes = [t0, t1]
        self._makers = [m0, m1]
        near, cands = self._near, self.candidates
        cands.discard(move)
        for cell in self._neighbours[move]:
            near[cell] += 1
            if not cells[cell]:
                cands.add(cell)

    def _scored(self, moves: Iterable[int]) -> list[tuple[int, int]]:
        """(cell, ordering value) summed over the cell's four lines for the side to move."""
        order, cell_lines = self._orders[self.ply & 1], self._cell_lines
        return [(cell, order[a][i] + order[b][j] + order[c][k] + order[d][m])
                for cell in moves for a, i, b, j, c, k, d, m in (cell_lines[cell],)]

    def _cells_of(self, field: int, line_ids: Iterable[int] | None = None) -> set[int]:
        """Board cells listed (as line offsets) in LineInfo `field` over all lines (or those given)."""
        out: set[int] = set()
        line_cells, infos = self._line_cells, self._infos
        for lid in range(len(infos)) if line_ids is None else line_ids:
            offsets = infos[lid][field]
            if offsets:
                cells = line_cells[lid]
                out.update(cells[off] for off in offsets)
        return out

    def __repr__(self) -> str:
        rows = ["".join(".XO"[self.cells[y * self.width + x]] for x in range(self.width))
                for y in range(self.height)]
        return "GomokuSearchBoard(\n" + "\n".join(rows) + "\n)"


def board_maker(game, *, max_candidates: int = DEFAULT_MAX_CANDIDATES, threat_nodes: int = 0,
                root_threat_nodes: int = 0) -> Callable[[GomokuState], GomokuSearchBoard]:
    """`state -> board` for one player: every board shares one PatternTable, so the
    pattern caches (a third of a short search when cold) survive from move to move, and
    with a threat budget one ThreatSolver (its table too, and its compiled board, synced
    to each board it is asked about): `threat_nodes` per leaf,
    `root_threat_nodes` before the search."""
    patterns = PatternTable(game.rule)
    threats = None
    if threat_nodes > 0 or root_threat_nodes > 0:
        from engine.games.gomoku.threats import ThreatSolver
        threats = ThreatSolver(game)

    def make(state: GomokuState) -> GomokuSearchBoard:
        board = GomokuSearchBoard.from_state(state, patterns=patterns, max_candidates=max_candidates)
        board.threats, board.threat_nodes, board.root_threat_nodes = threats, threat_nodes, root_threat_nodes
        return board
    return make
