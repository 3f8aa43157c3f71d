"""Gomoku line patterns, classified exactly and cached per line content.

A board line (row, column or diagonal) is a `bytes` of cells: 0 empty, 1 first
player, 2 second player.  `PatternTable.line(content)` returns a `LineInfo` tuple
with everything the alpha-beta board needs about that line, for both colours:
pattern score, the cells that make five, open-three counts, per-cell ordering
values, four-making cells and the cells that defend an open three.

Patterns are defined by what one more stone can do, so they respect the rule by
construction ("standard": a five is exactly five, so a four that can only grow into
an overline is no four):
  five        five in a row now (standard: exactly five)
  open four   two or more cells make five (.XXXX., also X.XXX.X): cannot be stopped
  four        exactly one cell makes five (XXXX., X.XXX, XX.XX ...)
  open three  a move makes an open four;   three: a move makes a four
  open two    a move makes an open three;  two:   a move makes a three
For each colour a line splits at the opponent's stones into segments; segments
shorter than five are dead.  Stones in a segment join a group when at most four
empties separate them; each group with up to five empty cells either side is one
unit, classified once (memoised by content, so the recursion is paid once).
"""
from __future__ import annotations

from typing import Iterator

__all__ = [
    "PatternTable", "NONE", "TWO", "OPEN_TWO", "THREE", "OPEN_THREE", "FOUR", "OPEN_FOUR",
    "FIVE", "PATTERN_SCORES", "PATTERN_NAMES",
    "SCORE", "FIVES", "OPEN_THREES", "MADE_FIVE", "ORDER", "FOUR_MAKERS", "DEFENCES", "BALANCE",
]

NONE, TWO, OPEN_TWO, THREE, OPEN_THREE, FOUR, OPEN_FOUR, FIVE = range(8)
PATTERN_NAMES = ("none", "two", "open two", "three", "open three", "four", "open four", "five")
# The classic scores (five 100000, open four 10000, four 1000, open three 100, three 10,
# open two 8, two 2), kept as given: not tuned yet.
PATTERN_SCORES = (0, 2, 8, 10, 100, 1000, 10000, 100000)
# A unit whose best one-stone child is class k is itself class _DEMOTE[k]:
# a unit is an open three if some move makes an open four, and so on.
_DEMOTE = (NONE, NONE, NONE, TWO, OPEN_TWO, THREE, OPEN_THREE, NONE)

# LineInfo field offsets; fields for colour c (0 first player, 1 second) sit at base + c.
SCORE = 0         # int: sum of PATTERN_SCORES over the colour's units
FIVES = 2         # tuple of offsets where the colour completes five
OPEN_THREES = 4   # int: number of the colour's open threes
MADE_FIVE = 6     # bool: the colour has five on this line
ORDER = 8         # tuple per offset: move-ordering value when colour c is to move
FOUR_MAKERS = 10  # tuple of offsets where the colour makes a four or open four
DEFENCES = 12     # tuple of offsets whose stone kills the colour's open threes
BALANCE = 14      # int: SCORE of the first player minus SCORE of the second
LineInfo = tuple

# Move-ordering values of the pattern a stone creates, for the mover (attack) and
# for taking the cell from the opponent (defence); indexed by pattern class.
_ATTACK = (0, 20, 60, 80, 1500, 2000, 20000, 1_000_000)
_DEFEND = (0, 15, 45, 60, 1000, 1200, 15000, 500_000)
_PROXIMITY = 4    # per own stone within two cells on the line: a cheap "makes a two" signal
_MARGIN = 5       # empty cells kept each side of a group: a five spans four, overline needs five
_MAX_LINES = 50_000   # line-cache entries before it is dropped (~1.3 kB each: ~65 MB at most)
_MAX_UNITS = 200_000  # unit-class entries likewise (a few hundred bytes each)

# Line content -> one colour's view: own stones 1, everything else 0 (blockers are cut apart).
_OWN_AS_ONE = (bytes.maketrans(b"\x01\x02", b"\x01\x00"), bytes.maketrans(b"\x01\x02", b"\x00\x01"))


class PatternTable:
    """Classifies lines for one rule; holds the caches, so keep one per searcher.

    Not thread-safe (a dict per instance, used by one search at a time).
    """

    def __init__(self, rule: str = "freestyle"):
        self.rule = rule
        # Per colour (first, second): does only exactly five win?  Renju: black exactly,
        # white five or more.  Caro is read as exactly five (its blocked-at-both-ends fives,
        # which do not win, are left to the game's own rules).
        self._exact_for = {"freestyle": (False, False), "renju": (True, False)}.get(rule, (True, True))
        self._lines: dict[bytes, LineInfo] = {}
        # unit caches, one pair per exactness (shared by both colours when they agree)
        self._caches: dict[bool, tuple[dict[tuple[bytes, int], int], dict[bytes, tuple[int, ...]]]] = {
            exact: ({}, {}) for exact in set(self._exact_for)}
        self._view(0)
        self.misses = 0

    def _view(self, colour: int) -> None:
        """Classify units as `colour` wins (exactly five or five or more)."""
        self.exact = self._exact_for[colour]
        self._classes, self._fives = self._caches[self.exact]

    # -- public ---------------------------------------------------------------------------
    def line(self, content: bytes) -> LineInfo:
        """The LineInfo of a line's cells (cached; offsets index `content`)."""
        info = self._lines.get(content)
        if info is None:
            if len(self._lines) >= _MAX_LINES:
                self._lines.clear()
            info = self._lines[content] = self._analyse(content)
            self.misses += 1
        return info

    def classify(self, unit: bytes) -> int:
        """Pattern class of own stones (1) and empties (0) between two blockers."""
        return self._cls(unit, 2)

    # -- per unit -------------------------------------------------------------------------
    def five_cells(self, unit: bytes) -> tuple[int, ...]:
        """Empty cells of `unit` where one more stone completes five under the rule."""
        found = self._fives.get(unit)
        if found is not None:
            return found
        exact, n, out = self.exact, len(unit), []
        for e in range(n):
            if unit[e]:
                continue
            left = e - 1
            while left >= 0 and unit[left]:
                left -= 1
            right = e + 1
            while right < n and unit[right]:
                right += 1
            run = right - left - 1
            if run == 5 or (run > 5 and not exact):
                out.append(e)
        found = self._fives[unit] = tuple(out)
        return found

    def has_five(self, unit: bytes) -> bool:
        if self.exact:
            return any(len(run) == 5 for run in unit.split(b"\x00"))
        return b"\x01\x01\x01\x01\x01" in unit

    def _cls(self, unit: bytes, depth: int) -> int:
        """Class of `unit`, looking at most `depth` placements ahead (2 tells twos apart)."""
        key = (unit, depth)
        known = self._classes.get(key)
        if known is not None:
            return known
        if len(self._classes) >= _MAX_UNITS:
            self._classes.clear()
            self._fives.clear()
        if self.has_five(unit):
            result = FIVE
        else:
            fives = len(self.five_cells(unit))
            if fives:
                result = OPEN_FOUR if fives >= 2 else FOUR
            elif depth == 0:
                result = NONE
            else:
                best = NONE
                for e in _useful_cells(unit):
                    child = self._cls(unit[:e] + b"\x01" + unit[e + 1:], depth - 1)
                    if child > best:
                        best = child
                        if best == OPEN_FOUR:
                            break
                result = _DEMOTE[best]
        self._classes[key] = result
        return result

    def _units(self, segment: bytes) -> Iterator[tuple[int, bytes]]:
        """(start, unit) for each stone group of a live segment (own 1, empty 0)."""
        stones = [i for i, v in enumerate(segment) if v]
        if not stones:
            return
        n, first = len(segment), stones[0]
        for prev, nxt in zip(stones, stones[1:] + [n + _MARGIN + 1]):
            if nxt - prev > _MARGIN:
                start, stop = max(0, first - _MARGIN), min(n, prev + _MARGIN + 1)
                yield start, segment[start:stop]
                first = nxt

    def _segment_class(self, segment: bytes) -> int:
        """Best unit class of a segment piece (used to test defences)."""
        if len(segment) < 5:
            return NONE
        return max((self._cls(unit, 2) for _, unit in self._units(segment)), default=NONE)

    # -- per line -------------------------------------------------------------------------
    def _analyse(self, content: bytes) -> LineInfo:
        n = len(content)
        fields: list[list] = [[0, 0], [(), ()], [0, 0], [False, False], [None, None], [(), ()],
                              [(), ()]]
        levels = ([0] * n, [0] * n)   # packed per offset: class * 8 + proximity, per colour
        for colour in (0, 1):
            own = colour + 1
            self._view(colour)
            cells = content.translate(_OWN_AS_ONE[colour])
            score, threes, made = 0, 0, False
            fives: list[int] = []
            makers: list[int] = []
            defences: list[int] = []
            level = levels[colour]
            offset = 0
            for segment in _split_at(content, cells, 3 - own):
                if len(segment) >= 5:
                    for start, unit in self._units(segment):
                        base = offset + start
                        cls = self._cls(unit, 2)
                        score += PATTERN_SCORES[cls]
                        made = made or cls == FIVE
                        fives.extend(base + e for e in self.five_cells(unit))
                        if cls == OPEN_THREE:
                            threes += 1
                            defences.extend(base + e for e in self._defences(unit))
                        for e in _useful_cells(unit):
                            child = self._cls(unit[:e] + b"\x01" + unit[e + 1:], 1)
                            near = sum(unit[max(0, e - 2):e + 3])
                            packed = child * 8 + near
                            if packed > level[base + e]:
                                level[base + e] = packed
                            if child >= FOUR:
                                makers.append(base + e)
                offset += len(segment) + 1
            fields[0][colour] = score
            fields[1][colour] = tuple(sorted(set(fives)))
            fields[2][colour] = threes
            fields[3][colour] = made
            fields[5][colour] = tuple(sorted(set(makers)))
            fields[6][colour] = tuple(sorted(set(defences)))
        for mover in (0, 1):
            mine, theirs = levels[mover], levels[1 - mover]
            fields[4][mover] = tuple(
                _ATTACK[a >> 3] + _DEFEND[d >> 3] + _PROXIMITY * ((a & 7) + (d & 7))
                for a, d in zip(mine, theirs))
        return (fields[0][0], fields[0][1], fields[1][0], fields[1][1], fields[2][0], fields[2][1],
                fields[3][0], fields[3][1], fields[4][0], fields[4][1], fields[5][0], fields[5][1],
                fields[6][0], fields[6][1], fields[0][0] - fields[0][1])

    def _defences(self, unit: bytes) -> list[int]:
        """Empty cells of an open-three unit where an opponent stone leaves less than an open three."""
        out = []
        for e, v in enumerate(unit):
            if v:
                continue
            if max(self._segment_class(unit[:e]), self._segment_class(unit[e + 1:])) < OPEN_THREE:
                out.append(e)
        return out


def _split_at(content: bytes, cells: bytes, blocker: int) -> list[bytes]:
    """`cells` cut at the positions where `content` holds `blocker` (the separators dropped)."""
    if blocker not in content:
        return [cells]
    pieces, start = [], 0
    for i, v in enumerate(content):
        if v == blocker:
            pieces.append(cells[start:i])
            start = i + 1
    pieces.append(cells[start:])
    return pieces


def _useful_cells(unit: bytes) -> list[int]:
    """Empty cells sharing a five-window with a stone (no other cell can change the class)."""
    n = len(unit)
    return [e for e in range(n) if not unit[e] and 1 in unit[max(0, e - 4):e + 5]]
