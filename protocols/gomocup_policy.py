"""What the Gomocup brain decides without state: pure functions, unit-tested.

The time budget from INFO's clock settings, the rule from INFO's bitmask, the
MESSAGE text for a search report, the emergency move, coordinate parsing, and
`follow_stones`: the game line (states in play order, last move included) that
leads to the stones the manager says are on the board.
"""
from __future__ import annotations

from dataclasses import replace
from itertools import permutations
from typing import Sequence

from engine.games.base import GameSetupError, IllegalMoveError
from engine.games.gomoku import GomokuGame, GomokuState
from engine.players.options import option_by_key
from engine.train.pool import default_workers
from engine.types import Limits, SearchInfo
from protocols.timeman import LATENCY_FACTOR, MOVETIME_MAX_RESERVE

__all__ = ["brain_threads", "MEMORY_LIMITED_THREADS", "move_budget", "keep_back_latency", "moves_to_go",
           "follow_stones", "MAX_PLAYED_ON", "format_message", "fallback_move", "parse_ints", "ProtocolError", "UNLIMITED_MS", "DEFAULT_TIMEOUT_TURN_MS", "INSTANT_S", "MATCH_SOFT_SHARE",
           "MATCH_HARD_SHARES", "MOVE_COST_MS"]

UNLIMITED_MS = 2_147_483_647      # time_left when the match has no clock
DEFAULT_TIMEOUT_TURN_MS = 5_000
INSTANT_S = 0.05                  # timeout_turn 0 or no time left: depth 1, capped at this
# pipe lag + stop latency: 50 ms of a 1 s turn (was 12 %: 0.87 s used where Rapfi uses 0.97;
# MCTS's answers came at most 60 ms past the hard budget in 5,928 moves against Rapfi)
MARGIN_MIN_MS, MARGIN_MAX_MS, MARGIN_SHARE = 40.0, 300.0, 0.05
# While the match clock binds: the soft budget (MCTS's early stop when its move is not in doubt)
# is this much of the clock's share per move, and a move in doubt may run on to this many shares
# (within the turn).  Measured under 20 s a game (docs/measurements/issue25-time-use.md, section 4).
MATCH_SOFT_SHARE = 1.0
MATCH_HARD_SHARES = 2.0
MOVE_COST_MS = 20.0               # what a move costs the match clock outside the search (reserved per later move)
MAX_PLAYED_ON = 2                 # new stones a position may add to the line and still be played on


class ProtocolError(ValueError):
    """A known command that cannot be done: answered `ERROR <message>`."""


def moves_to_go(stones: int) -> int:
    """How many own moves to plan the match clock for: 8 at the start, down to 5 (a third of
    MCTS's moves are forced and cost nothing, a quarter end early by smart pruning)."""
    return max(5, 8 - stones // 16)


def move_budget(timeout_turn_ms: int | None, time_left_ms: int | None,
                timeout_match_ms: int | None, stones: int, *, empty: int | None = None,
                lag_ms: float = 0.0) -> Limits:
    """Per-move Limits from the Gomocup clock settings (all in ms, as INFO sends them).

    The hard budget is min(timeout_turn, MATCH_HARD_SHARES * usable / moves_to_go) minus a
    safety margin (40..300 ms, 5 %) for pipe lag and the searcher's stop latency, well inside
    the managers' 1000 ms tolerance.  timeout_turn 0 -> move at once (depth 1); no time left -> the same.
    time_left UNLIMITED_MS / None or timeout_match 0 -> the match clock does not bind.
    With a match clock, `usable` is time_left less a reserve for this move and every later one
    the board still has room for (`empty` cells: half of them are ours at most): MOVE_COST_MS each (a
    move's cost outside the search) plus `lag_ms`, the lag the manager's clock was seen to
    charge per move beyond the brain's own time.  So a long game keeps clock to its last move.
    Time saved on a move is worth something only while the match clock, not timeout_turn,
    limits the moves to come: the soft budget (no new iteration, MCTS's early stop) is
    MATCH_SOFT_SHARE of the clock's share (usable / moves_to_go), and there is none while
    that is still more than the turn allows.  Measured (benchmarks/gomocup_time_use.py): with
    timeout_match 180 s and a 1 s turn, a soft budget of half the turn left MCTS thinking
    0.35-0.44 s of each second; with 15 s a game and half the share as the soft budget,
    MCTS ended a 33-ply game with 12.4 s of its 15 unused.  Spending the whole hard budget on
    every move still keeps clock to the last move (the reserve above), so the plan may spend
    freely: a third of MCTS's moves are forced and a quarter end early by smart pruning, so
    with a 20-move horizon, a soft budget of 3/4 of the share and the share as the hard one it
    used 31 % of a 20 s clock; the horizon and budgets now (moves_to_go, MATCH_*) use 55 % of
    it, each step scored over half against the one before, and on 20x20 at 30 s a game the
    plan beat the old one 63/100 (docs/measurements/issue25-time-use.md, section 4).
    """
    instant = Limits(depth=1, time=INSTANT_S)
    turn = DEFAULT_TIMEOUT_TURN_MS if timeout_turn_ms is None else timeout_turn_ms
    if turn <= 0:
        return instant
    budget = float(turn)
    match_binds = time_left_ms is not None and time_left_ms < UNLIMITED_MS and timeout_match_ms != 0
    share = None          # the match clock's share for this move (ms), when it binds
    if match_binds:
        assert time_left_ms is not None
        if time_left_ms <= 0:
            return instant
        later_moves = max(0, (empty + 1) // 2 - 1) if empty is not None else moves_to_go(stones)
        usable = time_left_ms - (later_moves + 1) * (MOVE_COST_MS + max(0.0, lag_ms))   # this move's too
        if usable <= 0:   # live off the reserve: the least a move can cost
            return Limits(depth=1, time=min(INSTANT_S, max(time_left_ms / (4000.0 * (later_moves + 1)), 0.005)))
        share = usable / moves_to_go(stones)
        budget = min(budget, MATCH_HARD_SHARES * share)
    hard = (budget - _margin_ms(budget)) / 1000.0
    if hard <= INSTANT_S:
        return Limits(depth=1, time=min(INSTANT_S, max(budget / 2000.0, 0.005)))
    soft = None if share is None else MATCH_SOFT_SHARE * (share - _margin_ms(share)) / 1000.0
    return Limits(time=hard, soft_time=soft if soft is not None and soft < hard else None)


def _margin_ms(budget_ms: float) -> float:
    """What a budget keeps back for pipe lag and the searcher's stop latency."""
    return min(MARGIN_MAX_MS, max(MARGIN_MIN_MS, MARGIN_SHARE * budget_ms))


def keep_back_latency(limits: Limits, latency_ms: float) -> Limits:
    """Limits with LATENCY_FACTOR times the brain's measured answer latency (how late its
    answers came out past their budget: stop latency, a busy machine's stalls) taken off
    the time, within MOVETIME_MAX_RESERVE of it: UCI's movetime rule (protocols/timeman.py),
    with its constants.  Instant moves are left alone."""
    if limits.time is None or limits.time <= INSTANT_S or latency_ms <= 0:
        return limits
    hard = max(limits.time - LATENCY_FACTOR * latency_ms / 1000.0, (1.0 - MOVETIME_MAX_RESERVE) * limits.time)
    soft = None if limits.soft_time is None else min(limits.soft_time, hard)
    return replace(limits, time=hard, soft_time=soft)


def format_message(info: SearchInfo, game: GomokuGame) -> str:
    """One `MESSAGE` line for the manager's log: depth, value (side to move), nodes, time, pv."""
    parts = [f"MESSAGE depth {info.depth}", f"value {info.value:+.3f}"]
    if info.mate_plies is not None:
        parts.append(f"win_in {info.mate_plies}" if info.mate_plies > 0 else f"loss_in {-info.mate_plies}")
    parts += [f"nodes {info.nodes}", f"time {int(info.time * 1000)}ms"]
    if info.pv:
        parts.append("pv " + " ".join(game.format_move(None, m) for m in info.pv[:8]))
    return " ".join(parts)


# Under the judge's memory limit, at most this many network threads: each adds address space
# (VmSize 264 MB at one thread, 303 MB at eight, python benchmarks/gomocup_memory.py, of 350 MB).
MEMORY_LIMITED_THREADS = 8


def brain_threads(thread_num: int, max_memory: int = 0, cpus: int | None = None) -> int:
    """INFO thread_num (Yixin Board's extension; Rapfi reads it too) -> the network's threads:
    what the manager allows, at least 1, never more than the cores this process may use (`cpus`,
    default: all of them) or the Threads option's ceiling, and at most MEMORY_LIMITED_THREADS
    while INFO max_memory limits the brain."""
    cap = default_workers() if cpus is None else cpus
    ceiling = option_by_key("threads").maximum
    if ceiling is not None:
        cap = min(cap, int(ceiling))
    if max_memory > 0:
        cap = min(cap, MEMORY_LIMITED_THREADS)
    return max(1, min(thread_num, cap))


def fallback_move(state: GomokuState) -> int:
    """A legal move without searching (search failed or overran): the empty cell nearest the centre."""
    cx, cy = (state.width - 1) / 2, (state.height - 1) / 2
    return min(state.legal_moves(),
               key=lambda m: (m % state.width - cx) ** 2 + (m // state.width - cy) ** 2)


def parse_ints(text: str, count: int, form: str) -> list[int]:
    """'7,8' -> [7, 8], exactly `count` integers, else ProtocolError naming `form`."""
    parts = text.replace(" ", "").split(",")
    try:
        numbers = [int(p) for p in parts]
    except ValueError:
        numbers = []
    if len(numbers) != count:
        raise ProtocolError(f"malformed {text!r} (expected {form})")
    return numbers


def follow_stones(line: Sequence[GomokuState], cells: bytes,
                  listed: Sequence[int] = ()) -> list[GomokuState]:
    """The game line (states in play order, line[0] the set-up) whose last state holds `cells`.

    `cells` is the position the manager describes (bytes as GomokuState.cells: 1 first
    player, 2 second); `listed` the cells in the order a BOARD listed them.  The first
    rule that fits decides, so the last move survives whenever it can be known:
      1. line[-1] already holds `cells`                     -> the line as it is;
      2. `cells` = line[-1] plus 1..MAX_PLAYED_ON stones that can be played on in turn
         (a TURN, or BOARD after our answer and the opponent's reply) -> played on;
      3. the stones replayed in the listed order (piskvork and the Gomocup judge list
         them as played) alternate colours and end in `cells`         -> that replay;
      4. line[-1]'s last move is still on the board, in the colour of the side that moved
         last in `cells` (TAKEBACK of an older stone)       -> set up without it, then it;
      5. otherwise the stones set up directly (no last move known).
    Raises GameSetupError when `cells` is no reachable position (wrong stone counts,
    both sides with five).
    """
    state = line[-1]
    game = state.game
    if state.cells == cells:
        return list(line)
    added = [c for c, v in enumerate(cells) if v and not state.cells[c]]
    if len(added) <= MAX_PLAYED_ON and all(not v or cells[c] == v for c, v in enumerate(state.cells)):
        for order in permutations(added):
            played = _play_all(state, order)
            if played and played[-1].cells == cells:
                return list(line) + played
    if listed and len(listed) == sum(1 for v in cells if v):
        played = _play_all(game.initial_state(), listed)
        if played and played[-1].cells == cells:
            return [game.initial_state()] + played
    first = [c for c, v in enumerate(cells) if v == 1]
    second = [c for c, v in enumerate(cells) if v == 2]
    last = state.last_move
    if last is not None and cells[last] == 2 - (len(first) + len(second)) % 2:   # by the side that just moved
        try:
            before = game.state_from_stones([c for c in first if c != last], [c for c in second if c != last])
            after = before.play(last)
            if after.cells == cells:
                return [before, after]
        except (GameSetupError, IllegalMoveError):
            pass
    return [game.state_from_stones(first, second)]


def _play_all(state: GomokuState, moves: Sequence[int]) -> list[GomokuState]:
    """The states after each of `moves` played in turn; [] if one is illegal (game over, taken)."""
    out = []
    for move in moves:
        if not state.is_legal(move):
            return []
        state = state.play(move)
        out.append(state)
    return out
