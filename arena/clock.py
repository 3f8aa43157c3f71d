"""Time controls and the referee's own clocks.

The referee never trusts an engine's idea of time: it measures each move itself
and charges it to a `Clock`.  A move that takes longer than the side's budget plus
the margin loses on time.  All times are seconds (floats); protocols get ms.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["TimeControl", "MoveLimits", "Clock", "parse_tc", "TimeControlError"]


class TimeControlError(ValueError):
    """A time-control string that cannot be read."""


@dataclass(frozen=True)
class TimeControl:
    """Chess clock `moves/base+increment` (cutechess syntax): `40/60+0.6`, `10+0.1`, `60`.

    moves: the clock gets `base` again every `moves` moves of that side (None: sudden death).
    """
    base: float
    increment: float = 0.0
    moves: int | None = None

    def __str__(self) -> str:
        text = f"{self.base:g}+{self.increment:g}" if self.increment else f"{self.base:g}"
        return f"{self.moves}/{text}" if self.moves else text


_TC = re.compile(r"^(?:(\d+)/)?(\d+(?:\.\d*)?|\d+:\d{1,2}(?:\.\d*)?)(?:\+(\d+(?:\.\d*)?))?$")


def _seconds(text: str) -> float:
    if ":" in text:
        minutes, seconds = text.split(":")
        return int(minutes) * 60 + float(seconds)
    return float(text)


def parse_tc(text: str) -> TimeControl:
    """`40/60+0.6` -> TimeControl(60, 0.6, 40); base may be `m:ss`.  TimeControlError if malformed."""
    match = _TC.match(text.strip())
    if not match:
        raise TimeControlError(f"malformed time control {text!r} (expected [moves/]base[+inc], e.g. 40/60+0.6)")
    moves, base, inc = match.groups()
    tc = TimeControl(base=_seconds(base), increment=float(inc) if inc else 0.0,
                     moves=int(moves) if moves else None)
    if tc.base <= 0 or (tc.moves is not None and tc.moves <= 0):
        raise TimeControlError(f"time control {text!r} must have a positive base and move count")
    return tc


@dataclass(frozen=True)
class MoveLimits:
    """What one side may spend, as the tournament states it.

    movetime: fixed seconds per move (UCI `movetime`, Gomocup `timeout_turn`).
    tc: chess clock (UCI wtime/btime/winc/binc/movestogo).
    match_time: Gomocup `timeout_match` (seconds for the whole game, no increment).
    nodes / depth: search limits sent to the engine (not enforced by the referee).
    margin: extra seconds the referee tolerates beyond a budget before a time forfeit.
    timeout: the longest any move may take when no time limit applies (hang detection).
    max_memory_mb: Gomocup `max_memory`, and the judge's check of the brain's virtual size
    after each move (over it: the game is lost).  suspend: the judge's SIGSTOP of a brain
    while its opponent thinks.
    """
    movetime: float | None = None
    tc: TimeControl | None = None
    match_time: float | None = None
    nodes: int | None = None
    depth: int | None = None
    margin: float = 1.0
    timeout: float = 60.0
    max_memory_mb: int | None = None
    suspend: bool = False

    @property
    def timed(self) -> bool:
        return self.movetime is not None or self.tc is not None or self.match_time is not None


class Clock:
    """One side's clock in one game.  Not thread-safe; the referee owns it."""

    def __init__(self, limits: MoveLimits):
        self.limits = limits
        tc = limits.tc
        self.remaining: float | None = tc.base if tc else limits.match_time
        self.moves_made = 0

    def moves_to_go(self) -> int | None:
        tc = self.limits.tc
        if tc is None or tc.moves is None:
            return None
        return tc.moves - self.moves_made % tc.moves

    def budget(self) -> float:
        """Seconds this side may think on its next move before the margin starts."""
        candidates = [c for c in (self.limits.movetime, self.remaining) if c is not None]
        return max(0.0, min(candidates)) if candidates else self.limits.timeout

    def deadline(self) -> float:
        """Seconds after which the referee gives up waiting: budget + margin."""
        return self.budget() + self.limits.margin

    def charge(self, elapsed: float) -> bool:
        """Book a move that took `elapsed` seconds; False when the flag fell (a forfeit)."""
        over = elapsed > self.deadline()
        self.moves_made += 1
        if self.remaining is not None:
            self.remaining -= elapsed
            tc = self.limits.tc
            if tc is not None:
                self.remaining += tc.increment
                if tc.moves is not None and self.moves_made % tc.moves == 0:
                    self.remaining += tc.base
        return not over
