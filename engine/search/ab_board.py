"""The contract between the generic alpha-beta core and a game.

Each game provides a `SearchBoard`: a private, mutable position used only inside
one search (STYLE principle 2: push/pop in the hot loop, invisible to anyone else).
Scores are integers from the side to move, in centipawn-like units; the core owns
mate/win scoring (MATE_SCORE minus distance), so boards never return mate scores.

Optional methods the core uses when a board has them (chess does, for speed):
  history_keys() -> keys of the game's earlier positions that a repeat would draw;
  rule_terminal() -> terminal() without the "no legal move" test (the core then scores
      an empty ordered_moves() itself: in_check() -> loss, else draw);
  push_null() / null_move_safe() -> pass a turn (undone by pop()) for null-move pruning;
  wdl(score) -> (win, draw, loss) per mille for the side to move at the current position
      with that (non-mate) score: UCI_ShowWDL's numbers (chess: engine/games/chess/wdl.py).
"""
from __future__ import annotations

from typing import Any, Hashable, Protocol, Sequence

from engine.types import Move

__all__ = ["SearchBoard", "StateSearchBoard", "NoTactics", "MATE_SCORE", "MATE_BOUND", "TERMINAL_WIN", "TERMINAL_LOSS", "TERMINAL_DRAW"]

MATE_SCORE = 1_000_000          # a win at the root; a win in n plies scores MATE_SCORE - n
MATE_BOUND = MATE_SCORE - 10_000  # |score| above this is a forced result
TERMINAL_WIN, TERMINAL_DRAW, TERMINAL_LOSS = 1, 0, -1


class SearchBoard(Protocol):
    def push(self, move: Move) -> None: ...
    def pop(self) -> None: ...
    def key(self) -> Hashable: ...
    """Transposition key of the current position (cheap: called at every node)."""
    def terminal(self) -> int | None: ...
    """None while the game goes on, else TERMINAL_WIN/DRAW/LOSS for the side to move."""
    def evaluate(self) -> int: ...
    """Static evaluation for the side to move (no mate scores)."""
    def ordered_moves(self) -> Sequence[tuple[Move, int]]: ...
    """Moves worth searching with a static ordering score, higher first-ish (the core
    re-sorts with TT move, killers and history).  A game may prune (gomoku candidates)
    or force (gomoku: only the winning move, or only the blocks of an opponent four)."""
    def noisy_moves(self) -> Sequence[tuple[Move, int]]: ...
    """Moves for quiescence (chess: captures/promotions, MVV-LVA scored); [] for gomoku."""
    def is_quiet(self, move: Move) -> bool: ...
    """Killer/history moves are quiet ones (not captures/promotions)."""
    def in_check(self) -> bool: ...
    """Side to move in check: no stand-pat in quiescence, no null-move pruning."""


class NoTactics:
    """The SearchBoard methods of a game without captures or checks (gomoku, the toy games):
    no quiescence moves, every move quiet, never in check."""

    def noisy_moves(self) -> Sequence[tuple[Move, int]]:
        return []

    def is_quiet(self, move: Move) -> bool:
        return True

    def in_check(self) -> bool:
        return False


class StateSearchBoard(NoTactics):
    """A SearchBoard over any game's immutable states: push plays a move into a new state,
    pop drops it.  No evaluation (0 until the game ends) and no move ordering, so alpha-beta
    plays any game that has rules only; a game worth searching deeply brings its own
    incremental board (chess and gomoku do, in their packages)."""

    def __init__(self, state: Any):
        self._stack = [state]

    @classmethod
    def from_state(cls, state: Any) -> "StateSearchBoard":
        return cls(state)

    def push(self, move: Move) -> None:
        self._stack.append(self._stack[-1].play(move))

    def pop(self) -> None:
        self._stack.pop()

    def key(self) -> Hashable:
        return self._stack[-1].key()

    def terminal(self) -> int | None:
        state = self._stack[-1]
        outcome = state.outcome()
        if outcome is None:
            return None
        return {1.0: TERMINAL_WIN, 0.0: TERMINAL_DRAW, -1.0: TERMINAL_LOSS}[outcome.value_for(state.to_play)]

    def evaluate(self) -> int:
        return 0

    def ordered_moves(self) -> Sequence[tuple[Move, int]]:
        return [(move, 0) for move in self._stack[-1].legal_moves()]
