"""Line planes: what a gomoku player reads at a glance, as extra network input (numpy only).

A line of five cells is open for a colour when all five lie on the board and none holds the
other colour's stone.  Plane (j, c), j = 0, 1, 2 and c = side to move, opponent: through each
cell, the open lines of five holding at least 2 + j stones of colour c, counted over the four
directions, times 0.25.  Through an empty cell, j = 2 is a five to be made there, j = 1 a four,
two such lines a fork.  A network with line planes ("res6x32-lines", NetConfig.line_features)
reads them after the codec's planes; torch computes them in the network itself
(engine/nn/model.py LineFeatures, the same numbers), the ONNX runner here, outside the graph,
where ONNX Runtime's small convolutions would cost a third of an evaluation: in the threat
solver's C core when it is built (11-14 us a 15x15 or 20x20 position), else in numpy (43-51 us).
"""
from __future__ import annotations

import functools

import numpy as np

from engine.games.gomoku.rules import DIRECTIONS

__all__ = ["LINE_PLANES", "line_planes", "line_planes_numpy"]

LINE_PLANES = 6
_OWN, _OPPONENT, _ON_BOARD = 0, 1, 4              # codec planes: stones of each side, the board


def _shifted(padded: np.ndarray, pad: int, dy: int, dx: int, t: int, h: int, w: int) -> np.ndarray:
    """padded[..., y + t*dy, x + t*dx] for the h x w cells that start at (pad, pad)."""
    y0, x0 = pad + t * dy, pad + t * dx
    return padded[..., y0:y0 + h, x0:x0 + w]


def line_planes(planes: np.ndarray) -> np.ndarray:
    """Codec planes [B, C >= 5, H, W] (unpadded or padded: off-board cells have plane 4 at 0)
    -> line planes [B, 6, H, W] float32, ordered (j, colour)."""
    kernel = _kernel()
    if kernel is None:
        return line_planes_numpy(planes)
    planes = np.ascontiguousarray(planes, dtype=np.float32)
    b, c, h, w = planes.shape
    out = np.empty((b, LINE_PLANES, h, w), dtype=np.float32)
    kernel.tk_line_planes(planes.ctypes.data, b, c, h, w, out.ctypes.data)
    return out


@functools.cache
def _kernel():
    """The threat solver's C core, or None when it is not built (then numpy computes the same)."""
    from engine.games.gomoku.threat_kernel import ThreatKernelUnavailable, library
    try:
        return library()
    except ThreatKernelUnavailable:
        return None


def line_planes_numpy(planes: np.ndarray) -> np.ndarray:
    """line_planes() in numpy."""
    b, _, h, w = planes.shape
    # stones of each colour and the board, 4 cells of margin (off the board) all round
    pad = 4
    board = np.zeros((3, b, h + 2 * pad, w + 2 * pad), dtype=np.int16)
    for i, plane in enumerate((_OWN, _OPPONENT, _ON_BOARD)):
        board[i, :, pad:pad + h, pad:pad + w] = planes[:, plane] > 0.5
    out = np.zeros((3, 2, b, h, w), dtype=np.int16)
    centres_h, centres_w = h + 4, w + 4              # line centres within two cells of a cell
    for dx, dy in DIRECTIONS:
        sums = np.sum([_shifted(board, pad - 2, dy, dx, t, centres_h, centres_w) for t in range(-2, 3)], axis=0)
        own, opponent, on_board = sums[0], sums[1], sums[2]
        # k stones on an open line (5 on the board, none of the other colour), else 0
        open_own = np.where((on_board == 5) & (opponent == 0), own, 0)
        open_opponent = np.where((on_board == 5) & (own == 0), opponent, 0)
        at_least = np.stack([np.stack([open_own >= 2 + j, open_opponent >= 2 + j]) for j in range(3)])
        at_least = at_least.astype(np.int16)          # [3, 2, B, centres_h, centres_w]
        for t in range(-2, 3):
            out += _shifted(at_least, 2, dy, dx, t, h, w)
    return (0.25 * out.transpose(2, 0, 1, 3, 4).reshape(b, LINE_PLANES, h, w)).astype(np.float32)
