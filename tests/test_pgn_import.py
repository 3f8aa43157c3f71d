"""`engine import`: PGN games into shards (played move, result, [%eval] as the teacher value)."""
from __future__ import annotations

import math
from pathlib import Path

import chess
import numpy as np
import pytest
from click.testing import CliRunner

from engine.games.chess import codec as codec_chess
from engine.train.samples import read_shards, sample_batch
from engine.cli import main

PGN = Path(__file__).parent / "data" / "small_games.pgn"


def _expected_positions() -> list[tuple[chess.Board, chess.Move, float, float | None]]:
    """(board before the move, move, result for the side to move, eval value or None) of the
    three usable games, by hand from the PGN text."""
    rows = []
    games = [
        (chess.Board(), ["e4", "e5", "Qh5", "Nc6", "Bc4", "Nf6", "Qxf7#"], 1.0,
         [None, 30, 25, -50, 10, 20, "mate"]),
        (chess.Board(), ["d4", "d5", "c4", "e6", "Nc3", "Nf6"], 0.0, [None] * 6),
        (chess.Board("6k1/5ppp/8/8/8/8/r4PPP/6K1 w - - 0 40"), ["h3", "Rxf2", "Kh2", "Rf1"], -1.0,
         [None, "mated", None, None]),
    ]
    for board, sans, white_result, evals in games:
        for san, white_cp in zip(sans, evals):
            move = board.parse_san(san)
            sign = 1.0 if board.turn == chess.WHITE else -1.0
            if white_cp is None:
                value = None
            elif white_cp == "mate":
                value = sign * 1.0
            elif white_cp == "mated":
                value = -sign * 1.0
            else:
                value = math.tanh(sign * white_cp / 400)
            rows.append((board.copy(), move, sign * white_result, value))
            board.push(move)
    return rows


def test_import_writes_played_moves_results_and_eval_values(tmp_path):
    result = CliRunner().invoke(main, ["import", "--game", "chess", str(PGN), "--out", str(tmp_path / "d"),
                                       "--games-per-shard", "2"])
    assert result.exit_code == 0, result.output
    assert "3 games (1 skipped)" in result.output
    dataset = read_shards([tmp_path / "d"])
    expected = _expected_positions()
    assert len(dataset) == len(expected)
    bucket = dataset.buckets[0]
    batch = sample_batch(dataset, 0, np.random.default_rng(0), augment=False, indices=np.arange(len(expected)))
    for i, (board, move, value, teacher) in enumerate(expected):
        legal = list(board.legal_moves)
        index = codec_chess.legal_index(_state(board))
        assert batch.target[i, index[legal.index(move)]] == 1.0 and batch.target[i].sum() == pytest.approx(1.0)
        assert bucket.value[i] == value
        if teacher is None:
            assert np.isnan(batch.teacher_wdl[i]).all()
        else:
            w, d, l = batch.teacher_wdl[i]
            assert d == 0 and w - l == pytest.approx(teacher, abs=1e-5)


def test_import_rerun_skips_finished_shards_and_bad_input_is_one_line(tmp_path):
    out = tmp_path / "d"
    CliRunner().invoke(main, ["import", "--game", "chess", str(PGN), "--out", str(out), "--games-per-shard", "2"])
    again = CliRunner().invoke(main, ["import", "--game", "chess", str(PGN), "--out", str(out),
                                      "--games-per-shard", "2"])
    assert again.exit_code == 0 and again.output.count("already there, skipped") == 2
    missing = CliRunner().invoke(main, ["import", "--game", "chess", str(tmp_path / "no.pgn"), "--out", str(out)])
    assert missing.exit_code != 0 and "no such PGN file" in missing.output and "Traceback" not in missing.output
    gomoku = CliRunner().invoke(main, ["import", "--game", "gomoku", str(PGN), "--out", str(out)])
    assert gomoku.exit_code != 0 and "Traceback" not in gomoku.output


def _state(board: chess.Board):
    from engine.games.chess import ChessState
    return ChessState(board)
