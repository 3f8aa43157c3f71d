"""Chess states <-> network planes and factored from/to policy indices (numpy only, no torch).

Frame: the side to move always plays "up".  For Black the board is mirrored rank-wise
(square s -> s ^ 56) and colours swap, so a Black position encodes exactly like the
mirrored White position (python-chess `Board.mirror()`).

Planes [C=32, 8, 8], row = rank (stm frame), column = file:
  0-5   own P N B R Q K, current position      6-11  opponent P N B R Q K, current
  12-23 the same 12 planes for the position before the last move; when that is unknown (a
        bare FEN, the first position of a game set up from one) the current position's own
        planes, as if no move had been made: zeros there read as a position the network
        never met (the shipped chess net valued startpos from a bare FEN at -0.99, 0.01 with
        the copy)
  24    current position occurred before (repetition)
  25-28 castling rights: own O-O, own O-O-O, opponent O-O, opponent O-O-O (constant planes)
  29    en passant target square (only when an en passant capture is legal)
  30    fifty-move counter / 100 (constant)       31  ones (lets convolutions see the edge)

Policy, factored p(a|s) = p(from|s) * p(to|from,s): a from head [64] and a to head
[64 from, 73 slots].  Slots 0..63 are destination squares (queen promotions included:
a pawn reaching the last rank without a suffix is a queen promotion); slots 64..72 are
under-promotions 64 + 3 * (file delta + 1) + (knight 0, bishop 1, rook 2).  A flat
policy index is from * 73 + slot (4672 in all).
"""
from __future__ import annotations

from typing import Hashable, Sequence

import chess
import numpy as np

__all__ = [
    "CODEC_VERSION", "PLANES", "SLOTS", "POLICY_SIZE", "encode", "move_index", "index_to_move",
    "legal_index", "priors_from_logits", "priors_batch", "factored_targets", "cache_key",
    "ChessCodec", "CODEC",
]

CODEC_VERSION = 1
PLANES = 32
SLOTS = 73
POLICY_SIZE = 64 * SLOTS
_UNDER = {chess.KNIGHT: 0, chess.BISHOP: 1, chess.ROOK: 2}
_UNDER_PIECE = (chess.KNIGHT, chess.BISHOP, chess.ROOK)
FIFTY_MOVE_PLANE = 30    # min(halfmove clock, 100) / 100: the one plane that is not 0/1
ONES_PLANE = 31
_PIECES = (chess.PAWN, chess.KNIGHT, chess.BISHOP, chess.ROOK, chess.QUEEN, chess.KING)


def _bitboards(pos, us_white: bool) -> list[int]:
    """12 piece bitboards (own P..K, opponent P..K) of a Board or a python-chess _BoardState."""
    if isinstance(pos, chess.Board):
        white, black = pos.occupied_co[chess.WHITE], pos.occupied_co[chess.BLACK]
    else:
        white, black = pos.occupied_w, pos.occupied_b
    types = (pos.pawns, pos.knights, pos.bishops, pos.rooks, pos.queens, pos.kings)
    own, opp = (white, black) if us_white else (black, white)
    return [t & own for t in types] + [t & opp for t in types]


def _repeated(board: chess.Board) -> bool:
    """Has the current position occurred before?  Reads the board's saved states, no push/pop."""
    stack = board._stack
    depth = min(board.halfmove_clock, len(stack))
    for back in range(2, depth + 1, 2):
        old = stack[-back]
        if (old.occupied == board.occupied and old.occupied_w == board.occupied_co[chess.WHITE]
                and old.pawns == board.pawns and old.knights == board.knights
                and old.bishops == board.bishops and old.rooks == board.rooks
                and old.queens == board.queens and old.kings == board.kings
                and old.castling_rights == board.castling_rights
                and old.ep_square == board.ep_square):
            return True
    return False


def encode_into(out: np.ndarray, state) -> None:
    """Fill out[32, 8, 8] (float32, zeroed) for one chess state."""
    board: chess.Board = state.board
    white = board.turn == chess.WHITE
    bbs = _bitboards(board, white)
    if board._stack:
        bbs += _bitboards(board._stack[-1], white)
    words = np.array(bbs, dtype="<u8")
    if not white:
        words = words.byteswap()  # one byte per rank: swapping bytes mirrors the ranks
    bits = np.unpackbits(words.view(np.uint8), bitorder="little").reshape(-1, 8, 8)
    out[: bits.shape[0]] = bits
    if not board._stack:
        out[12:24] = bits[:12]
    if _repeated(board):
        out[24] = 1.0
    us, them = board.turn, not board.turn
    out[25] = board.has_kingside_castling_rights(us)
    out[26] = board.has_queenside_castling_rights(us)
    out[27] = board.has_kingside_castling_rights(them)
    out[28] = board.has_queenside_castling_rights(them)
    if board.ep_square is not None and board.has_legal_en_passant():
        ep = board.ep_square if white else board.ep_square ^ 56
        out[29, ep >> 3, ep & 7] = 1.0
    out[FIFTY_MOVE_PLANE] = min(board.halfmove_clock, 100) / 100.0
    out[ONES_PLANE] = 1.0


def encode(states: Sequence, planes: int = PLANES) -> np.ndarray:
    """States -> float32 planes [B, 32, 8, 8] in each state's side-to-move frame (one
    codec version so far: `planes` is always 32)."""
    if planes != PLANES:
        raise ValueError(f"the chess codec has {PLANES} planes, not {planes}")
    out = np.zeros((len(states), PLANES, 8, 8), dtype=np.float32)
    for i, state in enumerate(states):
        encode_into(out[i], state)
    return out


def _index(flip: int, move: chess.Move) -> int:
    src, dst = move.from_square ^ flip, move.to_square ^ flip
    if move.promotion in _UNDER:
        delta = (dst & 7) - (src & 7)
        return src * SLOTS + 64 + 3 * (delta + 1) + _UNDER[move.promotion]
    return src * SLOTS + dst


def _castling_as_trained(move: chess.Move) -> chess.Move:
    """A Chess960 castling move (king onto its own rook) as the king's move to its castled
    square, the move the network learned castling as (e1g1, e1c1); kept as king-to-rook
    when that square is one step away (a plain king move has that index: f1g1, b1c1)."""
    king_from = move.from_square
    kingside = move.to_square > king_from
    king_to = chess.square(6 if kingside else 2, chess.square_rank(king_from))
    if abs(chess.square_file(king_to) - chess.square_file(king_from)) < 2:
        return move
    return chess.Move(king_from, king_to)


def _indexed_moves(board: chess.Board, moves):
    """The moves as the policy indexes them: Chess960 castling through _castling_as_trained."""
    if not board.chess960:
        return moves
    kings = board.kings & board.occupied_co[board.turn]
    return [_castling_as_trained(m) if kings >> m.from_square & 1 and board.is_castling(m) else m
            for m in moves]


def move_index(state, move: chess.Move) -> int:
    """Flat policy index from * 73 + slot of a move, in the side-to-move frame."""
    board = state.board
    move, = _indexed_moves(board, [move])
    return _index(0 if board.turn == chess.WHITE else 56, move)


def index_to_move(state, index: int) -> chess.Move:
    """Inverse of move_index for the given state (the move need not be legal)."""
    if not 0 <= index < POLICY_SIZE:
        raise ValueError(f"policy index {index} outside 0..{POLICY_SIZE - 1}")
    flip = 0 if state.board.turn == chess.WHITE else 56
    src, slot = divmod(index, SLOTS)
    promotion = None
    if slot < 64:
        dst = slot
        if state.board.piece_type_at(src ^ flip) == chess.PAWN and dst >> 3 == 7:
            promotion = chess.QUEEN
    else:
        direction, piece = divmod(slot - 64, 3)
        dst = src + 8 + direction - 1
        promotion = _UNDER_PIECE[piece]
    return chess.Move(src ^ flip, dst ^ flip, promotion)


def legal_index(state) -> np.ndarray:
    """Flat policy indices of state.legal_moves(), in that order."""
    board = state.board
    flip = 0 if board.turn == chess.WHITE else 56
    return np.fromiter((_index(flip, m) for m in _indexed_moves(board, state.legal_moves())), dtype=np.int64)


def priors_from_logits(state, from_logits: np.ndarray, to_logits: np.ndarray) -> np.ndarray:
    """From logits [64] and to logits [64, 73] -> probabilities over state.legal_moves().

    Softmax over the legal from-squares, then over each from-square's legal slots;
    the product sums to 1 over the legal moves exactly (up to rounding).
    """
    index = legal_index(state)
    if index.size == 0:
        return np.zeros(0)
    src, slot = np.divmod(index, SLOTS)
    squares, group = np.unique(src, return_inverse=True)
    lf = from_logits[squares].astype(np.float64)
    p_from = np.exp(lf - lf.max())
    p_from /= p_from.sum()
    lt = to_logits[src, slot].astype(np.float64)
    top = np.full(squares.size, -np.inf)
    np.maximum.at(top, group, lt)
    e = np.exp(lt - top[group])
    total = np.zeros(squares.size)
    np.add.at(total, group, e)
    return p_from[group] * e / total[group]


def priors_batch(states: Sequence, outputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """Network policy outputs (from [B, 64], to [B, 64, 73]) -> per-state priors.

    The same numbers as priors_from_logits state by state, computed with one set of
    segmented numpy operations for the whole batch (the per-state version costs ~4x more).
    """
    from_logits, to_logits = outputs
    if len(states) < 4:  # the fixed cost of the segmented version only pays from a few states
        return [priors_from_logits(s, from_logits[i], to_logits[i]) for i, s in enumerate(states)]
    indices = [legal_index(s) for s in states]
    sizes = np.array([i.size for i in indices])
    if sizes.sum() == 0:
        return [np.zeros(0) for _ in states]
    index = np.concatenate(indices)
    owner = np.repeat(np.arange(len(states)), sizes)
    src, slot = np.divmod(index, SLOTS)
    group = owner * 64 + src                                   # one group per (state, from)
    order = np.argsort(group, kind="stable")
    sorted_group = group[order]
    starts = np.flatnonzero(np.r_[True, sorted_group[1:] != sorted_group[:-1]])
    squares = sorted_group[starts]                             # distinct (state, from), sorted
    # p(to | from): softmax inside each group.
    lt = to_logits[owner, src, slot].astype(np.float64)[order]
    top = np.maximum.reduceat(lt, starts)
    counts = np.diff(np.r_[starts, lt.size])
    e = np.exp(lt - np.repeat(top, counts))
    p_to = e / np.repeat(np.add.reduceat(e, starts), counts)
    # p(from): softmax over each state's distinct legal from-squares.
    lf = from_logits.reshape(-1)[squares].astype(np.float64)
    square_owner = squares // 64
    owner_starts = np.flatnonzero(np.r_[True, square_owner[1:] != square_owner[:-1]])
    owner_counts = np.diff(np.r_[owner_starts, lf.size])
    ef = np.exp(lf - np.repeat(np.maximum.reduceat(lf, owner_starts), owner_counts))
    p_from = ef / np.repeat(np.add.reduceat(ef, owner_starts), owner_counts)
    prior_sorted = np.repeat(p_from, counts) * p_to
    priors = np.empty(index.size)
    priors[order] = prior_sorted
    return np.split(priors, np.cumsum(sizes)[:-1])


def factored_targets(state, visits: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
    """Visit counts over legal moves -> (pi_from [64], pi_to [64, 73]) training targets.

    pi_from(f) = sum_t pi(f, t); pi_to(t | f) = pi(f, t) / pi_from(f); rows of unvisited
    from-squares stay zero (the trainer masks them out of the loss).
    """
    counts = np.asarray(visits, dtype=np.float64)
    index = legal_index(state)
    if counts.shape != index.shape:
        raise ValueError(f"{counts.shape[0]} visit counts for {index.shape[0]} legal moves")
    pi_from = np.zeros(64)
    pi_to = np.zeros((64, SLOTS))
    total = counts.sum()
    if total > 0:
        src, slot = np.divmod(index, SLOTS)
        pi = counts / total
        np.add.at(pi_from, src, pi)
        visited = pi_from[src] > 0
        pi_to[src[visited], slot[visited]] = pi[visited] / pi_from[src[visited]]
    return pi_from.astype(np.float32), pi_to.astype(np.float32)


def cache_key(state) -> Hashable:
    """Everything the planes depend on: position, fifty-move clock, repetition, previous position."""
    board: chess.Board = state.board
    prev = None
    if board._stack:
        s = board._stack[-1]
        prev = (s.pawns, s.knights, s.bishops, s.rooks, s.queens, s.kings, s.occupied_w)
    return (state.key(), board.halfmove_clock, _repeated(board), prev)


class ChessCodec:
    """Chess for the network side (engine/nn/codecs.py GameCodec): the functions above
    plus the facts the evaluator, export, shards and model factory ask for."""
    name = "chess"
    version = CODEC_VERSION
    planes = PLANES
    planes_by_version = {CODEC_VERSION: PLANES}
    rule_planes = ()              # one rule set: every plane is set in its games
    outputs = ("from", "to", "wdl")
    network = "engine.nn.model:ChessNet"
    symmetric = False             # castling and pawn direction break the board's symmetries
    factored = True               # from head [64] x to head [64, 73]
    line_planes = 0               # no derived planes

    encode = staticmethod(encode)
    legal_index = staticmethod(legal_index)
    priors_batch = staticmethod(priors_batch)
    cache_key = staticmethod(cache_key)

    def plane_shape(self, width: int, height: int) -> tuple[int, int]:
        return 8, 8

    def policy_size(self, width: int, height: int) -> int:
        return POLICY_SIZE

    def symmetries(self, width: int, height: int) -> list[tuple[int, ...]]:
        return [tuple(range(64))]

    def plane_divisors(self) -> np.ndarray:
        """Each plane is a multiple of 1 / divisor (sample shards store them as uint8)."""
        divisors = np.ones(PLANES, dtype=np.float32)
        divisors[FIFTY_MOVE_PLANE] = 100.0
        return divisors

    def export_example(self, planes: int = PLANES) -> np.ndarray:
        """Planes [1, C, 8, 8] to trace the network with for ONNX export."""
        example = np.zeros((1, planes, 8, 8), dtype=np.float32)
        example[:, ONES_PLANE] = 1.0
        return example

    def export_axes(self) -> dict[str, dict[int, str]]:
        return {"planes": {0: "batch"}, "from": {0: "batch"}, "to": {0: "batch"}, "wdl": {0: "batch"}}

    def lines(self, planes: np.ndarray) -> np.ndarray:
        raise ValueError("chess networks read no line planes")


CODEC = ChessCodec()
