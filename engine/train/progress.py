"""A small progress bar on stderr for data generation and training (no dependency).

On a terminal it redraws one line (`\\r`); when stderr is a file or pipe (a background
run's log) it writes a plain line at most every `every` seconds, so logs stay readable.
"""
from __future__ import annotations

import sys
import time
from typing import TextIO

__all__ = ["Progress"]


class Progress:
    """Progress(total, "teacher").update(n, note="...") ... .close()"""

    def __init__(self, total: int, label: str, *, stream: TextIO | None = None, every: float = 30.0,
                 unit: str = "it"):
        self.total, self.label, self.unit, self.every = max(0, total), label, unit, every
        self.stream = stream if stream is not None else sys.stderr
        self.done = 0
        self.start = self._last = time.monotonic()
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())

    def text(self, note: str = "") -> str:
        elapsed = time.monotonic() - self.start
        rate = self.done / elapsed if elapsed > 0 else 0.0
        share = self.done / self.total if self.total else 1.0
        left = (self.total - self.done) / rate if rate > 0 else float("nan")
        bar = "#" * int(share * 20)
        eta = f"{left:.0f}s" if left == left else "?"
        return (f"{self.label} [{bar:<20}] {self.done}/{self.total} {self.unit} "
                f"{rate:.2f} {self.unit}/s, {elapsed:.0f}s elapsed, eta {eta}" + (f" {note}" if note else ""))

    def update(self, n: int = 1, note: str = "") -> None:
        self.done += n
        now = time.monotonic()
        if self.tty:
            self.stream.write("\r" + self.text(note))
            self.stream.flush()
        elif now - self._last >= self.every or self.done >= self.total:
            self.stream.write(self.text(note) + "\n")
            self.stream.flush()
            self._last = now

    def close(self) -> None:
        if self.tty:
            self.stream.write("\n")
            self.stream.flush()
