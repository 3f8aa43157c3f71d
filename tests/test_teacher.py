"""External teachers (a UCI engine for chess, a Gomocup brain for gomoku), teacher values in
shards, value blending and the validation split -- all against the fakes in tests/fakes."""
from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from engine.games import get_game
from engine.train.samples import (Batch, GameSpec, make_sample, read_shards, sample_batch, split_validation,
                                  value_targets, with_outcome, write_shard)
from engine.games.gomoku.psq import PsqError, PsqGame, read_psq
from engine.train.jobs import plan_jobs
from engine.train.teacher import TeacherConfig, teacher_batch
from engine.games.base import Outcome
from engine.cli import main
from protocols.gomocup_teacher import board_stones, gomocup_teacher, parse_eval
from protocols.uci_teacher import uci_teacher

FAKES = Path(__file__).parent / "fakes"
CHESS = GameSpec("chess", 8, 8, "")


def _gomocup_fake(mode: str, log: Path | None = None) -> tuple[str, ...]:
    return (sys.executable, str(FAKES / "gomocup_fake.py"), mode, "1", "0") + ((str(log),) if log else ())


def _uci_fake() -> tuple[str, ...]:
    return (sys.executable, str(FAKES / "uci_fake.py"))


def _sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


# --- the Gomocup teacher ----------------------------------------------------------------------

def test_parse_eval_reads_rapfi_messages_as_win_probabilities():
    assert parse_eval("Speed 193K | Depth 7-11 | Eval -134 | Node 965 | Time 5ms") == pytest.approx(_sigmoid(-0.67))
    assert parse_eval("Speed 1K | Depth 3-5 | Eval +M7 | Node 10") == 1.0
    assert parse_eval("Speed 1K | Depth 3-5 | Eval -M12 | Node 10") == 0.0
    assert parse_eval("Bestline H8 I9") is None
    assert parse_eval("depth 1 value +0.000 nodes 3") is None


def test_board_stones_alternate_colours_first_player_first_and_last_move_last():
    game = get_game("gomoku", width=9, height=9)
    # first player: 40, 10, 70 (the last move); second: 41, 20, and to move.
    state = game.state_from_moves([40, 41, 10, 20, 70])
    stones = board_stones(state)
    cells = [y * 9 + x for x, y, _ in stones]
    assert sorted(cells) == [10, 20, 40, 41, 70]
    assert cells[-1] == 70                                   # the last move comes last
    fields = [f for _, _, f in stones]
    assert fields == [2, 1, 2, 1, 2]                         # side to move = second player = field 1
    assert [state.cells[c] for c in cells] == [1, 2, 1, 2, 1]   # colours alternate, first player first


def test_gomocup_teacher_labels_the_brains_moves_with_its_eval_and_sends_the_budget(tmp_path):
    log = tmp_path / "brain.log"
    config = TeacherConfig(depth=None, nodes=123, opening_plies=2, epsilon=0.0,
                           gomocup=_gomocup_fake("eval", log), gomocup_info=(("max_memory", "1000"),))
    spec = GameSpec("gomoku", 9, 7, "standard")
    samples = teacher_batch(spec, 1, config, seed=0, make_teacher=gomocup_teacher)
    game = spec.make()
    assert samples and samples[0].ply == 2
    received = log.read_text().splitlines()
    assert "RECTSTART 9,7" in received
    assert "INFO max_node 123" in received and "INFO rule 1" in received
    assert "INFO max_memory 1000" in received
    match_ms = [int(line.split()[2]) for line in received if line.startswith("INFO timeout_match")]
    assert match_ms and match_ms[0] > 0                      # never "0 = unlimited"
    for sample in samples:
        # the fake plays the empty cell nearest the centre: the one-hot target is on it
        own, opp = sample.planes[0].reshape(-1), sample.planes[1].reshape(-1)
        empty = [i for i in range(63) if not own[i] and not opp[i]]
        expect = min(empty, key=lambda i: (abs(i % 9 - 4) + abs(i // 9 - 3), (i % 9, i // 9)))
        assert sample.moves[int(np.argmax(sample.probs))] == expect and sample.probs.max() == 1.0
        # its eval: 40 * (own stones - opponent stones) in Rapfi units, as a win probability
        win = _sigmoid(40 * (int(own.sum()) - int(opp.sum())) / 200)
        assert sample.teacher_wdl is not None
        assert sample.teacher_wdl == pytest.approx([win, 0.0, 1.0 - win], abs=1e-6)
    assert game.rule == "standard"


def test_gomocup_teacher_without_eval_messages_gives_no_teacher_value():
    config = TeacherConfig(depth=None, nodes=50, opening_plies=1, epsilon=0.0, gomocup=_gomocup_fake("plain"))
    samples = teacher_batch(GameSpec("gomoku", 7, 7), 1, config, seed=1, make_teacher=gomocup_teacher)
    assert samples and all(s.teacher_wdl is None for s in samples)


def test_gomocup_teacher_crash_is_a_one_line_value_error():
    config = TeacherConfig(depth=None, nodes=50, opening_plies=0, gomocup=_gomocup_fake("crash"))
    with pytest.raises(ValueError, match="Gomocup teacher"):
        teacher_batch(GameSpec("gomoku", 7, 7), 1, config, seed=0, make_teacher=gomocup_teacher)


def test_cli_gomocup_teacher_writes_shards_per_board_and_rule_and_resumes(tmp_path):
    out = tmp_path / "data"
    brain = " ".join(_gomocup_fake("eval"))
    args = ["teacher", "--game", "gomoku", "--board", "9,8x7", "--games", "2", "--games-per-shard", "1",
            "--gomocup", brain, "--gomocup-info", "max_node=40", "--nodes", "40", "--out", str(out)]
    first = CliRunner().invoke(main, args)
    assert first.exit_code == 0, first.output
    names = sorted(p.name for p in out.glob("*.npz"))
    assert names == ["teacher-gomoku8x7-seed0-00000.npz", "teacher-gomoku9x9-seed0-00000.npz"]
    standard = CliRunner().invoke(main, args[:-2] + ["--rule", "standard", "--out", str(out)])
    assert standard.exit_code == 0, standard.output
    assert len(list(out.glob("*-standard-*.npz"))) == 2      # other names than the freestyle shards
    again = CliRunner().invoke(main, args)
    assert again.exit_code == 0 and again.output.count("already there, skipped") == 2
    dataset = read_shards([out])
    assert all(not np.isnan(b.teacher_wdl).all() for b in dataset.buckets)


@pytest.mark.parametrize("args, expect", [
    (["--game", "gomoku", "--gomocup", "brain", "--gomocup-info", "max_node"], "expected KEY=VALUE"),
    (["--game", "chess", "--gomocup", "brain"], "cannot play chess"),
    (["--game", "gomoku", "--gomocup-info", "a=1"], "needs --gomocup"),
    (["--game", "gomoku", "--openings", "missing.psq"], "missing.psq"),
])
def test_cli_teacher_bad_gomocup_arguments_are_one_line_errors(tmp_path, args, expect):
    result = CliRunner().invoke(main, ["teacher", "--games", "1", "--out", str(tmp_path)] + args)
    assert result.exit_code != 0 and expect in result.output
    assert "Traceback" not in result.output and not list(tmp_path.glob("*.npz"))


def _psq(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "games.psq"
    path.write_text(text, encoding="utf-8")
    return path


def test_read_psq_reads_arena_exports_and_piskvork_headers():
    text = ("Piskvorky 9x9, 11:11, 0\n5,5,120\n6,6,80\n4,4,0\nBlack: a\nWhite: b\n\n"
            "Piskvorky 7, 1:1, 0\n1,1\n7,7\n")
    games = read_psq(text)
    assert games == [PsqGame(9, 9, (4 * 9 + 4, 5 * 9 + 5, 3 * 9 + 3)), PsqGame(7, 7, (0, 48))]


@pytest.mark.parametrize("text, expect", [
    ("Piskvorky 9x9, 11:11, 0\n10,1,0\n", "games.psq:2: move 10,1 is off the 9x9 board"),
    ("Piskvorky 9x9, 11:11, 0\n2,2,0\n2,2,0\n", "games.psq:3: move 2,2 is on an occupied cell"),
    ("2,2\n3,3\n", "no games"),
])
def test_read_psq_bad_input_names_the_line(text, expect):
    with pytest.raises(PsqError, match=expect):
        read_psq(text, "games.psq")


def test_gomoku_teacher_games_start_partway_through_the_given_games():
    game = get_game("gomoku", width=9, height=9)
    record = PsqGame(9, 9, (40, 41, 31, 49, 22, 13))           # ends before anyone has five
    config = TeacherConfig(depth=1, max_plies=8, opening_plies=0, epsilon=0.0,
                           start_games=(record, PsqGame(15, 15, (112, 113))))
    starts = set()
    for seed in range(12):
        first = teacher_batch(GameSpec("gomoku", 9, 9), 1, config, seed=seed)[0]
        stones = int(first.ply)
        assert 1 <= stones <= 5
        expected = game.state_from_moves(record.moves[:stones])
        assert np.array_equal(first.planes, make_sample(expected, np.ones(len(expected.legal_moves()))).planes)
        starts.add(stones)
    assert len(starts) >= 3                                    # the prefix length is drawn, not fixed
    with pytest.raises(ValueError, match="no start game is 7x7"):
        teacher_batch(GameSpec("gomoku", 7, 7), 1, config, seed=0)


def test_cli_gomoku_teacher_reads_a_psq_file_of_start_games(tmp_path):
    psq = _psq(tmp_path, "Piskvorky 9x9, 11:11, 0\n5,5,0\n6,6,0\n4,6,0\n6,4,0\nResult: 1-0\n")
    out = tmp_path / "data"
    brain = " ".join(_gomocup_fake("eval"))
    result = CliRunner().invoke(main, ["teacher", "--game", "gomoku", "--board", "9", "--games", "2",
                                       "--gomocup", brain, "--nodes", "40", "--opening-plies", "0",
                                       "--openings", str(psq), "--out", str(out)])
    assert result.exit_code == 0, result.output
    plies = np.concatenate([np.load(shard)["ply"] for shard in out.glob("*.npz")])
    assert len(plies) and plies.min() >= 1                   # no game started on an empty board
    bad = _psq(tmp_path, "Piskvorky 9x9, 11:11, 0\n5,5,0\n5,5,0\n")
    refused = CliRunner().invoke(main, ["teacher", "--game", "gomoku", "--board", "9", "--games", "1",
                                        "--openings", str(bad), "--out", str(tmp_path / "none")])
    assert refused.exit_code != 0 and "occupied cell" in refused.output and "Traceback" not in refused.output


# --- the UCI teacher ---------------------------------------------------------------------------

def test_uci_teacher_soft_target_over_multipv_lines_and_wdl_value():
    config = TeacherConfig(depth=1, multipv=3, soft_tau=0.2, max_plies=4, opening_plies=0, epsilon=0.0,
                           uci=_uci_fake())
    samples = teacher_batch(CHESS, 1, config, seed=0, make_teacher=uci_teacher)
    game = get_game("chess")
    state = game.initial_state()
    first = samples[0]
    legal = list(state.legal_moves())
    board_moves = list(state.board.legal_moves)[:3]          # the fake's three lines, in its order
    values = np.array([math.tanh((100 - 60 * i) / 400) for i in range(3)]) / 0.2
    expect = np.exp(values - values.max()) / np.exp(values - values.max()).sum()
    for move, p in zip(board_moves, expect):
        assert first.probs[legal.index(move)] == pytest.approx(p, rel=1e-5)
    assert first.probs.sum() == pytest.approx(1.0) and np.count_nonzero(first.probs) == 3
    # UCI_ShowWDL was switched on: the best line's wdl (500, 300, 200 per mille) is the teacher value
    assert first.teacher_wdl == pytest.approx([0.5, 0.3, 0.2])


def test_uci_teacher_multipv_one_is_one_hot_on_its_move():
    config = TeacherConfig(depth=1, multipv=1, max_plies=3, opening_plies=0, epsilon=0.0, uci=_uci_fake())
    samples = teacher_batch(CHESS, 1, config, seed=0, make_teacher=uci_teacher)
    assert all(s.probs.max() == 1.0 for s in samples)
    assert all(s.teacher_wdl is not None for s in samples)


def test_teacher_games_start_from_the_given_openings():
    fen = "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3"
    config = TeacherConfig(depth=1, max_plies=6, opening_plies=0, epsilon=0.0, uci=_uci_fake(), openings=(fen,))
    samples = teacher_batch(CHESS, 1, config, seed=0, make_teacher=uci_teacher)
    state = get_game("chess").state_from_fen(fen)
    assert np.array_equal(samples[0].planes, make_sample(state, np.ones(len(state.legal_moves()))).planes)


def test_cli_chess_teacher_with_uci_options_and_builtin_openings(tmp_path):
    out = tmp_path / "chess"
    result = CliRunner().invoke(main, [
        "teacher", "--game", "chess", "--uci", " ".join(_uci_fake()), "--uci-option", "Hash=8",
        "--multipv", "2", "--depth", "1", "--games", "1", "--max-plies", "3", "--opening-plies", "0",
        "--out", str(out)])
    assert result.exit_code == 0, result.output
    dataset = read_shards([out])
    first_planes = dataset.buckets[0].planes[0]
    start = make_sample(get_game("chess").initial_state(), np.ones(20)).planes
    assert not np.array_equal(first_planes, start)           # a suite opening, not the start position


def test_cli_chess_teacher_reads_full_fens_and_epd_lines_alike(tmp_path):
    fen = "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3"
    positions = tmp_path / "positions.epd"
    positions.write_text(f"{fen}\n; a comment\n{' '.join(fen.split()[:4])} id \"epd\";\n")
    out = tmp_path / "chess"
    result = CliRunner().invoke(main, [
        "teacher", "--game", "chess", "--uci", " ".join(_uci_fake()), "--depth", "1", "--games", "2",
        "--max-plies", "2", "--opening-plies", "0", "--openings", str(positions), "--out", str(out)])
    assert result.exit_code == 0, result.output
    starts = [get_game("chess").state_from_fen(f) for f in (fen, " ".join(fen.split()[:4]) + " 0 1")]
    start_planes = [make_sample(s, np.ones(len(s.legal_moves()))).planes for s in starts]
    first = read_shards([out]).buckets[0].planes[0]
    assert any(np.array_equal(first, planes) for planes in start_planes)
    positions.write_text(f"{fen}\n{fen.replace(' w ', ' x ')}\n")
    result = CliRunner().invoke(main, [
        "teacher", "--game", "chess", "--uci", " ".join(_uci_fake()), "--depth", "1", "--games", "1",
        "--openings", str(positions), "--out", str(tmp_path / "none")])
    assert result.exit_code != 0 and "positions.epd:2" in result.output and "Traceback" not in result.output


# --- values, blending, validation split ----------------------------------------------------

def _batch(results: list[int], teacher: list[list[float] | None]) -> Batch:
    n = len(results)
    return Batch(planes=np.zeros((n, 1, 1, 1), np.float32), target=np.zeros((n, 1), np.float32),
                 legal=np.ones((n, 1), bool), wdl=np.array([1 - r for r in results], dtype=np.int64),
                 teacher_wdl=np.array([t if t is not None else [np.nan] * 3 for t in teacher], np.float32))


def test_value_targets_blend_the_result_with_the_teacher_where_it_has_one():
    batch = _batch([1, -1, 0], [[0.2, 0.5, 0.3], None, [0.6, 0.2, 0.2]])
    assert np.allclose(value_targets(batch, 0.0), np.eye(3)[[0, 2, 1]])
    blended = value_targets(batch, 0.25)
    assert np.allclose(blended[0], [0.75 + 0.05, 0.125, 0.075])
    assert np.allclose(blended[1], [0, 0, 1])                # no teacher value: the result alone
    assert np.allclose(blended[2], [0.15, 0.75 + 0.05, 0.05])
    assert np.allclose(value_targets(batch, 1.0)[0], [0.2, 0.5, 0.3])


def test_teacher_values_survive_a_shard_and_a_batch(tmp_path):
    game = get_game("gomoku", width=7, height=7)
    states = [game.state_from_moves([24]), game.state_from_moves([24, 25])]
    samples = [make_sample(states[0], np.ones(48), 0, [3, 1, 0]), make_sample(states[1], np.ones(47), 0)]
    samples = with_outcome(samples, Outcome(winner=0, reason="five"))
    path = write_shard(tmp_path / "s.npz", samples, GameSpec("gomoku", 7, 7))
    batch = sample_batch(read_shards([path]), 0, np.random.default_rng(0), augment=False, indices=np.arange(2))
    assert batch.teacher_wdl is not None
    assert np.allclose(batch.teacher_wdl[0], [0.75, 0.25, 0.0]) and np.isnan(batch.teacher_wdl[1]).all()


def test_validation_split_holds_out_whole_games_the_same_way_every_time(tmp_path):
    game = get_game("gomoku", width=7, height=7)
    samples = []
    for g in range(40):
        moves = [(g * 7 + k * 3) % 49 for k in range(3)]
        moves = list(dict.fromkeys(moves))
        state = game.initial_state()
        for move in moves:
            samples.append(make_sample(state, np.ones(len(state.legal_moves())), g))
            state = state.play(move)
    write_shard(tmp_path / "a.npz", samples, GameSpec("gomoku", 7, 7))
    dataset = read_shards([tmp_path])
    train, held = split_validation(dataset, 0.25)
    again_train, again_held = split_validation(read_shards([tmp_path]), 0.25)
    assert held is not None and again_held is not None
    assert len(train) + len(held) == len(dataset) and 0 < len(held) < len(dataset)
    assert np.array_equal(held.buckets[0].game_key, again_held.buckets[0].game_key)
    assert not set(held.buckets[0].game_key) & set(train.buckets[0].game_key)   # no game in both
    assert split_validation(dataset, 0.0) == (dataset, None)


def test_teacher_jobs_take_the_boards_in_turn_so_a_run_stopped_early_has_every_board(tmp_path):
    """40 games on 15x15 and 20x20, 8 a shard: the shards alternate between the boards (a long
    teacher run is stopped when time is up), each board gets its 20 games, and the shard names
    (what a rerun resumes by) are numbered per board."""
    specs = [GameSpec("gomoku", 15, 15), GameSpec("gomoku", 20, 20)]
    jobs = plan_jobs("teacher", specs, 40, 8, 7, tmp_path, TeacherConfig(depth=1))
    assert [(job.spec.width, job.games) for job in jobs] == [(15, 8), (20, 8), (15, 8), (20, 8), (15, 4), (20, 4)]
    assert [Path(job.path).name for job in jobs[:2]] == ["teacher-gomoku15x15-seed7-00000.npz",
                                                          "teacher-gomoku20x20-seed7-00000.npz"]
    assert len({job.seed for job in jobs}) == len(jobs)
