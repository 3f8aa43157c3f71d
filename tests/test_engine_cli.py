"""`engine init-net`: a loadable random network, and a one-line error for a bad name."""
from __future__ import annotations

from click.testing import CliRunner

from engine.games import get_game
from engine.nn.evaluator import NetworkEvaluator
from engine.cli import main


def test_init_net_writes_a_checkpoint_and_onnx_sidecar_that_evaluate(tmp_path):
    path = tmp_path / "net.pt"
    result = CliRunner().invoke(main, ["init-net", str(path), "--game", "gomoku", "--net", "res1x16"])
    assert result.exit_code == 0, result.output
    assert path.is_file() and path.with_suffix(".onnx").is_file()
    state = get_game("gomoku", width=9).initial_state()
    for source in (path, path.with_suffix(".onnx")):
        evaluation = NetworkEvaluator(str(source), backend="auto").evaluate([state])[0]
        assert abs(sum(evaluation.priors) - 1.0) < 1e-5 and len(evaluation.priors) == 81


def test_init_net_rejects_a_bad_architecture_in_one_line(tmp_path):
    result = CliRunner().invoke(main, ["init-net", str(tmp_path / "x.pt"), "--game", "chess", "--net", "big"])
    assert result.exit_code == 1
    assert result.output.strip().count("\n") == 0 and "bad network name" in result.output
