"""Line planes (engine/games/gomoku/lines.py): what they count, the same numbers from the C
core, numpy and the torch network, and a network that reads them: it starts as the one it
grew from, exports, quantizes and trains."""
from __future__ import annotations

import random

import numpy as np
import pytest
import torch

from engine.games import get_game
from engine.games.gomoku import codec
from engine.games.gomoku.lines import line_planes, line_planes_numpy
from engine.nn.checkpoint import load_checkpoint, save_checkpoint
from engine.nn.model import LineFeatures, build_model, with_line_features
from engine.nn.spec import CheckpointError, parse_net


def _state(size: int, moves: list[tuple[int, int]]):
    state = get_game("gomoku", width=size, height=size).initial_state()
    for y, x in moves:
        state = state.play(y * size + x)
    return state


def _random_states(size: int, count: int, seed: int) -> list:
    rng, states = random.Random(seed), []
    state = get_game("gomoku", width=size, height=size).initial_state()
    while len(states) < count:
        if state.outcome() is not None or len(states) % 25 == 24:
            state = get_game("gomoku", width=size, height=size).initial_state()
        state = state.play(rng.choice(list(state.legal_moves())))
        states.append(state)
    return states


def test_an_open_four_and_a_blocked_line_count_as_the_docstring_says():
    # black has four in a row on row 4, columns 2-5, and white (to move) a stone at (4, 7),
    # which closes every line of five through it.
    state = _state(9, [(4, 2), (0, 0), (4, 3), (8, 8), (4, 4), (4, 7), (4, 5)])
    assert state.to_play == 1                                   # white to move: black is the opponent
    planes = line_planes(codec.encode([state]))[0] * 4          # counts
    four_black, three_black, two_white = planes[5], planes[3], planes[0]
    # open lines of five with four black stones: columns 1-5 and 2-6 on row 4 (2-6 holds no
    # white stone; 3-7 does); so cell (4, 1) is on one, (4, 2)..(4, 5) on two, (4, 6) on one
    assert four_black[4].tolist() == [0, 1, 2, 2, 2, 2, 1, 0, 0]
    assert four_black.sum() == 10                               # nothing on any other row
    assert three_black[4, 0] == 1 and three_black[4, 7] == 0    # columns 0-4: three; 7 is white's
    assert two_white.sum() == 0                                 # white's stones stand alone
    assert planes[:, 0:3, :].sum() == 0 and planes[:, 6:, :].sum() == 0


def test_the_c_core_numpy_and_the_torch_network_compute_the_same_planes():
    features = LineFeatures()
    for size in (7, 15, 20):
        planes = codec.encode(_random_states(size, 40, size))
        expected = features(torch.from_numpy(planes)).numpy()
        assert expected.sum() > 0
        assert np.array_equal(line_planes(planes), expected)
        assert np.array_equal(line_planes_numpy(planes), expected)
    # a padded batch of two sizes: the padding is off the board, for lines as for stones
    small, large = _state(9, [(4, 4), (4, 5), (3, 4)]), _state(13, [(6, 6), (6, 7), (5, 6), (2, 2)])
    padded = codec.encode([small, large])
    alone = line_planes(codec.encode([small]))
    assert np.array_equal(line_planes(padded)[0, :, :9, :9], alone[0])
    assert np.array_equal(features(torch.from_numpy(padded)).numpy(), line_planes(padded))


def test_a_network_grown_to_read_line_planes_computes_what_it_did_and_learns_them(tmp_path):
    torch.manual_seed(4)
    old = build_model("res2x16", "gomoku")
    for parameter in old.parameters():                          # trained-looking, not the defaults
        parameter.data.add_(0.1 * torch.randn_like(parameter))
    grown = with_line_features(old)
    assert grown.config.name == "res2x16-lines" and grown.config.line_features
    planes = torch.from_numpy(codec.encode(_random_states(11, 12, 1)))
    with torch.inference_mode():
        for a, b in zip(old(planes), grown(planes)):
            assert torch.allclose(a, b, atol=1e-6)
    grown.train()
    sum(out.float().square().sum() for out in grown(planes)).backward()
    stem = grown.trunk.stem[0].weight
    assert stem.shape[1] == codec.PLANES + 6 and stem.grad[:, codec.PLANES:].abs().sum() > 0
    assert not any("lines" in name for name in grown.state_dict())   # fixed: nothing saved
    save_checkpoint(tmp_path / "lines.pt", grown.eval())
    loaded, meta = load_checkpoint(tmp_path / "lines.pt", "gomoku")
    assert meta["net"] == "res2x16-lines" and loaded.config.line_features


def test_line_planes_are_gomoku_only():
    assert parse_net("res6x32-lines", "gomoku").line_features
    assert not parse_net("res6x32", "gomoku").line_features
    with pytest.raises(CheckpointError, match="no line planes"):
        parse_net("res6x32-lines", "chess")


def test_the_onnx_export_and_its_int8_sidecar_read_the_line_planes_the_runner_appends(tmp_path):
    """The export takes the line planes as input (computed outside the graph); the evaluator's
    ONNX runner appends them, so fp32 and int8 agree with torch."""
    from engine.nn.evaluator import NetworkEvaluator
    from engine.nn.quantize import quantize_sidecar
    torch.manual_seed(6)
    net = with_line_features(build_model("res2x16", "gomoku"))
    with torch.no_grad():                                       # make the network lean on the lines
        net.trunk.stem[0].weight[:, codec.PLANES:] = torch.randn_like(net.trunk.stem[0].weight[:, codec.PLANES:])
    save_checkpoint(tmp_path / "lines.pt", net)
    quantize_sidecar(tmp_path / "lines.pt", boards=(9,), rules=("freestyle",), games=2, max_plies=30)
    states = _random_states(9, 10, 3)
    reference = NetworkEvaluator(tmp_path / "lines.pt", backend="torch").evaluate(states)
    for precision, tolerance in (("fp32", 1e-4), ("int8", 0.15)):
        evaluator = NetworkEvaluator(tmp_path / "lines.pt", backend="onnx", precision=precision, cache_dir=tmp_path)
        for a, b in zip(reference, evaluator.evaluate(states)):
            assert np.abs(a.priors - b.priors).max() < tolerance and abs(a.value - b.value) < tolerance
