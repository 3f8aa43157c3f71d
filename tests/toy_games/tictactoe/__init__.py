"""Tic-tac-toe: the toy third game.  Its rules and its PROFILE are all it takes to play
through build_player (MCTS on the uniform evaluator, UCT, alpha-beta, random) and through
`arena run` (no engine protocol speaks it, so built-in players search in the arena's process;
no opening book: every game from the empty board; records: the plain move list)."""
from __future__ import annotations

from typing import Any

from engine.evaluators import UniformEvaluator
from engine.games.base import IllegalMoveError, Outcome
from engine.games.profile import GameProfile
from engine.search.ab_board import StateSearchBoard
from engine.search.uct import random_rollout

LINES = ((0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6))


class TicTacToeState:
    def __init__(self, game: "TicTacToe", cells: tuple[int, ...] = (0,) * 9, last_move: int | None = None):
        self.game, self.cells, self.last_move = game, cells, last_move
        self.ply = sum(1 for c in cells if c)
        self.to_play = self.ply % 2

    def legal_moves(self) -> list[int]:
        return [] if self.outcome() is not None else [i for i, c in enumerate(self.cells) if not c]

    def play(self, move: int) -> "TicTacToeState":
        if move not in self.legal_moves():
            raise IllegalMoveError(f"cell {move} is not free")
        cells = list(self.cells)
        cells[move] = self.to_play + 1
        return TicTacToeState(self.game, tuple(cells), move)

    def outcome(self) -> Outcome | None:
        for a, b, c in LINES:
            if self.cells[a] and self.cells[a] == self.cells[b] == self.cells[c]:
                return Outcome(self.cells[a] - 1, "three in a row")
        return Outcome(None, "board full") if self.ply == 9 else None

    def key(self) -> tuple[int, ...]:
        return self.cells

    def repeated(self) -> bool:
        return False


class TicTacToe:
    name = label = "tictactoe"
    sized, width, height, rule, protocol, stones = False, 3, 3, "", None, True
    max_plies, bench_depth = 9, 9

    def dirichlet_alpha(self, n_moves: int) -> float:
        return 1.0

    def bench_positions(self) -> list[tuple[str, Any]]:
        return [("empty", self.initial_state())]

    def initial_state(self) -> TicTacToeState:
        return TicTacToeState(self)

    def parse_move(self, state: Any, text: str) -> int:
        if not text.strip().isdigit() or int(text) not in state.legal_moves():
            raise IllegalMoveError(f"{text!r} is not a free cell 0-8")
        return int(text)

    def format_move(self, state: Any, move: int) -> str:
        return str(move)


PROFILE = GameProfile(name="tictactoe", rules=TicTacToe, heuristic=UniformEvaluator,
                      rollout=lambda: random_rollout,
                      alphabeta_board=lambda game, solver: StateSearchBoard.from_state)
