"""Int8 exports: `engine quantize` writes one that evaluates like the float network, players
pick it up only while it belongs to their checkpoint, and `Precision` chooses."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from engine.games import get_game
from engine.nn.checkpoint import create_random_checkpoint
from engine.nn.evaluator import NetworkEvaluator
from engine.nn.onnx_backend import META_KEY, int8_sidecar_path
from engine.nn.quantize import quantize_sidecar
from engine.nn.spec import CheckpointError
from engine.players import PlayerOptions, make_searcher
from engine.players.build import network_evaluator
from engine.types import Limits
from conftest import random_states


@pytest.fixture(scope="module")
def gomoku_net(tmp_path_factory) -> Path:
    """A small random gomoku net with its int8 sidecar, calibrated on 9x9 and 11x11."""
    path = tmp_path_factory.mktemp("q") / "g.pt"
    create_random_checkpoint(path, "gomoku", "res2x32", seed=5)
    written = quantize_sidecar(path, boards=(9, 11), games=4, max_plies=30, seed=1)
    assert written == int8_sidecar_path(path) == path.with_name("g.int8.onnx")
    return path


def test_the_int8_export_records_its_checkpoint_and_how_it_was_calibrated(gomoku_net):
    import onnx
    proto = onnx.load(str(int8_sidecar_path(gomoku_net)))
    meta = json.loads(next(p.value for p in proto.metadata_props if p.key == META_KEY))
    import hashlib
    assert meta["checkpoint_sha256"] == hashlib.sha256(gomoku_net.read_bytes()).hexdigest()
    assert meta["precision"] == "int8" and meta["game"] == "gomoku"
    assert meta["calibration"]["boards"] == [f"gomoku {n}x{n} {rule}" for n in (9, 11)
                                             for rule in ("freestyle", "renju", "caro")]
    assert meta["calibration"]["positions"] > 4
    assert {node.op_type for node in proto.graph.node} >= {"QuantizeLinear", "DequantizeLinear"}


def test_auto_runs_the_int8_export_and_it_evaluates_like_the_float_network(gomoku_net):
    quantized = NetworkEvaluator(gomoku_net, device="cpu", cache_size=0)
    exact = NetworkEvaluator(gomoku_net, device="cpu", precision="fp32", cache_size=0)
    assert (quantized.precision, exact.precision) == ("int8", "fp32")
    states = random_states(get_game("gomoku", width=11), 40, seed=3)
    for mine, theirs in zip(quantized.evaluate(states), exact.evaluate(states)):
        assert abs(mine.value - theirs.value) < 0.1
        assert np.abs(mine.priors - theirs.priors).sum() < 0.2    # total variation x2
        assert mine.priors.sum() == pytest.approx(1.0)


def test_a_stale_int8_export_is_ignored_by_auto_and_refused_by_int8(gomoku_net, tmp_path):
    other = tmp_path / "g.pt"
    create_random_checkpoint(other, "gomoku", "res2x32", seed=6)
    shutil.copy(int8_sidecar_path(gomoku_net), int8_sidecar_path(other))   # another net's
    assert NetworkEvaluator(other, device="cpu").precision == "fp32"
    with pytest.raises(CheckpointError, match="no int8 export of this checkpoint.*engine quantize"):
        NetworkEvaluator(other, device="cpu", precision="int8")


def test_int8_needs_the_onnx_backend_and_a_known_precision(gomoku_net):
    with pytest.raises(ValueError, match="int8 runs on the CPU's onnx backend"):
        NetworkEvaluator(gomoku_net, device="cpu", backend="torch", precision="int8")
    with pytest.raises(ValueError, match="unknown precision 'int4'"):
        NetworkEvaluator(gomoku_net, device="cpu", precision="int4")


def test_the_player_option_chooses_the_precision(gomoku_net):
    game = get_game("gomoku", width=9)
    assert network_evaluator(game, str(gomoku_net), PlayerOptions()).precision == "int8"
    assert network_evaluator(game, str(gomoku_net), PlayerOptions(precision="fp32")).precision == "fp32"
    searcher = make_searcher(game, PlayerOptions(player="mcts", weights=str(gomoku_net), precision="int8"))
    result = searcher.search(game.initial_state(), Limits(nodes=50))
    assert result.best_move in game.initial_state().legal_moves()


def test_a_chess_network_quantizes_too(tmp_path):
    path = tmp_path / "c.pt"
    create_random_checkpoint(path, "chess", "res2x32", seed=2)
    quantize_sidecar(path, games=1, max_plies=20)
    quantized = NetworkEvaluator(path, device="cpu", cache_size=0)
    exact = NetworkEvaluator(path, device="cpu", precision="fp32", cache_size=0)
    assert quantized.precision == "int8"
    states = random_states(get_game("chess"), 10, seed=4)
    for mine, theirs in zip(quantized.evaluate(states), exact.evaluate(states)):
        assert abs(mine.value - theirs.value) < 0.1
        assert np.abs(mine.priors - theirs.priors).sum() < 0.2


def _engine(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", "from engine.cli import main; main()", *args],
                          capture_output=True, text=True, timeout=120)


def test_the_quantize_command_writes_the_sidecar_and_rejects_bad_input(tmp_path):
    path = tmp_path / "n.pt"
    create_random_checkpoint(path, "gomoku", "res2x32", seed=8)
    done = _engine("quantize", str(path), "--board", "9", "--games", "2")
    assert done.returncode == 0, done.stderr
    assert str(int8_sidecar_path(path)) in done.stdout and int8_sidecar_path(path).is_file()
    for args, message in [((str(tmp_path / "missing.pt"),), "no such"),
                          ((str(path), "--board", "nine"), "expected sizes like 15,20"),
                          ((str(path), "--board", "2"), "board size 2x2 outside"),
                          ((str(tmp_path / "junk.pt"),), "junk.pt")]:
        if args[0].endswith("junk.pt"):
            Path(args[0]).write_bytes(b"not a checkpoint")
        failed = _engine("quantize", *args)
        assert failed.returncode != 0
        assert message in failed.stderr and "Traceback" not in failed.stderr, failed.stderr


def test_a_uci_gui_sets_precision_and_a_missing_int8_export_falls_back(tmp_path):
    """Precision int8 on a network without an int8 export: the engine says why in one info
    string and keeps playing (alpha-beta), as for any unusable network; with the export it
    plays MCTS on it."""
    import chess
    import chess.engine

    from conftest import console_script, engine_env
    path = tmp_path / "c.pt"
    create_random_checkpoint(path, "chess", "res2x32", seed=3)

    def first_move() -> chess.engine.PlayResult:
        engine = chess.engine.SimpleEngine.popen_uci([console_script("plyzero-uci")], env=engine_env())
        try:
            assert engine.options["Precision"].var == ["auto", "fp32", "int8"]
            engine.configure({"Player": "mcts", "WeightsFile": str(path), "Precision": "int8"})
            return engine.play(chess.Board(), chess.engine.Limit(nodes=64), info=chess.engine.INFO_ALL)
        finally:
            engine.quit()

    fallback = first_move()
    assert fallback.move in chess.Board().legal_moves
    assert "hashfull" in fallback.info      # alpha-beta's report (MCTS sends none)
    quantize_sidecar(path, games=1, max_plies=10)
    played = first_move()
    assert played.move in chess.Board().legal_moves and "hashfull" not in played.info
    assert played.info.get("nodes", 0) >= 64
