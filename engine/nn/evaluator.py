"""NetworkEvaluator: the Evaluator protocol over a policy-value network.

`evaluate(states) -> list[Evaluation]`: priors over each state's legal_moves() (a
read-only float64 numpy array in that order, summing to 1) and value = W - L in
[-1, 1] for the side to move; extra["wdl"] = (win, draw, loss).  Search never sees a
tensor.  Results are cached in an LRU keyed by everything the input planes depend on
(codec.cache_key), identical states within a batch are evaluated once, and a batch
is split into forward passes of at most `max_batch` positions.

Backends behind one interface: eager torch (CUDA, MPS or CPU) and ONNX Runtime (CPU,
or CUDA when onnxruntime-gpu is present).  On CPU, "auto" picks ONNX Runtime when it is
importable: measured on the project's 2-core machines (res6x64, batch 1..64) it does
1.2-2.7x the positions per CPU-second of eager torch with one thread, and keeps its
speed with two threads under load where torch collapses (`python -m
engine.nn.throughput`).  The ONNX path can run without torch ever being imported
(cached export, see onnx_backend): ~80 MB RSS against ~245 MB with torch
(`python benchmarks/nn_footprint.py`), which keeps a Gomocup brain under its 350 MB.
"""
from __future__ import annotations

import random
import sys
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any, Hashable, Sequence

import numpy as np

from engine.nn.codecs import CellCodec, GameCodec, get_codec
from engine.nn.files import atomic_write
from engine.nn.onnx_backend import (OnnxRunner, export_onnx_bytes, export_path,
                                    onnxruntime_available, open_export)
from engine.nn.spec import BACKENDS, DEVICES, ONNX_PRECISIONS, CheckpointError, check_meta, network_planes
from engine.types import Evaluation

__all__ = ["NetworkEvaluator", "resolve_device", "SYMMETRIES", "BACKENDS"]

SYMMETRIES = ("none", "random", "average")
_NEEDS_ONNX = "the onnx backend needs onnxruntime and onnx (pip install 'plyzero[onnx]')"


def _gpu_hint() -> bool:
    """Could a GPU be present?  Answered without importing torch (which costs ~300 MB RSS)."""
    if Path("/proc/driver/nvidia/version").exists() or Path("/dev/nvidia0").exists():
        return True
    return sys.platform == "darwin"


def resolve_device(device: str) -> str:
    """"auto" -> "cuda", then "mps", then "cpu".  torch is imported only if a GPU may exist."""
    if device not in DEVICES:
        raise ValueError(f"unknown device {device!r} (expected one of {', '.join(DEVICES)})")
    if device == "cpu" or (device == "auto" and "torch" not in sys.modules and not _gpu_hint()):
        return "cpu"
    import torch
    cuda = torch.cuda.is_available()
    mps = bool(getattr(torch.backends, "mps", None)) and torch.backends.mps.is_available()
    if device == "auto":
        return "cuda" if cuda else "mps" if mps else "cpu"
    if (device == "cuda" and not cuda) or (device == "mps" and not mps):
        raise ValueError(f"device {device!r} is not available on this machine")
    return device


class _TorchRunner:
    """Eager torch: planes [B, C, H, W] float32 -> list of numpy outputs (policy..., wdl)."""

    def __init__(self, model: Any, device: str, half: bool, threads: int):
        import torch
        self._torch = torch
        if device == "cpu":
            torch.set_num_threads(max(1, threads))
        self.dtype = torch.float16 if half else torch.float32
        self.device = device
        self.model = model.to(device=device, dtype=self.dtype).eval()

    def run(self, planes: np.ndarray) -> list[np.ndarray]:
        torch = self._torch
        with torch.inference_mode():
            x = torch.from_numpy(planes).to(device=self.device, dtype=self.dtype)
            return [out.float().cpu().numpy() for out in self.model(x)]


class _LRU:
    """Evaluations by cache key, least recently used evicted first, bounded in entries and bytes."""

    ENTRY_OVERHEAD = 900  # measured: Evaluation, its dict, wdl tuple, array header, key, LRU node

    def __init__(self, size: int, megabytes: float):
        self.size, self.max_bytes = size, int(megabytes * 2**20)
        self._items: OrderedDict[Hashable, Evaluation] = OrderedDict()
        self._lock = threading.Lock()
        self.bytes = self.hits = self.misses = 0

    @classmethod
    def cost(cls, value: Evaluation) -> int:
        return cls.ENTRY_OVERHEAD + np.asarray(value.priors).nbytes

    def get(self, key: Hashable) -> Evaluation | None:
        with self._lock:
            found = self._items.get(key)
            if found is None:
                self.misses += 1
                return None
            self._items.move_to_end(key)
            self.hits += 1
            return found

    def put(self, key: Hashable, value: Evaluation) -> None:
        if self.size <= 0 or self.max_bytes <= 0:
            return
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None:
                self.bytes -= self.cost(old)
            self._items[key] = value
            self.bytes += self.cost(value)
            while self._items and (len(self._items) > self.size or self.bytes > self.max_bytes):
                _, evicted = self._items.popitem(last=False)
                self.bytes -= self.cost(evicted)

    def __len__(self) -> int:
        return len(self._items)


def _softmax_rows(logits: np.ndarray) -> np.ndarray:
    z = np.exp(logits - logits.max(axis=1, keepdims=True))
    return z / z.sum(axis=1, keepdims=True)


class NetworkEvaluator:
    """Batched network evaluation for one game.  `source`: a .pt checkpoint, an .onnx export,
    or a torch model (ChessNet / GomokuNet; evaluated as a snapshot, the caller's model is
    never moved, cast or exported to disk).

    device: "auto" | "cpu" | "cuda" | "mps".  backend: "auto" | "torch" | "onnx".
    threads: intra-op threads (torch.set_num_threads / onnxruntime intra_op_num_threads).
    cache_size / cache_mb: LRU bounds in entries and in estimated bytes, whichever bites
    first (0 disables; a gomoku 15x15 entry is ~2.7 kB, a chess one ~1.1 kB).
    symmetry (gomoku only): "none", "random" (one random board symmetry per evaluation)
    or "average" (mean over all symmetries).
    half: float16 weights; None = on CUDA only.  cache_dir: where ONNX exports are kept.
    precision (a checkpoint on the CPU's ONNX path): "auto" runs its int8 sidecar when there
    is one (engine/nn/quantize.py), "fp32" never does, "int8" insists on it.
    """

    def __init__(self, source: Any, *, device: str = "auto", backend: str = "auto",
                 threads: int = 1, cache_size: int = 200_000, cache_mb: float = 64.0,
                 symmetry: str = "none",
                 half: bool | None = None, seed: int | None = None,
                 cache_dir: str | Path | None = None, max_batch: int = 256,
                 expect_game: str | None = None, precision: str = "auto"):
        if backend not in BACKENDS:
            raise ValueError(f"unknown backend {backend!r} (expected one of {', '.join(BACKENDS)})")
        if symmetry not in SYMMETRIES:
            raise ValueError(f"unknown symmetry {symmetry!r} (expected one of {', '.join(SYMMETRIES)})")
        self.device = resolve_device(device)
        self.threads, self.max_batch, self.cache_dir = threads, max(1, max_batch), cache_dir
        self.half = (self.device == "cuda") if half is None else half
        if precision not in ONNX_PRECISIONS:
            raise ValueError(f"unknown precision {precision!r} (expected one of {', '.join(ONNX_PRECISIONS)})")
        self._runner, self.meta, self.backend = self._open(source, backend, expect_game, precision)
        # what actually runs: "int8" only when an int8 export was found
        self.precision: str = self.meta.get("precision", "fp32")
        self.game: str = self.meta["game"]
        self.codec: GameCodec = get_codec(self.game)
        self.in_planes = network_planes(self.meta)     # an older codec version reads a prefix
        if symmetry != "none" and not self.codec.symmetric:
            raise ValueError(f"symmetry {symmetry!r} is for games with board symmetries (gomoku), "
                             f"not {self.game}")
        self.symmetry = symmetry
        self.cache = _LRU(cache_size, cache_mb)
        self._rng = random.Random(seed)
        self._perms: dict[tuple[int, int], list[np.ndarray]] = {}

    # -- opening a network -------------------------------------------------------------
    def _open(self, source: Any, backend: str, expect_game: str | None,
              precision: str) -> tuple[Any, dict, str]:
        use_onnx = backend == "onnx" or (backend == "auto" and self.device == "cpu"
                                         and onnxruntime_available())
        if backend == "onnx" and not onnxruntime_available():
            raise ValueError(_NEEDS_ONNX)
        if precision == "int8" and not (use_onnx and self.device == "cpu" and isinstance(source, (str, Path))):
            raise ValueError("precision int8 runs on the CPU's onnx backend, from a checkpoint file "
                             "with an int8 export")
        if isinstance(source, (str, Path)):
            path = Path(source)
            if path.suffix == ".onnx":
                if backend == "torch":
                    raise ValueError(f"{path}: an ONNX file needs the onnx backend")
                runner = OnnxRunner(path, threads=self.threads, device=self.device,
                                    expect_game=expect_game)
                return runner, runner.meta, "onnx"
            if not path.is_file():
                raise CheckpointError(f"{path}: no such network file")
            if use_onnx:
                exported, sha = open_export(path, cache_dir=self.cache_dir, threads=self.threads,
                                            device=self.device, expect_game=expect_game,
                                            precision=precision)
                if exported is not None:
                    return exported, exported.meta, "onnx"
            from engine.nn.checkpoint import load_checkpoint
            model, meta = load_checkpoint(path, expect_game)
            if use_onnx:
                return self._export(model, meta, sha, backend)
            return _TorchRunner(model, self.device, self.half, self.threads), meta, "torch"
        meta = _model_meta(source)
        check_meta(meta, "model", expect_game)
        if use_onnx:
            try:
                data = export_onnx_bytes(source, meta, "in-memory")
            except ImportError:
                if backend == "onnx":
                    raise ValueError(_NEEDS_ONNX) from None
            else:
                runner = OnnxRunner(data, threads=self.threads, device=self.device)
                return runner, runner.meta, "onnx"
        import copy  # a snapshot: moving to the device or to half must not touch the caller's model
        return _TorchRunner(copy.deepcopy(source), self.device, self.half, self.threads), meta, "torch"

    def _export(self, model: Any, meta: dict, sha: str, backend: str) -> tuple[Any, dict, str]:
        """Export a loaded checkpoint into the cache (found there by sha next time)."""
        try:
            data = export_onnx_bytes(model, meta, sha)
        except ImportError:  # the onnx package (exporter side) is missing: eager torch serves
            if backend == "onnx":
                raise ValueError(_NEEDS_ONNX) from None
            return _TorchRunner(model, self.device, self.half, self.threads), meta, "torch"
        target = export_path(sha, self.cache_dir)
        try:
            atomic_write(target, lambda handle: handle.write(data))
            source: Path | bytes = target
        except OSError:  # read-only cache: run from memory, export again next start
            source = data
        runner = OnnxRunner(source, threads=self.threads, device=self.device)
        return runner, runner.meta, "onnx"

    # -- evaluation ------------------------------------------------------------------------
    def evaluate(self, states: Sequence[Any]) -> list[Evaluation]:
        """Priors over legal_moves() and side-to-move value for each state; cached."""
        results: list[Evaluation | None] = [None] * len(states)
        pending: dict[Hashable, list[int]] = {}
        for i, state in enumerate(states):
            key = self.codec.cache_key(state)
            hit = self.cache.get(key)
            if hit is not None:
                results[i] = hit
            else:
                pending.setdefault(key, []).append(i)
        if pending:
            todo = [states[where[0]] for where in pending.values()]
            for (key, where), evaluation in zip(pending.items(), self.evaluate_uncached(todo)):
                self.cache.put(key, evaluation)
                for i in where:
                    results[i] = evaluation
        return results  # type: ignore[return-value]

    def evaluate_uncached(self, states: Sequence[Any]) -> list[Evaluation]:
        """Every state through the network, no cache and no de-duplication (benchmarks)."""
        out: list[Evaluation] = []
        for start in range(0, len(states), self.max_batch):
            chunk = states[start:start + self.max_batch]
            if self.symmetry == "none":
                out.extend(self._plain(chunk))
            else:
                out.extend(self._symmetric(chunk))
        return out

    def _plain(self, states: Sequence[Any]) -> list[Evaluation]:
        out: list[Evaluation | None] = [None] * len(states)
        for rows in _same_game_groups(states):
            group = [states[i] for i in rows]
            outputs = self._runner.run(self.codec.encode(group, planes=self.in_planes))
            priors = self.codec.priors_batch(group, outputs[:-1])
            wdl = _softmax_rows(outputs[-1].astype(np.float64))
            for i, p, w in zip(rows, priors, wdl):
                out[i] = _evaluation(p, w)
        return out  # type: ignore[return-value]

    def _symmetric(self, states: Sequence[Any]) -> list[Evaluation]:
        """Board symmetries (gomoku): each state through one (random) or all of them."""
        codec: CellCodec = self.codec  # type: ignore[assignment]   # symmetric codecs are cell codecs
        jobs: list[tuple[int, np.ndarray]] = []
        for i, state in enumerate(states):
            perms = self._symmetry_perms(state.width, state.height)
            chosen = perms if self.symmetry == "average" else [self._rng.choice(perms)]
            jobs.extend((i, perm) for perm in chosen)
        priors_sum = [np.zeros(len(s.legal_moves())) for s in states]
        wdl_sum = np.zeros((len(states), 3))
        counts = np.zeros(len(states))
        by_size = _same_game_groups([states[i] for i, _ in jobs])  # a view keeps its board's shape
        parts = [[jobs[j] for j in rows[start:start + self.max_batch]]
                 for rows in by_size for start in range(0, len(rows), self.max_batch)]
        for part in parts:
            h, w = codec.batch_shape([states[i] for i, _ in part])
            planes = np.zeros((len(part), self.in_planes, h, w), dtype=np.float32)
            for row, (i, perm) in enumerate(part):
                s = states[i]
                own = codec.encode([s], planes=self.in_planes).reshape(self.in_planes, -1)
                moved = np.empty_like(own)
                moved[:, perm] = own  # cell c goes to perm[c]
                planes[row, :, :s.height, :s.width] = moved.reshape(-1, s.height, s.width)
            policy, wdl_logits = self._runner.run(planes)
            wdl = _softmax_rows(wdl_logits.astype(np.float64))
            for row, (i, perm) in enumerate(part):
                s = states[i]
                cells = policy[row, :s.height, :s.width].reshape(-1)[perm]  # back to s's frame
                priors_sum[i] += codec.priors_from_logits(s, cells.reshape(s.height, s.width))
                wdl_sum[i] += wdl[row]
                counts[i] += 1
        return [_evaluation(priors_sum[i] / counts[i], wdl_sum[i] / counts[i])
                for i in range(len(states))]

    def _symmetry_perms(self, width: int, height: int) -> list[np.ndarray]:
        perms = self._perms.get((width, height))
        if perms is None:
            perms = [np.asarray(p, dtype=np.int64) for p in self.codec.symmetries(width, height)]
            self._perms[(width, height)] = perms
        return perms

    def __repr__(self) -> str:
        return (f"NetworkEvaluator({self.game} {self.meta.get('net')} step {self.meta.get('step')}, "
                f"{self.backend} on {self.device}, threads={self.threads})")


def _same_game_groups(states: Sequence[Any]) -> list[list[int]]:
    """Indices of `states` grouped by game (a board size and rule is a game of its own), so
    that no batch is padded: the ONNX exports leave out the on-board mask
    (engine.nn.model.UnpaddedBoards) and are exact only on boards that fill their planes."""
    groups: dict[Any, list[int]] = {}
    for i, state in enumerate(states):
        groups.setdefault(state.game, []).append(i)
    return list(groups.values())


def _evaluation(priors: np.ndarray, wdl: np.ndarray) -> Evaluation:
    priors = np.asarray(priors, dtype=np.float64)
    priors.flags.writeable = False  # cached and shared: callers must copy before adding noise
    win, draw, loss = (float(x) for x in wdl)
    value = max(-1.0, min(1.0, win - loss))
    return Evaluation(priors=priors, value=value, extra={"wdl": (win, draw, loss)})


def _model_meta(model: Any) -> dict:
    config = getattr(model, "config", None)
    if config is None:
        raise CheckpointError("model has no PlyZero config (build it with engine.nn.model)")
    from engine.nn.spec import FORMAT, codec_version
    return {"format": FORMAT, "game": config.game,
            "codec_version": codec_version(config.game, config.in_planes), "net": config.name, "config": config.to_dict(), "step": 0, "notes": "in-memory model"}
