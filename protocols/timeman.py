"""Time manager: a UCI `go` (clock, movetime, depth, nodes...) -> Limits for one move.

Pure functions, no clock reading: the Stopper alone reads the clock during a search.
Inputs are milliseconds, exactly as UCI sends them; budgets come back in seconds,
ready for `Limits(time=hard, soft_time=soft)`.

The rule (the shape of Stockfish's timeman, not its constants): `overhead` (the pipe,
GUI and process lag the engine cannot see) is taken off the clock once, for this move,
plus a fixed reserve of four more overheads that is never planned into (a Python
process on a busy machine stalls for 40-150 ms now and then, as measured in fastchess
games; at 1+0.01 under a zero-margin client that reserve is what stands between a stall
and a loss on time); what is left is spread over a horizon of `movestogo` (or 40)
moves, and most of the increment is spent on top, since it comes back after every move.  That is the
optimum, `soft`: searchers start no new iteration after it.  `hard`, the maximum, lets
an iteration under way (or an undecided MCTS root) run on to three times the optimum,
but never past half of the clock left after the overhead, so a run of moves that all
hit their maximum still cannot flag while the real lag stays within the overhead.
With no clock left beyond the overhead the engine moves at once and lives off the
increment.

A game's own clock sets a second, larger floor: `base` (the largest clock the server has
seen this game, about the starting clock) keeps BASE_RESERVE of itself (at most
BASE_RESERVE_CAP_MS) off the plan.  A fixed 150 ms reserve was not enough: on a loaded CI
machine a 1+0.01 game ran its clock down to that floor by move 40 and then lost on time to
one stall of at least 170 ms that the engine could not see or prevent.  A quarter of a
one-second clock keeps 250 ms in hand for the whole game and costs each move of such a
game about 15 % of its planned time; a game of four seconds or more keeps one second.

Measured lag (`LagMeter`, fed by the UCI server from consecutive clocks of one game):
the worst recent lag stands in for `overhead` when it is larger, and when the usual
lag exceeds the increment (a loaded machine: even an instant move then costs clock),
that excess is set aside for each move of the horizon, since no allocation can avoid
paying it.  Below that, the increment pays the lag first and only the rest of it is
planned into (at most INCREMENT_SHARE of it), so a move that lasts its plan plus the
usual lag costs no more than the increment gives back.  The UCI server adds the
engine's own overrun past its hard budget to that usual lag.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

from engine.types import Limits

__all__ = ["GoCommand", "parse_go", "allocate", "movetime_budget", "parse_int", "LagMeter", "MIN_BUDGET",
           "LAG_RESERVE", "BASE_RESERVE", "BASE_RESERVE_CAP_MS",
           "SUDDEN_DEATH_HORIZON", "DEFAULT_OVERHEAD_MS"]

DEFAULT_OVERHEAD_MS = 30  # ms: pipe and GUI lag, the UCI `Move Overhead` default
MIN_BUDGET = 0.001       # seconds: even a hopeless clock gets a legal move, found at once
SUDDEN_DEATH_HORIZON = 40  # no movestogo: plan as if 40 more moves had to be played
MAX_HORIZON = 50         # a large movestogo is no reason to play faster than sudden death
LAG_RESERVE = 4          # overheads kept on the clock besides this move's (once, not per move to come)
BASE_RESERVE = 0.25      # share of the game's starting clock never planned into...
BASE_RESERVE_CAP_MS = 1000.0  # ...up to this much
INCREMENT_SHARE = 0.75   # of the increment spent on each move; the rest absorbs lag
HARD_FACTOR = 3.0        # hard = 3 x the optimum, within the caps below
SOFT_CAP = 0.2           # fractions of the clock after overhead one move may plan (soft, hard)...
HARD_CAP = 0.5
LAST_MOVE_CAPS = (0.5, 0.8)  # ...and for the last move before the time control
MOVETIME_MARGIN = 0.2    # share of a movetime kept for the answer's way back (<= overhead)
LATENCY_FACTOR = 2.0     # movetime: the measured answer latency is kept back this many times over...
MOVETIME_MAX_RESERVE = 0.3  # ...within this share of the movetime
LAG_SMOOTHING = 0.2      # LagMeter: weight of the newest sample in the running mean...
LAG_WORST_DECAY = 0.9    # ...and how fast the remembered worst lag fades per move


class LagMeter:
    """The lag a client's clock charges beyond the engine's own time for a move (pipes,
    process wake-ups, a busy machine), learned move by move: the clock before a move plus
    its increment, less the clock after it, less the engine's own go-to-bestmove time.
    `mean` is a running mean and `worst` a slowly fading maximum, both in ms."""

    def __init__(self) -> None:
        self.mean = 0.0
        self.worst = 0.0
        self.samples = 0

    def observe(self, lag_ms: float) -> None:
        lag = max(0.0, float(lag_ms))
        self.mean = lag if self.samples == 0 else (1 - LAG_SMOOTHING) * self.mean + LAG_SMOOTHING * lag
        self.worst = max(lag, LAG_WORST_DECAY * self.worst)
        self.samples += 1


def allocate(wtime: float | None, btime: float | None, winc: float | None, binc: float | None,
             movestogo: int | None, turn: int, overhead: float = DEFAULT_OVERHEAD_MS,
             lag: float = 0.0, base: float | None = None) -> tuple[float, float]:
    """(soft, hard) seconds for the side `turn` (0 White, 1 Black); clock arguments in ms.
    lag: the usual lag per move measured so far (LagMeter.mean, ms); what of it the
    increment does not pay is set aside for each move of the horizon after this one.
    base: the game's starting clock (ms) when known; its BASE_RESERVE share replaces the
    overhead reserve when larger (see the module docstring).

    Only one side's clock given (fastchess with a clock for one engine): the other
    side's clock stands in for ours.  Missing or zero increments count as 0; a clock at
    or below the overhead and its reserve gives MIN_BUDGET.  Guarantees MIN_BUDGET <=
    soft <= hard and, with usable = remaining - (1 + LAG_RESERVE) * overhead >= 2 ms,
    hard <= HARD_CAP * usable / 1000 (LAST_MOVE_CAPS[1] of it on the last move before a
    time control); a `base` only lowers `usable` further.
    """
    own, other = (wtime, btime) if turn == 0 else (btime, wtime)
    remaining = own if own is not None else other
    if remaining is None:
        raise ValueError("allocate() needs at least one of wtime/btime")
    inc = max(0.0, float((winc if turn == 0 else binc) or 0.0))
    overhead = max(0.0, float(overhead))
    reserve = LAG_RESERVE * overhead
    if base is not None and base > 0:
        reserve = max(reserve, min(BASE_RESERVE * float(base), BASE_RESERVE_CAP_MS))
    usable = float(remaining) - overhead - reserve  # once, not per move to come
    horizon = SUDDEN_DEATH_HORIZON if not movestogo or movestogo <= 0 else min(int(movestogo), MAX_HORIZON)
    usable -= max(0.0, float(lag) - inc) * (horizon - 1)
    if usable <= 0:
        return MIN_BUDGET, MIN_BUDGET
    if movestogo is not None and movestogo == 1:
        soft, hard = LAST_MOVE_CAPS[0] * usable, LAST_MOVE_CAPS[1] * usable
    else:
        optimum = usable / horizon + min(INCREMENT_SHARE * inc, max(0.0, inc - float(lag)))
        soft = min(optimum, SOFT_CAP * usable)
        hard = max(soft, min(HARD_FACTOR * optimum, HARD_CAP * usable))
    return max(MIN_BUDGET, soft / 1000.0), max(MIN_BUDGET, hard / 1000.0)


def movetime_budget(movetime: float, overhead: float = DEFAULT_OVERHEAD_MS, latency: float = 0.0) -> float:
    """Seconds to search for `go movetime <ms>`: the full time less a margin for the
    answer's way back (20 % of it, at most `overhead`), so it lands just inside.

    latency: how late the engine's own answers have come out past their search budget
    (ms; the UCI server's overrun LagMeter.worst: stop latency, the answer's formatting, a
    busy machine's stalls).  It is kept back LATENCY_FACTOR times: once for what the
    engine sees, once more for what it cannot (the pipes both ways, waiting for a core,
    which grow with the same load), within MOVETIME_MAX_RESERVE of the movetime.
    Measured with benchmarks/movetime_under_load.py (README: the busy-machine clock).
    """
    movetime = float(movetime)
    margin = min(max(0.0, float(overhead)), MOVETIME_MARGIN * movetime)
    margin = min(margin + LATENCY_FACTOR * max(0.0, float(latency)), max(margin, MOVETIME_MAX_RESERVE * movetime))
    return max(MIN_BUDGET, (movetime - margin) / 1000.0)


_GO_NUMBERS = frozenset({"wtime", "btime", "winc", "binc", "movestogo", "depth", "nodes", "mate", "movetime"})
_GO_KEYWORDS = _GO_NUMBERS | {"ponder", "infinite", "searchmoves"}


@dataclass(frozen=True)
class GoCommand:
    """A parsed `go`.  limits: what a normal search spends (for `ponder`, what it spends
    after `ponderhit`); searchmoves stay text until the server checks them against the
    position."""
    limits: Limits
    ponder: bool = False
    searchmoves: tuple[str, ...] = ()
    clock_ms: float | None = None   # our own clock, when the client sent it
    inc_ms: float = 0.0
    ignored: tuple[str, ...] = ()   # what was skipped, said back to the client in one line

    @property
    def infinite(self) -> bool:
        """`go infinite`: search until stop; the bestmove waits for it."""
        return self.limits.infinite


def parse_int(text: str) -> int | None:
    """'1000', '-50', '1e3' -> int; anything else (or inf/nan) -> None."""
    try:
        value = float(text)
    except ValueError:
        return None
    return int(value) if math.isfinite(value) else None


def parse_go(tokens: Sequence[str], turn: int, *, overhead_ms: float = DEFAULT_OVERHEAD_MS,
             lag_ms: float = 0.0, base_ms: float | None = None, latency_ms: float = 0.0) -> GoCommand:
    """`go` arguments (tokens after `go`, any order) -> GoCommand for the side `turn` to move.

    lag_ms: the measured usual lag per move; base_ms: the game's starting clock (see allocate);
    latency_ms: the engine's worst recent answer latency (see movetime_budget).
    Unknown tokens and numbers that do not parse are skipped (and listed in `ignored`).
    `mate n` becomes depth 2n-1 when no depth is given; `movetime` wins over a clock; one
    side's clock alone stands in for both (see timeman.allocate).
    """
    values: dict[str, int] = {}
    ponder = infinite = False
    searchmoves: list[str] = []
    ignored: list[str] = []
    i = 0
    while i < len(tokens):
        token = tokens[i].lower()
        i += 1
        if token in _GO_NUMBERS:
            value = parse_int(tokens[i]) if i < len(tokens) else None
            if value is not None:
                values[token] = value
                i += 1
            elif i < len(tokens) and tokens[i].lower() not in _GO_KEYWORDS:
                ignored.append(f"{token} {tokens[i]!r} (not a number)")
                i += 1
            else:
                ignored.append(f"{token} (no value)")
        elif token == "ponder":
            ponder = True
        elif token == "infinite":
            infinite = True
        elif token == "searchmoves":
            while i < len(tokens) and tokens[i].lower() not in _GO_KEYWORDS:
                searchmoves.append(tokens[i].lower())
                i += 1
        else:
            ignored.append(f"{tokens[i - 1]!r} (unknown)")
    if infinite:
        return GoCommand(Limits(infinite=True), ponder, tuple(searchmoves), ignored=tuple(ignored))
    depth = values.get("depth")
    if depth is None and values.get("mate", 0) > 0:
        depth = 2 * values["mate"] - 1
    nodes = values.get("nodes")
    soft = hard = None
    clock_ms: float | None = None
    inc_ms = 0.0
    if values.get("movetime") is not None:
        soft = hard = movetime_budget(max(0, values["movetime"]), overhead_ms, latency_ms)
    elif "wtime" in values or "btime" in values:
        soft, hard = allocate(values.get("wtime"), values.get("btime"), values.get("winc"),
                              values.get("binc"), values.get("movestogo"), turn, overhead_ms, lag_ms, base_ms)
        own = "wtime" if turn == 0 else "btime"
        clock_ms = float(values[own]) if own in values else None
        inc_ms = float(max(0, values.get("winc" if turn == 0 else "binc", 0)))
    limits = Limits(nodes=nodes if nodes is not None and nodes > 0 else None, time=hard, soft_time=soft,
                    depth=max(1, depth) if depth is not None else None)
    return GoCommand(limits, ponder, tuple(searchmoves), clock_ms, inc_ms, tuple(ignored))
