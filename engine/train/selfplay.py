"""Self-play: many games in lockstep, one MCTS.search_many per move over all unfinished games.

`selfplay_batch(spec, weights, n_games, config, seed) -> list[Sample]` is a plain function
of its inputs (a game description, a network file path, numbers): it opens the network
itself and holds no global state, so a local process pool or a Ray task can run it and
the caller writes the shard (engine/train/jobs.py).  The same inputs give the same
samples on the same machine and backend: every random choice (root noise, temperature
sampling) is drawn from generators seeded by (seed, game index).

The searchers are the played MCTS's (`selfplay_searchers`: what trains is what plays), plus
the self-play-only settings.  Per move: root visit counts (SearchResult.visits) normalised are the policy target, and the
search's root WDL (`root_wdl`) is stored as the sample's evaluation, for the trainer's value blend;
the move played is sampled from visits^(1/T) with T = 1 for the first
`temperature_plies` plies and is the search's best move after that (a proven win is
always played).  Values are filled in from each game's final outcome, and each sample's
`reply` (the opponent's answer, for the auxiliary reply head) from the moves played.  Chess games
stop at `max_plies` as a draw; resignation is off unless `resign_value` is set.

Forced playouts (KataGo, `forced_playouts` k > 0): the full searches give every visited
root child at least about sqrt(k P N) visits, and the policy target is the visits with
those forced playouts pruned back where they did not earn them (MCTS.pruned_visits).
Playout-cap randomisation (KataGo): with `full_search_share` < 1 each move is searched
fully (root noise, `playouts`) with that probability and kept as a sample; the other
moves get a fast search (`fast_playouts`, no noise) and are not kept.  Resignation
play-through: a `resign_playthrough` share of games never resign; the first time one of
them would have, the side is noted, and `selfplay_games` reports how often such a side
went on not to lose (false resignations).
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from engine.games.base import Outcome
from engine.search.mcts import MCTS
from engine.train.samples import GameSpec, Sample, make_sample, move_index, with_outcome, with_replies
from engine.types import Limits, SearchResult

__all__ = ["SelfPlayConfig", "SelfPlayGames", "GameSummary", "selfplay_batch", "selfplay_games", "game_seed",
           "selfplay_searchers", "root_wdl"]


@dataclass(frozen=True)
class SelfPlayConfig:
    """playouts: MCTS playouts per move.  leaves_per_batch: leaves per tree per network call
    (so one call evaluates up to games x leaves_per_batch positions).
    temperature_plies: plies played by sampling visits (T = 1); then the best move.
    max_plies: a game still running after this many plies is a draw (None: the game's
    Game.max_plies, chess 300, gomoku no cap).  resign_value: the side to move resigns when its root value falls
    to this or below (e.g. -0.95) after resign_min_ply plies; None = never.
    device / backend / threads: how the network runs (threads = 1 when many workers share
    the CPU).  c_init / dirichlet_alpha / dirichlet_epsilon: MCTSConfig's (c_init None: the played
    MCTS's, the game's tuned value).
    full_search_share / fast_playouts: playout-cap randomisation (1.0 = every move full;
    fast_playouts None = playouts // 4).  resign_playthrough: share of games that never
    resign, to measure false resignations.  forced_playouts: KataGo's k for the full searches
    (forced playouts and policy target pruning, MCTSConfig.forced_playouts; 0 = off)."""
    playouts: int = 200
    leaves_per_batch: int = 8
    temperature_plies: int = 8
    max_plies: int | None = None
    resign_value: float | None = None
    resign_min_ply: int = 20
    c_init: float | None = None
    dirichlet_alpha: float | None = None
    dirichlet_epsilon: float = 0.25
    device: str = "cpu"
    backend: str = "auto"
    threads: int = 1
    full_search_share: float = 1.0
    fast_playouts: int | None = None
    resign_playthrough: float = 0.0
    forced_playouts: float = 0.0

    def __post_init__(self) -> None:
        if self.playouts < 1 or self.leaves_per_batch < 1 or self.temperature_plies < 0:
            raise ValueError("playouts and leaves_per_batch must be >= 1, temperature_plies >= 0")
        if not (0.0 < self.full_search_share <= 1.0 and 0.0 <= self.resign_playthrough <= 1.0):
            raise ValueError("full_search_share must be in (0, 1] and resign_playthrough in [0, 1]")
        if self.fast_playouts is not None and self.fast_playouts < 1:
            raise ValueError("fast_playouts must be >= 1")
        if not self.forced_playouts >= 0.0:
            raise ValueError("forced_playouts must be >= 0")


def game_seed(seed: int, index: int) -> int:
    """A distinct 63-bit seed for game `index` of a batch seeded with `seed`."""
    mixed = np.random.SeedSequence([seed & 0xFFFFFFFFFFFFFFFF, index]).generate_state(2, np.uint32)
    return (int(mixed[0]) << 31) ^ int(mixed[1])


@dataclass(frozen=True)
class GameSummary:
    """One finished self-play game.  would_resign: the side that first fell to the resign
    value (None: nobody); played_out: this game was not allowed to resign."""
    index: int
    winner: int | None
    reason: str
    plies: int
    would_resign: int | None
    played_out: bool

    @property
    def false_resignation(self) -> bool:
        """A played-out game whose would-be resigner did not lose."""
        return self.played_out and self.would_resign is not None and self.winner != 1 - self.would_resign


@dataclass(frozen=True)
class SelfPlayGames:
    samples: list[Sample]
    games: list[GameSummary]


class _Game:
    """One game in flight: its state, samples so far, its move sampler, its end."""
    __slots__ = ("index", "state", "seed", "rng", "samples", "played", "outcome", "may_resign", "would_resign")

    def __init__(self, index: int, state: Any, seed: int):
        self.index, self.state, self.seed = index, state, seed
        self.rng = np.random.default_rng(seed)
        self.samples: list[Sample] = []
        self.played: dict[int, int] = {}      # ply -> move_index of the move played there
        self.outcome: Outcome | None = None
        self.may_resign = True
        self.would_resign: int | None = None


def _choose(result: SearchResult, visits: np.ndarray, state: Any, sample: bool,
            rng: np.random.Generator) -> Any:
    """The move to play: sampled ~ visits (T = 1) in the opening, else the search's choice.
    A proven result (mate_plies set) is played as searched: sampling could walk past a win."""
    proven = result.info is not None and result.info.mate_plies is not None
    if not sample or proven or visits.sum() <= 0:
        return result.best_move
    return state.legal_moves()[int(rng.choice(visits.size, p=visits / visits.sum()))]


def root_wdl(result: SearchResult) -> tuple[float, float, float]:
    """The search's own (win, draw, loss) at the root, kept beside each sample so that
    training can mix it into the value target (`--value-blend`, KataGo's mix of result and
    root value): a proven result exactly, else the search's WDL, else its value as a
    win/loss split."""
    info = result.info
    if info is not None and info.mate_plies is not None:
        return (1.0, 0.0, 0.0) if info.mate_plies > 0 else (0.0, 0.0, 1.0)
    if info is not None and info.wdl is not None and sum(info.wdl) > 0:
        win, draw, loss = info.wdl
        return float(win), float(draw), float(loss)
    value = min(1.0, max(-1.0, float(result.value)))
    return (1.0 + value) / 2.0, 0.0, (1.0 - value) / 2.0


def selfplay_searchers(game: Any, evaluator: Any, config: SelfPlayConfig) -> tuple[MCTS, MCTS | None]:
    """The full-search MCTS and (with playout-cap randomisation) the fast one: the played
    MCTS's settings for this game (engine.players.mcts_config: tuned FPU and policy
    temperature, the threat solver and its proven results) over the evaluator the player
    sees (the game's leaf-value wrapper, e.g. chess mop-up), plus only what self-play adds:
    root noise, no move temperature inside the search, its playouts and batch, its c_init."""
    from engine.players import PlayerOptions
    from engine.players.build import mcts_config, mcts_prover, with_game_knowledge
    options = PlayerOptions(player="mcts", cpuct=config.c_init, batch=config.leaves_per_batch)
    played = mcts_config(game, options)
    evaluator = with_game_knowledge(game, evaluator)
    full = MCTS(evaluator, replace(played, noise=True, dirichlet_alpha=config.dirichlet_alpha,
                                   dirichlet_epsilon=config.dirichlet_epsilon, temperature=0.0,
                                   default_nodes=config.playouts, forced_playouts=config.forced_playouts),
                prover=mcts_prover(game, options))
    fast = (MCTS(evaluator, replace(played, temperature=0.0), prover=mcts_prover(game, options))
            if config.full_search_share < 1.0 else None)
    return full, fast


def selfplay_batch(spec: GameSpec, weights: str | Path | None, n_games: int,
                   config: SelfPlayConfig = SelfPlayConfig(), seed: int = 0, *,
                   evaluator: Any = None) -> list[Sample]:
    """Play n_games self-play games in lockstep and return their samples (in game order).

    weights: a checkpoint or .onnx path; None plays with uniform priors and value 0 (a
    network-free start).  evaluator: use this one instead of opening `weights` (e.g. a
    RemoteEvaluator of an inference server).  Sample.game is the game's index in this batch.
    """
    return selfplay_games(spec, weights, n_games, config, seed, evaluator=evaluator).samples


def selfplay_games(spec: GameSpec, weights: str | Path | None, n_games: int,
                   config: SelfPlayConfig = SelfPlayConfig(), seed: int = 0, *,
                   evaluator: Any = None) -> SelfPlayGames:
    """selfplay_batch, with a summary of every game (resignations, plies, results)."""
    if n_games < 1:
        raise ValueError("n_games must be >= 1")
    game = spec.make()
    if evaluator is None and weights is None:
        from engine.evaluators import UniformEvaluator
        evaluator = UniformEvaluator()
    elif evaluator is None:
        from engine.nn.evaluator import NetworkEvaluator
        evaluator = NetworkEvaluator(str(weights), device=config.device, backend=config.backend,
                                     threads=config.threads, expect_game=spec.name,
                                     max_batch=max(64, n_games * config.leaves_per_batch))
    mcts, fast = selfplay_searchers(game, evaluator, config)
    capped = fast is not None
    fast_limits = Limits(nodes=config.fast_playouts or max(1, config.playouts // 4))
    max_plies = config.max_plies if config.max_plies is not None else game.max_plies
    limits = Limits(nodes=config.playouts)
    games = [_Game(i, game.initial_state(), game_seed(seed, i)) for i in range(n_games)]
    if config.resign_value is not None and config.resign_playthrough > 0:
        for g in games:
            g.may_resign = bool(g.rng.random() >= config.resign_playthrough)
    active = list(games)
    while active:
        # Which moves are searched fully (and kept): drawn per game and move from its own rng.
        keep = {g.index for g in active if not capped or g.rng.random() < config.full_search_share}
        full = [g for g in active if g.index in keep]
        quick = [g for g in active if g.index not in keep]
        searched: list[tuple[_Game, SearchResult]] = []
        if full:
            searched += zip(full, mcts.search_many([g.state for g in full], limits, seeds=[g.seed for g in full]))
        if quick:
            assert fast is not None
            searched += zip(quick, fast.search_many([g.state for g in quick], fast_limits,
                                                    seeds=[g.seed for g in quick]))
            searched.sort(key=lambda pair: pair[0].index)
        still: list[_Game] = []
        for g, result in searched:
            state = g.state
            visits = np.asarray(result.visits, dtype=np.float64)
            if g.index in keep:
                g.samples.append(make_sample(state, visits, g.index, root_wdl(result)))
            if (config.resign_value is not None and state.ply >= config.resign_min_ply
                    and result.value <= config.resign_value):
                if g.would_resign is None:
                    g.would_resign = state.to_play
                if g.may_resign:
                    g.outcome = Outcome(winner=1 - state.to_play, reason="resignation")
                    continue
            move = _choose(result, visits, state, state.ply < config.temperature_plies, g.rng)
            g.played[state.ply] = move_index(state, move)
            g.state = state.play(move)
            g.outcome = g.state.outcome()
            if g.outcome is None and max_plies is not None and g.state.ply >= max_plies:
                g.outcome = Outcome(winner=None, reason="ply cap")
            if g.outcome is None:
                still.append(g)
        active = still
    samples: list[Sample] = []
    summaries: list[GameSummary] = []
    for g in games:
        assert g.outcome is not None
        samples.extend(with_replies(with_outcome(g.samples, g.outcome), g.played))
        summaries.append(GameSummary(g.index, g.outcome.winner, g.outcome.reason, int(g.state.ply),
                                     g.would_resign, not g.may_resign))
    return SelfPlayGames(samples, summaries)
