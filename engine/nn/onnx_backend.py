"""ONNX Runtime inference, and the ONNX export cache that lets a process run without torch.

An export is a plain .onnx file whose metadata_props carry the checkpoint metadata
(game, net, codec version...) and `checkpoint_sha256`, the sha256 of the .pt file's
bytes it came from.  Exports live in a cache directory named by that sha (never next
to the user's weights); a sidecar `<weights>.onnx` beside a checkpoint (how shipped
weights come) is used when its recorded sha matches the checkpoint.  Finding an
export needs only hashlib and onnxruntime, so a second start of the Gomocup brain
never imports torch.  Only the export functions import torch (lazily).
"""
from __future__ import annotations

import json
import os
import tempfile
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from engine.nn.codecs import get_codec
from engine.nn.files import atomic_write, file_sha256
from engine.nn.spec import CheckpointError, check_meta

__all__ = ["OnnxRunner", "default_cache_dir", "open_export", "export_path", "export_onnx",
           "export_onnx_bytes", "export_sidecar", "int8_sidecar_path", "read_onnx_meta",
           "onnxruntime_available", "input_planes", "with_line_planes", "META_KEY"]

META_KEY = "plyzero"


def onnxruntime_available() -> bool:
    try:
        import onnxruntime  # noqa: F401
    except ImportError:
        return False
    return True


def default_cache_dir() -> Path:
    """~/.cache/plyzero/onnx (XDG_CACHE_HOME respected); a temp dir if home is not writable."""
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "plyzero" / "onnx"
    try:
        base.mkdir(parents=True, exist_ok=True)
        if os.access(base, os.W_OK):
            return base
    except OSError:
        pass
    fallback = Path(tempfile.gettempdir()) / f"plyzero-onnx-{os.getuid() if hasattr(os, 'getuid') else 0}"
    fallback.mkdir(parents=True, exist_ok=True)
    return fallback


def _session(source: Path | bytes, threads: int, device: str) -> Any:
    import onnxruntime as ort
    options = ort.SessionOptions()
    options.intra_op_num_threads = max(1, threads)
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.log_severity_level = 3  # errors only: a Gomocup brain must keep stderr quiet
    providers = ["CPUExecutionProvider"]
    if device == "cuda" and "CUDAExecutionProvider" in ort.get_available_providers():
        providers.insert(0, "CUDAExecutionProvider")
    try:
        model = source if isinstance(source, bytes) else str(source)
        return ort.InferenceSession(model, sess_options=options, providers=providers)
    except Exception as exc:  # onnxruntime raises its own Fail/InvalidGraph types
        name = "in-memory export" if isinstance(source, bytes) else source
        raise CheckpointError(f"{name}: not a usable ONNX network "
                              f"({(str(exc).splitlines() or ['?'])[0][:120]})") from None


def read_onnx_meta(session: Any, source: str) -> dict:
    raw = session.get_modelmeta().custom_metadata_map.get(META_KEY)
    if raw is None:
        raise CheckpointError(f"{source}: ONNX file without PlyZero metadata")
    try:
        meta = json.loads(raw)
    except ValueError:
        raise CheckpointError(f"{source}: damaged PlyZero metadata in ONNX file") from None
    return meta


class OnnxRunner:
    """One onnxruntime session: planes [B, C, H, W] float32 -> outputs (policy..., wdl logits).

    `source` is an .onnx file or the bytes of an export (in-memory models: no file left behind).
    """

    def __init__(self, source: str | Path | bytes, *, threads: int = 1, device: str = "cpu",
                 expect_game: str | None = None):
        self.path = None if isinstance(source, bytes) else Path(source)
        name = str(self.path or "in-memory export")
        self.session = _session(source if isinstance(source, bytes) else Path(source), threads, device)
        self.meta = read_onnx_meta(self.session, name)
        check_meta(self.meta, name, expect_game)
        self.game: str = self.meta["game"]
        self._codec = get_codec(self.game)
        self._outputs = list(self._codec.outputs)
        self._input = self.session.get_inputs()[0].name
        self._line_planes = bool(self.meta.get("config", {}).get("line_features"))

    def run(self, planes: np.ndarray) -> list[np.ndarray]:
        planes = with_line_planes(planes, self._codec, self._line_planes)
        return self.session.run(self._outputs, {self._input: planes})


def input_planes(config: dict) -> int:
    """Planes an export of a network of `config` (NetConfig.to_dict()) reads: the codec's, then
    the line planes of a network that has them (computed outside the graph: with_line_planes)."""
    extra = get_codec(config["game"]).line_planes if config.get("line_features") else 0
    return int(config["in_planes"]) + extra


def with_line_planes(planes: np.ndarray, codec: Any, lines: bool) -> np.ndarray:
    """The codec's planes, with its line planes appended when the network reads them."""
    return np.concatenate([planes, codec.lines(planes)], axis=1) if lines else planes


def open_export(weights: str | Path, *, cache_dir: str | Path | None = None, threads: int = 1,
                device: str = "cpu", expect_game: str | None = None,
                checkpoint_sha: str | None = None,
                precision: str = "fp32") -> tuple[OnnxRunner | None, str]:
    """(a runner over an existing export of this checkpoint or None, the checkpoint's sha256).

    Looks at the int8 sidecar `<weights>.int8.onnx` first when `precision` allows it (on CPU),
    then the sidecar `<weights>.onnx`, then the cache; an export whose recorded
    checkpoint_sha256 differs (stale) is ignored.  precision "int8" with no usable int8
    sidecar is a CheckpointError.  Needs no torch.
    """
    weights = Path(weights)
    sha = checkpoint_sha or file_sha256(weights)
    wants_int8 = precision == "int8" or (precision == "auto" and device == "cpu")
    int8 = [int8_sidecar_path(weights)] if wants_int8 else []
    floats = [] if precision == "int8" else [weights.with_suffix(".onnx"), export_path(sha, cache_dir)]
    for candidate in int8 + floats:
        if not candidate.is_file():
            continue
        try:
            runner = OnnxRunner(candidate, threads=threads, device=device)
        except CheckpointError:
            continue  # damaged or foreign export: re-export rather than fail
        if runner.meta.get("checkpoint_sha256") == sha:
            check_meta(runner.meta, str(weights), expect_game)
            return runner, sha
    if precision == "int8":
        raise CheckpointError(f"{weights}: no int8 export of this checkpoint "
                              f"(write one with `engine quantize {weights}`)")
    return None, sha


def int8_sidecar_path(weights: str | Path) -> Path:
    """`<weights>.int8.onnx`: where `engine quantize` writes a checkpoint's int8 export."""
    return Path(weights).with_suffix(".int8.onnx")


EXPORT_KIND = "unpadded"  # in the cache's file names: exports from before it masked every layer


def export_path(checkpoint_sha: str, cache_dir: str | Path | None = None) -> Path:
    """The cache's export of a checkpoint; named by kind too, so an older (slower, masked)
    export left in a cache is made again once rather than used for good."""
    return Path(cache_dir or default_cache_dir()) / f"{checkpoint_sha}.{EXPORT_KIND}.onnx"


def export_onnx_bytes(model: Any, meta: dict, checkpoint_sha: str) -> bytes:
    """Export a copy of `model` (torch; the caller's model is left untouched) to ONNX bytes,
    with the codec's dynamic axes (batch; height and width for gomoku) and `meta` plus
    checkpoint_sha256 in the file's metadata.  The graph is for unpadded batches
    (model.unpadded: no on-board mask), which is how NetworkEvaluator sends them."""
    import copy
    import io

    import onnx
    import torch

    from engine.nn.model import unpadded

    codec = get_codec(meta["game"])
    dummy = torch.from_numpy(codec.export_example(planes=input_planes(model.config.to_dict())))
    snapshot = unpadded(copy.deepcopy(model).float().cpu().eval())
    buffer = io.BytesIO()
    with warnings.catch_warnings():  # the TorchScript exporter's deprecation notice
        warnings.simplefilter("ignore")
        with torch.inference_mode():
            # torch annotates f as a path only, but the TorchScript exporter (dynamo=False)
            # writes to any file-like object ("Normally f can be a file-like object").
            torch.onnx.export(snapshot, (dummy,), buffer,  # type: ignore[arg-type]
                              dynamo=False, input_names=["planes"],
                              output_names=list(codec.outputs), dynamic_axes=codec.export_axes(),
                              opset_version=17, do_constant_folding=True)
    proto = onnx.load_from_string(buffer.getvalue())
    record = {k: v for k, v in meta.items() if isinstance(v, (str, int, float, dict, list))}
    record["checkpoint_sha256"] = checkpoint_sha
    entry = proto.metadata_props.add()
    entry.key, entry.value = META_KEY, json.dumps(record, sort_keys=True)
    return proto.SerializeToString()


def export_onnx(model: Any, path: str | Path, meta: dict, checkpoint_sha: str) -> Path:
    """export_onnx_bytes written atomically to `path` (two engines exporting at once is fine)."""
    data = export_onnx_bytes(model, meta, checkpoint_sha)
    atomic_write(path, lambda handle: handle.write(data))
    return Path(path)


def export_sidecar(weights: str | Path) -> Path:
    """Write `<weights>.onnx` beside a checkpoint (for shipped weights: lets a brain start
    without torch even on its first run).  Imports torch."""
    from engine.nn.checkpoint import load_checkpoint
    weights = Path(weights)
    model, meta = load_checkpoint(weights)
    return export_onnx(model, weights.with_suffix(".onnx"), meta, file_sha256(weights))


if __name__ == "__main__":
    import argparse
    parser = argparse.ArgumentParser(description="export checkpoints to sidecar .onnx files")
    parser.add_argument("weights", nargs="+")
    for name in parser.parse_args().weights:
        try:
            print(export_sidecar(name))
        except CheckpointError as exc:
            raise SystemExit(f"error: {exc}") from None
