"""The live view of one search: SearchInfo reports turned into what the page draws.

Values arrive from the root's side to move; the page shows the win/draw/loss bar from the
first player's side (White, black stones), so `wdl_first` is turned once here.  Moves are
given twice: as the protocol writes them (`e2e4`, `7,7`: what the page clicks and draws
arrows with) and as a person reads them (SAN for chess).
"""
from __future__ import annotations

from typing import Any, Sequence

from engine.games import board_view
from engine.types import Move, SearchInfo

__all__ = ["LiveView", "move_text", "move_label", "wdl_of"]

MAX_HEAT = 400       # cells / moves sent for the heat map (a 26x26 board has 676)


def move_text(game: Any, state: Any, move: Move) -> str:
    """The move as the protocols write it: UCI `e7e8q`, Gomocup `x,y`."""
    return str(game.format_move(state, move))


def move_label(game: Any, state: Any, move: Move) -> str:
    """The move as a person reads it: SAN for chess, `x,y` for gomoku (the game's board view)."""
    return str(board_view(game).move_label(state, move))


def wdl_of(info: SearchInfo) -> tuple[int, int, int]:
    """(win, draw, loss) per mille for the side to move: the searcher's own when it has one,
    else read from the value as an expected score with no draws."""
    if info.wdl is not None:
        return info.wdl
    win = round(500 * (1.0 + max(-1.0, min(1.0, info.value))))
    return win, 0, 1000 - win


def _pv_labels(game: Any, state: Any, pv: Sequence[Move]) -> tuple[list[str], list[str]]:
    """Texts and labels of a PV, played out from `state`; stops at a move that is not legal."""
    texts, labels = [], []
    for move in pv:
        if state.outcome() is not None or move not in state.legal_moves():
            break
        texts.append(move_text(game, state, move))
        labels.append(move_label(game, state, move))
        state = state.play(move)
    return texts, labels


class LiveView:
    """Collects the reports of one search of `state` (not thread-safe: the session locks)."""

    def __init__(self, game: Any, state: Any, searcher_name: str):
        self.game, self.state, self.searcher = game, state, searcher_name
        self.head: SearchInfo | None = None
        self.lines: list[SearchInfo] = []

    def add(self, info: SearchInfo) -> None:
        """Rank 1 opens a new set of lines (alpha-beta reports ranks 1..k per depth, MCTS all
        k each time); the head keeps the latest counters and heat map."""
        if info.multipv <= 1:
            self.head = info
            self.lines = [info]
        else:
            self.lines = [line for line in self.lines if line.multipv < info.multipv] + [info]

    def to_json(self) -> dict[str, Any] | None:
        head = self.head
        if head is None:
            return None
        side = self.state.to_play
        win, draw, loss = wdl_of(head)
        lines = []
        for line in self.lines:
            texts, labels = _pv_labels(self.game, self.state, line.pv)
            lines.append({"rank": line.multipv, "value": round(line.value, 4), "mate": line.mate_plies,
                          "moves": texts, "pv": labels})
        return {
            "searcher": self.searcher, "side": side, "depth": head.depth, "seldepth": head.seldepth,
            "nodes": head.nodes, "nps": head.nps, "time": round(head.time, 3),
            "value": round(head.value, 4), "mate": head.mate_plies,
            "wdl": [win, draw, loss], "wdl_first": [win, draw, loss] if side == 0 else [loss, draw, win],
            "lines": lines, "heat": self._heat(head),
        }

    def _heat(self, head: SearchInfo) -> list[dict[str, Any]]:
        """Root moves with their visit count and prior (MCTS), most visited first; [] when the
        searcher counts no visits."""
        visits, priors = head.root_visits, head.root_priors
        moves = self.state.legal_moves()
        if visits is None or len(visits) != len(moves):
            return []
        if priors is None or len(priors) != len(moves):
            priors = (0.0,) * len(moves)
        order = sorted(range(len(moves)), key=lambda j: (-visits[j], -priors[j]))[:MAX_HEAT]
        return [{"move": move_text(self.game, self.state, moves[j]), "visits": visits[j],
                 "prior": round(priors[j], 5)} for j in order if visits[j] or priors[j] >= 1e-4]
