"""How late `go movetime` answers on a busy machine, as the client sees it.

    python benchmarks/movetime_under_load.py [--busy 3] [--moves 40] [--movetime 1000] [-- ENGINE ARGS]

Starts `plyzero-uci` (or the command after `--`), starts `--busy` processes that spin on the
CPU, and plays `--moves` moves of a game against itself with `go movetime`; each move's time
is measured from the `go` line written to the `bestmove` line read (python-chess's clock is
not used: this is the pipe a GUI sees).  Prints the share of moves over the movetime, over
movetime + 100 ms (what fastchess/cutechess `timemargin=100` forfeits), and the worst.
"""
from __future__ import annotations

import argparse
import multiprocessing
import os
import statistics
import subprocess
import sys
import time


def spin(stop_at: float) -> None:
    while time.monotonic() < stop_at:
        pass


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--busy", type=int, default=3, help="CPU-bound processes running beside the engine")
    parser.add_argument("--moves", type=int, default=40)
    parser.add_argument("--movetime", type=int, default=1000, help="ms")
    parser.add_argument("engine", nargs="*", help="engine command (default: plyzero-uci)")
    args = parser.parse_args()
    env = dict(os.environ)
    env.pop("PYTHONUNBUFFERED", None)
    argv = args.engine or [os.path.join(os.path.dirname(sys.executable), "plyzero-uci")]
    process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env, bufsize=1)
    assert process.stdin is not None and process.stdout is not None

    def send(line: str) -> None:
        process.stdin.write(line + "\n")
        process.stdin.flush()

    def wait(prefix: str) -> str:
        while True:
            line = process.stdout.readline()
            if not line:
                raise SystemExit(f"engine exited while waiting for {prefix!r}")
            if line.startswith(prefix):
                return line.strip()

    send("uci")
    wait("uciok")
    send("debug on")          # our engine then says how long it took by its own clock
    send("ucinewgame")
    send("isready")
    wait("readyok")
    stop_at = time.monotonic() + 3600
    busy = [multiprocessing.Process(target=spin, args=(stop_at,), daemon=True) for _ in range(args.busy)]
    for worker in busy:
        worker.start()
    moves: list[str] = []
    times: list[float] = []
    inside: list[float] = []
    try:
        for _ in range(args.moves):
            send("position startpos" + (" moves " + " ".join(moves) if moves else ""))
            send("isready")
            wait("readyok")
            sent = time.monotonic()
            send(f"go movetime {args.movetime}")
            while True:
                line = wait("")
                if line.startswith("info string answer "):
                    inside.append(float(line.split()[3]))
                if line.startswith("bestmove"):
                    break
            times.append(1000 * (time.monotonic() - sent))
            move = line.split()[1]
            if move in ("0000", "(none)"):
                break
            moves.append(move)
    finally:
        for worker in busy:
            worker.terminate()
        send("quit")
        process.wait(timeout=10)
    over = [t for t in times if t > args.movetime]
    margin = [t for t in times if t > args.movetime + 100]
    print(f"{len(times)} moves at movetime {args.movetime} ms with {args.busy} busy processes: "
          f"median {statistics.median(times):.0f} ms, worst {max(times):.0f} ms; "
          f"over the movetime {len(over)} ({100 * len(over) / len(times):.0f} %), "
          f"over it + 100 ms {len(margin)}")
    if inside:
        gap = [t - i for t, i in zip(times, inside)]
        print(f"the engine's own go-to-bestmove time: median {statistics.median(inside):.0f} ms, "
              f"worst {max(inside):.0f} ms; the rest (pipes, waiting for a core): "
              f"median {statistics.median(gap):.0f} ms, worst {max(gap):.0f} ms")


if __name__ == "__main__":
    main()
