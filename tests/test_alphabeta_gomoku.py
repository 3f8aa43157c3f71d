"""Gomoku alpha-beta: the search board (patterns, forcing, keys) and the searcher on tactics."""
from __future__ import annotations

import random
from pathlib import Path
from typing import Iterator

import pytest

from engine.players import PlayerOptions, make_searcher
from engine.games import get_game
from engine.games.gomoku import GomokuGame, GomokuState
from engine.search.ab_board import TERMINAL_DRAW, TERMINAL_LOSS
from engine.games.gomoku.alphabeta import GomokuSearchBoard, board_maker
from engine.games.gomoku.patterns import (
    DEFENCES, FIVE, FIVES, FOUR, FOUR_MAKERS, NONE, OPEN_FOUR, OPEN_THREE, OPEN_THREES, OPEN_TWO,
    PATTERN_SCORES, SCORE, THREE, TWO, PatternTable)
from engine.types import Limits

TACTICS = Path(__file__).parent / "data" / "gomoku_tactics.txt"


def load_tactics() -> Iterator[tuple[str, GomokuGame, GomokuState, str, set[int]]]:
    """(id, game, state, kind, answers) per line of tests/data/gomoku_tactics.txt (format there)."""
    for raw in TACTICS.read_text().splitlines():
        text = raw.strip()
        if not text or text.startswith("#"):
            continue
        ident, board, first, second, kind, answers = (field.strip() for field in text.split(";"))
        size, rule = board.split()
        width, height = (int(v) for v in size.split("x"))
        game = get_game("gomoku", width=width, height=height, rule=rule)

        def cells(field: str) -> list[int]:
            return [] if field == "-" else [game.index(*map(int, c.split(","))) for c in field.split()]
        xs, os_ = cells(first), cells(second)
        moves = [m for pair in zip(xs, os_) for m in pair] + xs[len(os_):]
        state = game.state_from_moves(moves)
        yield ident, game, state, kind, set(cells(answers))


TACTIC_CASES = list(load_tactics())


def test_tactics_file_covers_rules_sizes_and_kinds():
    assert len(TACTIC_CASES) >= 15
    assert {kind for _, _, _, kind, _ in TACTIC_CASES} == {"win1", "block", "win2", "win3"}
    assert {game.rule for _, game, _, _, _ in TACTIC_CASES} == {"freestyle", "standard"}
    sizes = {(game.width, game.height) for _, game, _, _, _ in TACTIC_CASES}
    assert {(9, 9), (15, 15), (20, 20), (12, 17)} <= sizes
    for ident, _, state, _, answers in TACTIC_CASES:
        assert state.outcome() is None, ident
        assert answers and all(state.is_legal(m) for m in answers), ident


# -- patterns ----------------------------------------------------------------------------
def unit(text: str) -> bytes:
    return bytes(1 if c == "x" else 0 for c in text)


@pytest.mark.parametrize("text, freestyle, standard", [
    ("xxxxx", FIVE, FIVE),
    ("xxxxxx", FIVE, NONE),          # overline: a win only in freestyle
    (".xxxx.", OPEN_FOUR, OPEN_FOUR),
    ("x.xxx.x", OPEN_FOUR, OPEN_FOUR),  # two cells make five
    ("xxxx.", FOUR, FOUR),
    ("xx.xx", FOUR, FOUR),
    (".xxxx.x", OPEN_FOUR, FOUR),     # standard: the right cell makes six
    ("xxxx.x", FOUR, NONE),           # standard: the only five cell makes six
    ("..xxx..", OPEN_THREE, OPEN_THREE),
    (".x.xx.", OPEN_THREE, OPEN_THREE),
    (".xxx.", THREE, THREE),          # O.XXX.O: no open four possible
    ("xxx..", THREE, THREE),
    ("..xx..", OPEN_TWO, OPEN_TWO),
    ("xx...", TWO, TWO),
    ("xxxx", NONE, NONE),             # no room for five
])
def test_pattern_classes(text, freestyle, standard):
    assert PatternTable("freestyle").classify(unit(text)) == freestyle
    assert PatternTable("standard").classify(unit(text)) == standard


def test_line_info_finds_fives_threes_defences_and_four_makers():
    table = PatternTable("freestyle")
    info = table.line(bytes([0, 0, 1, 1, 1, 0, 0, 0, 0]))   # first player: open three ..XXX....
    assert info[FIVES] == () and info[FIVES + 1] == ()
    assert (info[OPEN_THREES], info[OPEN_THREES + 1]) == (1, 0)
    assert set(info[DEFENCES]) == {1, 5}                    # 0 or 6 still leaves .XXXX. open
    assert set(info[FOUR_MAKERS]) == {0, 1, 5, 6}
    info = table.line(bytes([2, 2, 2, 2, 0, 1]))            # second player: four against the edge
    assert info[FIVES] == () and info[FIVES + 1] == (4,)
    assert info[SCORE + 1] == PATTERN_SCORES[FOUR] and info[SCORE] == 0


# -- board ---------------------------------------------------------------------------------
@pytest.mark.parametrize("width, height, rule", [(15, 15, "freestyle"), (12, 17, "standard"),
                                                 (5, 5, "freestyle"), (26, 26, "standard")])
def test_incremental_board_matches_a_fresh_one_and_the_state_key(width, height, rule):
    game = get_game("gomoku", width=width, height=height, rule=rule)
    rng = random.Random(width * height)
    table = PatternTable(rule)
    for _ in range(3):
        state = game.initial_state()
        board = GomokuSearchBoard.from_state(state)  # its own table: results must not depend on it
        states = [state]
        while state.outcome() is None and len(states) < 80:
            move = rng.choice(state.legal_moves())
            state = state.play(move)
            board.push(move)
            states.append(state)
            assert board.key() == state.key()
            expected = None
            if state.outcome() is not None:
                expected = TERMINAL_DRAW if state.outcome().winner is None else TERMINAL_LOSS
            assert board.terminal() == expected
            fresh = GomokuSearchBoard.from_state(state, patterns=table)
            assert fresh.evaluate() == board.evaluate()
            assert sorted(fresh.ordered_moves()) == sorted(board.ordered_moves())
        while len(states) > 1:
            board.pop()
            states.pop()
            assert board.key() == states[-1].key()
            assert board.evaluate() == GomokuSearchBoard.from_state(states[-1], patterns=table).evaluate()


def test_empty_board_offers_only_the_centre():
    for width, height in ((15, 15), (20, 20), (12, 17), (5, 5)):
        board = GomokuSearchBoard.from_state(get_game("gomoku", width=width, height=height).initial_state())
        assert [m for m, _ in board.ordered_moves()] == [(height // 2) * width + width // 2]


def test_board_is_never_in_check_and_has_no_noisy_moves():
    board = GomokuSearchBoard.from_state(get_game("gomoku").initial_state())
    assert board.in_check() is False and list(board.noisy_moves()) == [] and board.is_quiet(0)


def test_forced_moves_win_then_block():
    for ident, game, state, kind, answers in TACTIC_CASES:
        moves = [m for m, _ in GomokuSearchBoard.from_state(state).ordered_moves()]
        if kind == "win1":
            assert len(moves) == 1 and moves[0] in answers, ident
        elif kind == "block":
            assert set(moves) == answers, ident


def test_open_three_leaves_only_defences_and_fours():
    game = get_game("gomoku", width=15, height=15)
    # O has an open three on row 7 (6..8); X has a closed three on column 2 (blocked at 2,3)
    first = [game.index(*xy) for xy in ((2, 4), (2, 5), (2, 6), (12, 12))]
    second = [game.index(*xy) for xy in ((6, 7), (7, 7), (8, 7), (2, 3))]
    state = game.state_from_moves([m for pair in zip(first, second) for m in pair])
    moves = {game.format_move(state, m) for m, _ in GomokuSearchBoard.from_state(state).ordered_moves()}
    assert moves == {"5,7", "9,7", "2,7", "2,8"}   # blocks beside the three, or own fours


def test_candidates_are_capped_and_near_stones():
    game = get_game("gomoku", width=15, height=15)
    rng = random.Random(3)
    state = game.initial_state()
    for _ in range(12):
        state = state.play(rng.choice([m for m in state.legal_moves() if 4 <= m % 15 <= 10 and 4 <= m // 15 <= 10]))
    board = GomokuSearchBoard.from_state(state, max_candidates=10)
    moves = board.ordered_moves()
    assert len(moves) == 10, "the seeded position must be an open one, where the cap bites"
    stones = [(m % 15, m // 15) for m in range(225) if state.cells[m]]
    for move, _ in moves:
        x, y = move % 15, move // 15
        assert state.cells[move] == 0
        assert any(max(abs(x - sx), abs(y - sy)) <= 2 for sx, sy in stones)
    scores = [s for _, s in moves]
    assert scores == sorted(scores, reverse=True)


# -- the searcher ------------------------------------------------------------------------------
@pytest.mark.parametrize("case", TACTIC_CASES, ids=[c[0] for c in TACTIC_CASES])
def test_alphabeta_solves_tactic(case):
    ident, game, state, kind, answers = case
    searcher = make_searcher(game, PlayerOptions(player="alphabeta"))
    result = searcher.search(state, Limits(depth=6, time=30.0))
    assert result.best_move in answers, f"{ident}: {game.format_move(state, result.best_move)}"
    mate = result.info.mate_plies
    if kind == "win1":
        assert mate == 1
    elif kind == "win2":
        assert mate is not None and 0 < mate <= 3
    elif kind == "win3":
        assert mate is not None and 0 < mate <= 5
    elif kind == "block" and len(answers) > 1:
        assert mate is not None and mate < 0   # an open four cannot be stopped


def test_first_move_is_the_centre():
    for width, height in ((15, 15), (20, 20), (12, 17)):
        game = get_game("gomoku", width=width, height=height)
        result = make_searcher(game, PlayerOptions(player="alphabeta")).search(
            game.initial_state(), Limits(depth=3))
        assert game.coords(result.best_move) == (width // 2, height // 2)


@pytest.mark.parametrize("width, height, rule", [(9, 9, "freestyle"), (15, 15, "standard"),
                                                 (12, 17, "freestyle"), (20, 20, "standard")])
def test_search_returns_legal_moves_on_random_positions(width, height, rule):
    game = get_game("gomoku", width=width, height=height, rule=rule)
    rng = random.Random(width + height)
    searcher = make_searcher(game, PlayerOptions(player="alphabeta"))
    for _ in range(4):
        state = game.initial_state()
        for _ in range(rng.randrange(1, 30)):
            if state.outcome() is not None:
                break
            state = state.play(rng.choice(state.legal_moves()))
        if state.outcome() is not None:
            continue
        result = searcher.search(state, Limits(nodes=400))
        assert result.best_move in state.legal_moves()


def test_alphabeta_beats_random_on_9x9():
    game = get_game("gomoku", width=9, height=9)
    for ab_colour in (0, 1):
        players = {ab_colour: board_searcher(game), 1 - ab_colour: make_searcher(
            game, PlayerOptions(player="random", seed=ab_colour))}
        state = game.initial_state()
        while state.outcome() is None:
            state = state.play(players[state.to_play].search(state, Limits(depth=2)).best_move)
        assert state.outcome().winner == ab_colour


def board_searcher(game):
    """An AlphaBeta over boards sharing one pattern table (as a long-lived player would)."""
    from engine.search.alphabeta import AlphaBeta
    return AlphaBeta(board_maker(game))


def test_stop_mid_search_still_answers_a_legal_move():
    import threading
    game = get_game("gomoku", width=20, height=20)
    state = game.state_from_moves([210, 211, 189, 231, 168, 147])
    stop = threading.Event()
    stop.set()
    result = make_searcher(game, PlayerOptions(player="alphabeta")).search(state, Limits(infinite=True), stop=stop)
    assert result.best_move in state.legal_moves()
