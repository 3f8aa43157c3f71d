"""The loop's arbiter: gating matches with the arena's referee, ratings history, its PNG.

Implements engine.train.loop.Arbiter.  Each generation's candidate plays the best
network (MCTS at fixed playouts, `engine gomocup` processes, seeded openings, each
played twice with colours swapped) and alpha-beta at a fixed depth.  Games run as
units on the loop's pool (a chunk of GameJobs -> GameRecords, one EnginePool per
chunk so engines start once per chunk), and this driver alone commits them to the
run's SQLite store (arena.sqlite), so a rerun plays only the missing games.

Ratings history: after every generation, Bradley-Terry Elo (arena.ratings) of every
network over all stored games, anchored at generation 0 (so each promoted network's
Elo is against the first, through the chain of gating matches and the common
alpha-beta opponent), stored in the table `loop_ratings` and drawn as ratings.png
(matplotlib, when installed).
"""
from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any, Callable, Sequence

from arena.clock import MoveLimits
from arena.config import EngineSpec
from arena.engines import EnginePool
from arena.openings import opening_for, suite_for
from arena.ratings import compute_ratings
from arena.records import GameJob, GameRecord
from arena.referee import play_game
from arena.store import Store
from engine.train.loop import GateResult, LoopConfig, LoopState

__all__ = ["ArenaArbiter", "play_chunk", "rating_rows", "ANCHOR"]

ANCHOR = "gen-0000"
CHUNK = 4            # games per unit: engines start once per chunk, a kill loses at most a chunk
_RATINGS_SCHEMA = """
CREATE TABLE IF NOT EXISTS loop_ratings (
    generation INTEGER NOT NULL,     -- ratings computed after this generation
    player TEXT NOT NULL,
    elo REAL NOT NULL,
    error REAL NOT NULL,             -- 95 % half-width
    games INTEGER NOT NULL,
    promoted INTEGER NOT NULL,       -- 1: this network was the best at some point
    computed REAL NOT NULL,
    PRIMARY KEY (generation, player)
);
"""


def play_chunk(jobs: Sequence[GameJob]) -> list[GameRecord]:
    """Play a few games with one set of engine processes (a pool unit)."""
    pool = EnginePool()
    try:
        return [play_game(job, pool) for job in jobs]
    finally:
        pool.close()


def _name(path: Path) -> str:
    return path.stem          # nets/gen-0003.pt -> gen-0003


def _mcts(path: Path, nodes: int) -> EngineSpec:
    return EngineSpec(name=_name(path), player="mcts", settings=(("weights", str(path)), ("nodes", str(nodes))),
                      nodes=nodes)


def _schedule(generation: int, a: EngineSpec, b: EngineSpec, games: int, config: LoopConfig,
              label: str) -> list[GameJob]:
    """`games` games per square board: pair k on opening k, colours swapped within the pair."""
    jobs: list[GameJob] = []
    # each side's own caps come from its spec (MCTS: nodes, alpha-beta: depth; the referee
    # merges them per side), so neither gets the other's
    limits = MoveLimits(timeout=120.0)
    suites = [suite_for(spec.name, None, (spec.width,), spec.rule) for spec in config.specs]
    for k in range((games + 1) // 2):
        for spec, suite in zip(config.specs, suites):
            if spec.width != spec.height:
                continue     # the referee plays square boards
            opening = opening_for(spec.name, suite, config.seed + generation, k)
            board = spec.width if spec.make().sized else None     # chess: no board size
            for i, (first, second) in enumerate(((a, b), (b, a))):
                if 2 * k + i >= games:
                    break
                jobs.append(GameJob(key=f"loop:{label}:{generation}:{spec.width}:{k}:{i}", seq=len(jobs), pair=k,
                                    game=spec.name, board=board, rule=spec.rule, first=first,
                                    second=second, opening=opening, limits=limits))
    return jobs


def _score(records: Sequence[GameRecord], name: str) -> tuple[int, int, int]:
    """(wins, losses, draws) of `name` in these games."""
    wins = losses = draws = 0
    for r in records:
        mine = r.score if r.first == name else 1.0 - r.score
        wins, losses, draws = wins + (mine == 1.0), losses + (mine == 0.0), draws + (mine == 0.5)
    return wins, losses, draws


class ArenaArbiter:
    """Gating and ratings for a loop run stored in `run_dir/arena.sqlite`."""

    def __init__(self, run_dir: str | Path, *, echo: Callable[[str], None] = lambda line: None):
        self.run_dir = Path(run_dir)
        self.db = self.run_dir / "arena.sqlite"
        self.echo = echo

    def gate(self, generation: int, candidate: Path, best: Path, config: LoopConfig, pool: Any) -> GateResult:
        cand = _mcts(candidate, config.gate_nodes)
        jobs = _schedule(generation, cand, _mcts(best, config.gate_nodes), config.gate_games, config, "gate")
        alphabeta = EngineSpec(name=f"alphabeta-d{config.alphabeta_depth}", player="alphabeta",
                               depth=config.alphabeta_depth)
        ab_jobs = _schedule(generation, cand, alphabeta, config.alphabeta_games, config, "alphabeta")
        records = self._play(f"loop-gen-{generation}", config, jobs + ab_jobs, pool)
        gating = [r for r in records if r.key.startswith("loop:gate:")]
        wins, losses, draws = _score(gating, cand.name)
        against_ab = [r for r in records if r.key.startswith("loop:alphabeta:")]
        vs_ab = None
        if against_ab:
            w, _, d = _score(against_ab, cand.name)
            vs_ab = round((w + 0.5 * d) / len(against_ab), 4)
        return GateResult(wins, losses, draws, vs_ab)

    def _play(self, fingerprint: str, config: LoopConfig, jobs: list[GameJob], pool: Any) -> list[GameRecord]:
        """Play the jobs not yet stored (chunks on the pool), committing each chunk as it ends."""
        with Store(str(self.db)) as store:
            players = {j.first.name: j.first for j in jobs} | {j.second.name: j.second for j in jobs}
            tid = store.tournament(fingerprint, config.specs[0].name, json.dumps({"loop": fingerprint}),
                                   [(name, repr(spec)) for name, spec in players.items()])
            done = store.finished_keys()
            pending = [j for j in jobs if j.key not in done]
            if len(pending) < len(jobs):
                self.echo(f"{fingerprint}: {len(jobs) - len(pending)} of {len(jobs)} games already stored")
            chunks = [tuple(pending[i:i + CHUNK]) for i in range(0, len(pending), CHUNK)]
            for chunk in pool.map(play_chunk, chunks):
                for record in chunk:
                    store.add(tid, record)
            keys = {j.key for j in jobs}
            return [r for r in store.records() if r.key in keys]

    # --- ratings ------------------------------------------------------------------------

    def report(self, state: LoopState) -> list[str]:
        """Refit the ratings on every stored game, store them for this generation, redraw
        the PNG; the lines of the table (promoted networks and alpha-beta)."""
        with Store(str(self.db)) as store:
            results = store.results()
            if not results:
                return []
            ratings = compute_ratings(results, anchor=ANCHOR)
            promoted = {ANCHOR} | {Path(h["candidate"]).stem for h in state.history if h["promoted"]}
            generation = state.generation - 1
            store.conn.executescript(_RATINGS_SCHEMA)
            with store.conn:
                store.conn.execute("BEGIN")
                store.conn.executemany(
                    "INSERT OR REPLACE INTO loop_ratings VALUES (?, ?, ?, ?, ?, ?, ?)",
                    [(generation, p.name, p.elo, p.error, p.games, int(p.name in promoted), time.time())
                     for p in ratings.players])
            rows = rating_rows(store)
        lines = [f"ratings after generation {generation} (Elo vs {ANCHOR}, 95 %):"]
        for p in sorted(ratings.players, key=lambda p: p.name):
            if p.name in promoted or not p.name.startswith("gen-"):
                lines.append(f"  {p.name:<14} {p.elo:+7.1f} ± {p.error:5.1f}  ({p.games} games)")
        picture = write_plot(self.run_dir / "ratings.png", rows)
        if picture:
            lines.append(f"wrote {picture}")
        return lines


def rating_rows(store: Store) -> list[tuple[int, str, float, float, int, int]]:
    """The stored history: (generation, player, elo, error, games, promoted), oldest first."""
    store.conn.executescript(_RATINGS_SCHEMA)
    return [tuple(row) for row in store.conn.execute(   # type: ignore[misc]
        "SELECT generation, player, elo, error, games, promoted FROM loop_ratings ORDER BY generation, player")]


def write_plot(path: Path, rows: Sequence[tuple[int, str, float, float, int, int]]) -> Path | None:
    """Elo (± 95 %) of each promoted network in the newest fit against its generation, and
    alpha-beta as a line; None when matplotlib is not installed."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    if not rows:
        return None
    last = max(r[0] for r in rows)
    newest = [r for r in rows if r[0] == last]
    nets = sorted((int(r[1].split("-")[1]), r[2], r[3]) for r in newest if r[1].startswith("gen-") and r[5])
    figure, axes = plt.subplots(figsize=(6, 4))
    if nets:
        axes.errorbar([n[0] for n in nets], [n[1] for n in nets], yerr=[n[2] for n in nets], marker="o",
                      capsize=3, label="promoted networks")
    for r in newest:
        if not r[1].startswith("gen-"):
            axes.axhline(r[2], linestyle="--", color="grey", label=r[1])
    axes.set_xlabel("generation")
    axes.set_ylabel(f"Elo vs {ANCHOR}")
    axes.set_title(f"ratings after generation {last}")
    axes.legend(loc="best")
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)
    return path
