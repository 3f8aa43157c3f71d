"""Engine processes, spoken to through their protocol exactly as a GUI or manager would.

UCI through python-chess (`SimpleEngine.popen_uci`), Gomocup through
`protocols.gomocup_client.GomocupClient`; a game no protocol speaks (the toy game of the
tests) is played by built-in players searching in this process.  Each player answers
`turn(position, clocks, side, deadline)` with the move's text in the game's notation, so the
referee never asks which game it is.  Every failure of an engine becomes an
`EngineFault` with a short reason ("crash", "time forfeit", "illegal move",
"malformed move", "protocol error"); the referee turns it into a lost game and the
`EnginePool` kills the process so the next game gets a fresh one.
"""
from __future__ import annotations

import asyncio
import re
import subprocess
from dataclasses import dataclass
from typing import Any, Sequence

import chess
import chess.engine

from arena.clock import Clock, MoveLimits
from arena.config import EngineSpec
from engine.games.gomoku import RULE_CODES
from protocols.gomocup_client import (GomocupClient, GomocupClientError, GomocupCrashed,
                                      GomocupError, GomocupTimeout)

__all__ = ["EngineFault", "Position", "UciPlayer", "GomocupPlayer", "InProcessPlayer", "EnginePool",
           "start_engine", "probe_engine", "STARTUP_TIMEOUT"]

STARTUP_TIMEOUT = 30.0   # seconds to `uciok` / START's OK (cutechess allows 35 s)
UNLIMITED_MS = 2147483647


@dataclass(frozen=True)
class Position:
    """The game as the referee holds it: the rules, the start state, every move played from
    it (the opening's included) and the state they lead to."""
    game: Any
    start: Any
    played: tuple[Any, ...]
    state: Any


class EngineFault(Exception):
    """An engine failed: `reason` is the short label stored with the game, `detail` the text."""

    def __init__(self, reason: str, detail: str = ""):
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason
        self.detail = detail


def _classify_uci_error(exc: BaseException) -> EngineFault:
    text = str(exc)
    if isinstance(exc, chess.engine.EngineTerminatedError):
        return EngineFault("crash", text or "engine process terminated")
    if "illegal uci" in text:
        return EngineFault("illegal move", text)
    if "invalid uci" in text or "invalid move" in text:
        return EngineFault("malformed move", text)
    if not isinstance(exc, chess.engine.EngineError):  # the event loop is gone: the process died
        return EngineFault("crash", text or "engine process terminated")
    return EngineFault("protocol error", text)


class UciPlayer:
    """A UCI engine process.  move() blocks until bestmove or the deadline."""

    def __init__(self, spec: EngineSpec, game: str, *, startup_timeout: float = STARTUP_TIMEOUT):
        self.spec = spec
        try:
            self.engine = chess.engine.SimpleEngine.popen_uci(
                spec.argv(game), cwd=spec.cwd, env=spec.environment(), timeout=startup_timeout,
                stderr=subprocess.DEVNULL)
        except (OSError, asyncio.TimeoutError, chess.engine.EngineError) as exc:
            raise EngineFault("crash", f"cannot start {spec.name}: {exc or type(exc).__name__}") from None
        try:
            if spec.options:
                self.engine.configure({k: _option_value(v) for k, v in spec.options})
        except (chess.engine.EngineError, asyncio.TimeoutError, RuntimeError) as exc:
            self.kill()
            raise EngineFault("protocol error", f"{spec.name}: {exc}") from None

    def new_game(self, game: str, board: int | None, rule: str, limits: MoveLimits) -> None:
        """`ucinewgame` and `isready` now, before the first move's clock runs, as cutechess and
        fastchess do: an engine's housekeeping for a new game (ours drops its tree, collects garbage
        and probes its speed: first moves were timed 0.2-0.75 s over `movetime 1`) is not charged
        to its first move.  python-chess, left to itself,
        sends both inside the first timed `play`."""
        self._game_key = object()
        protocol = self.engine.protocol
        assert isinstance(protocol, chess.engine.UciProtocol)

        async def start() -> None:
            protocol.send_line("ucinewgame")
            protocol.game, protocol.first_game = self._game_key, False   # so play() sends no second one
            await protocol.ping()

        coro = asyncio.wait_for(start(), STARTUP_TIMEOUT)
        try:
            asyncio.run_coroutine_threadsafe(coro, protocol.loop).result(timeout=STARTUP_TIMEOUT + 5.0)
        except asyncio.TimeoutError:
            raise EngineFault("time forfeit", f"no readyok within {STARTUP_TIMEOUT:.0f} s of ucinewgame") from None
        except (chess.engine.EngineError, RuntimeError) as exc:
            coro.close()
            raise _classify_uci_error(exc) from None

    def turn(self, position: Position, clocks: Sequence[Clock], side: int, deadline: float) -> tuple[str, dict[str, Any]]:
        """The move in UCI text (`0000` for none), from the game's own board and move list."""
        board = position.start.board.copy(stack=False)
        for move in position.played:
            board.push(move)
        answer, info = self.move(board, uci_limit(clocks, side), deadline)
        return (answer.uci() if answer else "0000"), info

    def move(self, board: chess.Board, limit: chess.engine.Limit, deadline: float) -> tuple[chess.Move | None, dict[str, Any]]:
        """Ask for a move in `board`; EngineFault on any failure (deadline: seconds)."""
        protocol = self.engine.protocol
        coro = asyncio.wait_for(protocol.play(board, limit, game=self._game_key, info=chess.engine.INFO_ALL),
                                deadline)
        try:
            future = asyncio.run_coroutine_threadsafe(coro, protocol.loop)
            result = future.result(timeout=deadline + 5.0)  # backstop if the loop itself died
        except asyncio.TimeoutError:
            raise EngineFault("time forfeit", f"no bestmove within {deadline:.2f} s") from None
        except (chess.engine.EngineError, RuntimeError) as exc:
            coro.close()
            raise _classify_uci_error(exc) from None
        info: dict[str, Any] = {}
        for key in ("depth", "seldepth", "nodes"):
            if key in result.info:
                info[key] = result.info[key]
        score = result.info.get("score")
        if score is not None:
            pov = score.pov(board.turn)
            if pov.is_mate():
                info["mate"] = pov.mate()
            else:
                info["cp"] = pov.score()
        return result.move, info

    def close(self) -> None:
        """quit politely (2 s), then kill."""
        try:
            coro = asyncio.wait_for(self.engine.protocol.quit(), 2.0)
            asyncio.run_coroutine_threadsafe(coro, self.engine.protocol.loop).result(3.0)
        except Exception:  # noqa: BLE001 - whatever happened, kill below
            pass
        self.kill()

    def kill(self) -> None:
        self.engine.close()  # closes the transport: kills the process if still running


def uci_limit(clocks: Sequence[Clock], side: int) -> chess.engine.Limit:
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


def _option_value(text: str) -> Any:
    lowered = text.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    try:
        return int(text)
    except ValueError:
        return text


# ours: "depth 4 value +0.333 nodes 840"; Rapfi: "Speed 1048K | Depth 20-44 | Eval 193 | Node 1023K"
_MESSAGE_NUMBERS = re.compile(r"\b(depth|nodes?|value|score|eval|cp)\s*[:=]?\s*([-+]?\d+(?:\.\d+)?)([KM]?)\b",
                              re.IGNORECASE)
_SUFFIX = {"": 1, "K": 1_000, "M": 1_000_000}


def message_numbers(message: str) -> dict[str, Any]:
    """The search figures in a brain's MESSAGE line, keys lower case ("Node 1023K" -> nodes 1023000)."""
    info: dict[str, Any] = {}
    for key, value, suffix in _MESSAGE_NUMBERS.findall(message):
        key = "nodes" if key.lower() == "node" else key.lower()
        number = float(value) if "." in value else int(value)
        info[key] = number * _SUFFIX[suffix.upper()]
    return info


class GomocupPlayer:
    """A Gomocup brain.  Tracks which stones the brain has seen, so a move request is a TURN
    when the brain only missed the opponent's last stone, BOARD otherwise (the judge's way)."""

    def __init__(self, spec: EngineSpec, game: str, *, startup_timeout: float = STARTUP_TIMEOUT):
        self.spec = spec
        self.startup_timeout = startup_timeout
        try:
            self.client = GomocupClient(spec.argv(game), cwd=spec.cwd, env=spec.environment())
        except GomocupClientError as exc:
            raise EngineFault("crash", str(exc)) from None
        self.size: int | None = None
        self.known = 0
        self.limits: MoveLimits | None = None

    def new_game(self, game: str, board: int | None, rule: str, limits: MoveLimits) -> None:
        assert board is not None
        try:
            if self.size == board:
                self.client.restart(timeout=self.startup_timeout)
            else:
                self.client.start(board, timeout=self.startup_timeout)
            self.size = board
            turn = limits.movetime if limits.movetime is not None else limits.match_time
            if turn is not None:
                self.client.info("timeout_turn", int(turn * 1000))
            self.client.info("timeout_match", int(limits.match_time * 1000) if limits.match_time else 0)
            self.client.info("max_memory", (limits.max_memory_mb or 0) * 2**20)
            self.client.info("game_type", 1)
            self.client.info("rule", RULE_CODES[rule])
            # the search caps a UCI engine gets in `go`, as the INFO keys Rapfi and we read
            if limits.depth is not None:
                self.client.info("max_depth", limits.depth)
            if limits.nodes is not None:
                self.client.info("max_node", limits.nodes)
            for key, value in self.spec.options:
                self.client.info(key, value)
        except GomocupClientError as exc:
            raise self._fault(exc) from None
        self.known = 0
        self.limits = limits

    def turn(self, position: Position, clocks: Sequence[Clock], side: int, deadline: float) -> tuple[str, dict[str, Any]]:
        """The stone in Gomocup's `x,y`."""
        return self.move([position.game.coords(m) for m in position.played], clocks[side], deadline)

    def swap2(self, stones: Sequence[tuple[int, int]], clock: Clock, deadline: float) -> list[tuple[int, int]] | None:
        """SWAP2BOARD with the opening's stones so far (arena/swap2.py): the brain's stones, or
        None for SWAP.  The game then goes on with BOARD, as Gomocup's manager does."""
        try:
            self._tell_clock(clock)
            answer = self.client.swap2board(stones, timeout=deadline)
        except GomocupClientError as exc:
            raise self._fault(exc) from None
        self.known = 0
        return answer

    def _tell_clock(self, clock: Clock) -> None:
        """INFO time_left before a request (its messages start afresh)."""
        remaining = clock.remaining
        self.client.info("time_left", UNLIMITED_MS if remaining is None else int(remaining * 1000))
        self.client.messages.clear()

    def move(self, moves: Sequence[tuple[int, int]], clock: Clock, deadline: float) -> tuple[str, dict[str, Any]]:
        """moves: every stone so far, (x, y), first player first.  Returns the answer 'x,y'."""
        try:
            self._tell_clock(clock)
            if self.known and len(moves) == self.known + 1:
                x, y = self.client.turn(*moves[-1], timeout=deadline)
            elif not moves:
                x, y = self.client.begin(timeout=deadline)
            else:
                me = len(moves) & 1  # the colour to move: its own stones are field 1
                stones = [(mx, my, 1 if i % 2 == me else 2) for i, (mx, my) in enumerate(moves)]
                x, y = self.client.board(stones, timeout=deadline)
        except GomocupClientError as exc:
            raise self._fault(exc) from None
        self.known = len(moves) + 1
        info: dict[str, Any] = {}
        for line in self.client.messages:   # this request's (_tell_clock clears them); Rapfi's
            if line.startswith("MESSAGE"):   # figures come before its Bestline, so read them all
                info.update(message_numbers(line[len("MESSAGE"):]))
        self._judge(info)
        return f"{x},{y}", info

    def _judge(self, info: dict[str, Any]) -> None:
        """The Gomocup judge after a move: the brain's memory against max_memory (recorded
        in the move's info), then freeze it until its next turn."""
        limits = self.limits
        if limits is None or (limits.max_memory_mb is None and not limits.suspend):
            return
        memory = self.client.memory()
        if memory is not None:
            info["vm_mb"], info["rss_mb"] = round(memory.virtual_mb, 1), round(memory.resident_mb, 1)
            if limits.max_memory_mb is not None and memory.virtual_mb > limits.max_memory_mb:
                raise EngineFault("memory limit", f"{memory.virtual_mb:.0f} MB virtual > {limits.max_memory_mb} MB")
        if limits.suspend:
            self.client.suspend()

    def _fault(self, exc: GomocupClientError) -> EngineFault:
        if isinstance(exc, GomocupTimeout):
            return EngineFault("time forfeit", str(exc))
        if isinstance(exc, GomocupCrashed):
            return EngineFault("crash", str(exc))
        if isinstance(exc, GomocupError) and "malformed" in str(exc):
            return EngineFault("malformed move", str(exc))
        return EngineFault("protocol error", str(exc))

    def close(self) -> None:
        self.client.close()

    def kill(self) -> None:
        self.client._kill()
        self.client.close()


class InProcessPlayer:
    """A built-in player searching in the arena's process, for a game that no engine protocol
    speaks: each move is one search of `build_player`'s searcher under the mover's limits."""

    def __init__(self, spec: EngineSpec, game: str):
        if not spec.builtin:
            raise EngineFault("crash", f"{spec.name}: {game} has no engine protocol; only built-in players play it")
        from engine.players import PlayerOptions, option_by_key

        self.spec = spec
        values = {option_by_key(key).name: option_by_key(key).parse(text) for key, text in spec.settings}
        self.options = PlayerOptions(player=str(spec.player), **values)
        self.searcher: Any = None
        self.built_for: Any = None

    def new_game(self, game: str, board: int | None, rule: str, limits: MoveLimits) -> None:
        self.built_for = None           # the next turn builds the searcher for this game's board

    def turn(self, position: Position, clocks: Sequence[Clock], side: int, deadline: float) -> tuple[str, dict[str, Any]]:
        from engine.players import build_player
        from engine.types import Limits

        if self.built_for is not position.game:
            try:
                self.searcher = build_player(position.game, self.options).searcher
            except ValueError as exc:
                raise EngineFault("crash", f"{self.spec.name}: {exc}") from None
            self.built_for = position.game
        limits = clocks[side].limits
        budget = clocks[side].remaining
        seconds = limits.movetime if limits.movetime is not None else (
            None if budget is None else budget / 20 + (limits.tc.increment if limits.tc else 0.0))
        seconds = min(seconds, 0.8 * deadline) if seconds is not None else None
        result = self.searcher.search(position.state, Limits(nodes=limits.nodes, depth=limits.depth, time=seconds))
        if result.best_move is None:
            raise EngineFault("protocol error", f"{self.spec.name}: no move in a position with legal moves")
        info = {} if result.info is None else {"depth": result.info.depth, "nodes": result.info.nodes}
        return position.game.format_move(position.state, result.best_move), info

    def close(self) -> None:
        self.searcher = None

    def kill(self) -> None:
        self.close()


Player = UciPlayer | GomocupPlayer | InProcessPlayer


def start_engine(spec: EngineSpec, game: str) -> Player:
    """The engine for `game`, spoken to through the game's protocol (or the spec's)."""
    protocol = spec.protocol_for(game)
    if protocol == "uci":
        return UciPlayer(spec, game)
    if protocol == "gomocup":
        return GomocupPlayer(spec, game)
    return InProcessPlayer(spec, game)


class EnginePool:
    """The engines of one worker, kept running between its games.  Not shared between threads."""

    def __init__(self) -> None:
        self._players: dict[EngineSpec, Player] = {}

    def get(self, spec: EngineSpec, game: str) -> Player:
        player = self._players.get(spec)
        if player is None:
            player = start_engine(spec, game)
            self._players[spec] = player
        return player

    def discard(self, spec: EngineSpec) -> None:
        """Kill an engine that failed; the next get() starts a fresh process."""
        player = self._players.pop(spec, None)
        if player is not None:
            player.kill()

    def close(self) -> None:
        for spec in list(self._players):
            self._players.pop(spec).close()


def probe_engine(spec: EngineSpec, game: str, boards: Sequence[int], rule: str) -> str | None:
    """Start an engine once before the tournament: None if it works, else a one-line reason
    (does not start, rejects an option, refuses a board size)."""
    try:
        player = start_engine(spec, game)
    except EngineFault as exc:
        return f"engine {spec.name!r}: {exc}"
    try:
        if isinstance(player, GomocupPlayer):
            for size in boards:
                try:
                    player.client.start(size, timeout=player.startup_timeout)
                except GomocupClientError as exc:
                    return f"engine {spec.name!r}: board {size}x{size}: {exc}"
        return None
    finally:
        player.close()
