"""Supervised bootstrap: games played by a teacher, its choices as policy targets.

`teacher_batch(spec, n_games, config, seed) -> list[Sample]` is a plain function of its
inputs, like selfplay_batch: it builds its own teacher and closes it before returning.
The teacher is our alpha-beta unless `make_teacher` names another: an external chess
engine is driven by `protocols.uci_teacher.uci_teacher`, any Gomocup brain (Rapfi) by
`protocols.gomocup_teacher.gomocup_teacher` (engine/ starts no processes).

Targets: one-hot on the teacher's move, or with `multipv` = k > 1 a soft target
softmax(value / soft_tau) over the k best lines' first moves (values in [-1, 1] from the
side to move, as SearchInfo reports them).  Diversity: a game starts from a random
position of `openings` (chess FENs, e.g. the arena's suite) when given, or (gomoku) after a
random number of moves of one of `start_games` (recorded games of the same board size, e.g.
the arena's: the positions our players reach, labelled by the teacher), then
`opening_plies` random plies (not recorded; gomoku stones near the centre), then with
probability `epsilon` a ply plays a random move instead of the teacher's (still recorded
with the teacher's target); the teacher plays both colours.  Values: each game's final
outcome, and the teacher's own (win, draw, loss) for the position when it gives one
(Sample.teacher_wdl; the trainer blends the two).
"""
from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from engine.games import game_profile
from engine.games.base import Outcome
from engine.games.openings import Opening
from engine.games.gomoku.psq import PsqGame
from engine.train.samples import (GameSpec, Sample, make_sample, move_index, wdl_from_value, with_outcome,
                                  with_replies)
from engine.train.selfplay import game_seed
from engine.types import Limits, Move, SearchInfo

__all__ = ["TeacherConfig", "Advice", "Teach", "TeacherFactory", "teacher_batch", "soft_target"]


@dataclass(frozen=True)
class TeacherConfig:
    """depth / nodes / movetime: the teacher's limit per move (at least one).  multipv: lines per
    move for a soft target (1 = one-hot).  soft_tau: temperature of that softmax, in value
    units.  opening_plies / opening_radius: random plies at the start (gomoku: within
    opening_radius cells of the centre).  epsilon: chance that a ply plays a random move
    (gomoku: next to a stone).  max_plies: a longer game is a draw (None: the game's
    Game.max_plies, chess 300, gomoku no cap).  hash_mb: our alpha-beta's table.  uci:
    chess only, an external engine's command line (argv) for a `make_teacher` that drives one (see
    protocols.uci_teacher); uci_options: (name, value) pairs it is configured with.
    gomocup / gomocup_info: gomoku only, a Gomocup brain's argv and the INFO (key, value)
    pairs sent before play (protocols.gomocup_teacher).  openings: chess FENs a game
    starts from (one drawn per game), before the random opening plies.  start_games: gomoku
    games (engine.games.gomoku.psq); a game starts after 1 to all-but-one of the moves of one of
    those of its board size, drawn uniformly, before the random opening plies."""
    depth: int | None = 2
    movetime: float | None = None
    nodes: int | None = None
    multipv: int = 1
    soft_tau: float = 0.1
    opening_plies: int = 4
    opening_radius: int = 3
    epsilon: float = 0.05
    max_plies: int | None = None
    hash_mb: int = 16
    uci: tuple[str, ...] | None = None
    uci_options: tuple[tuple[str, Any], ...] = ()
    gomocup: tuple[str, ...] | None = None
    gomocup_info: tuple[tuple[str, str], ...] = ()
    openings: tuple[str, ...] = ()
    start_games: tuple[PsqGame, ...] = ()

    def __post_init__(self) -> None:
        if self.depth is None and self.movetime is None and self.nodes is None:
            raise ValueError("the teacher needs a depth, a node count or a movetime")
        if self.multipv < 1 or self.soft_tau <= 0 or not 0.0 <= self.epsilon <= 1.0:
            raise ValueError("multipv >= 1, soft_tau > 0 and 0 <= epsilon <= 1")


def soft_target(legal: list[Move], lines: list[tuple[Move, float]], tau: float) -> np.ndarray:
    """Weights over `legal`: softmax(value / tau) over the lines' moves, 0 elsewhere."""
    target = np.zeros(len(legal))
    index = {move: j for j, move in enumerate(legal)}
    scored = [(index[move], value) for move, value in lines if move in index]
    if not scored:
        raise ValueError("no teacher line starts with a legal move")
    values = np.array([v for _, v in scored]) / tau
    weights = np.exp(values - values.max())
    for (j, _), w in zip(scored, weights):
        target[j] += w
    return target / target.sum()


@dataclass(frozen=True)
class Advice:
    """A teacher's answer for one position: the move it plays, its policy target (weights
    over state.legal_moves()) and its own evaluation as (win, draw, loss) for the side
    to move, None when it gave none."""
    move: Move
    target: np.ndarray
    wdl: np.ndarray | None = None


Teach = Callable[[Any, int], Advice]  # (state, game index) -> the teacher's advice
TeacherFactory = Callable[["TeacherConfig"], tuple[Teach, Callable[[], None]]]


def _alphabeta_teacher(game: Any, config: TeacherConfig) -> tuple[Teach, Callable[[], None]]:
    from engine.players import PlayerOptions, build_player
    searcher = build_player(game, PlayerOptions(player="alphabeta", hash_mb=config.hash_mb),
                            fallbacks=()).searcher
    limits = Limits(depth=config.depth, time=config.movetime, nodes=config.nodes, multipv=config.multipv)
    current = [-1]

    def teach(state: Any, game_index: int) -> Advice:
        if current[0] != game_index:
            searcher.new_game()
            current[0] = game_index
        infos: list[SearchInfo] = []
        result = searcher.search(state, limits, on_info=infos.append)
        legal = list(state.legal_moves())
        wdl = wdl_from_value(result.info.value) if result.info is not None else None
        if config.multipv == 1 or result.info is None or result.info.depth == 0:
            return Advice(result.best_move, soft_target(legal, [(result.best_move, 0.0)], 1.0), wdl)
        final = {info.multipv: info for info in infos if info.depth == result.info.depth and info.pv}
        lines = [(info.pv[0], info.value) for _, info in sorted(final.items())]
        return Advice(result.best_move, soft_target(legal, lines, config.soft_tau), wdl)

    return teach, lambda: None


def _random_move(state: Any, rng: random.Random, radius: int | None = None) -> Move:
    """Chess: any legal move.  Stone games (gomoku): a cell within `radius` of the centre
    (opening), else next to a stone, so a random ply is still a move a player might consider."""
    legal = list(state.legal_moves())
    if not state.game.stones:
        return rng.choice(legal)
    w, h = state.width, state.height
    if radius is not None or state.ply == 0:
        r = radius if radius is not None else 1
        cx, cy = (w - 1) / 2, (h - 1) / 2
        near = [m for m in legal if abs(m % w - cx) <= r + 0.5 and abs(m // w - cy) <= r + 0.5]
    else:
        stones = [i for i, c in enumerate(state.cells) if c]
        near = [m for m in legal if any(abs(m % w - s % w) <= 1 and abs(m // w - s // w) <= 1 for s in stones)]
    return rng.choice(near or legal)


def teacher_batch(spec: GameSpec, n_games: int, config: TeacherConfig = TeacherConfig(),
                  seed: int = 0, make_teacher: TeacherFactory | None = None) -> list[Sample]:
    """Play n_games teacher games (one after another) and return their samples in game order.

    make_teacher(config) -> (teach, close): None = our alpha-beta; it must be a top-level
    function (picklable) so process pools and Ray can ship it with the job."""
    if n_games < 1:
        raise ValueError("n_games must be >= 1")
    game = spec.make()
    if config.uci is not None and game.protocol != "uci":
        raise ValueError(f"an external UCI teacher cannot play {spec.name} (its engines speak {game.protocol})")
    if config.uci is not None and make_teacher is None:
        raise ValueError("an external UCI teacher needs make_teacher=protocols.uci_teacher.uci_teacher")
    if config.gomocup is not None and game.protocol != "gomocup":
        raise ValueError(f"a Gomocup teacher cannot play {spec.name} (its engines speak {game.protocol})")
    if config.gomocup is not None and make_teacher is None:
        raise ValueError("a Gomocup teacher needs make_teacher=protocols.gomocup_teacher.gomocup_teacher")
    records = _records_for(game, config.start_games)
    teach, close = make_teacher(config) if make_teacher is not None else _alphabeta_teacher(game, config)
    max_plies = config.max_plies if config.max_plies is not None else game.max_plies
    samples: list[Sample] = []
    try:
        for index in range(n_games):
            samples.extend(_play(game, teach, config, index, random.Random(game_seed(seed, index)), max_plies,
                                 records))
    finally:
        close()
    return samples


def _records_for(game: Any, start_games: tuple[PsqGame, ...]) -> list[PsqGame]:
    """The start games of this board size with at least two moves (so there is a position to
    start from); ValueError when start games are given but none fits."""
    if not start_games:
        return []
    if not game.stones:
        raise ValueError(f"start games are stone games (.psq); {game.name} starts from openings")
    fitting = [g for g in start_games if (g.width, g.height) == (game.width, game.height) and len(g.moves) > 1]
    if not fitting:
        sizes = ", ".join(sorted({f"{g.width}x{g.height}" for g in start_games}))
        raise ValueError(f"no start game is {game.width}x{game.height} (the games given are {sizes})")
    return fitting


def _from_record(game: Any, record: PsqGame, rng: random.Random) -> Any:
    """The position after a uniformly drawn 1..len-1 moves of `record` (earlier if it ends there)."""
    state = game.initial_state()
    for move in record.moves[:rng.randint(1, len(record.moves) - 1)]:
        if not state.is_legal(move):   # the game ended before this move (e.g. an overline rule)
            break
        state = state.play(move)
    return state


def _play(game: Any, teach: Teach, config: TeacherConfig, index: int, rng: random.Random,
          max_plies: int | None, records: list[PsqGame]) -> list[Sample]:
    state = game.initial_state()
    if config.openings:     # through the game's book: a Chess960 FEN starts a Chess960 game
        state, _ = game_profile(game.name).openings().start(game, Opening(name="teacher", fen=rng.choice(config.openings)))
    elif records:
        state = _from_record(game, rng.choice(records), rng)
    for _ in range(config.opening_plies):
        if state.outcome() is not None:
            break
        state = state.play(_random_move(state, rng, config.opening_radius))
    recorded: list[Sample] = []
    played: dict[int, int] = {}
    outcome: Outcome | None = state.outcome()
    while outcome is None:
        advice = teach(state, index)
        recorded.append(make_sample(state, advice.target, index, advice.wdl))
        move = advice.move
        if rng.random() < config.epsilon:
            move = _random_move(state, rng)
        played[state.ply] = move_index(state, move)
        state = state.play(move)
        outcome = state.outcome()
        if outcome is None and max_plies is not None and state.ply >= max_plies:
            outcome = Outcome(winner=None, reason="ply cap")
    return with_replies(with_outcome(recorded, outcome), played)

