"""Gomoku's hand-written knowledge for the network-free players: the line-threat evaluator
(MCTS without a network, UCT's move order) and the random roll-out UCT scores leaves with."""
from __future__ import annotations

import random
from typing import Sequence

import numpy as np

from engine.types import Evaluation

__all__ = ["GomokuHeuristicEvaluator", "gomoku_cell_scores", "gomoku_rollout"]

# Window scores by stones of one colour in a five-cell window with no enemy stone: a cell
# gains the score of every live window through it.  Own windows weigh more than enemy ones
# (making four beats blocking a three; completing five beats blocking a four).
_OWN_WINDOW = np.array([0.0, 1.0, 8.0, 64.0, 100000.0])
_OPP_WINDOW = np.array([0.0, 0.8, 6.0, 48.0, 10000.0])
_LINES = ((1, 0), (0, 1), (1, 1), (1, -1))


def _window_counts(planes: np.ndarray, dx: int, dy: int) -> np.ndarray:
    """planes [C, H+8, W+8] (padded by 4) -> [C, 5, H, W]: stones in each of the five
    five-cell windows along (dx, dy) that contain each board cell."""
    _, hp, wp = planes.shape
    h, w = hp - 8, wp - 8
    shifted = np.stack([planes[:, 4 + j * dy:4 + j * dy + h, 4 + j * dx:4 + j * dx + w]
                        for j in range(-4, 5)], axis=1)          # [C, 9, H, W]
    cum = np.concatenate([np.zeros_like(shifted[:, :1]), np.cumsum(shifted, axis=1)], axis=1)
    return cum[:, 5:10] - cum[:, 0:5]                           # windows starting at -4..0


def gomoku_cell_scores(cells: bytes, width: int, height: int, to_play: int) -> tuple[np.ndarray, float, float]:
    """Threat scores [H*W] of every cell for the side to move, plus the summed own and
    enemy line strength (for a value).  Occupied cells score 0."""
    board = np.frombuffer(cells, dtype=np.uint8).reshape(height, width)
    own = board == 1 + to_play
    opp = board == 2 - to_play
    planes = np.zeros((3, height + 8, width + 8), dtype=np.int8)
    planes[2] = 1                                               # off-board walls
    planes[0, 4:-4, 4:-4] = own
    planes[1, 4:-4, 4:-4] = opp
    planes[2, 4:-4, 4:-4] = 0
    score = np.zeros((height, width))
    own_strength = opp_strength = 0.0
    for dx, dy in _LINES:
        n_own, n_opp, n_wall = _window_counts(planes, dx, dy)
        open_own = (n_opp == 0) & (n_wall == 0)
        open_opp = (n_own == 0) & (n_wall == 0)
        own_win = np.where(open_own, _OWN_WINDOW[np.minimum(n_own, 4)], 0.0)
        opp_win = np.where(open_opp, _OPP_WINDOW[np.minimum(n_opp, 4)], 0.0)
        score += own_win.sum(axis=0) + opp_win.sum(axis=0)
        own_strength += float(own_win.sum())
        opp_strength += float(opp_win.sum())
    score[board != 0] = 0.0
    return score.reshape(-1), own_strength, opp_strength


class GomokuHeuristicEvaluator:
    """Priors from line threats (cells that extend or block lines, near the stones), value
    from the balance of line strength.  A cheap stand-in for a network (~0.3 ms a state)."""

    def __init__(self, sharpness: float = 1.0):
        self.sharpness = sharpness

    def evaluate(self, states: Sequence) -> list[Evaluation]:
        return [self._one(s) for s in states]

    def _one(self, state) -> Evaluation:
        moves = state.legal_moves()
        if not moves:
            return Evaluation(priors=np.zeros(0), value=0.0)
        game = state.game
        score, own, opp = gomoku_cell_scores(state.cells, game.width, game.height, state.to_play)
        cx, cy = (game.width - 1) / 2, (game.height - 1) / 2
        idx = np.asarray(moves)
        xs, ys = idx % game.width, idx // game.width
        centre = 1.0 / (1.0 + np.hypot(xs - cx, ys - cy))       # breaks ties on an empty board
        weights = (score[idx] + 0.05 * centre + 1e-3) ** self.sharpness
        value = float(np.tanh((own - opp) / (own + opp + 50.0)))
        return Evaluation(priors=weights / weights.sum(), value=value)


def gomoku_rollout(state, rng: random.Random) -> float:
    """Random moves to the end of the game; +1/-1/0 for the side to move in `state`."""
    outcome = state.outcome()
    if outcome is not None:
        return outcome.value_for(state.to_play)
    game = state.game
    cells = bytearray(state.cells)
    empties = [i for i, c in enumerate(cells) if c == 0]
    rng.shuffle(empties)
    stone = 1 + state.to_play
    for move in empties:
        cells[move] = stone
        if game.makes_five(cells, move):
            return 1.0 if stone == 1 + state.to_play else -1.0
        stone = 3 - stone
    return 0.0
