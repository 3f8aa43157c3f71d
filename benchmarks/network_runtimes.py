"""Positions a second of one network under each CPU runtime at hand, one thread, as a player runs it.

    python benchmarks/network_runtimes.py WEIGHTS [--board 15] [--batch 16] [--seconds 2]

WEIGHTS is a checkpoint with its `.onnx` and `.int8.onnx` exports beside it (the shipped ones
have both).  Rows: ONNX Runtime on the float and the int8 export (what `NetworkEvaluator` runs),
and, when the `openvino` package is installed (it is not one of ours), OpenVINO on the float
export (f32 and bf16 precision) and on the int8 one.  Each row also prints how far its outputs
are from ONNX Runtime's int8 run (largest absolute difference of the policy and WDL logits).
Why: twice the network speed is worth about as much against Rapfi as the gap to the issue's
35 % (`docs/measurements/issue25-loop.md`), so another runtime is worth a figure before a
dependency; the answer so far is in that file ("Another runtime for the network").
"""
from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

import numpy as np


class FixedFeed:
    """An evaluator for `measure_throughput` that runs one encoded batch whatever it is asked,
    so the figure is the runtime's alone (the encoding is the same for every row)."""

    def __init__(self, run: Callable[[], object]) -> None:
        self.run = run

    def evaluate(self, _states: object) -> None:
        self.run()


def onnxruntime_rows(exports: dict[str, Path], feed: np.ndarray) -> dict[str, tuple[Callable, list]]:
    """Each export in the session players open (`onnx_backend._session`, one thread)."""
    from engine.nn.onnx_backend import _session
    rows = {}
    for tag, path in exports.items():
        session = _session(path, 1, "cpu")
        name = session.get_inputs()[0].name
        rows[f"onnxruntime {tag}"] = ((lambda s=session, n=name: s.run(None, {n: feed})),
                                      session.run(None, {name: feed}))
    return rows


def openvino_rows(exports: dict[str, Path], feed: np.ndarray) -> dict[str, tuple[Callable, list]]:
    try:
        import openvino as ov
    except ImportError:
        print("(openvino not installed: its rows are left out)")
        return {}
    core, rows = ov.Core(), {}
    for tag, path, precision in (("float f32", exports["float"], "f32"),
                                 ("float bf16", exports["float"], "bf16"),
                                 ("int8", exports["int8"], "f32")):
        model = core.read_model(str(path))
        model.reshape({model.inputs[0].get_any_name(): list(feed.shape)})
        compiled = core.compile_model(model, "CPU", {"INFERENCE_NUM_THREADS": 1, "NUM_STREAMS": 1,
                                                     "INFERENCE_PRECISION_HINT": precision,
                                                     "PERFORMANCE_HINT": "LATENCY"})
        request = compiled.create_infer_request()
        request.infer({0: feed})
        outputs = [request.get_output_tensor(i).data.copy() for i in range(len(compiled.outputs))]
        rows[f"openvino {tag}"] = ((lambda r=request: r.infer({0: feed})), outputs)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("weights")
    parser.add_argument("--board", type=int, default=15, help="gomoku: the square board's size")
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=2.0)
    args = parser.parse_args()

    import onnxruntime as ort

    from engine.games import game_on_board
    from engine.nn.codecs import get_codec
    from engine.nn.onnx_backend import read_onnx_meta, with_line_planes
    from engine.nn.spec import network_planes
    from engine.nn.throughput import measure_throughput, sample_states

    stem = Path(args.weights).with_suffix("")
    exports = {"float": stem.with_suffix(".onnx"), "int8": stem.with_suffix(".int8.onnx")}
    missing = [str(path) for path in exports.values() if not path.is_file()]
    if missing:
        raise SystemExit(f"error: no export {', '.join(missing)} (make it with `python -m "
                         f"engine.nn.onnx_backend {args.weights}` and `engine quantize {args.weights}`)")
    meta = read_onnx_meta(ort.InferenceSession(str(exports["float"]), providers=["CPUExecutionProvider"]),
                          str(exports["float"]))
    game = game_on_board(meta["game"], args.board, args.board)
    states = sample_states(game, args.batch)
    codec = get_codec(meta["game"])
    feed = codec.encode(states, planes=network_planes(meta)).astype(np.float32)
    # a network with line planes reads them after the codec's (their cost, outside the graph, is not timed here)
    feed = with_line_planes(feed, codec, bool(meta.get("config", {}).get("line_features")))
    rows = onnxruntime_rows(exports, feed) | openvino_rows(exports, feed)
    reference = rows["onnxruntime int8"][1]
    print(f"{stem.name}: {game.label}, batch {args.batch}, one thread")
    for tag, (run, outputs) in rows.items():
        gaps = "  ".join(f"{float(np.abs(mine - ref).max()):.3f}" for mine, ref in zip(outputs, reference))
        print(f"  {tag:18s} {measure_throughput(FixedFeed(run), states, args.batch, args.seconds):7.0f} positions/s"
              f"   largest difference from onnxruntime int8: {gaps}")


if __name__ == "__main__":
    main()
