"""Threat-space search (engine/games/gomoku/threats.py): every proof is checked with the rules alone.

The positions come from tests/data/vcf_positions.txt and, for renju and caro,
vcf_positions_rules.txt (format there).  Nothing recorded is
trusted: each position is solved again and each proof line replayed with GomokuState and
`makes_five` only -- every attacker move makes a four (or the five) and is legal (under
renju never a forbidden point for black), the defender cannot make five instead, the line
wins once the defender faces two five cells, or (renju) one that is a forbidden point for
black; otherwise the reply takes the five cell, and the line ends in the attacker's five.  Refutations are checked by an independent brute-force
VCF search over five-cell windows (no pattern tables).
"""
from __future__ import annotations

import math
import random
from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest

from engine.games import get_game
from engine.games.gomoku import GomokuGame, GomokuState
from engine.games.gomoku.alphabeta import board_maker
from engine.search.alphabeta import AlphaBeta, AlphaBetaConfig
from engine.search.limits import Stopper
from engine.search.mcts import MCTS, MCTSConfig
from engine.games.gomoku.threats import ThreatSolver, TreeProver
from engine.search.tree import Node
from engine.types import Evaluation, Limits

DATA = Path(__file__).parent / "data" / "vcf_positions.txt"
RULES_DATA = Path(__file__).parent / "data" / "vcf_positions_rules.txt"
_DIRS = ((1, 0), (0, 1), (1, 1), (1, -1))


def load_positions(path: Path = DATA) -> list[tuple[str, GomokuState, str, list[int]]]:
    out = []
    for raw in path.read_text().splitlines():
        if not raw.strip() or raw.startswith("#"):
            continue
        name, setup, xs, os_, kind, _plies, moves = (f.strip() for f in raw.split(";"))
        size, rule = setup.split()
        width, height = (int(v) for v in size.split("x"))
        game = get_game("gomoku", width=width, height=height, rule=rule)
        assert isinstance(game, GomokuGame)

        def cells(text: str) -> list[int]:
            return [] if text == "-" else [game.index(*(int(v) for v in c.split(","))) for c in text.split()]
        out.append((name, game.state_from_stones(cells(xs), cells(os_)), kind, cells(moves)))
    return out


POSITIONS = load_positions() + load_positions(RULES_DATA)
VCF = [p for p in POSITIONS if p[2].startswith("vcf")]
REFUTE = [p for p in POSITIONS if p[2] in ("refute", "counter")]


# ---- the independent checker: rules only ----------------------------------------------------
@lru_cache(maxsize=None)
def _windows(width: int, height: int) -> tuple[tuple[int, ...], ...]:
    out = []
    for y in range(height):
        for x in range(width):
            for dx, dy in _DIRS:
                ex, ey = x + 4 * dx, y + 4 * dy
                if 0 <= ex < width and 0 <= ey < height:
                    out.append(tuple((y + k * dy) * width + x + k * dx for k in range(5)))
    return tuple(out)


def five_cells(state: GomokuState, stone: int) -> set[int]:
    """Empty cells where `stone` (1 or 2) completes five under the game's rule."""
    cells, game = state.cells, state.game
    out = set()
    for window in _windows(game.width, game.height):
        values = [cells[c] for c in window]
        if values.count(stone) == 4 and values.count(0) == 1:
            cell = window[values.index(0)]
            trial = bytearray(cells)
            trial[cell] = stone
            if game.makes_five(bytes(trial), cell):
                out.add(cell)
    return out


def stop_cells(state: GomokuState, stone: int) -> set[int]:
    """Legal cells where the side to move's stone leaves `stone` no five: the five cells and,
    under caro (a five blocked at both ends does not win), a far end of a five-to-be whose
    other end is the mover's already.  Only cells within five steps of a five cell on its
    lines can change whether a stone there makes five."""
    game = state.game
    threats = five_cells(state, stone)
    near = {(tx + k * dx) + (ty + k * dy) * game.width
            for t in threats for tx, ty in [game.coords(t)] for dx, dy in _DIRS for k in range(-5, 6)
            if 0 <= tx + k * dx < game.width and 0 <= ty + k * dy < game.height}
    out = set()
    for cell in near:
        if state.is_legal(cell) and not five_cells(state.play(cell), stone):
            out.add(cell)
    return out


def four_moves(state: GomokuState, stone: int) -> set[int]:
    """Empty cells in a five-window holding three `stone`s and nothing else (superset of fours)."""
    cells = state.cells
    out = set()
    for window in _windows(state.width, state.height):
        values = [cells[c] for c in window]
        if values.count(stone) == 3 and values.count(0) == 2:
            out.update(c for c in window if not cells[c])
    return out


def assert_vcf_line(state: GomokuState, line) -> None:
    """Replay a proof line with the rules alone (see the module docstring)."""
    assert line and len(line) % 2 == 1
    attacker = state.to_play
    mine, theirs = attacker + 1, 2 - attacker
    for i, move in enumerate(line):
        if i % 2 == 1:
            stops = stop_cells(state, mine)
            if not stops:
                return     # no one legal stone stops the fives (two of them, a foul, caro's ends): won
            assert stops == {move}, f"ply {i}: the defender's reply {move} is not the only stop {stops}"
        assert state.is_legal(move), f"ply {i}: {move} is not playable"
        if i % 2 == 1:
            state = state.play(move)
            assert state.outcome() is None
            continue
        state = state.play(move)
        if i == len(line) - 1:
            outcome = state.outcome()
            assert outcome is not None and outcome.winner == attacker, "the line must end in a five"
            return
        assert state.outcome() is None
        threats = five_cells(state, mine)
        assert threats, f"ply {i}: attacker move {move} makes no four"
        assert not five_cells(state, theirs), f"ply {i}: the defender could make five instead"


def brute_vcf(state: GomokuState, fours: int, memo: dict) -> bool:
    """Does the side to move win by at most `fours` four-making moves (the five included)?"""
    if fours <= 0 or state.outcome() is not None:
        return False
    key = (state.cells, fours)
    if key in memo:
        return memo[key]
    mine, theirs = state.to_play + 1, 2 - state.to_play
    result = False
    if five_cells(state, mine):
        result = True
    elif fours > 1:
        candidates = stop_cells(state, theirs) if five_cells(state, theirs) else four_moves(state, mine)
        for move in sorted(candidates):
            after = state.play(move)
            threats = five_cells(after, mine)
            if not threats or five_cells(after, theirs):
                continue
            if all(brute_vcf(after.play(reply), fours - 1, memo) for reply in stop_cells(after, mine)):
                result = True
                break
    memo[key] = result
    return result


# ---- the data set -----------------------------------------------------------------------------
def test_data_set_covers_what_it_must():
    solver_lines = {}
    for name, state, kind, _ in VCF:
        solver = ThreatSolver(state.game)
        solver_lines[name] = solver.vcf(state, nodes=200_000).line
    lengths = {len(line) for line in solver_lines.values() if line}
    assert len(VCF) >= 30
    assert min(lengths) <= 5 and max(lengths) >= 11 and all(3 <= n <= 15 for n in lengths)
    for size in (15, 20):
        for rule in ("freestyle", "standard"):
            assert any(s.width == size and s.game.rule == rule for _, s, _, _ in VCF), (size, rule)
    assert any(kind == "vcf-counter" for _, _, kind, _ in VCF)
    assert REFUTE
    renju = [kind for _, s, kind, _ in POSITIONS if s.game.rule == "renju"]
    caro = [kind for _, s, kind, _ in POSITIONS if s.game.rule == "caro"]
    assert len(renju) >= 20 and len(caro) >= 10
    assert "vcf-foul" in renju and "refute" in renju and "refute" in caro


def test_under_renju_a_vcf_through_a_foul_is_no_proof():
    """Black's double four is a win for the exactly-five patterns the kernel searches with and
    a forbidden point under renju: the solver must not call it a win."""
    game = get_game("gomoku", width=15, rule="renju")
    # O X . X X * . X on row 7: * makes two fours in one line (a double four, forbidden)
    black = [game.index(x, 7) for x in (3, 5, 6, 9)] + [game.index(0, 0), game.index(14, 0)]
    white = [game.index(x, 14) for x in (0, 3, 6, 9)] + [game.index(2, 7), game.index(14, 10)]
    state = game.state_from_stones(black, white)
    star = game.index(7, 7)
    assert state.foul(star) == "double-four"
    result = ThreatSolver(game).vcf(state, nodes=20_000)
    assert result.line is None or result.line[0] != star      # (a five on * later is allowed)
    if result.line is not None:
        assert_vcf_line(state, result.line)
    freestyle = get_game("gomoku", width=15, rule="standard")
    plain = ThreatSolver(freestyle).vcf(freestyle.state_from_stones(black, white), nodes=20_000)
    assert plain.line is not None and plain.line[0] == star


@pytest.mark.parametrize("name, state, kind, moves", VCF, ids=[p[0] for p in VCF])
def test_vcf_is_found_and_its_proof_line_replays(name, state, kind, moves):
    result = ThreatSolver(state.game).vcf(state, nodes=200_000)
    assert result.complete and result.line is not None
    assert_vcf_line(state, result.line)
    if kind == "vcf-counter":          # the recorded counter-four shows up on some proof again
        board = board_maker(state.game)(state)
        counter = False
        for i, move in enumerate(result.line[:-1]):
            board.push(move)
            counter = counter or (i % 2 == 1 and board.has_four(1 - state.to_play))
        assert counter or len(result.line) <= 15


@pytest.mark.parametrize("name, state, kind, tempting", REFUTE, ids=[p[0] for p in REFUTE])
def test_defence_sees_that_the_opponents_vcf_refutes_tempting_moves(name, state, kind, tempting):
    solver = ThreatSolver(state.game)
    defence = solver.defences(state, nodes=200_000)
    assert defence.threat is not None and defence.refutations
    for move in tempting:              # each tempting move loses: the opponent's proof replays
        assert move not in defence.refutations
        line = defence.loses(move)
        assert line is not None
        assert_vcf_line(state.play(move), line)
    memo: dict = {}
    for move in sorted(defence.refutations)[:3]:   # a refutation leaves no short VCF (brute force)
        assert not brute_vcf(state.play(move), 3, memo), f"{move} does not refute"
    if kind == "counter":
        board = board_maker(state.game)(state)
        assert defence.refutations <= board.four_cells(state.to_play)


def test_no_vcf_where_there_is_none():
    game = get_game("gomoku", width=15)
    lone_three = game.state_from_stones([game.index(5, 7), game.index(6, 7), game.index(7, 7)],
                                        [game.index(0, 0), game.index(14, 14)])
    solver = ThreatSolver(game)
    # O to move against an open three: O has no VCF, and X's threat needs a defence
    result = solver.vcf(lone_three, nodes=10_000)
    assert result.complete and result.line is None
    defence = solver.defences(lone_three)
    assert defence.threat is not None and defence.refutations
    assert {game.coords(m) for m in defence.refutations} >= {(4, 7), (8, 7)}
    memo: dict = {}
    for move in defence.refutations:
        assert not brute_vcf(lone_three.play(move), 3, memo)


def test_overline_is_no_four_under_standard():
    """X . X X X X O: the gap makes six: a win in freestyle, nothing under standard."""
    for rule, wins in (("freestyle", True), ("standard", False)):
        game = get_game("gomoku", width=15, rule=rule)
        xs = [game.index(x, 7) for x in (2, 4, 5, 6, 7)] + [game.index(3, 3)]
        os_ = [game.index(8, 7), game.index(0, 14), game.index(14, 0), game.index(1, 1), game.index(13, 1),
               game.index(1, 13)]
        state = game.state_from_stones(xs, os_)
        line = ThreatSolver(game).vcf(state, nodes=5_000).line
        assert (line == (game.index(3, 7),)) == wins
        if line is not None:
            assert_vcf_line(state, line)


def _double_three_to_make():
    """X to move, no VCF: (8, 7) makes two open threes at once (a VCT of threes)."""
    game = get_game("gomoku", width=15)
    xs = [game.index(6, 7), game.index(7, 7), game.index(8, 5), game.index(8, 6), game.index(2, 12)]
    os_ = [game.index(0, 0), game.index(14, 14), game.index(0, 14), game.index(14, 0), game.index(1, 1)]
    return game, game.state_from_stones(xs, os_)


def test_vct_wins_with_a_three_where_no_vcf_exists():
    """Two open twos crossing: a move makes a double open three (a win by threes, no four yet)."""
    game, state = _double_three_to_make()
    solver = ThreatSolver(game)
    assert solver.vcf(state, nodes=20_000).line is None
    result = solver.vct(state, nodes=200_000, max_threats=3)
    assert result.line is not None
    assert result.line[0] == game.index(8, 7)   # the crossing: two open threes at once
    board = board_maker(game)(state)
    board.push(result.line[0])
    assert board.open_three_count(0) >= 2


def test_under_renju_both_colours_vcts_are_searched_and_black_never_plays_a_foul():
    """White's renju VCT only lets black defend with more moves than he may; black's attacks
    skip every cell that might be a foul (threat_kernel.c, may_foul).  Here the double three
    that wins for white is a foul for black, so black's VCT must find another way or none."""
    renju = get_game("gomoku", width=15, rule="renju")
    idx = renju.index
    attackers = [idx(6, 7), idx(7, 7), idx(8, 5), idx(8, 6), idx(2, 12)]
    corners = [idx(0, 0), idx(14, 14), idx(0, 14), idx(14, 0), idx(1, 1), idx(14, 7)]
    white = renju.state_from_stones(corners, attackers)
    assert white.to_play == 1
    solver = ThreatSolver(renju)
    result = solver.vct(white, nodes=200_000, max_threats=3)
    assert result.line is not None and result.line[0] == idx(8, 7)
    black = renju.state_from_stones(attackers, corners[:5])
    assert black.to_play == 0 and idx(8, 7) not in black.legal_moves()     # the double three: a foul
    result = solver.vct(black, nodes=200_000, max_threats=3)
    assert result.complete and (result.line is None or result.line[0] != idx(8, 7))


def test_blacks_renju_vcts_play_no_foul_along_their_main_lines_and_every_vcf_holds():
    """Seeded renju games: wherever black has a VCT and no VCF, every move of the main line
    is legal when it is played (black's fouls by the rules, renju.py); every VCF either
    colour finds (no longer replayed unless it ends on a foul) wins under the rules."""
    from engine.games.gomoku.threats import line_holds

    renju = get_game("gomoku", width=15, rule="renju")
    rng = random.Random(36)
    solver = ThreatSolver(renju)
    checked = vcfs = 0
    for _ in range(60):
        state = renju.initial_state().play(renju.index(7, 7))
        while state.outcome() is None and state.ply < 50 and checked < 12:
            vcf = solver.vcf(state, nodes=20_000).line
            if vcf is not None:
                assert line_holds(renju, state.cells, state.to_play, vcf), vcf
                vcfs += 1
            if state.to_play == 0 and vcf is None:
                line = solver.vct(state, nodes=20_000, max_threats=4).line
                if line is not None:
                    walk = state
                    for move in line:
                        assert move in walk.legal_moves(), (line, move)
                        walk = walk.play(move)
                    checked += 1
            near = [c for c in state.legal_moves() if _near(state, c, 2)]
            state = state.play(rng.choice(solver.ranked(state, near)[:4]))
    assert checked >= 12 and vcfs >= 30


def _seeded_positions(seed: int, games: int = 100):
    """States of seeded 15x15 games, each move one of the solver's four best-ranked cells near
    the stones (so the games are full of threes and fours), 60 plies at most each."""
    rng = random.Random(seed)
    game = get_game("gomoku", width=15)
    solver = ThreatSolver(game)
    for _ in range(games):
        state = game.initial_state().play(game.index(7, 7))
        while state.outcome() is None and state.ply < 60:
            near = [c for c in range(game.width * game.height) if not state.cells[c] and _near(state, c, 2)]
            state = state.play(rng.choice(solver.ranked(state, near)[:4]))
            if state.outcome() is None:
                yield state


def _three_first_vct_positions(count: int) -> list[tuple[GomokuState, tuple[int, ...]]]:
    """Positions where the side to move wins by one three and then a VCF, but has no VCF yet."""
    found = []
    for state in _seeded_positions(7):
        if ThreatSolver(state.game).vcf(state, nodes=50_000).line:
            continue
        line = ThreatSolver(state.game).vct(state, nodes=200_000, max_threats=1).line
        if line and not five_cells(state.play(line[0]), state.to_play + 1):
            found.append((state, line))
            if len(found) == count:
                return found
    raise AssertionError(f"only {len(found)} positions won by a three in the seeded games")


def _near(state: GomokuState, cell: int, reach: int) -> bool:
    w = state.width
    x, y = cell % w, cell // w
    return any(state.cells[py * w + px] for py in range(max(0, y - reach), min(state.height, y + reach + 1))
               for px in range(max(0, x - reach), min(w, x + reach + 1)))


def test_a_vct_through_a_three_beats_every_reply_not_only_the_ones_the_solver_tried():
    """The solver answers a three only with the cells of its lines and the defender's fours
    (threat_kernel.c, against_three): checked here against every reply near the stones (the
    defender's fours included), each refuted by a brute-force VCF that knows only the rules."""
    for state, line in _three_first_vct_positions(3):
        after = state.play(line[0])
        replies = [c for c in range(after.width * after.height) if not after.cells[c] and _near(after, c, 4)]
        for reply in replies:
            answer = after.play(reply)
            memo: dict = {}
            assert answer.outcome() is None
            assert any(brute_vcf(answer, fours, memo) for fours in (2, 3, 5, 9, 16)), (line, reply)


def test_the_dependent_first_pass_agrees_with_the_full_search_and_finds_some_vcts_sooner():
    """tk_vct searches the threats that build on each other first, and every three only after
    that found nothing: whenever both searches finish, they say the same (a "none" is never
    claimed from the narrower search), and on some positions the first pass finds the win in
    fewer nodes (so the pass is really searched).  Asked again, a solver whose table holds the
    first pass's failures (which left threes out) still finds what it found."""
    both = sooner = 0
    for state in _seeded_positions(11, games=12):     # two of them need a three the first pass leaves out
        solver = ThreatSolver(state.game)
        dependent = solver.vct(state, nodes=50_000)
        full = ThreatSolver(state.game, dependent_first=False).vct(state, nodes=50_000)
        if dependent.complete and full.complete:
            both += 1
            assert dependent.win == full.win, state.cells
        again = solver.vct(state, nodes=50_000)
        assert again.win == dependent.win or not dependent.complete, state.cells
        if dependent.win:                    # its main line plays out to the attacker's five
            end = state
            for move in dependent.line:
                end = end.play(move)
            assert end.outcome() is not None and end.outcome().winner == state.to_play, dependent.line
        sooner += dependent.win and full.win and dependent.nodes < full.nodes
    assert both >= 150 and sooner >= 1, (both, sooner)


def test_vct_finds_nothing_against_a_lone_two():
    game = get_game("gomoku", width=15)
    state = game.state_from_stones([game.index(7, 7), game.index(8, 7)], [game.index(0, 0), game.index(14, 14)])
    result = ThreatSolver(game).vct(state, nodes=100_000, max_threats=3)
    assert result.line is None and result.complete


def test_budget_that_runs_out_says_so():
    name, state, _, _ = _longest_vcf()
    result = ThreatSolver(state.game).vcf(state, nodes=2)
    assert not result.complete and result.line is None


# ---- the searchers use it ---------------------------------------------------------------------
def _longest_vcf():
    return max(VCF, key=lambda p: len(ThreatSolver(p[1].game).vcf(p[1], nodes=200_000).line or ()))


def test_alphabeta_plays_a_long_vcf_at_once():
    name, state, _, _ = _longest_vcf()
    searcher = AlphaBeta(board_maker(state.game, root_threat_nodes=5_000), AlphaBetaConfig(hash_mb=4))
    result = searcher.search(state, Limits(depth=1))
    assert result.info is not None and result.info.mate_plies is not None
    assert result.info.mate_plies == len(result.info.pv) >= 3
    assert_vcf_line(state, result.info.pv)       # the pv is the proof, and its first move is played
    assert result.best_move == result.info.pv[0]


def test_the_threats_option_switches_the_solver_off_in_both_built_searchers():
    """`threat-solver=off` (arena: `alphabeta:threat-solver=off`) plays as before the solver: the built
    alpha-beta no longer sees a long VCF at depth 1, and MCTS has no prover."""
    from engine.players import PlayerOptions
    from engine.players.build import make_searcher
    name, state, _, _ = _longest_vcf()
    found = make_searcher(state.game, PlayerOptions(player="alphabeta")).search(state, Limits(depth=1))
    assert found.info is not None and found.info.mate_plies is not None and found.info.mate_plies >= 3
    blind = make_searcher(state.game, PlayerOptions(player="alphabeta", threat_solver="off")).search(
        state, Limits(depth=1))
    assert blind.info is None or blind.info.mate_plies is None
    mcts = make_searcher(state.game, PlayerOptions(player="mcts", threat_solver="off"))
    assert mcts.prover is None


def test_alphabeta_restricts_the_root_to_moves_that_stop_the_opponents_vcf():
    for name, state, kind, tempting in REFUTE:
        board = board_maker(state.game, root_threat_nodes=5_000)(state)
        win, allowed = board.root_plan()
        if win is not None:
            continue                       # the side to move has its own VCF: it plays that
        assert allowed is not None and not set(tempting) & set(allowed)
        result = AlphaBeta(board_maker(state.game, root_threat_nodes=5_000), AlphaBetaConfig(hash_mb=4)).search(
            state, Limits(depth=2))
        assert result.best_move in allowed


class Uniform:
    def evaluate(self, states):
        return [Evaluation(priors=[1.0 / len(s.legal_moves())] * len(s.legal_moves()), value=0.0)
                for s in states]


def test_mcts_proves_the_root_win_and_plays_it():
    name, state, _, _ = VCF[0]
    mcts = MCTS(Uniform(), MCTSConfig(seed=1, leaves_per_batch=4), prover=TreeProver(500, 40 * 500))
    result = mcts.search(state, Limits(nodes=50))
    assert result.info is not None and result.info.mate_plies is not None and result.info.mate_plies > 0
    after = state.play(result.best_move)
    assert five_cells(after, state.to_play + 1)     # the first move of a VCF is a four (or five)


def test_mcts_proves_losing_root_moves_against_the_opponents_vcf():
    for name, state, kind, tempting in REFUTE:
        if ThreatSolver(state.game).vcf(state, nodes=50_000).line is not None:
            continue
        mcts = MCTS(Uniform(), MCTSConfig(seed=1, leaves_per_batch=4), prover=TreeProver(1000, 40 * 1000))
        result = mcts.search(state, Limits(nodes=64))
        root = mcts._roots[0]
        assert root is not None and root.proven is not None
        for move in tempting:
            assert root.proven[root.moves.index(move)] < 0      # proven lost
        assert result.best_move not in tempting
        return
    pytest.fail("no refute position without a VCF of the side to move")


def test_tree_prover_solves_a_new_leaf_with_a_vcf_and_leaves_others_alone():
    from engine.games.gomoku.threats import LEAF_FOUR_MAKERS, TreeProver
    from engine.search.tree import Node

    prover = TreeProver(leaf_nodes=5_000, root_nodes=0)
    tried = 0
    for name, state, _, _ in VCF:
        if ThreatSolver(state.game).four_makers(state) < LEAF_FOUR_MAKERS:
            continue                   # not tried at leaves (documented): the root still is
        node = Node(state)
        prover.prove_leaf(node)
        assert node.solved == 1.0 and node.solved_plies >= 3
        assert node.solved_plies == len(ThreatSolver(state.game).vcf(state, nodes=200_000).line or ())
        tried += 1
    assert tried >= 10
    game = get_game("gomoku", width=15)
    quiet = Node(game.state_from_stones([game.index(7, 7)], []))
    prover.prove_leaf(quiet)
    assert quiet.solved is None


class RecordingEvaluator:
    """Uniform priors and a draw's value; keeps every state it was asked about."""

    def __init__(self):
        self.states = []

    def evaluate(self, states):
        self.states.extend(states)
        return [Evaluation(priors=np.full(len(s.legal_moves()), 1.0 / len(s.legal_moves())), value=0.0)
                for s in states]


def test_the_forced_move_is_the_block_of_the_opponents_only_five():
    from engine.games.gomoku.threats import TreeProver

    game = get_game("gomoku", width=15)
    idx = game.index
    fours = [idx(x, 7) for x in (3, 4, 5, 6)]
    prover = TreeProver(leaf_nodes=5_000, root_nodes=0)
    blocked = game.state_from_stones(fours, [idx(2, 7), idx(10, 10), idx(10, 12)])
    assert prover.forced_move(Node(blocked)) == idx(7, 7)
    open_four = game.state_from_stones(fours, [idx(0, 0), idx(10, 10), idx(10, 12)])
    assert prover.forced_move(Node(open_four)) is None            # two fives: lost, nothing to force
    own_four = game.state_from_stones(fours + [idx(0, 14)], [idx(2, 7)] + [idx(x, 12) for x in (9, 10, 11, 12)])
    assert prover.forced_move(Node(own_four)) is None             # its own five comes first
    renju = get_game("gomoku", width=15, rule="renju")
    assert prover.forced_move(Node(renju.state_from_stones(fours, [idx(2, 7), idx(10, 10), idx(10, 12)]))) == idx(7, 7)
    white_four = [idx(x, 7) for x in (3, 4, 5, 6)] + [idx(0, 14), idx(14, 0)]
    overline = [idx(7, y) for y in (4, 5, 6, 8, 9)] + [idx(2, 7)]       # (7, 7) makes black six
    foul_block = renju.state_from_stones(overline, white_four)
    assert foul_block.to_play == 0 and idx(7, 7) not in foul_block.legal_moves()
    assert prover.forced_move(Node(foul_block)) is None           # black may not block: no move is forced
    caro = get_game("gomoku", width=15, rule="caro")
    assert prover.forced_move(Node(caro.state_from_stones(fours, [idx(2, 7), idx(10, 10), idx(10, 12)]))) == idx(7, 7)
    both_ends = caro.state_from_stones(fours + [idx(0, 14)], [idx(2, 7), idx(8, 7), idx(10, 10), idx(10, 12)])
    assert prover.forced_move(Node(both_ends)) is None           # caro: a five blocked at both ends does not win


def test_mcts_evaluates_the_position_after_a_forced_block_not_before_it():
    """A leaf whose only move that does not lose at once is the block of a five is expanded
    with that move alone, from the evaluation of the position after it (one network call
    for two plies): the network sees such a position only right after another one's block."""
    from engine.games.gomoku.threats import TreeProver, winning_cells

    def forced(state):
        cells = bytearray(state.cells)
        return (not winning_cells(state.game, cells, state.to_play)
                and len(winning_cells(state.game, cells, 1 - state.to_play)) == 1)

    evaluator, expanded = RecordingEvaluator(), 0
    for name, state, _, _ in VCF[:12]:
        searcher = MCTS(evaluator, MCTSConfig(seed=1), prover=TreeProver(leaf_nodes=2_000, root_nodes=0))
        searcher.search(state, Limits(nodes=600))
        evaluated = {s.key() for s in evaluator.states}
        stack = [(searcher._roots[0], True)]
        while stack:
            node, after_block = stack.pop()
            here = node.moves is not None and forced(node.state)
            stack.extend((child, here) for child in node.children.values())
            if here and node is not searcher._roots[0]:
                assert list(node.moves) == winning_cells(state.game, bytearray(node.state.cells), 1 - node.state.to_play)
                expanded += 1
                if not after_block:
                    assert node.state.key() not in evaluated, name
    assert expanded >= 5 and len(evaluator.states) > 500


def test_a_forced_block_that_leaves_a_vcf_is_proven_without_the_network():
    """The attacker's four, the defender's forced block, then the attacker's VCF: the block's
    node is proven lost in the one playout that reaches it, before any evaluation."""
    from engine.games.gomoku.threats import LEAF_FOUR_MAKERS, TreeProver, winning_cells

    tried = 0
    for name, state, _, _ in VCF:
        solver = ThreatSolver(state.game)
        line = solver.vcf(state, nodes=200_000).line
        after = state.play(line[0]).play(line[1]) if line and len(line) >= 5 else None
        if after is None or solver.four_makers(after) < LEAF_FOUR_MAKERS:
            continue
        four = state.play(line[0])
        if len(winning_cells(state.game, bytearray(four.cells), state.to_play)) != 1 or line[1] not in four.legal_moves():
            continue                      # an open four, or a block on black's foul: nothing forced
        evaluator = RecordingEvaluator()
        searcher = MCTS(evaluator, MCTSConfig(seed=1), prover=TreeProver(leaf_nodes=200_000, root_nodes=0))
        searcher.search(state, Limits(nodes=1, searchmoves=(line[0],)))
        root = searcher._roots[0]
        forced = root.children[root.moves.index(line[0])]
        assert forced.solved == -1.0 and forced.moves is None, name
        assert root.proven[root.moves.index(line[0])] == 1.0
        assert [s.key() for s in evaluator.states] == [state.key()]      # the root's own evaluation only
        tried += 1
    assert tried >= 5


def test_a_forced_node_reused_as_the_root_answers_over_every_legal_move():
    """The forced reply's node keeps one move in the tree; as the next search's root it gets
    all its legal moves back (a search reports visits per legal move), its subtree kept."""
    from engine.evaluators import UniformEvaluator
    from engine.games.gomoku.threats import TreeProver

    game = get_game("gomoku", width=15)
    idx = game.index
    state = game.state_from_stones([idx(3, 7), idx(4, 7), idx(5, 7), idx(9, 3)],
                                   [idx(2, 7), idx(10, 10), idx(10, 12), idx(12, 3)])
    searcher = MCTS(UniformEvaluator(), MCTSConfig(seed=1), prover=TreeProver(leaf_nodes=2_000, root_nodes=0))
    searcher.search(state, Limits(nodes=60, searchmoves=(idx(6, 7),)))
    forced = searcher._roots[0].children[searcher._roots[0].moves.index(idx(6, 7))]
    assert list(forced.moves) == [idx(7, 7)]
    kept = forced.children[0]
    after = state.play(idx(6, 7))
    result = searcher.search(after, Limits(nodes=100))
    assert searcher._roots[0] is forced and len(result.visits) == len(after.legal_moves())
    assert result.best_move == idx(7, 7) and forced.children[list(after.legal_moves()).index(idx(7, 7))] is kept
    assert max(result.visits) == result.visits[list(after.legal_moves()).index(idx(7, 7))] > 100


def test_a_leaf_deep_below_the_root_is_still_tried_for_a_vcf():
    """Leaves down to LEAF_MAX_DEPTH plies below the last root are tried (40 since matches at 1 s
    kept 12 over 4 and 40 over 12): a VCF position twenty plies below its root is solved."""
    from engine.games.gomoku.threats import LEAF_FOUR_MAKERS

    name, state, _, _ = next(p for p in VCF if ThreatSolver(p[1].game).four_makers(p[1]) >= LEAF_FOUR_MAKERS
                             and p[1].ply >= 22)
    game = state.game
    first = [c for c, v in enumerate(state.cells) if v == 1]
    second = [c for c, v in enumerate(state.cells) if v == 2]
    root = game.state_from_stones(first[10:], second[10:])
    assert root.ply == state.ply - 20
    prover = TreeProver(leaf_nodes=5_000, root_nodes=0)
    prover.prove_root(Node(root))           # an unexpanded root: only the root's ply is noted
    leaf = Node(state)
    prover.prove_leaf(leaf)
    assert leaf.solved == 1.0, name


def test_mcts_exact_values_from_the_solver_are_right():
    """The defender to move, the attacker's VCF still on: the children the solver proves lost
    for the defender really are (the attacker's proof replays in each)."""
    for name, state, _, _ in VCF:
        corner = next(c for c in (0, state.width - 1, state.width * state.height - 1) if not state.cells[c])
        before = state.play(corner)         # the attacker wastes a tempo far away
        if ThreatSolver(state.game).vcf(before, nodes=50_000).line is None:
            break                           # and the defender has no VCF of his own
    else:
        pytest.fail("no position to try")
    mcts = MCTS(Uniform(), MCTSConfig(seed=1, leaves_per_batch=4, root_tactics=False), prover=TreeProver(500, 40 * 500))
    result = mcts.search(before, Limits(nodes=200))
    root = mcts._roots[0]
    assert root is not None and root.proven is not None and (root.proven < 0).any()
    lost = [int(a) for a in (root.proven < 0).nonzero()[0]]
    for a in lost[:10]:
        child = root.children[a]
        assert child.solved == 1.0
        proof = ThreatSolver(state.game).vcf(child.state, nodes=200_000).line
        assert proof is not None
        assert_vcf_line(child.state, proof)
    assert result.best_move is not None and root.moves.index(result.best_move) not in lost or len(lost) == len(root.moves)


def test_alphabeta_leaf_with_a_vcf_scores_as_won_with_leaf_checks_on():
    from engine.games.gomoku.alphabeta import LEAF_VCF_LINES, WIN_SOON

    checked = 0
    for name, state, _, _ in VCF:
        plain = board_maker(state.game)(state)
        if (plain.four_lines(state.to_play) < LEAF_VCF_LINES or plain.open_three_count(state.to_play)
                or plain.evaluate() >= WIN_SOON // 2):
            continue                    # not tried at leaves, or already scored as won by its patterns
        board = board_maker(state.game, threat_nodes=50_000)(state)
        proof = ThreatSolver(state.game).vcf(state, nodes=200_000).line
        assert proof is not None
        assert board.evaluate() == WIN_SOON - len(proof)
        assert plain.evaluate() < WIN_SOON // 2       # without the solver: not seen
        checked += 1
    assert checked >= 5


def _vct_threat_defender_to_move():
    """O to move; X has no VCF but threatens a VCT (if O passed: (7, 9), (6, 9), ...).  Found
    by a random search and checked over every legal move: only (11, 6), (9, 8), (7, 10) hold."""
    game = get_game("gomoku", width=15)
    xs = [game.index(x, y) for x, y in ((8, 9), (9, 9), (8, 5), (5, 9), (10, 7))]
    os_ = [game.index(x, y) for x, y in ((10, 10), (5, 10), (4, 6), (8, 8))]
    return game, game.state_from_stones(xs, os_)


def test_vct_check_finds_the_moves_that_walk_into_the_opponents_vct():
    game, state = _vct_threat_defender_to_move()
    far = [game.index(13, 13), game.index(1, 13), game.index(13, 1)]
    block = game.index(9, 8)
    check = ThreatSolver(game).vct_losing_moves(state, far + [block], nodes=50_000, enough=10)
    assert check.threat is not None
    assert set(far) <= set(check.losing)
    for move in far:                        # each is a real VCT for the attacker, found again
        line = ThreatSolver(game).vct(state.play(move), nodes=50_000).line
        assert line is not None and line[0] == check.losing[move][0]
    assert check.holding == (block,)
    quiet = game.state_from_stones([game.index(7, 7)], [game.index(0, 0)])
    assert ThreatSolver(game).vct_losing_moves(quiet, quiet.legal_moves()).threat is None


def test_mcts_proves_root_moves_lost_to_the_opponents_vct_and_avoids_them():
    game, state = _vct_threat_defender_to_move()
    solver = ThreatSolver(game)
    assert solver.vcf(state, nodes=50_000).line is None and solver.defences(state).threat is None
    mcts = MCTS(Uniform(), MCTSConfig(seed=1, leaves_per_batch=4), prover=TreeProver(100, 4000, vct_nodes=20_000))
    result = mcts.search(state, Limits(nodes=64))
    root = mcts._roots[0]
    assert root is not None and root.proven is not None
    lost = [root.moves[a] for a in (root.proven < 0).nonzero()[0]]
    assert len(lost) >= 3                   # uniform priors: the first moves tried are far away
    for move in lost[:3]:
        assert ThreatSolver(game).vct(state.play(move), nodes=50_000).line is not None
    assert result.best_move not in lost
    assert result.best_move in {game.index(x, y) for x, y in ((11, 6), (9, 8), (7, 10))}
    no_vct = MCTS(Uniform(), MCTSConfig(seed=1, leaves_per_batch=4), prover=TreeProver(100, 4000))
    no_vct.search(state, Limits(nodes=64))
    assert no_vct._roots[0].proven is None or not (no_vct._roots[0].proven < 0).any()


def _refuted_only_past_4000_nodes():
    """From loop11's games against Rapfi (20x20, 1 s per turn; benchmarks/vct_blunders.py's
    suite): the first player to move, the second threatens a VCT; (14, 11) was played, after
    which the VCT needs about 8,300 solver nodes.  (The position this test had, from MCTS's
    games against alpha-beta, needed 2,000 nodes before the dependent first pass, under 1,000 now.)"""
    game = get_game("gomoku", width=20)
    moves = ["11,9", "12,9", "8,11", "11,8", "13,10", "10,7", "12,11", "9,6", "8,5", "9,8", "11,12", "10,13",
             "10,11", "9,7", "11,11", "9,11", "9,9", "12,7", "11,13", "11,10"]
    return game.state_from_moves([game.index(*map(int, m.split(","))) for m in moves]), game.index(14, 11)


def test_deepening_the_vct_check_refutes_a_move_that_a_small_budget_lets_through():
    state, played = _refuted_only_past_4000_nodes()
    shallow = ThreatSolver(state.game).vct_losing_moves(state, [played], nodes=1000)
    assert shallow.threat is not None and played in shallow.holding and not shallow.losing
    solver = ThreatSolver(state.game)
    solver.stop = lambda: False                     # a timed search that still has time
    deep = solver.vct_losing_moves(state, [played], nodes=1000, deepen_to=16_000)
    assert played in deep.losing and not deep.holding
    after = state.play(played)
    line = deep.losing[played]
    assert after.to_play != state.to_play and line[0] in after.legal_moves()
    assert ThreatSolver(state.game).vct(after, nodes=20_000).win      # found again independently
    # and deepening stops when the time is up
    solver = ThreatSolver(state.game)
    solver.stop = lambda: True
    assert played not in solver.vct_losing_moves(state, [played], nodes=1000, deepen_to=16_000).losing


def test_verify_choice_proves_the_chosen_move_lost_past_the_first_budget_and_checks_the_next():
    state, played = _refuted_only_past_4000_nodes()
    root = Node(state)
    root.expand(Uniform().evaluate([state])[0])
    a = root.moves.index(played)
    choices: list[int] = []

    def choose() -> int:      # MCTS's choice: the played move while it stands, then the next best
        pick = a if root.proven is None or math.isnan(root.proven[a]) else (a + 1) % len(root.moves)
        choices.append(pick)
        return pick

    prover = TreeProver(30, 1200, vct_nodes=1000)
    prover.prove_root(root)                  # no clock: 1,000-node checks only, the played move holds
    assert root.proven is None or math.isnan(root.proven[a])
    prover.verify_choice(root, choose, Stopper(Limits(time=3.0)))
    assert root.proven is not None and root.proven[a] < 0 and root.proven_plies[a] >= 3
    assert choices[:3] == [a, a, a] and (a + 1) % len(root.moves) in choices   # 1,000 and 4,000 held, 16,000 refuted
    after = root.children[a].state
    assert ThreatSolver(state.game).vct(after, nodes=20_000).win
    # no VCT checks configured, out of time, or no root check that left a doubt: nothing is proven
    for prover, stopper, checked in ((TreeProver(30, 1200, vct_nodes=0), Stopper(Limits(time=3.0)), True),
                                     (TreeProver(30, 1200, vct_nodes=1000), Stopper(Limits(time=0.0)), True),
                                     (TreeProver(30, 1200, vct_nodes=1000), Stopper(Limits(time=3.0)), False)):
        fresh = Node(state)
        fresh.expand(Uniform().evaluate([state])[0])
        if checked:
            prover.prove_root(fresh)
        before = None if fresh.proven is None else fresh.proven.copy()
        prover.verify_choice(fresh, lambda: a, stopper)
        assert (fresh.proven is None) if before is None else np.array_equal(fresh.proven, before, equal_nan=True)


def _refuted_past_1000_with_defences_left():
    """From MCTS's lost games against alpha-beta (20x20, 1 s per move): X to move against O's
    VCT threat; X played (11, 9), refuted by a VCT of about 3,700 nodes, while (11, 13) and
    (15, 13) hold at 20,000."""
    game = get_game("gomoku", width=20)
    moves = ["12,10", "11,11", "10,11", "10,10", "12,12", "12,11", "11,12", "13,12", "13,11", "11,10",
             "14,13", "10,9", "9,8"]
    return game.state_from_moves([game.index(*map(int, m.split(","))) for m in moves]), game.index(11, 9)


def test_timed_mcts_deepens_its_own_vct_past_the_first_budget_and_plays_the_win():
    """The root's own VCT gets vct_nodes, then more while a share of the clock lasts."""
    def past_the_first_budget(s: GomokuState) -> bool:
        if ThreatSolver(s.game).vcf(s, nodes=50_000).win or ThreatSolver(s.game).vct(s, nodes=1000).win:
            return False
        deeper = ThreatSolver(s.game).vct(s, nodes=64_000)
        return deeper.win and 4000 < deeper.nodes < 64_000

    state = next((s for s in _seeded_positions(11) if past_the_first_budget(s)), None)
    assert state is not None, "no position with a VCT past 1,000 nodes in the seeded games"
    config = MCTSConfig(seed=1, leaves_per_batch=4)
    result = MCTS(Uniform(), config, prover=TreeProver(30, 1200, vct_nodes=1000)).search(state, Limits(time=2.0))
    assert result.info is not None and result.info.mate_plies is not None and result.info.mate_plies > 0
    assert result.value == pytest.approx(1.0)
    untimed = MCTS(Uniform(), config, prover=TreeProver(30, 1200, vct_nodes=1000)).search(state, Limits(nodes=8))
    assert untimed.info is None or untimed.info.mate_plies is None      # without a clock: the first budget only


def test_timed_mcts_keeps_time_to_verify_its_choice_and_plays_another_move():
    state, played = _refuted_past_1000_with_defences_left()
    assert ThreatSolver(state.game).vct_after(state, played, nodes=1000).line is None
    assert ThreatSolver(state.game).vct_after(state, played, nodes=4000).line is not None

    class Favourite:        # the network's darling is the refuted move
        def evaluate(self, states):
            out = []
            for s in states:
                moves = s.legal_moves()
                priors = np.full(len(moves), 0.1 / max(1, len(moves) - 1))
                if s.key() == state.key():
                    priors[moves.index(played)] = 0.9
                out.append(Evaluation(priors=priors / priors.sum(), value=0.0))
            return out

    config = MCTSConfig(seed=1, leaves_per_batch=4)
    prover = lambda: TreeProver(30, 1200, vct_nodes=1000, vct_share=0.01)  # noqa: E731
    result = MCTS(Favourite(), config, prover=prover()).search(state, Limits(time=3.0))
    assert result.best_move != played and result.value > -1.0
    assert not ThreatSolver(state.game).vct_after(state, result.best_move, nodes=4000).win
    untimed = MCTS(Favourite(), config, prover=prover()).search(state, Limits(nodes=200))
    assert untimed.best_move == played          # nodes only: no clock to keep time from, no check


@pytest.mark.parametrize("rule", ["caro", "renju", "freestyle"])
def test_the_replay_on_the_kernels_board_agrees_with_the_scan(rule):
    """ThreatSolver._line_holds (five cells off the kernel's patterns) against line_holds's
    scan of every cell, on the kernel's raw VCF lines of seeded games (caro: every one is
    replayed, some fail) and on the same lines cut short or with a reply changed."""
    from engine.games.gomoku.threats import line_holds

    game = get_game("gomoku", width=15, rule=rule)
    rng = random.Random(37)
    solver = ThreatSolver(game)
    compared = held = 0
    for _ in range(40):
        state = game.initial_state().play(game.index(7, 7))
        while state.outcome() is None and state.ply < 50:
            solver.sync(state.cells)
            line, _, _ = solver.kernel.vcf(state.to_play, 20_000, 20, None, game.fouls and state.to_play == 1)
            if line:
                variants = [line, line[:-2], line[:1] + tuple(reversed(line[1:]))]
                for variant in variants:
                    expected = line_holds(game, state.cells, state.to_play, variant)
                    assert solver._line_holds(state.to_play, variant) == expected, (variant, rule)
                    assert bytes(solver._cells()) == state.cells          # the kernel's board as it was
                    compared += 1
                    held += expected
            near = [c for c in state.legal_moves() if _near(state, c, 2)]
            state = state.play(rng.choice(solver.ranked(state, near)[:4]))
    assert compared >= 60 and 10 <= held < compared


def test_caros_replay_refuses_a_four_whose_five_would_be_blocked_at_both_ends():
    """X at (3..6, 7) between O at (2, 7) and (8, 7): (7, 7) would make a five blocked at both
    ends, no win under caro, so the line that starts with that "four" fails at once, though
    its third move makes an open four (the kernel's exactly-five patterns call both fours)."""
    from engine.games.gomoku.threats import line_holds

    game = get_game("gomoku", width=15, rule="caro")
    idx = game.index
    state = game.state_from_stones([idx(4, 7), idx(5, 7), idx(6, 7), idx(10, 3), idx(10, 4), idx(10, 5)],
                                   [idx(2, 7), idx(8, 7), idx(0, 0), idx(14, 14), idx(0, 14), idx(14, 0)])
    line = (idx(3, 7), idx(7, 7), idx(10, 6), idx(10, 7))
    solver = ThreatSolver(game)
    solver.sync(state.cells)
    assert not line_holds(game, state.cells, 0, line)
    assert not solver._line_holds(0, line)
    assert line_holds(game, state.cells, 0, (idx(10, 6), idx(10, 2), idx(10, 7))) is True
    assert solver._line_holds(0, (idx(10, 6), idx(10, 2), idx(10, 7))) is True


def test_under_caro_a_four_has_a_second_stop_at_the_far_end_of_its_five():
    """Caro's fives blocked at both ends do not win, so the defender may answer a four whose
    five-to-be is already blocked at one end by taking its other end, and an open four whose
    two fives share a blocked end by one stone.  Neither line is a forced win; the same lines
    hold under standard (exactly five), where the five cell is the only stop."""
    from engine.games.gomoku.threats import line_holds, stopping_cells

    caro = get_game("gomoku", width=15, rule="caro")
    standard = get_game("gomoku", width=15, rule="standard")
    idx = caro.index
    # X's column (6, 4..6) is blocked by O at (6, 7): X (6, 2) threatens (6, 3), but O at (6, 1)
    # closes the five's other end; the line goes on (7, 3), (5, 1)... as if (6, 3) were forced.
    moves = [96, 127, 113, 111, 95, 97, 83, 128, 82, 126, 125, 110, 81, 80, 68, 53, 84, 85, 69, 130,
             129, 39, 66, 65]                         # a caro game between our players
    line = (idx(6, 2), idx(6, 3), idx(7, 3), idx(5, 1), idx(10, 6))
    state = caro.state_from_moves(moves)
    cells = bytearray(state.cells)
    cells[idx(6, 2)] = 1
    assert stopping_cells(caro, cells, 0, [idx(6, 3)]) == [idx(6, 1), idx(6, 3)]
    assert not line_holds(caro, state.cells, 0, line)
    assert ThreatSolver(caro).vcf(state, nodes=20_000).line is None
    assert line_holds(standard, state.cells, 0, line)
    assert ThreatSolver(standard).vcf(standard.state_from_moves(moves), nodes=20_000).line == line
    # O's open four on the diagonal (7, 5)..(4, 8): its fives at (8, 4) and (3, 9); X at (3, 9)
    # takes one and closes the other's far end ((9, 3) is X's already).
    x = [idx(9, 3), idx(7, 6), idx(7, 7), idx(9, 7)]
    o = [idx(7, 5), idx(6, 6), idx(5, 7)]
    line = (idx(4, 8), idx(8, 4), idx(3, 9))
    state = caro.state_from_stones(x, o)
    assert not line_holds(caro, state.cells, 1, line)
    assert line_holds(standard, standard.state_from_stones(x, o).cells, 1, line)
