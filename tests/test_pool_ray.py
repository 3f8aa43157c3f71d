"""The same units on a local Ray instance (2 CPUs): self-play, an arena, one loop iteration."""
from __future__ import annotations

import pytest

pytest.importorskip("ray", reason="Ray is an optional extra: pip install 'plyzero[ray]'")

from arena.config import EngineSpec  # noqa: E402
from arena.clock import MoveLimits  # noqa: E402
from arena.gate import ArenaArbiter, play_chunk  # noqa: E402
from engine.games.gomoku.openings import generate_opening as generate_gomoku_opening  # noqa: E402
from arena.records import GameJob  # noqa: E402
from engine.train.loop import SelfPlayUnit, play_unit, run_loop  # noqa: E402
from engine.train.pool import LocalPool, RayPool  # noqa: E402
from engine.train.samples import GameSpec  # noqa: E402
from engine.train.selfplay import SelfPlayConfig  # noqa: E402
from tests.test_loop import tiny_config  # noqa: E402


@pytest.fixture(scope="module")
def ray_pool():
    pool = RayPool("local", num_cpus=2)
    yield pool
    pool.close()


@pytest.fixture(scope="module")
def tiny_net(tmp_path_factory):
    from engine.nn.checkpoint import create_random_checkpoint
    path = tmp_path_factory.mktemp("ray") / "tiny.pt"
    create_random_checkpoint(path, "gomoku", "res1x8", seed=4)
    return str(path)


def test_ray_self_play_gives_the_samples_of_a_local_run(ray_pool, tiny_net):
    config = SelfPlayConfig(playouts=6, leaves_per_batch=2, temperature_plies=4, max_plies=12)
    units = [SelfPlayUnit(GameSpec("gomoku", 7, 7), tiny_net, 2, config, seed) for seed in (21, 22)]
    assert ray_pool.kind == "ray" and ray_pool.workers == 2
    on_ray = list(ray_pool.map(play_unit, units))
    local = list(LocalPool(1).map(play_unit, units))
    for a, b in zip(on_ray, local):
        assert len(a.samples) == len(b.samples) > 0
        assert all((x.planes == y.planes).all() and (x.probs == y.probs).all() for x, y in zip(a.samples, b.samples))


def test_a_tiny_arena_on_ray(ray_pool):
    a, b = EngineSpec(name="random", player="random"), EngineSpec(name="ab", player="alphabeta", depth=1)
    jobs = [GameJob(key=f"ray:{i}", seq=i, pair=0, game="gomoku", board=7, rule="freestyle",
                    first=(a, b)[i], second=(b, a)[i], opening=generate_gomoku_opening(1, 0, 2),
                    limits=MoveLimits(depth=1, timeout=60.0)) for i in range(2)]
    chunks = list(ray_pool.map(play_chunk, [tuple(jobs[:1]), tuple(jobs[1:])]))
    records = [r for chunk in chunks for r in chunk]
    assert [r.key for r in records] == ["ray:0", "ray:1"]
    assert all(r.forfeit is None and r.score in (0.0, 0.5, 1.0) for r in records)
    assert sum(r.score if r.first == "ab" else 1 - r.score for r in records) >= 1.5  # depth 1 beats random


def test_one_loop_iteration_on_ray_with_an_inference_actor(ray_pool, tmp_path):
    config = tiny_config(inference=True, gate_games=2, alphabeta_games=0)
    lines: list[str] = []
    state = run_loop(tmp_path, config, ArenaArbiter(tmp_path, echo=lines.append), ray_pool, echo=lines.append)
    assert state.generation == 2 and len(state.history) == 1
    entry = state.history[0]
    assert entry["wins"] + entry["losses"] + entry["draws"] == 2
    assert (tmp_path / "arena.sqlite").is_file()
    assert any(line.startswith("ratings after generation 1") for line in lines)
