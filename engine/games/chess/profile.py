"""Chess as the rest of the engine sees it (engine/games/profile.py), with the player
settings chosen by match for it."""
from __future__ import annotations

import math
from typing import Any

from engine.games.chess.rules import ChessGame
from engine.games.profile import GameProfile

__all__ = ["PROFILE", "SHORT_SEARCH_LEAVES", "SHORT_SEARCH_SECONDS"]

# MCTS gathers SHORT_SEARCH_LEAVES leaves a step instead of 16 for a move with under
# SHORT_SEARCH_SECONDS on its clock: at 0.25 s a move (about 180 playouts) 8 scored 112.5/200
# against 16, +44 +/- 46 Elo by pairs; at 0.5 s (about 420) 52.5/100, +17 +/- 69; the 0.6 s is
# gomoku's, whose A/Bs had the same shape (docs/measurements/issue25-search-settings.md, last section).
SHORT_SEARCH_LEAVES = 8
SHORT_SEARCH_SECONDS = 0.6


def _heuristic() -> Any:
    from engine.games.chess.heuristic import ChessMaterialEvaluator
    return ChessMaterialEvaluator()


def _rollout() -> Any:
    from engine.games.chess.heuristic import chess_rollout
    return chess_rollout


def _alphabeta_board(game: Any, solver: bool) -> Any:
    from engine.games.chess.alphabeta import ChessSearchBoard
    return ChessSearchBoard.from_state


def _alphabeta_below_playouts() -> float:
    """Player auto's switch (below): with the compiled alpha-beta tree every move under a clock
    (no playout count), 300 where it is not built and alpha-beta searches in Python."""
    from engine.games.chess.native_search import kernel
    return math.inf if kernel is not None else 300


def _openings() -> Any:
    from engine.games.chess.openings import ChessOpenings
    return ChessOpenings()


def _records() -> Any:
    from engine.games.chess.records import ChessRecords
    return ChessRecords()


def _prover(options: Any) -> Any:
    """The alpha-beta check of MCTS's chosen move, with the player's check_share."""
    from engine.games.chess.move_check import CHECK_SHARE, AlphaBetaCheck
    return AlphaBetaCheck(CHECK_SHARE if options.check_share is None else options.check_share)


def _leaf_value() -> Any:
    from engine.games.chess.endgames import MopUpEvaluator
    return MopUpEvaluator


PROFILE = GameProfile(
    name="chess", rules=ChessGame, codec="engine.games.chess.codec",
    heuristic=_heuristic, rollout=_rollout, alphabeta_board=_alphabeta_board, leaf_value=_leaf_value,
    prover=_prover,
    # CPuct / FpuReduction / PolicyTemperature "auto" (matches: docs/measurements/weights-history.md)
    # c_init 1.8: 58.5/100 against 1.25 and 36.5/60 against 2.5 at 800 playouts a move; with it
    # FPU 0.3: 62/100 against 0.5 (docs/measurements/issue25-chess-loop.md, thirty-third session);
    # with both, policy temperature 1.3: 110.5/200 against 1.0, LOS 96 % (thirty-fourth session)
    mcts_tuned={"c_init": 1.8, "fpu_reduction": 0.3, "policy_temperature": 1.3, "leaves_per_batch": 16,
                "short_search_leaves": SHORT_SEARCH_LEAVES, "short_search_seconds": SHORT_SEARCH_SECONDS},
    # Player auto: alpha-beta for every move under a clock (docs/measurements/player-auto.md,
    # chess-native-search.md).  Since alpha-beta searches below the root in C (search_kernel.c,
    # depth 14 at a second a move) MCTS scored 3.5/40 against it at 10+0.1, 2.5/20 at 1 s a move
    # (~2,500 playouts) and 4.5/20 at 3 s a move (~7,650 playouts): gaining a few per cent a
    # tripling of time, no crossing in sight.  MCTS keeps analysis without a clock, node limits
    # and pondering.  Before the compiled tree the crossing sat at 300 playouts (Python alpha-beta).
    auto_alphabeta_below_playouts=_alphabeta_below_playouts,
    openings=_openings, records=_records,
)
