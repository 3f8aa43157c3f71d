"""The neural MCTS player through both protocol servers, as real processes, with small random nets.

Weights are created per session (res2x32, random): what is tested is the wiring (Player mcts +
WeightsFile through UCI, --player mcts --weights through Gomocup), not strength.
"""
from __future__ import annotations

import random

import chess
import chess.engine
import pytest

from conftest import console_script, engine_env
from protocols.gomocup_client import GomocupClient
from test_gomocup_engine import TOLERANCE_S, TURN_MS, play_game


@pytest.fixture(scope="module")
def nets(tmp_path_factory) -> dict[str, str]:
    from engine.nn.checkpoint import create_random_checkpoint
    from engine.nn.onnx_backend import export_sidecar
    folder = tmp_path_factory.mktemp("nets")
    paths = {}
    for game in ("chess", "gomoku"):
        path = folder / f"{game}.pt"
        create_random_checkpoint(path, game, "res2x32", seed=3)
        paths[game] = str(path)
    for path in paths.values():  # as shipped weights come: start-up loads ONNX, never exports
        export_sidecar(path)
    return paths


def test_uci_mcts_plays_a_full_game_at_a_tenth_of_a_second(nets):
    engine = chess.engine.SimpleEngine.popen_uci([console_script("plyzero-uci")], env=engine_env())
    try:
        engine.configure({"Player": "mcts", "WeightsFile": nets["chess"], "MinibatchSize": 8})
        assert "mcts" in engine.id["name"] or engine.options["Player"].default is not None
        board = chess.Board()
        rng = random.Random(5)
        searched = []
        while not board.is_game_over(claim_draw=True) and board.ply() < 60:
            if board.turn == chess.WHITE:
                result = engine.play(board, chess.engine.Limit(time=0.1), info=chess.engine.INFO_ALL)
                assert result.move in board.legal_moves, f"illegal {result.move} in {board.fen()}"
                searched.append(result.info.get("nodes", 0) > 0)
                board.push(result.move)
            else:
                board.push(rng.choice(list(board.legal_moves)))
        # Playouts really happen within 0.1 s (a move on a loaded machine may get none).
        assert sum(searched) >= 0.8 * len(searched)
    finally:
        engine.quit()


@pytest.mark.parametrize("size", [15, 20])
def test_gomocup_mcts_plays_full_games(nets, size):
    argv = [console_script("pbrain-plyzero"), "--player", "mcts", "--weights", nets["gomoku"]]
    with GomocupClient(argv, env=engine_env()) as client:
        assert "mcts" in client.about().get("name", "") + str(client.about())
        state, slowest = play_game(client, size, size, brain_first=(size == 15), board_first=(size == 20),
                                   seed=size, max_brain_moves=12)
        assert state.ply >= 12
        assert slowest < TURN_MS / 1000 + TOLERANCE_S
