"""Data-generation jobs: one job = one batch of games -> one shard, run here or in a pool.

A Job is plain data (game spec, kind, settings, seed, target path), and `run_job` is a
plain function of it: the local process pool below and a Ray task run it alike.  The
driver skips jobs whose shard already exists, so rerunning an interrupted command
finishes the missing shards and never redoes a finished one (each job's seed depends
only on its place in the plan, so the shards it does write are the same).
"""
from __future__ import annotations

import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

from engine.train.samples import GameSpec, first_player_results, write_shard
from engine.train.selfplay import SelfPlayConfig, game_seed, selfplay_batch
from engine.train.teacher import TeacherConfig, TeacherFactory, teacher_batch

__all__ = ["Job", "JobResult", "plan_jobs", "run_job", "run_jobs"]


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
    cut into shards of at most games_per_shard games, each with its own seed."""
    jobs = []
    for s, spec in enumerate(specs):
        games = total_games // len(specs) + (1 if s < total_games % len(specs) else 0)
        for index, start in enumerate(range(0, games, games_per_shard)):
            count = min(games_per_shard, games - start)
            job_seed = game_seed(seed, s * 1_000_003 + index)
            rule = "" if spec.rule in ("", "freestyle") else f"-{spec.rule}"   # rules must not share names
            name = f"{kind}-{spec.label}{rule}-seed{seed}-{index:05d}.npz"
            jobs.append(Job(kind, spec, count, job_seed, str(Path(out_dir) / name), settings, weights,
                            make_teacher))
    return jobs


def run_job(job: Job) -> JobResult:
    """Play the job's games and write its shard (atomically).  Plain function of `job`."""
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
    seconds = time.perf_counter() - start
    write_shard(job.path, samples, job.spec, notes=f"{notes}; seed {job.seed}")
    results = list(first_player_results(samples).values())
    return JobResult(job.path, job.games, len(samples), seconds, results.count(1.0),
                     results.count(0.0), results.count(-1.0))


def run_jobs(jobs: Sequence[Job], workers: int = 1, echo: Callable[[str], None] = lambda line: None,
             show_progress: bool = False) -> list[JobResult]:
    """Run the jobs whose shard is missing (in `workers` processes), echoing a line each;
    show_progress: a bar over the shards on stderr."""
    from engine.train.progress import Progress

    todo = [job for job in jobs if not Path(job.path).exists()]
    results = [JobResult(job.path, 0, 0, 0.0, 0, 0, 0, skipped=True)
               for job in jobs if Path(job.path).exists()]
    for result in results:
        echo(result.line())
    progress = Progress(len(todo), jobs[0].kind if jobs else "jobs", unit="shards") if show_progress else None
    positions = 0

    def finished(result: JobResult) -> None:
        nonlocal positions
        results.append(result)
        echo(result.line())
        positions += result.positions
        if progress is not None:
            progress.update(1, note=f"{positions} positions")

    if workers <= 1 or len(todo) <= 1:
        for job in todo:
            finished(run_job(job))
    else:
        import multiprocessing
        # spawn: a forked child would inherit torch's thread pools and any open network.
        with ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn")) as pool:
            for result in pool.map(run_job, todo):
                finished(result)
    if progress is not None:
        progress.close()
    return results
