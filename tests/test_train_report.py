"""What a training run reports: held-out validation metrics per checkpoint, the plot, the
value blend in the loss, and `engine validate` on the same held-out positions."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch
from click.testing import CliRunner

from engine.nn.checkpoint import create_random_checkpoint, load_checkpoint
from engine.train.samples import GameSpec, read_shards, sample_batch, split_validation, write_shard
from engine.train.teacher import TeacherConfig, teacher_batch
from engine.train.trainer import TrainConfig, batch_losses, train
from engine.train.validate import validate, validation_indices
from engine.cli import main

GOMOKU9 = GameSpec("gomoku", 9, 9)


@pytest.fixture(scope="module")
def shards(tmp_path_factory) -> Path:
    """Six 9x9 alpha-beta games in three shards, with the teacher's own values."""
    folder = tmp_path_factory.mktemp("shards")
    for index in range(3):
        samples = teacher_batch(GOMOKU9, 2, TeacherConfig(depth=1, epsilon=0.2), seed=index)
        write_shard(folder / f"teacher-{index}.npz", samples, GOMOKU9)
    return folder


def test_validation_metrics_agree_with_the_training_losses_and_a_direct_count(shards, tmp_path):
    create_random_checkpoint(tmp_path / "net.pt", "gomoku", "res1x16", seed=1)
    model, _ = load_checkpoint(tmp_path / "net.pt", expect_game="gomoku")
    dataset = read_shards([shards])
    metrics = validate(model, dataset, value_blend=0.5, max_samples=10_000)
    assert metrics["samples"] == len(dataset)
    (bucket, indices), = validation_indices(dataset, 10_000)
    batch = sample_batch(dataset, 0, np.random.default_rng(0), augment=False, indices=indices, bucket=bucket)
    model.eval()
    with torch.no_grad():
        _, policy, value, _ = batch_losses(model, "gomoku", batch, value_blend=0.5)
        logits, wdl_logits = model(torch.from_numpy(batch.planes))
    assert metrics["policy_ce"] == pytest.approx(float(policy), rel=1e-4)
    assert metrics["value_ce"] == pytest.approx(float(value), rel=1e-4)
    probs = wdl_logits.softmax(dim=1).numpy()
    v = probs[:, 0] - probs[:, 2]
    result = 1 - batch.wdl
    assert metrics["value_mse_result"] == pytest.approx(float(np.mean((v - result) ** 2)), rel=1e-4)
    decisive = result != 0
    assert metrics["value_sign"] == pytest.approx(float(np.mean(np.sign(v[decisive]) == result[decisive])), abs=1e-4)
    flat = logits.reshape(len(indices), -1).masked_fill(~torch.from_numpy(batch.legal), -1e9)
    agree = np.mean(batch.target[np.arange(len(indices)), flat.argmax(dim=1).numpy()] == 1.0)
    assert metrics["policy_top1"] == pytest.approx(float(agree), abs=1e-4)


def test_train_logs_validation_per_checkpoint_and_draws_the_plot(shards, tmp_path):
    run = tmp_path / "run"
    config = TrainConfig(batch_size=16, warmup_steps=2, checkpoint_every=3, log_every=2, val_fraction=0.3,
                         value_blend=0.5)
    train(run, [shards], "res1x16", 6, config)
    entries = [json.loads(line) for line in (run / "log.jsonl").read_text().splitlines()]
    val = [e for e in entries if e["kind"] == "val"]
    assert [e["step"] for e in val] == [3, 6]
    for entry in val:
        assert 0.0 <= entry["policy_top1"] <= 1.0 and entry["policy_ce"] > 0
        assert entry["value_mse"] >= 0 and entry["value_mse_result"] >= 0 and entry["samples"] > 0
    assert [e["step"] for e in entries if e["kind"] == "train"] == [2, 4, 6]
    assert (run / "training.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # the held-out positions are those split_validation holds out, never trained on
    _, held = split_validation(read_shards([shards]), 0.3)
    assert held is not None and val[0]["samples"] == len(held)


def test_value_blend_changes_the_value_loss_only(shards):
    dataset = read_shards([shards])
    batch = sample_batch(dataset, 32, np.random.default_rng(0), augment=False)
    torch.manual_seed(0)
    from engine.nn.model import build_model
    from engine.nn.spec import parse_net
    model = build_model(parse_net("res1x16", "gomoku")).eval()
    with torch.no_grad():
        _, policy0, value0, _ = batch_losses(model, "gomoku", batch, value_blend=0.0)
        _, policy1, value1, _ = batch_losses(model, "gomoku", batch, value_blend=1.0)
    assert float(policy0) == pytest.approx(float(policy1))
    assert float(value0) != pytest.approx(float(value1))


def test_cli_validate_measures_networks_on_the_held_out_games(shards, tmp_path):
    create_random_checkpoint(tmp_path / "a.pt", "gomoku", "res1x16", seed=1)
    create_random_checkpoint(tmp_path / "b.pt", "gomoku", "res1x16", seed=2)
    result = CliRunner().invoke(main, ["validate", "--game", "gomoku", "--data", str(shards), "--weights",
                                       str(tmp_path / "a.pt"), "--weights", str(tmp_path / "b.pt"),
                                       "--val-fraction", "1"])
    assert result.exit_code == 0, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 2 and all("policy top-1" in line and "value MSE" in line for line in lines)
    bad = CliRunner().invoke(main, ["validate", "--game", "chess", "--data", str(shards), "--weights",
                                    str(tmp_path / "a.pt")])
    assert bad.exit_code != 0 and "Traceback" not in bad.output and len(bad.output.strip().splitlines()) == 1


def test_a_version_one_network_is_validated_on_its_own_planes(shards, tmp_path):
    """A network from before the rule planes (6 inputs) measures the same as its exact
    widening on the same held-out positions."""
    from dataclasses import replace

    from engine.nn.checkpoint import save_checkpoint
    from engine.nn.model import build_model, widen_input
    from engine.nn.spec import parse_net
    torch.manual_seed(4)
    old = build_model(replace(parse_net("res1x16", "gomoku"), in_planes=6))
    save_checkpoint(tmp_path / "v1.pt", old)
    save_checkpoint(tmp_path / "v2.pt", widen_input(old, 9))
    dataset = read_shards([shards])
    before = validate(load_checkpoint(tmp_path / "v1.pt")[0], dataset, value_blend=0.5, max_samples=64)
    after = validate(load_checkpoint(tmp_path / "v2.pt")[0], dataset, value_blend=0.5, max_samples=64)
    for key in ("policy_ce", "policy_top1", "value_mse_result"):
        assert before[key] == pytest.approx(after[key], abs=1e-4), key


def test_progress_writes_plain_lines_to_a_log_and_ends_with_the_total():
    import io

    from engine.train.progress import Progress

    stream = io.StringIO()
    bar = Progress(3, "teacher", stream=stream, every=3600, unit="shards")
    bar.update(1)
    assert stream.getvalue() == ""                           # not a terminal: no line before `every`
    bar.update(2, note="120 positions")
    bar.close()
    lines = stream.getvalue().splitlines()
    assert len(lines) == 1 and "3/3 shards" in lines[0] and "120 positions" in lines[0] and "\r" not in lines[0]
