"""What the Gomocup brain decides without state: pure functions, unit-tested.

The time budget from INFO's clock settings, the rule from INFO's bitmask, the
MESSAGE text for a search report, the emergency move, and coordinate parsing.
"""
from __future__ import annotations

from engine.games.gomoku import GomokuGame, GomokuState
from engine.types import Limits, SearchInfo

__all__ = ["move_budget", "moves_to_go", "rule_from_bits", "format_message", "fallback_move",
           "parse_ints", "ProtocolError", "UNLIMITED_MS", "DEFAULT_TIMEOUT_TURN_MS", "INSTANT_S"]

UNLIMITED_MS = 2_147_483_647      # time_left when the match has no clock
DEFAULT_TIMEOUT_TURN_MS = 5_000
INSTANT_S = 0.05                  # timeout_turn 0 or no time left: depth 1, capped at this
MARGIN_MIN_MS, MARGIN_MAX_MS, MARGIN_SHARE = 40.0, 300.0, 0.12  # pipe lag + stop latency


class ProtocolError(ValueError):
    """A known command that cannot be done: answered `ERROR <message>`."""


def moves_to_go(stones: int) -> int:
    """How many own moves to plan the match clock for: 20 at the start, down to 10."""
    return max(10, 20 - stones // 8)


def move_budget(timeout_turn_ms: int | None, time_left_ms: int | None,
                timeout_match_ms: int | None, stones: int) -> Limits:
    """Per-move Limits from the Gomocup clock settings (all in ms, as INFO sends them).

    Spend min(timeout_turn, time_left / moves_to_go) minus a safety margin (100..300 ms,
    12 %) for pipe lag and the searcher's stop latency, well inside the managers' 1000 ms
    tolerance.  timeout_turn 0 -> move at once (depth 1); no time left -> the same.
    time_left UNLIMITED_MS / None or timeout_match 0 -> the match clock does not bind.
    When the match clock binds, no new iteration starts after half the budget.
    """
    instant = Limits(depth=1, time=INSTANT_S)
    turn = DEFAULT_TIMEOUT_TURN_MS if timeout_turn_ms is None else timeout_turn_ms
    if turn <= 0:
        return instant
    budget = float(turn)
    match_binds = time_left_ms is not None and time_left_ms < UNLIMITED_MS and timeout_match_ms != 0
    if match_binds:
        assert time_left_ms is not None
        if time_left_ms <= 0:
            return instant
        budget = min(budget, time_left_ms / moves_to_go(stones))
    margin = min(MARGIN_MAX_MS, max(MARGIN_MIN_MS, MARGIN_SHARE * budget))
    hard = (budget - margin) / 1000.0
    if hard <= INSTANT_S:
        return Limits(depth=1, time=min(INSTANT_S, max(budget / 2000.0, 0.005)))
    return Limits(time=hard, soft_time=hard / 2 if match_binds else None)


def rule_from_bits(bits: int) -> tuple[str, str | None]:
    """INFO rule bitmask -> (our rule name, a note when part of it is not supported)."""
    rule = "standard" if bits & (1 | 4) else "freestyle"
    unsupported = [name for bit, name in ((2, "continuous"), (4, "renju"), (8, "caro")) if bits & bit]
    note = None
    if unsupported:
        note = f"rule {bits}: {', '.join(unsupported)} not supported, playing {rule}"
    return rule, note


def format_message(info: SearchInfo, game: GomokuGame) -> str:
    """One `MESSAGE` line for the manager's log: depth, value (side to move), nodes, time, pv."""
    parts = [f"MESSAGE depth {info.depth}", f"value {info.value:+.3f}"]
    if info.mate_plies is not None:
        parts.append(f"win_in {info.mate_plies}" if info.mate_plies > 0 else f"loss_in {-info.mate_plies}")
    parts += [f"nodes {info.nodes}", f"time {int(info.time * 1000)}ms"]
    if info.pv:
        parts.append("pv " + " ".join(game.format_move(None, m) for m in info.pv[:8]))
    return " ".join(parts)


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
