"""Neural MCTS with scripted evaluators: tactics, counting, batching, reuse, noise, stop."""
from __future__ import annotations

import random
import threading
import time

import numpy as np
import pytest

from engine.evaluators import UniformEvaluator
from engine.games import get_game
from engine.search.mcts import MCTS, MCTSConfig
from engine.types import Evaluation, Limits


class CountingEvaluator:
    """Uniform priors; records every batch it is asked to evaluate."""

    def __init__(self, value=lambda state: 0.0, delay: float = 0.0):
        self.batches: list[list] = []
        self.value = value
        self.delay = delay

    def evaluate(self, states):
        self.batches.append(list(states))
        if self.delay:
            time.sleep(self.delay)
        return [Evaluation(priors=np.full(len(s.legal_moves()), 1.0 / len(s.legal_moves())),
                           value=self.value(s)) for s in states]


def gomoku(width=15):
    return get_game("gomoku", width=width, height=width)


def four_for_x(game, open_ends: bool):
    """X (first player) has four in a row on the middle row, x = 3..6, O's stones are far
    away, and X is to move; or (open_ends False) O is to move, with a stone on x = 2 that
    leaves x = 7 as X's only winning cell."""
    idx, row = game.index, game.height // 2
    xs = [idx(x, row) for x in (3, 4, 5, 6)]
    os_ = [idx(0, 0), idx(0, 2), idx(8, 0)] + [idx(8, 8) if open_ends else idx(2, row)]
    if not open_ends:
        xs.append(idx(8, 8))
    moves = []
    for i, x in enumerate(xs):
        moves.append(x)
        if i < len(os_):
            moves.append(os_[i])
    return game.state_from_moves(moves)


def ends(game):
    row = game.height // 2
    return (f"2,{row}", f"7,{row}")


def random_position(game, rng: random.Random, plies: int):
    state = game.initial_state()
    for _ in range(plies):
        if state.outcome() is not None:
            break
        state = state.play(rng.choice(list(state.legal_moves())))
    return state


def mcts(evaluator=None, **config):
    config.setdefault("seed", 1)
    return MCTS(evaluator or UniformEvaluator(), MCTSConfig(**config))


# --- tactics ------------------------------------------------------------------------------

def test_mcts_takes_gomoku_win_in_one():
    game = gomoku()
    state = four_for_x(game, open_ends=True)
    assert state.to_play == 0
    result = mcts().search(state, Limits(nodes=200))
    assert game.format_move(state, result.best_move) in ends(game)
    assert result.info.mate_plies == 1 and result.value == 1.0


def test_mcts_blocks_gomoku_four():
    game = gomoku()
    state = four_for_x(game, open_ends=False)       # X four 3..6 blocked at 2,7; O to move
    assert state.to_play == 1
    result = mcts().search(state, Limits(nodes=200))
    assert game.format_move(state, result.best_move) == ends(game)[1]


@pytest.mark.parametrize("root_tactics", [True, False])
def test_mcts_takes_chess_mate_in_one(root_tactics):
    """Found by the root scan, or without it by the in-tree solver (exact terminal values)."""
    game = get_game("chess")
    state = game.state_from_fen("6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1")
    result = mcts(root_tactics=root_tactics).search(state, Limits(nodes=200))
    assert game.format_move(state, result.best_move) == "d1d8"
    assert result.info.mate_plies == 1


def _allows_mate_in_one(state, move) -> bool:
    after = state.play(move)
    return any(after.play(r).outcome() is not None and after.play(r).outcome().winner == after.to_play
               for r in after.legal_moves())


def test_mcts_stops_chess_mate_in_one():
    game = get_game("chess")
    # Black threatens Rd1#; White has many irrelevant knight and king moves that lose.
    state = game.state_from_fen("3r2k1/5ppp/8/8/8/8/5PPP/N5K1 w - - 0 1")
    losing = [m for m in state.legal_moves() if _allows_mate_in_one(state, m)]
    assert 0 < len(losing) < len(state.legal_moves())
    for seed in (1, 2, 3):
        result = mcts(seed=seed).search(state, Limits(nodes=100))
        assert result.best_move not in losing


def _after_knight_dance(game):
    """Black to move after 1. Nf3 Nf6 2. Ng1: 2... Ng8 brings back the start position."""
    state = game.initial_state()
    for uci in ("g1f3", "g8f6", "f3g1"):
        state = state.play(game.parse_move(state, uci))
    return state, game.parse_move(state, "f6g8")


def test_a_chess_position_seen_before_is_repeated_but_not_a_game_end():
    game = get_game("chess")
    state, back = _after_knight_dance(game)
    assert not state.repeated() and not game.initial_state().repeated()
    again = state.play(back)
    assert again.repeated() and again.outcome() is None


@pytest.mark.parametrize("black_stands", [0.6, -0.6])
def test_search_scores_a_repetition_as_a_draw(black_stands):
    """Black ahead (every position worth +0.6 to Black) steers clear of the repeating
    2... Ng8, a draw to search; Black behind (-0.6) takes it."""
    game = get_game("chess")
    state, back = _after_knight_dance(game)
    value = lambda s: black_stands if s.to_play == 1 else -black_stands
    search = mcts(CountingEvaluator(value), leaves_per_batch=4)
    result = search.search(state, Limits(nodes=300))
    back_visits = result.visits[list(state.legal_moves()).index(back)]
    if black_stands > 0:
        assert result.best_move != back and back_visits <= 2
    else:
        assert result.best_move == back


def test_a_repetition_reached_in_the_game_is_searched_from_again():
    """The tree's draw for Ng8 is search's score, not an end: once the game reaches the
    position, the reused node is a root that searches and answers."""
    game = get_game("chess")
    state, back = _after_knight_dance(game)
    search = mcts(CountingEvaluator(lambda s: -0.6 if s.to_play == 1 else 0.6), leaves_per_batch=4)
    assert search.search(state, Limits(nodes=100)).best_move == back
    again = state.play(back)
    result = search.search(again, Limits(nodes=100))
    assert result.best_move in again.legal_moves() and sum(result.visits) >= 100


def test_mcts_proves_a_lost_root_and_still_answers():
    # X has an open four and O is to move: every O move loses at once.
    game9 = gomoku(9)
    idx = game9.index
    moves = [idx(2, 4), idx(0, 0), idx(3, 4), idx(0, 2), idx(4, 4), idx(0, 6), idx(5, 4)]
    lost = game9.state_from_moves(moves)
    result = mcts().search(lost, Limits(nodes=100))
    assert result.best_move in lost.legal_moves()
    assert result.info.mate_plies == -2 and result.value == -1.0


def test_one_tree_playing_both_sides_answers_from_a_proven_child():
    """Self-play reuses the child just played; one proven lost by the tactics scan (the
    opponent wins at once) must still be expanded and answer with the win."""
    game = gomoku(9)
    idx = game.index
    lost = game.state_from_moves([idx(2, 4), idx(0, 0), idx(3, 4), idx(0, 2), idx(4, 4), idx(0, 6),
                                  idx(5, 4)])
    search = mcts()
    first = search.search(lost, Limits(nodes=50))
    after = lost.play(first.best_move)
    second = search.search(after, Limits(nodes=50))
    assert second.best_move in (idx(1, 4), idx(6, 4)) and second.info.mate_plies == 1


# --- counting, legality, determinism --------------------------------------------------------

class LastMoveProver:
    """A scripted solver: every leaf reached by `move` is a proven win for its side to move."""

    def __init__(self, move) -> None:
        self.move, self.proved = move, 0

    def prove_root(self, root, stopper=None) -> None:
        pass

    def prove_leaf(self, leaf) -> None:
        if leaf.state.last_move == self.move:
            leaf.solved, leaf.solved_plies = 1.0, 1
            self.proved += 1

    def forced_move(self, leaf):
        return None

    def verify_reserve(self, roots, stopper) -> float:
        return 0.0

    def verify_choice(self, root, choose, stopper, veto) -> None:
        pass


def test_a_leaf_the_solver_proves_is_not_sent_to_the_evaluator():
    """The leaf check runs before the network: a third of gomoku's leaves are proven by
    it, and their evaluations were spent for nothing."""
    game = gomoku(9)
    evaluator, prover = CountingEvaluator(), LastMoveProver(game.index(0, 0))
    result = MCTS(evaluator, MCTSConfig(seed=1), prover=prover).search(game.initial_state(), Limits(nodes=300))
    seen = [state for batch in evaluator.batches for state in batch]
    assert prover.proved > 0 and len(seen) > 100
    assert all(state.last_move != prover.move for state in seen)
    assert result.best_move != prover.move       # proven lost for the root's side, and known to be


def test_root_visits_sum_to_the_node_limit():
    """Playouts exclude the root's own first evaluation, so visits sum to exactly nodes."""
    for game in (gomoku(9), get_game("chess")):
        for batch in (1, 7, 16):
            result = mcts(leaves_per_batch=batch).search(game.initial_state(), Limits(nodes=300))
            assert sum(result.visits) == 300 == result.info.nodes
            assert len(result.visits) == len(game.initial_state().legal_moves())


@pytest.mark.parametrize("game_name", ["chess", "gomoku"])
def test_mcts_never_returns_an_illegal_move_and_pv_is_legal(game_name):
    game = get_game(game_name) if game_name == "chess" else gomoku(9)
    rng = random.Random(11)
    for i in range(12):
        state = random_position(game, rng, rng.randrange(0, 40))
        if state.outcome() is not None:
            continue
        search = mcts(seed=i, leaves_per_batch=rng.choice([1, 4, 16]), noise=bool(i % 2),
                      temperature=0.5 * (i % 3))
        result = search.search(state, Limits(nodes=60))
        assert result.best_move in state.legal_moves()
        node = state
        for move in result.info.pv:
            assert move in node.legal_moves()
            node = node.play(move)


def test_terminal_root_has_no_move():
    game = gomoku(9)
    idx = game.index
    moves = [idx(0, 0), idx(0, 1), idx(1, 0), idx(1, 1), idx(2, 0), idx(2, 1), idx(3, 0), idx(3, 1),
             idx(4, 0)]
    state = game.state_from_moves(moves)
    assert state.outcome() is not None
    result = mcts().search(state, Limits(nodes=10))
    assert result.best_move is None and result.value == -1.0


def test_search_many_equals_single_searches_with_the_same_seed():
    game = gomoku(9)
    rng = random.Random(3)
    states = [random_position(game, rng, n) for n in (0, 3, 6, 9)]
    config = dict(seed=42, noise=True, temperature=1.0, leaves_per_batch=8)
    counting = CountingEvaluator()
    batched = MCTS(counting, MCTSConfig(**config)).search_many(states, Limits(nodes=80))
    singles = [MCTS(UniformEvaluator(), MCTSConfig(**config)).search(s, Limits(nodes=80))
               for s in states]
    assert [r.best_move for r in batched] == [r.best_move for r in singles]
    assert [r.visits for r in batched] == [r.visits for r in singles]
    # One evaluator call per step serves all trees: the first call holds all four roots.
    assert len(counting.batches[0]) == 4
    assert max(len(b) for b in counting.batches) > 8


def test_search_many_seeds_give_each_tree_its_own_noise():
    game = gomoku(9)
    state = game.initial_state()
    search = mcts(noise=True, temperature=1.0, leaves_per_batch=4)
    results = search.search_many([state] * 6, Limits(nodes=40), seeds=list(range(6)))
    assert len({r.visits for r in results}) > 1


def test_value_is_from_the_side_to_move_and_negated_per_ply():
    game = gomoku(9)
    first_wins = CountingEvaluator(value=lambda s: 0.8 if s.to_play == 0 else -0.8)
    root = game.initial_state()
    assert mcts(first_wins).search(root, Limits(nodes=100)).value == pytest.approx(0.8)
    second = root.play(40)
    assert mcts(first_wins).search(second, Limits(nodes=100)).value == pytest.approx(-0.8)


# --- batching --------------------------------------------------------------------------------

def test_evaluator_gets_batches_up_to_leaves_per_batch_without_duplicates():
    for game in (gomoku(9), get_game("chess")):
        counting = CountingEvaluator()
        result = mcts(counting, leaves_per_batch=8).search(game.initial_state(), Limits(nodes=200))
        sizes = [len(b) for b in counting.batches]
        assert max(sizes) <= 8 and max(sizes) > 1
        assert sum(result.visits) == 200
        for batch in counting.batches:
            keys = [s.key() for s in batch]
            assert len(set(keys)) == len(keys)
        # every evaluated state is evaluated once: at most one call per distinct position
        assert sum(sizes) <= 201


def test_batch_of_one_is_one_leaf_per_call():
    counting = CountingEvaluator()
    mcts(counting, leaves_per_batch=1).search(gomoku(9).initial_state(), Limits(nodes=50))
    assert {len(b) for b in counting.batches} == {1}


# --- reuse, noise, searchmoves ---------------------------------------------------------------

def test_subtree_reuse_keeps_visits_of_the_position_reached():
    game = gomoku(9)
    search = mcts(leaves_per_batch=4)
    root = game.initial_state()
    first = search.search(root, Limits(nodes=400))
    move = first.best_move
    reply = first.info.pv[1]
    later = root.play(move).play(reply)
    reused = search.search(later, Limits(nodes=50))
    assert sum(reused.visits) > 50
    search.new_game()
    fresh = search.search(later, Limits(nodes=50))
    assert sum(fresh.visits) == 50


def test_dirichlet_noise_only_when_enabled_and_only_over_legal_moves():
    game = gomoku(9)
    state = game.state_from_moves([40, 41, 30])
    legal = len(state.legal_moves())
    quiet = mcts(noise=False)
    quiet.search(state, Limits(nodes=20))
    np.testing.assert_allclose(quiet._roots[0].prior, np.full(legal, 1.0 / legal), rtol=1e-6)
    noisy = mcts(noise=True, dirichlet_alpha=0.3)
    noisy.search(state, Limits(nodes=20))
    prior = noisy._roots[0].prior
    assert prior.shape == (legal,) and prior.sum() == pytest.approx(1.0)
    assert not np.allclose(prior, 1.0 / legal)
    # a later search without noise from the same tree drops it again
    quiet_again = MCTS(UniformEvaluator(), MCTSConfig(seed=1))
    quiet_again._roots = noisy._roots
    quiet_again.search(state, Limits(nodes=5))
    np.testing.assert_allclose(quiet_again._roots[0].prior, np.full(legal, 1.0 / legal), rtol=1e-6)


def test_searchmoves_restricts_the_root():
    game = get_game("chess")
    state = game.initial_state()
    allowed = tuple(game.parse_move(state, m) for m in ("a2a3", "h2h3"))
    result = mcts().search(state, Limits(nodes=60, searchmoves=allowed))
    assert result.best_move in allowed
    for move, count in zip(state.legal_moves(), result.visits):
        assert count == 0 or move in allowed


# --- limits, stop, info ----------------------------------------------------------------------

def test_stop_from_another_thread_returns_quickly():
    game = gomoku(15)
    stop = threading.Event()
    search = mcts(CountingEvaluator(delay=0.002), leaves_per_batch=16)
    out = {}

    def run():
        out["result"] = search.search(game.initial_state(), Limits(infinite=True), stop=stop)
        out["end"] = time.monotonic()

    thread = threading.Thread(target=run)
    thread.start()
    time.sleep(0.3)
    assert thread.is_alive()
    stop.set()
    set_at = time.monotonic()
    thread.join(5.0)
    assert not thread.is_alive()
    assert out["end"] - set_at < 0.1 + 0.4            # 100 ms plus slack for a loaded machine
    assert out["result"].best_move in game.initial_state().legal_moves()


class OneCellEvaluator:
    """Priors that put most of the mass on one cell (the network's favourite), value 0."""

    def __init__(self, favourite: str):
        self.favourite = favourite

    def evaluate(self, states):
        out = []
        for state in states:
            moves = state.legal_moves()
            priors = np.full(len(moves), 0.2 / len(moves))
            priors[[state.game.format_move(state, m) for m in moves].index(self.favourite)] += 0.8
            out.append(Evaluation(priors=priors, value=0.0))
        return out


def test_a_root_lost_before_any_playout_plays_the_networks_pick_not_the_first_legal_move():
    """O faces X's open four: every move loses in two plies, proven before any playout, so
    plies and visits tie everywhere; the answer is the prior's favourite (an end of the
    four), as a resilient defence should be, not cell 0 (a corner), which it used to be."""
    game = gomoku()
    row = game.height // 2
    idx = game.index
    state = game.state_from_moves([idx(3, row), idx(0, 0), idx(4, row), idx(0, 2), idx(5, row), idx(8, 0),
                                   idx(6, row)])
    for favourite in ends(game):
        result = mcts(OneCellEvaluator(favourite)).search(state, Limits(nodes=200))
        assert result.value == -1.0
        assert game.format_move(state, result.best_move) == favourite


def test_infinite_search_of_a_proven_root_waits_for_stop():
    game = gomoku()
    state = four_for_x(game, open_ends=True)
    stop = threading.Event()
    timer = threading.Timer(0.3, stop.set)
    timer.start()
    start = time.monotonic()
    result = mcts().search(state, Limits(infinite=True), stop=stop)
    assert time.monotonic() - start >= 0.25
    assert game.format_move(state, result.best_move) in ends(game)


def test_time_limit_and_depth_only_limits_end():
    game = gomoku(9)
    start = time.monotonic()
    mcts().search(game.initial_state(), Limits(time=0.2))
    assert time.monotonic() - start < 2.0
    result = mcts(default_nodes=77).search(game.initial_state(), Limits(depth=3))
    assert result.info.nodes == 77


def test_info_is_reported_at_the_end_with_a_legal_pv():
    game = get_game("chess")
    state = game.initial_state()
    infos = []
    result = mcts().search(state, Limits(nodes=120), on_info=infos.append)
    assert infos and infos[-1] == result.info
    info = infos[-1]
    assert info.nodes == 120 and 1 <= info.depth <= info.seldepth
    assert info.pv[0] == result.best_move and -1.0 <= info.value <= 1.0


def test_wdl_is_reported_when_the_evaluator_gives_it():
    class WDL:
        def evaluate(self, states):
            return [Evaluation(priors=np.full(len(s.legal_moves()), 1.0 / len(s.legal_moves())),
                               value=0.2, extra={"wdl": (0.5, 0.2, 0.3)}) for s in states]

    info = mcts(WDL()).search(gomoku(9).initial_state(), Limits(nodes=50)).info
    assert info.wdl is not None and sum(info.wdl) == 1000 and info.wdl[1] == 200


def test_evaluator_with_wrong_prior_count_is_a_clear_error():
    class Broken:
        def evaluate(self, states):
            return [Evaluation(priors=[1.0], value=0.0) for _ in states]

    with pytest.raises(ValueError, match="priors for"):
        mcts(Broken()).search(gomoku(9).initial_state(), Limits(nodes=5))


def test_mcts_player_without_weights_plays_with_the_heuristic_evaluator():
    from engine.players import PlayerOptions, make_searcher
    game = gomoku(9)
    searcher = make_searcher(game, PlayerOptions(player="mcts", nodes=40, batch=4, seed=0))
    result = searcher.search(four_for_x(game, open_ends=False), Limits())
    assert game.format_move(None, result.best_move) == ends(game)[1]
    assert result.info.nodes <= 40


def test_a_full_tree_ends_the_search():
    game = gomoku(9)
    result = mcts(max_tree_nodes=100).search(game.initial_state(), Limits(nodes=1000))
    assert 90 <= result.info.nodes < 120
    stop = threading.Event()
    threading.Timer(0.3, stop.set).start()
    start = time.monotonic()
    infos = []
    mcts(max_tree_nodes=100).search(game.initial_state(), Limits(infinite=True), stop=stop, on_info=infos.append)
    assert time.monotonic() - start >= 0.25               # infinite: idles until stop
    notes = [info.note for info in infos if info.note]
    assert len(notes) == 1 and "tree full (100 nodes)" in notes[0] and "Hash" in notes[0]   # said once


def test_a_resolved_tree_waits_for_stop_without_a_tree_full_note():
    game = gomoku(9)
    stop = threading.Event()
    threading.Timer(0.3, stop.set).start()
    infos = []
    result = mcts(max_tree_nodes=100).search(four_for_x(game, open_ends=True), Limits(infinite=True), stop=stop,
                                             on_info=infos.append)
    assert result.value == 1.0 and not any(info.note for info in infos)


def test_mcts_with_a_random_network_plays_legal_moves(tmp_path):
    """Search over the real (torch/ONNX) evaluator: priors line up with the legal moves."""
    from engine.players import PlayerOptions, make_searcher
    from engine.nn.checkpoint import create_random_checkpoint
    for name, game in (("gomoku", gomoku(9)), ("chess", get_game("chess"))):
        weights = tmp_path / f"{name}.pt"
        create_random_checkpoint(weights, name, "res2x32", seed=1)
        options = PlayerOptions(player="mcts", weights=str(weights), batch=8, seed=0,
                                backend="torch", device="cpu")
        searcher = make_searcher(game, options)
        state = game.initial_state()
        result = searcher.search(state, Limits(nodes=48))
        assert result.best_move in state.legal_moves() and sum(result.visits) == 48
        assert result.info.wdl is not None


def test_mcts_bench_prints_search_efficiency():
    from engine.bench import run_mcts_bench
    from engine.players import PlayerOptions
    lines: list[str] = []
    chess = get_game("chess")
    positions = {"chess": [("start", chess.initial_state())]}
    nodes, seconds = run_mcts_bench(["chess"], PlayerOptions(player="mcts", batch=8, seed=0),
                                    Limits(nodes=64), lines.append, positions=positions)
    assert nodes == 64 and seconds > 0
    assert any("search efficiency" in line for line in lines)
    assert any("Nodes searched  : 64" in line for line in lines)
    overhead = [line for line in lines if "per-node overhead" in line]
    assert len(overhead) == 1 and "with a free evaluator" in overhead[0]
    assert int(overhead[0].split("per-node overhead ")[1].split()[0]) > 0


class SkewedEvaluator:
    """Priors proportional to 1, 2, 3, ... over the legal moves; value 0."""

    def evaluate(self, states):
        out = []
        for s in states:
            weights = np.arange(1, len(s.legal_moves()) + 1, dtype=np.float64)
            out.append(Evaluation(priors=weights / weights.sum(), value=0.0))
        return out


@pytest.mark.parametrize("temperature", [0.5, 1.0, 2.0])
def test_policy_temperature_reshapes_the_priors(temperature):
    state = gomoku(7).initial_state()
    search = mcts(SkewedEvaluator(), policy_temperature=temperature)
    search.search(state, Limits(nodes=10))
    weights = np.arange(1, len(state.legal_moves()) + 1, dtype=np.float64) ** (1.0 / temperature)
    np.testing.assert_allclose(search._roots[0].prior, weights / weights.sum(), rtol=1e-5)


def test_policy_temperature_must_be_positive():
    with pytest.raises(ValueError, match="policy_temperature"):
        MCTSConfig(policy_temperature=0.0)


def test_player_options_reach_the_mcts_config(monkeypatch):
    from dataclasses import replace

    import engine.games.chess
    from engine.players import PlayerOptions, build
    game = get_game("chess")
    assert build.make_searcher(game, PlayerOptions(player="mcts")).config.leaves_per_batch == 16
    monkeypatch.setattr(engine.games.chess, "PROFILE", replace(
        engine.games.chess.PROFILE, mcts_tuned={"fpu_reduction": 0.4, "policy_temperature": 1.7,
                                                "leaves_per_batch": 6, "c_init": 2.2}))
    tuned = build.make_searcher(game, PlayerOptions(player="mcts", weights=None))
    assert (tuned.config.fpu_reduction, tuned.config.policy_temperature, tuned.config.c_init) == (0.4, 1.7, 2.2)
    assert tuned.config.leaves_per_batch == 6
    chosen = build.make_searcher(game, PlayerOptions(player="mcts", fpu=0.1, policy_temp=1.2, batch=4, cpuct=0.9))
    assert (chosen.config.fpu_reduction, chosen.config.policy_temperature, chosen.config.c_init) == (0.1, 1.2, 0.9)
    assert chosen.config.leaves_per_batch == 4


def test_the_gomoku_leaf_batch_follows_the_board():
    from engine.games.gomoku import profile
    from engine.players import PlayerOptions, build

    def batch(size, **options):
        game = get_game("gomoku", width=size, height=size)
        return build.mcts_config(game, PlayerOptions(player="mcts", **options)).leaves_per_batch
    small = max(n for n in range(5, 40) if n * n <= profile.LARGE_BOARD_CELLS)
    assert batch(15) == batch(small) == profile.PROFILE.mcts_tuned["leaves_per_batch"] == 16
    assert batch(small + 1) == batch(20) == profile.SMALL_BATCH == 8
    assert batch(20, batch=32) == 32           # a chosen batch still wins on any board
    assert build.mcts_config(get_game("chess"), PlayerOptions(player="mcts")).leaves_per_batch == 16
    short = build.mcts_config(gomoku(15), PlayerOptions(player="mcts"))
    assert (short.short_search_leaves, short.short_search_seconds) == (8, profile.SHORT_SEARCH_SECONDS)
    assert build.mcts_config(gomoku(15), PlayerOptions(player="mcts", batch=16)).short_search_leaves == 0


def test_the_chess_leaf_batch_shrinks_on_a_short_clock():
    from engine.games.chess import profile
    from engine.players import PlayerOptions, build
    chess = get_game("chess")
    played = build.mcts_config(chess, PlayerOptions(player="mcts"))
    assert played.leaves_per_batch == 16
    assert (played.short_search_leaves, played.short_search_seconds) == (8, profile.SHORT_SEARCH_SECONDS)
    assert build.mcts_config(chess, PlayerOptions(player="mcts", batch=16)).short_search_leaves == 0


def test_the_vct_share_option_reaches_the_gomoku_prover(monkeypatch):
    from engine.games.gomoku import profile
    from engine.players import PlayerOptions, build
    game = get_game("gomoku", width=9)
    auto = build.make_searcher(game, PlayerOptions(player="mcts"))
    assert auto.prover is not None and auto.prover.vct_nodes == profile.VCT_NODES > 0
    assert auto.prover.vct_share == profile.VCT_SHARE
    monkeypatch.setattr(profile, "VCT_SHARE", 0.6)
    assert build.make_searcher(game, PlayerOptions(player="mcts")).prover.vct_share == 0.6
    assert build.make_searcher(game, PlayerOptions(player="mcts", vct_share=0.2)).prover.vct_share == 0.2
    off = build.make_searcher(game, PlayerOptions(player="mcts", vct_share=0.0))
    assert off.prover.vct_nodes == 0
    from engine.games.chess.move_check import AlphaBetaCheck
    chess = build.make_searcher(get_game("chess"), PlayerOptions(player="mcts"))
    assert isinstance(chess.prover, AlphaBetaCheck)   # chess: no solver, a check of the chosen move


# --- forced playouts and policy target pruning (KataGo) -----------------------------------

class FavouriteEvaluator:
    """Priors proportional to 1, 2, 3, ... over the legal moves; a move to the last cell (the
    favourite) is worth +0.6 to its player and any other -0.2, so the search piles its visits
    on the favourite and the others earn few."""

    def evaluate(self, states):
        out = []
        for s in states:
            n = len(s.legal_moves())
            weights = np.arange(1, n + 1, dtype=np.float64)
            favourite = s.last_move == s.game.width * s.game.height - 1
            out.append(Evaluation(priors=weights / weights.sum(), value=-0.6 if favourite else 0.2))
        return out


def _forced_search(k: float, noise: bool = True):
    state = gomoku(9).state_from_moves([40, 41, 30])
    search = mcts(FavouriteEvaluator(), noise=noise, dirichlet_alpha=0.3, forced_playouts=k, leaves_per_batch=4)
    result = search.search(state, Limits(nodes=400))
    return search._roots[0], result


def test_forced_playouts_give_every_visited_root_child_about_sqrt_k_p_n_visits():
    root, _ = _forced_search(2.0)
    visits, prior = root.visits, root.prior        # prior: the noised one the search used
    total = visits.sum()
    visited = np.flatnonzero(visits > 0)
    assert len(visited) > 5
    for a in visited:
        assert visits[a] >= np.sqrt(2.0 * prior[a] * total) - 2.0, (a, visits[a], prior[a])
    plain, _ = _forced_search(0.0)
    top = lambda v: np.sort(v)[::-1]     # noqa: E731
    # the same noise (same seed): forcing moves visits from the favourite to the others
    assert top(visits)[0] < top(plain.visits)[0]
    starved = [a for a in np.flatnonzero(plain.visits > 0)
               if plain.visits[a] < np.sqrt(2.0 * plain.prior[a] * plain.visits.sum()) - 2.0]
    assert starved, "without forcing some visited child stays below the forced count"


def test_policy_target_pruning_takes_back_forced_playouts_only():
    root, result = _forced_search(2.0)
    raw = root.visits.astype(int)
    target = np.asarray(result.visits)
    best = int(np.argmax(raw))
    assert target[best] == raw[best]
    assert np.all(target <= raw) and target.sum() < raw.sum()
    assert not np.any(target == 1)
    # never more than the forced count is taken back from a child that keeps some
    total = raw.sum()
    kept = np.flatnonzero(target > 0)
    assert np.all(raw[kept] - target[kept] <= np.ceil(np.sqrt(2.0 * root.prior[kept] * total)))


def test_forced_playouts_do_nothing_without_root_noise():
    root_forced, result_forced = _forced_search(2.0, noise=False)
    root_plain, result_plain = _forced_search(0.0, noise=False)
    assert result_forced.visits == result_plain.visits
    np.testing.assert_array_equal(root_forced.visits, root_plain.visits)


def test_forced_playouts_must_not_be_negative():
    with pytest.raises(ValueError, match="forced_playouts"):
        MCTSConfig(forced_playouts=-1.0)


# --- move choice by lower confidence bound ---------------------------------------------------

def _root_with(stats: dict[int, tuple[float, float]], n_moves: int = 6):
    """An expanded gomoku root whose children a have (visits, mean value) stats[a]."""
    from engine.search.tree import Node
    game = gomoku(9)
    root = Node(game.initial_state())
    root.expand(Evaluation(priors=np.full(81, 1 / 81, dtype=np.float32), value=0.0))
    root.ensure_stats()
    for a, (visits, q) in stats.items():
        root.update(a, visits, visits * q)
    return root


def test_lcb_plays_a_clearly_better_move_with_fewer_visits():
    from engine.search.tree import best_child, pv_moves
    root = _root_with({0: (400, 0.10), 1: (120, 0.35), 2: (30, 0.90)})   # 2: under a tenth of 400
    assert best_child(root, None, 0.0, None) == 0                        # the most visited
    assert best_child(root, None, 0.0, None, lcb_z=1.5) == 1             # 0.35 - 0.055 > 0.10 - 0.03
    assert pv_moves(root, None, lcb_z=1.5)[0] == root.moves[1]
    close = _root_with({0: (400, 0.30), 1: (120, 0.31)})                 # 0.255 < 0.27: visits win
    assert best_child(close, None, 0.0, None, lcb_z=1.5) == 0
    few = _root_with({0: (10, 0.0), 1: (5, 0.9)})                        # too few visits to trust
    assert best_child(few, None, 0.0, None, lcb_z=1.5) == 0


def test_lcb_never_plays_a_proven_loss():
    from engine.search.tree import best_child
    root = _root_with({0: (400, 0.10), 1: (120, 0.35)})
    root.proven = np.full(len(root.moves), np.nan)
    root.proven[1] = -1.0
    root.proven_plies = np.zeros(len(root.moves), dtype=np.int64)
    assert best_child(root, None, 0.0, None, lcb_z=1.5) == 0
    with pytest.raises(ValueError):
        MCTSConfig(lcb_z=-1.0)


def test_lcb_leaves_sampling_by_visits_alone():
    """At temperature > 0 (self-play's opening plies) the move is still drawn ~ visits."""
    from engine.search.tree import best_child
    root = _root_with({0: (400, 0.10), 1: (120, 0.35)})

    def draws(lcb_z: float) -> list[int]:
        rng = np.random.default_rng(11)
        return [best_child(root, None, 1.0, rng, lcb_z=lcb_z) for _ in range(2000)]
    picks = draws(1.5)
    assert picks == draws(0.0)
    assert set(picks) <= {0, 1}
    assert abs(picks.count(0) / len(picks) - 400 / 520) < 0.04


def test_gomoku_plays_by_the_lower_bound_and_chess_by_visits():
    """The gomoku profile's LCB_Z reaches the played MCTS (and self-play, which starts from it)."""
    from engine.games.gomoku import profile
    from engine.players import PlayerOptions, build
    assert profile.LCB_Z > 0
    for size in (15, 20):
        assert build.mcts_config(gomoku(size), PlayerOptions(player="mcts")).lcb_z == profile.LCB_Z
    assert build.mcts_config(get_game("chess"), PlayerOptions(player="mcts")).lcb_z == 0.0
