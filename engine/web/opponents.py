"""The web board's one seam to the player layer: built-in players by name and options.

Everything the board knows about building players goes through this module, so a change of
the player API (engine/players) is a change here only.
"""
from __future__ import annotations

import os
from importlib import resources
from typing import Any, Callable, Mapping, Sequence

from engine.games.base import Game
from engine.types import Searcher

__all__ = ["build_searcher", "player_names", "shipped_networks", "PAGE_OPTIONS", "PAGE_RANGES", "ExternalFactory"]

# The player options the page offers, with the type each is read as (the rest keep defaults).
PAGE_OPTIONS: dict[str, type] = {"player": str, "weights": str, "nodes": int, "batch": int, "cpuct": float,
                                 "threads": int, "hash_mb": int, "seed": int}

# What a page may ask of this machine (a network board's key holder included): the player's own
# ranges allow far more (Hash up to 64 GB), enough to exhaust the server's memory or cores.
PAGE_RANGES: dict[str, tuple[float, float]] = {"nodes": (1, 10_000_000), "batch": (1, 256), "cpuct": (0.0, 100.0),
                                               "threads": (1, os.cpu_count() or 1), "hash_mb": (1, 4096)}

# (game, protocol "uci" | "gomocup", argv) -> a Searcher driving that process; it may have close().
# Supplied by the command line layer (protocols/), since engine/ starts no processes.
ExternalFactory = Callable[[Game, str, Sequence[str]], Searcher]


def build_searcher(game: Game, options: Mapping[str, Any]) -> Searcher:
    """A built-in player for `game` from page options (PAGE_OPTIONS keys).  ValueError (unknown
    player, unreadable network) says what is wrong in one line."""
    from engine.players import PlayerOptions, make_searcher
    return make_searcher(game, PlayerOptions(**options))


def player_names() -> list[str]:
    """The built-in players, "auto" first (mcts with a shipped network, else alphabeta)."""
    from engine.players import PLAYER_NAMES
    return ["auto", *sorted(PLAYER_NAMES)]


def shipped_networks(game_name: str) -> list[str]:
    """Names of the networks shipped in weights/ for a game (`gomoku-sp1-res6x32`)."""
    try:
        files = [entry.name for entry in resources.files("weights").iterdir()]
    except ModuleNotFoundError:
        return []
    from engine.players.networks import default_names
    names = {name[:-3] for name in files if name.endswith(".pt") and name.startswith(game_name)}
    return sorted(names | {name for name in default_names() if name == game_name})
