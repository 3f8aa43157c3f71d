"""Worker pools: run units of work on local processes or on a Ray cluster, the same way.

A unit is a top-level function of plain, picklable inputs that returns plain data
(a self-play batch: weights path, game spec, settings, seed -> samples; an arena match
chunk: game jobs -> game records).  It holds no global state and is handed no open
handle, so `LocalPool` (spawned processes) and `RayPool` (Ray tasks) run it alike, and
the driver that called `map` alone writes shards and stores.

`map(unit, inputs)` yields the results in input order as they become ready, so a driver
can persist each finished unit before the next one is done: a kill loses only the units
still running.
"""
from __future__ import annotations

import os
import time
from concurrent.futures import Executor, ProcessPoolExecutor
from typing import Any, Callable, Iterator, Protocol, Sequence, TypeVar

__all__ = ["Pool", "LocalPool", "RayPool", "open_pool", "default_workers", "exit_with_parent", "RAY_MISSING"]

In = TypeVar("In")
Out = TypeVar("Out")

RAY_MISSING = "Ray is not installed (pip install 'plyzero[ray]')"


def default_workers() -> int:
    """One worker per core this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - macOS, Windows
        return max(1, os.cpu_count() or 1)


def exit_with_parent(parent: int) -> None:
    """Run in a worker (a daemon thread): when its driver dies (kill -9 leaves no chance to
    clean up), exit instead of living on as an orphan."""
    import threading

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(0)

    threading.Thread(target=watch, daemon=True, name="parent-watch").start()


class Pool(Protocol):
    """Where units run.  `workers`: how many run at once.  `kind`: "local" | "ray"."""
    workers: int
    kind: str

    def map(self, unit: Callable[[In], Out], inputs: Sequence[In]) -> Iterator[Out]: ...

    def close(self) -> None: ...


class LocalPool:
    """Units on `workers` spawned processes (one process: run inline, no pickling).

    spawn, not fork: a forked child would inherit torch's thread pools and open networks.
    The processes live until close(), so a loop pays their start-up once.
    """
    kind = "local"

    def __init__(self, workers: int | None = None):
        self.workers = default_workers() if workers is None else max(1, workers)
        self._executor: Executor | None = None

    def map(self, unit: Callable[[In], Out], inputs: Sequence[In]) -> Iterator[Out]:
        if self.workers <= 1 or len(inputs) <= 1:
            return (unit(item) for item in inputs)
        if self._executor is None:
            import multiprocessing
            self._executor = ProcessPoolExecutor(max_workers=self.workers,
                                                 mp_context=multiprocessing.get_context("spawn"),
                                                 initializer=exit_with_parent, initargs=(os.getpid(),))
        return self._executor.map(unit, inputs)

    def close(self) -> None:
        if self._executor is not None:
            self._executor.shutdown(wait=True, cancel_futures=True)
            self._executor = None

    def __enter__(self) -> "LocalPool":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class RayPool:
    """Units as Ray tasks.  address: "auto" (the running cluster), "ray://host:port" or
    "host:port" (an existing cluster), or "local" (start a private one on this machine
    with `num_cpus` CPUs).  workers: the cluster's CPUs (one task per CPU)."""
    kind = "ray"

    def __init__(self, address: str = "auto", *, num_cpus: int | None = None):
        try:
            import ray
        except ImportError:
            raise ValueError(RAY_MISSING) from None
        self._ray = ray
        self._owns = not ray.is_initialized()
        if self._owns:
            kwargs: dict[str, Any] = {"include_dashboard": False, "logging_level": "ERROR",
                                      "log_to_driver": False}
            if address == "local":
                kwargs["num_cpus"] = num_cpus or default_workers()
            else:
                kwargs["address"] = address
            try:
                ray.init(**kwargs)
            except (ConnectionError, RuntimeError, ValueError) as exc:
                raise ValueError(f"cannot reach a Ray cluster at {address!r}: "
                                 f"{str(exc).splitlines()[0] if str(exc) else type(exc).__name__}") from None
        self.workers = max(1, int(ray.cluster_resources().get("CPU", 1)))
        self._remote: dict[Callable, Any] = {}

    def map(self, unit: Callable[[In], Out], inputs: Sequence[In]) -> Iterator[Out]:
        remote = self._remote.get(unit)
        if remote is None:
            remote = self._remote[unit] = self._ray.remote(num_cpus=1)(unit)
        refs = [remote.remote(item) for item in inputs]
        return (self._ray.get(ref) for ref in refs)

    def close(self) -> None:
        if self._owns and self._ray.is_initialized():
            self._ray.shutdown()

    def __enter__(self) -> "RayPool":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_pool(workers: int | None = None, ray: str | None = None) -> LocalPool | RayPool:
    """`--workers N` (None: one per core) on this machine, or `--ray ADDRESS|auto|local`.
    ValueError (one line) when Ray is asked for and missing or unreachable."""
    if ray is not None:
        return RayPool(ray, num_cpus=workers)
    return LocalPool(workers)
