"""Training samples, npz shards and batches (numpy only, no torch).

A sample is one searched position:
  planes  uint8 [C, H, W]: the codec's planes, quantised exactly.  Every plane is a
          multiple of 1/divisor (divisor 1 for the 0/1 planes, 100 for the chess
          fifty-move plane), and q / divisor in float32 is bit-for-bit what the codec
          computes, so a network trains on exactly what it will see when playing.
  moves   int16 [L]: policy indices of state.legal_moves(), in that order
          (codec.legal_index: chess from * 73 + slot in the side-to-move frame; gomoku
          the cell y * width + x of the sample's own board).
  probs   float32 [L]: the policy target over those moves, summing to 1.  Sparse over
          the legal moves, so the target is never on an illegal move and the legal
          list doubles as the loss's mask (a dense chess target would be 4672 floats).
  value   +1 / 0 / -1: the game's result for the side to move (WDL class 1 - value:
          0 win, 1 draw, 2 loss, the model's head order).
  teacher_wdl  float32 [3] or NaN: the teacher's own evaluation of the position as
          (win, draw, loss) probabilities for the side to move (a UCI engine's `wdl`,
          centipawns or a Gomocup brain's eval mapped to a win probability, a PGN
          `[%eval]`); NaN when the teacher gave none.  The trainer blends it with the
          result (`value_targets`), so the blend is chosen at training time.
  reply   the policy index of the opponent's answer (the move played next), in the index
          space of the position it was played from (gomoku: a cell of this board, so the
          same space as `moves`; chess: the opponent's frame); -1 when the game ended
          here or the producer does not say.  Target of the opponent-reply head (KataGo's
          auxiliary policy), weighted by TrainConfig.reply_weight.
  ply, to_play, game: where it came from (game = index of the game in its batch).

A shard is one compressed npz of one board shape (gomoku batches of several sizes
write one shard per size: a training batch then needs no padding, whose zeros would
skew BatchNorm's batch statistics).  Arrays: planes [N, C, H, W], move_offset [N + 1]
(sample i's moves are moves[move_offset[i]:move_offset[i + 1]]), moves [M], probs [M],
value, ply, to_play, game [N], teacher_wdl [N, 3] (version 2; NaN rows = none), reply [N]
(absent in older shards: read as -1), and meta
(a JSON string: format, version, game, width, height, rule, codec_version, divisors, notes).  Shards are written to a temp file and
renamed, so a killed run never leaves half a shard.

Gomoku symmetry augmentation (8 on squares, 4 on rectangles) happens at batch time:
the same permutation moves the planes' cells and the target's cells.
"""
from __future__ import annotations

import datetime
import json
import zlib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Iterable, Sequence

import numpy as np

from engine.games.base import Outcome
from engine.nn.codecs import codec_names, get_codec
from engine.nn.files import atomic_write

__all__ = [
    "GameSpec", "Sample", "Dataset", "Bucket", "Batch", "ShardError", "SHARD_FORMAT",
    "make_sample", "with_outcome", "with_replies", "move_index", "write_shard", "read_shards", "shard_paths",
    "sample_batch",
    "policy_size", "first_player_results", "value_targets", "wdl_from_value", "expected_score",
    "split_validation",
]

SHARD_FORMAT = "plyzero-samples"
SHARD_VERSION = 2
_READABLE_VERSIONS = (1, 2)   # version 1 shards have no teacher_wdl: read as NaN


class ShardError(ValueError):
    """A shard that cannot be read or mixed with the others; the message is one line."""


@dataclass(frozen=True)
class GameSpec:
    """A game as plain data (picklable, for worker processes): name plus gomoku board and rule."""
    name: str
    width: int = 15
    height: int = 15
    rule: str = "freestyle"

    def make(self) -> Any:
        from engine.games import game_on_board
        return game_on_board(self.name, self.width, self.height, self.rule)

    @property
    def label(self) -> str:
        """File-name label: "chess", "gomoku15x15"."""
        from engine.games import game_class
        return f"{self.name}{self.width}x{self.height}" if game_class(self.name).sized else self.name

    @classmethod
    def of(cls, game: Any) -> "GameSpec":
        return cls(game.name, game.width, game.height, game.rule)

    @classmethod
    def named(cls, name: str, width: int = 15, height: int = 15, rule: str = "freestyle") -> "GameSpec":
        """The spec of `name` on this board where the game takes board settings, else on its
        one board; GameSetupError for a board the game does not allow."""
        return cls.of(cls(name, width, height, rule).make())


def policy_size(game: str, height: int, width: int) -> int:
    """Length of the flat policy index space: 4672 for chess, H * W for gomoku."""
    return get_codec(game).policy_size(width, height)


@dataclass(frozen=True)
class Sample:
    """One position with its targets; see the module docstring for the frames."""
    planes: np.ndarray
    moves: np.ndarray
    probs: np.ndarray
    value: int
    ply: int
    to_play: int
    game: int = 0
    teacher_wdl: np.ndarray | None = None
    reply: int = -1


def wdl_from_value(value: float) -> np.ndarray:
    """A value in [-1, 1] (side to move) as a (win, draw, loss) triple with no draw mass:
    expected score (1 + value) / 2 -- for teachers that give a score but no draw rate."""
    v = min(1.0, max(-1.0, float(value)))
    return np.array([(1.0 + v) / 2.0, 0.0, (1.0 - v) / 2.0], dtype=np.float32)


def expected_score(wdl: Sequence[float] | np.ndarray) -> float:
    """(win, draw, loss) -> value in [-1, 1]: win - loss (the expected score rescaled)."""
    w, _, l = (float(x) for x in wdl)
    total = sum(float(x) for x in wdl)
    return (w - l) / total if total > 0 else 0.0


def make_sample(state: Any, policy: Sequence[float] | np.ndarray, game_index: int = 0,
                teacher_wdl: Sequence[float] | np.ndarray | None = None) -> Sample:
    """A sample for `state` with `policy` (weights over state.legal_moves(): visit counts,
    a one-hot, a soft teacher target) normalised to sum 1.  value stays 0 until
    with_outcome fills it in at the end of the game.  teacher_wdl: the teacher's
    (win, draw, loss) for the side to move, normalised here; None = no evaluation."""
    codec = get_codec(state.game.name)
    weights = np.asarray(policy, dtype=np.float64)
    legal = codec.legal_index(state)
    if weights.shape != legal.shape:
        raise ValueError(f"{weights.size} policy weights for {legal.size} legal moves")
    total = weights.sum()
    if not total > 0 or (weights < 0).any():
        raise ValueError("policy weights must be >= 0 with a positive sum")
    divisors = codec.plane_divisors()
    planes = codec.encode([state])[0]
    quantised = np.rint(planes * divisors[:, None, None])
    if quantised.min() < 0 or quantised.max() > 255 or not np.array_equal(
            quantised.astype(np.float32) / divisors[:, None, None], planes):
        raise ValueError("the codec's planes do not quantise exactly (codec changed? update its plane_divisors)")
    wdl = None
    if teacher_wdl is not None:
        wdl = np.asarray(teacher_wdl, dtype=np.float64)
        if wdl.shape != (3,) or (wdl < 0).any() or not wdl.sum() > 0:
            raise ValueError("teacher_wdl must be three non-negative numbers with a positive sum")
        wdl = (wdl / wdl.sum()).astype(np.float32)
    return Sample(planes=quantised.astype(np.uint8), moves=legal.astype(np.int16),
                  probs=(weights / total).astype(np.float32), value=0, ply=int(state.ply),
                  to_play=int(state.to_play), game=game_index, teacher_wdl=wdl)


def with_outcome(samples: Sequence[Sample], outcome: Outcome) -> list[Sample]:
    """The game's samples with value = the result for each sample's side to move."""
    return [replace(s, value=int(outcome.value_for(s.to_play))) for s in samples]


def move_index(state: Any, move: Any) -> int:
    """The policy index of `move` in `state` (codec.legal_index's space)."""
    return int(get_codec(state.game.name).legal_index(state)[state.legal_moves().index(move)])


def with_replies(samples: Sequence[Sample], played: dict[int, int]) -> list[Sample]:
    """The game's samples with reply = the move played one ply later (played: ply -> its
    move_index in the position of that ply), -1 where the game ended first."""
    return [replace(s, reply=played.get(s.ply + 1, -1)) for s in samples]


def first_player_results(samples: Iterable[Sample]) -> dict[int, float]:
    """game index -> result for the first player (+1 / 0 / -1), read off its samples."""
    results: dict[int, float] = {}
    for s in samples:
        results.setdefault(s.game, float(s.value if s.to_play == 0 else -s.value))
    return results


# --- shards ---------------------------------------------------------------------------------

def write_shard(path: str | Path, samples: Sequence[Sample], spec: GameSpec, notes: str = "") -> Path:
    """Write samples (all of `spec`'s board) as one npz shard, atomically.  Returns the path."""
    if not samples:
        raise ValueError("a shard needs at least one sample")
    shapes = {s.planes.shape for s in samples}
    if len(shapes) != 1:
        raise ValueError(f"one board shape per shard, got {sorted(shapes)}")
    _, height, width = shapes.pop()
    codec = get_codec(spec.name)
    if (height, width) != codec.plane_shape(spec.width, spec.height):
        raise ValueError(f"samples are {width}x{height}, the spec says {spec.width}x{spec.height}")
    counts = np.array([s.moves.size for s in samples], dtype=np.int64)
    meta = {
        "format": SHARD_FORMAT, "version": SHARD_VERSION, "game": spec.name,
        "width": width, "height": height, "rule": spec.rule,
        "codec_version": codec.version,
        "divisors": codec.plane_divisors().tolist(), "samples": len(samples), "notes": notes,
        "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
    }
    arrays: dict[str, Any] = {
        "meta": np.array(json.dumps(meta)),
        "planes": np.stack([s.planes for s in samples]),
        "move_offset": np.concatenate([[0], np.cumsum(counts)]),
        "moves": np.concatenate([s.moves for s in samples]).astype(np.int16),
        "probs": np.concatenate([s.probs for s in samples]).astype(np.float32),
        "value": np.array([s.value for s in samples], dtype=np.int8),
        "ply": np.array([s.ply for s in samples], dtype=np.int32),
        "to_play": np.array([s.to_play for s in samples], dtype=np.uint8),
        "game": np.array([s.game for s in samples], dtype=np.int32),
        "teacher_wdl": np.stack([s.teacher_wdl if s.teacher_wdl is not None
                                 else np.full(3, np.nan, dtype=np.float32) for s in samples]),
        "reply": np.array([s.reply for s in samples], dtype=np.int16),
    }
    atomic_write(path, lambda handle: np.savez_compressed(handle, **arrays))
    return Path(path)


def shard_paths(sources: Iterable[str | Path]) -> list[Path]:
    """Files and directories (every *.npz inside, sorted) -> shard paths; ShardError if none."""
    paths: list[Path] = []
    for source in sources:
        source = Path(source)
        if source.is_dir():
            paths.extend(sorted(source.glob("*.npz")))
        elif source.is_file():
            paths.append(source)
        else:
            raise ShardError(f"{source}: no such shard or directory")
    if not paths:
        raise ShardError("no shards found (expected *.npz files)")
    return paths


@dataclass
class Bucket:
    """All samples of one board shape, stored as in a shard (CSR policy targets)."""
    height: int
    width: int
    planes: np.ndarray
    move_offset: np.ndarray
    moves: np.ndarray
    probs: np.ndarray
    value: np.ndarray
    teacher_wdl: np.ndarray | None = None   # [N, 3] float32, NaN rows = none (None: all none)
    game_key: np.ndarray | None = None      # [N] int64: crc32 of (shard name, game), for splits
    reply: np.ndarray | None = None         # [N] int64: the opponent's answer, -1 = none (None: all none)

    def __len__(self) -> int:
        return int(self.value.shape[0])

    def subset(self, keep: np.ndarray) -> "Bucket":
        """The samples at the (sorted) indices `keep`, CSR targets re-packed."""
        keep = np.asarray(keep, dtype=np.int64)
        starts, ends = self.move_offset[keep], self.move_offset[keep + 1]
        counts = ends - starts
        entries = np.repeat(starts - np.cumsum(np.r_[0, counts[:-1]]), counts) + np.arange(counts.sum())
        return Bucket(height=self.height, width=self.width, planes=self.planes[keep],
                      move_offset=np.concatenate([[0], np.cumsum(counts)]).astype(np.int64),
                      moves=self.moves[entries], probs=self.probs[entries], value=self.value[keep],
                      teacher_wdl=None if self.teacher_wdl is None else self.teacher_wdl[keep],
                      game_key=None if self.game_key is None else self.game_key[keep],
                      reply=None if self.reply is None else self.reply[keep])


@dataclass
class Dataset:
    """Samples of one game from many shards, grouped by board shape."""
    game: str
    divisors: np.ndarray
    buckets: list[Bucket]
    sources: list[str] = field(default_factory=list)

    def __len__(self) -> int:
        return sum(len(b) for b in self.buckets)

    def describe(self) -> str:
        sizes = ", ".join(f"{b.width}x{b.height}: {len(b)}" for b in self.buckets)
        return f"{len(self)} {self.game} samples from {len(self.sources)} shards ({sizes})"


def _read_one(path: Path) -> tuple[dict, dict[str, np.ndarray]]:
    try:
        with np.load(path, allow_pickle=False) as npz:
            arrays = {name: npz[name] for name in npz.files}
        meta = json.loads(str(arrays.pop("meta")))
    except Exception as exc:  # zip, json, key and EOF errors all mean "unusable"
        raise ShardError(f"{path}: unreadable shard ({type(exc).__name__}: {str(exc)[:80]})") from None
    if meta.get("format") != SHARD_FORMAT or meta.get("version") not in _READABLE_VERSIONS:
        raise ShardError(f"{path}: not a version {_READABLE_VERSIONS} PlyZero sample shard")
    n = int(arrays["value"].shape[0])
    if "teacher_wdl" not in arrays:
        arrays["teacher_wdl"] = np.full((n, 3), np.nan, dtype=np.float32)
    if "reply" not in arrays:
        arrays["reply"] = np.full(n, -1, dtype=np.int16)
    stem = zlib.crc32(Path(path).name.encode())
    arrays["game_key"] = np.array([zlib.crc32(f"{g}".encode(), stem) for g in arrays["game"]],
                                  dtype=np.int64)
    game = meta.get("game")
    if game not in codec_names():
        raise ShardError(f"{path}: unknown game {game!r}")
    codec = get_codec(game)
    planes = codec.planes_by_version.get(meta.get("codec_version"))
    if planes is None or arrays["planes"].shape[1:2] != (planes,):
        raise ShardError(f"{path}: {game} codec version {meta.get('codec_version')}, "
                         f"this engine reads versions {', '.join(map(str, codec.planes_by_version))}")
    if planes < codec.planes:   # an older version's planes are a prefix; the new ones are 0 there
        old = arrays["planes"]
        arrays["planes"] = np.zeros((old.shape[0], codec.planes) + old.shape[2:], dtype=old.dtype)
        arrays["planes"][:, :planes] = old
    return meta, arrays


def read_shards(paths: Iterable[str | Path], expect_game: str | None = None) -> Dataset:
    """Load shards (files or directories of *.npz) into one Dataset, bucketed by board shape."""
    files = shard_paths(paths)
    game = expect_game
    groups: dict[tuple[int, int], list[dict[str, np.ndarray]]] = {}
    for path in files:
        meta, arrays = _read_one(path)
        if game is None:
            game = meta["game"]
        elif meta["game"] != game:
            raise ShardError(f"{path}: a {meta['game']} shard, expected {game}")
        groups.setdefault((meta["height"], meta["width"]), []).append(arrays)
    assert game is not None
    buckets = []
    for (height, width), parts in sorted(groups.items()):
        offsets, base = [np.zeros(1, dtype=np.int64)], 0
        for part in parts:
            offsets.append(part["move_offset"][1:] + base)
            base += int(part["move_offset"][-1])
        buckets.append(Bucket(
            height=height, width=width,
            planes=np.concatenate([p["planes"] for p in parts]),
            move_offset=np.concatenate(offsets),
            moves=np.concatenate([p["moves"] for p in parts]).astype(np.int64),
            probs=np.concatenate([p["probs"] for p in parts]),
            value=np.concatenate([p["value"] for p in parts]).astype(np.int64),
            teacher_wdl=np.concatenate([p["teacher_wdl"] for p in parts]).astype(np.float32),
            game_key=np.concatenate([p["game_key"] for p in parts]),
            reply=np.concatenate([p["reply"] for p in parts]).astype(np.int64)))
    return Dataset(game=game, divisors=get_codec(game).plane_divisors(), buckets=buckets,
                   sources=[str(p) for p in files])


# --- batches --------------------------------------------------------------------------------

@dataclass
class Batch:
    """Training arrays for one forward pass (all samples one board shape).

    planes float32 [B, C, H, W]; target float32 [B, P] (policy target, zero off the legal
    moves); legal bool [B, P]; wdl int64 [B] (0 win, 1 draw, 2 loss for the side to move).
    teacher_wdl float32 [B, 3]: the teacher's (win, draw, loss), NaN rows where none.
    reply int64 [B]: the opponent's answer (moved by the same symmetry as the target), -1 = none.
    P = policy_size(game, H, W).
    """
    planes: np.ndarray
    target: np.ndarray
    legal: np.ndarray
    wdl: np.ndarray
    teacher_wdl: np.ndarray | None = None
    reply: np.ndarray | None = None


def value_targets(batch: Batch, blend: float) -> np.ndarray:
    """The WDL target float32 [B, 3]: (1 - blend) * one-hot(game result) + blend * teacher's
    wdl, the result alone where the teacher gave none.  blend 0 = the plain game result."""
    if not 0.0 <= blend <= 1.0:
        raise ValueError("the value blend must be within [0, 1]")
    result = np.eye(3, dtype=np.float32)[batch.wdl]
    if batch.teacher_wdl is None or blend == 0.0:
        return result
    teacher = batch.teacher_wdl
    has = ~np.isnan(teacher).any(axis=1)
    blended = result.copy()
    blended[has] = (1.0 - blend) * result[has] + blend * teacher[has]
    return blended


def split_validation(dataset: Dataset, fraction: float) -> tuple[Dataset, Dataset | None]:
    """(train, validation): whole games go to validation when the crc32 of (shard file name,
    game index) falls in the lowest `fraction` of its range -- deterministic, so a resumed
    run or another network is measured on the same positions, and no game is split
    between the two (neighbouring positions of one game would leak).  fraction 0: (dataset, None)."""
    if not 0.0 <= fraction < 1.0:
        raise ValueError("the validation fraction must be within [0, 1)")
    if fraction == 0.0:
        return dataset, None
    train_buckets, val_buckets = [], []
    for bucket in dataset.buckets:
        keys = bucket.game_key if bucket.game_key is not None else np.zeros(len(bucket), dtype=np.int64)
        held = (keys % 1_000_003) < fraction * 1_000_003
        if (~held).any():
            train_buckets.append(bucket.subset(np.flatnonzero(~held)))
        if held.any():
            val_buckets.append(bucket.subset(np.flatnonzero(held)))
    if not train_buckets:
        raise ShardError("every game fell into the validation split; lower --val-fraction or add data")
    train = Dataset(dataset.game, dataset.divisors, train_buckets, dataset.sources)
    return train, (Dataset(dataset.game, dataset.divisors, val_buckets, dataset.sources)
                   if val_buckets else None)


def _perm_table(game: str, width: int, height: int) -> tuple[np.ndarray, np.ndarray]:
    """(perm [S, N], inverse [S, N]): perm[k, i] is where cell i goes under symmetry k."""
    perms = np.asarray(get_codec(game).symmetries(width, height), dtype=np.int64)
    inverse = np.empty_like(perms)
    rows = np.arange(perms.shape[0])[:, None]
    inverse[rows, perms] = np.arange(perms.shape[1])[None, :]
    return perms, inverse


def sample_batch(dataset: Dataset, batch_size: int, rng: np.random.Generator,
                 augment: bool = True, indices: np.ndarray | None = None,
                 bucket: int | None = None) -> Batch:
    """A batch drawn uniformly with replacement (all draws from `rng`, so a saved rng state
    replays the same batches).  The bucket is chosen with probability proportional to its
    size.  augment: one random board symmetry per gomoku sample.  `indices` (with `bucket`)
    picks fixed samples instead, for tests and evaluation."""
    sizes = np.array([len(b) for b in dataset.buckets], dtype=np.float64)
    if bucket is None:
        bucket = int(rng.choice(len(sizes), p=sizes / sizes.sum())) if len(sizes) > 1 else 0
    chosen = dataset.buckets[bucket]
    if indices is None:
        indices = rng.integers(0, len(chosen), size=batch_size)
    indices = np.asarray(indices, dtype=np.int64)
    n = indices.size
    h, w = chosen.height, chosen.width
    starts, ends = chosen.move_offset[indices], chosen.move_offset[indices + 1]
    counts = ends - starts
    entries = np.repeat(starts - np.cumsum(np.r_[0, counts[:-1]]), counts) + np.arange(counts.sum())
    rows = np.repeat(np.arange(n), counts)
    moves = chosen.moves[entries]
    planes = chosen.planes[indices]
    reply = chosen.reply[indices] if chosen.reply is not None else np.full(n, -1, dtype=np.int64)
    if augment and get_codec(dataset.game).symmetric:
        perms, inverse = _perm_table(dataset.game, w, h)
        sym = rng.integers(0, perms.shape[0], size=n)
        flat = planes.reshape(n, planes.shape[1], h * w)
        # new cell j holds old cell inverse[j]: the stones, the last move and the mask all move.
        planes = np.take_along_axis(flat, inverse[sym][:, None, :], axis=2).reshape(planes.shape)
        moves = perms[sym[rows], moves]
        known = reply >= 0
        reply = reply.copy()
        reply[known] = perms[sym[known], reply[known]]
    size = policy_size(dataset.game, h, w)
    target = np.zeros((n, size), dtype=np.float32)
    legal = np.zeros((n, size), dtype=bool)
    target[rows, moves] = chosen.probs[entries]
    legal[rows, moves] = True
    teacher = (chosen.teacher_wdl[indices] if chosen.teacher_wdl is not None
               else np.full((n, 3), np.nan, dtype=np.float32))
    return Batch(planes=planes.astype(np.float32) / dataset.divisors[None, :, None, None],
                 target=target, legal=legal, wdl=(1 - chosen.value[indices]).astype(np.int64),
                 teacher_wdl=teacher, reply=reply.astype(np.int64))
