"""Gomoku states <-> network planes and policy cells (numpy only, no torch).

Planes [C=9, H, W], side-to-move frame:
  0 own stones (the player to move)   1 opponent stones   2 last move (one-hot)
  3 side to move (constant: 1 when the second player moves)   4 on-board mask
  5 exactly five (constant: 0 for freestyle, 1 for standard, renju and caro)
  6 renju (constant)   7 caro (constant)
  8 black's forbidden points under renju (whoever moves: white aims to force black onto
    them, black's own are also masked out of its legal moves); 0 under the other rules
Version 1 (6 planes) was planes 0-5: a version-1 network reads the first 6 planes of a
version-2 encoding (PLANES_BY_VERSION), and a version-1 shard is read as version 2 with
planes 6-8 zero, which is what they are under freestyle and standard.
A batch of mixed board sizes is padded to the largest height and width; padding has
every plane 0 (mask included), so the masked network computes the same numbers as
for each board alone.  Policy: one logit per cell, read at [y, x] of the padded
grid; `move_index` is the cell index y * width + x in the state's own frame.
"""
from __future__ import annotations

from typing import Hashable, Sequence

import numpy as np

from engine.games.gomoku.lines import LINE_PLANES, line_planes

__all__ = [
    "CODEC_VERSION", "PLANES", "PLANES_BY_VERSION", "encode", "move_index", "index_to_move", "legal_index",
    "priors_from_logits", "priors_batch", "cell_target", "cache_key", "board_shape",
    "MASK_PLANE", "GomokuCodec", "CODEC",
]

CODEC_VERSION = 2
PLANES = 9
MASK_PLANE = 4
# codec version -> input planes of a network or shard of that version (a prefix of PLANES)
PLANES_BY_VERSION = {1: 6, 2: PLANES}


def board_shape(states: Sequence) -> tuple[int, int]:
    """(height, width) that fits every state of the batch."""
    return max(s.height for s in states), max(s.width for s in states)


def encode_into(out: np.ndarray, state) -> None:
    """Fill out[C, H>=height, W>=width] (zeros beyond the board) for one state; C may be
    fewer than PLANES (an older network's prefix: the rest is not computed)."""
    h, w = state.height, state.width
    cells = np.frombuffer(state.cells, dtype=np.uint8).reshape(h, w)
    own = 1 + state.to_play
    out[0, :h, :w] = cells == own
    out[1, :h, :w] = cells == 3 - own
    if state.last_move is not None:
        out[2, state.last_move // w, state.last_move % w] = 1.0
    out[3, :h, :w] = float(state.to_play)
    out[MASK_PLANE, :h, :w] = 1.0
    rule = state.game.rule
    out[5, :h, :w] = 0.0 if rule == "freestyle" else 1.0
    if out.shape[0] > 6:
        out[6, :h, :w] = rule == "renju"
        out[7, :h, :w] = rule == "caro"
        for cell in state.black_forbidden_points():
            out[8, cell // w, cell % w] = 1.0


def encode(states: Sequence, shape: tuple[int, int] | None = None, planes: int = PLANES) -> np.ndarray:
    """States -> float32 planes [B, planes, H, W], padded to `shape` or the largest board."""
    h, w = shape or board_shape(states)
    out = np.zeros((len(states), planes, h, w), dtype=np.float32)
    for i, state in enumerate(states):
        encode_into(out[i], state)
    return out


def move_index(state, move: int) -> int:
    """Policy index of a cell move in the state's own frame (the move itself: y * W + x)."""
    if not 0 <= move < state.width * state.height:
        raise ValueError(f"cell {move} is off the {state.width}x{state.height} board")
    return int(move)


def index_to_move(state, index: int) -> int:
    return move_index(state, index)


def legal_index(state, padded_width: int | None = None) -> np.ndarray:
    """Flat indices of state.legal_moves() (in order) into a grid `padded_width` wide."""
    moves = np.asarray(state.legal_moves(), dtype=np.int64)
    pw = padded_width or state.width
    if pw == state.width:
        return moves
    return (moves // state.width) * pw + moves % state.width


def _softmax(logits: np.ndarray) -> np.ndarray:
    if logits.size == 0:
        return logits.astype(np.float64)
    z = np.exp(logits.astype(np.float64) - logits.max())
    return z / z.sum()


def priors_from_logits(state, logits: np.ndarray) -> np.ndarray:
    """Policy logits [H', W'] (H' >= height, W' >= width) -> probabilities over legal moves."""
    return _softmax(logits.reshape(-1)[legal_index(state, logits.shape[-1])])


def priors_batch(states: Sequence, outputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """Network policy outputs ([B, H, W] logits) -> per-state priors over legal moves.

    States whose legal moves are their empty cells (every rule but renju on black's turn)
    on an unpadded grid share one masked softmax read off their cells: the numbers of
    priors_from_logits (to rounding) without a Python list per state, which cost MCTS about
    7 % of a 20x20 search (docs/measurements/node-overhead.md)."""
    (logits,) = outputs
    h, w = logits.shape[-2:]
    plain = [i for i, s in enumerate(states) if s.height == h and s.width == w and s.moves_are_empty_cells()]
    shared: dict[int, np.ndarray] = {}
    if len(plain) > 1:
        legal = np.frombuffer(b"".join(states[i].cells for i in plain), dtype=np.uint8).reshape(len(plain), h * w) == 0
        z = np.where(legal, logits[plain].reshape(len(plain), h * w).astype(np.float64), -np.inf)
        z = np.exp(z - z.max(axis=1, keepdims=True))
        z /= z.sum(axis=1, keepdims=True)
        shared = {i: z[row][legal[row]] for row, i in enumerate(plain)}
    return [shared[i] if i in shared else priors_from_logits(s, logits[i]) for i, s in enumerate(states)]


def cell_target(state, visits: Sequence[float], shape: tuple[int, int] | None = None) -> np.ndarray:
    """Visit counts over state.legal_moves() -> target distribution [H, W] (zeros elsewhere)."""
    h, w = shape or (state.height, state.width)
    counts = np.asarray(visits, dtype=np.float64)
    if counts.shape != (len(state.legal_moves()),):
        raise ValueError(f"{counts.shape[0]} visit counts for {len(state.legal_moves())} legal moves")
    target = np.zeros(h * w, dtype=np.float32)
    total = counts.sum()
    if total > 0:
        target[legal_index(state, w)] = counts / total
    return target.reshape(h, w)


def cache_key(state) -> Hashable:
    """Everything the planes depend on: stones (Zobrist), last move, size and rule."""
    return (state.key(), state.last_move, state.width, state.height, state.game.rule)


class GomokuCodec:
    """Gomoku for the network side (engine/nn/codecs.py CellCodec): the functions above
    plus the facts the evaluator, export, shards and model factory ask for."""
    name = "gomoku"
    version = CODEC_VERSION
    planes = PLANES
    planes_by_version = PLANES_BY_VERSION
    rule_planes = (5, 6, 7, 8)    # exactly five, renju, caro, forbidden points: 0 under freestyle
    outputs = ("policy", "wdl")
    network = "engine.nn.model:GomokuNet"
    symmetric = True
    factored = False              # one logit per cell
    line_planes = LINE_PLANES     # the open lines of five through each cell (lines.py)

    encode = staticmethod(encode)
    legal_index = staticmethod(legal_index)
    priors_batch = staticmethod(priors_batch)
    priors_from_logits = staticmethod(priors_from_logits)
    cache_key = staticmethod(cache_key)
    batch_shape = staticmethod(board_shape)

    def plane_shape(self, width: int, height: int) -> tuple[int, int]:
        return height, width

    def policy_size(self, width: int, height: int) -> int:
        return width * height

    def symmetries(self, width: int, height: int) -> list[tuple[int, ...]]:
        """Cell permutations, identity first: 8 on a square board, 4 on a rectangle."""
        from engine.games.gomoku import symmetry_permutations
        return symmetry_permutations(width, height)

    def plane_divisors(self) -> np.ndarray:
        return np.ones(PLANES, dtype=np.float32)       # every plane is 0/1

    def export_example(self, planes: int = PLANES) -> np.ndarray:
        """Planes [1, C, 9, 9] to trace the network with (height and width stay dynamic)."""
        example = np.zeros((1, planes, 9, 9), dtype=np.float32)
        example[:, MASK_PLANE] = 1.0
        return example

    def export_axes(self) -> dict[str, dict[int, str]]:
        return {"planes": {0: "batch", 2: "height", 3: "width"},
                "policy": {0: "batch", 1: "height", 2: "width"}, "wdl": {0: "batch"}}

    def lines(self, planes: np.ndarray) -> np.ndarray:
        return line_planes(planes)


CODEC = GomokuCodec()
