"""NetworkEvaluator: batched = one by one, cache, torch = ONNX, symmetries, torch-free ONNX path."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from engine.games import get_game
from engine.games.gomoku import symmetry_permutations
from engine.nn.checkpoint import create_random_checkpoint
from engine.nn.evaluator import NetworkEvaluator
from engine.nn.spec import CheckpointError
from engine.nn.throughput import measure_throughput, sample_states
from tests.conftest import engine_env



@pytest.fixture(scope="module")
def nets(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("nets")
    out = {}
    for game_name in ("chess", "gomoku"):
        out[game_name] = root / f"{game_name}.pt"
        create_random_checkpoint(out[game_name], game_name, "res2x32", seed=11)
    return out


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("onnx-cache")


def chess_states() -> list:
    game = get_game("chess")
    return sample_states(game, 6, seed=3) + [
        game.state_from_fen("n1n5/PPPk4/8/8/8/8/4Kppp/5N1N b - - 0 1"),
        game.state_from_fen("startpos", ["g1f3", "g8f6", "f3g1", "f6g8"]),
    ]


def gomoku_states() -> list:
    """Positions on 9x9, 15x15, 20x20 and 12x17 (rectangular), both rules."""
    states = []
    for width, height, rule in ((9, 9, "freestyle"), (15, 15, "standard"),
                                (20, 20, "freestyle"), (12, 17, "standard")):
        states += sample_states(get_game("gomoku", width=width, height=height, rule=rule),
                                2, seed=width + height)
    return states


def assert_same(a, b, tol: float) -> None:
    assert len(a) == len(b)
    for x, y in zip(a, b):
        np.testing.assert_allclose(np.asarray(x.priors), np.asarray(y.priors), atol=tol, rtol=0)
        assert x.value == pytest.approx(y.value, abs=tol)


@pytest.mark.parametrize("backend", ["torch", "onnx"])
def test_one_gomoku_net_plays_every_board_size(nets, cache_dir, backend):
    evaluator = NetworkEvaluator(nets["gomoku"], backend=backend, device="cpu", cache_dir=cache_dir)
    states = gomoku_states()
    assert {(s.width, s.height) for s in states} == {(9, 9), (15, 15), (20, 20), (12, 17)}
    for state, ev in zip(states, evaluator.evaluate(states)):
        assert len(ev.priors) == len(state.legal_moves())
        assert np.all(np.asarray(ev.priors) >= 0)
        assert float(np.sum(ev.priors)) == pytest.approx(1.0, abs=1e-6)
        assert -1.0 <= ev.value <= 1.0
        win, draw, loss = ev.extra["wdl"]
        assert win + draw + loss == pytest.approx(1.0) and ev.value == pytest.approx(win - loss)


@pytest.mark.parametrize("backend", ["torch", "onnx"])
@pytest.mark.parametrize("game_name", ["chess", "gomoku"])
def test_a_batch_equals_one_by_one(nets, cache_dir, backend, game_name):
    """Mixed board sizes included: the padded batch must not change any board's numbers."""
    states = chess_states() if game_name == "chess" else gomoku_states()
    evaluator = NetworkEvaluator(nets[game_name], backend=backend, device="cpu",
                                 cache_dir=cache_dir, cache_size=0)
    batched = evaluator.evaluate(states)
    single = [evaluator.evaluate([s])[0] for s in states]
    assert_same(batched, single, 1e-5)
    for state, ev in zip(states, batched):
        assert len(ev.priors) == len(state.legal_moves())
        assert float(np.sum(ev.priors)) == pytest.approx(1.0, abs=1e-6)


@pytest.mark.parametrize("game_name", ["chess", "gomoku"])
def test_onnx_equals_torch(nets, cache_dir, game_name):
    states = chess_states() if game_name == "chess" else gomoku_states()
    torch_ev = NetworkEvaluator(nets[game_name], backend="torch", device="cpu")
    onnx_ev = NetworkEvaluator(nets[game_name], backend="onnx", device="cpu", cache_dir=cache_dir)
    assert (torch_ev.backend, onnx_ev.backend) == ("torch", "onnx")
    assert_same(torch_ev.evaluate(states), onnx_ev.evaluate(states), 1e-4)


def test_cache_hits_return_the_same_evaluation_and_stay_bounded(nets, cache_dir):
    evaluator = NetworkEvaluator(nets["chess"], device="cpu", cache_dir=cache_dir, cache_size=4)
    states = chess_states()
    first = evaluator.evaluate(states[:3])
    assert evaluator.cache.misses == 3 and evaluator.cache.hits == 0
    again = evaluator.evaluate(states[:3])
    assert all(a is b for a, b in zip(first, again)) and evaluator.cache.hits == 3
    evaluator.evaluate(states)
    assert len(evaluator.cache) == 4
    # Duplicates inside one batch are evaluated once and share the result.
    fresh = NetworkEvaluator(nets["chess"], device="cpu", cache_dir=cache_dir)
    twice = fresh.evaluate([states[0], states[0]])
    assert twice[0] is twice[1] and len(fresh.cache) == 1
    with pytest.raises(ValueError):
        np.asarray(twice[0].priors)[0] = 1.0  # shared: read-only


def test_cache_tells_positions_apart_that_only_history_separates(nets, cache_dir):
    evaluator = NetworkEvaluator(nets["chess"], device="cpu", cache_dir=cache_dir)
    game = get_game("chess")
    start, shuffled = game.initial_state(), game.state_from_fen(
        "startpos", ["g1f3", "g8f6", "f3g1", "f6g8"])
    a, b = evaluator.evaluate([start, shuffled])
    assert a is not b and not np.allclose(np.asarray(a.priors), np.asarray(b.priors))


def test_gomoku_cache_key_includes_board_size_and_last_move(nets, cache_dir):
    evaluator = NetworkEvaluator(nets["gomoku"], device="cpu", cache_dir=cache_dir)
    small, big = get_game("gomoku", width=9), get_game("gomoku", width=10)
    a, b = evaluator.evaluate([small.initial_state(), big.initial_state()])
    assert len(a.priors) == 81 and len(b.priors) == 100


@pytest.mark.parametrize("size", [(9, 9), (8, 11)])
def test_symmetry_average_is_invariant_under_board_symmetries(nets, cache_dir, size):
    width, height = size
    game = get_game("gomoku", width=width, height=height)
    moves = [game.index(3, 4), game.index(4, 4), game.index(3, 5), game.index(1, 2),
             game.index(5, 6)]
    state = game.state_from_moves(moves)
    evaluator = NetworkEvaluator(nets["gomoku"], device="cpu", cache_dir=cache_dir,
                                 symmetry="average", cache_size=0)
    plain = NetworkEvaluator(nets["gomoku"], device="cpu", cache_dir=cache_dir, cache_size=0)
    base = evaluator.evaluate([state])[0]
    base_priors = dict(zip(state.legal_moves(), np.asarray(base.priors)))
    differs = False
    perms = symmetry_permutations(width, height)
    assert len(perms) == (8 if width == height else 4)
    for perm in perms[1:]:
        other = game.state_from_moves([perm[m] for m in moves])
        assert other.last_move == perm[state.last_move]
        ev = evaluator.evaluate([other])[0]
        assert ev.value == pytest.approx(base.value, abs=1e-5)
        priors = dict(zip(other.legal_moves(), np.asarray(ev.priors)))
        for cell, p in base_priors.items():
            assert priors[perm[cell]] == pytest.approx(p, abs=1e-6)
        raw_a, raw_b = plain.evaluate([state])[0], plain.evaluate([other])[0]
        differs |= abs(raw_a.value - raw_b.value) > 1e-6
    assert differs  # without averaging the random net is not symmetric: the test has teeth


def test_symmetry_random_still_gives_a_distribution(nets, cache_dir):
    evaluator = NetworkEvaluator(nets["gomoku"], device="cpu", cache_dir=cache_dir,
                                 symmetry="random", seed=1)
    states = gomoku_states()
    for state, ev in zip(states, evaluator.evaluate(states)):
        assert len(ev.priors) == len(state.legal_moves())
        assert float(np.sum(ev.priors)) == pytest.approx(1.0, abs=1e-6)


def test_bad_settings_are_clear_errors(nets, cache_dir):
    with pytest.raises(ValueError, match="board symmetries"):
        NetworkEvaluator(nets["chess"], device="cpu", symmetry="average", cache_dir=cache_dir)
    with pytest.raises(ValueError, match="unknown backend"):
        NetworkEvaluator(nets["chess"], backend="tensorflow")
    with pytest.raises(ValueError, match="unknown device"):
        NetworkEvaluator(nets["chess"], device="tpu")
    with pytest.raises(CheckpointError, match="no such"):
        NetworkEvaluator(Path("/nonexistent/net.pt"), device="cpu")


def test_terminal_states_get_empty_priors(nets, cache_dir):
    evaluator = NetworkEvaluator(nets["chess"], device="cpu", cache_dir=cache_dir)
    mate = get_game("chess").state_from_fen("startpos", ["f2f3", "e7e5", "g2g4", "d8h4"])
    ev = evaluator.evaluate([mate])[0]
    assert len(ev.priors) == 0 and -1 <= ev.value <= 1


def test_throughput_bypasses_the_cache(nets, cache_dir):
    evaluator = NetworkEvaluator(nets["gomoku"], device="cpu", cache_dir=cache_dir)
    rate = measure_throughput(evaluator, gomoku_states(), batch=4, seconds=0.2)
    assert rate > 0 and len(evaluator.cache) == 0


def test_exports_are_cached_by_checkpoint_sha_and_sidecars_are_used(nets, tmp_path):
    weights = tmp_path / "gomoku.pt"
    shutil.copy(nets["gomoku"], weights)
    cache = tmp_path / "cache"
    first = NetworkEvaluator(weights, backend="onnx", device="cpu", cache_dir=cache)
    exported = list(cache.glob("*.onnx"))
    assert len(exported) == 1 and first._runner.path == exported[0]
    assert not weights.with_suffix(".onnx").exists()      # nothing written next to the weights
    # A sidecar next to the weights is preferred (shipped weights come with one).
    shutil.copy(exported[0], weights.with_suffix(".onnx"))
    second = NetworkEvaluator(weights, backend="onnx", device="cpu", cache_dir=tmp_path / "empty")
    assert second._runner.path == weights.with_suffix(".onnx")
    # New weights under the same name: the stale sidecar is ignored and a fresh export made.
    create_random_checkpoint(weights, "gomoku", "res2x32", seed=99)
    third = NetworkEvaluator(weights, backend="onnx", device="cpu", cache_dir=cache)
    assert third._runner.path != weights.with_suffix(".onnx") and len(list(cache.glob("*.onnx"))) == 2
    torch_ev = NetworkEvaluator(weights, backend="torch", device="cpu")
    state = get_game("gomoku", width=9).initial_state()
    assert_same(third.evaluate([state]), torch_ev.evaluate([state]), 1e-4)


def test_onnx_path_runs_without_importing_torch(nets, cache_dir):
    """Once exported, a process evaluates gomoku through ONNX with numpy + onnxruntime only."""
    NetworkEvaluator(nets["gomoku"], backend="onnx", device="cpu", cache_dir=cache_dir)
    code = (
        "import sys\n"
        "from engine.games import get_game\n"
        "from engine.nn.evaluator import NetworkEvaluator\n"
        f"ev = NetworkEvaluator({str(nets['gomoku'])!r}, cache_dir={str(cache_dir)!r})\n"
        "state = get_game('gomoku', width=15).initial_state().play(112)\n"
        "out = ev.evaluate([state])[0]\n"
        "print(ev.backend, len(out.priors), round(float(sum(out.priors)), 6), 'torch' in sys.modules)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            env=engine_env(), timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["onnx", "224", "1.0", "False"]
    assert result.stderr == ""


@pytest.mark.parametrize("backend", ["torch", "onnx"])
def test_an_in_memory_model_is_evaluated_as_a_snapshot(nets, tmp_path, backend):
    import torch

    from engine.nn.checkpoint import load_checkpoint
    model, _ = load_checkpoint(nets["chess"])
    before = {k: v.clone() for k, v in model.state_dict().items()}
    cache = tmp_path / "cache"
    evaluator = NetworkEvaluator(model, backend=backend, device="cpu", cache_dir=cache)
    reference = NetworkEvaluator(nets["chess"], backend="torch", device="cpu")
    states = chess_states()
    assert_same(evaluator.evaluate(states), reference.evaluate(states), 1e-4)
    assert not cache.exists() or not any(cache.iterdir())      # no export files for a model
    after = model.state_dict()
    assert all(torch.equal(before[k], after[k]) and after[k].dtype == before[k].dtype for k in before)


def test_a_damaged_cached_export_is_replaced_and_onnx_files_load_directly(nets, tmp_path):
    from engine.nn.files import file_sha256
    from engine.nn.onnx_backend import export_path
    cache = tmp_path / "cache"
    cache.mkdir()
    damaged = export_path(file_sha256(nets['gomoku']), cache)
    damaged.write_bytes(b"not an onnx model")
    evaluator = NetworkEvaluator(nets["gomoku"], backend="onnx", device="cpu", cache_dir=cache)
    assert evaluator._runner.path == damaged and damaged.stat().st_size > 1000
    direct = NetworkEvaluator(damaged, device="cpu")
    assert direct.backend == "onnx" and direct.meta["net"] == "res2x32"
    with pytest.raises(CheckpointError, match="cannot play chess"):
        NetworkEvaluator(damaged, device="cpu", expect_game="chess")
    junk = tmp_path / "junk.onnx"
    junk.write_bytes(b"\x00" * 64)
    with pytest.raises(CheckpointError, match="not a usable ONNX network"):
        NetworkEvaluator(junk, device="cpu")


def test_cache_memory_is_bounded_in_bytes(nets, cache_dir):
    evaluator = NetworkEvaluator(nets["gomoku"], device="cpu", cache_dir=cache_dir, cache_mb=0.01)
    states = gomoku_states()
    evaluator.evaluate(states)
    assert 0 < len(evaluator.cache) < len(states)
    assert evaluator.cache.bytes <= 0.01 * 2**20
    assert evaluator.cache.bytes == sum(evaluator.cache.cost(e) for e in evaluator.cache._items.values())
