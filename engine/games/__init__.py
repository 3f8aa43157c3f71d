"""Game rules.  `get_game` is the one place that turns a name and settings into a Game."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal, overload

from engine.games.base import Game, GameSetupError, IllegalMoveError, Outcome, State

if TYPE_CHECKING:  # imported lazily at run time (python-chess only when chess is asked for)
    from engine.games.chess import ChessGame
    from engine.games.gomoku import GomokuGame

__all__ = ["get_game", "Game", "State", "Outcome", "IllegalMoveError", "GameSetupError"]


@overload
def get_game(name: Literal["chess"]) -> ChessGame: ...
@overload
def get_game(name: Literal["gomoku"], **settings: Any) -> GomokuGame: ...
@overload
def get_game(name: str, **settings: Any) -> Game: ...


def get_game(name: str, **settings: Any) -> Game:
    """get_game("chess") or get_game("gomoku", width=15, height=15, rule="freestyle")."""
    if name == "chess":
        from engine.games.chess import ChessGame
        if settings:
            raise GameSetupError(f"chess takes no settings, got {sorted(settings)}")
        return ChessGame()
    if name == "gomoku":
        from engine.games.gomoku import GomokuGame
        return GomokuGame(**settings)
    raise GameSetupError(f"unknown game {name!r} (expected chess or gomoku)")
