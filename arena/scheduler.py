"""The schedule (deterministic from the configuration) and the driver that runs it.

Games run on `concurrency` worker threads; each worker keeps its own EnginePool (its
engines are separate processes, so threads suffice).  The driver alone writes the
store, one committed game at a time, prints progress, and checks the SPRT after each
game.  Re-running the same configuration skips the keys already stored.
"""
from __future__ import annotations

import queue
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import Callable, Sequence

import click

from arena.config import EngineSpec, TournamentConfig
from arena.engines import EnginePool
from arena.openings import Opening, opening_for, suite_for
from arena.ratings import GameResult, match_summary, pentanomial
from arena.records import GameJob, GameRecord
from arena.referee import play_game
from arena.sprt import SprtStatus, llr_pentanomial, llr_trinomial, sprt_status
from arena.store import Store

__all__ = ["pairings", "build_schedule", "load_openings", "run_tournament", "RunSummary", "sprt_from_records"]


def pairings(engines: Sequence[EngineSpec], fmt: str) -> list[tuple[EngineSpec, EngineSpec]]:
    """Round robin: every pair once; gauntlet: the first engine against each of the others."""
    if fmt == "gauntlet":
        return [(engines[0], other) for other in engines[1:]]
    return [(a, b) for i, a in enumerate(engines) for b in engines[i + 1:]]


def load_openings(config: TournamentConfig) -> list[Opening] | None:
    """The opening suite (None: the game generates a seeded opening per pair).  Raises OpeningError."""
    return suite_for(config.game, config.openings, config.boards, config.rule)


def build_schedule(config: TournamentConfig, openings: Sequence[Opening] | None) -> list[GameJob]:
    """Every game of the tournament in playing order: opening pair k of every board and
    pairing before pair k + 1, the two games of a pair (colours swapped) back to back."""
    fingerprint = config.fingerprint()
    jobs: list[GameJob] = []
    boards: Sequence[int | None] = config.boards or (None,)
    for k in range((config.games + 1) // 2):
        opening = (Opening(name="swap2") if config.swap2
                   else opening_for(config.game, openings, config.seed, k, config.opening_plies))
        for board in boards:
            for a, b in pairings(config.engines, config.format):
                for g, (first, second) in enumerate(((a, b), (b, a))):
                    if 2 * k + g >= config.games:
                        break
                    key = f"{fingerprint}:{board or 'chess'}:{a.name}:{b.name}:{k}:{g}"
                    jobs.append(GameJob(key=key, seq=len(jobs), pair=k, game=config.game, board=board,
                                        rule=config.rule, first=first, second=second, opening=opening,
                                        limits=config.limits, adjudication=config.adjudication,
                                        swap2=config.swap2))
    return jobs


def sprt_from_records(records: Sequence[GameRecord], a: str, b: str, config: TournamentConfig) -> SprtStatus | None:
    """SPRT of engine `a` against `b`: pentanomial over finished opening pairs when there are
    any, else trinomial over games."""
    spec = config.sprt
    if spec is None:
        return None
    results = [GameResult(r.first, r.second, r.score, r.board, (0, r.pair)) for r in records]
    counts = pentanomial(results, a, b)
    if sum(counts):
        llr = llr_pentanomial(counts, spec.elo0, spec.elo1)
    else:
        m = match_summary(results, a, b)
        llr = llr_trinomial(m.wins, m.losses, m.draws, spec.elo0, spec.elo1)
    return sprt_status(llr, spec.alpha, spec.beta)


@dataclass
class RunSummary:
    planned: int
    already: int
    played: int = 0
    errors: int = 0
    sprt: SprtStatus | None = None
    stopped_early: bool = False
    records: list[GameRecord] = field(default_factory=list)


def _fmt_eta(seconds: float) -> str:
    seconds = int(seconds)
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m" if seconds >= 3600 else f"{seconds // 60}m{seconds % 60:02d}s"


def _worker(jobs: "queue.Queue[GameJob | None]", results: "queue.Queue[tuple[GameJob, GameRecord | BaseException]]") -> None:
    pool = EnginePool()
    try:
        while True:
            job = jobs.get()
            if job is None:
                return
            try:
                results.put((job, play_game(job, pool)))
            except Exception as exc:  # noqa: BLE001 - a referee bug must not stop the tournament
                results.put((job, exc))
    finally:
        pool.close()


def run_tournament(config: TournamentConfig, store: Store, *, echo: Callable[..., None] = click.echo,
                   tty: bool | None = None) -> RunSummary:
    """Play every scheduled game not yet in the store; returns what happened."""
    openings = load_openings(config)
    jobs = build_schedule(config, openings)
    tid = store.tournament(config.fingerprint(), config.game, config.settings_json(),
                           [(e.name, repr(e)) for e in config.engines])
    finished = store.finished_keys()
    pending = [job for job in jobs if job.key not in finished]
    summary = RunSummary(planned=len(jobs), already=len(jobs) - len(pending))
    keys = {job.key for job in jobs}
    records = [r for r in store.records() if r.key in keys]
    a, b = config.engines[0].name, config.engines[1].name
    sprt_on = config.sprt is not None and len(config.engines) == 2
    if sprt_on:
        summary.sprt = sprt_from_records(records, a, b, config)
        if summary.sprt and summary.sprt.decision:
            summary.stopped_early = True
            return summary
    if not pending:
        return summary
    tty = sys.stdout.isatty() if tty is None else tty
    job_queue: queue.Queue[GameJob | None] = queue.Queue()
    result_queue: queue.Queue[tuple[GameJob, GameRecord | BaseException]] = queue.Queue()
    for job in pending:
        job_queue.put(job)
    workers = [threading.Thread(target=_worker, args=(job_queue, result_queue), daemon=True, name=f"arena-{i}")
               for i in range(min(config.concurrency, len(pending)))]
    for worker in workers:
        job_queue.put(None)
        worker.start()
    start = time.monotonic()
    outstanding = len(pending)
    points: dict[str, float] = {e.name: 0.0 for e in config.engines}
    played: dict[str, int] = {e.name: 0 for e in config.engines}
    for r in records:
        points[r.first] = points.get(r.first, 0) + r.score
        points[r.second] = points.get(r.second, 0) + 1 - r.score
        played[r.first] = played.get(r.first, 0) + 1
        played[r.second] = played.get(r.second, 0) + 1
    while outstanding:
        job, outcome = result_queue.get()
        outstanding -= 1
        if isinstance(outcome, BaseException):
            summary.errors += 1
            echo(f"error in game {job.seq + 1} ({job.first.name} vs {job.second.name}): {outcome}")
            continue
        store.add(tid, outcome)
        records.append(outcome)
        summary.records.append(outcome)
        summary.played += 1
        points[outcome.first] += outcome.score
        points[outcome.second] += 1 - outcome.score
        played[outcome.first] += 1
        played[outcome.second] += 1
        done = summary.already + summary.played
        rate = (time.monotonic() - start) / summary.played
        eta = _fmt_eta(rate * (len(pending) - summary.played))
        standing = "  ".join(f"{n} {points[n]:g}/{played[n]}" for n in
                             sorted(points, key=lambda n: -points[n] / max(1, played[n]))[:4])
        line = (f"[{done}/{summary.planned}] ETA {eta} | {outcome.board + ' ' if outcome.board else ''}"
                f"{outcome.first} vs {outcome.second} {outcome.result_text} ({outcome.reason}) | {standing}")
        if sprt_on:
            summary.sprt = sprt_from_records(records, a, b, config)
            if summary.sprt is not None and summary.sprt.decision and not summary.stopped_early:
                summary.stopped_early = True
                while True:  # cancel the games not started; those in flight finish and are kept
                    try:
                        if job_queue.get_nowait() is not None:
                            outstanding -= 1
                    except queue.Empty:
                        break
                for _ in workers:
                    job_queue.put(None)
            if summary.sprt is not None:
                line += f" | llr {summary.sprt.llr:.2f}"
        if tty:
            width = 150
            echo("\r" + line[:width].ljust(width), nl=not outstanding)
        else:
            echo(line)
    for worker in workers:
        worker.join(timeout=10.0)
    return summary
