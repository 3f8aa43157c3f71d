"""One inference process that owns the network and batches the leaves of many workers.

Workers do the tree work and keep the Evaluator protocol: a `RemoteEvaluator` encodes
states into planes (numpy only, no torch in the worker), sends them to the server and
turns the outputs back into priors and values exactly as NetworkEvaluator does (it IS
a NetworkEvaluator whose runner is remote, cache included).  The server side is a
`Batcher`: requests from all workers that arrive while the network is busy are run
together, one forward pass per board shape, so N CPU processes keep one GPU busy
(KataGo's NN server, lc0's backend).

Transports, one server each:
  local  `InferenceServer`: a spawned process listening on a Unix socket; its address
         (`InferenceAddress`: path, authkey, weights) is plain data that units carry.
  Ray    `ray_inference_actor(...)`: the same Batcher inside a threaded Ray actor; units
         carry the actor handle.
On CUDA the server runs the torch model under bf16 autocast (`precision="bf16"`); on
CPU it uses whatever NetworkEvaluator picks (ONNX Runtime when installed).
"""
from __future__ import annotations

import os
import secrets
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from engine.nn.evaluator import NetworkEvaluator, resolve_device
from engine.train.pool import exit_with_parent

__all__ = ["Batcher", "open_runner", "AutocastRunner", "InferenceAddress", "InferenceServer",
           "RunnerEvaluator", "RemoteEvaluator", "ray_inference_actor", "PRECISIONS"]

PRECISIONS = ("auto", "fp32", "bf16")


class AutocastRunner:
    """Eager torch under autocast: planes [B, C, H, W] float32 -> numpy outputs (policy..., wdl).
    bf16 halves memory traffic on CUDA with fp32 accumulation; on CPU it is for tests."""

    def __init__(self, model: Any, device: str, bf16: bool, meta: dict | None = None):
        import torch
        self._torch, self.device, self.bf16, self.meta = torch, device, bf16, meta or {}
        self.model = model.to(device).eval()

    def run(self, planes: np.ndarray) -> list[np.ndarray]:
        torch = self._torch
        with torch.inference_mode(), torch.autocast(device_type=self.device.split(":")[0],
                                                    dtype=torch.bfloat16, enabled=self.bf16):
            x = torch.from_numpy(planes).to(self.device, non_blocking=True)
            return [out.float().cpu().numpy() for out in self.model(x)]


def open_runner(weights: str, *, device: str = "cpu", backend: str = "auto", threads: int = 1,
                precision: str = "auto") -> tuple[Any, dict]:
    """(runner with run(planes) -> outputs, network metadata) for the server.

    precision "auto": bf16 on CUDA, fp32 elsewhere.  bf16 and CUDA run eager torch under
    autocast; fp32 on CPU runs NetworkEvaluator's own choice (ONNX Runtime when present)."""
    if precision not in PRECISIONS:
        raise ValueError(f"unknown precision {precision!r} (expected one of {', '.join(PRECISIONS)})")
    device = resolve_device(device)
    bf16 = precision == "bf16" or (precision == "auto" and device == "cuda")
    if bf16 or device != "cpu":
        from engine.nn.checkpoint import load_checkpoint
        model, meta = load_checkpoint(weights)
        return AutocastRunner(model, device, bf16, meta), meta
    evaluator = NetworkEvaluator(weights, device=device, backend=backend, threads=threads, cache_size=0)
    return evaluator._runner, evaluator.meta


class Batcher:
    """Thread-safe: `submit(planes)` blocks until its outputs are ready.  A single runner
    thread takes every pending request at once, groups them by plane shape, runs each
    group in forward passes of at most `max_batch` positions and hands the rows back.
    `max_wait` (seconds) lets a batch fill before it runs while fewer than `clients`
    requests are pending."""

    def __init__(self, runner: Any, *, max_batch: int = 1024, max_wait: float = 0.0, clients: int = 1):
        self.runner, self.max_batch, self.max_wait, self.clients = runner, max_batch, max_wait, clients
        self._pending: list[list[Any]] = []      # [planes, outputs or exception, event]
        self._cond = threading.Condition()
        self._closed = False
        self.batches = self.positions = 0
        self._thread = threading.Thread(target=self._loop, daemon=True, name="batcher")
        self._thread.start()

    def submit(self, planes: np.ndarray) -> list[np.ndarray]:
        request: list[Any] = [planes, None, threading.Event()]
        with self._cond:
            if self._closed:
                raise RuntimeError("the inference batcher is closed")
            self._pending.append(request)
            self._cond.notify()
        request[2].wait()
        if isinstance(request[1], BaseException):
            raise request[1]
        return request[1]

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify()
        self._thread.join(timeout=5.0)

    def _loop(self) -> None:
        while True:
            with self._cond:
                while not self._pending and not self._closed:
                    self._cond.wait()
                if self._closed and not self._pending:
                    return
                if self.max_wait > 0 and len(self._pending) < self.clients:
                    self._cond.wait(self.max_wait)
                taken, self._pending = self._pending, []
            groups: dict[tuple[int, ...], list[list[Any]]] = {}
            for request in taken:
                groups.setdefault(request[0].shape[1:], []).append(request)
            for requests in groups.values():
                try:
                    self._run_group(requests)
                except Exception as exc:  # noqa: BLE001 - handed to the callers, who raise it
                    for request in requests:
                        request[1] = exc
                for request in requests:
                    request[2].set()

    def _run_group(self, requests: list[list[Any]]) -> None:
        planes = np.concatenate([r[0] for r in requests]) if len(requests) > 1 else requests[0][0]
        parts = [self.runner.run(planes[i:i + self.max_batch]) for i in range(0, len(planes), self.max_batch)]
        outputs = [np.concatenate([p[k] for p in parts]) for k in range(len(parts[0]))]
        self.batches += len(parts)
        self.positions += len(planes)
        start = 0
        for request in requests:
            n = len(request[0])
            request[1] = [out[start:start + n] for out in outputs]
            start += n


# --- local transport: a process on a Unix socket ------------------------------------------------

@dataclass(frozen=True)
class InferenceAddress:
    """How a unit reaches a local inference server (plain data).  weights: the file the
    server runs; a unit asking for another network must not use it."""
    path: str
    authkey: bytes
    weights: str


def _serve(address: InferenceAddress, device: str, backend: str, threads: int, precision: str,
           clients: int, ready: Any) -> None:
    """The server process: open the network, accept workers, answer planes with outputs."""
    from multiprocessing.connection import Listener

    exit_with_parent(os.getppid())      # a killed driver cannot stop its server
    runner, meta = open_runner(address.weights, device=device, backend=backend, threads=threads,
                               precision=precision)
    batcher = Batcher(runner, clients=clients, max_wait=0.001 if clients > 1 else 0.0)
    with Listener(address.path, family="AF_UNIX", authkey=address.authkey) as listener:
        ready.set()
        while True:
            connection = listener.accept()
            threading.Thread(target=_answer, args=(connection, batcher, meta), daemon=True).start()


def _answer(connection: Any, batcher: Batcher, meta: dict) -> None:
    """One worker's connection: "meta" -> metadata; planes -> outputs (or the error text)."""
    with connection:
        while True:
            try:
                request = connection.recv()
            except (EOFError, OSError):
                return
            if isinstance(request, str):
                connection.send(meta)
                continue
            try:
                connection.send(batcher.submit(request))
            except Exception as exc:  # noqa: BLE001 - the worker raises it as one line
                connection.send(f"inference failed: {type(exc).__name__}: {exc}")


class InferenceServer:
    """Start the inference process for `weights`; `address` goes into the units.  Close it
    (or use `with`) when the work is done.  clients: workers expected to share it."""

    def __init__(self, weights: str | Path, *, device: str = "cpu", backend: str = "auto",
                 threads: int = 1, precision: str = "auto", clients: int = 1, start_timeout: float = 120.0):
        import multiprocessing

        self._dir = tempfile.TemporaryDirectory(prefix="plyzero-nn-")
        self.address = InferenceAddress(str(Path(self._dir.name) / "server.sock"),
                                        secrets.token_bytes(16), str(weights))
        context = multiprocessing.get_context("spawn")
        ready = context.Event()
        self._process = context.Process(
            target=_serve, args=(self.address, device, backend, threads, precision, clients, ready),
            daemon=True, name="plyzero-inference")
        self._process.start()
        while not ready.wait(0.2):
            if not self._process.is_alive():
                self.close()
                raise ValueError(f"{weights}: the inference process failed to start")
            start_timeout -= 0.2
            if start_timeout <= 0:
                self.close()
                raise ValueError(f"{weights}: the inference process did not start in time")

    def close(self) -> None:
        if self._process.is_alive():
            self._process.terminate()
        self._process.join(timeout=5.0)
        self._dir.cleanup()

    def __enter__(self) -> "InferenceServer":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _SocketRunner:
    """The worker's end of a local server: run(planes) -> outputs over one connection."""

    def __init__(self, address: InferenceAddress):
        from multiprocessing.connection import Client
        self._connection = Client(address.path, family="AF_UNIX", authkey=address.authkey)
        self._connection.send("meta")
        self.meta: dict = self._connection.recv()

    def run(self, planes: np.ndarray) -> list[np.ndarray]:
        self._connection.send(np.ascontiguousarray(planes))
        answer = self._connection.recv()
        if isinstance(answer, str):
            raise ValueError(answer)
        return answer


class _ActorRunner:
    """The worker's end of a Ray inference actor."""

    def __init__(self, actor: Any):
        import ray
        self._ray, self._actor = ray, actor
        self.meta: dict = ray.get(actor.meta.remote())

    def run(self, planes: np.ndarray) -> list[np.ndarray]:
        return self._ray.get(self._actor.run.remote(planes))


class RunnerEvaluator(NetworkEvaluator):
    """NetworkEvaluator over a given runner (anything with run(planes) -> outputs and meta):
    everything after the forward pass (priors over legal moves, WDL, value, the LRU cache)
    is NetworkEvaluator's."""

    def __init__(self, runner: Any, *, expect_game: str | None = None, cache_size: int = 200_000,
                 max_batch: int = 1 << 30):
        super().__init__(runner, device="cpu", backend="auto", cache_size=cache_size,
                         expect_game=expect_game, max_batch=max_batch)

    def _open(self, source: Any, backend: str, expect_game: str | None,
              precision: str) -> tuple[Any, dict, str]:
        from engine.nn.spec import check_meta
        check_meta(source.meta, "network runner", expect_game)
        return source, source.meta, "runner"


class RemoteEvaluator(RunnerEvaluator):
    """The Evaluator protocol in a worker, its network in the inference server.
    server: an InferenceAddress (local) or a Ray actor handle."""

    def __init__(self, server: Any, *, expect_game: str | None = None, cache_size: int = 200_000):
        runner = _SocketRunner(server) if isinstance(server, InferenceAddress) else _ActorRunner(server)
        super().__init__(runner, expect_game=expect_game, cache_size=cache_size)


def ray_inference_actor(weights: str, *, device: str = "cpu", backend: str = "auto", threads: int = 1,
                        precision: str = "auto", clients: int = 1, num_gpus: float = 0.0) -> Any:
    """A Ray actor running the Batcher over `weights` (one per GPU node); pass its handle
    to units as their server.  max_concurrency = clients, so calls from all workers
    wait in the batcher together."""
    import ray

    class InferenceActor:
        def __init__(self) -> None:
            runner, self._meta = open_runner(weights, device=device, backend=backend, threads=threads,
                                             precision=precision)
            self._batcher = Batcher(runner, clients=clients, max_wait=0.001 if clients > 1 else 0.0)

        def meta(self) -> dict:
            return self._meta

        def run(self, planes: np.ndarray) -> list[np.ndarray]:
            return self._batcher.submit(planes)

    remote: Any = ray.remote     # its typed overloads do not list actor options
    actor_class = remote(num_cpus=1, num_gpus=num_gpus, max_concurrency=max(2, clients + 1))(InferenceActor)
    return actor_class.remote()

