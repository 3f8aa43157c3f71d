"""Chess MCTS's second opinion: alpha-beta checks the move the search chose.

Why: at a few thousand playouts a move, our small network's MCTS walks into short tactics
that a shallow alpha-beta with quiescence sees at once.  Measured on the 40 games the
default lost to Stockfish `UCI_Elo` 2000 (docs/measurements/issue25-chess-loop.md,
"The chosen move checked by alpha-beta"): 117 of its 2,122 moves lost a pawn or more from
a balanced position by Stockfish's judgement; replayed on them (benchmarks/chess_move_check.py,
0.3 s), this check changed 14 of those, all for the better, and 44 of the 1,860 balanced
moves (18 better, 7 worse).  In play the gain is small (alpha-beta reaches depth 3-4 here):
a 40-game match against Stockfish 2000 saw no difference.

How: a timed search keeps CHECK_SHARE of its planned time back (verify_reserve).  After
the search, alpha-beta searches the position with that time; when its best move is not
the chosen one, it searches the chosen move alone to the same depth, and a move rated
more than VETO_CP below the best is vetoed (MCTS then plays, or searches on and plays,
its next choice, which is checked the same way).  Searches with no clock (fixed playouts,
self-play, analysis) are not checked.
"""
from __future__ import annotations

import math
from typing import Any, Callable, Sequence

from engine.search.limits import Stopper
from engine.types import Limits, cp_from_value

__all__ = ["AlphaBetaCheck", "CHECK_SHARE", "VETO_CP"]

CHECK_SHARE = 0.3    # of the move's planned time, kept back for the check (when it is on)
FULL_SEARCH_SHARE = 0.5   # of the check's time: the most the search for alpha-beta's best may start into
FULL_SEARCH_END = 0.6     # of the check's time: where the search for alpha-beta's best is stopped
VETO_CP = 100        # the chosen move this far below alpha-beta's best (same depth) is vetoed
MIN_DEPTH = 2        # a verdict from a shallower search is not trusted
HASH_MB = 16         # the checker's own transposition table


class AlphaBetaCheck:
    """The chess Prover (engine/search/prover.py): proves nothing, vetoes blunders."""

    def __init__(self, share: float = CHECK_SHARE, veto_cp: int = VETO_CP, hash_mb: int = HASH_MB):
        self.share, self.veto_cp, self.hash_mb = share, veto_cp, hash_mb
        self._searcher: Any = None
        self._budget = 0.0            # seconds the current check may take
        self.vetoed = 0               # moves vetoed since this checker was made (for benchmarks)
        self.last_best: Any = None    # alpha-beta's best move in the last check

    def _alphabeta(self) -> Any:
        if self._searcher is None:
            from engine.games.chess.alphabeta import ChessSearchBoard
            from engine.search.alphabeta import AlphaBeta, AlphaBetaConfig
            self._searcher = AlphaBeta(ChessSearchBoard.from_state, AlphaBetaConfig(hash_mb=self.hash_mb))
        return self._searcher

    def prove_root(self, root: Any, stopper: Stopper | None = None) -> None:
        pass

    def prove_leaf(self, leaf: Any) -> None:
        pass

    def forced_move(self, leaf: Any) -> None:
        return None

    def verify_reserve(self, roots: Sequence[Any], stopper: Stopper | None) -> float:
        """CHECK_SHARE of the planned time left (the soft deadline's, else the hard one's)
        when a timed search has a choice to check; 0 otherwise."""
        if self.share <= 0.0 or stopper is None or not stopper.timed:
            return 0.0
        if not any(_has_choice(root) for root in roots):
            return 0.0
        planned = stopper.soft_left()
        left = stopper.time_left() or 0.0
        planned = left if planned is None else min(planned, left)
        self._budget = max(0.0, planned) * self.share
        return self._budget

    def verify_choice(self, root: Any, choose: Callable[[], int], stopper: Stopper | None,
                      veto: Callable[[int], None]) -> None:
        """Alpha-beta's best in the time kept back; each choice rated more than veto_cp below
        it at the same depth is vetoed, until a choice passes or the time is spent."""
        if not _has_choice(root) or stopper is None or not stopper.timed:
            return
        deadline = stopper.elapsed() + min(self._budget, max(0.0, stopper.time_left() or 0.0))
        searcher = self._alphabeta()
        left = max(0.0, deadline - stopper.elapsed())
        # No iteration started past half the time, none run past FULL_SEARCH_END of it: the
        # chosen move's own search needs the rest (measured: a full search left to its hard limit
        # often left none, and no verdict; the compiled tree starts iterations it may not finish).
        best = searcher.search(root.state, Limits(time=left * FULL_SEARCH_END, soft_time=left * FULL_SEARCH_SHARE),
                               stop=stopper.event)
        self.last_best = best.best_move
        if best.info is None or best.info.depth < MIN_DEPTH or best.best_move is None:
            return
        depth, best_cp = best.info.depth, cp_from_value(best.value)
        for _ in range(len(root.moves)):
            a = choose()
            move = root.moves[a]
            if move == best.best_move or _proven_win(root, a):
                return
            left = deadline - stopper.elapsed()
            if left <= 0.0 or stopper.event.is_set():
                return
            alone = searcher.search(root.state, Limits(time=left, depth=depth, searchmoves=(move,)),
                                    stop=stopper.event)
            if alone.info is None or alone.info.depth < depth:
                return                    # out of time: no verdict, the search's choice stands
            if best_cp - cp_from_value(alone.value) <= self.veto_cp:
                return
            veto(a)
            self.vetoed += 1
            if choose() == a:             # the last allowed move: nothing else to play
                return


def _has_choice(root: Any) -> bool:
    return root.moves is not None and len(root.moves) > 1 and root.solved is None


def _proven_win(root: Any, a: int) -> bool:
    return root.proven is not None and not math.isnan(root.proven[a]) and root.proven[a] > 0
