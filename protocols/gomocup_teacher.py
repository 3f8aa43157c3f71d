"""Any Gomocup (piskvork) brain as a gomoku training teacher, e.g. Rapfi.

`gomocup_teacher` is a `engine.train.teacher.TeacherFactory`: it starts the brain
`config.gomocup` (argv) through protocols.gomocup_client, sends its INFO settings and
the per-move budget, and asks for each position with BOARD (own stones = the side to
move's), so one brain plays both colours and random plies need no takeback.  The board
size (START / RECTSTART) and `INFO rule` follow the positions asked.

Budget: `nodes` -> INFO max_node, `depth` -> INFO max_depth, `movetime` -> INFO
timeout_turn (ms).  A brain reads timeout_turn 0 with timeout_match 0 as "think for
ever" (Rapfi does), so timeout_turn is always sent (a generous cap when the budget is
nodes or depth) and timeout_match is never 0.  `gomocup_info` pairs are sent after
these and win over them (e.g. thread_num 1, max_memory).

Value: the brain's own evaluation when it prints one as Rapfi does,
`MESSAGE ... | Eval <v> | ...` with v in Rapfi's units (win rate = sigmoid(v / 200),
`+M7` / `-M7` a proven win / loss for the side to move); None otherwise.
"""
from __future__ import annotations

import math
import re
from typing import Any, Callable

import numpy as np

from engine.games.gomoku import RULE_CODES
from engine.train.teacher import Advice, Teach, TeacherConfig, soft_target
from protocols.gomocup_client import (GomocupClient, GomocupClientError, GomocupTimeout, parse_about,
                                      parse_move)

__all__ = ["gomocup_teacher", "parse_eval", "board_stones", "EVAL_SCALE"]

EVAL_SCALE = 200.0   # Rapfi's default ScalingFactor: win rate = sigmoid(eval / 200)
_NODE_CAP_MS = 60_000       # timeout_turn when the budget is nodes or depth
_MATCH_MS = 1_000_000_000   # timeout_match: large, never 0 (0 + timeout_turn 0 = unlimited)
_DEFAULT_INFO = (("thread_num", "1"), ("max_memory", str(64 * 1024 * 1024)))
_EVAL = re.compile(r"\bEval\s+([+-]?M[\d*]+|[+-]?\d+(?:\.\d+)?)", re.IGNORECASE)


def parse_eval(message: str, scale: float = EVAL_SCALE) -> float | None:
    """The win probability (side to move) in a MESSAGE line's `Eval v`, or None."""
    match = _EVAL.search(message)
    if match is None:
        return None
    text = match.group(1).upper()
    if "M" in text:
        return 0.0 if text.startswith("-") else 1.0
    return 1.0 / (1.0 + math.exp(-max(-50.0, min(50.0, float(text) / scale))))


def board_stones(state: Any) -> list[tuple[int, int, int]]:
    """The BOARD lines (x, y, field) of a position, field 1 for the side to move.  Brains
    replay them as a game (Rapfi: the first stone is Black's and colours alternate, or
    it inserts passes), so the two colours are interleaved, first player first, with
    the last move played last."""
    width = state.width
    first = [i for i, c in enumerate(state.cells) if c == 1]
    second = [i for i, c in enumerate(state.cells) if c == 2]
    last = state.last_move
    for stones in (first, second):
        if last in stones:
            stones.remove(last)
            stones.append(last)
    order = [cell for pair in zip(first, second) for cell in pair] + first[len(second):]
    own = 1 + state.to_play   # cells: 1 first player, 2 second
    return [(i % width, i // width, 1 if state.cells[i] == own else 2) for i in order]


def gomocup_teacher(config: TeacherConfig) -> tuple[Teach, Callable[[], None]]:
    """A TeacherFactory driving the Gomocup brain `config.gomocup`; pass it as
    teacher_batch(..., make_teacher=gomocup_teacher)."""
    assert config.gomocup is not None
    name = config.gomocup[0]
    try:
        brain = GomocupClient(list(config.gomocup))
    except GomocupClientError as exc:
        raise ValueError(f"Gomocup teacher: {exc}") from None
    shape: list[tuple[int, int, str]] = []   # the board size and rule the brain was set up for
    move_timeout = (config.movetime or _NODE_CAP_MS / 1000) + 30.0

    def setup(width: int, height: int, rule: str) -> None:
        try:
            brain.start(width, height)
        except GomocupClientError as exc:
            raise ValueError(f"Gomocup teacher refused {width}x{height}: {exc}") from None
        settings: dict[str, str] = dict(_DEFAULT_INFO)
        settings["timeout_match"] = str(_MATCH_MS)
        settings["time_left"] = str(_MATCH_MS)
        settings["timeout_turn"] = str(int(config.movetime * 1000) if config.movetime else _NODE_CAP_MS)
        if config.nodes is not None:
            settings["max_node"] = str(config.nodes)
        if config.depth is not None:
            settings["max_depth"] = str(config.depth)
        settings["rule"] = str(RULE_CODES.get(rule, 0))
        settings.update(dict(config.gomocup_info))
        for key, value in settings.items():
            brain.info(key, value)
        shape[:] = [(width, height, rule)]

    def wait_idle() -> None:
        """Rapfi prints its move a moment before it stops "thinking", and ignores commands
        that come in between (a BOARD among them): ABOUT, answered only when idle, tells."""
        for _ in range(200):
            try:
                brain.about(timeout=0.05)
                brain.drain()
                return
            except GomocupTimeout:
                continue
        raise GomocupTimeout("the brain stayed busy after its move")

    def teach(state: Any, game_index: int) -> Advice:
        width, height, rule = state.width, state.height, state.game.rule
        if shape != [(width, height, rule)]:
            setup(width, height, rule)
        try:
            wait_idle()
            seen = len(brain.messages)
            for line in ["BOARD"] + [f"{x},{y},{f}" for x, y, f in board_stones(state)] + ["DONE"]:
                brain.send(line)
            answer = brain.read_answer(move_timeout)
            while parse_about(answer):   # a late answer to wait_idle's ABOUT
                answer = brain.read_answer(move_timeout)
            x, y = parse_move(answer)
        except GomocupClientError as exc:
            raise ValueError(f"Gomocup teacher {name}: {exc}") from None
        move = y * width + x
        if not state.is_legal(move):
            raise ValueError(f"the Gomocup teacher played {x},{y}, not a legal move")
        win = None
        for message in reversed(brain.messages[seen:]):
            win = parse_eval(message)
            if win is not None:
                break
        wdl = None if win is None else np.array([win, 0.0, 1.0 - win])
        return Advice(move, soft_target(list(state.legal_moves()), [(move, 0.0)], 1.0), wdl)

    return teach, brain.close
