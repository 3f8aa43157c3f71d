"""The compiled chess tree (search_kernel.c) as alpha-beta's root driver uses it.

engine/search/alphabeta.py keeps the root (iterative deepening, MultiPV, searchmoves, the
reports); below each root move a chess search runs here in C: on engine bench's positions the
Python tree's 90,000 nodes a second became 760,000 (1.5-1.8 million once past the table's set-up),
two to five plies more in 0.3 s (docs/measurements/chess-native-search.md).  A `NativeTree` is made per
search by ChessSearchBoard.native_tree(): it knows the game's earlier positions (repetitions)
and keeps the transposition table and the move-ordering history in the searcher's `memory`
dict, so they last across the moves of a game and go with its new_game().
"""
from __future__ import annotations

from typing import Callable

import chess

from engine.games.chess.pst import PHASE_WEIGHT, pst_tables
from engine.games.chess.rules import move_table

__all__ = ["NativeTree", "kernel", "position_of"]

POLL_NODES = 1024   # nodes between polls of the Stopper: about a millisecond of search

try:   # built by pip install (setup.py, optional); without it the Python tree searches
    from engine.games.chess import _search_kernel as kernel   # type: ignore[attr-defined]
    kernel.bind_evaluation(*pst_tables(), PHASE_WEIGHT)
except ImportError:
    kernel = None


def position_of(board: chess.Board) -> tuple:
    """The fields search_kernel.c reads a position from."""
    occupied_co = board.occupied_co
    ep = board.ep_square
    return (occupied_co[chess.WHITE], occupied_co[chess.BLACK], board.pawns, board.knights, board.bishops,
            board.rooks, board.queens, board.kings, board.promoted, board.turn, board.clean_castling_rights(),
            -1 if ep is None else ep, board.halfmove_clock, board.chess960)


class NativeTree:
    """One search's access to the compiled tree, from `board`'s position (the root)."""

    __slots__ = ("board", "tt", "heuristics", "path", "moves")

    def __init__(self, board: chess.Board, memory: dict, hash_mb: int):
        self.board = board
        size = max(1 << 16, hash_mb << 20)
        if len(memory.get("tt", b"")) != size:
            memory["tt"] = bytearray(size)
            memory["heuristics"] = bytearray(kernel.HEURISTICS_BYTES)
        self.tt, self.heuristics = memory["tt"], memory["heuristics"]
        kernel.age(self.heuristics)
        # The game's positions back to the last irreversible move, oldest first, then the root.
        earlier = board.copy(stack=min(board.halfmove_clock, len(board.move_stack)))
        path = [kernel.key(position_of(earlier))]
        while earlier.move_stack:
            earlier.pop()
            path.append(kernel.key(position_of(earlier)))
        self.path = path[::-1]
        self.moves = move_table()

    def search(self, depth: int, alpha: int, beta: int, ply: int, poll: Callable[[int], bool],
               nodes: int, node_limit: int | None) -> tuple[int | None, int, int]:
        """Negamax from the board's current position (a root move played): (score or None
        when poll(nodes) said stop, the nodes counted on from `nodes`, the deepest ply)."""
        return kernel.search(self.tt, self.heuristics, position_of(self.board), self.path, depth, alpha, beta,
                             ply, poll, POLL_NODES, nodes, -1 if node_limit is None else node_limit)

    def hashfull(self) -> int:
        """Per mille of the table in use (UCI's hashfull), from its first 1000 entries."""
        return kernel.hashfull(self.tt)

    def pv(self, max_len: int) -> list[chess.Move]:
        """The table's line from the board's current position: legal moves, no repetition."""
        moves = self.moves
        return [moves[code] for code in kernel.pv(self.tt, position_of(self.board), self.path, max_len)]
