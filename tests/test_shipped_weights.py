"""Every shipped network matches its model card, loads safely, and plays through its name."""
from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest

import weights
from engine.players import PlayerOptions, find_weights, make_searcher
from engine.games import get_game
from engine.nn.checkpoint import load_checkpoint
from engine.types import Limits

FOLDER = Path(weights.__file__).parent
CARD = (FOLDER / "README.md").read_text()
NETWORKS = sorted(FOLDER.glob("*.pt"))


def test_there_is_a_shipped_network_and_a_card_row_for_each():
    assert NETWORKS
    for path in NETWORKS:
        assert f"`{path.name}`" in CARD, f"{path.name} has no row in weights/README.md"


@pytest.mark.parametrize("path", NETWORKS, ids=lambda p: p.name)
def test_card_sha256_matches_the_file_and_the_checkpoint_loads(path: Path):
    row = next(line for line in CARD.splitlines() if line.startswith("|") and f"`{path.name}`" in line)
    card_sha = re.search(r"`([0-9a-f]{64})`", row)
    assert card_sha is not None and card_sha.group(1) == hashlib.sha256(path.read_bytes()).hexdigest()
    _, meta = load_checkpoint(path)
    assert meta["game"] in row and meta["net"] in row and str(meta["step"]) in row.replace(",", "")
    assert path.stat().st_size <= 20 * 2**20
    sidecar = path.with_suffix(".onnx")
    assert sidecar.is_file(), "ship the ONNX export so the CPU path needs no torch"


@pytest.mark.parametrize("path", NETWORKS, ids=lambda p: p.name)
def test_a_shipped_network_plays_by_its_name(path: Path):
    assert find_weights(path.stem) == str(path)
    _, meta = load_checkpoint(path)
    game = get_game("gomoku", width=11) if meta["game"] == "gomoku" else get_game("chess")
    searcher = make_searcher(game, PlayerOptions(player="mcts", weights=path.stem, nodes=64))
    result = searcher.search(game.initial_state(), Limits(nodes=64))
    assert result.best_move in game.initial_state().legal_moves()


def test_the_chess_net_reads_a_bare_fen_like_the_same_position_reached_by_moves():
    """A GUI that sets up a position by FEN (an EPD opening book, analysis) gives no history:
    the net must still see a normal position, not an empty previous-position plane."""
    from engine.players.build import network_evaluator
    game = get_game("chess")
    evaluator = network_evaluator(game, find_weights("chess"), PlayerOptions())
    played = game.state_from_fen("startpos", ["e2e4", "e7e5", "g1f3", "b8c6"])
    bare = game.state_from_fen(played.fen())
    by_moves, by_fen = evaluator.evaluate([played])[0], evaluator.evaluate([bare])[0]
    assert abs(by_moves.value - by_fen.value) < 0.3, (by_moves.value, by_fen.value)
    assert abs(by_fen.value) < 0.5      # an even opening position, not a lost one


def test_standard1_reads_standard_as_loop11_reads_freestyle():
    """Under standard the codec sets plane 5 (exactly five), which the freestyle networks never
    saw set: their weights there were untrained noise (-56 Elo at 0.2 s, issue27-network.md).
    standard1 (where the standard self-play round started) is loop11 with those weights zero,
    so it keeps loop11's freestyle play; standard players load their own default."""
    import torch
    from engine.games.gomoku import codec
    from engine.players.networks import resolve_network
    standard_net, _ = load_checkpoint(FOLDER / "gomoku-standard1-res6x32.pt")
    freestyle_net, _ = load_checkpoint(FOLDER / "gomoku-loop11-res6x32.pt")
    assert resolve_network("gomoku", None, "freestyle") == str(FOLDER / "gomoku-loop11-res6x32.pt")
    assert resolve_network("gomoku", None, "standard") != resolve_network("gomoku", None, "freestyle")
    states = {}
    for rule in ("standard", "freestyle"):
        state = get_game("gomoku", width=15, rule=rule).initial_state()
        for move in (112, 113, 97, 127, 98, 96):
            state = state.play(move)
        states[rule] = state
    standard_in = torch.from_numpy(codec.encode([states["standard"]]))
    freestyle_in = torch.from_numpy(codec.encode([states["freestyle"]]))
    assert standard_in[0, 5].sum() > 0 and freestyle_in[0, 5].sum() == 0
    with torch.no_grad():
        ours = [t.float() for t in standard_net.eval()(standard_in)]
        theirs = [t.float() for t in freestyle_net.eval()(freestyle_in)]
        unread = [t.float() for t in freestyle_net(standard_in)]
    for a, b in zip(ours, theirs):
        assert torch.allclose(a, b, atol=1e-5)
    assert not torch.allclose(unread[0], theirs[0], atol=1e-3)   # the plane did change loop11


@pytest.mark.parametrize("path", sorted(FOLDER.glob("*.int8.onnx")), ids=lambda p: p.name)
def test_a_shipped_int8_export_belongs_to_its_network_and_is_what_plays(path: Path):
    """A stale int8 export would be skipped in silence: the network would play at float speed."""
    from engine.nn.evaluator import NetworkEvaluator
    network = path.with_name(path.name.replace(".int8.onnx", ".pt"))
    assert network.is_file() and f"`{path.name}`" in CARD
    assert NetworkEvaluator(network, device="cpu").precision == "int8"
    assert path.stat().st_size <= 20 * 2**20


def test_the_defaults_are_index_entries_naming_shipped_files_not_copies():
    """weights/index.json names each game's default; no shipped file is a byte copy of another."""
    import json
    from engine.games.gomoku import RULES
    defaults = json.loads((FOLDER / "index.json").read_text())["defaults"]
    assert {"chess", "gomoku"} <= set(defaults) <= {"chess", "gomoku"} | {f"gomoku-{rule}" for rule in RULES}
    for name, entry in defaults.items():
        path = FOLDER / entry["file"]
        assert path in NETWORKS and hashlib.sha256(path.read_bytes()).hexdigest() == entry["sha256"]
        assert find_weights(name) == str(path)
    digests = [hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(FOLDER.iterdir()) if p.is_file()]
    assert len(digests) == len(set(digests))


def test_a_rule_with_its_own_default_gets_it_and_the_other_rules_the_game_s(tmp_path, monkeypatch):
    from engine.games import get_game
    from engine.players import networks
    from engine.players.build import resolve_player
    entries = {}
    for name, content in (("gomoku", b"game default"), ("gomoku-caro", b"caro default")):
        (tmp_path / f"{name}-net.pt").write_bytes(content)
        entries[name] = {"file": f"{name}-net.pt", "sha256": hashlib.sha256(content).hexdigest()}
    (tmp_path / "index.json").write_text(json.dumps({"defaults": entries}))
    monkeypatch.setattr(networks, "_shipped", lambda name: tmp_path / name if (tmp_path / name).is_file() else None)
    assert networks.resolve_network("gomoku", None, "caro") == str(tmp_path / "gomoku-caro-net.pt")
    assert networks.resolve_network("gomoku", None, "renju") == str(tmp_path / "gomoku-net.pt")
    assert networks.resolve_network("gomoku", None) == str(tmp_path / "gomoku-net.pt")
    assert networks.resolve_network("gomoku", str(tmp_path / "gomoku-net.pt"), "caro") == str(tmp_path / "gomoku-net.pt")
    caro = resolve_player(get_game("gomoku", width=15, rule="caro"), PlayerOptions(player="auto"))
    assert caro.player == "mcts" and caro.weights == str(tmp_path / "gomoku-caro-net.pt")


def test_a_default_whose_file_changed_is_refused_in_one_line(tmp_path, monkeypatch):
    from engine.players import networks
    fake = tmp_path / "gomoku-x.pt"
    fake.write_bytes(b"not the recorded bytes")
    (tmp_path / "index.json").write_text('{"defaults": {"gomoku": {"file": "gomoku-x.pt", "sha256": "' + "0" * 64 + '"}}}')
    monkeypatch.setattr(networks, "_shipped", lambda name: tmp_path / name if (tmp_path / name).is_file() else None)
    with pytest.raises(networks.WeightsIndexError, match="gomoku-x.pt has sha256"):
        networks.shipped_weights("gomoku")


def test_the_default_gomocup_brain_plays_mcts_with_the_shipped_gomoku_network():
    """`pbrain-plyzero` with no options: Player auto finds the `gomoku` default and runs its int8 export."""
    from engine.nn.evaluator import NetworkEvaluator
    from engine.players.build import resolve_player
    from protocols.gomocup_client import GomocupClient, parse_move
    from conftest import console_script, engine_env

    shipped = FOLDER / json.loads((FOLDER / "index.json").read_text())["defaults"]["gomoku"]["file"]
    options = resolve_player(get_game("gomoku", width=15), PlayerOptions(player="auto"))
    assert (options.player, Path(str(options.weights)).resolve()) == ("mcts", shipped.resolve())
    assert NetworkEvaluator(shipped, device="cpu").precision == "int8"
    with GomocupClient([console_script("pbrain-plyzero")], env=engine_env()) as client:
        assert client.about().get("player") == "mcts"
        client.start(15, 15)
        client.info("timeout_turn", 500)
        client.info("timeout_match", 0)
        client.send("BEGIN")
        x, y = parse_move(client.read_answer(10.0))
        assert 0 <= x < 15 and 0 <= y < 15


def test_the_default_uci_engine_plays_mcts_with_the_shipped_chess_network():
    """`plyzero-uci` with no options: Player auto finds the `chess` default and runs its int8 export."""
    import chess
    import chess.engine
    from engine.nn.evaluator import NetworkEvaluator
    from engine.players.build import resolve_player
    from conftest import console_script, engine_env

    shipped = FOLDER / "chess-dagger6-res6x64.pt"
    options = resolve_player(get_game("chess"), PlayerOptions(player="auto"))
    assert (options.player, Path(str(options.weights)).resolve()) == ("mcts", shipped.resolve())
    assert NetworkEvaluator(shipped, device="cpu").precision == "int8"
    engine = chess.engine.SimpleEngine.popen_uci([console_script("plyzero-uci")], env=engine_env())
    try:
        from engine.games.chess import native_search
        switch = ("alphabeta, mcts under a node limit" if native_search.kernel is not None
                  else "alphabeta under a short clock, mcts otherwise")
        assert f"(auto: {switch})" in engine.id["name"]
        board = chess.Board()
        result = engine.play(board, chess.engine.Limit(time=0.5))
        assert result.move in board.legal_moves
        if native_search.kernel is not None:
            # `go depth 9` is alpha-beta's: it ends after depth 9 (MCTS: 800 playouts, about depth 5)
            engine.configure({"UCI_ShowWDL": True})
            info = engine.analyse(board, chess.engine.Limit(depth=9))
            assert info["depth"] == 9 and info["pv"][0] in board.legal_moves
            # alpha-beta's win/draw/loss (engine/games/chess/wdl.py): level at the start,
            # nearly won a queen up (white's queen on d1, black's gone)
            wdl = info["wdl"].relative
            assert wdl.total() == 1000 and abs(wdl.wins - wdl.losses) < 150
            up = chess.Board("rnb1kbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 3")
            wdl = engine.analyse(up, chess.engine.Limit(depth=6))["wdl"].relative
            assert wdl.total() == 1000 and wdl.wins > 900 and wdl.losses < 10
    finally:
        engine.quit()
