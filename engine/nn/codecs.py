"""The codec registry: a game's name -> its codec object (numpy only, no torch).

A codec holds everything the network side knows about one game: input planes, policy
indices, ONNX output names and axes, sample quantisation, board symmetries and which
network class it feeds.  The evaluator, the ONNX export, sample shards and the model
factory ask `get_codec(game)` instead of testing the game's name; a game's profile names
its codec module (engine/games/profile.py), so the game registry is the only list.
"""
from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any, Hashable, Protocol, Sequence

if TYPE_CHECKING:   # numpy loads with a codec, not with the registry: `uciok` stays fast
    import numpy as np

__all__ = ["GameCodec", "CellCodec", "get_codec", "codec_names"]



class GameCodec(Protocol):
    """What the network side asks of a game.  Frames and shapes: see each codec module."""
    name: str
    version: int                      # bumped when planes or indices change (checkpoints record it)
    planes: int                       # input planes C of [B, C, H, W]
    planes_by_version: dict[int, int]  # every version this engine reads -> its planes (a prefix)
    rule_planes: tuple[int, ...]      # planes that only some rule sets ever set: a fresh network's
                                      # stem reads them with weight 0 (no untrained bias, see build_model)
    outputs: tuple[str, ...]          # network/ONNX outputs: the policy head(s), then "wdl"
    network: str                      # "module:Class" of the torch network for this game
    symmetric: bool                   # board symmetries apply (augmentation, symmetric evaluation)
    factored: bool                    # policy p(from) * p(to | from): heads [B, F] and [B, F, S], index
                                      # from * S + slot; else one logit per index ([B, H, W])
    line_planes: int                  # planes derived from the input planes that a network may also read
                                      # (NetConfig.line_features; 0: the game has none)

    def encode(self, states: Sequence[Any], *, planes: int = ...) -> np.ndarray: ...
    def legal_index(self, state: Any) -> np.ndarray: ...
    def priors_batch(self, states: Sequence[Any], outputs: Sequence[np.ndarray]) -> list[np.ndarray]: ...
    def cache_key(self, state: Any) -> Hashable: ...
    def plane_shape(self, width: int, height: int) -> tuple[int, int]: ...
    def policy_size(self, width: int, height: int) -> int: ...
    def symmetries(self, width: int, height: int) -> list[tuple[int, ...]]: ...
    def plane_divisors(self) -> np.ndarray: ...
    def export_example(self, planes: int = ...) -> np.ndarray: ...
    def export_axes(self) -> dict[str, dict[int, str]]: ...
    def lines(self, planes: np.ndarray) -> np.ndarray: ...    # input planes -> the line planes


class CellCodec(GameCodec, Protocol):
    """A codec whose policy is one logit per board cell (gomoku): what symmetric
    evaluation needs to move planes and policies between board frames."""

    def batch_shape(self, states: Sequence[Any]) -> tuple[int, int]: ...
    def priors_from_logits(self, state: Any, logits: np.ndarray) -> np.ndarray: ...


def codec_names() -> tuple[str, ...]:
    """The games that have a codec (the games a network can play).  Reads every game's
    profile (imports each game's package, not its codec)."""
    from engine.games import game_names, game_profile
    return tuple(name for name in game_names() if game_profile(name).codec)


def get_codec(game: str) -> GameCodec:
    """The codec of `game` (its profile's codec module, imported on first use: a gomoku-only
    process never loads chess's codec); ValueError for a game without one."""
    from engine.games import GameSetupError, game_profile
    try:
        module = game_profile(game).codec
    except GameSetupError:
        module = None
    if module is None:
        raise ValueError(f"no network codec for game {game!r} (expected one of {', '.join(codec_names())})")
    return importlib.import_module(module).CODEC  # type: ignore[no-any-return]
