"""Gomoku rules (engine/games/gomoku.py): wins, rules, draws, coordinates, keys, symmetries."""
from __future__ import annotations

import random

import pytest

from engine.games import GameSetupError, IllegalMoveError, get_game
from engine.games.gomoku import GomokuGame, GomokuState, symmetry_permutations

# Second-player stones far from any line used below (15x15 and up).
_FILLER = [(14, 0), (0, 14), (14, 14), (12, 1), (1, 12), (13, 13)]


def play(game: GomokuGame, first: list[tuple[int, int]], second: list[tuple[int, int]]) -> GomokuState:
    """Alternate the stones from the empty board, the first player first."""
    state = game.initial_state()
    for i, xy in enumerate(first):
        state = state.play(game.index(*xy))
        if i < len(second):
            state = state.play(game.index(*second[i]))
    return state


def line(x: int, y: int, dx: int, dy: int, n: int) -> list[tuple[int, int]]:
    return [(x + k * dx, y + k * dy) for k in range(n)]


@pytest.mark.parametrize("start, direction", [
    ((5, 7), (1, 0)), ((7, 5), (0, 1)), ((5, 5), (1, 1)), ((9, 5), (-1, 1)),       # middle
    ((0, 3), (1, 0)), ((10, 3), (1, 0)), ((3, 0), (0, 1)), ((3, 10), (0, 1)),      # edges
    ((0, 0), (1, 1)), ((10, 10), (1, 1)), ((4, 0), (-1, 1)), ((14, 10), (-1, 1)),  # corners
])
@pytest.mark.parametrize("rule", ["freestyle", "standard"])
def test_five_in_each_direction_wins_for_its_player(start, direction, rule):
    game = get_game("gomoku", width=15, height=15, rule=rule)
    stones = line(*start, *direction, 5)
    filler = [xy for xy in _FILLER if xy not in stones][:4]
    state = play(game, stones[:4], filler)
    assert state.outcome() is None
    # the fifth stone, placed in the middle of the line or at its end, wins
    state = state.play(game.index(*stones[4]))
    assert state.outcome() is not None and state.outcome().winner == 0
    assert state.legal_moves() == []


def test_second_player_wins_too():
    game = get_game("gomoku", width=9, height=9)
    state = play(game, [(0, 0), (0, 8), (8, 0), (8, 8), (2, 2)], line(3, 4, 1, 0, 5))
    assert state.outcome() is not None and state.outcome().winner == 1


def test_a_gap_filled_in_the_middle_wins():
    game = get_game("gomoku", width=15, height=15)
    state = play(game, [(3, 3), (4, 3), (6, 3), (7, 3)], _FILLER[:4])
    assert state.outcome() is None
    assert state.play(game.index(5, 3)).outcome().winner == 0


def test_overline_wins_in_freestyle_only():
    stones = [(2, 7), (3, 7), (4, 7), (6, 7), (7, 7)]  # the gap at 5,7 makes six
    for rule, wins in (("freestyle", True), ("standard", False)):
        game = get_game("gomoku", width=15, height=15, rule=rule)
        state = play(game, stones, _FILLER[:5])
        assert state.to_play == 0
        after = state.play(game.index(5, 7))
        assert (after.outcome() is not None) is wins
        if not wins:
            assert after.legal_moves()  # the game goes on


def test_standard_exactly_five_wins_beside_an_overline_threat():
    game = get_game("gomoku", width=15, height=15, rule="standard")
    state = play(game, [(3, 7), (4, 7), (5, 7), (6, 7), (8, 7)], _FILLER[:5])
    assert state.play(game.index(7, 7)).outcome() is None          # 3..8: six
    assert state.play(game.index(2, 7)).outcome().winner == 0      # 2..6: exactly five


def test_standard_five_at_the_edge_counts():
    game = get_game("gomoku", width=9, height=9, rule="standard")
    state = play(game, line(0, 0, 1, 0, 5), [(0, 8), (2, 8), (4, 8), (6, 8)])
    assert state.outcome().winner == 0


def test_the_other_colours_stone_does_not_complete_a_line():
    game = get_game("gomoku", width=15, height=15)
    # four first-player stones, then the second player takes the fifth cell: no win for anyone
    state = play(game, line(3, 3, 1, 0, 4), [(7, 3), (0, 14), (14, 0)])
    assert state.outcome() is None and state.stone_at(7, 3) == 2
    # four second-player stones plus a first-player stone in line: no win
    state = play(game, [(0, 0), (14, 14), (0, 14), (14, 0), (5, 10)], line(1, 10, 1, 0, 4))
    assert state.outcome() is None


def test_full_5x5_board_without_five_is_a_draw():
    rows = ["XXOOX", "OOXXO", "XXOOX", "OOXXO", "XXOOX"]
    first = [(x, y) for y, row in enumerate(rows) for x, c in enumerate(row) if c == "X"]
    second = [(x, y) for y, row in enumerate(rows) for x, c in enumerate(row) if c == "O"]
    for rule in ("freestyle", "standard"):
        game = get_game("gomoku", width=5, height=5, rule=rule)
        state = play(game, first, second)
        assert state.ply == 25
        assert state.outcome() is not None
        assert state.outcome().winner is None and state.outcome().reason == "board full"
        assert state.legal_moves() == []


def test_rectangular_coordinates_round_trip():
    game = get_game("gomoku", width=12, height=17)
    state = game.initial_state()
    assert len(state.legal_moves()) == 12 * 17
    seen = set()
    for y in range(17):
        for x in range(12):
            move = game.index(x, y)
            seen.add(move)
            assert game.coords(move) == (x, y)
            text = game.format_move(state, move)
            assert text == f"{x},{y}"
            assert game.parse_move(state, text) == move
            assert game.parse_move(state, f" {x},{y}\n") == move
    assert seen == set(range(12 * 17))
    with pytest.raises(IllegalMoveError):
        game.index(12, 0)
    with pytest.raises(IllegalMoveError):
        game.index(0, 17)


@pytest.mark.parametrize("width, height", [(5, 5), (26, 26), (5, 26), (26, 5)])
def test_sizes_5_to_26_are_accepted(width, height):
    game = get_game("gomoku", width=width, height=height)
    assert len(game.initial_state().legal_moves()) == width * height


@pytest.mark.parametrize("width, height", [(4, 4), (27, 27), (15, 4), (5, 27), (0, 15)])
def test_sizes_outside_5_to_26_are_rejected(width, height):
    with pytest.raises(GameSetupError):
        get_game("gomoku", width=width, height=height)


def test_unknown_rule_is_rejected():
    with pytest.raises(GameSetupError):
        get_game("gomoku", width=15, rule="renju-ish")


@pytest.mark.parametrize("text", ["15,0", "0,15", "-1,3", "a,b", "3", "3,4,5", "", "3;4", "3.0,4"])
def test_malformed_or_off_board_moves_raise_illegal_move(text):
    game = get_game("gomoku", width=15, height=15)
    with pytest.raises(IllegalMoveError):
        game.parse_move(game.initial_state(), text)


def test_occupied_cell_and_finished_game_raise_illegal_move():
    game = get_game("gomoku", width=15, height=15)
    state = game.initial_state().play(game.index(7, 7))
    with pytest.raises(IllegalMoveError, match="occupied"):
        game.parse_move(state, "7,7")
    with pytest.raises(IllegalMoveError):
        state.play(game.index(7, 7))
    with pytest.raises(IllegalMoveError):
        state.play(15 * 15)
    won = play(game, line(0, 0, 1, 0, 5), _FILLER[:4])
    with pytest.raises(IllegalMoveError):
        game.parse_move(won, "7,7")


def test_zobrist_key_depends_on_stones_not_move_order():
    game = get_game("gomoku", width=15, height=15)
    a = play(game, [(7, 7), (8, 8), (6, 5)], [(7, 8), (9, 9), (1, 1)])
    b = play(game, [(6, 5), (7, 7), (8, 8)], [(1, 1), (9, 9), (7, 8)])
    assert a.key() == b.key()
    swapped = play(game, [(7, 8), (9, 9), (1, 1)], [(7, 7), (8, 8), (6, 5)])  # colours swapped
    assert swapped.key() != a.key()
    moved = play(game, [(7, 7), (8, 8), (6, 6)], [(7, 8), (9, 9), (1, 1)])     # one stone moved
    assert moved.key() != a.key()
    assert game.initial_state().key() == 0 != a.key()


def test_random_games_keys_are_consistent_and_distinct():
    game = get_game("gomoku", width=9, height=9)
    rng = random.Random(7)
    keys: dict[int, bytes] = {}
    for _ in range(20):
        state = game.initial_state()
        while state.outcome() is None:
            state = state.play(rng.choice(state.legal_moves()))
            assert keys.setdefault(state.key(), state.cells) == state.cells


@pytest.mark.parametrize("width, height, count", [(15, 15, 8), (9, 9, 8), (12, 17, 4), (20, 6, 4)])
def test_symmetries_are_permutations(width, height, count):
    perms = symmetry_permutations(width, height)
    assert len(perms) == count
    assert perms[0] == tuple(range(width * height))
    assert len(set(perms)) == count
    for perm in perms:
        assert sorted(perm) == list(range(width * height))


@pytest.mark.parametrize("width, height", [(15, 15), (12, 17)])
@pytest.mark.parametrize("direction", [(1, 0), (0, 1), (1, 1), (-1, 1)])
def test_symmetries_map_a_win_to_a_win(width, height, direction):
    game = get_game("gomoku", width=width, height=height, rule="standard")
    dx, dy = direction
    x0 = 6 if dx < 0 else 2
    stones = line(x0, 3, dx, dy, 5)
    filler = [(width - 1, height - 1), (0, height - 1), (width - 1, 0), (0, height - 3)]
    won = play(game, stones, filler)
    assert won.outcome().winner == 0
    last = won.last_move
    for perm in symmetry_permutations(width, height):
        cells = bytearray(len(won.cells))
        for i, stone in enumerate(won.cells):
            cells[perm[i]] = stone
        assert game.makes_five(bytes(cells), perm[last])
        assert sum(1 for m in range(len(cells)) if cells[m] and game.makes_five(bytes(cells), m)) == 5


@pytest.mark.parametrize("rule", ["freestyle", "standard"])
@pytest.mark.parametrize("width, height", [(15, 15), (9, 7), (6, 11)])
def test_makes_five_agrees_with_run_lengths_on_random_crowded_boards(width, height, rule):
    """makes_five reads precomputed rays; run_length walks coordinates: they must agree."""
    game = GomokuGame(width, height, rule)
    rng = random.Random(width * 100 + height)
    seen = set()
    for _ in range(60):
        cells = bytes(rng.choice((0, 1, 1, 2, 2)) for _ in range(width * height))
        for move in range(width * height):
            if not cells[move]:
                continue
            lengths = [game.run_length(cells, move, dx, dy) for dx, dy in ((1, 0), (0, 1), (1, 1), (1, -1))]
            expected = any(n == 5 or (n > 5 and rule == "freestyle") for n in lengths)
            assert game.makes_five(cells, move) == expected
            seen.add(expected)
    assert seen == {True, False}


def test_legal_moves_after_play_are_the_empty_cells_in_order():
    """A child's legal moves are derived from its parent's list: the same as a scan."""
    game = get_game("gomoku", width=9, height=9)
    rng = random.Random(7)
    state = game.initial_state()
    while state.outcome() is None:
        empty = [i for i in range(81) if state.cells[i] == 0]
        assert list(state.legal_moves()) == empty
        state = state.play(rng.choice(empty))
    assert list(state.legal_moves()) == []
