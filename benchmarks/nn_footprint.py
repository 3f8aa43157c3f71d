"""Memory footprint of network evaluation: RSS and VmSize after each step (Linux /proc).

The Gomocup judge counts a brain's memory against 350 MB, and importing torch alone
costs a few hundred MB, so the gomoku brain must evaluate through ONNX Runtime
without torch.  `python benchmarks/nn_footprint.py` measures both paths, each in a fresh
process: a random res6x64 checkpoint is exported once (that export is what a second
brain start finds), then one process evaluates through ONNX and one through torch.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Sequence

__all__ = ["memory_mb", "main"]


def memory_mb() -> dict[str, float]:
    """VmRSS, VmHWM (peak RSS) and VmSize of this process in MB (empty off Linux)."""
    out: dict[str, float] = {}
    try:
        lines = Path("/proc/self/status").read_text().splitlines()
    except OSError:
        return out
    for line in lines:
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM", "VmSize"):
            out[key] = round(int(value.split()[0]) / 1024, 1)
    return out


def _probe(weights: str, backend: str, cache_dir: str, size: int, batch: int) -> None:
    """One measured process: import, open the network, evaluate a batch; print JSON."""
    steps = {"start": memory_mb()}
    from engine.games import get_game
    from engine.nn.evaluator import NetworkEvaluator
    steps["imports"] = memory_mb()
    if backend == "torch":
        import torch  # noqa: F401  (what the torch path pays on import)
        steps["import torch"] = memory_mb()
    evaluator = NetworkEvaluator(weights, device="cpu", backend=backend, cache_dir=cache_dir)
    steps["network open"] = memory_mb()
    game = get_game("gomoku", width=size, height=size)
    state = game.initial_state().play(size * size // 2)
    states = [state.play(m) for m in list(state.legal_moves())[:batch]]
    evaluator.evaluate(states)
    steps[f"evaluated batch {batch}"] = memory_mb()
    print(json.dumps({"backend": evaluator.backend, "torch_imported": "torch" in sys.modules,
                      "steps": steps}))


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="RSS of gomoku evaluation: ONNX without torch vs torch")
    parser.add_argument("--net", default="res6x64")
    parser.add_argument("--size", type=int, default=20)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--probe", nargs=3, metavar=("WEIGHTS", "BACKEND", "CACHE"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.probe:
        weights, backend, cache_dir = args.probe
        _probe(weights, backend, cache_dir, size=args.size, batch=args.batch)
        return
    with tempfile.TemporaryDirectory() as tmp:
        weights = str(Path(tmp) / "gomoku.pt")
        from engine.nn.checkpoint import create_random_checkpoint
        from engine.nn.evaluator import NetworkEvaluator
        create_random_checkpoint(weights, "gomoku", args.net)
        NetworkEvaluator(weights, device="cpu", backend="onnx", cache_dir=tmp)  # export once
        for backend in ("onnx", "torch"):
            result = subprocess.run(
                [sys.executable, __file__, "--size", str(args.size),
                 "--batch", str(args.batch), "--probe", weights, backend, tmp],
                capture_output=True, text=True, check=True)
            report = json.loads(result.stdout)
            print(f"{backend}: torch imported={report['torch_imported']}")
            for step, mem in report["steps"].items():
                print(f"  {step:20s} RSS {mem.get('VmRSS', 0):7.1f} MB  peak {mem.get('VmHWM', 0):7.1f} MB"
                      f"  VmSize {mem.get('VmSize', 0):8.1f} MB")


if __name__ == "__main__":
    main()
