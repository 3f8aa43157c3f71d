"""Torch-free facts about networks: names, configs, checkpoint metadata rules, errors.

Everything here is needed both by the torch path (model, checkpoint) and by the
ONNX-only path that a lean Gomocup brain takes without importing torch, so it must
stay numpy/stdlib only.
"""
from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import Any, Mapping

from engine.nn.codecs import codec_names, get_codec

__all__ = [
    "CheckpointError", "NetConfig", "parse_net", "NAMED_NETS", "FORMAT",
    "codec_version", "network_planes", "check_meta", "DEVICES", "BACKENDS", "ONNX_PRECISIONS",
]

FORMAT = "plyzero"
NAMED_NETS = ("res2x32", "res6x64", "res10x128")
DEVICES = ("auto", "cpu", "cuda", "mps")      # where a network runs
BACKENDS = ("auto", "torch", "onnx")          # which runtime runs it
# Network arithmetic on the CPU's onnx backend; "auto": the int8 sidecar when there is one
# (engine/nn/quantize.py), else float.  (Self-play's GPU server has its own: engine/train/inference.py.)
ONNX_PRECISIONS = ("auto", "fp32", "int8")
_NET_NAME = re.compile(r"^res(\d+)x(\d+)(-lines)?$")
LINES_SUFFIX = "-lines"


class CheckpointError(ValueError):
    """A network file that cannot be used; the message is one line, fit for a protocol error."""


@dataclass(frozen=True)
class NetConfig:
    """Shape of a residual policy-value network.  `name` is the canonical "res{B}x{C}".

    in_planes comes from the game's codec; value_channels / policy_channels size the heads.
    reply_head: an auxiliary head that predicts the opponent's answer (KataGo's), trained
    only (TrainConfig.reply_weight); play and the ONNX export never compute it.  Gomoku only.
    line_features: the trunk also reads fixed planes of the lines of five through each cell
    (engine/nn/model.py LineFeatures; the name's "-lines").  Gomoku only.
    """
    game: str
    blocks: int
    channels: int
    in_planes: int
    value_channels: int = 32
    value_hidden: int = 128
    policy_channels: int = 32
    reply_head: bool = False
    line_features: bool = False

    @property
    def name(self) -> str:
        return f"res{self.blocks}x{self.channels}" + (LINES_SUFFIX if self.line_features else "")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, config: Mapping[str, Any]) -> "NetConfig":
        try:
            return cls(**{k: config[k] for k in config if k in cls.__dataclass_fields__})
        except TypeError as exc:
            raise CheckpointError(f"bad network config: {exc}") from None


def _has_codec(game: str) -> bool:
    """A network can play `game` (only that game's package is imported)."""
    try:
        get_codec(game)
    except ValueError:
        return False
    return True


def parse_net(name: str, game: str) -> NetConfig:
    """"res6x64" -> NetConfig for `game`; any res{B}x{C} with 1..40 blocks, 8..512 channels;
    "res6x32-lines" reads the codec's line planes too (gomoku's)."""
    if not _has_codec(game):
        raise CheckpointError(f"unknown game {game!r} (expected one of {', '.join(codec_names())})")
    match = _NET_NAME.match(name.strip().lower())
    if match is None:
        raise CheckpointError(f"bad network name {name!r} (expected res<blocks>x<channels>[{LINES_SUFFIX}], "
                              f"e.g. {', '.join(NAMED_NETS)})")
    blocks, channels = int(match.group(1)), int(match.group(2))
    if not (1 <= blocks <= 40 and 8 <= channels <= 512):
        raise CheckpointError(f"network {name!r} out of range (1..40 blocks, 8..512 channels)")
    lines = match.group(3) is not None
    codec = get_codec(game)
    if lines and not codec.line_planes:
        raise CheckpointError(f"network {name!r}: {game} networks read no line planes")
    return NetConfig(game=game, blocks=blocks, channels=channels, in_planes=codec.planes, line_features=lines)


def codec_version(game: str, in_planes: int | None = None) -> int:
    """The codec version a network of `game` reads: the current one, or the older version
    whose planes are `in_planes` (a network trained before the codec grew planes)."""
    codec = get_codec(game)
    if in_planes is None or in_planes == codec.planes:
        return codec.version
    for version, planes in codec.planes_by_version.items():
        if planes == in_planes:
            return version
    raise CheckpointError(f"no {game} codec version has {in_planes} input planes")


def network_planes(meta: Mapping[str, Any]) -> int:
    """Input planes of the network `meta` describes (checked by check_meta): the first
    that many of the codec's encoding."""
    return int(get_codec(meta["game"]).planes_by_version[meta["codec_version"]])


def check_meta(meta: Mapping[str, Any], source: str, expect_game: str | None = None) -> None:
    """Raise CheckpointError unless `meta` describes a usable network for `expect_game`."""
    if meta.get("format") != FORMAT:
        raise CheckpointError(f"{source}: not a PlyZero network (format {meta.get('format')!r})")
    game = meta.get("game")
    if not isinstance(game, str) or not _has_codec(game):
        raise CheckpointError(f"{source}: unknown game {game!r}")
    if expect_game is not None and game != expect_game:
        raise CheckpointError(f"{source}: a {game} network cannot play {expect_game}")
    readable = get_codec(game).planes_by_version
    if meta.get("codec_version") not in readable:
        raise CheckpointError(f"{source}: {game} codec version {meta.get('codec_version')!r}, "
                              f"this engine reads versions {', '.join(map(str, readable))}")
