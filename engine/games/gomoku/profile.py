"""Gomoku as the rest of the engine sees it (engine/games/profile.py), with the player
settings chosen by match for it."""
from __future__ import annotations

from typing import Any

from engine.games.gomoku.rules import GomokuGame
from engine.games.profile import GameProfile

__all__ = ["PROFILE", "THREAT_NODES", "VCT_NODES", "VCT_SHARE", "AB_ROOT_THREAT_NODES",
           "LARGE_BOARD_CELLS", "SMALL_BATCH", "SHORT_SEARCH_SECONDS"]

# MCTS's threat solver: nodes per new leaf (x40 at the root), per VCT search at the root (the
# root's own VCT, the opponent's after each move tried), and at most this share of the time
# left for those VCT checks.
THREAT_NODES = 30
VCT_NODES = 1000
VCT_SHARE = 0.3
# Alpha-beta's threat solver: nodes before the search (none per leaf, as before this profile).
AB_ROOT_THREAT_NODES = 2000
# MCTS's leaf batch on boards of more cells than 19x19 (20x20 up): the network costs about as
# many times more per position, so a turn gets fewer playouts, and a batch of 8 under the
# virtual loss spends them better than 16 (20x20: 163/300 against 16, +30 +/- 28 Elo by pairs;
# 19x19 51/100 and 15x15 49.5/100, no difference; docs/measurements/issue25-search-settings.md).
LARGE_BOARD_CELLS = 361
SMALL_BATCH = 8
# ... and the same small batch on any board for a search with under SHORT_SEARCH_SECONDS on
# its clock (15x15 at 0.25 s a turn, ~200 playouts: 115/200 for 8 against 16; at 0.5 s
# 53.5/100; at 1 s no difference, above).
SHORT_SEARCH_SECONDS = 0.6
# MCTS plays the root child with the highest lower bound of its value (tree.best_child), not
# the most visited: a move the search found late is played when its value is clearly higher.
# z 0.75 and 2.5 scored level with 1.5 (49.5/100 at 1 s, 101.5/200 at 0.5 s, 15x15).
LCB_Z = 1.5


def _heuristic() -> Any:
    from engine.games.gomoku.heuristic import GomokuHeuristicEvaluator
    return GomokuHeuristicEvaluator()


def _rollout() -> Any:
    from engine.games.gomoku.heuristic import gomoku_rollout
    return gomoku_rollout


def _alphabeta_board(game: Any, solver: bool) -> Any:
    from engine.games.gomoku.alphabeta import board_maker
    if solver:
        from engine.games.gomoku.threat_kernel import library
        library()                     # ThreatKernelUnavailable when the core is not built
    # one pattern cache and threat solver per player, kept across moves
    return board_maker(game, root_threat_nodes=AB_ROOT_THREAT_NODES if solver else 0)


def _prover(options: Any) -> Any:
    """A fresh threat solver for one MCTS (it keeps per-search state), with the player's
    vct_share; None when the player's threat_solver is off; ThreatKernelUnavailable (a
    SolverUnavailable) when its compiled core is not built."""
    if options.threat_solver != "on":
        return None
    from engine.games.gomoku.threat_kernel import library
    from engine.games.gomoku.threats import TreeProver
    library()
    share = VCT_SHARE if options.vct_share is None else options.vct_share
    return TreeProver(THREAT_NODES, 40 * THREAT_NODES, VCT_NODES if share > 0 else 0, share)


def _board_tuned(game: Any) -> dict[str, float]:
    """The leaf batch by board size (the other tuned values hold on every board)."""
    return {"leaves_per_batch": SMALL_BATCH} if game.width * game.height > LARGE_BOARD_CELLS else {}


def _openings() -> Any:
    from engine.games.gomoku.openings import GomokuOpenings
    return GomokuOpenings()


def _records() -> Any:
    from engine.games.gomoku.records import GomokuRecords
    return GomokuRecords()


PROFILE = GameProfile(
    name="gomoku", rules=GomokuGame, codec="engine.games.gomoku.codec",
    heuristic=_heuristic, rollout=_rollout, alphabeta_board=_alphabeta_board, prover=_prover,
    # FpuReduction / PolicyTemperature "auto" (matches: docs/measurements/weights-history.md);
    # the move by lower confidence bound (LCB_Z): 109.5/200 against the most visited at 1 s a turn
    # (pairs +33 +/- 30 Elo, LOS 98.5 %), 106/200 at 0.3 s; 20x20 108/200 at 0.5 s (LOS 96.5 %)
    # (docs/measurements/issue25-search-settings.md)
    mcts_tuned={"fpu_reduction": 0.25, "policy_temperature": 1.0, "leaves_per_batch": 16, "lcb_z": LCB_Z,
                "short_search_leaves": SMALL_BATCH, "short_search_seconds": SHORT_SEARCH_SECONDS},
    board_tuned=_board_tuned,
    auto_alphabeta_below_playouts=None,   # MCTS at every clock (77.5/100 against alpha-beta at 1 s a game)
    openings=_openings, records=_records,
)
