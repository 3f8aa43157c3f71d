"""Worker pools and the shared inference process (local transport)."""
from __future__ import annotations

import threading

import numpy as np
import pytest

from engine.train.inference import AutocastRunner, Batcher, InferenceServer, RemoteEvaluator
from engine.train.loop import SelfPlayUnit, play_unit
from engine.train.pool import LocalPool, open_pool
from engine.train.samples import GameSpec
from engine.train.selfplay import SelfPlayConfig

SPEC = GameSpec("gomoku", 7, 7)
CONFIG = SelfPlayConfig(playouts=6, leaves_per_batch=2, temperature_plies=4, max_plies=12)


@pytest.fixture(scope="module")
def tiny_net(tmp_path_factory):
    from engine.nn.checkpoint import create_random_checkpoint
    path = tmp_path_factory.mktemp("pool") / "tiny.pt"
    create_random_checkpoint(path, "gomoku", "res1x8", seed=3)
    return str(path)


def _units(weights: str) -> list[SelfPlayUnit]:
    return [SelfPlayUnit(SPEC, weights, 2, CONFIG, seed) for seed in (11, 12, 13)]


def _arrays(played) -> list[tuple]:
    return [(s.planes.tobytes(), s.moves.tobytes(), s.probs.tobytes(), s.value, s.ply) for s in played.samples]


def test_one_and_two_workers_give_the_same_samples_for_the_same_seeds(tiny_net):
    with LocalPool(1) as one, LocalPool(2) as two:
        first = [_arrays(p) for p in one.map(play_unit, _units(tiny_net))]
        second = [_arrays(p) for p in two.map(play_unit, _units(tiny_net))]
    assert first == second
    assert all(first) and first[0] != first[1]   # real samples, and seeds matter


def test_open_pool_without_ray_is_local_and_defaults_to_the_cores():
    pool = open_pool()
    assert pool.kind == "local" and pool.workers >= 1
    assert open_pool(3).workers == 3


class _SlowSum:
    """A fake network: row sums as 'policy', row count as 'wdl'; the first call waits until
    the test has queued more requests, so they must be batched together."""

    def __init__(self) -> None:
        self.sizes: list[int] = []
        self.entered = threading.Event()
        self.release = threading.Event()

    def run(self, planes: np.ndarray) -> list[np.ndarray]:
        if not self.entered.is_set():
            self.entered.set()
            self.release.wait(5.0)
        self.sizes.append(len(planes))
        return [planes.reshape(len(planes), -1).sum(axis=1), np.full(len(planes), len(planes))]


def test_batcher_runs_waiting_requests_in_one_pass_and_returns_each_its_rows():
    runner = _SlowSum()
    batcher = Batcher(runner)
    answers: dict[int, list[np.ndarray]] = {}

    def ask(i: int) -> None:
        answers[i] = batcher.submit(np.full((i + 1, 2, 3, 3), float(i), dtype=np.float32))

    threads = [threading.Thread(target=ask, args=(i,)) for i in range(4)]
    threads[0].start()
    assert runner.entered.wait(5.0)                 # the first request is in the network
    for t in threads[1:]:
        t.start()
    for _ in range(5000):                            # the others queue up meanwhile
        if len(batcher._pending) == 3:
            break
        threading.Event().wait(0.001)
    runner.release.set()
    for t in threads:
        t.join(5.0)
    batcher.close()
    assert runner.sizes == [1, 2 + 3 + 4]              # three requests, one forward pass
    for i in range(4):
        assert answers[i][0].tolist() == [18.0 * i] * (i + 1)


def test_batcher_keeps_board_shapes_apart():
    runner = _SlowSum()
    runner.release.set()
    batcher = Batcher(runner)
    small = batcher.submit(np.ones((2, 1, 3, 3), dtype=np.float32))
    large = batcher.submit(np.ones((1, 1, 5, 5), dtype=np.float32))
    batcher.close()
    assert small[0].tolist() == [9.0, 9.0] and large[0].tolist() == [25.0]


def test_remote_evaluator_answers_as_the_network_itself(tiny_net):
    from engine.nn.evaluator import NetworkEvaluator
    game = SPEC.make()
    states = [game.initial_state()]
    for move in (24, 17, 30, 10):
        states.append(states[-1].play(move))
    local = NetworkEvaluator(tiny_net, device="cpu", cache_size=0).evaluate(states)
    with InferenceServer(tiny_net, clients=1) as server:
        remote = RemoteEvaluator(server.address, expect_game="gomoku").evaluate(states)
    for a, b in zip(local, remote):
        np.testing.assert_allclose(a.priors, b.priors, atol=1e-5)
        assert abs(a.value - b.value) < 1e-5


def test_two_workers_share_one_inference_process(tiny_net):
    with InferenceServer(tiny_net, clients=2) as server, LocalPool(2) as pool:
        units = [SelfPlayUnit(SPEC, tiny_net, 2, CONFIG, seed, server=server.address) for seed in (1, 2)]
        played = list(pool.map(play_unit, units))
    for unit in played:
        assert len(unit.games) == 2 and unit.samples
        for sample in unit.samples:
            assert abs(float(sample.probs.sum()) - 1.0) < 1e-5


def test_a_server_for_another_game_is_refused(tmp_path):
    from engine.nn.checkpoint import create_random_checkpoint
    from engine.nn.spec import CheckpointError
    chess_net = tmp_path / "chess.pt"
    create_random_checkpoint(chess_net, "chess", "res1x8")
    with InferenceServer(chess_net) as server:
        with pytest.raises(CheckpointError, match="cannot play gomoku"):
            RemoteEvaluator(server.address, expect_game="gomoku")


def test_bf16_autocast_runner_stays_close_to_fp32(tiny_net):
    from engine.nn.checkpoint import load_checkpoint
    from engine.games.gomoku.codec import encode
    game = SPEC.make()
    planes = encode([game.initial_state().play(24).play(25)])
    model, _ = load_checkpoint(tiny_net)
    exact = AutocastRunner(model, "cpu", bf16=False).run(planes)
    rough = AutocastRunner(model, "cpu", bf16=True).run(planes)
    assert [a.shape for a in exact] == [b.shape for b in rough]
    for a, b in zip(exact, rough):
        assert np.abs(a - b).max() < 0.1 * max(1.0, float(np.abs(a).max()))


def test_scale_bench_runs_the_cuda_path_on_cpu(tiny_net):
    """The figures `engine bench --scale --device cuda` prints, measured here with bf16
    autocast on the CPU (no GPU on the test machines): every rate is there and positive."""
    from engine.bench_scale import run_scale_bench
    lines: list[str] = []
    result = run_scale_bench(tiny_net, SPEC, device="cpu", precision="bf16", batches=(4, 16), trees=3,
                             nodes=4, leaves=2, seconds=0.05, echo=lines.append)
    assert result.precision == "bf16" and set(result.evaluator) == {4, 16}
    assert min(result.evaluator.values()) > 0 and result.search_nodes_per_s > 0
    assert result.selfplay_positions_per_s > 0
    assert len(lines) == 5 and "AutocastRunner" in lines[0]


def test_bench_scale_needs_a_network():
    from click.testing import CliRunner
    from engine.cli import main
    result = CliRunner().invoke(main, ["bench", "--scale"])
    assert result.exit_code == 2 and "--weights" in result.output and "Traceback" not in result.output
