"""The referee: one game, from a GameJob to a GameRecord.

`play_game(job)` is a plain function of its inputs: it keeps its own board (the rules
in `engine.games`), its own clocks, and starts the engines it needs unless the
caller lends it a worker's `EnginePool`.  Any engine fault (crash, hang past budget +
margin, illegal or malformed move, protocol failure) loses the game for that engine,
with the reason recorded; the faulty process is killed so the next game restarts it.
"""
from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import chess
import chess.engine

from arena.clock import Clock
from arena.config import Adjudication
from arena.engines import EngineFault, EnginePool, GomocupPlayer, UciPlayer
from arena.openings import gomoku_moves
from arena.records import GameJob, GameRecord
from engine.games import Game, IllegalMoveError, State, get_game

if TYPE_CHECKING:
    from engine.games.gomoku import GomokuGame

__all__ = ["play_game", "Adjudicator"]


class Adjudicator:
    """Chess adjudication from the engines' own scores (cutechess semantics, see Adjudication)."""

    def __init__(self, rules: Adjudication, start_ply: int):
        self.rules = rules
        self.start_ply = start_ply
        self.draw_run = 0
        self.resign_run = [0, 0]

    def verdict(self, board: chess.Board, side: int, info: dict[str, Any]) -> tuple[float | None, str] | None:
        """After `side` moved: (score of the first player, reason) to end the game, else None."""
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
            if board.fullmove_number >= rules.draw_movenumber and self.draw_run >= 2 * rules.draw_movecount:
                return 0.5, "adjudication: draw"
        if rules.max_moves is not None and (board.ply() - self.start_ply) >= 2 * rules.max_moves:
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
    gomoku: GomokuGame | None = None      # set for gomoku games (board coordinates)
    if job.game == "chess":
        chess_game = get_game("chess")
        game: Game = chess_game
        state: State = chess_game.state_from_fen(job.opening.fen or "startpos", job.opening.moves)
        board = chess.Board(job.opening.fen or chess.STARTING_FEN)
        for text in job.opening.moves:
            board.push_uci(text)
        moves = list(job.opening.moves)
        start_fen: str | None = job.opening.fen
    else:
        assert job.board is not None
        game = gomoku = get_game("gomoku", width=job.board, height=job.board, rule=job.rule)
        opening = gomoku_moves(job.opening, job.board, job.board, job.rule)
        state = gomoku.state_from_moves(opening)
        board = None
        moves = [gomoku.format_move(None, m) for m in opening]
        start_fen = None
    opening_plies = len(moves)
    clocks = [Clock(spec.limits(job.limits)) for spec in specs]
    adjudicator = Adjudicator(job.adjudication, board.ply() if board is not None else 0)
    times: list[float] = []
    infos: list[dict[str, Any]] = []

    def record(score: float, reason: str, forfeit: str | None = None) -> GameRecord:
        return GameRecord(
            key=job.key, seq=job.seq, pair=job.pair, game=job.game, board=job.board_label, rule=job.rule,
            first=job.first.name, second=job.second.name, opening_name=job.opening.name,
            opening=job.opening.describe(), start_fen=start_fen, moves=tuple(moves),
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
            if isinstance(player, UciPlayer):
                assert board is not None
                move, info = player.move(board, _uci_limit(clocks, side, board), deadline)
                text = move.uci() if move else "0000"
            else:
                assert isinstance(player, GomocupPlayer) and gomoku is not None
                text, info = player.move([gomoku.coords(m) for m in _gomoku_history(moves, gomoku)],
                                         clock, deadline)
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
        moves.append(text)
        if board is not None:
            board.push(parsed)
            verdict = adjudicator.verdict(board, side, info)
            if verdict is not None and state.outcome() is None:
                return record(verdict[0] if verdict[0] is not None else 0.5, verdict[1])


def _gomoku_history(moves: list[str], game: GomokuGame) -> list[int]:
    return [game.index(*map(int, m.split(","))) for m in moves]


def _uci_limit(clocks: list[Clock], side: int, board: chess.Board) -> chess.engine.Limit:
    """What `go` says: the mover's limits plus both clocks (White's first, as UCI wants)."""
    limits = clocks[side].limits
    white, black = clocks[0], clocks[1]
    tc = limits.tc
    kwargs: dict[str, Any] = {"nodes": limits.nodes, "depth": limits.depth}
    if limits.movetime is not None:
        kwargs["time"] = limits.movetime
    if tc is not None:
        kwargs.update(white_clock=max(0.0, white.remaining or 0.0), black_clock=max(0.0, black.remaining or 0.0),
                      white_inc=white.limits.tc.increment if white.limits.tc else 0.0,
                      black_inc=black.limits.tc.increment if black.limits.tc else 0.0,
                      remaining_moves=clocks[side].moves_to_go())
    return chess.engine.Limit(**kwargs)
