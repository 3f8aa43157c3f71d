"""Swap2 choices (engine/games/gomoku/swap2.py) with a scripted evaluation and a fake clock."""
from __future__ import annotations

import random

import pytest

from engine.games import get_game
from engine.games.gomoku.swap2 import PROPOSE_FINALISTS, book_shapes, choose, opening_shapes, propose
from engine.games.gomoku.swap2_book import EVEN_OPENINGS


def _canonical(shape):
    """The shape's least image under the eight symmetries about the centre."""
    images = []
    for sx in (1, -1):
        for sy in (1, -1):
            for transpose in (False, True):
                images.append(tuple((sx * (y if transpose else x), sy * (x if transpose else y)) for x, y in shape))
    return min(images)


def test_the_shapes_are_the_26_classic_openings_and_the_far_ones_each_once():
    shapes = opening_shapes()
    assert len({_canonical(shape) for shape in shapes}) == len(shapes)   # no two are the same opening
    near = [shape for shape in shapes if max(abs(shape[1][0]), abs(shape[1][1])) == 1]
    assert len(near) == 26
    for black, white, third in shapes:
        assert black == (0, 0) and third not in (black, white)
        assert max(abs(third[0]), abs(third[1])) <= 2 and max(abs(white[0]), abs(white[1])) <= 2


class FakeSearch:
    """value(state) scripted per position; each call advances a fake clock by its seconds."""

    def __init__(self, value, move=None):
        self.value, self.move, self.now = value, move, 0.0
        self.calls: list[tuple[object, float]] = []

    def clock(self) -> float:
        return self.now

    def __call__(self, state, seconds):
        self.calls.append((state, seconds))
        self.now += seconds
        move = self.move if self.move is not None else state.legal_moves()[0]
        return self.value(state), move


@pytest.mark.parametrize("size,rule", [(13, "freestyle"), (19, "renju"), (20, "caro")])
def test_propose_gives_the_most_even_candidate_it_searched(size, rule):
    game = get_game("gomoku", width=size, rule=rule)
    assert not book_shapes(game)
    centre = game.index(size // 2, size // 2)
    # white's stone farther from black's second: the more even; exactly even only at distance 3
    def value(state):
        black2, white = state.last_move, state.game.coords(next(c for c, v in enumerate(state.cells) if v == 2))
        bx, by = state.game.coords(black2)
        return (max(abs(bx - white[0]), abs(by - white[1])) - 3) / 4
    search = FakeSearch(value)
    answer = propose(game, search, 10.0, rng=random.Random(1), clock=search.clock)
    stones = answer.stones
    assert len(set(stones)) == 3 and stones[0] == centre
    state = game.state_from_moves(list(stones))
    assert state.to_play == 1 and state.outcome() is None
    screened = [s for s, _ in search.calls[:len(opening_shapes())]]
    assert len(screened) == len(opening_shapes())          # 10 s: every candidate searched
    best = min(abs(value(s)) for s in screened)
    assert abs(value(state)) == best == answer.value == 0
    assert answer.searched == len(search.calls) == len(opening_shapes()) + PROPOSE_FINALISTS
    assert search.now <= 10.0 + 1e-9


def test_propose_keeps_to_a_short_budget_and_varies_with_the_seed():
    game = get_game("gomoku", width=19, rule="renju")
    proposals = set()
    for seed in range(4):
        search = FakeSearch(lambda state: 0.0)
        proposals.add(propose(game, search, 0.2, rng=random.Random(seed), clock=search.clock).stones)
        assert len(search.calls) <= 0.2 / 0.02 + PROPOSE_FINALISTS
        assert search.now <= 0.2 + 0.02 * (PROPOSE_FINALISTS + 1)
    assert len(proposals) > 1


def test_the_book_holds_even_openings_each_once():
    assert {rule for rule, _ in EVEN_OPENINGS} == {"freestyle", "standard", "renju"}
    for (rule, board), openings in EVEN_OPENINGS.items():
        shapes = [shape for shape, _ in openings]
        assert len(shapes) >= 8 and len({_canonical(shape) for shape in shapes}) == len(shapes)
        for shape, white_win in openings:
            assert shape[0] == (0, 0) and len(set(shape)) == 3 and 0.4 <= white_win <= 0.6
            assert all(max(abs(dx), abs(dy)) <= 4 for dx, dy in shape)


@pytest.mark.parametrize("rule,size", sorted(EVEN_OPENINGS))
def test_propose_takes_a_book_opening_in_a_random_symmetry(rule, size):
    game = get_game("gomoku", width=size, rule=rule)
    centre = size // 2
    book = {_canonical(shape) for shape in book_shapes(game)}
    proposals = set()
    for seed in range(12):
        search = FakeSearch(lambda state: -0.25)
        answer = propose(game, search, 1.0, rng=random.Random(seed), clock=search.clock)
        shape = tuple((x - centre, y - centre) for x, y in map(game.coords, answer.stones))
        assert _canonical(shape) in book and shape[0] == (0, 0)
        assert len(search.calls) == answer.searched == 1 and answer.value == -0.25 and answer.book
        assert "a book opening" in answer.describe(game)
        assert search.calls[0][0].ply == 3 and search.now <= 0.2    # searched only to report our reading
        proposals.add(answer.stones)
    assert len(proposals) >= 6                                      # not always the same stones


@pytest.mark.parametrize("stones", [3, 5])
def test_choose_stays_white_when_white_is_better_and_swaps_otherwise(stones):
    game = get_game("gomoku", width=15)
    moves = [game.index(7, 7), game.index(7, 6), game.index(8, 8), game.index(6, 6), game.index(9, 9)][:stones]
    state = game.state_from_moves(moves)
    reply = game.index(10, 10)
    stay = choose(state, FakeSearch(lambda s: 0.2, move=reply), 1.0)
    assert not stay.swap and stay.stones == (reply,) and stay.value == 0.2
    swap = choose(state, FakeSearch(lambda s: -0.2, move=reply), 1.0)
    assert swap.swap and "SWAP" in swap.describe(game) and "-0.20" in swap.describe(game)
