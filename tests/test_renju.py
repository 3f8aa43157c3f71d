"""Renju and caro rules: the foul detector against another engine's answers, hand-built
positions for each kind of foul, and what the rules mean for play (legal moves, wins)."""
from __future__ import annotations

from pathlib import Path

import pytest

from engine.games.base import IllegalMoveError
from engine.games.gomoku import GomokuGame, rule_from_code

DATA = Path(__file__).parent / "data" / "renju_fouls.txt"

# Rapfi (the reference) counts a three only when its extension point makes a straight four
# and nothing more; where that point also makes a five in another line it does not count the
# three.  A five is never forbidden (RIF), so the three is real and the point a double three:
# these three positions, all with a five for black on the board, are where we differ, on
# exactly the point named.
RAPFI_DIFFERS = {"5": (2, 12), "112": (6, 3), "216": (6, 2)}


def board(game: GomokuGame, diagram: str):
    """A position from rows of X (black), O (white), . and * (the point asked about; empty);
    the diagram is placed with its top-left corner at (0, 0)."""
    black, white, star = [], [], None
    for y, row in enumerate(line.split() for line in diagram.strip().splitlines()):
        for x, mark in enumerate(row):
            cell = game.index(x, y)
            if mark == "X":
                black.append(cell)
            elif mark == "O":
                white.append(cell)
            elif mark == "*":
                star = cell
    return black, white, star


def renju_position(diagram: str, *, black_to_move: bool = True):
    game = GomokuGame(15, rule="renju")
    black, white, star = board(game, diagram)
    # far-apart stones that make no line: the colours' counts, nothing more
    filler = [game.index(x, y) for x, y in ((14, 14), (14, 0), (8, 14), (14, 8), (11, 11), (0, 14), (14, 4), (12, 1), (1, 12), (4, 14), (10, 13))]
    need = len(black) - len(white) + (0 if black_to_move else -1)
    white = white + filler[:need] if need > 0 else white
    if need < 0:
        black = black + filler[:-need]
    return game, game.state_from_stones(black, white), star


def _cells(game: GomokuGame, text: str) -> list[int]:
    return [] if text.strip() in ("", "-") else [game.index(*map(int, c.split(","))) for c in text.split()]


def _rapfi_positions():
    game = GomokuGame(15, rule="renju")
    for line in DATA.read_text().splitlines():
        if line.startswith("#") or not line.strip():
            continue
        ident, _, black, white, forbidden, tags = line.split(";")
        yield ident, game, game.state_from_stones(_cells(game, black), _cells(game, white)), \
            sorted(_cells(game, forbidden)), tags


def test_the_foul_detector_agrees_with_rapfi_on_240_positions() -> None:
    positions = list(_rapfi_positions())
    assert len(positions) >= 200
    assert sum(bool(points) for _, _, _, points, _ in positions) >= 150
    assert sum(tags == "recursive" for *_, tags in positions) >= 20
    agreed = 0
    for ident, game, state, points, _ in positions:
        ours = state.forbidden_points()
        if ident in RAPFI_DIFFERS:
            extra = game.index(*RAPFI_DIFFERS[ident])
            assert ours == sorted(points + [extra]), ident
            assert any(game.makes_five(state.cells[:m] + b"\x01" + state.cells[m + 1:], m)
                       for m in state.legal_moves()), f"{ident}: black has a five on the board"
        else:
            assert ours == points, (ident, [game.coords(c) for c in ours], [game.coords(c) for c in points])
            agreed += 1
    assert agreed == len(positions) - len(RAPFI_DIFFERS)


def test_the_compiled_foul_detector_is_the_python_one() -> None:
    """threat_kernel.c's tk_forbidden / tk_foul (what the rules use when it is built) against
    renju.py's Python, on the 240 positions above and on crowded random corners of three board
    shapes: the same points and the same reasons."""
    import random

    from engine.games import get_game
    from engine.games.gomoku.renju import foul, python_forbidden_points
    from engine.games.gomoku.threat_kernel import forbidden_cells, foul_reason

    boards = [state.cells for _, _, state, _, _ in _rapfi_positions()]
    rng = random.Random(36)
    shapes = {(15, 15): boards}
    for width, height in ((20, 20), (13, 17)):
        shapes[(width, height)] = []
        for _ in range(60):
            cells = bytearray(width * height)
            cx, cy = rng.randrange(width), rng.randrange(height)
            near = [y * width + x for y in range(max(0, cy - 5), min(height, cy + 6))
                    for x in range(max(0, cx - 5), min(width, cx + 6))]
            for i, cell in enumerate(rng.sample(near, rng.randrange(8, min(50, len(near))))):
                cells[cell] = 1 + (i % 4 == 3)           # black-heavy: fouls of every kind
            shapes[(width, height)].append(bytes(cells))
    fouls = 0
    for (width, height), positions in shapes.items():
        rays = get_game("gomoku", width=width, height=height, rule="renju")._rays()
        for cells in positions:
            expected = python_forbidden_points(cells, width, height, rays)
            assert forbidden_cells(cells, width, height) == expected
            fouls += len(expected)
            for cell in expected[:3]:
                assert foul_reason(cells, width, height, cell) == foul(bytearray(cells), rays, cell)
    assert fouls >= 500


@pytest.mark.parametrize("diagram, expected", [
    # double three: two open threes cross at *
    ("""
     . . . . . .
     . . . X . .
     . . . X . .
     . X X * . .
     . . . . . .
     . . . . . .
     """, "double-three"),
    # one of the two threes is blocked by white: only one three
    ("""
     . . . . . .
     . . . X . .
     . . . X . .
     O X X * . O
     . . . . . .
     . . . . . .
     """, None),
    # a split three (X X . *) and an open three
    ("""
     . . . . . . .
     . . . . X . .
     . . . . X . .
     . X X . * . .
     . . . . . . .
     . . . . . . .
     """, "double-three"),
    # four and three: allowed
    ("""
     . . . . . . .
     . . . . X . .
     . . . . X . .
     O X X X * . .
     . . . . . . .
     . . . . . . .
     """, None),
    # two fours crossing
    ("""
     . . . . . . . .
     . . . . X . . .
     . . . . X . . .
     . . . . X . . .
     O X X X * . . .
     . . . . O . . .
     """, "double-four"),
    # two fours in one line: X . X X * . X
    ("""
     . . . . . . . . .
     . X . X X * . X .
     . . . . . . . . .
     """, "double-four"),
    # overline
    ("""
     . . . . . . . . .
     . X X X * X X . .
     . . . . . . . . .
     """, "overline"),
    # a five, with an overline-shaped neighbour in another line: the five wins
    ("""
     . . . . X . . .
     . . . . X . . .
     . . . . . . . .
     . . . . X . . .
     X X X X * . . .
     . . . . X . . .
     . . . . X . . .
     """, None),
])
def test_hand_built_fouls(diagram: str, expected: str | None) -> None:
    game, state, star = renju_position(diagram)
    assert state.to_play == 0
    assert state.foul(star) == expected
    assert (star in state.forbidden_points()) == (expected is not None)
    assert (star in state.legal_moves()) == (expected is None)


def test_a_three_whose_only_straight_four_point_is_forbidden_is_no_three(monkeypatch) -> None:
    # Row 3: X X * makes a three only through (4,3) (the edge closes the other side), and
    # (4,3) is an overline point in column 4.  Column 3: X X * is a real three through (3,4)
    # (a four and a three there: allowed).  So * makes one three, not two.
    diagram = """
     . . . . X .
     . . . X X .
     . . . X X .
     . X X * . .
     . . . . X .
     . . . . X .
     """
    from engine.games.gomoku import renju

    game, state, star = renju_position(diagram)
    with_star = bytearray(state.cells)
    with_star[star] = 1
    assert renju.foul(with_star, game._rays(), game.index(4, 3)) == "overline"
    assert renju.foul(with_star, game._rays(), game.index(3, 4)) is None
    assert state.foul(star) is None
    monkeypatch.setattr(renju, "MAX_DEPTH", 0)         # without the recursive check: a foul
    assert state.foul(star) == "double-three"


def test_fouls_are_not_legal_and_playing_one_says_why() -> None:
    game, state, star = renju_position("""
     . . . . . .
     . . . X . .
     . . . X . .
     . X X * . .
     . . . . . .
     """)
    assert star not in state.legal_moves()
    assert not state.is_legal(star)
    with pytest.raises(IllegalMoveError, match="forbidden point for black \\(double-three\\)"):
        state.play(star)
    # white may play there
    white_turn = state.play(game.index(10, 10))
    assert white_turn.is_legal(star) and star in white_turn.legal_moves()


def test_white_wins_by_a_four_whose_block_is_forbidden() -> None:
    # White's diagonal four, closed at (8,8) by black, ends on *, a double-three point for
    # black: black cannot block it.
    game, state, star = renju_position("""
     . . . . . . . . .
     . . . X . . . . .
     . . . X . . . . .
     . X X * . . . . .
     . . . . O . . . .
     . . . . . O . . .
     . . . . . . O . .
     . . . . . . . O .
     . . . . . . . . X
     """)
    assert state.foul(star) == "double-three"
    assert star not in state.legal_moves()
    for reply in state.legal_moves()[:20]:
        after = state.play(reply)
        if after.outcome() is None:
            assert after.play(star).outcome().winner == 1


def test_renju_fives_black_exact_white_any() -> None:
    game, state, _ = renju_position("""
     . . . . . . . . .
     . O O O . O O . .
     . . . . . . . . .
     """, black_to_move=False)
    assert state.to_play == 1
    won = state.play(game.index(4, 1))
    assert won.outcome() is not None and won.outcome().winner == 1      # white's overline wins


@pytest.mark.parametrize("row, point, wins", [
    ("O X X X X * . .", (5, 0), True),     # one end blocked: a win
    ("O X X X X * O .", (5, 0), False),    # both ends blocked by white: no win
    ("X X X X * O . .", (4, 0), True),     # the edge does not block
    (". X X X * X X .", (4, 0), False),    # six or more: not a caro win
])
def test_caro_fives(row: str, point: tuple[int, int], wins: bool) -> None:
    game = GomokuGame(15, rule="caro")
    black, white, _ = board(game, row)
    filler = [game.index(x, 10) for x in range(0, 15, 2)]
    white = white + filler[:len(black) - len(white)]
    state = game.state_from_stones(black, white)
    after = state.play(game.index(*point))
    assert (after.outcome() is not None) == wins


@pytest.mark.parametrize("code, rule, noted", [
    (0, "freestyle", False), (1, "standard", False), (4, "renju", False), (5, "renju", False),
    (8, "caro", False), (9, "caro", False), (2, "freestyle", True), (12, "renju", True),
])
def test_gomocup_rule_codes(code: int, rule: str, noted: bool) -> None:
    assert rule_from_code(code)[0] == rule
    assert (rule_from_code(code)[1] is not None) == noted


DOUBLE_THREE = """
     . . . . . . . . .
     . . . X . . . . .
     . . . X . . . . .
     . X X * . . . . .
     . . . . . . . . .
     """


@pytest.mark.parametrize("player", ["alphabeta", "mcts"])
def test_players_never_play_a_foul_as_black(player: str) -> None:
    from engine.players import PlayerOptions, build_player
    from engine.types import Limits

    game, state, star = renju_position(DOUBLE_THREE)
    freestyle = GomokuGame(15).state_from_stones(
        [c for c, v in enumerate(state.cells) if v == 1], [c for c, v in enumerate(state.cells) if v == 2])
    built = build_player(game, PlayerOptions(player=player))
    limits = Limits(depth=4) if player == "alphabeta" else Limits(nodes=200)
    move = built.searcher.search(state, limits=limits).best_move
    assert move != star and move in state.legal_moves()
    # the same stones under freestyle: the double three is the move alpha-beta wants
    if player == "alphabeta":
        free = build_player(GomokuGame(15), PlayerOptions(player=player))
        assert free.searcher.search(freestyle, limits=limits).best_move == star


FOUL_FOUR = """
     . . . . . . . . .
     . . . X . . . . .
     . . X X . . . . .
     . X X * . . . . .
     . . . . O . . . .
     . . . . . O . . .
     . . . . . . O . .
     . . . . . . . . .
     . . . . . . . . X
     """


def test_alphabeta_as_white_wins_through_black_s_forbidden_point() -> None:
    from engine.players import PlayerOptions, build_player
    from engine.types import Limits

    # White's (7,7) makes a four whose only five point is * = (3,3), black's double three.
    game, state, star = renju_position(FOUL_FOUR, black_to_move=False)
    assert state.to_play == 1
    built = build_player(game, PlayerOptions(player="alphabeta"))
    result = built.searcher.search(state, limits=Limits(depth=4))
    assert result.best_move == game.index(7, 7)
    after = state.play(result.best_move)
    assert star not in after.legal_moves() and after.foul(star) == "double-three"


def test_the_threat_solver_wins_through_black_s_forbidden_point() -> None:
    """White's only win is a four whose block is black's double three: the solver finds it
    under renju (the kernel knows the position's fouls) and not under standard rules."""
    from engine.games.gomoku.threats import ThreatSolver, line_holds
    game, state, star = renju_position(FOUL_FOUR, black_to_move=False)
    result = ThreatSolver(game).vcf(state, nodes=20_000)
    assert result.line is not None and len(result.line) == 3
    four, reply, five = result.line
    assert (four, five) == (game.index(7, 7), star) and state.play(four).is_legal(reply)
    assert line_holds(game, state.cells, 1, result.line)
    standard = GomokuGame(game.width, game.height, rule="standard")
    cells = list(state.cells)
    same = standard.state_from_stones([c for c, v in enumerate(cells) if v == 1], [c for c, v in enumerate(cells) if v == 2])
    assert same.to_play == 1 and ThreatSolver(standard).vcf(same, nodes=20_000).line is None


def test_mcts_as_white_proves_the_win_through_black_s_forbidden_point() -> None:
    from engine.players import PlayerOptions, build_player
    from engine.types import Limits
    game, state, star = renju_position(FOUL_FOUR, black_to_move=False)
    built = build_player(game, PlayerOptions(player="mcts", nodes=64))
    result = built.searcher.search(state, limits=Limits(nodes=64))
    assert result.best_move == game.index(7, 7) and result.value > 0.99


@pytest.mark.parametrize("code, rule", [(0, "freestyle"), (1, "standard"), (4, "renju"), (8, "caro")])
def test_the_gomocup_brain_plays_each_league_rule(code: int, rule: str) -> None:
    """The default brain as a real process: INFO rule picks the rule; against a seeded random
    mover every answer is legal under it (as black under renju: never a forbidden point),
    and a BOARD that baits a double three is answered elsewhere under renju only."""
    import random

    from conftest import console_script, engine_env
    from protocols.gomocup_client import GomocupClient

    game = GomokuGame(15, rule=rule)
    rng = random.Random(code)
    with GomocupClient([console_script("pbrain-plyzero")], env=engine_env()) as client:
        client.start(15, 15)
        client.info("timeout_turn", 300)
        client.info("rule", code)
        # Black's stones bait the double three at * (3,3), the brain to move as black.
        _, baited, star = renju_position(DOUBLE_THREE)
        stones = [(*game.coords(c), 1 if v == 1 else 2) for c, v in enumerate(baited.cells) if v]
        answer = game.index(*client.board(stones, timeout=5.0))
        assert baited.cells[answer] == 0
        if rule == "renju":
            assert answer != star
        state = game.initial_state()
        answer_xy = client.board([], timeout=5.0)     # a new game, the brain black from an empty board
        for _ in range(12):
            move = game.index(*answer_xy)
            assert state.is_legal(move), f"{rule}: illegal brain move {answer_xy}\n{state}"
            state = state.play(move)
            if state.outcome() is not None:
                break
            reply = rng.choice(list(state.legal_moves()))
            state = state.play(reply)
            if state.outcome() is not None:
                break
            answer_xy = client.turn(*game.coords(reply), timeout=5.0)


def test_a_typed_foul_is_refused_with_its_reason() -> None:
    game, state, star = renju_position(DOUBLE_THREE)
    with pytest.raises(IllegalMoveError, match="3,3 is a forbidden point for black \\(double-three\\)"):
        game.parse_move(state, "3,3")
