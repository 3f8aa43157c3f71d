"""What the layers above the rules ask of a game, in one object per game package.

Each game is a package (engine/games/chess/, engine/games/gomoku/) that holds everything
knowing that game and exports one `PROFILE`; engine/games/__init__.py lists the packages.
The search, network and player layers stay generic: they take what a profile hands them
(an evaluator, a roll-out, an alpha-beta board, a solver, tuned settings) and never test a
game's name.  Entries that load heavy code are callables that import on use, so a UCI
server that only answers `uci` loads none of it.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from engine.games.openings import OpeningBook
from engine.games.records import RecordFormat
from engine.search.uct import Rollout

__all__ = ["GameProfile"]


@dataclass(frozen=True)
class GameProfile:
    """One game, as the rest of the engine sees it.

    rules: the Game class.  codec: the module holding the network codec (`CODEC`), None for
    a game no network plays.  heuristic: () -> an Evaluator without a network (MCTS's fallback,
    UCT's move order).  rollout: () -> the UCT roll-out.  alphabeta_board: (game, solver on)
    -> alpha-beta's board factory (state -> SearchBoard), None when alpha-beta does not play
    it; it raises SolverUnavailable when the solver is asked for and cannot run.  leaf_value:
    () -> a wrapper the network evaluator is put under (chess: mop-up endgames).  prover:
    (player options) -> a fresh MCTS prover or None when the options switch it off (gomoku:
    the threat solver; chess: the alpha-beta check of the chosen move), raising
    SolverUnavailable when its compiled core is missing.  mcts_tuned: MCTSConfig values chosen
    by match (c_init, fpu_reduction, policy_temperature, leaves_per_batch, short_search_leaves
    and short_search_seconds).  board_tuned: (game) -> the values that differ by board, over
    mcts_tuned (gomoku: the leaf batch on large boards).
    auto_alphabeta_below_playouts: Player auto plays alpha-beta for moves whose planned time
    buys fewer MCTS playouts than this on the machine it runs on (None: MCTS at every clock;
    a callable gives the number when a player is built: chess's depends on a compiled kernel).
    openings: () -> its OpeningBook (suites, generated openings, start positions for the arena
    and the teachers).  records: () -> its RecordFormat (the record file a game is written to,
    the report viewer's frames)."""
    name: str
    rules: type
    heuristic: Callable[[], Any]
    rollout: Callable[[], Rollout]
    codec: str | None = None
    alphabeta_board: Callable[[Any, bool], Any] | None = None
    leaf_value: Callable[[], Callable[[Any], Any]] | None = None
    prover: Callable[[Any], Any] | None = None
    mcts_tuned: Mapping[str, float] = field(default_factory=dict)
    board_tuned: Callable[[Any], Mapping[str, float]] | None = None
    auto_alphabeta_below_playouts: float | Callable[[], float] | None = None
    openings: Callable[[], OpeningBook] = OpeningBook
    records: Callable[[], RecordFormat] = RecordFormat

    def tuned_for(self, game: Any) -> dict[str, float]:
        """The tuned MCTS values for this game's board: mcts_tuned, with board_tuned's over it."""
        return {**self.mcts_tuned, **(self.board_tuned(game) if self.board_tuned is not None else {})}
