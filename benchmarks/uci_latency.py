"""UCI responsiveness of plyzero-uci: uciok after start, readyok and bestmove after stop during `go infinite`.

    python benchmarks/uci_latency.py [--runs 5]
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time


def wait_for(process: subprocess.Popen, prefix: str) -> None:
    assert process.stdout is not None
    while not process.stdout.readline().startswith(prefix):
        pass


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    env = dict(os.environ)
    env.pop("PYTHONUNBUFFERED", None)   # a missing flush must show as a hang
    exe = os.path.join(os.path.dirname(sys.executable), "plyzero-uci")
    timings: dict[str, list[float]] = {"uciok after start": [], "readyok while searching": [],
                                       "bestmove after stop": []}
    for _ in range(args.runs):
        start = time.perf_counter()
        process = subprocess.Popen([exe], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                   bufsize=1, env=env)
        assert process.stdin is not None

        def ask(line: str, answer: str, name: str) -> None:
            sent = time.perf_counter()
            process.stdin.write(line + "\n")
            process.stdin.flush()
            wait_for(process, answer)
            timings[name].append(time.perf_counter() - sent)

        process.stdin.write("uci\n")
        process.stdin.flush()
        wait_for(process, "uciok")
        timings["uciok after start"].append(time.perf_counter() - start)
        process.stdin.write("position startpos moves e2e4\ngo infinite\n")
        process.stdin.flush()
        time.sleep(0.5)
        ask("isready", "readyok", "readyok while searching")
        ask("stop", "bestmove", "bestmove after stop")
        process.stdin.write("quit\n")
        process.stdin.flush()
        process.wait(5)
    for name, values in timings.items():
        print(f"{name}: median {statistics.median(values) * 1000:.0f} ms, max {max(values) * 1000:.0f} ms")


if __name__ == "__main__":
    main()
