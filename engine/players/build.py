"""Player options -> a ready Searcher, with the fallbacks every server shares.

`build_player` is what the UCI server, the Gomocup brain, `engine bench`, the teacher
and the arena's built-in engines (through those servers) call.  Each searcher has a
builder here that turns PlayerOptions into the searcher's own config; engine/search
and engine/nn take only those configs.  Builders import their searcher when chosen,
so picking `alphabeta` never loads torch.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any, Callable, NamedTuple

from engine.games import load_named
from engine.games.base import Game
from engine.players.networks import resolve_network
from engine.players.options import PLAYER_NAMES, PlayerOptions
from engine.search.limits import Searcher

__all__ = ["build_player", "make_searcher", "resolve_player", "BuiltPlayer", "PlayerBuildError",
           "UnknownPlayerError", "FALLBACK_PLAYERS", "network_evaluator", "mcts_config", "mcts_evaluator", "mcts_prover",
           "with_game_knowledge"]

FALLBACK_PLAYERS: tuple[str, ...] = ("alphabeta", "random")   # tried in order when a player fails


class UnknownPlayerError(ValueError):
    pass


class PlayerBuildError(ValueError):
    """No player in the chain could be built; the message lists why, on one line."""


class BuiltPlayer(NamedTuple):
    """What build_player made.  options: what to compare against the next request (the
    options as asked for, or the fallback's); player: the searcher's name (auto resolved)."""
    searcher: Searcher
    notes: tuple[str, ...]
    options: PlayerOptions
    player: str


Notes = list[str]


def resolve_player(game: Game, options: PlayerOptions) -> PlayerOptions:
    """Turn player "auto" into mcts (when a network is named or shipped) or alphabeta, and a
    shipped network's name into its path."""
    weights = resolve_network(game.name, options.weights)
    if options.player != "auto":
        return options if options.weights is None else options.with_changes(weights=weights)
    if weights is None:
        return options.with_changes(player="alphabeta")
    return options.with_changes(player="mcts", weights=weights)


def make_searcher(game: Game, options: PlayerOptions, notes: Notes | None = None) -> Searcher:
    """The searcher `options` asks for, no fallback; raises ValueError (one line) when it
    cannot play `game`.  notes: where a builder reports what it chose instead (e.g. no network)."""
    notes = [] if notes is None else notes
    resolved = resolve_player(game, options)
    builder = _BUILDERS.get(resolved.player)
    if builder is None:
        raise UnknownPlayerError(
            f"unknown player {resolved.player!r} (expected one of {', '.join(PLAYER_NAMES)})")
    searcher = builder(game, resolved, notes)
    fast_below = AUTO_ALPHABETA_BELOW.get(game.name)
    if options.player == "auto" and resolved.player == "mcts" and fast_below is not None:
        from engine.players.clock_switch import ClockSwitch
        searcher = ClockSwitch(searcher, _alphabeta(game, resolved, notes), fast_below)
    return searcher


def build_player(game: Game, options: PlayerOptions, *, fallbacks: tuple[str, ...] = FALLBACK_PLAYERS,
                 make: Callable[[Any, PlayerOptions], Searcher] | None = None) -> BuiltPlayer:
    """The player `options` asks for, else the first of `fallbacks` that builds; `notes`
    says what went wrong and what plays instead.  make: a searcher factory to use instead
    of make_searcher (tests' fakes).  Raises PlayerBuildError when nothing builds."""
    chain = [options] + [options.with_changes(player=p, weights=None) for p in fallbacks
                         if p != options.player]
    notes: Notes = []
    for candidate in chain:
        try:
            searcher = make(game, candidate) if make is not None else make_searcher(game, candidate, notes)
        except Exception as exc:   # any failure to build is a reason to fall back, never a crash
            notes.append(f"player {candidate.player} unavailable ({_one_line(exc)})")
            continue
        if candidate is not options:
            notes.append(f"playing with {candidate.player}")
        return BuiltPlayer(searcher, tuple(notes), candidate, resolve_player(game, candidate).player)
    raise PlayerBuildError("; ".join(notes))


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


# ---- one builder per searcher: PlayerOptions -> the searcher's own config -----------------

def _alphabeta(game: Game, options: PlayerOptions, notes: Notes) -> Searcher:
    from engine.search.alphabeta import AlphaBeta, AlphaBetaConfig
    from engine.search.threat_kernel import ThreatKernelUnavailable
    board = _ALPHABETA_BOARDS.get(game.name)
    if board is None:
        raise ValueError(f"alphabeta does not play {game.name!r}")
    config = AlphaBetaConfig(hash_mb=options.hash_mb)
    if options.threat_solver == "off":
        config = replace(config, threat_nodes=0, root_threat_nodes=0)
    try:
        make_board = board(game, config)
    except ThreatKernelUnavailable as exc:
        notes.append(_no_threat_solver(exc))
        config = replace(config, threat_nodes=0, root_threat_nodes=0)
        make_board = board(game, config)
    return AlphaBeta(make_board, config)


def _threat_solver_loads(notes: Notes) -> bool:
    """Whether the threat solver's compiled core loads here; without it a player plays without
    the solver and says so.  Loading happens at player build (UCI isready / Gomocup START)."""
    from engine.search.threat_kernel import ThreatKernelUnavailable, library
    try:
        library()
    except ThreatKernelUnavailable as exc:
        notes.append(_no_threat_solver(exc))
        return False
    return True


def _no_threat_solver(exc: BaseException) -> str:
    return f"threat solver unavailable ({_one_line(exc)}): playing without it"


def _chess_board(game: Any, config: Any) -> Any:
    from engine.search.ab_chess import ChessSearchBoard
    return ChessSearchBoard.from_state


def _gomoku_board(game: Any, config: Any) -> Any:
    from engine.search.ab_gomoku import board_maker
    # one pattern cache and threat solver per player, kept across moves
    return board_maker(game, threat_nodes=config.threat_nodes, root_threat_nodes=config.root_threat_nodes)


# Alpha-beta's search board per game (a new game adds its line here).
_ALPHABETA_BOARDS: dict[str, Callable[[Any, Any], Any]] = {"chess": _chess_board, "gomoku": _gomoku_board}


def network_evaluator(game: Game, weights: str, options: PlayerOptions, **overrides: Any) -> Any:
    """A NetworkEvaluator for `game` over `weights` with the player's device, backend,
    precision and threads.  Raises CheckpointError (one line) for a bad file or another game's network.

    The evaluator's cache gets Hash / 2 MB on top of the Hash MB the MCTS tree gets."""
    from engine.nn.evaluator import NetworkEvaluator   # torch only if the backend needs it
    settings: dict[str, Any] = dict(device=options.device, backend=options.backend,
                                    precision=options.precision,
                                    threads=options.threads, seed=options.seed,
                                    expect_game=game.name, cache_mb=max(1.0, options.hash_mb / 2))
    settings.update(overrides)
    return NetworkEvaluator(weights, **settings)


def _mcts(game: Game, options: PlayerOptions, notes: Notes) -> Searcher:
    """MCTS over the network named by options (or shipped); the heuristic evaluator when
    there is no network at all, so `--player mcts` always plays."""
    from engine.search.mcts import MCTS
    return MCTS(mcts_evaluator(game, options, notes), mcts_config(game, options),
                prover=mcts_prover(game, options, notes))


def mcts_evaluator(game: Game, options: PlayerOptions, notes: Notes) -> Any:
    """The evaluator MCTS plays with: the network (warmed up) under the game's leaf-value
    wrapper, or the heuristic evaluator when there is no network."""
    weights = resolve_network(game.name, options.weights)
    if weights is None:
        from engine.evaluators import heuristic_evaluator
        notes.append(f"no {game.name} network: mcts plays with the heuristic evaluator")
        return heuristic_evaluator(game)
    evaluator = with_game_knowledge(game, network_evaluator(game, weights, options))
    # The first network run is slow (allocation, kernel choice): pay it here, at UCI
    # isready / Gomocup START, not out of the first move's budget.
    evaluator.evaluate([game.initial_state()])
    return evaluator


def with_game_knowledge(game: Game, evaluator: Any) -> Any:
    """A network evaluator under the game's leaf-value wrapper (chess: mop-up endgames), as
    the played MCTS sees it; self-play wraps its evaluator the same way."""
    return load_named(game.endgames)(evaluator) if game.endgames is not None else evaluator


def mcts_config(game: Game, options: PlayerOptions) -> Any:
    """The MCTSConfig the played MCTS searches with: options and the game's tuned settings.
    Self-play starts from this and adds only its own settings."""
    from engine.search.mcts import MCTSConfig, tree_node_budget
    tuned = MCTS_TUNED.get(game.name, {})
    fpu = options.fpu if options.fpu is not None else tuned.get("fpu_reduction", MCTSConfig.fpu_reduction)
    temperature = (options.policy_temp if options.policy_temp is not None
                   else tuned.get("policy_temperature", MCTSConfig.policy_temperature))
    return MCTSConfig(c_init=options.cpuct, leaves_per_batch=options.batch, seed=options.seed,
                      default_nodes=options.nodes or MCTSConfig.default_nodes,
                      max_tree_nodes=tree_node_budget(options.hash_mb),
                      fpu_reduction=fpu, policy_temperature=temperature)


def mcts_prover(game: Game, options: PlayerOptions, notes: Notes | None = None) -> Any:
    """The game's solver for MCTS (gomoku: the threat solver, with its leaf, root and VCT
    budgets), or None: a game without one, the solver switched off, or its core missing
    (said in notes).  A new one per MCTS: it keeps per-search state."""
    leaf_nodes = MCTS_THREAT_NODES.get(game.name, 0)
    if leaf_nodes <= 0 or options.threat_solver != "on" or not _threat_solver_loads([] if notes is None else notes):
        return None
    from engine.search.threats import TreeProver
    vct_share = options.vct_share if options.vct_share is not None else MCTS_TUNED.get(game.name, {}).get(
        "vct_share", DEFAULT_VCT_SHARE)
    vct_nodes = MCTS_VCT_NODES.get(game.name, 0) if vct_share > 0 else 0
    return TreeProver(leaf_nodes, 40 * leaf_nodes, vct_nodes, vct_share)


# Player auto with a network: alpha-beta for moves planned below this many seconds, MCTS
# above (engine/players/clock_switch.py).  A game absent here plays MCTS at every clock.
# Chess, MCTS against alpha-beta (docs/measurements/player-auto.md): 14.5/100 at 1+0.01 (a planned
# 20-30 ms a move), 17.5/40 at 10+0.1 (about 0.32 s), 49/80 at a second a move: the switch sits
# between the last two.  Gomoku plays MCTS at every clock (77.5/100 at one second a game).
AUTO_ALPHABETA_BELOW: dict[str, float] = {"chess": 0.5}

# MCTS's threat-solver budget (nodes per new leaf, x40 at the root) for games that have one.
DEFAULT_VCT_SHARE = 0.3   # of the time left, at most, for the root's VCT checks
MCTS_THREAT_NODES: dict[str, int] = {"gomoku": 30}
# ... and per VCT search at the root (the root's own VCT, the opponent's after each move tried).
MCTS_VCT_NODES: dict[str, int] = {"gomoku": 1000}

# MCTS settings chosen by match per game (FpuReduction / PolicyTemperature "auto"); the
# matches behind them are in docs/measurements/weights-history.md.  A game absent here uses
# MCTSConfig's defaults.
MCTS_TUNED: dict[str, dict[str, float]] = {
    "chess": {"fpu_reduction": 0.5, "policy_temperature": 1.0},
    "gomoku": {"fpu_reduction": 0.25, "policy_temperature": 1.0, "vct_share": 0.3},
}


def _uct(game: Game, options: PlayerOptions, notes: Notes) -> Searcher:
    from engine.search.mcts import MCTS, MCTSConfig, tree_node_budget
    from engine.search.uct import RolloutEvaluator
    config = MCTSConfig(formula="ucb1", leaves_per_batch=1, seed=options.seed,
                        default_nodes=options.nodes or 1000,
                        max_tree_nodes=tree_node_budget(options.hash_mb))
    return MCTS(RolloutEvaluator(game, options.seed), config)


def _random(game: Game, options: PlayerOptions, notes: Notes) -> Searcher:
    from engine.search.random_player import RandomPlayer
    return RandomPlayer(seed=options.seed)


_BUILDERS: dict[str, Callable[[Game, PlayerOptions, Notes], Searcher]] = {
    "alphabeta": _alphabeta, "mcts": _mcts, "uct": _uct, "random": _random,
}
assert tuple(_BUILDERS) == PLAYER_NAMES, "every player name needs a builder"
