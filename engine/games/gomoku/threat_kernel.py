"""The gomoku threat solver's compiled core (threat_kernel.c), loaded with ctypes.

Why compiled: in Python the solver cost about 57 us per node, and the VCTs that beat MCTS
needed 2,000-20,000 nodes, more than a 1 s move can pay (measured on
benchmarks/gomoku_fatal_moves.py's positions; the C core: about 4 us).  Why C through
ctypes rather than numba: numba maps LLVM (a 178 MB library) into the process, and the
Gomocup judge counts a brain's virtual size against 350 MB (shared/PROTOCOLS.md).

`pip install` builds it (setup.py: the extension `engine.games.gomoku._threat_kernel`, optional,
so an install without a C compiler still succeeds); it is loaded with ctypes, never imported.
Without the build the solver is unavailable and says so in one line
(ThreatKernelUnavailable); the players then play without it and say so
(engine/players/build.py).
"""
from __future__ import annotations

import ctypes
import importlib.util
import threading
from typing import Iterable

import numpy as np

from engine.search.prover import SolverUnavailable

__all__ = ["KernelBoard", "ThreatKernelUnavailable", "library", "MAX_FOURS", "MAX_THREATS",
           "PATTERN_RULES", "forbidden_cells", "foul_reason"]

# The rules whose fives and fours the C patterns know, and which colours win with exactly five
# only (threat_kernel.c, tk_new: bit 0 the first player, bit 1 the second).  Under renju black
# wins with exactly five, white with five or more, and black's attacking moves skip every cell
# that might be a foul (a superset of the fouls: threat_kernel.c, may_foul); caro's blocked
# fives are not known (the patterns cannot tell the board's edge from an opponent stone), so
# engine/games/gomoku/threats.py searches it as standard.
PATTERN_RULES = {"freestyle": 0, "standard": 3, "renju": 1}

MAX_FOURS = 60          # as threat_kernel.c
MAX_THREATS = 12
LINE_MAX = 1024
# The alpha-beta tree's stop question (tk_ab_search): nonzero to stop, given the nodes so far.
POLL = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_long)
_MODULE = "engine.games.gomoku._threat_kernel"
_lock = threading.Lock()
_library: ctypes.CDLL | None = None


class ThreatKernelUnavailable(SolverUnavailable):
    """The compiled solver is not built here (no C compiler at install, say)."""


def library() -> ctypes.CDLL:
    """The loaded library."""
    global _library
    with _lock:
        if _library is None:
            spec = importlib.util.find_spec(_MODULE)
            if spec is None or not spec.origin:
                raise ThreatKernelUnavailable(
                    "the gomoku threat solver's C core is not built: install a C compiler "
                    "(e.g. apt-get install gcc), then reinstall (pip install -e .)")
            try:
                _library = _declare(ctypes.CDLL(spec.origin))
            except (OSError, AttributeError) as error:
                raise ThreatKernelUnavailable(f"cannot load the threat solver's C core: {error}") from None
    return _library


def _declare(lib: ctypes.CDLL) -> ctypes.CDLL:
    p, i, l_ = ctypes.c_void_p, ctypes.c_int, ctypes.c_long
    signatures = {
        "tk_new": (p, [i, i, i, i]), "tk_free": (None, [p]), "tk_clear_table": (None, [p]),
        "tk_sync": (None, [p, p]), "tk_push": (None, [p, i, i]), "tk_pop": (None, [p, i]),
        "tk_makers": (i, [p, i]), "tk_makes_five": (i, [p, i, i]), "tk_may_foul": (i, [p, i]), "tk_five_cells": (i, [p, i, p]),
        "tk_rank": (i, [p, p, i, i]), "tk_disturbing": (i, [p, p, i, i, p]),
        "tk_vcf": (i, [p, i, l_, i, p, i, p, p, p]),
        "tk_forbidden": (i, [p, i, i, p]), "tk_foul": (i, [p, i, i, i]), "tk_vct": (i, [p, i, l_, i, i, i, p, p, p]),
        "tk_ab_search": (i, [p, p, l_, p, i, i, i, i, i, i, i, i, i, POLL, l_, p, l_, p, p]),
        "tk_ab_pv": (i, [p, p, l_, i, i, p]), "tk_ab_hashfull": (i, [p, l_, i]), "tk_ab_evaluate": (i, [p, i, i]),
        "tk_ab_history_bytes": (l_, [i]), "tk_ab_age": (None, [p, i]), "tk_ab_track": (None, [p]),
        "tk_line_planes": (None, [p, i, i, i, i, p]),
    }
    for name, (result, arguments) in signatures.items():
        function = getattr(lib, name)
        function.restype = result
        function.argtypes = arguments
    return lib


def _pointer(array: np.ndarray) -> int:
    """The array's buffer address (`__array_interface__` costs a fifth less than `.ctypes.data`)."""
    return array.__array_interface__["data"][0]


_FOUL_REASONS = (None, "overline", "double-four", "double-three")


def forbidden_cells(cells: bytes | bytearray, width: int, height: int) -> list[int]:
    """renju.py's forbidden_points in C (threat_kernel.c, tk_forbidden): black's forbidden
    empty cells, ascending.  Why: in Python they were a third of a renju search's time."""
    out = np.empty(width * height, dtype=np.int32)
    count = library().tk_forbidden(bytes(cells), width, height, _pointer(out))
    if count < 0:
        raise MemoryError("renju fouls: no memory for a board")
    return out[:count].tolist()


def foul_reason(cells: bytes | bytearray, width: int, height: int, cell: int) -> str | None:
    """renju.py's foul() in C for one empty cell: "overline", "double-four", "double-three" or None."""
    reason = library().tk_foul(bytes(cells), width, height, cell)
    if reason < 0:
        raise MemoryError("renju fouls: no memory for a board")
    return _FOUL_REASONS[reason]


class KernelBoard:
    """One board size and rule in C: its stones, cell patterns and transposition table
    (2 x 4 MB), kept across searches.  Searches leave the board as they found it."""

    def __init__(self, width: int, height: int, rule: str):
        if rule not in PATTERN_RULES:
            raise ValueError(f"the threat solver's patterns know {', '.join(PATTERN_RULES)} only, not {rule}")
        self._lib = library()
        self.n = width * height
        # renju: black's attacking moves skip every cell that might be a foul (tk_new, may_foul)
        handle = self._lib.tk_new(width, height, PATTERN_RULES[rule], int(rule == "renju"))
        if not handle:
            raise MemoryError("threat solver: no memory for its board")
        self._handle = handle
        self._line = np.zeros(LINE_MAX, dtype=np.int32)
        self._out = np.zeros(self.n, dtype=np.int32)
        self._line_at, self._out_at = _pointer(self._line), _pointer(self._out)   # fixed buffers: asked once
        self._spent = ctypes.c_long(0)
        self._complete = ctypes.c_int(0)

    def __del__(self) -> None:
        handle, self._handle = getattr(self, "_handle", None), None
        if handle:
            self._lib.tk_free(handle)

    def clear_table(self) -> None:
        self._lib.tk_clear_table(self._handle)

    def sync(self, cells: bytes | bytearray) -> None:
        """Hold `cells` (0 empty, 1 first player, 2 second): only the cells that differ change."""
        self._lib.tk_sync(self._handle, bytes(cells))   # ctypes passes a bytes object's buffer as is

    def push(self, cell: int, colour: int) -> None:
        self._lib.tk_push(self._handle, cell, colour)

    def pop(self, cell: int) -> None:
        self._lib.tk_pop(self._handle, cell)

    def makers(self, colour: int) -> int:
        """(cell, line) pairs where `colour` makes a four or a five."""
        return int(self._lib.tk_makers(self._handle, colour))

    def five_cells(self, colour: int) -> list[int]:
        """The empty cells where `colour` makes five, ascending."""
        count = self._lib.tk_five_cells(self._handle, colour, self._out_at)
        return self._out[:count].tolist()

    def makes_five(self, cell: int, colour: int) -> bool:
        return bool(self._lib.tk_makes_five(self._handle, cell, colour))

    def may_foul(self, cell: int) -> bool:
        """Might a black stone on empty `cell` be a renju foul?  True for every foul and for a
        few legal moves (threat_kernel.c, may_foul): what black's attacks under renju skip."""
        return bool(self._lib.tk_may_foul(self._handle, cell))

    def rank(self, moves: Iterable[int], side: int) -> list[int]:
        """`moves` best first for `side` to move (ordering value, then the lower cell)."""
        cells = np.fromiter(moves, dtype=np.int32)
        if len(cells):
            self._lib.tk_rank(self._handle, _pointer(cells), len(cells), side)
        return cells.tolist()

    def disturbing(self, line: Iterable[int], defender: int) -> list[int]:
        """Every move of `defender` that might stop the VCF `line`, ascending."""
        cells = np.fromiter(line, dtype=np.int32)
        count = self._lib.tk_disturbing(self._handle, _pointer(cells), len(cells), defender, self._out_at)
        return self._out[:count].tolist()

    def vcf(self, attacker: int, nodes: int, max_fours: int, hint: np.ndarray | None,
            foul_wins: bool = False) -> tuple[tuple[int, ...] | None, int, bool]:
        """Attacker's shortest VCF: (line or None, nodes, complete); hint: uint8 [N] cells
        tried first; foul_wins (renju, white attacking): a four whose only block might be
        black's foul wins, a line of two (attack, block) that the caller must replay with
        the rules, since may_foul() also names a few legal cells."""
        found = self._lib.tk_vcf(self._handle, attacker, nodes, max_fours,
                                 None if hint is None else _pointer(hint), int(foul_wins), self._line_at,
                                 ctypes.byref(self._spent), ctypes.byref(self._complete))
        return self._result(found)

    def vct(self, attacker: int, nodes: int, threats: int, fours: int,
            dependent_first: bool = True) -> tuple[tuple[int, ...] | None, int, bool]:
        """Attacker's VCT: (main line or None, nodes, complete).  dependent_first: search with
        the later threes near the earlier threats first (threat_kernel.c, tk_vct), then all."""
        found = self._lib.tk_vct(self._handle, attacker, nodes, threats, fours, int(dependent_first),
                                 self._line_at, ctypes.byref(self._spent), ctypes.byref(self._complete))
        return self._result(found)

    # -- the alpha-beta tree (engine/games/gomoku/native_search.py) --------------------------------
    def ab_track(self) -> None:
        """Keep the counts the alpha-beta tree reads (stones near each cell, cell values, forks)
        from now on; a board only the threat searches use keeps none (they cost it speed)."""
        self._lib.tk_ab_track(self._handle)

    def ab_search(self, table: np.ndarray, history: np.ndarray, generation: int, me: int, depth: int,
                  alpha: int, beta: int, ply: int, width: int, leaf_vcf: int, mate: int, poll,
                  poll_every: int, nodes: int, limit: int) -> tuple[int | None, int, int]:
        """threat_kernel.c's tk_ab_search on this board: (score, or None when stopped; the
        nodes counted on from `nodes`; the deepest ply)."""
        counted, score, seldepth = ctypes.c_long(nodes), ctypes.c_int(0), ctypes.c_int(0)
        done = self._lib.tk_ab_search(self._handle, _pointer(table), table.nbytes, _pointer(history), generation, me,
                                      depth, alpha, beta, ply, width, leaf_vcf, mate, poll, poll_every,
                                      ctypes.byref(counted), limit, ctypes.byref(score), ctypes.byref(seldepth))
        if done < 0:
            raise MemoryError("gomoku alpha-beta: no memory for the tree's move lists")
        return (score.value if done else None), counted.value, seldepth.value

    def ab_pv(self, table: np.ndarray, me: int, max_len: int) -> list[int]:
        """The table's line from this board's position, `me` to move."""
        count = self._lib.tk_ab_pv(self._handle, _pointer(table), table.nbytes, me, max_len, self._out_at)
        return self._out[:count].tolist()

    def ab_hashfull(self, table: np.ndarray, generation: int) -> int:
        return int(self._lib.tk_ab_hashfull(_pointer(table), table.nbytes, generation))

    def ab_evaluate(self, me: int, mate: int) -> int:
        """The tree's static evaluation of this board for `me` to move."""
        return int(self._lib.tk_ab_evaluate(self._handle, me, mate))

    def ab_history(self) -> np.ndarray:
        """A zeroed history buffer for tk_ab_search on this board size."""
        return np.zeros(self._lib.tk_ab_history_bytes(self.n) // 4, dtype=np.int32)

    def ab_age(self, history: np.ndarray) -> None:
        self._lib.tk_ab_age(_pointer(history), self.n)

    def _result(self, found: int) -> tuple[tuple[int, ...] | None, int, bool]:
        line = tuple(self._line[:found].tolist()) if found else None
        return line, int(self._spent.value), bool(self._complete.value)
