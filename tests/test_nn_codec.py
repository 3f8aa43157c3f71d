"""Codecs: every legal move has its own policy index, factored priors sum to 1, frames mirror."""
from __future__ import annotations

from pathlib import Path

import chess
import numpy as np
import pytest

from engine.games import get_game
from engine.games.chess import ChessState
from engine.games.chess import codec as codec_chess
from engine.games.gomoku import codec as codec_gomoku
from conftest import random_states

EPD = Path(__file__).parent / "data" / "codec_positions.epd"


def epd_states() -> list[tuple[str, ChessState]]:
    out = []
    for line in EPD.read_text().splitlines():
        if line.strip():
            board, ops = chess.Board.from_epd(line)
            out.append((ops["id"], ChessState(board)))
    return out


POSITIONS = epd_states()
IDS = [name for name, _ in POSITIONS]


def random_logits(seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.normal(size=64).astype(np.float32), rng.normal(size=(64, 73)).astype(np.float32)


def test_epd_suite_covers_the_tricky_moves():
    moves = [(s.board, m) for _, s in POSITIONS for m in s.legal_moves()]
    assert any(b.is_kingside_castling(m) and b.turn for b, m in moves)
    assert any(b.is_queenside_castling(m) and not b.turn for b, m in moves)
    assert any(b.is_en_passant(m) and b.turn for b, m in moves)
    assert any(b.is_en_passant(m) and not b.turn for b, m in moves)
    for piece in (chess.KNIGHT, chess.BISHOP, chess.ROOK, chess.QUEEN):
        for turn in (chess.WHITE, chess.BLACK):
            assert any(m.promotion == piece and b.turn == turn for b, m in moves)
    assert any(s.board.is_check() and s.to_play == 0 for _, s in POSITIONS)
    assert any(s.board.is_check() and s.to_play == 1 for _, s in POSITIONS)


@pytest.mark.parametrize("state", [s for _, s in POSITIONS], ids=IDS)
def test_every_legal_move_has_a_unique_index_and_maps_back(state):
    index = codec_chess.legal_index(state)
    moves = list(state.legal_moves())
    assert len(set(index.tolist())) == len(moves)
    assert index.min() >= 0 and index.max() < codec_chess.POLICY_SIZE
    for move, idx in zip(moves, index):
        assert codec_chess.move_index(state, move) == idx
        assert codec_chess.index_to_move(state, int(idx)) == move


def test_under_promotion_slots_are_their_own_and_queen_uses_the_square():
    state = ChessState(chess.Board("n1n5/PPPk4/8/8/8/8/4Kppp/5N1N w - - 0 1"))
    by_move = {m.uci(): codec_chess.move_index(state, m) for m in state.legal_moves()}
    src, slot = divmod(by_move["b7b8q"], 73)
    assert (src, slot) == (chess.B7, chess.B8)
    assert divmod(by_move["b7a8n"], 73) == (chess.B7, 64 + 0 * 3 + 0)   # left capture, knight
    assert divmod(by_move["b7b8b"], 73) == (chess.B7, 64 + 1 * 3 + 1)   # straight, bishop
    assert divmod(by_move["b7c8r"], 73) == (chess.B7, 64 + 2 * 3 + 2)   # right capture, rook


def test_black_moves_are_indexed_in_the_mirrored_frame():
    black = ChessState(chess.Board("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"))
    # e7e5 for Black is e2e4 in the side-to-move frame.
    assert codec_chess.move_index(black, chess.Move.from_uci("e7e5")) == chess.E2 * 73 + chess.E4


@pytest.mark.parametrize("state", [s for _, s in POSITIONS], ids=IDS)
def test_factored_priors_are_a_distribution_over_exactly_the_legal_moves(state):
    from_logits, to_logits = random_logits(len(state.legal_moves()))
    priors = codec_chess.priors_from_logits(state, from_logits, to_logits)
    assert priors.shape == (len(state.legal_moves()),)
    assert np.all(priors > 0)
    assert priors.sum() == pytest.approx(1.0, abs=1e-9)


def test_batched_priors_equal_state_by_state_priors():
    states = [s for _, s in POSITIONS]
    states.insert(3, get_game("chess").state_from_fen("startpos", ["f2f3", "e7e5", "g2g4", "d8h4"]))
    rng = np.random.default_rng(2)
    from_logits = rng.normal(size=(len(states), 64)).astype(np.float32) * 3
    to_logits = rng.normal(size=(len(states), 64, 73)).astype(np.float32) * 3
    batched = codec_chess.priors_batch(states, (from_logits, to_logits))
    assert len(batched[3]) == 0                     # checkmate: no legal moves, no priors
    for i, state in enumerate(states):
        single = codec_chess.priors_from_logits(state, from_logits[i], to_logits[i])
        np.testing.assert_allclose(batched[i], single, rtol=1e-12, atol=1e-15)


def test_factored_priors_follow_the_from_then_to_softmax():
    state = ChessState(chess.Board())
    from_logits = np.zeros(64, dtype=np.float32)
    to_logits = np.zeros((64, 73), dtype=np.float32)
    from_logits[chess.G1] = np.log(3.0)          # the g1 knight is 3x as likely to move
    to_logits[chess.G1, chess.F3] = np.log(2.0)  # and prefers f3 2:1 over h3
    priors = dict(zip((m.uci() for m in state.legal_moves()),
                      codec_chess.priors_from_logits(state, from_logits, to_logits)))
    # 10 legal from-squares (8 pawns, 2 knights); g1's share 3/12, split 2:1.
    assert priors["g1f3"] == pytest.approx(3 / 12 * 2 / 3)
    assert priors["g1h3"] == pytest.approx(3 / 12 * 1 / 3)
    assert priors["e2e4"] == pytest.approx(1 / 12 * 1 / 2)


def mirrored(state: ChessState) -> ChessState:
    return ChessState(state.board.mirror())


@pytest.mark.parametrize("state", [s for _, s in POSITIONS if s.to_play == 1],
                         ids=[n for n, s in POSITIONS if s.to_play == 1])
def test_black_to_move_encodes_like_the_mirrored_white_position(state):
    white = mirrored(state)
    assert white.to_play == 0
    np.testing.assert_array_equal(codec_chess.encode([state]), codec_chess.encode([white]))
    for move in state.legal_moves():
        flipped = chess.Move(chess.square_mirror(move.from_square),
                             chess.square_mirror(move.to_square), move.promotion)
        assert codec_chess.move_index(state, move) == codec_chess.move_index(white, flipped)


def test_history_planes_mirror_too():
    black = get_game("chess").state_from_fen("startpos", ["e2e4"])
    white = get_game("chess").state_from_fen(
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR b KQkq - 0 1", ["e7e5"])
    planes = codec_chess.encode([black])
    np.testing.assert_array_equal(planes, codec_chess.encode([white]))
    # The previous position (start) is in planes 12-23: own pawns on the second rank.
    assert planes[0, 12, 1].sum() == 8 and planes[0, 0, 1].sum() == 8


def test_planes_see_castling_en_passant_fifty_and_repetition():
    game = get_game("chess")
    ep = game.state_from_fen("rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3")
    planes = codec_chess.encode([ep])[0]
    assert planes[29, 5, chess.square_file(chess.F6)] == 1 and planes[29].sum() == 1
    assert planes[25:29].min() == 1                       # all four castling rights
    assert planes[31].min() == 1 and planes[30].max() == 0
    shuffle = game.state_from_fen("startpos", ["g1f3", "g8f6", "f3g1", "f6g8"])
    again = codec_chess.encode([shuffle])[0]
    assert again[24].min() == 1                           # the start position occurred before
    assert again[30, 0, 0] == pytest.approx(0.04)          # four reversible plies
    fresh = game.initial_state()
    start = codec_chess.encode([fresh])[0]
    assert start[24].max() == 0                                   # no repetition
    np.testing.assert_array_equal(start[12:24], start[0:12])     # no history known: the current position
    assert start[0, 1].sum() == 8 and start[5, 0, 4] == 1          # own pawns, own king e1
    assert start[6, 6].sum() == 8 and start[11, 7, 4] == 1         # their pawns, their king e8
    assert shuffle.key() == fresh.key()
    assert codec_chess.cache_key(shuffle) != codec_chess.cache_key(fresh)


def test_factored_targets_recover_the_visit_distribution():
    state = ChessState(chess.Board())
    rng = np.random.default_rng(5)
    visits = rng.integers(0, 20, size=len(state.legal_moves())).astype(float)
    visits[0] = 0
    pi_from, pi_to = codec_chess.factored_targets(state, visits)
    assert pi_from.sum() == pytest.approx(1.0)
    index = codec_chess.legal_index(state)
    src, slot = np.divmod(index, 73)
    np.testing.assert_allclose(pi_from[src] * pi_to[src, slot], visits / visits.sum(), atol=1e-6)
    for square in np.unique(src):
        if pi_from[square] > 0:
            assert pi_to[square].sum() == pytest.approx(1.0)
    with pytest.raises(ValueError):
        codec_chess.factored_targets(state, visits[:-1])


def test_gomoku_planes_and_indices_on_a_padded_grid():
    game = get_game("gomoku", width=9, height=7, rule="standard")
    state = game.state_from_moves([game.index(4, 3), game.index(0, 0), game.index(8, 6)])
    planes = codec_gomoku.encode([state], shape=(10, 12))[0]
    assert planes.shape == (9, 10, 12)
    assert planes[0, 0, 0] == 1 and planes[0].sum() == 1          # White (to move) owns 0,0
    assert planes[1, 3, 4] == 1 and planes[1, 6, 8] == 1 and planes[1].sum() == 2
    assert planes[2, 6, 8] == 1 and planes[2].sum() == 1          # last move
    assert planes[3, :7, :9].min() == 1 and planes[3].sum() == 63  # second player to move
    assert planes[4].sum() == 63 and planes[4, 7:].max() == 0 and planes[4, :, 9:].max() == 0
    assert planes[5].sum() == 63                                   # standard rule
    assert planes[6:].max() == 0                                   # not renju, not caro
    index = codec_gomoku.legal_index(state, padded_width=12)
    cells = [game.coords(m) for m in state.legal_moves()]
    assert index.tolist() == [y * 12 + x for x, y in cells]
    assert codec_gomoku.index_to_move(state, 10) == 10
    with pytest.raises(ValueError):
        codec_gomoku.move_index(state, 63)


def _renju_with_a_double_three():
    """15x15 renju, white to move; black's (7, 7) would make two open threes."""
    game = get_game("gomoku", width=15, height=15, rule="renju")
    moves = [(5, 7), (0, 0), (6, 7), (0, 14), (7, 5), (14, 0), (7, 6), (14, 14), (12, 12)]
    cells = [game.index(x, y) for x, y in moves]
    return game, game.state_from_moves(cells), cells


@pytest.mark.parametrize("rule, renju, caro", [("freestyle", 0, 0), ("standard", 0, 0),
                                               ("renju", 1, 0), ("caro", 0, 1)])
def test_gomoku_rule_planes(rule, renju, caro):
    game = get_game("gomoku", width=9, height=9, rule=rule)
    planes = codec_gomoku.encode([game.state_from_moves([40])])[0]
    assert planes[5].min() == planes[5].max() == (rule != "freestyle")
    assert planes[6].min() == planes[6].max() == renju
    assert planes[7].min() == planes[7].max() == caro


def test_gomoku_forbidden_plane_shows_blacks_fouls_on_both_sides_turns():
    game, white_to_move, cells = _renju_with_a_double_three()
    assert white_to_move.to_play == 1 and white_to_move.forbidden_points() == []
    planes = codec_gomoku.encode([white_to_move])[0]
    assert np.argwhere(planes[8]).tolist() == [[7, 7]]             # [y, x] of the double three
    black_to_move = white_to_move.play(game.index(13, 13))
    assert black_to_move.forbidden_points() == [game.index(7, 7)]
    assert game.index(7, 7) not in black_to_move.legal_moves()
    assert np.argwhere(codec_gomoku.encode([black_to_move])[0][8]).tolist() == [[7, 7]]
    freestyle = get_game("gomoku", width=15, height=15).state_from_moves(cells)
    assert codec_gomoku.encode([freestyle])[0][8].max() == 0


def test_gomoku_version_one_prefix():
    """A version-1 network reads the first 6 planes: the same numbers as before the codec grew."""
    _, state, _ = _renju_with_a_double_three()
    full = codec_gomoku.encode([state])
    old = codec_gomoku.encode([state], planes=codec_gomoku.PLANES_BY_VERSION[1])
    assert old.shape[1] == 6 and np.array_equal(old, full[:, :6])


def test_gomoku_priors_and_cell_target_cover_only_empty_cells():
    game = get_game("gomoku", width=6, height=5)
    state = game.state_from_moves([0, 7, 14])
    logits = np.random.default_rng(1).normal(size=(8, 8)).astype(np.float32)
    priors = codec_gomoku.priors_from_logits(state, logits)
    assert priors.shape == (27,) and priors.sum() == pytest.approx(1.0)
    visits = np.arange(27, dtype=float)
    target = codec_gomoku.cell_target(state, visits)
    assert target.shape == (5, 6) and target.sum() == pytest.approx(1.0)
    assert target.reshape(-1)[[0, 7, 14]].tolist() == [0, 0, 0]
    assert target.reshape(-1)[state.legal_moves()[-1]] == pytest.approx(26 / visits.sum())


@pytest.mark.parametrize("rule", ["freestyle", "renju", "caro"])
def test_gomoku_priors_batch_equals_state_by_state(rule, monkeypatch):
    """The batch's shared masked softmax gives each state priors_from_logits' numbers, in
    legal_moves() order; renju black (forbidden points left out), a finished game (no
    moves) and a smaller board padded into the grid take the state-by-state path, the
    rest the shared one."""
    game = get_game("gomoku", width=15, height=15, rule=rule)
    states = random_states(game, 12, seed=5, max_plies=40) + [game.state_from_moves([0, 15, 1, 16, 2, 17, 3, 18, 4])]
    states.append(get_game("gomoku", width=7, height=8, rule=rule).state_from_moves([3, 17]))
    special = {12, 13} | {i for i, s in enumerate(states) if rule == "renju" and s.ply % 2 == 0}
    if rule == "renju":
        black = _renju_with_a_double_three()[1].play(30)        # black to move, (7, 7) forbidden
        assert black.forbidden_points()
        special.add(len(states))
        states.append(black)
    logits = np.random.default_rng(2).normal(size=(len(states), 15, 15)).astype(np.float32)
    single = [codec_gomoku.priors_from_logits(state, logits[i]) for i, state in enumerate(states)]
    one_by_one = []
    original = codec_gomoku.priors_from_logits
    monkeypatch.setattr(codec_gomoku, "priors_from_logits",
                        lambda state, row: one_by_one.append(state) or original(state, row))
    batched = codec_gomoku.priors_batch(states, (logits,))
    assert states[12].outcome() is not None and batched[12].size == 0
    assert {id(s) for s in one_by_one} == {id(states[i]) for i in special}
    for i, state in enumerate(states):
        assert batched[i].shape == (len(state.legal_moves()),)
        assert np.allclose(batched[i], single[i], rtol=1e-12, atol=1e-15)


def test_codec_registry_serves_each_game_through_one_interface():
    from engine.nn.codecs import codec_names, get_codec
    games = {"chess": get_game("chess"), "gomoku": get_game("gomoku", width=9, height=7)}
    assert set(codec_names()) == set(games)
    for name, game in games.items():
        codec = get_codec(name)
        assert codec.name == name
        state = game.initial_state().play(game.initial_state().legal_moves()[0])
        width, height = getattr(game, "width", 8), getattr(game, "height", 8)
        planes = codec.encode([state])
        assert planes.shape == (1, codec.planes, *codec.plane_shape(width, height))
        divisors = codec.plane_divisors()
        assert np.array_equal(np.rint(planes[0] * divisors[:, None, None]) / divisors[:, None, None], planes[0])
        assert codec.legal_index(state).max() < codec.policy_size(width, height)
        assert codec.export_example().shape[1] == codec.planes and codec.outputs[-1] == "wdl"
        assert set(codec.export_axes()) == {"planes", *codec.outputs}
        assert codec.symmetries(width, height)[0] == tuple(range(width * height))
    with pytest.raises(ValueError, match="no network codec"):
        get_codec("go")


def test_network_side_modules_ask_the_codec_instead_of_naming_games():
    import pathlib
    root = pathlib.Path(__file__).resolve().parent.parent / "engine" / "nn"
    for module in ("evaluator.py", "onnx_backend.py", "spec.py", "model.py"):
        text = (root / module).read_text()
        assert '"chess"' not in text and '"gomoku"' not in text, module
