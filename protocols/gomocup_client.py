"""The manager side of the Gomocup (piskvork) protocol: drive any brain as a subprocess.

Used by our tests and by the arena.  One client = one brain process, started from an
argument list (never a shell).  A reader thread stamps every stdout line with its
arrival time, so `last_move_time` measures the brain, not our scheduling; stderr is
collected separately (`stderr_lines`) because a Gomocup brain must not write there.

    with GomocupClient(["pbrain-plyzero", "--player", "alphabeta"]) as brain:
        brain.start(15)                      # START 15 (RECTSTART W,H when W != H)
        brain.info("timeout_turn", 500)
        x, y = brain.begin(timeout=1.5)      # or brain.board([(7, 7, 2)], timeout=...)
        x, y = brain.turn(8, 8, timeout=1.5)
        print(brain.last_move_time, brain.last_message)

The Gomocup judge's habits, on request: `suspend()` freezes the brain's process tree
between its turns (any later command resumes it first), and `memory()` reads the tree's
virtual and resident size (protocols/process_tree.py).

Errors: `GomocupTimeout` (no answer in time), `GomocupError` (ERROR/UNKNOWN answers,
malformed answers), `GomocupCrashed` (process exited or pipe closed); all are
`GomocupClientError`.  After a timeout a late answer may still arrive: call `drain()`
before the next request, or (the arena's way) treat it as a forfeit and restart.
"""
from __future__ import annotations

import queue
import re
import subprocess
import threading
import time
from types import TracebackType
from typing import IO, Iterable, Mapping, Sequence

from protocols.process_tree import Memory, resume_tree, suspend_tree, tree_memory

__all__ = ["GomocupClient", "GomocupClientError", "GomocupTimeout", "GomocupError", "GomocupCrashed",
           "parse_move", "parse_about"]

DEFAULT_TIMEOUT = 10.0   # seconds, for non-move requests (a brain may import a network at START)
_ABOUT_PAIR = re.compile(r'\s*([A-Za-z_][\w-]*)\s*=\s*"([^"]*)"\s*,?')


class GomocupClientError(Exception):
    """Anything that went wrong talking to a brain."""


class GomocupTimeout(GomocupClientError):
    """The brain did not answer within the timeout."""


class GomocupError(GomocupClientError):
    """The brain answered ERROR/UNKNOWN, or something that is not the expected answer."""

    def __init__(self, message: str, answer: str | None = None):
        super().__init__(message)
        self.answer = answer


class GomocupCrashed(GomocupClientError):
    """The brain's process exited or closed its pipes."""


def parse_move(answer: str) -> tuple[int, int]:
    """'x,y' -> (x, y); anything else raises GomocupError."""
    parts = answer.split(",")
    if len(parts) == 2:
        try:
            return int(parts[0]), int(parts[1])
        except ValueError:
            pass
    if answer.startswith(("ERROR", "UNKNOWN")):
        raise GomocupError(f"brain answered {answer!r}", answer)
    raise GomocupError(f"malformed move answer {answer!r} (expected x,y)", answer)


def parse_about(answer: str) -> dict[str, str]:
    """'name="X", version="1"' -> {'name': 'X', 'version': '1'} (unquoted junk is skipped)."""
    return {key: value for key, value in _ABOUT_PAIR.findall(answer)}


class GomocupClient:
    """A running brain.  Methods block until the answer (or `timeout` seconds) and are not
    meant to be called from several threads at once."""

    def __init__(self, argv: Sequence[str], *, cwd: str | None = None,
                 env: Mapping[str, str] | None = None):
        self.argv = list(argv)
        self.messages: list[str] = []       # MESSAGE/DEBUG lines, in order, prefix included
        self.stderr_lines: list[str] = []
        self.last_move_time: float | None = None   # seconds from request sent to answer read
        self.suspended = False
        self._lines: queue.Queue[tuple[float, str] | None] = queue.Queue()   # None: end of output
        try:
            self.process = subprocess.Popen(
                self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                cwd=cwd, env=dict(env) if env is not None else None, text=True,
                encoding="utf-8", errors="replace", bufsize=1)
        except OSError as exc:
            raise GomocupCrashed(f"cannot start {self.argv[0]!r}: {exc}") from exc
        assert self.process.stdout is not None and self.process.stderr is not None
        self._threads = [
            threading.Thread(target=self._pump, args=(self.process.stdout,), daemon=True,
                             name="gomocup-stdout"),
            threading.Thread(target=self._collect_stderr, args=(self.process.stderr,), daemon=True,
                             name="gomocup-stderr"),
        ]
        for thread in self._threads:
            thread.start()

    # ---- plumbing -----------------------------------------------------------------------
    def _pump(self, stream: IO[str]) -> None:
        try:
            for raw in stream:
                line = raw.strip()
                if line:
                    self._lines.put((time.monotonic(), line))
        except (OSError, ValueError):
            pass
        finally:
            self._lines.put(None)

    def _collect_stderr(self, stream: IO[str]) -> None:
        try:
            for raw in stream:
                self.stderr_lines.append(raw.rstrip("\n"))
        except (OSError, ValueError):
            pass

    @property
    def pid(self) -> int:
        return self.process.pid

    @property
    def last_message(self) -> str | None:
        """The text of the latest MESSAGE line (without the prefix), e.g. depth and score."""
        for line in reversed(self.messages):
            if line.startswith("MESSAGE"):
                return line[len("MESSAGE"):].strip()
        return None

    def suspend(self) -> None:
        """Freeze the brain's process tree until the next command (the judge's way while the
        opponent thinks)."""
        if self.process.poll() is None:
            suspend_tree(self.pid)
            self.suspended = True

    def resume(self) -> None:
        if self.suspended:
            self.suspended = False
            if self.process.poll() is None:
                resume_tree(self.pid)

    def memory(self) -> Memory | None:
        """The brain tree's virtual and resident size now (None when unreadable)."""
        return tree_memory(self.pid) if self.process.poll() is None else None

    def send(self, line: str) -> float:
        """Write one command line; returns the time it was sent (time.monotonic()).
        A suspended brain is resumed first."""
        self.resume()
        if self.process.poll() is not None:
            raise GomocupCrashed(self._crash_text("exited"))
        assert self.process.stdin is not None
        try:
            self.process.stdin.write(line + "\n")
            self.process.stdin.flush()
        except (OSError, ValueError) as exc:
            raise GomocupCrashed(self._crash_text(f"closed its input ({exc})")) from exc
        return time.monotonic()

    def read_answer(self, timeout: float) -> str:
        """The next line that is not MESSAGE/DEBUG (those go to `messages`)."""
        return self._read(time.monotonic() + timeout, timeout)[1]

    def _read(self, deadline: float, timeout: float) -> tuple[float, str]:
        while True:
            try:
                item = self._lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise GomocupTimeout(f"no answer within {timeout:.3f} s") from None
            if item is None:
                self._lines.put(None)   # every later read sees the crash too
                raise GomocupCrashed(self._crash_text("closed its output"))
            stamp, line = item
            if line.startswith(("MESSAGE", "DEBUG")):
                self.messages.append(line)
                continue
            return stamp, line

    def _crash_text(self, what: str) -> str:
        try:
            code = self.process.wait(timeout=0.5)
        except subprocess.TimeoutExpired:
            code = None
        tail = " | ".join(self.stderr_lines[-3:])
        return f"brain {what} (exit code {code})" + (f"; stderr: {tail}" if tail else "")

    def request(self, line: str, *, timeout: float = DEFAULT_TIMEOUT) -> str:
        """Send any command and return its answer line verbatim (ERROR/UNKNOWN included)."""
        self.send(line)
        return self.read_answer(timeout)

    def drain(self) -> list[str]:
        """Discard answers that arrived late (after a timeout); returns them."""
        late: list[str] = []
        while True:
            try:
                item = self._lines.get_nowait()
            except queue.Empty:
                return late
            if item is None:
                self._lines.put(None)
                return late
            late.append(item[1])

    def _expect_ok(self, line: str, timeout: float) -> None:
        answer = self.request(line, timeout=timeout)
        if answer != "OK":
            raise GomocupError(f"{line.split()[0]}: brain answered {answer!r}", answer)

    def _exchange(self, lines: Iterable[str], timeout: float) -> str:
        """Send a request's lines; its answer, timed from the last line sent."""
        sent = 0.0
        for line in lines:
            sent = self.send(line)
        stamp, answer = self._read(sent + timeout, timeout)
        self.last_move_time = stamp - sent
        return answer

    def _move(self, lines: Iterable[str], timeout: float) -> tuple[int, int]:
        return parse_move(self._exchange(lines, timeout))

    # ---- the protocol -----------------------------------------------------------------
    def start(self, width: int, height: int | None = None, *, timeout: float = DEFAULT_TIMEOUT) -> None:
        """START N (square) or RECTSTART W,H; raises GomocupError when the brain refuses."""
        if height is None or height == width:
            self._expect_ok(f"START {width}", timeout)
        else:
            self._expect_ok(f"RECTSTART {width},{height}", timeout)

    def restart(self, *, timeout: float = DEFAULT_TIMEOUT) -> None:
        self._expect_ok("RESTART", timeout)

    def info(self, key: str, value: object) -> None:
        """INFO key value (never answered)."""
        self.send(f"INFO {key} {value}")

    def begin(self, *, timeout: float) -> tuple[int, int]:
        """The brain opens on an empty board."""
        return self._move(["BEGIN"], timeout)

    def turn(self, x: int, y: int, *, timeout: float) -> tuple[int, int]:
        """The opponent played (x, y); returns the brain's answer."""
        return self._move([f"TURN {x},{y}"], timeout)

    def board(self, stones: Iterable[tuple[int, int, int]], *, timeout: float) -> tuple[int, int]:
        """Set the position (x, y, field: 1 brain, 2 opponent, 3 continuous mark) and ask a move."""
        lines = ["BOARD"] + [f"{x},{y},{f}" for x, y, f in stones] + ["DONE"]
        return self._move(lines, timeout)

    def swap2board(self, stones: Sequence[tuple[int, int]], *, timeout: float) -> list[tuple[int, int]] | None:
        """SWAP2BOARD with the swap2 stones so far (x, y in play order: none, three or five).
        Returns the brain's stones (three proposed; the fourth and maybe fifth; the sixth) or
        None when it answered SWAP (it takes black).

        Each stone goes as BOARD's `x,y,field`, the field as seen by the brain asked, which
        holds the side to move (1 its stones, 2 the others): Rapfi reads them so and refuses a
        bare `x,y`; brains that read `x,y` alone (KataGomo, ours) take the first two numbers."""
        to_move = len(stones) % 2
        lines = [f"{x},{y},{1 if i % 2 == to_move else 2}" for i, (x, y) in enumerate(stones)]
        answer = self._exchange(["SWAP2BOARD", *lines, "DONE"], timeout)
        if answer.strip().upper() == "SWAP":
            return None
        if answer.startswith(("ERROR", "UNKNOWN")) or not answer.split():
            raise GomocupError(f"SWAP2BOARD: brain answered {answer!r}", answer)
        return [parse_move(part) for part in answer.split()]

    def play(self, x: int, y: int, *, timeout: float = DEFAULT_TIMEOUT) -> tuple[int, int]:
        """PLAY x,y (answer to a brain's SUGGEST): the brain echoes the move."""
        return self._move([f"PLAY {x},{y}"], timeout)

    def takeback(self, x: int, y: int, *, timeout: float = DEFAULT_TIMEOUT) -> None:
        self._expect_ok(f"TAKEBACK {x},{y}", timeout)

    def about(self, *, timeout: float = DEFAULT_TIMEOUT) -> dict[str, str]:
        answer = self.request("ABOUT", timeout=timeout)
        about = parse_about(answer)
        if not about:
            raise GomocupError(f"ABOUT: malformed answer {answer!r}", answer)
        return about

    def end(self, *, wait: float = 1.0) -> int | None:
        """END, then up to `wait` seconds for the brain to exit before killing it.

        Returns the exit code when it exited by itself, None when it had to be killed."""
        if self.process.poll() is None:
            try:
                self.send("END")
            except GomocupCrashed:
                pass
            try:
                return self.process.wait(timeout=wait)
            except subprocess.TimeoutExpired:
                pass
        else:
            return self.process.returncode
        self.kill()
        return None

    def kill(self) -> None:
        """Kill the brain now (a hung or forfeited brain); close() afterwards releases the pipes."""
        self.resume()
        if self.process.poll() is None:
            self.process.kill()
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass

    _kill = kill   # the name the arena used first

    def close(self) -> None:
        """END politely, kill if needed, release the pipes.  Safe to call twice."""
        self.end(wait=1.0)
        for thread in self._threads:   # the process is gone: its pipes reach EOF
            thread.join(timeout=1.0)
        for stream in (self.process.stdin, self.process.stdout, self.process.stderr):
            try:
                if stream is not None:
                    stream.close()
            except (OSError, ValueError):
                pass

    def __enter__(self) -> "GomocupClient":
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()
