"""The compiled gomoku tree (threat_kernel.c, tk_ab_search) as alpha-beta's root driver uses it.

engine/search/alphabeta.py keeps the root (iterative deepening, MultiPV, the reports); below
each root move the tree runs in C on the threat kernel's board, whose cell patterns it reads
for its moves and its evaluation, and whose VCF it runs at the leaves.  A `NativeTree` is made
per search by GomokuSearchBoard.native_tree(); the kernel board, the transposition table and
the history live in the searcher's `memory` dict, so they last across a game's moves and go
with its new_game().  Freestyle and standard only: renju's fouls and caro's blocked fives are
known to the Python tree alone.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable

import numpy as np

from engine.games.gomoku.threat_kernel import POLL, KernelBoard, ThreatKernelUnavailable, library
from engine.search.ab_board import MATE_SCORE

if TYPE_CHECKING:
    from engine.games.gomoku.alphabeta import GomokuSearchBoard

__all__ = ["NativeTree", "available", "NATIVE_RULES", "LEAF_VCF_NODES"]

NATIVE_RULES = ("freestyle", "standard")
POLL_NODES = 1024      # nodes between polls of the Stopper
LEAF_VCF_NODES = 64    # a leaf whose mover can make fours on two lines: its VCF within this many nodes


def available(rule: str) -> bool:
    """Can the compiled tree search this rule here (built, and a rule its patterns know)?"""
    if rule not in NATIVE_RULES:
        return False
    try:
        library()
    except ThreatKernelUnavailable:
        return False
    return True


class NativeTree:
    """One search's access to the compiled tree below the root of `board`."""

    __slots__ = ("board", "kernel", "table", "history", "generation")

    def __init__(self, board: GomokuSearchBoard, memory: dict, hash_mb: int):
        self.board = board
        shape = (board.width, board.height, board.rule, hash_mb)
        if memory.get("shape") != shape:
            memory["shape"] = shape
            memory["kernel"] = KernelBoard(board.width, board.height, board.rule)
            memory["kernel"].ab_track()
            memory["table"] = np.zeros(max(1 << 16, hash_mb << 20), dtype=np.uint8)
            memory["history"] = memory["kernel"].ab_history()
            memory["generation"] = 0
        memory["generation"] = (memory["generation"] + 1) & 63
        self.kernel, self.table, self.history = memory["kernel"], memory["table"], memory["history"]
        self.generation = memory["generation"]
        self.kernel.ab_age(self.history)

    def search(self, depth: int, alpha: int, beta: int, ply: int, poll: Callable[[int], bool],
               nodes: int, node_limit: int | None) -> tuple[int | None, int, int]:
        """Negamax from the board's current position (a root move played): (score or None
        when stopped, the nodes counted on from `nodes`, the deepest ply)."""
        board = self.board
        self.kernel.sync(board.cells)
        callback = POLL(lambda counted: int(poll(counted)))
        return self.kernel.ab_search(self.table, self.history, self.generation, board.ply & 1, depth, alpha, beta,
                                     ply, board.max_candidates, LEAF_VCF_NODES, MATE_SCORE, callback, POLL_NODES,
                                     nodes, -1 if node_limit is None else node_limit)

    def hashfull(self) -> int:
        """Per mille of the table in use by this search (UCI's hashfull)."""
        return self.kernel.ab_hashfull(self.table, self.generation)

    def pv(self, max_len: int) -> list[int]:
        """The table's line from the board's current position."""
        self.kernel.sync(self.board.cells)
        return self.kernel.ab_pv(self.table, self.board.ply & 1, max_len)
