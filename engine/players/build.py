"""Player options -> a ready Searcher, with the fallbacks every server shares.

`build_player` is what the UCI server, the Gomocup brain, `engine bench`, the teacher
and the arena's built-in engines (through those servers) call.  Each searcher has a
builder here that turns PlayerOptions into the searcher's own config; engine/search
and engine/nn take only those configs.  Builders import their searcher when chosen,
so picking `alphabeta` never loads torch.
"""
from __future__ import annotations

from typing import Any, Callable, NamedTuple

from engine.games import game_profile
from engine.games.base import Game
from engine.players.networks import resolve_network
from engine.players.options import PLAYER_NAMES, PlayerOptions
from engine.types import Searcher

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
    weights = resolve_network(game.name, options.weights, game.rule)
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
    auto_mcts = options.player == "auto" and resolved.player == "mcts"
    fast_below = game_profile(game.name).auto_alphabeta_below_playouts if auto_mcts else None
    if callable(fast_below):
        fast_below = fast_below()
    if fast_below is not None:
        searcher = _clock_switch(game, resolved, searcher, fast_below, notes)
    return searcher


def _clock_switch(game: Game, options: PlayerOptions, mcts: Searcher, fast_below_playouts: float,
                  notes: Notes) -> Searcher:
    """Player auto's MCTS with alpha-beta for the moves too short for its playouts; the
    MCTS's rate is probed twice now (UCI isready), then once at every new game."""
    from engine.players.clock_switch import ClockSwitch, PlayoutRate
    rate = PlayoutRate(mcts, [state for _, state in game.bench_positions()])
    rate.probe()
    rate.probe()
    return ClockSwitch(mcts, _alphabeta(game, options, notes), fast_below_playouts, rate,
                       slow_default_nodes=options.nodes is not None)


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
    from engine.search.prover import SolverUnavailable
    board = game_profile(game.name).alphabeta_board
    if board is None:
        raise ValueError(f"alphabeta does not play {game.name!r}")
    solver = options.threat_solver != "off"
    try:
        make_board = board(game, solver)
    except SolverUnavailable as exc:
        notes.append(_no_threat_solver(exc))
        make_board = board(game, False)
    return AlphaBeta(make_board, AlphaBetaConfig(hash_mb=options.hash_mb))


def _no_threat_solver(exc: BaseException) -> str:
    return f"threat solver unavailable ({_one_line(exc)}): playing without it"


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
    weights = resolve_network(game.name, options.weights, game.rule)
    if weights is None:
        notes.append(f"no {game.name} network: mcts plays with the heuristic evaluator")
        return game_profile(game.name).heuristic()
    evaluator = with_game_knowledge(game, network_evaluator(game, weights, options))
    # The first network run is slow (allocation, kernel choice): pay it here, at UCI
    # isready / Gomocup START, not out of the first move's budget.
    evaluator.evaluate([game.initial_state()])
    return evaluator


def with_game_knowledge(game: Game, evaluator: Any) -> Any:
    """A network evaluator under the game's leaf-value wrapper (chess: mop-up endgames), as
    the played MCTS sees it; self-play wraps its evaluator the same way."""
    wrapper = game_profile(game.name).leaf_value
    return wrapper()(evaluator) if wrapper is not None else evaluator


def mcts_config(game: Game, options: PlayerOptions) -> Any:
    """The MCTSConfig the played MCTS searches with: options and the game's tuned settings.
    Self-play starts from this and adds only its own settings."""
    from engine.search.mcts import MCTSConfig, tree_node_budget
    tuned = game_profile(game.name).tuned_for(game)

    def chosen_or_tuned(chosen: float | None, field: str) -> float:
        """An option the user set, else the game's tuned value, else MCTSConfig's default."""
        return chosen if chosen is not None else tuned.get(field, getattr(MCTSConfig, field))

    c_init = chosen_or_tuned(options.cpuct, "c_init")
    fpu = chosen_or_tuned(options.fpu, "fpu_reduction")
    temperature = chosen_or_tuned(options.policy_temp, "policy_temperature")
    batch = options.batch or int(tuned.get("leaves_per_batch", MCTSConfig.leaves_per_batch))
    # a chosen batch holds for every search; "auto" may take a smaller one on a short clock
    short = 0 if options.batch else int(tuned.get("short_search_leaves", MCTSConfig.short_search_leaves))
    return MCTSConfig(c_init=c_init, leaves_per_batch=batch, seed=options.seed, short_search_leaves=short,
                      short_search_seconds=tuned.get("short_search_seconds", MCTSConfig.short_search_seconds),
                      default_nodes=options.nodes or MCTSConfig.default_nodes,
                      max_tree_nodes=tree_node_budget(options.hash_mb),
                      fpu_reduction=fpu, policy_temperature=temperature,
                      lcb_z=tuned.get("lcb_z", MCTSConfig.lcb_z))


def mcts_prover(game: Game, options: PlayerOptions, notes: Notes | None = None) -> Any:
    """The game's prover for MCTS (gomoku: the threat solver, with its leaf, root and VCT
    budgets; chess: the alpha-beta check of the chosen move), or None: a game without one,
    one its options switch off, or its core missing (said in notes).  A new one per MCTS: it keeps per-search state.  Loading happens at
    player build (UCI isready / Gomocup START)."""
    from engine.search.prover import SolverUnavailable
    make = game_profile(game.name).prover
    if make is None:
        return None
    try:
        return make(options)
    except SolverUnavailable as exc:
        if notes is not None:
            notes.append(_no_threat_solver(exc))
        return None


def _uct(game: Game, options: PlayerOptions, notes: Notes) -> Searcher:
    from engine.search.mcts import MCTS, MCTSConfig, tree_node_budget
    from engine.search.uct import RolloutEvaluator
    config = MCTSConfig(formula="ucb1", leaves_per_batch=1, seed=options.seed,
                        default_nodes=options.nodes or 1000,
                        max_tree_nodes=tree_node_budget(options.hash_mb))
    profile = game_profile(game.name)
    return MCTS(RolloutEvaluator(profile.rollout(), profile.heuristic(), options.seed), config)


def _random(game: Game, options: PlayerOptions, notes: Notes) -> Searcher:
    from engine.search.random_player import RandomPlayer
    return RandomPlayer(seed=options.seed)


_BUILDERS: dict[str, Callable[[Game, PlayerOptions, Notes], Searcher]] = {
    "alphabeta": _alphabeta, "mcts": _mcts, "uct": _uct, "random": _random,
}
assert tuple(_BUILDERS) == PLAYER_NAMES, "every player name needs a builder"
