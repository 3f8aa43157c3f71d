"""Perft: the standard suite through our ChessState API and through legal_move_list (the C kernel
and its Python fallback), and the generic walker on gomoku."""
from __future__ import annotations

from pathlib import Path

import chess
import pytest

from engine.games import get_game
from engine.games.chess import rules
from engine.games.chess.perft import chess_perft, divide, perft

SUITE = Path(__file__).parent / "data" / "perft.epd"


def _suite() -> list[tuple[str, dict[int, int]]]:
    cases = []
    for line in SUITE.read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        fen, *fields = (part.strip() for part in line.split(";"))
        counts = {int(f.split()[0][1:]): int(f.split()[1]) for f in fields}
        cases.append((fen, counts))
    return cases


CASES = _suite()
IDS = ["start", "kiwipete", "pos3", "pos4", "pos5", "pos6"]


def test_suite_file_holds_the_six_standard_positions():
    assert len(CASES) == 6
    assert CASES[0][1][3] == 8902 and CASES[1][1][3] == 97862


@pytest.mark.parametrize("fen,counts", CASES, ids=IDS)
def test_perft_to_depth_3_through_the_state_api(fen, counts):
    state = get_game("chess").state_from_fen(fen)
    for depth in (1, 2, 3):
        assert perft(state, depth) == counts[depth], f"depth {depth}"


@pytest.mark.parametrize("index", [0, 2, 3], ids=["start", "pos3", "pos4"])
def test_fast_chess_perft_at_depth_4(index):
    fen, counts = CASES[index]
    assert chess_perft(chess.Board(fen), 4) == counts[4]


@pytest.mark.parametrize("fen,counts", CASES, ids=IDS)
@pytest.mark.parametrize("generator", ["kernel", "python"])
def test_legal_move_list_perft(monkeypatch, generator, fen, counts):
    """legal_move_list on a push/pop board: to depth 4 (10.7 million leaves, 1.3 s here)
    with the C kernel, to depth 3 with its Python fallback."""
    if generator == "kernel" and rules.movegen_kernel is None:
        pytest.skip("the movegen kernel did not build (no C compiler)")
    if generator == "python":
        monkeypatch.setattr(rules, "movegen_kernel", None)
    board = chess.Board(fen)

    def walk(depth: int) -> int:
        moves = rules.legal_move_list(board)
        if depth == 1:
            return len(moves)
        total = 0
        for move in moves:
            board.push(move)
            total += walk(depth - 1)
            board.pop()
        return total

    depth = 4 if generator == "kernel" else 3
    assert walk(depth) == counts[depth]


@pytest.mark.slow
def test_kiwipete_perft_at_depth_4():
    """4,085,603 leaves: castling, en passant and promotion interplay (~6 s of CPU)."""
    fen, counts = CASES[1]
    assert chess_perft(chess.Board(fen), 4) == counts[4]


def test_divide_sums_to_perft_and_names_every_root_move():
    state = get_game("chess").state_from_fen(CASES[1][0])
    split = divide(state, 2)
    assert len(split) == 48 and sum(split.values()) == 2039


def test_perft_depth_zero_counts_the_position_itself():
    state = get_game("chess").initial_state()
    assert perft(state, 0) == 1 and chess_perft(state.board, 0) == 1


def test_generic_perft_on_gomoku():
    game = get_game("gomoku", width=5, height=5)
    assert perft(game.initial_state(), 2) == 25 * 24
    assert perft(game.initial_state(), 3) == 25 * 24 * 23
