"""Self-describing network files (torch).

A checkpoint is one `torch.save`d dict of plain values and tensors:
  format "plyzero", game, codec_version, net ("res6x64"), config (NetConfig dict),
  step, created (ISO time), notes, state_dict, sha256 (of the tensors' names, dtypes,
  shapes and bytes, so a flipped bit anywhere in the weights is caught).
Loading uses `torch.load(weights_only=True)`, so a file cannot run code; every way a
file can be unusable raises CheckpointError with a one-line message.
"""
from __future__ import annotations

import datetime
import hashlib
import re
from pathlib import Path
from typing import Any, Mapping

import torch
from torch import nn

from engine.nn.model import build_model
from engine.nn.files import atomic_write
from engine.nn.spec import (FORMAT, CheckpointError, NetConfig, check_meta, codec_version, network_planes,
                            parse_net)

__all__ = ["save_checkpoint", "load_checkpoint", "create_random_checkpoint", "tensor_sha256",
           "read_meta", "CheckpointError"]


def tensor_sha256(state_dict: Mapping[str, torch.Tensor]) -> str:
    """sha256 over every tensor (sorted by name): name, dtype, shape and raw bytes."""
    digest = hashlib.sha256()
    for name in sorted(state_dict):
        tensor = state_dict[name].detach().cpu().contiguous()
        digest.update(f"{name}|{tensor.dtype}|{tuple(tensor.shape)}|".encode())
        digest.update(tensor.reshape(-1).view(torch.uint8).numpy().tobytes())
    return digest.hexdigest()


def save_checkpoint(path: str | Path, model: nn.Module, meta: Mapping[str, Any] | None = None) -> dict:
    """Write `model` with its metadata (step, notes, created...) and return the metadata written."""
    config: NetConfig = model.config  # type: ignore[assignment]
    meta = dict(meta or {})
    state_dict = {k: v.detach().cpu().float() if v.is_floating_point() else v.detach().cpu()
                  for k, v in model.state_dict().items()}
    payload: dict[str, Any] = {
        "format": FORMAT,
        "game": config.game,
        "codec_version": codec_version(config.game, config.in_planes),
        "net": config.name,
        "config": config.to_dict(),
        "step": int(meta.get("step", 0)),
        "created": str(meta.get("created") or
                       datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")),
        "notes": str(meta.get("notes", "")),
        "sha256": tensor_sha256(state_dict),
        "state_dict": state_dict,
    }
    atomic_write(path, lambda handle: torch.save(payload, handle))
    return {k: v for k, v in payload.items() if k != "state_dict"}


def _read_payload(path: str | Path) -> dict:
    path = Path(path)
    if not path.is_file():
        raise CheckpointError(f"{path}: no such network file")
    try:
        payload = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # zip, pickle, unsafe-global and EOF errors all mean "unusable"
        raise CheckpointError(f"{path}: unreadable or unsafe network file ({_reason(exc)})") from None
    if not isinstance(payload, dict) or not isinstance(payload.get("state_dict"), dict):
        raise CheckpointError(f"{path}: not a PlyZero network file")
    return payload


def _reason(exc: Exception) -> str:
    """The first sentence of a loader error, printable, without torch's advice paragraphs."""
    text = str(exc)
    if "Weights only load failed" in text:
        return "refused by weights-only loading: it holds objects no network file has"
    text = re.sub(r"\x1b\[[0-9;]*m|[^ -~]", "", text.strip().splitlines()[0] if text.strip() else "")
    return (text.split(". ")[0][:120]) or type(exc).__name__


def read_meta(path: str | Path, expect_game: str | None = None) -> dict:
    """The checked metadata of a checkpoint (everything but the weights)."""
    payload = _read_payload(path)
    check_meta(payload, str(path), expect_game)
    return {k: v for k, v in payload.items() if k != "state_dict"}


def load_checkpoint(path: str | Path, expect_game: str | None = None) -> tuple[nn.Module, dict]:
    """(model in eval mode on the CPU, metadata); CheckpointError if anything is off."""
    payload = _read_payload(path)
    source = str(path)
    check_meta(payload, source, expect_game)
    state_dict = payload["state_dict"]
    if not all(isinstance(t, torch.Tensor) for t in state_dict.values()):
        raise CheckpointError(f"{source}: weights are not all tensors")
    if tensor_sha256(state_dict) != payload.get("sha256"):
        raise CheckpointError(f"{source}: weights do not match their sha256 (file damaged or edited)")
    config = NetConfig.from_dict(payload.get("config") or {})
    if config.game != payload["game"] or config.in_planes != network_planes(payload):
        raise CheckpointError(f"{source}: network config does not fit the {payload['game']} codec")
    model = build_model(config)
    try:
        model.load_state_dict(state_dict, strict=True)
    except RuntimeError as exc:
        raise CheckpointError(f"{source}: weights do not fit {config.name} "
                              f"({str(exc).splitlines()[0][:120]})") from None
    return model.eval(), {k: v for k, v in payload.items() if k != "state_dict"}


def create_random_checkpoint(path: str | Path, game: str, net: str = "res2x32", seed: int = 0,
                             notes: str = "random weights") -> dict:
    """A randomly initialised network saved as a checkpoint (tests, demos); returns its metadata."""
    config = parse_net(net, game)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = build_model(config)
        # Random BatchNorm statistics, so random nets are not nearly uniform after BN.
        for module in model.modules():
            if isinstance(module, nn.BatchNorm2d):
                assert module.running_mean is not None and module.running_var is not None
                module.running_mean.uniform_(-0.1, 0.1)
                module.running_var.uniform_(0.5, 1.5)
                module.weight.data.uniform_(0.5, 1.5)
                module.bias.data.uniform_(-0.1, 0.1)
    return save_checkpoint(path, model, {"step": 0, "notes": notes})
