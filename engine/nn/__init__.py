"""Neural networks: codecs (state <-> planes, move <-> index), models, checkpoints, evaluators.

The only torch code outside engine/train.  Importing this package imports nothing
heavy: names resolve lazily, so the ONNX path (codecs, onnx_backend, evaluator) runs
without torch, and engine.games / engine.search / engine.types never pull it in.
"""
from __future__ import annotations

import importlib
from typing import Any

__all__ = ["NetworkEvaluator", "CheckpointError", "save_checkpoint",
           "load_checkpoint", "create_random_checkpoint", "build_model", "measure_throughput"]

_HOME = {
    "NetworkEvaluator": "engine.nn.evaluator",
    "CheckpointError": "engine.nn.spec", "save_checkpoint": "engine.nn.checkpoint",
    "load_checkpoint": "engine.nn.checkpoint", "create_random_checkpoint": "engine.nn.checkpoint",
    "build_model": "engine.nn.model", "measure_throughput": "engine.nn.throughput",
}


def __getattr__(name: str) -> Any:
    if name in _HOME:
        return getattr(importlib.import_module(_HOME[name]), name)
    raise AttributeError(f"module 'engine.nn' has no attribute {name!r}")
