"""PGN games -> sample shards, so a user can train on their own chess database.

Every position of a game's main line becomes a sample: the move played as a one-hot
policy target, the game's result as the value, and, when the PGN carries engine
evaluations (`{[%eval 0.35]}`, `{[%eval #-3]}`, as lichess exports them), the evaluation
of the position before the move as the teacher's (win, draw, loss) -- centipawns through
engine.types.value_from_cp, mates a certain win or loss -- which the trainer blends with
the result.  Games without a result (`*`), non-standard variants and games python-chess
could not read cleanly are skipped and counted.

Shards hold `games_per_shard` games each and are named after the PGN file and their
place in it; reading is deterministic, so a rerun skips the shards already written.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

import chess
import chess.pgn
import numpy as np

from engine.games.base import Outcome
from engine.games.chess import ChessState
from engine.train.samples import GameSpec, Sample, make_sample, wdl_from_value, with_outcome, write_shard
from engine.types import value_from_cp

__all__ = ["ImportReport", "import_pgn", "game_samples"]

_RESULTS = {"1-0": 0, "0-1": 1, "1/2-1/2": None}
_MATE_CP = 100_000


@dataclass(frozen=True)
class ImportReport:
    games: int           # games turned into samples
    skipped: int         # no result, a variant, or unreadable
    positions: int       # samples in the shards written now
    shards_written: int
    shards_skipped: int  # already there from an earlier run


def _eval_wdl(node: chess.pgn.GameNode, turn: chess.Color) -> np.ndarray | None:
    """The node's [%eval] as (win, draw, loss) for the side `turn`, or None."""
    score = node.eval()
    if score is None:
        return None
    return wdl_from_value(value_from_cp(score.pov(turn).score(mate_score=_MATE_CP)))


def game_samples(game: chess.pgn.Game, index: int = 0) -> list[Sample] | None:
    """The samples of one game's main line, or None when it cannot be used."""
    winner = _RESULTS.get(game.headers.get("Result", "*"), -1)
    if winner == -1 or game.errors or game.headers.get("Variant", "Standard").lower() not in (
            "standard", "chess", "from position"):
        return None
    board = game.board()
    if not board.is_valid():
        return None
    state = ChessState(board)
    samples: list[Sample] = []
    node: chess.pgn.GameNode = game
    for child in game.mainline():
        legal = list(state.legal_moves())
        if child.move not in legal:
            return None
        target = np.zeros(len(legal))
        target[legal.index(child.move)] = 1.0
        samples.append(make_sample(state, target, index, _eval_wdl(node, state.board.turn)))
        state = state.play(child.move)
        node = child
    if not samples:
        return None
    return with_outcome(samples, Outcome(winner=winner, reason="pgn result"))


def _games(path: Path) -> Iterator[chess.pgn.Game]:
    with open(path, encoding="utf-8", errors="replace") as handle:
        while True:
            game = chess.pgn.read_game(handle)
            if game is None:
                return
            yield game


def import_pgn(path: str | Path, out_dir: str | Path, *, games_per_shard: int = 500,
               max_games: int | None = None,
               on_shard: Callable[[str], None] = lambda line: None) -> ImportReport:
    """Write the PGN's usable games as shards import-<stem>-<n>.npz in out_dir."""
    path, out_dir = Path(path), Path(out_dir)
    if not path.is_file():
        raise ValueError(f"{path}: no such PGN file")
    if games_per_shard < 1:
        raise ValueError("games_per_shard must be >= 1")
    spec = GameSpec("chess", 8, 8, "")
    used = skipped = positions = written = existing = 0
    pending: list[Sample] = []
    shard_index = 0

    def flush() -> None:
        nonlocal pending, shard_index, positions, written, existing
        target = out_dir / f"import-{path.stem}-{shard_index:05d}.npz"
        if target.exists():
            existing += 1
            on_shard(f"{target}: already there, skipped")
        elif pending:
            write_shard(target, pending, spec, notes=f"imported from {path.name}")
            positions += len(pending)
            written += 1
            on_shard(f"{target}: {len(pending)} positions")
        pending, shard_index = [], shard_index + 1

    in_shard = 0
    for game in _games(path):
        if max_games is not None and used >= max_games:
            break
        samples = game_samples(game, in_shard)
        if samples is None:
            skipped += 1
            continue
        used += 1
        in_shard += 1
        pending.extend(samples)
        if in_shard == games_per_shard:
            flush()
            in_shard = 0
    if in_shard:
        flush()
    return ImportReport(used, skipped, positions, written, existing)
