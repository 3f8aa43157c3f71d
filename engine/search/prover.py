"""What a game's solver offers MCTS: exact results for positions it can prove.

MCTS knows no game.  A game that has a solver (gomoku's threat solver,
engine/games/gomoku/threats.py TreeProver) or a checker of the chosen move (chess's alpha-beta,
engine/games/chess/move_check.py) hands MCTS an object with these four calls, and the
player layer (engine/players/build.py) decides which game gets one and with what budgets.
"""
from __future__ import annotations

from typing import Any, Callable, Protocol, Sequence

from engine.search.limits import Stopper

__all__ = ["Prover", "SolverUnavailable"]


class SolverUnavailable(RuntimeError):
    """A game's solver cannot run here (its compiled core is not built, say); players then
    play without it and say so."""


class Prover(Protocol):
    def prove_root(self, root: Any, stopper: Stopper | None = None) -> None:
        """Before the search: mark root moves proven won or lost (node.proven / node.solved)."""

    def prove_leaf(self, leaf: Any) -> None:
        """A new leaf: mark it solved when its side to move has a forced win."""

    def forced_move(self, leaf: Any) -> Any | None:
        """At a leaf about to be evaluated: its one move that does not lose at once (gomoku:
        the block of the opponent's only five), or None.  MCTS then evaluates the position
        after it instead, and the leaf's one child starts from that evaluation."""

    def verify_reserve(self, roots: Sequence[Any], stopper: Stopper | None) -> float:
        """Seconds of the budget to keep back for verify_choice (0: none)."""

    def verify_choice(self, root: Any, choose: Callable[[], int], stopper: Stopper | None,
                      veto: Callable[[int], None]) -> None:
        """After the search: check the chosen move (choose() gives its index, after any proof
        or veto the next one); may prove it lost, or veto(index) it: a verdict short of a
        proof (chess: alpha-beta sees it lose material) that takes the move out of the choice."""
