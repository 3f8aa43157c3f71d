"""The AlphaZero loop: one tiny iteration, resumption, the arena gate, self-play's new knobs."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from engine.train.loop import GateResult, LoopConfig, LoopError, load_state, run_loop
from engine.train.pool import LocalPool
from engine.train.samples import GameSpec
from engine.train.selfplay import SelfPlayConfig, selfplay_games
from engine.train.trainer import TrainConfig

SPEC9 = GameSpec("gomoku", 9, 9)


def tiny_config(**changes) -> LoopConfig:
    settings = dict(
        specs=(SPEC9,), net="res1x8", generations=1, games=4, lockstep=2,
        selfplay=SelfPlayConfig(playouts=8, leaves_per_batch=4, temperature_plies=4, max_plies=16,
                                full_search_share=0.5, fast_playouts=2),
        steps=4, train=TrainConfig(batch_size=16, warmup_steps=1, checkpoint_every=2, log_every=2),
        gate_games=2, gate_nodes=4, alphabeta_games=0)
    settings.update(changes)
    return LoopConfig(**settings)


class FakeArbiter:
    """Scripted gating: the candidate scores `score`; remembers what it was asked."""

    def __init__(self, wins: int = 2, losses: int = 0):
        self.wins, self.losses = wins, losses
        self.calls: list[tuple[int, str, str]] = []

    def gate(self, generation, candidate, best, config, pool) -> GateResult:
        assert Path(candidate).is_file() and Path(best).is_file()
        self.calls.append((generation, Path(candidate).name, Path(best).name))
        return GateResult(self.wins, self.losses, 0)

    def report(self, state) -> list[str]:
        return [f"report {state.generation}"]


def _unit_files(run: Path) -> dict[str, float]:
    return {str(p.relative_to(run)): p.stat().st_mtime_ns for p in sorted(run.glob("selfplay/*/*"))}


def test_a_tiny_loop_iteration_trains_gates_and_promotes(tmp_path):
    arbiter = FakeArbiter()
    lines: list[str] = []
    with LocalPool(1) as pool:
        state = run_loop(tmp_path, tiny_config(), arbiter, pool, echo=lines.append)
    assert state.generation == 2 and state.best == "nets/gen-0001.pt"
    assert arbiter.calls == [(1, "gen-0001.pt", "gen-0000.pt")]
    assert (tmp_path / "nets" / "gen-0001.onnx").is_file()
    assert (tmp_path / "nets" / "gen-0000.int8.onnx").is_file() and (tmp_path / "nets" / "gen-0001.int8.onnx").is_file()
    assert [h["promoted"] for h in state.history] == [True]
    assert len(list(tmp_path.glob("selfplay/gen-0001/*.json"))) == 2
    assert load_state(tmp_path).history == state.history
    assert any(line.startswith("gen 1: trained 4 steps") for line in lines)


def test_the_reply_weight_gives_the_loops_candidates_a_reply_head_that_play_never_sees(tmp_path):
    from dataclasses import replace

    from engine.nn.checkpoint import read_meta
    config = tiny_config(train=replace(tiny_config().train, reply_weight=0.15))
    with LocalPool(1) as pool:
        state = run_loop(tmp_path, config, FakeArbiter(), pool, echo=lambda line: None)
    assert state.best == "nets/gen-0001.pt"
    assert read_meta(tmp_path / "nets" / "gen-0001.pt")["config"]["reply_head"] is True
    assert read_meta(tmp_path / "nets" / "gen-0000.pt")["config"].get("reply_head") is False
    assert (tmp_path / "nets" / "gen-0001.int8.onnx").is_file()
    assert load_state(tmp_path).config.train.reply_weight == 0.15


def test_teacher_data_joins_the_window_and_every_generation_is_validated_on_held_out_shards(tmp_path):
    from engine.train.samples import write_shard

    for folder, seed in (("teacher", 11), ("holdout", 12)):
        played = selfplay_games(SPEC9, None, 2, tiny_config().selfplay, seed)
        write_shard(tmp_path / folder / "a.npz", played.samples, SPEC9)
    run = tmp_path / "run"
    lines: list[str] = []
    config = tiny_config(generations=2, data=(str(tmp_path / "teacher"),), holdout=(str(tmp_path / "holdout"),))
    with LocalPool(1) as pool:
        state = run_loop(run, config, FakeArbiter(), pool, echo=lines.append)
    # the window's two self-play shards plus the teacher's one, in both generations
    assert [line for line in lines if "trained" in line][0].startswith("gen 1: trained 4 steps on 3 shards")
    assert set(state.baseline) == {"holdout"} and state.baseline["holdout"]["samples"] > 0
    for entry in state.history:
        metrics = entry["validation"]["holdout"]
        assert 0.0 <= metrics["policy_top1"] <= 1.0 and metrics["value_mse_result"] >= 0.0
        assert entry["selfplay_games"] == 4 and entry["positions"] > 0 and entry["steps"] == 4
        assert set(entry["seconds"]) == {"selfplay", "train", "gate"}
    table = (run / "generations.md").read_text().splitlines()
    assert [row.split("|")[1].strip() for row in table[2:]] == ["0", "1", "2"]
    assert (run / "training.png").read_bytes()[:4] == b"\x89PNG"
    assert load_state(run).config == config            # data and holdout survive a resume


def test_a_losing_candidate_is_not_promoted_unless_always(tmp_path):
    with LocalPool(1) as pool:
        kept = run_loop(tmp_path / "gated", tiny_config(), FakeArbiter(0, 2), pool)
        always = run_loop(tmp_path / "always", tiny_config(always_promote=True), FakeArbiter(0, 2), pool)
    assert kept.best == "nets/gen-0000.pt" and not kept.history[0]["promoted"]
    assert always.best == "nets/gen-0001.pt"


def test_resume_after_an_interrupted_iteration_loses_no_finished_unit(tmp_path):
    config = tiny_config()
    with LocalPool(1) as pool:
        run_loop(tmp_path, config, FakeArbiter(), pool, stop_after="selfplay")
        before = _unit_files(tmp_path)
        # Killed in training: the trainer's own state continues; self-play is not replayed.
        assert load_state(tmp_path).phase == "train"
        state = run_loop(tmp_path, None, FakeArbiter(), pool)
    assert state.generation == 2
    assert _unit_files(tmp_path) == before


def test_resume_replays_only_the_unit_that_had_not_finished(tmp_path):
    config = tiny_config()
    with LocalPool(1) as pool:
        run_loop(tmp_path, config, FakeArbiter(), pool, stop_after="selfplay")
        files = sorted(tmp_path.glob("selfplay/gen-0001/*.json"))
        lost = files[-1]
        shard = lost.with_suffix(".npz")
        shard_bytes = shard.read_bytes() if shard.exists() else None
        kept = {p: p.stat().st_mtime_ns for p in files[:-1]}
        lost.unlink()                                  # as if killed before the unit was stored
        shard.unlink(missing_ok=True)
        state = json.loads((tmp_path / "loop.json").read_text())
        state["phase"] = "selfplay"
        (tmp_path / "loop.json").write_text(json.dumps(state))
        run_loop(tmp_path, None, FakeArbiter(), pool, stop_after="selfplay")
    assert {p: p.stat().st_mtime_ns for p in files[:-1]} == kept
    assert lost.is_file()
    if shard_bytes is not None:      # the same seed plays the same games (the creation time differs)
        import numpy as np
        with np.load(shard) as new, np.load(__import__("io").BytesIO(shard_bytes)) as old:
            assert np.array_equal(new["planes"], old["planes"]) and np.array_equal(new["probs"], old["probs"])


def test_a_run_with_other_settings_is_refused(tmp_path):
    with LocalPool(1) as pool:
        run_loop(tmp_path, tiny_config(), FakeArbiter(), pool, stop_after="selfplay")
        with pytest.raises(LoopError, match="other settings"):
            run_loop(tmp_path, tiny_config(steps=5), FakeArbiter(), pool)
        with pytest.raises(LoopError, match="no loop to resume"):
            run_loop(tmp_path / "nothing", None, FakeArbiter(), pool)


def test_playout_cap_keeps_only_fully_searched_moves():
    full = SelfPlayConfig(playouts=4, leaves_per_batch=2, max_plies=20)
    capped = SelfPlayConfig(playouts=4, leaves_per_batch=2, max_plies=20, full_search_share=0.3, fast_playouts=1)
    spec = GameSpec("gomoku", 7, 7)
    every = selfplay_games(spec, None, 3, full, seed=5)
    some = selfplay_games(spec, None, 3, capped, seed=5)
    assert len(every.samples) == sum(g.plies for g in every.games)
    assert 0 < len(some.samples) < sum(g.plies for g in some.games)


def test_resignation_play_through_counts_would_be_resigners():
    """Uniform evaluator: every root value is 0, so with resign_value 0 every game wants to
    resign at resign_min_ply; played-out games go on and are counted instead."""
    spec = GameSpec("gomoku", 7, 7)
    resigning = SelfPlayConfig(playouts=2, leaves_per_batch=1, resign_value=0.0, resign_min_ply=3, max_plies=12)
    played = selfplay_games(spec, None, 4, resigning, seed=1)
    assert all(g.reason == "resignation" and g.plies == 3 and not g.played_out for g in played.games)
    through = selfplay_games(spec, None, 4, SelfPlayConfig(
        playouts=2, leaves_per_batch=1, resign_value=0.0, resign_min_ply=3, max_plies=12,
        resign_playthrough=1.0), seed=1)
    assert all(g.played_out and g.would_resign == 1 and g.reason != "resignation" for g in through.games)
    assert all(g.false_resignation == (g.winner != 0) for g in through.games)


def test_loop_command_rejects_bad_input_in_one_line(tmp_path):
    from engine.cli.loop import loop
    runner = CliRunner()
    bad_board = runner.invoke(loop, ["--run", str(tmp_path / "r"), "--board", "3"])
    assert bad_board.exit_code == 2 and "Traceback" not in bad_board.output
    bad_net = runner.invoke(loop, ["--run", str(tmp_path / "r"), "--net", "big"])
    assert bad_net.exit_code == 1 and bad_net.output.startswith("Error: bad network name")


def test_engine_lists_the_loop_command_among_its_own():
    from engine.cli import main
    runner = CliRunner()
    listed = runner.invoke(main, ["--help"])
    assert listed.exit_code == 0 and "loop" in listed.output
    helped = runner.invoke(main, ["loop", "--help"])
    assert helped.exit_code == 0 and "--always-promote" in helped.output
    unknown = runner.invoke(main, ["no-such-command"])
    assert unknown.exit_code == 2 and "No such command" in unknown.output


def test_the_arena_gate_holds_alpha_beta_to_its_depth_and_mcts_to_its_nodes(tmp_path):
    """The gate's opponents are Gomocup brains: alpha-beta gets the loop's depth (INFO max_depth)
    and the MCTS networks the gate's playouts (INFO max_node), each only its own cap."""
    from arena.gate import ArenaArbiter
    from arena.store import Store

    config = tiny_config(gate_games=2, gate_nodes=6, alphabeta_games=2, alphabeta_depth=2)
    with LocalPool(1) as pool:
        run_loop(tmp_path, config, ArenaArbiter(tmp_path), pool)
    records = Store(str(tmp_path / "arena.sqlite")).records()
    seen = {"alphabeta": 0, "mcts": 0}
    for record in records:
        for k, info in enumerate(record.infos):
            mover = record.first if (record.opening_plies + k) % 2 == 0 else record.second
            if mover.startswith("alphabeta"):
                assert info.get("depth", 0) <= 2, (record.key, k, info)
                seen["alphabeta"] += "depth" in info
            elif "nodes" in info:
                assert info["nodes"] <= 6 + 4, (record.key, k, info)   # + one batch of leaves
                seen["mcts"] += 1
    assert seen["alphabeta"] > 0 and seen["mcts"] > 0


def test_the_loop_plays_chess_and_gates_it_from_the_chess_opening_suite(tmp_path):
    """`engine loop --game chess`: self-play, training and a gate of UCI engines whose games
    start from the chess book's openings (not the initial position every time)."""
    from arena.store import Store
    from engine.cli.loop import loop
    from engine.games.chess.openings import builtin_suite

    result = CliRunner().invoke(loop, ["--game", "chess", "--run", str(tmp_path), "--net", "res1x8",
                                       "--generations", "1", "--games", "2", "--lockstep", "2", "--nodes", "4",
                                       "--fast-nodes", "2", "--steps", "2", "--batch-size", "8",
                                       "--gate-games", "4", "--gate-nodes", "4", "--alphabeta-games", "0",
                                       "--workers", "1"])
    assert result.exit_code == 0, result.output
    assert "| 1 | 2 |" in result.output                       # the generation table: 2 self-play games
    records = Store(str(tmp_path / "arena.sqlite")).records()
    assert len(records) == 4 and all(r.game == "chess" and r.board == "" for r in records)
    suite = {o.fen for o in builtin_suite()}
    assert all(r.start_fen in suite for r in records) and len({r.start_fen for r in records}) == 2
