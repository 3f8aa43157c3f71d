"""Which network a player uses: a file, a shipped network by name, or the game's default.

The one place that looks into the installed `weights` package; engine/search and
engine/nn are handed a path and never ask.
"""
from __future__ import annotations

from pathlib import Path

__all__ = ["shipped_weights", "find_weights", "resolve_network"]


def _shipped(file_name: str) -> Path | None:
    """A file of the installed `weights` package, if it is there."""
    from importlib import resources   # only when a network is asked for: `uciok` stays fast
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


def resolve_network(game_name: str, weights: str | None) -> str | None:
    """The network a player of `game_name` should load: `weights` (a path or a shipped
    name) if given, else the game's shipped default, else None (no network)."""
    if weights is not None:
        return find_weights(weights)
    shipped = shipped_weights(game_name)
    return None if shipped is None else str(shipped)
