"""Player specs -> searchers.  Used by the protocol servers, the arena and `engine bench`.

Each player lives in its own module with a `build(game, options) -> Searcher`
function, imported only when chosen, so picking `alphabeta` never loads torch.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass, fields, replace
from importlib import resources
from pathlib import Path
from typing import Any

from engine.games.base import Game
from engine.search.limits import Searcher

__all__ = ["PlayerOptions", "PLAYERS", "make_searcher", "resolve_player", "shipped_weights", "find_weights",
           "UnknownPlayerError"]

PLAYERS: dict[str, str] = {
    "alphabeta": "engine.search.alphabeta",
    "mcts": "engine.search.mcts",
    "uct": "engine.search.uct",
    "random": "engine.search.random_player",
}


class UnknownPlayerError(ValueError):
    pass


@dataclass(frozen=True)
class PlayerOptions:
    """Everything a player may be configured with; each player reads what it needs.

    nodes: default per-move node budget when no clock/limit is given (MCTS playouts).
    batch: leaves evaluated per network call (MCTS `leaves_per_batch`, UCI MinibatchSize).
    threads: torch/ONNX intra-op threads.  hash_mb: alpha-beta transposition table size.
    weights: path to a checkpoint (None = the shipped default for the game, if any).
    device: "auto" | "cpu" | "cuda" | "mps".  backend: "auto" | "torch" | "onnx".
    """
    player: str = "alphabeta"
    weights: str | None = None
    nodes: int | None = None
    batch: int = 16
    cpuct: float = 1.25
    threads: int = 1
    hash_mb: int = 64
    seed: int | None = None
    device: str = "auto"
    backend: str = "auto"

    def with_changes(self, **changes: Any) -> "PlayerOptions":
        return replace(self, **changes)

    @classmethod
    def field_names(cls) -> list[str]:
        return [f.name for f in fields(cls)]


def _shipped(file_name: str) -> Path | None:
    """A file of the installed `weights` package, if it is there."""
    try:
        path = Path(str(resources.files("weights") / file_name))
    except ModuleNotFoundError:
        return None
    return path if path.is_file() else None


def shipped_weights(game_name: str) -> Path | None:
    """The default network shipped for a game (`weights/<game>.pt` inside the installed package)."""
    return _shipped(f"{game_name}.pt")


def find_weights(name: str) -> str:
    """A network file as given, else a shipped one by name (`gomoku-teacher-res6x64`), else
    `name` unchanged (loading it then says what is missing)."""
    if Path(name).is_file():
        return name
    shipped = _shipped(name if name.endswith((".pt", ".onnx")) else f"{name}.pt")
    return str(shipped) if shipped is not None else name


def resolve_player(game: Game, options: PlayerOptions) -> PlayerOptions:
    """Turn player "auto" into mcts (when a network is named or shipped) or alphabeta, and a
    shipped network's name into its path."""
    if options.weights is not None:
        options = options.with_changes(weights=find_weights(options.weights))
    if options.player != "auto":
        return options
    weights = options.weights or shipped_weights(game.name)
    if weights is None:
        return options.with_changes(player="alphabeta")
    return options.with_changes(player="mcts", weights=str(weights))


def make_searcher(game: Game, options: PlayerOptions) -> Searcher:
    options = resolve_player(game, options)
    module_name = PLAYERS.get(options.player)
    if module_name is None:
        raise UnknownPlayerError(
            f"unknown player {options.player!r} (expected one of {', '.join(PLAYERS)})")
    module = importlib.import_module(module_name)
    return module.build(game, options)
