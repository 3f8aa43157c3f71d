"""Line I/O shared by both protocol servers.

Input is read on its own thread into a queue, so `isready`/`stop`/`END` are seen
while the engine thinks.  Output goes through one lock and is flushed per line
(GUIs hang on unflushed pipes; tests run without PYTHONUNBUFFERED to catch that).
"""
from __future__ import annotations

import queue
import threading
from typing import Iterator, TextIO

__all__ = ["LineReader", "LineWriter"]


class LineReader:
    """Reads `stream` on a daemon thread; iterate to get stripped, non-empty lines until EOF."""

    def __init__(self, stream: TextIO):
        self._queue: queue.Queue[str | None] = queue.Queue()   # None: end of input
        self._thread = threading.Thread(target=self._pump, args=(stream,), name="stdin", daemon=True)
        self._thread.start()

    def _pump(self, stream: TextIO) -> None:
        try:
            for raw in stream:
                line = raw.replace("\r", "").strip()
                if line:
                    self._queue.put(line)
        except (OSError, ValueError):
            pass
        finally:
            self._queue.put(None)

    def __iter__(self) -> Iterator[str]:
        while True:
            item = self._queue.get()
            if item is None:
                return
            yield item


class LineWriter:
    """Thread-safe writer: one line at a time, flushed; a closed pipe is silently ignored."""

    def __init__(self, stream: TextIO):
        self._stream = stream
        self._lock = threading.Lock()

    def __call__(self, line: str) -> None:
        with self._lock:
            try:
                self._stream.write(line + "\n")
                self._stream.flush()
            except (OSError, ValueError):
                pass
