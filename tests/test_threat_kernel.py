"""The threat solver's compiled core (engine/games/gomoku/threat_kernel.c via threat_kernel.py).

Its searches are checked through ThreatSolver in test_threats.py (every proof replayed with
the rules); here: the board's incremental patterns against boards built from scratch, the
rules' fives, and what happens when the core was not built (no C compiler at install).
"""
from __future__ import annotations

import random

import pytest

from engine.games import get_game
from engine.players.build import build_player
from engine.players.options import PlayerOptions
from engine.games.gomoku import threat_kernel
from engine.games.gomoku.threat_kernel import KernelBoard, ThreatKernelUnavailable
from engine.games.gomoku.threats import ThreatSolver


def _random_cells(rng: random.Random, n: int, stones: int) -> bytearray:
    cells = bytearray(n)
    for i, cell in enumerate(rng.sample(range(n), stones)):
        cells[cell] = 1 + i % 2
    return cells


def _fingerprint(board: KernelBoard, n: int) -> tuple:
    """Everything the board's patterns decide that can be read from outside."""
    return (board.makers(0), board.makers(1),
            tuple(board.makes_five(c, 0) for c in range(n)), tuple(board.makes_five(c, 1) for c in range(n)),
            tuple(board.rank(range(n), 0)), board.vcf(0, 5_000, 20, None), board.vcf(1, 5_000, 20, None),
            board.vct(0, 5_000, 3, 20))


@pytest.mark.parametrize("width, height, rule", [(15, 15, "freestyle"), (20, 20, "freestyle"), (12, 9, "standard"),
                                                      (15, 15, "renju")])
def test_incremental_board_matches_a_board_built_from_scratch(width, height, rule):
    rng = random.Random(width * height)
    n = width * height
    walked = KernelBoard(width, height, rule)
    for _ in range(12):
        target = _random_cells(rng, n, rng.randrange(10, 60))
        walked.sync(target)                          # from the previous position: stones on and off
        fresh = KernelBoard(width, height, rule)
        fresh.sync(target)
        walked.clear_table()
        assert _fingerprint(walked, n) == _fingerprint(fresh, n)
    for cell in (c for c in range(n) if c % 7 == 0 and not target[c]):
        walked.push(cell, cell % 2)                  # pushes and pops leave the board as it was
    for cell in reversed([c for c in range(n) if c % 7 == 0 and not target[c]]):
        walked.pop(cell)
    walked.clear_table()
    fresh.clear_table()
    assert _fingerprint(walked, n) == _fingerprint(fresh, n)
    walked.sync(bytearray(n))
    assert walked.makers(0) == walked.makers(1) == 0


@pytest.mark.parametrize("width, height, rule", [(15, 15, "freestyle"), (13, 17, "standard"),
                                                      (15, 15, "renju")])
def test_the_cells_that_make_five_agree_with_the_rules_after_pushes_and_pops(width, height, rule):
    """The kernel keeps each cell's best pattern as stones come and go (threat_kernel.c, set_pat);
    the rules' makes_five is separate code: both must name the same five cells."""
    rng = random.Random(width + height)
    game = get_game("gomoku", width=width, height=height, rule=rule)
    n = width * height
    board = KernelBoard(width, height, rule)
    fives = 0
    for _ in range(8):
        cells = _random_cells(rng, n, rng.randrange(40, 90))
        board.sync(cells)
        pushed = rng.sample([c for c in range(n) if not cells[c]], 12)
        for cell in pushed:                          # a few on, some off again
            board.push(cell, cell % 2)
            cells[cell] = 1 + cell % 2
        for cell in pushed[6:]:
            board.pop(cell)
            cells[cell] = 0
        for cell in (c for c in range(n) if not cells[c]):
            for colour in (0, 1):
                trial = bytearray(cells)
                trial[cell] = colour + 1
                expected = game.makes_five(trial, cell)
                assert board.makes_five(cell, colour) is expected, (cell, colour)
                fives += expected
    assert fives >= 10                               # the positions do have five cells to find


@pytest.mark.parametrize("rule, black_six, white_six", [("freestyle", True, True), ("standard", False, False),
                                                       ("renju", False, True)])
def test_a_six_is_five_where_the_colours_rule_says(rule, black_six, white_six):
    """Renju: black wins with exactly five, white with five or more."""
    for colour, five in ((0, black_six), (1, white_six)):
        board = KernelBoard(15, 15, rule)
        cells = bytearray(225)
        for x in (3, 4, 5, 6, 8):                    # XXXX.X: the gap makes six
            cells[7 * 15 + x] = colour + 1
        board.sync(cells)
        assert board.makes_five(7 * 15 + 7, colour) is five
        assert board.makes_five(7 * 15 + 2, colour)  # .XXXX at the other end: exactly five
        assert not board.makes_five(7 * 15 + 7, 1 - colour)


def test_an_open_three_gives_four_making_cells_to_its_owner_only():
    board = KernelBoard(15, 15, "freestyle")
    cells = bytearray(225)
    for x in (6, 7, 8):
        cells[7 * 15 + x] = 2
    board.sync(cells)
    assert board.makers(1) >= 2 and board.makers(0) == 0
    assert board.rank([7 * 15 + 5, 0], 1) == [7 * 15 + 5, 0]   # the four-maker first


def test_without_the_built_core_the_solver_says_so_in_one_line_and_players_play_without_it(monkeypatch):
    monkeypatch.setattr(threat_kernel, "_library", None)
    monkeypatch.setattr(threat_kernel, "_MODULE", "engine.search._no_such_kernel")   # as after an install without cc
    with pytest.raises(ThreatKernelUnavailable) as error:
        ThreatSolver(get_game("gomoku", width=15))
    assert "C compiler" in str(error.value) and "\n" not in str(error.value)
    game = get_game("gomoku", width=15)
    for player in ("alphabeta", "mcts"):
        built = build_player(game, PlayerOptions(player=player))
        assert built.options.player == player
        assert any("threat solver unavailable" in note for note in built.notes), built.notes
        assert built.searcher.search(game.initial_state(), limits=_nodes(50)).best_move is not None
    chess = build_player(get_game("chess"), PlayerOptions(player="alphabeta"))
    assert not any("threat solver" in note for note in chess.notes)


def _nodes(n: int):
    from engine.types import Limits
    return Limits(nodes=n)


def test_every_renju_foul_is_one_the_kernel_refuses_black():
    """Black's attacks under renju skip the cells may_foul() names: every foul the rules know
    (renju.py, the real threes) must be among them, and most legal cells must not."""
    from engine.games.gomoku.renju import foul

    game = get_game("gomoku", width=15, rule="renju")
    rng = random.Random(15)
    board = KernelBoard(15, 15, "renju")
    fouls = refused_legal = legal = 0
    kinds = set()
    for _ in range(60):
        cells = bytearray(225)
        centre = [y * 15 + x for y in range(3, 12) for x in range(3, 12)]
        for i, cell in enumerate(rng.sample(centre, rng.randrange(16, 40))):
            cells[cell] = 1 + (i % 5 == 4)               # black-heavy: shapes and fouls
        board.sync(cells)
        for cell in (c for c in range(225) if not cells[c]):
            why = foul(cells, game._rays(), cell)
            if why is not None:
                fouls += 1
                kinds.add(why)
                assert board.may_foul(cell), (cell, why)
            else:
                legal += 1
                refused_legal += board.may_foul(cell)
    assert kinds == {"overline", "double-four", "double-three"} and fouls >= 100
    assert refused_legal <= legal // 10, (refused_legal, legal)
