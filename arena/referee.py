"""The referee: one game, from a GameJob to a GameRecord.

`play_game(job)` is a plain function of its inputs: it keeps its own board (the rules
in `engine.games`), its own clocks, and starts the engines it needs unless the
caller lends it a worker's `EnginePool`.  Any engine fault (crash, hang past budget +
margin, illegal or malformed move, protocol failure) loses the game for that engine,
with the reason recorded; the faulty process is killed so the next game restarts it.
"""
from __future__ import annotations

import time
from typing import Any

from arena.clock import Clock
from arena.config import Adjudication
from arena.engines import EngineFault, EnginePool, Position
from arena.openings import start_position
from arena.records import GameJob, GameRecord
from arena.swap2 import PROPOSER, Swap2Fault, play_swap2
from engine.games import Game, IllegalMoveError, State, game_on_board

__all__ = ["play_game", "Adjudicator"]


class Adjudicator:
    """Adjudication from the engines' own scores (cutechess semantics, see Adjudication).
    board_fills: a stone game, which ends by itself when the board is full: no move cap."""

    def __init__(self, rules: Adjudication, start_ply: int, board_fills: bool = False):
        self.rules = rules
        self.start_ply = start_ply
        self.board_fills = board_fills
        self.draw_run = 0
        self.resign_run = [0, 0]

    def verdict(self, ply: int, side: int, info: dict[str, Any]) -> tuple[float | None, str] | None:
        """After `side` moved, the game now at `ply` (counted as a FEN counts: full move n
        starts at ply 2(n-1)): (score of the first player, reason) to end the game, else None."""
        rules = self.rules
        cp = info.get("cp")
        if "mate" in info:
            cp = 100_000 if info["mate"] > 0 else -100_000
        if rules.resign_movecount is not None:
            if cp is not None and cp <= -rules.resign_score:
                self.resign_run[side] += 1
                if self.resign_run[side] >= rules.resign_movecount:
                    return (0.0 if side == 0 else 1.0), "adjudication: resign"
            else:
                self.resign_run[side] = 0
        if rules.draw_movenumber is not None:
            self.draw_run = self.draw_run + 1 if cp is not None and abs(cp) <= rules.draw_score else 0
            if ply // 2 + 1 >= rules.draw_movenumber and self.draw_run >= 2 * rules.draw_movecount:
                return 0.5, "adjudication: draw"
        if rules.max_moves is not None and not self.board_fills and ply - self.start_ply >= 2 * rules.max_moves:
            return 0.5, "adjudication: max moves"
        return None


def play_game(job: GameJob, pool: EnginePool | None = None) -> GameRecord:
    """Play one game; never raises for engine failures (they are results)."""
    own_pool = pool is None
    pool = pool if pool is not None else EnginePool()
    try:
        return _play(job, pool)
    finally:
        if own_pool:
            pool.close()


def _play(job: GameJob, pool: EnginePool) -> GameRecord:
    started, t0 = time.time(), time.monotonic()
    specs = (job.first, job.second)
    game: Game = game_on_board(job.game, job.board or 0, job.board or 0, job.rule)
    start, opening = start_position(game, job.opening)
    state: State = start
    played: list[Any] = []
    moves: list[str] = []
    for move in opening:
        moves.append(game.format_move(state, move))
        played.append(move)
        state = state.play(move)
    start_fen = job.opening.fen
    opening_plies = len(moves)
    opening_text = job.opening.describe()
    clocks = [Clock(spec.limits(job.limits)) for spec in specs]
    times: list[float] = []
    infos: list[dict[str, Any]] = []

    def record(score: float, reason: str, forfeit: str | None = None) -> GameRecord:
        return GameRecord(
            key=job.key, seq=job.seq, pair=job.pair, game=job.game, board=job.board_label, rule=job.rule,
            first=specs[0].name, second=specs[1].name, opening_name=job.opening.name,
            opening=opening_text, start_fen=start_fen, moves=tuple(moves),
            opening_plies=opening_plies, score=score, reason=reason, forfeit=forfeit,
            times=tuple(round(t, 4) for t in times), infos=tuple(infos), started=started,
            duration=round(time.monotonic() - t0, 3))

    def forfeit(side: int, reason: str) -> GameRecord:
        pool.discard(specs[side])
        return record(0.0 if side == 0 else 1.0, f"{specs[side].name} {reason}", specs[side].name)

    players = []
    for side, spec in enumerate(specs):
        try:
            player = pool.get(spec, job.game)
            player.new_game(job.game, job.board, job.rule, clocks[side].limits)
        except EngineFault as fault:
            return forfeit(side, fault.reason if fault.reason != "crash" else "failed to start")
        players.append(player)

    if job.swap2:   # the engines place the opening and decide the colours (arena/swap2.py)
        try:
            swap2 = play_swap2(game, players, clocks)
        except Swap2Fault as fault:
            return forfeit(fault.side, fault.reason)
        if swap2.black != PROPOSER:
            specs, players, clocks = specs[::-1], players[::-1], clocks[::-1]
        for move in swap2.stones:
            moves.append(game.format_move(state, move))
            played.append(move)
            state = state.play(move)
        opening_plies = len(swap2.stones)
        opening_text = "swap2: " + " ".join(moves)
        if swap2.move is not None:   # white's stone of a stay: the game's first move
            moves.append(game.format_move(state, swap2.move))
            played.append(swap2.move)
            state = state.play(swap2.move)
            times.append(swap2.move_time)
            infos.append({})
    adjudicator = Adjudicator(job.adjudication, state.ply - len(times), board_fills=game.stones)

    while True:
        outcome = state.outcome()
        if outcome is not None:
            score = 0.5 if outcome.winner is None else (1.0 if outcome.winner == 0 else 0.0)
            return record(score, outcome.reason)
        side = state.to_play
        clock = clocks[side]
        player = players[side]
        deadline = clock.deadline()
        begin = time.monotonic()
        try:
            text, info = player.turn(Position(game, start, tuple(played), state), clocks, side, deadline)
        except EngineFault as fault:
            times.append(time.monotonic() - begin)
            infos.append({})
            return forfeit(side, f"{fault.reason}" + (f" ({fault.detail})" if fault.detail else ""))
        elapsed = time.monotonic() - begin
        times.append(elapsed)
        infos.append(info)
        if not clock.charge(elapsed):
            return forfeit(side, f"time forfeit ({elapsed:.3f} s > {deadline:.3f} s)")
        try:
            parsed = game.parse_move(state, text)
            if parsed not in state.legal_moves():
                raise IllegalMoveError(f"illegal move {text!r}")
        except IllegalMoveError as exc:
            return forfeit(side, f"illegal move ({exc})")
        state = state.play(parsed)
        played.append(parsed)
        moves.append(text)
        verdict = adjudicator.verdict(state.ply, side, info)
        if verdict is not None and state.outcome() is None:
            return record(verdict[0] if verdict[0] is not None else 0.5, verdict[1])
