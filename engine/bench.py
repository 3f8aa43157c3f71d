"""`engine bench`: search a fixed set of positions and print nodes, time and nodes/s.

Like Stockfish's bench, the positions and the default limit never change, so two
runs (or two commits) compare by their totals.  The transposition table is cleared
before each position for the same reason.

`--player mcts` adds MCTS nodes/s beside the evaluator's raw positions/s: neural MCTS
can go no faster than its evaluator, and the ratio of the two at the same batch size
("search efficiency") is the share of time the network is kept busy, i.e. how little
the search itself costs.  It also prints the per-node overhead: the µs per node of
the same searches with a free evaluator (uniform priors, value 0), i.e. tree work and
rules alone, and the µs per node spent outside the real evaluator.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import Any, Callable, Mapping, Sequence

from engine.games import Game, State, game_class, get_game
from engine.players import PlayerOptions, build_player, resolve_player
from engine.games.gomoku.profile import VCT_NODES
from engine.types import Searcher
from engine.types import Evaluation, Limits, SearchResult

__all__ = ["bench_positions", "default_limits", "run_bench", "run_mcts_bench", "bench_game", "GameBench",
           "run_threat_bench", "free_evaluator_overhead", "THREAT_POSITIONS"]

OTHER_PLAYER_NODES = 800  # mcts/uct/random: a node budget per position instead of a depth
THROUGHPUT_SECONDS = 2.0  # mcts: how long the evaluator alone is timed per game


def bench_positions(game_name: str) -> list[tuple[str, State]]:
    """The bench's fixed positions for `game_name`, as (label, state) pairs (the game's own:
    engine/games/<game>.py)."""
    positions: list[tuple[str, State]] = game_class(game_name).bench_positions()
    return positions


def default_limits(game_name: str, options: PlayerOptions) -> Limits:
    """The fixed limit per position when the command line names none."""
    if options.player == "alphabeta":
        return Limits(depth=game_class(game_name).bench_depth)
    return Limits(nodes=options.nodes or OTHER_PLAYER_NODES)


def run_bench(games: list[str], options: PlayerOptions, limits: Limits | None,
              echo: Callable[[str], None]) -> tuple[int, float]:
    """Search every bench position of every game; print a line each and Stockfish-style totals.

    Returns (nodes, seconds) over all positions.
    """
    if options.player == "mcts":
        return run_mcts_bench(games, options, limits, echo)

    total_nodes, total_time = 0, 0.0
    for game_name in games:
        resolved = resolve_player(get_game(game_name), options)
        game_limits = limits if limits is not None else default_limits(game_name, resolved)
        positions = bench_positions(game_name)
        echo(f"# {game_name}: {len(positions)} positions, player {resolved.player}, {_describe(game_limits)}")
        searchers: dict[object, Searcher] = {}
        for index, (label, state) in enumerate(positions, 1):
            game = state.game
            searcher = searchers.get(game)
            if searcher is None:
                searcher = searchers[game] = _build(game, resolved, echo)
            result, elapsed = timed_search(searcher, state, game_limits)
            total_nodes += result.info.nodes if result.info is not None else 0
            total_time += elapsed
            echo(position_line(index, label, game, state, result, elapsed))
    return _totals(total_nodes, total_time, echo)


def _build(game: Game, options: PlayerOptions, echo: Callable[[str], None]) -> Searcher:
    """The player asked for, no fallback (a bench of another player would mislead);
    its notes (e.g. mcts without a network) are printed as comments."""
    built = build_player(game, options, fallbacks=())
    for note in built.notes:
        echo(f"# {note}")
    return built.searcher


def _totals(nodes: int, seconds: float, echo: Callable[[str], None]) -> tuple[int, float]:
    echo("===========================")
    echo(f"Total time (ms) : {int(seconds * 1000)}")
    echo(f"Nodes searched  : {nodes}")
    echo(f"Nodes/second    : {int(nodes / seconds) if seconds > 0 else 0}")
    return nodes, seconds


def timed_search(searcher: Searcher, state: State, limits: Limits) -> tuple[SearchResult, float]:
    """One bench search from a fresh game (no tree or table carried over); (result, seconds)."""
    searcher.new_game()
    start = time.perf_counter()
    result = searcher.search(state, limits)
    return result, time.perf_counter() - start


def position_line(index: int, label: str, game: Game, state: State, result: SearchResult,
                  elapsed: float) -> str:
    """The per-position bench line shared by every player's bench."""
    info = result.info
    nodes = info.nodes if info is not None else 0
    depth = f"{info.depth}/{info.seldepth}" if info is not None else "0/0"
    move = "none" if result.best_move is None else game.format_move(state, result.best_move)
    return (f"{index:2d}  depth {depth:>5s}  nodes {nodes:8d}  time {elapsed * 1000:8.0f} ms"
            f"  nps {int(nodes / elapsed) if elapsed > 0 else 0:7d}  bestmove {move:6s}  {label}")


def _describe(limits: Limits) -> str:
    parts = [f"{name} {value}" for name, value in
             (("depth", limits.depth), ("nodes", limits.nodes), ("movetime", limits.time)) if value is not None]
    return ", ".join(parts) or "default limits"


# ---- MCTS: search speed beside the evaluator's ------------------------------------------

@dataclass(frozen=True)
class GameBench:
    """One game's figures: MCTS playouts/s over all positions and the evaluator alone."""
    game: str
    nodes: int
    seconds: float
    evaluator_rate: float

    @property
    def nps(self) -> float:
        return self.nodes / self.seconds if self.seconds > 0 else 0.0

    @property
    def efficiency(self) -> float:
        return self.nps / self.evaluator_rate if self.evaluator_rate > 0 else 0.0


def bench_game(game: Game, options: PlayerOptions, limits: Limits | None, echo: Callable[[str], None],
               positions: Sequence[tuple[str, State]]) -> GameBench:
    """Search each (label, state) with a fresh tree, then time the evaluator alone at
    the searcher's batch on positions one ply past those."""
    searcher: Any = _build(game, options.with_changes(player="mcts"), echo)
    timed = searcher.evaluator = _TimedEvaluator(searcher.evaluator)
    limits = limits or Limits(nodes=options.nodes or OTHER_PLAYER_NODES)
    label = game.label
    inner = timed.inner
    runtime = (f" ({inner.backend}, {inner.precision})" if hasattr(inner, "precision") else "")
    batch = searcher.config.leaves_per_batch
    echo(f"# mcts {label}: {len(positions)} positions, batch {batch}, "
         f"evaluator {_layers(inner)}{runtime}")
    total_nodes, total_time = 0, 0.0
    for number, (name, state) in enumerate(positions, 1):
        result, elapsed = timed_search(searcher, state, limits)
        total_nodes += result.info.nodes if result.info is not None else 0
        total_time += elapsed
        echo(position_line(number, name, game, state, result, elapsed))
    rate = _evaluator_rate(timed.inner, [s for _, s in positions], batch)
    figures = GameBench(label, total_nodes, total_time, rate)
    echo(f"   {label}: mcts {figures.nps:.0f} nodes/s, evaluator alone {rate:.0f} pos/s at batch "
         f"{batch}: search efficiency {100 * figures.efficiency:.1f} %")
    echo(f"   {label}: the evaluator was busy {100 * timed.seconds / max(total_time, 1e-9):.1f} % of "
         f"the search time, in {timed.calls} calls of {timed.states / max(timed.calls, 1):.1f} "
         "positions on average (the rest is tree work and rules)")
    outside = (total_time - timed.seconds) / max(total_nodes, 1)
    free = free_evaluator_overhead(searcher, positions, limits)
    from engine.search.mcts import tree_kernel
    echo(f"   {label}: per-node overhead {1e6 * free:.0f} µs with a free evaluator (uniform priors, "
         f"value 0, same positions and limits, no threat solver or root tactics); "
         f"{1e6 * outside:.0f} µs outside the evaluator above, all included; descent and backup "
         f"{'compiled' if tree_kernel is not None else 'in Python (the tree kernel is not built)'}")
    return figures


def _layers(evaluator: Any) -> str:
    """"MopUpEvaluator over NetworkEvaluator": an evaluator and the ones it wraps (`.inner`)."""
    names = [type(evaluator).__name__]
    while hasattr(getattr(evaluator, "inner", None), "evaluate"):
        evaluator = evaluator.inner
        names.append(type(evaluator).__name__)
    return " over ".join(names)


def free_evaluator_overhead(searcher: Any, positions: Sequence[tuple[str, State]], limits: Limits) -> float:
    """Seconds per node of the bare search (tree, rules) when evaluation costs nothing:
    the searcher's settings over UniformEvaluator, without the threat solver and the
    root tactics scan (extras that cost per leaf and per root, reported apart above)."""
    from engine.evaluators import UniformEvaluator
    from engine.search.mcts import MCTS

    free = MCTS(UniformEvaluator(), replace(searcher.config, root_tactics=False))   # no prover
    nodes, seconds = 0, 0.0
    for _, state in positions:
        result, elapsed = timed_search(free, state, limits)
        nodes += result.info.nodes if result.info is not None else 0
        seconds += elapsed
    return seconds / max(nodes, 1)


class _TimedEvaluator:
    """Counts the time and batch sizes of evaluator calls: the evaluator's share of a search
    is a load-independent view of the same efficiency."""

    def __init__(self, inner: Any):
        self.inner = inner
        self.seconds = 0.0
        self.calls = self.states = 0

    def evaluate(self, states: Sequence[State]) -> list[Evaluation]:
        start = time.perf_counter()
        out = self.inner.evaluate(states)
        self.seconds += time.perf_counter() - start
        self.calls += 1
        self.states += len(states)
        return out


def _evaluator_rate(evaluator: Any, states: Sequence[State], batch: int) -> float:
    """Raw positions/s of the evaluator on leaf-like positions (one ply past the bench ones)."""
    from engine.nn.throughput import measure_throughput   # no torch at import time

    leaves = [s.play(m) for s in states for m in list(s.legal_moves())[:8]]
    leaves = [s for s in leaves if s.outcome() is None] or list(states)
    return measure_throughput(evaluator, leaves, batch, THROUGHPUT_SECONDS)


def run_mcts_bench(games: Sequence[str], options: PlayerOptions, limits: Limits | None,
                   echo: Callable[[str], None],
                   positions: Mapping[str, Sequence[tuple[str, State]]] | None = None) -> tuple[int, float]:
    """Bench MCTS on positions[game] ((label, state) pairs; default: the fixed bench set),
    one group per board (gomoku sizes differ).  Returns (nodes, seconds)."""
    groups: dict[Game, list[tuple[str, State]]] = {}
    for name in games:
        pairs = positions[name] if positions is not None else bench_positions(name)
        for label, state in pairs:
            groups.setdefault(state.game, []).append((label, state))
    figures = [bench_game(game, options, limits, echo, pairs) for game, pairs in groups.items()]
    return _totals(sum(f.nodes for f in figures), sum(f.seconds for f in figures), echo)


# ---- the gomoku threat solver's bench (`engine bench --threats`) ---------------------------------
# Fixed positions from tests/data/vcf_positions.txt: (label, "WxH rule", X stones, O stones).
# The vcf ones have a VCF for the side to move; the refute ones need the defence check.
THREAT_POSITIONS: tuple[tuple[str, str, str, str], ...] = (
    ("vcf-15-freestyle-6", "15x15 freestyle", "7,4 8,4 10,4 11,4 5,5 7,5 7,6 5,7 6,7 7,7",
     "8,0 8,2 7,3 11,3 6,4 9,4 9,5 6,6 7,8"),
    ("vcf-counter-15-freestyle-0", "15x15 freestyle",
     "5,1 6,1 7,1 7,3 8,3 6,4 9,4 5,5 7,5 8,5 8,6 10,6 7,7 5,9",
     "8,1 7,2 8,2 6,3 9,3 8,4 9,5 10,5 7,6 11,6 12,6 13,6 14,6 9,7"),
    ("vcf-15-standard-8", "15x15 standard", "7,6 8,6 4,7 5,7 6,7 7,7 6,8 7,8 7,9 4,10 8,11",
     "8,4 6,5 7,5 6,6 3,7 8,7 5,8 5,9 7,10 8,10 9,10"),
    ("vcf-15-freestyle-5", "15x15 freestyle", "7,4 8,4 10,4 11,4 5,5 7,5 7,6 5,7 7,7",
     "8,2 7,3 11,3 6,4 9,4 9,5 6,6 7,8"),
    ("vcf-counter-20-freestyle-0", "20x20 freestyle", "12,4 8,6 7,7 8,7 10,7 8,8 12,8 12,9 8,10 10,10 13,11",
     "13,3 8,5 11,5 10,6 9,7 11,7 10,8 8,9 9,9 11,9"),
    ("vcf-20-freestyle-6", "20x20 freestyle", "11,5 8,7 12,7 13,7 6,8 9,8 10,8 11,8 9,9 12,9 9,10 10,10 8,11 11,11",
     "10,6 9,7 10,7 8,8 12,8 13,8 14,8 8,9 10,9 8,10 9,11 12,12 10,14"),
    ("vcf-20-standard-8", "20x20 standard", "11,6 10,7 6,8 8,8 9,8 9,9 7,10 10,10",
     "10,5 12,5 10,6 9,7 14,7 10,8 8,9 11,11"),
    ("vcf-counter-15-standard-0", "15x15 standard", "9,3 8,4 10,4 11,4 7,5 9,6 7,7 11,7 7,8",
     "9,1 9,2 10,2 6,4 9,4 9,5 4,6 7,6 8,6"),
    ("refute-15-freestyle-1", "15x15 freestyle", "6,1 7,3 8,3 9,4 8,5 8,6 7,7",
     "9,3 9,5 10,5 7,6 11,6 13,6"),
    ("refute-15-freestyle-2", "15x15 freestyle", "6,1 7,3 8,3 9,4 7,5 8,5 8,6 7,7",
     "9,3 8,4 9,5 10,5 7,6 11,6 12,6 13,6"),
    ("vct-15-freestyle-crossing", "15x15 freestyle", "6,7 7,7 8,5 8,6 2,12", "0,0 14,14 0,14 14,0 1,1"),
    ("vctcheck-15-freestyle-0", "15x15 freestyle", "8,9 9,9 8,5 5,9 10,7", "10,10 5,10 4,6 8,8"),
)
THREAT_BENCH_NODES = 200_000


def run_threat_bench(echo: Callable[[str], None], rounds: int = 3) -> tuple[int, float]:
    """Solve THREAT_POSITIONS `rounds` times (VCF; the defence check for refute-*; VCT for
    vct-*; MCTS's root VCT check for vctcheck-*) with one
    warm solver per game, as a player keeps it (the solver's table is cleared before each
    position).  Prints proof plies, nodes and
    time per position, then positions/s and the mean proof depth.  Returns (nodes, seconds)."""
    from engine.games.gomoku import GomokuGame
    from engine.games.gomoku.threats import ThreatSolver

    solvers: dict[GomokuGame, ThreatSolver] = {}
    total_nodes, total_time, solved, plies = 0, 0.0, 0, 0
    echo(f"# threat solver: {len(THREAT_POSITIONS)} positions x {rounds} rounds, "
         f"budget {THREAT_BENCH_NODES} nodes")
    for round_ in range(1, rounds + 1):
        for index, (label, setup, xs, os_) in enumerate(THREAT_POSITIONS, 1):
            size, rule = setup.split()
            width, height = (int(v) for v in size.split("x"))
            game = get_game("gomoku", width=width, height=height, rule=rule)
            assert isinstance(game, GomokuGame)
            stones = [[game.index(*(int(v) for v in cell.split(","))) for cell in text.split()]
                      for text in (xs, os_)]
            state = game.state_from_stones(stones[0], stones[1])
            solver = solvers.get(game)
            if solver is None:
                solver = solvers[game] = ThreatSolver(game)
            solver.clear()
            start = time.perf_counter()
            if label.startswith("refute"):
                defence = solver.defences(state, nodes=THREAT_BENCH_NODES)
                nodes, line = defence.nodes, defence.threat
                what = f"refutations {len(defence.refutations or ())}"
            elif label.startswith("vctcheck"):       # MCTS's root check, moves in the solver's order
                order = solver.ranked(state, state.legal_moves())
                check = solver.vct_losing_moves(state, order, nodes=VCT_NODES)
                nodes, line = check.nodes, check.threat
                what = f"vct-lost {len(check.losing)}"
            elif label.startswith("vct"):
                result = solver.vct(state, nodes=THREAT_BENCH_NODES)
                nodes, line, what = result.nodes, result.line, "vct"
            else:
                result = solver.vcf(state, nodes=THREAT_BENCH_NODES)
                nodes, line, what = result.nodes, result.line, "vcf"
            elapsed = time.perf_counter() - start
            total_nodes += nodes
            total_time += elapsed
            solved += 1
            plies += len(line or ())
            echo(f"{round_}.{index:<2d} {what:15s} plies {len(line or ()):2d}  nodes {nodes:7d}  "
                 f"time {elapsed * 1000:7.1f} ms  nps {int(nodes / elapsed) if elapsed > 0 else 0:7d}  {label}")
    echo("===========================")
    echo(f"Positions/second: {solved / total_time:.1f}" if total_time > 0 else "Positions/second: -")
    echo(f"Mean proof plies: {plies / max(solved, 1):.1f}")
    echo(f"Nodes/second    : {int(total_nodes / total_time) if total_time > 0 else 0}")
    return total_nodes, total_time
