"""Training pipeline: shards, self-play, teacher, trainer, and the `engine` training commands."""
from __future__ import annotations

import dataclasses

import json
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from click.testing import CliRunner

from engine.evaluators import UniformEvaluator
from engine.games import get_game
from engine.games.gomoku import symmetry_permutations
from engine.games.chess import codec as codec_chess
from engine.games.gomoku import codec as codec_gomoku
from engine.nn.checkpoint import create_random_checkpoint, load_checkpoint
from engine.nn.evaluator import NetworkEvaluator
from engine.nn.model import build_model
from engine.search.mcts import MCTS, MCTSConfig
from engine.train import selfplay as selfplay_module
from engine.train.samples import (GameSpec, ShardError, make_sample, read_shards, sample_batch,
                                  with_outcome, write_shard)
from engine.train.selfplay import SelfPlayConfig, selfplay_batch
from engine.train.teacher import TeacherConfig, teacher_batch
from protocols.uci_teacher import uci_teacher
from engine.train.trainer import RunError, TrainConfig, batch_losses, policy_log_probs, policy_loss, train
from engine.types import Limits
from engine.cli import main

GOMOKU7 = GameSpec("gomoku", 7, 7)
GOMOKU9 = GameSpec("gomoku", 9, 9)
CHESS = GameSpec("chess", 8, 8, "")


@pytest.fixture(scope="module")
def gomoku_net(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("nets") / "gomoku.pt"
    create_random_checkpoint(path, "gomoku", "res1x16", seed=3)
    return path


@pytest.fixture(scope="module")
def chess_net(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("nets") / "chess.pt"
    create_random_checkpoint(path, "chess", "res1x16", seed=3)
    return path


@pytest.fixture(scope="module")
def teacher_shard(tmp_path_factory) -> Path:
    """Two 9x9 alpha-beta games: one-hot targets, decisive results (at depth 3: the compiled tree
    draws both games at depth 2 on this seed)."""
    path = tmp_path_factory.mktemp("teacher") / "teacher.npz"
    write_shard(path, teacher_batch(GOMOKU9, 2, TeacherConfig(depth=3), seed=0), GOMOKU9)
    return path


def _legal_cells(planes: np.ndarray) -> set[int]:
    """Empty on-board cells of gomoku planes [6, H, W] (own 0, opponent 1, mask 4)."""
    empty = (planes[0] == 0) & (planes[1] == 0) & (planes[4] == 1)
    return set(np.flatnonzero(empty.reshape(-1)).tolist())


# --- samples and shards -----------------------------------------------------------------------

def test_shard_round_trip_gives_the_codecs_planes_and_targets_exactly(tmp_path):
    chess_game = get_game("chess")
    chess_states = [chess_game.state_from_fen("r3k2r/8/8/3pP3/8/8/8/R3K2R w KQkq d6 37 40"),
                    chess_game.state_from_fen("startpos", ["e2e4", "e7e5", "g1f3"])]
    gomoku_game = get_game("gomoku", width=9, height=7)
    gomoku_states = [gomoku_game.state_from_moves([30, 31, 40]), gomoku_game.state_from_moves([0])]
    for spec, states, codec in ((CHESS, chess_states, codec_chess),
                                (GameSpec("gomoku", 9, 7), gomoku_states, codec_gomoku)):
        rng = np.random.default_rng(0)
        policies = [rng.integers(0, 5, size=len(s.legal_moves())) + 1 for s in states]
        samples = [make_sample(s, p, game_index=i) for i, (s, p) in enumerate(zip(states, policies))]
        samples = with_outcome(samples[:1], _win(0)) + with_outcome(samples[1:], _win(1))
        path = write_shard(tmp_path / f"{spec.label}.npz", samples, spec)
        dataset = read_shards([path])
        batch = sample_batch(dataset, 0, rng, augment=False, indices=np.arange(len(states)))
        assert np.array_equal(batch.planes, codec.encode(states))   # the fifty-move plane included
        for row, (state, policy) in enumerate(zip(states, policies)):
            index = codec.legal_index(state)
            assert np.allclose(batch.target[row, index], policy / policy.sum())
            assert batch.legal[row].sum() == len(state.legal_moves()) and batch.legal[row, index].all()
        assert batch.wdl.tolist() == [0 if states[0].to_play == 0 else 2, 0 if states[1].to_play == 1 else 2]


def _win(player: int):
    from engine.games.base import Outcome
    return Outcome(winner=player, reason="test")


@pytest.mark.parametrize("width,height", [(9, 9), (9, 7)])
def test_augmentation_moves_the_target_cell_with_the_stones(tmp_path, width, height):
    game = get_game("gomoku", width=width, height=height)
    moves = [game.index(3, 3), game.index(5, 2), game.index(4, 3), game.index(6, 5), game.index(5, 3)]
    state = game.state_from_moves(moves)
    target = game.index(6, 3)                                   # makes four in the row
    visits = [10 if m == target else 0 for m in state.legal_moves()]
    spec = GameSpec("gomoku", width, height)
    dataset = read_shards([write_shard(tmp_path / "a.npz", [make_sample(state, visits)], spec)])
    perms = symmetry_permutations(width, height)
    expected = []
    for perm in perms:                                          # the same game played in a mirror
        mirrored = game.state_from_moves([perm[m] for m in moves])
        expected.append((codec_gomoku.encode([mirrored])[0], perm[target]))
    batch = sample_batch(dataset, 96, np.random.default_rng(5), augment=True)
    seen = set()
    for row in range(96):
        matches = [k for k, (planes, _) in enumerate(expected) if np.array_equal(batch.planes[row], planes)]
        assert len(matches) >= 1
        k = matches[0]
        seen.add(k)
        assert int(batch.target[row].argmax()) == expected[k][1] and batch.target[row].max() == 1.0
        assert set(np.flatnonzero(batch.legal[row]).tolist()) == _legal_cells(batch.planes[row])
    assert len(seen) == len(perms) == (8 if width == height else 4)


def test_a_failed_write_leaves_no_shard_and_no_temp_file(tmp_path, monkeypatch):
    state = get_game("gomoku", width=7).initial_state()
    samples = [make_sample(state, np.ones(49))]

    def boom(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(np, "savez_compressed", boom)
    with pytest.raises(KeyboardInterrupt):
        write_shard(tmp_path / "s.npz", samples, GOMOKU7)
    assert list(tmp_path.iterdir()) == []


def test_read_shards_rejects_other_games_and_damaged_files_in_one_line(tmp_path, teacher_shard):
    damaged = tmp_path / "damaged.npz"
    damaged.write_bytes(teacher_shard.read_bytes()[:200])
    for paths, expect in (([damaged], None), ([teacher_shard], "chess"), ([tmp_path / "none"], None)):
        with pytest.raises(ShardError) as info:
            read_shards(paths, expect_game=expect)
        assert "\n" not in str(info.value)


# --- self-play --------------------------------------------------------------------------------

def test_selfplay_targets_are_visit_distributions_over_legal_moves_and_values_follow_outcomes(gomoku_net):
    samples = selfplay_batch(GOMOKU7, gomoku_net, 4, SelfPlayConfig(playouts=24, leaves_per_batch=4), seed=7)
    assert {s.game for s in samples} == {0, 1, 2, 3}
    for s in samples:
        assert abs(float(s.probs.sum()) - 1.0) < 1e-5 and (s.probs >= 0).all()
        assert set(s.moves.tolist()) == _legal_cells(s.planes) and len(s.moves) == len(set(s.moves.tolist()))
        assert s.to_play == s.ply % 2
    for g in range(4):
        game = [s for s in samples if s.game == g]
        assert [s.ply for s in game] == list(range(len(game)))
        first = {s.value if s.to_play == 0 else -s.value for s in game}
        assert len(first) == 1                           # one result, seen from each side to move
        last = game[-1]                                  # the last mover won, or the board filled up
        assert last.value == 1 or (last.value == 0 and len(game) == 49)


def test_selfplay_is_one_search_many_per_move_and_reproducible(monkeypatch):
    calls: list[int] = []
    original = MCTS.search_many

    def counting(self, states, limits, **kwargs):
        calls.append(len(states))
        assert len(set(kwargs["seeds"])) == len(states)          # distinct seeds per game
        assert self.config.noise
        return original(self, states, limits, **kwargs)

    monkeypatch.setattr(selfplay_module.MCTS, "search_many", counting)
    config = SelfPlayConfig(playouts=8, leaves_per_batch=4)
    samples = selfplay_batch(GOMOKU7, None, 3, config, seed=11)
    lengths = [sum(1 for s in samples if s.game == g) for g in range(3)]
    assert len(calls) == max(lengths) and calls[0] == 3
    assert calls == sorted(calls, reverse=True) and sum(calls) == len(samples)
    again = selfplay_batch(GOMOKU7, None, 3, config, seed=11)
    assert [s.moves.tolist() for s in again] == [s.moves.tolist() for s in samples]
    assert [s.probs.tolist() for s in again] == [s.probs.tolist() for s in samples]
    other = selfplay_batch(GOMOKU7, None, 3, config, seed=12)
    assert [s.probs.tolist() for s in other] != [s.probs.tolist() for s in samples]


@pytest.mark.parametrize("game_name", ["gomoku", "chess"])
def test_selfplay_searches_like_the_played_mcts_but_for_its_own_settings(game_name):
    """What trains is what plays: self-play's MCTS is the played one (tuned FPU and policy
    temperature, the threat solver, the game's leaf-value wrapper) plus only root noise,
    its playouts and its batch."""
    from dataclasses import replace as changed

    from engine.players import PlayerOptions, make_searcher
    from engine.train.selfplay import selfplay_searchers
    game = get_game(game_name) if game_name == "chess" else get_game("gomoku", width=15)
    weights = game_name                       # the shipped default network of the game
    played = make_searcher(game, PlayerOptions(player="mcts", weights=weights))
    config = SelfPlayConfig(playouts=300, leaves_per_batch=8, dirichlet_epsilon=0.3)
    full, fast = selfplay_searchers(game, played.evaluator.inner if game_name == "chess" else played.evaluator, config)
    assert fast is None and full.config.noise and full.config.dirichlet_epsilon == 0.3
    # its batch is its own, so no short-clock batch either (its searches have node budgets)
    assert full.config.short_search_leaves == 0
    assert changed(full.config, noise=False, dirichlet_epsilon=0.25, default_nodes=800, leaves_per_batch=16,
                   short_search_leaves=8) == played.config
    assert type(full.evaluator) is type(played.evaluator)       # chess: mop-up over the network
    assert type(full.prover) is type(played.prover) and (full.prover is None or full.prover is not played.prover)
    if game_name == "gomoku":
        assert full.prover is not None and vars(full.prover).keys() == vars(played.prover).keys()
        assert (full.prover.leaf_nodes, full.prover.vct_nodes) == (played.prover.leaf_nodes, played.prover.vct_nodes)
        assert full.config.fpu_reduction == 0.25


def test_selfplay_forced_playouts_reach_only_the_full_search_and_prune_its_targets(monkeypatch):
    """--forced-playouts: the kept (noised) searches force and prune, the fast ones do not,
    and a pruned target is still a distribution over the legal moves."""
    from engine.train.selfplay import selfplay_searchers
    config = SelfPlayConfig(playouts=32, leaves_per_batch=4, full_search_share=0.5, fast_playouts=4,
                            forced_playouts=2.0)
    full, fast = selfplay_searchers(GOMOKU7.make(), UniformEvaluator(), config)
    assert full.config.forced_playouts == 2.0 and full.config.noise
    assert fast is not None and not fast.config.noise
    pruned: list[int] = []
    original = selfplay_module.MCTS._result

    def counting(self, tree, elapsed):
        result = original(self, tree, elapsed)
        if self.config.noise and result.visits is not None and tree.root.visits.sum() > 0:
            pruned.append(int(tree.root.visits.sum()) - sum(result.visits))
        return result

    monkeypatch.setattr(selfplay_module.MCTS, "_result", counting)
    samples = selfplay_batch(GOMOKU7, None, 2, config, seed=3)
    assert samples and all(abs(float(s.probs.sum()) - 1.0) < 1e-5 for s in samples)
    assert min(pruned) >= 0 and max(pruned) > 0
    with pytest.raises(ValueError, match="forced_playouts"):
        SelfPlayConfig(forced_playouts=-0.5)


def test_chess_selfplay_stops_at_the_ply_cap_with_a_draw(chess_net):
    """A random network can mate within ten plies (then the result stands); every other game
    is cut at the cap and scored a draw."""
    played = selfplay_module.selfplay_games(CHESS, chess_net, 2, SelfPlayConfig(playouts=8, max_plies=10), seed=1)
    samples = played.samples
    capped = {g.index for g in played.games if g.reason == "ply cap"}
    assert capped and all(g.plies <= 10 for g in played.games)
    assert all(g.plies == 10 and g.winner is None for g in played.games if g.index in capped)
    assert {s.value for s in samples if s.game in capped} == {0}
    assert len(samples) == sum(g.plies for g in played.games)
    for s in samples:
        assert abs(float(s.probs.sum()) - 1.0) < 1e-5 and s.planes.shape == (32, 8, 8)
    opening = codec_chess.legal_index(get_game("chess").initial_state())
    assert samples[0].moves.tolist() == opening.tolist()


# --- teacher ----------------------------------------------------------------------------------

def test_teacher_games_give_legal_one_hot_targets_and_outcome_values(teacher_shard):
    dataset = read_shards([teacher_shard])
    bucket = dataset.buckets[0]
    batch = sample_batch(dataset, 0, np.random.default_rng(0), augment=False, indices=np.arange(len(bucket)))
    assert (batch.target.max(axis=1) == 1.0).all() and (batch.target.sum(axis=1) == 1.0).all()
    for row in range(len(bucket)):
        assert int(batch.target[row].argmax()) in _legal_cells(batch.planes[row])
    assert set(bucket.value.tolist()) == {-1, 1}
    samples = teacher_batch(GOMOKU9, 2, TeacherConfig(depth=3), seed=0)       # the fixture's games
    assert [s.value for s in samples] == bucket.value.tolist()
    for g in (0, 1):
        game = [s for s in samples if s.game == g]
        assert len({s.value if s.to_play == 0 else -s.value for s in game}) == 1
        assert game[-1].value == 1                       # the teacher's last move made five


def test_multipv_teacher_gives_soft_targets_over_its_best_lines():
    samples = teacher_batch(CHESS, 1, TeacherConfig(depth=1, multipv=3, max_plies=10, opening_plies=2), seed=2)
    assert len(samples) == 8 and {s.value for s in samples} == {0}
    spread = [int((s.probs > 0).sum()) for s in samples]
    assert all(1 <= k <= 3 for k in spread) and max(spread) >= 2
    assert all(abs(float(s.probs.sum()) - 1.0) < 1e-5 for s in samples)


def test_uci_teacher_drives_an_external_engine_through_python_chess():
    command = (sys.executable, "-m", "engine.cli", "uci", "--player", "alphabeta")
    config = TeacherConfig(depth=1, multipv=2, max_plies=6, opening_plies=0, epsilon=0.0, uci=command)
    samples = teacher_batch(CHESS, 1, config, seed=0, make_teacher=uci_teacher)
    assert len(samples) == 6
    assert all((s.probs > 0).sum() == 2 and abs(float(s.probs.sum()) - 1.0) < 1e-5 for s in samples)


# --- training ---------------------------------------------------------------------------------

def test_overfitting_a_fixed_batch_halves_the_loss(teacher_shard):
    torch.manual_seed(0)
    dataset = read_shards([teacher_shard])
    batch = sample_batch(dataset, 0, np.random.default_rng(0), augment=False,
                         indices=np.arange(min(24, len(dataset))))
    model = build_model("res2x32", "gomoku").train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
    first = batch_losses(model, "gomoku", batch)[0].item()
    for _ in range(100):
        loss = batch_losses(model, "gomoku", batch)[0]
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    assert np.isfinite(first) and loss.item() < 0.5 * first


def test_chess_factored_policy_loss_is_the_players_log_probability_and_decreases(tmp_path):
    game = get_game("chess")
    states = [game.initial_state(), game.state_from_fen("startpos", ["e2e4", "c7c5"]),
              game.state_from_fen("8/P7/8/8/8/8/6k1/4K3 w - - 0 1"),           # promotions
              game.state_from_fen("4k3/8/8/8/8/8/p5K1/8 b - - 0 1")]           # black promotes
    rng = np.random.default_rng(1)
    samples = [make_sample(s, rng.random(len(s.legal_moves()))) for s in states]
    dataset = read_shards([write_shard(tmp_path / "c.npz", samples, CHESS)])
    batch = sample_batch(dataset, 0, rng, augment=False, indices=np.arange(len(states)))
    torch.manual_seed(0)
    model = build_model("res1x16", "chess").eval()
    with torch.no_grad():
        from_logits, to_logits, _ = model(torch.from_numpy(batch.planes))
        loss = policy_loss("chess", (from_logits, to_logits), torch.from_numpy(batch.target),
                           torch.from_numpy(batch.legal))
    for row, state in enumerate(states):   # -sum pi log p with p exactly the player's priors
        priors = codec_chess.priors_from_logits(state, from_logits[row].numpy(), to_logits[row].numpy())
        pi = batch.target[row, codec_chess.legal_index(state)]
        assert abs(float(loss[row]) + float((pi * np.log(priors)).sum())) < 1e-4
    model.train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
    losses = []
    for _ in range(50):
        total = batch_losses(model, "chess", batch)[1]
        optimizer.zero_grad()
        total.backward()
        optimizer.step()
        losses.append(total.item())
    t = batch.target[batch.target > 0]
    entropy = float(-(t * np.log(t)).sum()) / len(states)     # the floor: loss - entropy = KL >= 0
    assert all(np.isfinite(losses)) and min(losses) > entropy - 1e-4
    assert losses[-1] - entropy < 0.5 * (losses[0] - entropy)


def test_a_killed_run_resumes_exactly_where_it_stopped(tmp_path, teacher_shard):
    config = TrainConfig(batch_size=16, lr=3e-3, warmup_steps=4, checkpoint_every=10, log_every=5)
    straight = train(tmp_path / "straight", [teacher_shard], "res1x16", 20, config)

    class Killed(Exception):
        pass

    def kill_at_15(entry: dict) -> None:
        if entry["step"] == 15:
            raise Killed

    with pytest.raises(Killed):             # dies after the step-10 save, five steps past it
        train(tmp_path / "killed", [teacher_shard], "res1x16", 20, config, on_log=kill_at_15)
    with pytest.raises(RunError):
        train(tmp_path / "killed", [teacher_shard], "res1x16", 20, config)   # no silent restart
    resumed = train(tmp_path / "killed", [teacher_shard], None, 20, config, resume=True)
    assert resumed.step == straight.step == 20
    model, meta = load_checkpoint(resumed.checkpoint, expect_game="gomoku")
    reference, _ = load_checkpoint(straight.checkpoint)
    assert meta["step"] == 20 and "gomoku samples" in meta["notes"]
    for name, tensor in reference.state_dict().items():
        assert torch.equal(tensor, model.state_dict()[name]), name
    steps = [json.loads(line)["step"] for line in (tmp_path / "killed" / "log.jsonl").read_text().splitlines()]
    assert steps == [5, 10, 15, 20]
    evaluator = NetworkEvaluator(model, backend="torch")
    state = get_game("gomoku", width=9).initial_state()
    assert abs(float(np.sum(evaluator.evaluate([state])[0].priors)) - 1.0) < 1e-5
    result = MCTS(evaluator, MCTSConfig(leaves_per_batch=4)).search(state, Limits(nodes=16))
    assert result.best_move in state.legal_moves() and sum(result.visits or ()) == 16


def test_training_from_a_version_one_network_widens_it(tmp_path, teacher_shard):
    """--init with a network from before the rule planes: the run trains the widened copy
    and saves current-version checkpoints."""
    from dataclasses import replace

    from engine.nn.checkpoint import save_checkpoint
    from engine.nn.spec import parse_net
    torch.manual_seed(0)
    save_checkpoint(tmp_path / "v1.pt", build_model(replace(parse_net("res1x16", "gomoku"), in_planes=6)))
    config = TrainConfig(batch_size=8, lr=1e-3, warmup_steps=1, checkpoint_every=4, log_every=2)
    report = train(tmp_path / "run", [teacher_shard], None, 4, config, init=tmp_path / "v1.pt")
    model, meta = load_checkpoint(report.checkpoint, expect_game="gomoku")
    assert meta["codec_version"] == codec_gomoku.CODEC_VERSION and model.config.in_planes == codec_gomoku.PLANES


def test_the_anchor_loss_keeps_a_run_close_to_its_anchor(tmp_path, teacher_shard, gomoku_net):
    """Trained from the anchor itself on a few one-hot targets: with the anchor loss the
    network's policy stays nearer the anchor's (KL over the batch) than without it."""
    dataset = read_shards([teacher_shard])
    batch = sample_batch(dataset, 0, np.random.default_rng(0), augment=False, indices=np.arange(len(dataset)))
    anchor = load_checkpoint(gomoku_net)[0].eval()

    def drift(weight: float) -> float:
        config = TrainConfig(batch_size=16, lr=3e-3, warmup_steps=1, checkpoint_every=30, log_every=30,
                             val_fraction=0.0, plot=False, anchor_weight=weight)
        report = train(tmp_path / f"run{weight}", [teacher_shard], None, 30, config, init=gomoku_net,
                       anchor=gomoku_net)
        model = load_checkpoint(report.checkpoint)[0].eval()
        planes, legal = torch.from_numpy(batch.planes), torch.from_numpy(batch.legal)
        with torch.no_grad():
            fixed = policy_log_probs("gomoku", tuple(anchor(planes)[:-1]), legal)
            moved = policy_log_probs("gomoku", tuple(model(planes)[:-1]), legal)
        return float((fixed.exp() * (fixed - moved)).masked_fill(~legal, 0.0).sum(dim=1).mean())

    free, anchored = drift(0.0), drift(4.0)
    assert free > 0.05 and anchored < 0.5 * free, (free, anchored)


def test_a_resumed_anchored_run_needs_its_anchor(tmp_path, teacher_shard, gomoku_net):
    """The anchor weight is the run's own setting: resuming without the anchor network is a
    one-line RunError, not a run that silently goes on without the anchor loss."""
    config = TrainConfig(batch_size=8, lr=1e-3, warmup_steps=1, checkpoint_every=2, log_every=2,
                         val_fraction=0.0, plot=False, anchor_weight=1.0)
    train(tmp_path / "run", [teacher_shard], None, 2, config, init=gomoku_net, anchor=gomoku_net)
    unanchored = dataclasses.replace(config, anchor_weight=0.0)    # the command line's default weight
    with pytest.raises(RunError, match="--anchor"):
        train(tmp_path / "run", [teacher_shard], None, 4, unanchored, resume=True)
    resumed = train(tmp_path / "run", [teacher_shard], None, 4, unanchored, resume=True, anchor=gomoku_net)
    assert resumed.step == 4


# --- command line -----------------------------------------------------------------------------

def test_cli_teacher_then_train_then_resume(tmp_path):
    runner = CliRunner()
    data, run = tmp_path / "data", tmp_path / "run"
    args = ["teacher", "--game", "gomoku", "--board", "7,9", "--games", "2", "--depth", "1", "--out", str(data)]
    result = runner.invoke(main, args)
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in data.iterdir()) == ["teacher-gomoku7x7-seed0-00000.npz",
                                                      "teacher-gomoku9x9-seed0-00000.npz"]
    again = runner.invoke(main, args)
    assert again.exit_code == 0 and again.output.count("skipped") == 3
    train_args = ["train", "--game", "gomoku", "--data", str(data), "--net", "res1x16", "--run", str(run),
                  "--batch-size", "8", "--log-every", "2", "--checkpoint-every", "2", "--device", "cpu"]
    result = runner.invoke(main, train_args + ["--steps", "4"])
    assert result.exit_code == 0, result.output
    assert "step 4: wrote" in result.output and (run / "ckpt-0000004.pt").is_file()
    result = runner.invoke(main, train_args + ["--steps", "6", "--resume"])
    assert result.exit_code == 0, result.output
    assert load_checkpoint(run / "latest.pt")[1]["step"] == 6


def test_cli_selfplay_writes_a_shard_per_board(tmp_path, gomoku_net):
    result = CliRunner().invoke(main, ["selfplay", "--game", "gomoku", "--board", "7", "--weights", str(gomoku_net),
                                       "--games", "2", "--nodes", "8", "--forced-playouts", "2",
                                       "--out", str(tmp_path / "sp")])
    assert result.exit_code == 0, result.output
    assert len(read_shards([tmp_path / "sp"])) > 0


@pytest.mark.parametrize("args,expect", [
    (["teacher", "--game", "gomoku", "--board", "3", "--games", "1", "--out", "x"], "--board"),
    (["teacher", "--game", "chess", "--board", "9", "--games", "1", "--out", "x"], "--board"),
    (["teacher", "--game", "gomoku", "--uci", "sf", "--games", "1", "--out", "x"], "--uci"),
    (["train", "--game", "chess", "--data", "DATA", "--steps", "1", "--run", "RUN"], "gomoku shard"),
    (["train", "--game", "gomoku", "--data", "DATA", "--steps", "1", "--run", "RUN", "--net", "big"],
     "bad network name"),
    (["train", "--game", "gomoku", "--data", "DATA", "--steps", "1", "--run", "RUN", "--resume"],
     "nothing to resume"),
    (["train", "--game", "gomoku", "--data", "DATA", "--steps", "1", "--run", "RUN", "--anchor-weight", "1"],
     "--anchor"),
])
def test_cli_bad_arguments_are_one_line_errors(tmp_path, teacher_shard, args, expect):
    args = [str(teacher_shard) if a == "DATA" else str(tmp_path / "run") if a == "RUN" else a for a in args]
    result = CliRunner().invoke(main, args)
    assert result.exit_code in (1, 2) and "Traceback" not in result.output
    errors = [line for line in result.output.splitlines() if line.startswith("Error")]
    assert len(errors) == 1 and expect in errors[0], result.output


def test_a_version_one_gomoku_shard_reads_with_the_new_planes_zero(tmp_path):
    """Shards written before the rule planes (6 planes) join version-2 data: planes 6-8
    are zero under freestyle and standard, which is what version 1 held."""
    path = write_shard(tmp_path / "new.npz", teacher_batch(GOMOKU7, 1, TeacherConfig(depth=1), seed=0), GOMOKU7)
    with np.load(path, allow_pickle=False) as npz:
        arrays = {name: npz[name] for name in npz.files}
    meta = json.loads(str(arrays["meta"]))
    meta["codec_version"] = 1
    arrays["meta"] = np.array(json.dumps(meta))
    arrays["planes"] = arrays["planes"][:, :6]
    np.savez(tmp_path / "old.npz", **arrays)
    new, old = read_shards([path]), read_shards([tmp_path / "old.npz"])
    assert np.array_equal(new.buckets[0].planes, old.buckets[0].planes)
    arrays["planes"] = arrays["planes"][:, :5]                      # planes of no known version
    np.savez(tmp_path / "bad.npz", **arrays)
    with pytest.raises(ShardError, match="codec version 1"):
        read_shards([tmp_path / "bad.npz"])


# --- the opponent-reply auxiliary head (KataGo) -----------------------------------------------

def _games(samples):
    by_game: dict[int, list] = {}
    for s in samples:
        by_game.setdefault(s.game, []).append(s)
    return [sorted(g, key=lambda s: s.ply) for g in by_game.values()]


@pytest.mark.parametrize("source", ["selfplay", "teacher"])
def test_every_sample_knows_the_opponents_answer(source):
    """reply = the move played one ply later: legal in the next position, occupied in the one
    after; -1 at the game's last position (its mover ended the game)."""
    if source == "selfplay":
        samples = selfplay_batch(GOMOKU7, None, 3, SelfPlayConfig(playouts=8, leaves_per_batch=4), seed=5)
    else:
        samples = teacher_batch(GOMOKU9, 2, TeacherConfig(depth=1), seed=1)
    for game in _games(samples):
        assert [s.ply for s in game] == list(range(game[0].ply, game[0].ply + len(game)))
        assert game[-1].reply == -1 and all(s.reply >= 0 for s in game[:-1])
        for now, after, later in zip(game, game[1:], game[2:]):
            assert now.reply in set(after.moves.tolist())
            assert now.reply not in set(later.moves.tolist())


def test_replies_survive_shards_and_old_shards_read_as_none(tmp_path, teacher_shard):
    samples = teacher_batch(GOMOKU9, 1, TeacherConfig(depth=1), seed=2)
    path = write_shard(tmp_path / "r.npz", samples, GOMOKU9)
    dataset = read_shards([path])
    assert dataset.buckets[0].reply.tolist() == [s.reply for s in samples]
    with np.load(path, allow_pickle=False) as npz:          # a shard written before replies
        old = {name: npz[name] for name in npz.files if name != "reply"}
    np.savez_compressed(tmp_path / "old.npz", **old)
    assert set(read_shards([tmp_path / "old.npz"]).buckets[0].reply.tolist()) == {-1}


def test_a_symmetry_moves_the_reply_with_the_target(tmp_path):
    from dataclasses import replace as changed
    game = get_game("gomoku", width=9, height=9)
    states = [game.state_from_moves([10, 11, 12]), game.state_from_moves([40]), game.state_from_moves([0, 80])]
    samples = []
    for i, state in enumerate(states):
        policy = np.zeros(len(state.legal_moves()))
        policy[i] = 1.0                                      # the target: one cell; the reply: the same cell
        sample = make_sample(state, policy, game_index=i)
        samples.append(changed(sample, reply=int(sample.moves[i])))
    dataset = read_shards([write_shard(tmp_path / "s.npz", with_outcome(samples, _win(0)), GOMOKU9)])
    batch = sample_batch(dataset, 64, np.random.default_rng(3), augment=True)
    assert batch.reply is not None
    assert np.array_equal(batch.target.argmax(axis=1), batch.reply)
    assert len(set(batch.reply.tolist())) > 3               # the symmetries did move them


def test_a_reply_head_changes_nothing_the_player_sees():
    from engine.nn.model import with_reply_head
    torch.manual_seed(0)
    model = build_model("res2x32", "gomoku").eval()
    headed = with_reply_head(model).eval()
    planes = torch.from_numpy(codec_gomoku.encode([get_game("gomoku", width=9).state_from_moves([40, 41])]))
    for before, after in zip(model(planes), headed(planes)):
        assert torch.equal(before, after)
    policy, wdl, reply = headed(planes, reply=True)
    assert reply.shape == policy.shape == (1, 9, 9)
    assert headed.config.reply_head and not model.config.reply_head
    from dataclasses import replace as changed

    from engine.nn.spec import parse_net
    with pytest.raises(ValueError, match="gomoku's only"):
        build_model(changed(parse_net("res1x16", "chess"), reply_head=True))


def test_training_with_the_reply_weight_learns_the_answers_and_ships_without_them(tmp_path, teacher_shard):
    from engine.nn.onnx_backend import export_sidecar
    torch.manual_seed(0)
    dataset = read_shards([teacher_shard])
    batch = sample_batch(dataset, 0, np.random.default_rng(0), augment=False,
                         indices=np.arange(min(24, len(dataset))))
    from engine.nn.model import with_reply_head
    model = with_reply_head(build_model("res2x32", "gomoku")).train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
    first = batch_losses(model, "gomoku", batch, reply_weight=0.15)[3].item()
    for _ in range(60):
        loss = batch_losses(model, "gomoku", batch, reply_weight=0.15)
        optimizer.zero_grad()
        loss[0].backward()
        optimizer.step()
    assert first > 0 and loss[3].item() < 0.5 * first
    assert batch_losses(model, "gomoku", batch)[3].item() == 0.0      # off: not computed

    run = tmp_path / "run"
    result = CliRunner().invoke(main, ["train", "--game", "gomoku", "--data", str(teacher_shard), "--steps", "4",
                                       "--run", str(run), "--init", str(_small_net(tmp_path)), "--reply-weight",
                                       "0.15", "--log-every", "2", "--no-progress", "--no-plot", "--device", "cpu"])
    assert result.exit_code == 0, result.output
    assert "reply " in result.output
    trained, meta = load_checkpoint(run / "latest.pt")
    assert meta["config"]["reply_head"] is True and trained.config.reply_head
    assert export_sidecar(run / "latest.pt").is_file()
    evaluator = NetworkEvaluator(str(run / "latest.pt"), backend="onnx")
    state = get_game("gomoku", width=9).state_from_moves([40])
    assert len(evaluator.evaluate([state])[0].priors) == len(state.legal_moves())


def _small_net(tmp_path: Path) -> Path:
    path = tmp_path / "small.pt"
    if not path.is_file():
        create_random_checkpoint(path, "gomoku", "res1x16", seed=4)
    return path


def test_the_reply_weight_is_refused_for_chess_in_one_line(tmp_path, chess_net):
    shard = tmp_path / "chess.npz"
    write_shard(shard, selfplay_batch(CHESS, chess_net, 1, SelfPlayConfig(playouts=4, max_plies=4), seed=1), CHESS)
    result = CliRunner().invoke(main, ["train", "--game", "chess", "--data", str(shard), "--steps", "1",
                                       "--run", str(tmp_path / "run"), "--reply-weight", "0.1", "--no-progress"])
    errors = [line for line in result.output.splitlines() if line.startswith("Error")]
    assert result.exit_code == 1 and len(errors) == 1 and "gomoku's only" in errors[0], result.output


def test_a_run_can_grow_its_init_network_deeper_but_not_change_its_width(tmp_path, teacher_shard, gomoku_net):
    """--net with more blocks than the --init network: the run starts from the deepened copy
    (its first step's losses are the init's) and saves the deeper shape; another width is
    refused with a one-line RunError."""
    from engine.train.trainer import RunError
    init = load_checkpoint(gomoku_net)[0]
    deeper = f"res{init.config.blocks + 2}x{init.config.channels}"
    config = TrainConfig(batch_size=8, lr=1e-3, warmup_steps=1, checkpoint_every=4, log_every=2, plot=False)
    report = train(tmp_path / "run", [teacher_shard], deeper, 4, config, init=gomoku_net)
    model, meta = load_checkpoint(report.checkpoint, expect_game="gomoku")
    assert meta["net"] == deeper and len(model.trunk.blocks) == init.config.blocks + 2
    with pytest.raises(RunError, match="not res"):
        train(tmp_path / "wide", [teacher_shard], f"res{init.config.blocks}x{init.config.channels * 2}", 4,
              config, init=gomoku_net)


def test_a_run_can_start_a_network_with_line_planes_from_one_without(tmp_path, teacher_shard, gomoku_net):
    """--net NAME-lines with an --init network of that shape without them: the run starts from
    the grown copy (with_line_features) and saves a network that reads them; the other way
    round is refused in one line."""
    from engine.train.trainer import RunError
    init = load_checkpoint(gomoku_net)[0]
    lines = f"{init.config.name}-lines"
    config = TrainConfig(batch_size=8, lr=1e-3, warmup_steps=1, checkpoint_every=4, log_every=2, plot=False)
    report = train(tmp_path / "run", [teacher_shard], lines, 4, config, init=gomoku_net)
    model, meta = load_checkpoint(report.checkpoint, expect_game="gomoku")
    assert meta["net"] == lines and model.config.line_features
    assert model.trunk.stem[0].weight[:, init.config.in_planes:].abs().sum() > 0   # trained on them
    with pytest.raises(RunError, match="not res"):
        train(tmp_path / "back", [teacher_shard], init.config.name, 4, config, init=report.checkpoint)
