"""Data-generation jobs: one job = one batch of games -> one shard, run here or in a pool.

A Job is plain data (game spec, kind, settings, seed, target path), and `play_job` is a
plain function of it (job -> samples): a local process pool and a Ray task run it alike
(engine.train.pool), and the driver alone writes the shards.  The driver skips jobs
whose shard already exists, so rerunning an interrupted command
finishes the missing shards and never redoes a finished one (each job's seed depends
only on its place in the plan, so the shards it does write are the same).
"""
from __future__ import annotations

import itertools
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

from engine.train.samples import GameSpec, Sample, first_player_results, write_shard
from engine.train.selfplay import SelfPlayConfig, game_seed, selfplay_batch
from engine.train.teacher import TeacherConfig, TeacherFactory, teacher_batch

__all__ = ["Job", "JobResult", "plan_jobs", "play_job", "run_job", "run_jobs"]


@dataclass(frozen=True)
class Job:
    """kind "selfplay" (with weights and a SelfPlayConfig) or "teacher" (a TeacherConfig and
    the top-level function that builds the teacher, None = our alpha-beta)."""
    kind: str
    spec: GameSpec
    games: int
    seed: int
    path: str
    settings: SelfPlayConfig | TeacherConfig
    weights: str | None = None
    make_teacher: TeacherFactory | None = None


@dataclass(frozen=True)
class JobResult:
    path: str
    games: int
    positions: int
    seconds: float
    first_wins: int
    draws: int
    second_wins: int
    skipped: bool = False

    def line(self) -> str:
        if self.skipped:
            return f"{self.path}: already there, skipped"
        rate = self.positions / self.seconds if self.seconds > 0 else 0.0
        return (f"{self.path}: {self.games} games, {self.positions} positions in {self.seconds:.1f} s "
                f"({rate:.1f} positions/s); first player +{self.first_wins} ={self.draws} -{self.second_wins}")


def plan_jobs(kind: str, specs: Sequence[GameSpec], total_games: int, games_per_shard: int, seed: int,
              out_dir: str | Path, settings: SelfPlayConfig | TeacherConfig,
              weights: str | None = None, make_teacher: TeacherFactory | None = None) -> list[Job]:
    """total_games spread evenly over the board specs (the first ones get the remainder),
    cut into shards of at most games_per_shard games, each with its own seed.  The boards take
    turns (first shard of each, then the second of each, ...), so a run stopped early, as long
    teacher runs are, has shards of every board."""
    per_spec = []
    for s, spec in enumerate(specs):
        games = total_games // len(specs) + (1 if s < total_games % len(specs) else 0)
        jobs = []
        for index, start in enumerate(range(0, games, games_per_shard)):
            count = min(games_per_shard, games - start)
            job_seed = game_seed(seed, s * 1_000_003 + index)
            rule = "" if spec.rule in ("", "freestyle") else f"-{spec.rule}"   # rules must not share names
            name = f"{kind}-{spec.label}{rule}-seed{seed}-{index:05d}.npz"
            jobs.append(Job(kind, spec, count, job_seed, str(Path(out_dir) / name), settings, weights,
                            make_teacher))
        per_spec.append(jobs)
    return [job for turn in itertools.zip_longest(*per_spec) for job in turn if job is not None]


def play_job(job: Job) -> tuple[list[Sample], float, str]:
    """Play the job's games: (samples, seconds, shard notes).  Plain function of `job`."""
    start = time.perf_counter()
    if job.kind == "selfplay":
        assert isinstance(job.settings, SelfPlayConfig)
        samples = selfplay_batch(job.spec, job.weights, job.games, job.settings, job.seed)
        notes = f"self-play with {job.weights or 'uniform priors'}, {job.settings.playouts} playouts"
    else:
        assert isinstance(job.settings, TeacherConfig)
        samples = teacher_batch(job.spec, job.games, job.settings, job.seed, job.make_teacher)
        engine = job.settings.uci or job.settings.gomocup
        who = " ".join(engine) if engine else "alphabeta"
        notes = (f"teacher {who} depth {job.settings.depth} nodes {job.settings.nodes} "
                 f"movetime {job.settings.movetime} multipv {job.settings.multipv}")
    return samples, time.perf_counter() - start, f"{notes}; seed {job.seed}"


def _write(job: Job, samples: list[Sample], seconds: float, notes: str) -> JobResult:
    write_shard(job.path, samples, job.spec, notes=notes)
    results = list(first_player_results(samples).values())
    return JobResult(job.path, job.games, len(samples), seconds, results.count(1.0),
                     results.count(0.0), results.count(-1.0))


def run_job(job: Job) -> JobResult:
    """Play the job's games and write its shard (atomically), here in this process."""
    return _write(job, *play_job(job))


def run_jobs(jobs: Sequence[Job], workers: int = 1, echo: Callable[[str], None] = lambda line: None,
             pool: Any = None, show_progress: bool = False) -> list[JobResult]:
    """Run the jobs whose shard is missing on `pool` (default: `workers` local processes),
    writing each shard here as its job finishes and echoing a line each; show_progress: a
    bar over the shards on stderr."""
    from engine.train.pool import LocalPool
    from engine.train.progress import Progress

    todo = [job for job in jobs if not Path(job.path).exists()]
    results = [JobResult(job.path, 0, 0, 0.0, 0, 0, 0, skipped=True)
               for job in jobs if Path(job.path).exists()]
    for result in results:
        echo(result.line())
    progress = Progress(len(todo), jobs[0].kind if jobs else "jobs", unit="shards") if show_progress else None
    positions = 0
    own = pool is None
    pool = LocalPool(workers) if own else pool
    try:
        for job, played in zip(todo, pool.map(play_job, todo)):
            results.append(_write(job, *played))
            echo(results[-1].line())
            positions += results[-1].positions
            if progress is not None:
                progress.update(1, note=f"{positions} positions")
    finally:
        if own:
            pool.close()
        if progress is not None:
            progress.close()
    return results
