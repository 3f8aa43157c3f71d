"""The AlphaZero loop: generate self-play with the best network, train a candidate on a
replay window, gate it against the best, promote, repeat; resumable after a kill.

One generation g is three phases, each finished unit persisted before the next starts:
  selfplay  units of `lockstep` games (SelfPlayUnit -> SelfPlayGames, run on the pool),
            each written by this driver as selfplay/gen-g/<board>-<k>.npz plus its game
            summary (.json) — a unit whose shard exists is never played again;
  train     engine.train.trainer.train into train/gen-g (its own state.pt resumes the
            steps exactly), started from the best network, on the newest `window`
            samples; the result is copied to nets/gen-g.pt (+ its .onnx sidecar);
            plus every shard of `data` (teacher games, earlier self-play: KataGo's mixed
            replay window), then measured on the `holdout` shards (never trained on);
  gate      the injected `Arbiter` plays the candidate against the best (and against
            alpha-beta) and stores the games; promote when the score reaches
            `threshold` (or always, AlphaZero-style).
loop.json (atomic writes) holds the configuration and how far the run has got, so a
rerun after `kill -9` continues with the first unfinished unit.  Every finished
generation adds a row to generations.md (self-play games and positions, training steps,
wall time per phase, the gate, validation) and redraws training.png (validation per
generation on each held-out set).

The arena's referee plays the gating games, and `engine` never imports `arena`: the
gate is injected through the `Arbiter` protocol (arena/gate.py implements it, and the
`engine loop` command that wires them lives in engine/cli/loop.py).
"""
from __future__ import annotations

import contextlib
import dataclasses
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Protocol

from engine.nn.files import atomic_write
from engine.train.samples import GameSpec, shard_paths, write_shard
from engine.train.selfplay import SelfPlayConfig, SelfPlayGames, game_seed, selfplay_games
from engine.train.trainer import STATE_FILE, TrainConfig

__all__ = ["LoopConfig", "LoopState", "GateResult", "Arbiter", "SelfPlayUnit", "play_unit", "run_loop",
           "load_state", "LoopError", "STATE_NAME", "net_path", "generation_table"]

STATE_NAME = "loop.json"
STATE_VERSION = 1


class LoopError(ValueError):
    """A run directory or setting the loop cannot work with (one line)."""


@dataclass(frozen=True)
class LoopConfig:
    """Everything that decides the numbers of a run (stored in loop.json; a resumed run
    keeps it, except `generations`, which may be raised).

    games: self-play games per generation, spread over `specs`, in units of `lockstep`.
    steps: training updates per generation.  window: train on the newest shards holding
    at least this many samples.  gate_games / gate_nodes: candidate vs best, colours
    swapped, MCTS at fixed playouts.  threshold: promote at this score or more (or
    always with always_promote).  alphabeta_games / alphabeta_depth: candidate vs
    alpha-beta, for an absolute yardstick.  inference: self-play workers share one
    inference process (on a GPU: the one that owns it).  data: shards (files or folders)
    trained on in every generation besides the self-play window (teacher games).  holdout:
    shards every network is measured on and never trained on, one metric set per entry.
    int8: on the CPU, every network gets its int8 export too, so self-play and the gate
    search with what the shipped players run (about 2.4x the positions per second)."""
    specs: tuple[GameSpec, ...]
    net: str = "res4x32"
    init: str | None = None
    generations: int = 5
    games: int = 32
    lockstep: int = 8
    selfplay: SelfPlayConfig = SelfPlayConfig(playouts=64, temperature_plies=6, full_search_share=0.5,
                                              fast_playouts=16, resign_value=-0.9, resign_playthrough=0.2)
    steps: int = 200
    train: TrainConfig = TrainConfig(batch_size=128, warmup_steps=20, checkpoint_every=100, log_every=50)
    window: int = 20_000
    gate_games: int = 20
    gate_nodes: int = 64
    threshold: float = 0.55
    always_promote: bool = False
    alphabeta_games: int = 8
    alphabeta_depth: int = 2
    inference: bool = False
    seed: int = 0
    data: tuple[str, ...] = ()
    holdout: tuple[str, ...] = ()
    int8: bool = True

    def __post_init__(self) -> None:
        if not self.specs:
            raise LoopError("the loop needs at least one board")
        if min(self.generations, self.games, self.lockstep, self.steps, self.window, self.gate_nodes) < 1:
            raise LoopError("generations, games, lockstep, steps, window and gate nodes must be >= 1")
        if not 0.0 <= self.threshold <= 1.0:
            raise LoopError("the promotion threshold is a score in [0, 1]")

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "LoopConfig":
        data = dict(data)
        data["specs"] = tuple(GameSpec(**s) for s in data["specs"])
        data["selfplay"] = SelfPlayConfig(**data["selfplay"])
        data["train"] = TrainConfig(**data["train"])
        data["data"] = tuple(data.get("data", ()))
        data["holdout"] = tuple(data.get("holdout", ()))
        return cls(**data)


@dataclass(frozen=True)
class GateResult:
    """The candidate's games against the best (wins, losses, draws) and its score against
    alpha-beta (None when none were played)."""
    wins: int
    losses: int
    draws: int
    vs_alphabeta: float | None = None

    @property
    def score(self) -> float:
        """Points per game; 0.5 (no evidence either way) when none was played."""
        played = self.wins + self.losses + self.draws
        return (self.wins + 0.5 * self.draws) / played if played else 0.5


class Arbiter(Protocol):
    """Plays and stores the evaluation games (the arena implements it).  Must be resumable:
    called again for the same generation it plays only the games not yet stored."""

    def gate(self, generation: int, candidate: Path, best: Path, config: LoopConfig, pool: Any) -> GateResult: ...

    def report(self, state: "LoopState") -> list[str]: ...


@dataclass
class LoopState:
    """loop.json: the configuration, the generation in progress and its phase, the best
    network, and one history entry per finished generation."""
    config: LoopConfig
    generation: int = 1
    phase: str = "selfplay"
    best: str = "nets/gen-0000.pt"
    history: list[dict[str, Any]] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)   # this generation's phases so far
    baseline: dict[str, Any] = field(default_factory=dict)    # gen-0000 on the holdout sets

    def to_json(self) -> str:
        return json.dumps({"version": STATE_VERSION, "config": self.config.to_dict(),
                           "generation": self.generation, "phase": self.phase, "best": self.best,
                           "history": self.history, "seconds": self.seconds, "baseline": self.baseline},
                          indent=1)


def net_path(generation: int) -> str:
    return f"nets/gen-{generation:04d}.pt"


def load_state(run_dir: str | Path) -> LoopState:
    path = Path(run_dir) / STATE_NAME
    try:
        data = json.loads(path.read_text())
        if data.get("version") != STATE_VERSION:
            raise LoopError(f"{path}: loop state version {data.get('version')!r}, expected {STATE_VERSION}")
        return LoopState(LoopConfig.from_dict(data["config"]), int(data["generation"]), str(data["phase"]),
                         str(data["best"]), list(data["history"]), dict(data.get("seconds", {})),
                         dict(data.get("baseline", {})))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        if isinstance(exc, LoopError):
            raise
        raise LoopError(f"{path}: unreadable loop state ({type(exc).__name__})") from None


def _save(run_dir: Path, state: LoopState) -> None:
    atomic_write(run_dir / STATE_NAME, lambda handle: handle.write(state.to_json().encode()))


# --- self-play units ---------------------------------------------------------------------------

@dataclass(frozen=True)
class SelfPlayUnit:
    """One batch of self-play games, as plain data.  server: None (the unit opens `weights`
    itself), an InferenceAddress or a Ray actor handle (a shared inference process)."""
    spec: GameSpec
    weights: str
    games: int
    config: SelfPlayConfig
    seed: int
    server: Any = None


def play_unit(unit: SelfPlayUnit) -> SelfPlayGames:
    """Play one unit (in a worker).  Plain function of its input."""
    evaluator = None
    if unit.server is not None:
        from engine.train.inference import RemoteEvaluator
        evaluator = RemoteEvaluator(unit.server, expect_game=unit.spec.name)
    return selfplay_games(unit.spec, unit.weights, unit.games, unit.config, unit.seed, evaluator=evaluator)


def _units(config: LoopConfig, generation: int, weights: str, out: Path) -> list[tuple[Path, SelfPlayUnit]]:
    """The generation's units (shard path, unit): games spread over the boards, seeds
    from (run seed, generation, board, unit) only, so a replayed unit is the same."""
    plan = []
    for b, spec in enumerate(config.specs):
        games = config.games // len(config.specs) + (1 if b < config.games % len(config.specs) else 0)
        for k, start in enumerate(range(0, games, config.lockstep)):
            seed = game_seed(config.seed, generation * 1_000_003 + b * 10_007 + k)
            unit = SelfPlayUnit(spec, weights, min(config.lockstep, games - start), config.selfplay, seed)
            plan.append((out / f"{spec.label}-{k:04d}.npz", unit))
    return plan


@contextlib.contextmanager
def _inference(config: LoopConfig, weights: Path, pool: Any) -> Iterator[Any]:
    """A shared inference process for this generation's self-play (None when off)."""
    if not config.inference:
        yield None
        return
    sp = config.selfplay
    if getattr(pool, "kind", "local") == "ray":
        from engine.train.inference import ray_inference_actor
        gpus = 1.0 if sp.device == "cuda" else 0.0
        yield ray_inference_actor(str(weights), device=sp.device, backend=sp.backend, threads=sp.threads,
                                  clients=pool.workers, num_gpus=gpus)
        return
    from engine.train.inference import InferenceServer
    with InferenceServer(weights, device=sp.device, backend=sp.backend, threads=sp.threads,
                         clients=pool.workers) as server:
        yield server.address


def _selfplay(run_dir: Path, state: LoopState, pool: Any, echo: Callable[[str], None]) -> None:
    config, g = state.config, state.generation
    out = run_dir / "selfplay" / f"gen-{g:04d}"
    plan = _units(config, g, str(run_dir / state.best), out)
    todo = [(path, unit) for path, unit in plan if not path.with_suffix(".json").exists()]
    if len(todo) < len(plan):
        echo(f"gen {g}: self-play {len(plan) - len(todo)} of {len(plan)} units already there, skipped")
    if not todo:
        return
    start = time.perf_counter()
    positions = 0
    with _inference(config, run_dir / state.best, pool) as server:
        units = [dataclasses.replace(unit, server=server) for _, unit in todo]
        for (path, unit), played in zip(todo, pool.map(play_unit, units)):
            summary = [dataclasses.asdict(s) | {"false_resignation": s.false_resignation} for s in played.games]
            if played.samples:   # none when every move was a fast one
                write_shard(path, played.samples, unit.spec,
                            notes=f"loop gen {g} self-play with {state.best}; seed {unit.seed}")
            # The summary last: its presence marks the unit done.
            atomic_write(path.with_suffix(".json"), lambda handle: handle.write(json.dumps(summary).encode()))
            positions += len(played.samples)
    seconds = time.perf_counter() - start
    echo(f"gen {g}: self-play {len(todo)} units, {positions} kept positions in {seconds:.1f} s")


def _shard_samples(path: Path) -> int:
    """How many samples a shard holds (its meta, without loading the arrays)."""
    import numpy as np

    with np.load(path, allow_pickle=False) as npz:
        return int(json.loads(str(npz["meta"]))["samples"])


def _window(run_dir: Path, config: LoopConfig) -> list[Path]:
    """The newest non-empty shards holding at least `window` samples in all."""
    chosen: list[Path] = []
    total = 0
    for folder in sorted((run_dir / "selfplay").glob("gen-*"), reverse=True):
        for path in sorted(folder.glob("*.npz"), reverse=True):
            total += _shard_samples(path)
            chosen.append(path)
        if total >= config.window:
            break
    if not chosen:
        raise LoopError(f"{run_dir}: no self-play samples to train on (raise --games or the full-search share)")
    return sorted(chosen)


def _train(run_dir: Path, state: LoopState, echo: Callable[[str], None]) -> None:
    from engine.train.trainer import train

    config, g = state.config, state.generation
    train_dir = run_dir / "train" / f"gen-{g:04d}"
    shards = _window(run_dir, config) + (shard_paths(config.data) if config.data else [])
    resume = (train_dir / STATE_FILE).is_file()
    report = train(train_dir, shards, None, config.steps, config.train, resume=resume,
                   init=None if resume else run_dir / state.best, expect_game=config.specs[0].name,
                   notes=f"loop generation {g}")
    target = run_dir / net_path(g)
    data = Path(report.checkpoint).read_bytes()
    atomic_write(target, lambda handle: handle.write(data))
    _exports(target, config)
    echo(f"gen {g}: trained {config.steps} steps on {len(shards)} shards, loss {report.loss:.4f} "
         f"(policy {report.policy_loss:.4f}, value {report.value_loss:.4f})")


def _exports(target: Path, config: LoopConfig) -> None:
    """The network's ONNX export and, with `int8` on the CPU, its int8 one (calibrated on the
    run's boards and rules), which the players beside the file pick up by themselves."""
    from engine.nn.onnx_backend import export_sidecar
    from engine.nn.quantize import quantize_sidecar

    export_sidecar(target)
    if config.int8 and config.selfplay.device == "cpu":
        boards = sorted({spec.width for spec in config.specs if spec.width == spec.height})
        quantize_sidecar(target, boards=boards or (15,), rules=sorted({spec.rule or "freestyle" for spec in config.specs}),
                         seed=config.seed)


def _first_network(run_dir: Path, config: LoopConfig) -> None:
    """nets/gen-0000.pt: the --init network, or random weights of `config.net`."""
    from engine.nn.checkpoint import create_random_checkpoint, read_meta

    target = run_dir / net_path(0)
    if config.init is not None:
        read_meta(config.init, expect_game=config.specs[0].name)  # CheckpointError if unusable
        data = Path(config.init).read_bytes()
        atomic_write(target, lambda handle: handle.write(data))
    else:
        create_random_checkpoint(target, config.specs[0].name, config.net, seed=config.seed,
                                 notes="loop generation 0: random weights")
    _exports(target, config)


def _false_resignations(run_dir: Path, generation: int) -> tuple[int, int]:
    """(false resignations, played-out games that would have resigned) of a generation."""
    false = would = 0
    for path in (run_dir / "selfplay" / f"gen-{generation:04d}").glob("*.json"):
        for game in json.loads(path.read_text()):
            if game["played_out"] and game["would_resign"] is not None:
                would += 1
                false += int(game["false_resignation"])
    return false, would


def _validate(config: LoopConfig, weights: Path) -> dict[str, dict[str, Any]]:
    """The network's metrics on each holdout set, by its name ({} without holdout sets).
    value_blend 0: the value is measured against the game result alone."""
    if not config.holdout:
        return {}
    from engine.nn.checkpoint import load_checkpoint
    from engine.train.samples import read_shards
    from engine.train.validate import validate

    game = config.specs[0].name
    model, _ = load_checkpoint(weights, expect_game=game)
    return {Path(source).name: validate(model, read_shards([source], game), value_blend=0.0,
                                        max_samples=config.train.val_samples)
            for source in config.holdout}


def _selfplay_counts(run_dir: Path, generation: int) -> tuple[int, int]:
    """(games, kept positions) of a generation's self-play, from its files."""
    games = positions = 0
    for path in (run_dir / "selfplay" / f"gen-{generation:04d}").glob("*.json"):
        games += len(json.loads(path.read_text()))
        shard = path.with_suffix(".npz")
        positions += _shard_samples(shard) if shard.is_file() else 0
    return games, positions


_TABLE_HEAD = ("| gen | self-play games | positions | steps | self-play s | train s | gate s | "
               "vs best (W-L-D) | score | promoted | validation: top-1 / value MSE / sign |\n"
               "|---|---|---|---|---|---|---|---|---|---|---|")


def _metrics_text(validation: dict[str, dict[str, Any]]) -> str:
    return "; ".join(f"{name} {m['policy_top1']:.3f} / {m['value_mse_result']:.3f} / "
                     + (f"{m['value_sign']:.3f}" if m.get("value_sign") is not None else "-")
                     for name, m in validation.items()) or "-"


def generation_table(state: LoopState) -> str:
    """The run so far as a markdown table, one row per finished generation (row 0: the
    starting network on the holdout sets)."""
    rows = [_TABLE_HEAD]
    if state.baseline:
        rows.append(f"| 0 | - | - | - | - | - | - | - | - | start | {_metrics_text(state.baseline)} |")
    for h in state.history:
        sec = h.get("seconds", {})
        rows.append(f"| {h['generation']} | {h.get('selfplay_games', '-')} | {h.get('positions', '-')} | "
                    f"{h.get('steps', '-')} | {sec.get('selfplay', 0):.0f} | {sec.get('train', 0):.0f} | "
                    f"{sec.get('gate', 0):.0f} | {h['wins']}-{h['losses']}-{h['draws']} | {h['score']:.3f} | "
                    f"{'yes' if h['promoted'] else 'no'} | {_metrics_text(h.get('validation', {}))} |")
    return "\n".join(rows) + "\n"


def _write_reports(run_dir: Path, state: LoopState) -> None:
    """generations.md and training.png (validation per generation; no plot without matplotlib)."""
    from engine.train.plot import plot_generations

    table = generation_table(state)
    atomic_write(run_dir / "generations.md", lambda handle: handle.write(table.encode()))
    plot_generations(run_dir, state.baseline, state.history)


@contextlib.contextmanager
def _timed(state: LoopState, phase: str) -> Iterator[None]:
    """Adds the phase's wall time to this generation's record (a resumed phase adds up)."""
    start = time.perf_counter()
    yield
    state.seconds[phase] = round(state.seconds.get(phase, 0.0) + time.perf_counter() - start, 1)


def run_loop(run_dir: str | Path, config: LoopConfig | None, arbiter: Arbiter, pool: Any, *,
             generations: int | None = None, echo: Callable[[str], None] = lambda line: None,
             stop_after: str | None = None) -> LoopState:
    """Run (or resume) the loop in run_dir until `generations` generations are finished.

    config: for a new run (None: resume the one in run_dir; given for an existing run it
    must match what is stored, except generations).  stop_after: "selfplay" | "train" to
    stop after that phase of the current generation (tests of resumption).
    """
    run_dir = Path(run_dir)
    if (run_dir / STATE_NAME).is_file():
        state = load_state(run_dir)
        if config is not None and dataclasses.replace(config, generations=state.config.generations) != state.config:
            raise LoopError(f"{run_dir} holds a run with other settings; use another --run or the same flags")
    else:
        if config is None:
            raise LoopError(f"{run_dir}: no loop to resume (no {STATE_NAME})")
        run_dir.mkdir(parents=True, exist_ok=True)
        state = LoopState(config)
        _first_network(run_dir, config)
        _save(run_dir, state)
    if state.config.holdout and not state.baseline:
        state.baseline = _validate(state.config, run_dir / net_path(0))
        _save(run_dir, state)
    if generations is not None and generations != state.config.generations:
        state.config = dataclasses.replace(state.config, generations=generations)
        _save(run_dir, state)
    while state.generation <= state.config.generations:
        g = state.generation
        if state.phase == "selfplay":
            with _timed(state, "selfplay"):
                _selfplay(run_dir, state, pool, echo)
            state.phase = "train"
            _save(run_dir, state)
            if stop_after == "selfplay":
                return state
        if state.phase == "train":
            with _timed(state, "train"):
                _train(run_dir, state, echo)
            state.phase = "gate"
            _save(run_dir, state)
            if stop_after == "train":
                return state
        with _timed(state, "gate"):
            result = arbiter.gate(g, run_dir / net_path(g), run_dir / state.best, state.config, pool)
        validation = _validate(state.config, run_dir / net_path(g))
        promoted = state.config.always_promote or result.score >= state.config.threshold
        false, would = _false_resignations(run_dir, g)
        games, positions = _selfplay_counts(run_dir, g)
        state.history.append({"generation": g, "candidate": net_path(g), "best_before": state.best,
                              "wins": result.wins, "losses": result.losses, "draws": result.draws,
                              "score": round(result.score, 4), "vs_alphabeta": result.vs_alphabeta,
                              "promoted": promoted, "false_resignations": false, "would_resign": would,
                              "selfplay_games": games, "positions": positions, "steps": state.config.steps,
                              "seconds": dict(state.seconds), "validation": validation})
        state.seconds = {}
        echo(f"gen {g}: candidate vs best +{result.wins} -{result.losses} ={result.draws} "
             f"(score {result.score:.3f}{', promoted' if promoted else ', kept the best'})"
             + (f"; vs alpha-beta {result.vs_alphabeta:.3f}" if result.vs_alphabeta is not None else "")
             + (f"; false resignations {false}/{would}" if would else ""))
        if promoted:
            state.best = net_path(g)
        state.generation, state.phase = g + 1, "selfplay"
        _save(run_dir, state)
        _write_reports(run_dir, state)
        if validation:
            echo(f"gen {g}: validation (top-1 / value MSE vs result / sign) {_metrics_text(validation)}")
        for line in arbiter.report(state):
            echo(line)
    return state

