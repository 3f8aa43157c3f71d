"""`engine bench`: fixed positions, per-position lines and Stockfish-style totals."""
from __future__ import annotations

import re

from click.testing import CliRunner

from engine.bench import bench_positions, run_bench
from engine.cli import main
from engine.players import PlayerOptions
from engine.types import Limits


def _total(output: str, label: str) -> int:
    match = re.search(rf"^{re.escape(label)}\s*:\s*(\d+)$", output, re.MULTILINE)
    assert match, output
    return int(match.group(1))


def test_engine_bench_chess_prints_positive_node_count():
    result = CliRunner().invoke(main, ["bench", "--game", "chess", "--depth", "2"])
    assert result.exit_code == 0, result.output
    assert _total(result.output, "Nodes searched") > 0
    assert _total(result.output, "Nodes/second") > 0
    assert "Total time (ms)" in result.output
    lines = [line for line in result.output.splitlines() if re.match(r"^\s*\d+\s+depth", line)]
    assert len(lines) == len(bench_positions("chess"))
    assert all(re.search(r"depth\s+2/", line) and "bestmove" in line for line in lines)


def test_bench_node_counts_are_reproducible():
    lines: list[str] = []
    first = run_bench(["chess"], PlayerOptions(hash_mb=4), Limits(depth=2), lines.append)
    second = run_bench(["chess"], PlayerOptions(hash_mb=4), Limits(depth=2), lines.append)
    assert first[0] == second[0] > 0


def test_bench_positions_cover_both_games_and_board_sizes():
    chess_positions = bench_positions("chess")
    assert 6 <= len(chess_positions) <= 8
    assert any(label.startswith("kiwipete") for label, _ in chess_positions)
    gomoku_positions = bench_positions("gomoku")
    assert {state.game.width for _, state in gomoku_positions} == {15, 20}
    assert all(state.outcome() is None for _, state in chess_positions + gomoku_positions)


def test_engine_bench_gomoku_runs_at_depth_1():
    result = CliRunner().invoke(main, ["bench", "--game", "gomoku", "--depth", "1"])
    assert result.exit_code == 0, result.output
    assert _total(result.output, "Nodes searched") > 0
