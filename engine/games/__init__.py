"""The games.  `get_game` is the one place that turns a name and settings into a Game.

Each game is a package here (engine/games/chess/, engine/games/gomoku/) holding everything
that knows it, and exporting one PROFILE (engine/games/profile.py): its rules class, its
hand-written evaluation and roll-out, alpha-beta board, solver, leaf-value wrapper, tuned
player settings, network codec, opening book (openings.py) and record format (records.py);
its web.py says how the web board shows it (board_view).  The registry
below is the one line a game adds here.
"""
from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any, Literal, overload

from engine.games.base import Game, GameSetupError, IllegalMoveError, Outcome, State

if TYPE_CHECKING:  # imported lazily at run time (python-chess only when chess is asked for)
    from engine.games.chess import ChessGame
    from engine.games.gomoku import GomokuGame
    from engine.games.profile import GameProfile

__all__ = ["get_game", "game_on_board", "game_class", "game_names", "game_profile", "board_view", "Game", "State",
           "Outcome", "IllegalMoveError", "GameSetupError"]

# game name -> its package (imported on first use)
_GAMES = {
    "chess": "engine.games.chess",
    "gomoku": "engine.games.gomoku",
}


def game_names() -> tuple[str, ...]:
    """The games get_game knows."""
    return tuple(_GAMES)


def game_profile(name: str) -> GameProfile:
    """What the engine asks of game `name` (its package's PROFILE)."""
    package = _GAMES.get(name)
    if package is None:
        raise GameSetupError(f"unknown game {name!r} (expected {' or '.join(_GAMES)})")
    return importlib.import_module(package).PROFILE  # type: ignore[no-any-return]


def board_view(game: Any) -> Any:
    """How the web board shows `game` (its package's web.py: COLOURS, move_label,
    game_record, position, snapshot)."""
    return importlib.import_module(f"{_GAMES[game.name]}.web")


def game_class(name: str) -> Any:
    """The Game class of `name`: its class attributes answer per-game questions without a board."""
    return game_profile(name).rules


@overload
def get_game(name: Literal["chess"]) -> ChessGame: ...
@overload
def get_game(name: Literal["gomoku"], **settings: Any) -> GomokuGame: ...
@overload
def get_game(name: str, **settings: Any) -> Game: ...


def get_game(name: str, **settings: Any) -> Game:
    """get_game("chess") or get_game("gomoku", width=15, height=15, rule="freestyle")."""
    cls = game_class(name)
    if settings and not cls.sized:
        raise GameSetupError(f"{name} takes no settings, got {sorted(settings)}")
    return cls(**settings)  # type: ignore[no-any-return]


def game_on_board(name: str, width: int, height: int, rule: str = "freestyle") -> Game:
    """`name` on a width x height board under `rule` where the game takes board settings,
    else on its one board (the board arguments are then ignored)."""
    if not game_class(name).sized:
        return get_game(name)
    return get_game(name, width=width, height=height, rule=rule)
