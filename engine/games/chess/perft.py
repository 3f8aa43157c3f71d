"""Perft: count the leaf positions of the legal-move tree, the standard rules self-check.

`perft` walks any game through the immutable State API (legal_moves/play), so it
checks exactly what searchers and protocols see.  `chess_perft` counts with a
private push/pop python-chess board: the speed ceiling of a python-chess searcher.
"""
from __future__ import annotations

import chess

from engine.games.base import State

__all__ = ["perft", "chess_perft", "divide"]


def perft(state: State, depth: int) -> int:
    """Leaf count at `depth` plies below `state`, through State.play (no shortcuts).

    A finished game has no legal moves (gomoku) or none are generated (chess), so
    it contributes nothing below depth 0, as in the published counts.
    """
    if depth <= 0:
        return 1
    moves = state.legal_moves()
    if depth == 1:
        return len(moves)
    return sum(perft(state.play(move), depth - 1) for move in moves)


def divide(state: State, depth: int) -> dict[object, int]:
    """Perft per root move: the usual tool to find which move a rules bug hides under."""
    return {move: perft(state.play(move), depth - 1) for move in state.legal_moves()}


def chess_perft(board: chess.Board, depth: int) -> int:
    """Fast chess perft with push/pop on a copy of `board` (bulk-counts the last ply)."""
    board = board.copy(stack=False)

    def walk(depth: int) -> int:
        if depth == 1:
            return board.legal_moves.count()
        total = 0
        for move in board.generate_legal_moves():
            board.push(move)
            total += walk(depth - 1)
            board.pop()
        return total

    return 1 if depth <= 0 else walk(depth)
