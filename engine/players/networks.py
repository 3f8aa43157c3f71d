"""Which network a player uses: a file, a shipped network by name, or the game's default.

The one place that looks into the installed `weights` package; engine/search and
engine/nn are handed a path and never ask.  A game's default is an entry of
`weights/index.json` (`"chess": {"file": "chess-dagger6-res6x64.pt", "sha256": …}`), not a
copy of the file: `chess` and `gomoku` are names for shipped networks, checked by sha256.
A rule may have its own default (`gomoku-caro`), which players of that rule load instead.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

__all__ = ["shipped_weights", "find_weights", "resolve_network", "default_names", "WeightsIndexError"]

INDEX = "index.json"


class WeightsIndexError(ValueError):
    """weights/index.json names a file that is missing or whose bytes are not the recorded ones."""


def _shipped(file_name: str) -> Path | None:
    """A file of the installed `weights` package, if it is there."""
    from importlib import resources   # only when a network is asked for: `uciok` stays fast
    try:
        path = Path(str(resources.files("weights") / file_name))
    except ModuleNotFoundError:
        return None
    return path if path.is_file() else None


def _defaults() -> dict[str, dict[str, str]]:
    index = _shipped(INDEX)
    if index is None:
        return {}
    return dict(json.loads(index.read_text()).get("defaults", {}))


def default_names() -> list[str]:
    """The default names the index gives (`chess`, `gomoku`)."""
    return sorted(_defaults())


def _default(name: str) -> Path | None:
    """The shipped file the index names `name` (a game's default), its sha256 checked."""
    entry = _defaults().get(name)
    if entry is None:
        return None
    path = _shipped(entry["file"])
    if path is None:
        raise WeightsIndexError(f"weights/{INDEX}: {name!r} names {entry['file']!r}, which is not shipped")
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    if digest != entry["sha256"]:
        raise WeightsIndexError(f"weights/{INDEX}: {entry['file']} has sha256 {digest[:12]}…, "
                                f"the index says {entry['sha256'][:12]}…")
    return path


def shipped_weights(game_name: str) -> Path | None:
    """The default network shipped for a game (its weights/index.json entry)."""
    return _default(game_name)


def find_weights(name: str) -> str:
    """A network file as given, else a default by name (`chess`), else a shipped one by name
    (`gomoku-sp1-res6x32`), else `name` unchanged (loading it then says what is missing)."""
    if Path(name).is_file():
        return name
    stem = name[:-3] if name.endswith(".pt") else name
    shipped = _default(stem) or _shipped(name if name.endswith((".pt", ".onnx")) else f"{name}.pt")
    return str(shipped) if shipped is not None else name


def resolve_network(game_name: str, weights: str | None, rule: str = "") -> str | None:
    """The network a player of `game_name` under `rule` should load: `weights` (a path or a
    shipped name) if given, else the rule's own default (`gomoku-caro`) where the index has
    one, else the game's shipped default, else None (no network)."""
    if weights is not None:
        return find_weights(weights)
    shipped = (_default(f"{game_name}-{rule}") if rule else None) or shipped_weights(game_name)
    return None if shipped is None else str(shipped)
