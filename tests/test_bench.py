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


def test_engine_bench_threats_solves_every_position_with_a_proof():
    result = CliRunner().invoke(main, ["bench", "--threats"])
    assert result.exit_code == 0, result.output
    from engine.bench import THREAT_POSITIONS
    lines = [line for line in result.output.splitlines() if re.match(r"^\d+\.\d+\s", line)]
    assert len(lines) == 3 * len(THREAT_POSITIONS)
    for line in lines:
        plies = int(re.search(r"plies\s+(\d+)", line).group(1))
        assert plies >= 3 and plies % 2 == 1          # every position is won (or threatened) by force
    assert re.search(r"^Positions/second: \d", result.output, re.MULTILINE)
    assert re.search(r"^Mean proof plies: \d", result.output, re.MULTILINE)
