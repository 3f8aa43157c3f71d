"""Where an ONNX export's time goes, operator by operator (ONNX Runtime's own profiler).

    python benchmarks/onnx_op_profile.py EXPORT.onnx [--board 15] [--batch 16] [--runs 200]

Runs the export (a `.onnx` or `.int8.onnx` beside a checkpoint, or one from the cache) on one
thread, as a player does, over `--batch` positions of its game (gomoku on a `--board` square
board), and prints each operator type's share of the kernel time and its milliseconds a run.
Why: a network is three quarters of an MCTS node on a CPU, and the operators that are not the
convolutions are where a cheaper graph can come from (the on-board mask's QLinearMul nodes,
a sixth of an int8 gomoku run, were found this way).
"""
from __future__ import annotations

import argparse
import collections
import json
import tempfile
from pathlib import Path

import numpy as np


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("export")
    parser.add_argument("--board", type=int, default=15, help="gomoku: the square board's size")
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--runs", type=int, default=200)
    args = parser.parse_args()

    import onnxruntime as ort

    from engine.games import game_on_board
    from engine.nn.codecs import get_codec
    from engine.nn.onnx_backend import read_onnx_meta
    from engine.nn.spec import network_planes
    from engine.nn.throughput import sample_states

    with tempfile.TemporaryDirectory() as scratch:
        options = ort.SessionOptions()
        options.intra_op_num_threads = options.inter_op_num_threads = 1
        options.enable_profiling = True
        options.profile_file_prefix = str(Path(scratch) / "profile")
        options.log_severity_level = 3
        session = ort.InferenceSession(args.export, options, providers=["CPUExecutionProvider"])
        meta = read_onnx_meta(session, args.export)
        game = game_on_board(meta["game"], args.board, args.board)
        planes = get_codec(meta["game"]).encode(sample_states(game, args.batch),
                                                planes=network_planes(meta)).astype(np.float32)
        feed = {session.get_inputs()[0].name: planes}
        for _ in range(args.runs):
            session.run(None, feed)
        events = json.loads(Path(session.end_profiling()).read_text())
    time_by_op: collections.Counter[str] = collections.Counter()
    nodes_by_op: collections.Counter[str] = collections.Counter()
    for event in events:
        if event.get("cat") == "Node" and event["name"].endswith("_kernel_time"):
            op = event["args"].get("op_name", "?")
            time_by_op[op] += event["dur"]
            nodes_by_op[op] += 1
    total = sum(time_by_op.values()) or 1
    print(f"{Path(args.export).name}: {meta.get('net')} {game.label}, batch {args.batch}, {args.runs} runs, one thread")
    for op, micros in time_by_op.most_common():
        print(f"  {op:22s} {100 * micros / total:5.1f} %  {micros / args.runs / 1000:6.3f} ms a run  "
              f"{nodes_by_op[op] // args.runs} nodes")
    print(f"  kernels in all: {total / args.runs / 1000:.3f} ms a run, "
          f"{args.batch * args.runs * 1e6 / total:.0f} positions/s")


if __name__ == "__main__":
    main()
