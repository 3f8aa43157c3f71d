"""Networks and checkpoints: shapes, masking, save/load round trips, every kind of bad file."""
from __future__ import annotations

import zipfile
from pathlib import Path

import numpy as np
import pytest
import torch

from engine.games import get_game
from engine.games.chess import codec as codec_chess
from engine.games.gomoku import codec as codec_gomoku
from engine.nn.checkpoint import (create_random_checkpoint, load_checkpoint, read_meta,
                                  save_checkpoint, tensor_sha256)
from engine.nn.model import build_model, unpadded
from engine.nn.spec import CheckpointError, parse_net


def test_net_names_parse_and_bad_names_are_refused():
    config = parse_net("res6x64", "gomoku")
    assert (config.blocks, config.channels, config.name) == (6, 64, "res6x64")
    assert parse_net("RES10x128", "chess").in_planes == codec_chess.PLANES
    for bad in ("res6", "resnet", "res0x64", "res6x4", "res6x64x2"):
        with pytest.raises(CheckpointError):
            parse_net(bad, "chess")
    with pytest.raises(CheckpointError):
        parse_net("res2x32", "go")


def test_chess_net_shapes():
    model = build_model("res2x32", "chess")
    states = [get_game("chess").initial_state()] * 3
    with torch.inference_mode():
        from_logits, to_logits, wdl = model(torch.from_numpy(codec_chess.encode(states)))
    assert from_logits.shape == (3, 64) and to_logits.shape == (3, 64, 73) and wdl.shape == (3, 3)


def test_gomoku_net_computes_the_same_board_alone_and_padded():
    """The on-board mask keeps padding at zero, so a board inside a bigger grid is unchanged."""
    torch.manual_seed(0)
    model = build_model("res2x32", "gomoku")
    game = get_game("gomoku", width=9, height=7)
    state = game.state_from_moves([30, 31, 22])
    with torch.inference_mode():
        alone = model(torch.from_numpy(codec_gomoku.encode([state])))
        padded = model(torch.from_numpy(codec_gomoku.encode([state], shape=(13, 16))))
    assert padded[0].shape == (1, 13, 16)
    torch.testing.assert_close(padded[0][:, :7, :9], alone[0], rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(padded[1], alone[1], rtol=1e-5, atol=1e-5)
    assert padded[0][:, 7:].abs().max() == 0 and padded[0][:, :, 9:].abs().max() == 0


@pytest.mark.parametrize("rule", ["standard", "renju", "caro"])
def test_a_fresh_network_reads_every_rule_as_freestyle_until_trained_on_it(rule):
    """The rule planes start at weight 0: a network trained only on freestyle must not
    carry a random, never-trained bias into the rules it has not seen.  The weight still
    learns from the first batch that sets the plane."""
    torch.manual_seed(5)
    model = build_model("res2x32", "gomoku")
    moves = [112, 113, 97, 128, 98]
    freestyle = get_game("gomoku", width=15, height=15).state_from_moves(moves)
    other = get_game("gomoku", width=15, height=15, rule=rule).state_from_moves(moves)
    planes = torch.from_numpy(codec_gomoku.encode([freestyle, other]))
    assert (planes[0] != planes[1]).any()                   # the rule planes differ ...
    with torch.inference_mode():
        policy, wdl = model(planes)
    torch.testing.assert_close(policy[0], policy[1])        # ... and read as nothing yet
    torch.testing.assert_close(wdl[0], wdl[1])
    model.train()
    policy, wdl = model(planes[1:])
    (policy.square().mean() + wdl.square().mean()).backward()
    stem = model.trunk.stem[0].weight
    assert stem.grad[:, list(codec_gomoku.GomokuCodec.rule_planes)].abs().sum() > 0


def test_the_exported_graph_leaves_out_the_mask_and_computes_the_same_on_full_boards():
    """The ONNX exports are for unpadded batches (the evaluator sends one board size at a
    time): the mask multiplications, a sixth of an int8 evaluation, are not in the graph."""
    import onnx

    from engine.nn.onnx_backend import export_onnx_bytes
    torch.manual_seed(0)
    model = build_model("res2x32", "gomoku")
    game = get_game("gomoku", width=9, height=7)
    planes = torch.from_numpy(codec_gomoku.encode([game.state_from_moves([30, 31, 22]),
                                                    game.state_from_moves([4, 40])]))
    with torch.inference_mode():
        masked, fast = model(planes), unpadded(model)(planes)
    for a, b in zip(masked, fast):
        torch.testing.assert_close(a, b, rtol=1e-6, atol=1e-6)
    ops = [node.op_type for node in onnx.load_from_string(
        export_onnx_bytes(model, {"game": "gomoku"}, "0" * 64)).graph.node]
    assert ops.count("Conv") == 2 * 2 + 1 + 3 and ops.count("Mul") <= 1  # the value head's board-size term


@pytest.mark.parametrize("game_name", ["chess", "gomoku"])
def test_save_then_load_gives_identical_outputs(tmp_path, game_name):
    path = tmp_path / "net.pt"
    meta = create_random_checkpoint(path, game_name, "res2x32", seed=4)
    assert meta["format"] == "plyzero" and meta["game"] == game_name and meta["net"] == "res2x32"
    model, loaded = load_checkpoint(path, expect_game=game_name)
    assert loaded["sha256"] == meta["sha256"] and loaded["step"] == 0 and loaded["created"]
    again = tmp_path / "again.pt"
    save_checkpoint(again, model, {"step": 12, "notes": "copy"})
    copy, copy_meta = load_checkpoint(again)
    assert (copy_meta["step"], copy_meta["notes"]) == (12, "copy")
    game = get_game(game_name) if game_name == "chess" else get_game("gomoku", width=11)
    planes = (codec_chess if game_name == "chess" else codec_gomoku).encode(
        [game.initial_state(), game.initial_state().play(game.initial_state().legal_moves()[3])])
    with torch.inference_mode():
        for a, b in zip(model(torch.from_numpy(planes)), copy(torch.from_numpy(planes))):
            assert torch.equal(a, b)


def test_random_checkpoints_are_seeded_and_leave_the_global_rng_alone(tmp_path):
    torch.manual_seed(123)
    expected = torch.rand(1)
    torch.manual_seed(123)
    a = create_random_checkpoint(tmp_path / "a.pt", "gomoku", "res2x32", seed=9)
    assert torch.equal(torch.rand(1), expected)
    b = create_random_checkpoint(tmp_path / "b.pt", "gomoku", "res2x32", seed=9)
    c = create_random_checkpoint(tmp_path / "c.pt", "gomoku", "res2x32", seed=10)
    assert a["sha256"] == b["sha256"] != c["sha256"]


def test_res6x64_checkpoints_stay_small(tmp_path):
    for game_name in ("chess", "gomoku"):
        path = tmp_path / f"{game_name}.pt"
        create_random_checkpoint(path, game_name, "res6x64")
        assert 1_000_000 < path.stat().st_size < 5_000_000


def one_line_error(path: Path, **kwargs) -> str:
    with pytest.raises(CheckpointError) as caught:
        load_checkpoint(path, **kwargs)
    message = str(caught.value)
    assert "\n" not in message and len(message) < 300
    return message


@pytest.fixture()
def checkpoint(tmp_path) -> Path:
    path = tmp_path / "net.pt"
    create_random_checkpoint(path, "chess", "res2x32", seed=1)
    return path


def test_missing_file(tmp_path):
    assert "no such" in one_line_error(tmp_path / "absent.pt")


def test_truncated_file(checkpoint):
    data = checkpoint.read_bytes()
    checkpoint.write_bytes(data[: len(data) // 2])
    one_line_error(checkpoint)


def test_corrupt_bytes(checkpoint):
    data = bytearray(checkpoint.read_bytes())
    for i in range(200, len(data), 997):
        data[i] ^= 0xFF
    checkpoint.write_bytes(bytes(data))
    one_line_error(checkpoint)


def test_not_a_checkpoint_at_all(tmp_path):
    junk = tmp_path / "junk.pt"
    junk.write_text("hello, I am not a network\n")
    one_line_error(junk)
    other = tmp_path / "other.pt"
    torch.save({"weights": torch.zeros(3)}, other)
    assert "not a PlyZero" in one_line_error(other)


def test_wrong_game(checkpoint):
    assert "cannot play gomoku" in one_line_error(checkpoint, expect_game="gomoku")
    with pytest.raises(CheckpointError):
        read_meta(checkpoint, expect_game="gomoku")
    assert read_meta(checkpoint, expect_game="chess")["game"] == "chess"


def test_wrong_codec_version(checkpoint):
    payload = torch.load(checkpoint, weights_only=True)
    payload["codec_version"] = 999
    torch.save(payload, checkpoint)
    assert "codec version" in one_line_error(checkpoint)


def test_tampered_tensor_fails_the_sha256(checkpoint):
    payload = torch.load(checkpoint, weights_only=True)
    name = next(k for k, v in payload["state_dict"].items() if v.is_floating_point())
    payload["state_dict"][name] = payload["state_dict"][name].clone()
    payload["state_dict"][name].view(-1)[0] += 1e-3
    torch.save(payload, checkpoint)
    assert "sha256" in one_line_error(checkpoint)


def test_weights_that_do_not_fit_the_config(checkpoint):
    payload = torch.load(checkpoint, weights_only=True)
    payload["config"]["channels"] = 48
    torch.save(payload, checkpoint)
    one_line_error(checkpoint)


class Exploit:
    """Unpickling this with a full pickle runs exec(); weights_only loading must refuse it."""

    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return (exec, (f"open({str(self.marker)!r}, 'w').close()",))


def test_malicious_pickle_is_refused_without_running(tmp_path):
    marker = tmp_path / "pwned"
    evil = tmp_path / "evil.pt"
    torch.save({"format": "plyzero", "state_dict": {}, "payload": Exploit(marker)}, evil)
    assert zipfile.is_zipfile(evil)
    assert "unsafe" in one_line_error(evil)
    assert not marker.exists()


def test_tensor_sha256_sees_names_shapes_and_values():
    a = {"w": torch.zeros(2, 3)}
    assert tensor_sha256(a) == tensor_sha256({"w": torch.zeros(2, 3)})
    assert tensor_sha256(a) != tensor_sha256({"v": torch.zeros(2, 3)})
    assert tensor_sha256(a) != tensor_sha256({"w": torch.zeros(3, 2)})
    assert tensor_sha256(a) != tensor_sha256({"w": torch.tensor(np.eye(2, 3), dtype=torch.float32)})


def _renju_states():
    game = get_game("gomoku", width=15, height=15, rule="renju")
    moves = [(5, 7), (0, 0), (6, 7), (0, 14), (7, 5), (14, 0), (7, 6), (14, 14), (12, 12)]
    cells = [game.index(x, y) for x, y in moves]
    return [game.state_from_moves(cells[:n]) for n in (1, 4, 8, 9)]


def test_a_version_one_network_still_plays_and_widens_to_the_same_numbers(tmp_path):
    """Networks from before the rule planes (6 input planes, codec version 1) load, read the
    first 6 planes, and fine-tune from a widened copy that computes exactly what they did."""
    from dataclasses import replace

    from engine.nn.evaluator import NetworkEvaluator
    from engine.nn.model import widen_input
    torch.manual_seed(3)
    old = build_model(replace(parse_net("res2x32", "gomoku"), in_planes=6))
    meta = save_checkpoint(tmp_path / "v1.pt", old)
    assert meta["codec_version"] == 1
    loaded, _ = load_checkpoint(tmp_path / "v1.pt", "gomoku")
    states = _renju_states()
    planes = torch.from_numpy(codec_gomoku.encode(states))
    assert planes.shape[1] == 9 and planes[:, 8].sum() > 0          # fouls are on the new plane
    wide = widen_input(loaded, codec_gomoku.PLANES)
    assert wide.config.in_planes == 9
    with torch.inference_mode():
        old_policy, old_wdl = loaded(planes[:, :6])
        new_policy, new_wdl = wide(planes)
    assert torch.allclose(old_policy, new_policy, atol=1e-5) and torch.allclose(old_wdl, new_wdl, atol=1e-5)
    assert save_checkpoint(tmp_path / "v2.pt", wide)["codec_version"] == codec_gomoku.CODEC_VERSION
    for backend in ("torch", "onnx"):
        before = NetworkEvaluator(tmp_path / "v1.pt", backend=backend, cache_dir=tmp_path).evaluate(states)
        after = NetworkEvaluator(tmp_path / "v2.pt", backend=backend, cache_dir=tmp_path).evaluate(states)
        for a, b in zip(before, after):
            assert np.allclose(a.priors, b.priors, atol=1e-4) and abs(a.value - b.value) < 1e-4
    with pytest.raises(ValueError):
        widen_input(wide, 6)


def test_a_network_claiming_an_unknown_codec_version_is_refused(tmp_path):
    create_random_checkpoint(tmp_path / "net.pt", "gomoku")
    payload = torch.load(tmp_path / "net.pt", weights_only=True)
    payload["codec_version"] = 7
    torch.save(payload, tmp_path / "bad.pt")
    with pytest.raises(CheckpointError, match="codec version 7"):
        load_checkpoint(tmp_path / "bad.pt")


def _chess_states():
    game = get_game("chess")
    state = game.initial_state()
    states = [state]
    for move in state.legal_moves()[:2]:
        states.append(state.play(move))
    return states


def test_a_deepened_network_computes_what_the_shallower_one_did_and_still_trains(tmp_path):
    """deepen (net2net): added blocks start as the identity, in eval and in train mode, for
    gomoku and chess; the copy can learn (the added blocks get gradients); never shallower."""
    from engine.nn.model import deepen
    torch.manual_seed(5)
    for game, planes in (("gomoku", torch.from_numpy(codec_gomoku.encode(_renju_states()))),
                         ("chess", torch.from_numpy(codec_chess.encode(_chess_states())))):
        shallow = build_model("res2x16", game)
        for parameter in shallow.parameters():             # trained-looking norms, not the defaults
            parameter.data.add_(0.1 * torch.randn_like(parameter))
        deep = deepen(shallow, 5)
        assert deep.config.blocks == 5 and len(deep.trunk.blocks) == 5
        with torch.inference_mode():
            for a, b in zip(shallow(planes), deep(planes)):
                assert torch.allclose(a, b, atol=1e-5)
        deep.train()
        sum(out.float().square().sum() for out in deep(planes)).backward()
        assert deep.trunk.blocks[4].b[1].weight.grad.abs().sum() > 0
        with pytest.raises(ValueError):
            deepen(deep, 4)
