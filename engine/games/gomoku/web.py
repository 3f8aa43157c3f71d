"""How the web board (engine/web) shows gomoku: `x,y` labels, a plain move-list record,
a set-up from stones played in order, and the cells the page draws (play.js)."""
from __future__ import annotations

import re
from typing import Any, Sequence

from engine.types import Move

COLOURS = ("Black", "White")
_STONE_SEPARATORS = re.compile(r"[\s;]+")


def move_label(state: Any, move: Move) -> str:
    return str(state.game.format_move(state, move))


def game_record(game: Any, start: Any, moves: Sequence[Move], names: tuple[str, str], result: str,
                reason: str | None, date: str) -> tuple[str, str]:
    """(file suffix, text): a commented header, then one `x,y` move a line."""
    lines = [f"# PlyZero web board: gomoku {game.width}x{game.height} {game.rule}",
             f"# Black: {names[0]}", f"# White: {names[1]}",
             f"# Result: {result}" + (f" ({reason})" if reason is not None else "")]
    state = start
    for move in moves:
        lines.append(game.format_move(state, move))
        state = state.play(move)
    return ".txt", "\n".join(lines) + "\n"


def position(game: Any, text: str) -> tuple[Any, list[Move]]:
    """The initial state and the stones of `text` ("7,7 8,8 ...") as moves in order;
    IllegalMoveError for a stone that cannot be played."""
    state, moves = game.initial_state(), []
    for token in filter(None, _STONE_SEPARATORS.split(text)):
        move = game.parse_move(state, token)
        moves.append(move)
        state = state.play(move)
    return game.initial_state(), moves


def snapshot(game: Any, state: Any) -> dict[str, Any]:
    return {"width": game.width, "height": game.height, "cells": "".join(str(c) for c in state.cells)}
