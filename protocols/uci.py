"""UCI server: text <-> SearchThread calls for chess GUIs (cutechess, fastchess, python-chess, PyChess).

Threads: a LineReader pumps stdin on its own thread; the main thread dispatches each
line, so `isready` and `stop` are answered while the SearchThread's worker thread searches.
Every `go` gets exactly one `bestmove`; for `go infinite` and `go ponder` it is held
back until `stop`/`ponderhit`.  Adapter logic only: parse_go, format_info and
format_bestmove are pure functions; rules live in engine.games, clocks in timeman.
"""
from __future__ import annotations

import math
import sys
import threading
import time
from dataclasses import replace
from typing import Callable, Sequence, TextIO

from engine import __version__
from engine.games.base import GameSetupError, IllegalMoveError, State
from engine.games.chess import CHESS960, ChessGame
from engine.games import game_profile
from engine.search_thread import SearchThread
from engine.players import FALLBACK_PLAYERS, PlayerBuildError, PlayerOptions, build_player, resolve_player
from engine.types import Searcher
from engine.types import Limits, SearchInfo, SearchResult, cp_from_value
from protocols.io import LineReader, LineWriter
from protocols.timeman import DEFAULT_OVERHEAD_MS, GoCommand, LagMeter, parse_go, parse_int
from protocols.uci_options import player_option_lines, set_player_option

__all__ = ["GoCommand", "parse_go", "format_info", "format_bestmove", "closing_info", "UciServer", "serve", "main"]


def _legal_pv(state: State, pv: Sequence[object]) -> list[str]:
    """The longest legal prefix of `pv`, in UCI text (a TT-built pv may go stale), ended
    at the first position that is over (mate, stalemate, repetition, fifty moves,
    insufficient material), counting the game's moves before `state` for repetition."""
    text: list[str] = []
    for move in pv:
        if state.outcome() is not None or move not in state.legal_moves():
            break
        text.append(move.uci())  # type: ignore[attr-defined]
        state = state.play(move)
    return text


def _mate_moves(mate_plies: int) -> int:
    """Signed plies to mate -> UCI `mate n` in moves (positive: the side to move mates)."""
    moves = (abs(mate_plies) + 1) // 2
    return moves if mate_plies > 0 else -moves


def format_info(info: SearchInfo, state: State, *, show_wdl: bool = False, show_multipv: bool = False) -> str:
    """One `info` line for a progress report about a search of `state`.  show_multipv:
    name the line's rank even for line 1 (MultiPV > 1, so GUIs can tell the lines apart)."""
    parts = ["info", "depth", str(info.depth), "seldepth", str(max(info.seldepth, info.depth))]
    if show_multipv or info.multipv != 1:
        parts += ["multipv", str(info.multipv)]
    if info.mate_plies is not None:
        parts += ["score", "mate", str(_mate_moves(info.mate_plies))]
    else:
        parts += ["score", "cp", str(cp_from_value(info.value))]
    if show_wdl and info.wdl is not None:
        parts += ["wdl", *(str(int(x)) for x in info.wdl)]
    parts += ["nodes", str(info.nodes), "nps", str(info.nps)]
    if info.hashfull is not None:
        parts += ["hashfull", str(info.hashfull)]
    parts += ["time", str(int(round(info.time * 1000)))]
    pv = _legal_pv(state, info.pv)
    if pv:
        parts += ["pv", *pv]
    return " ".join(parts)


def _played_move(state: State, result: SearchResult) -> object | None:
    """The move the answer plays: the searcher's when legal, else the first legal move."""
    legal = state.legal_moves()
    if not legal:
        return None
    return result.best_move if result.best_move is not None and result.best_move in legal else legal[0]


def format_bestmove(state: State, result: SearchResult) -> tuple[str, str | None]:
    """(`bestmove …` line, problem or None).  Always legal: a missing or illegal best
    move falls back to the first legal move; no legal move gives `bestmove 0000`."""
    move = _played_move(state, result)
    if move is None:
        return "bestmove 0000", None
    problem = None
    if move != result.best_move:
        problem = f"searcher returned {result.best_move!r}, not a legal move; playing {move.uci()}"  # type: ignore[attr-defined]
    ponder = result.ponder_move
    pv = result.info.pv if result.info is not None else ()
    if ponder is None and len(pv) > 1 and pv[0] == move:
        ponder = pv[1]
    line = f"bestmove {move.uci()}"  # type: ignore[attr-defined]
    if ponder is not None and ponder in state.play(move).legal_moves():
        line += f" ponder {ponder.uci()}"
    return line, problem


def closing_info(state: State, result: SearchResult) -> SearchInfo:
    """The report owed before a bestmove when the search printed none (stopped before
    its first depth completed): its final info, or the played move with the result's
    value, the pv led by the move actually played."""
    move = _played_move(state, result)
    info = result.info or SearchInfo(depth=0, seldepth=0, value=result.value, nodes=0, time=0.0)
    if move is None:  # the game is over: `score mate 0` when mated (Stockfish's convention)
        outcome = state.outcome()
        mated = outcome is not None and outcome.winner is not None
        return replace(info, pv=(), value=-1.0 if mated else 0.0, mate_plies=0 if mated else None)
    if not info.pv or info.pv[0] != move:
        info = replace(info, pv=(move,) if move is not None else ())
    return info


def _check_value(value: str | None) -> bool:
    """A `type check` option's value; ValueError for anything but true/false."""
    text = (value or "").strip().lower()
    if text not in ("true", "false"):
        raise ValueError(f"expected true or false, got {value!r}")
    return text == "true"


def _emergency_bestmove(state: State) -> str:
    """The answer to a `go` whose search could not start: python-chess's first legal move
    (our own move list may be what failed), or 0000."""
    board = getattr(state, "board", None)
    if board is None:
        return "bestmove 0000"
    move = next(iter(board.legal_moves), None)
    return "bestmove 0000" if move is None else f"bestmove {board.uci(move)}"


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


class _Job:
    """One `go`: its bestmove line is sent once, and only after release (stop/ponderhit
    for held searches), and never before an `info` line with a score and a pv."""

    def __init__(self, state: State, limits: Limits, *, hold: bool, ponder: bool):
        self.state, self.limits, self.ponder = state, limits, ponder
        self.pondered = ponder          # its clock started at ponderhit, not at go
        self.released = not hold
        self.line: str | None = None
        self.sent = False
        self.info_sent = False
        # Clock bookkeeping for the LagMeter: our clock and increment as sent, and when
        # `go` came in and the bestmove went out, by our own clock.
        self.clock_ms: float | None = None
        self.inc_ms = 0.0
        self.received = time.monotonic()
        self.search_started = self.received   # when the search itself started (after any player build)
        self.answered: float | None = None


class UciServer:
    """The UCI session: position, options and the current search.  `handle(line)`
    returns False on quit.  Callbacks from the search thread go through `_lock`."""

    def __init__(self, options: PlayerOptions, write: Callable[[str], None], *,
                 searcher: Searcher | None = None):
        """searcher: a ready searcher (tests' fake); otherwise built from `options` at the
        first isready/go, so `uciok` never waits for a player to load."""
        self.game = ChessGame()
        self.state: State = self.game.initial_state()
        self.options = options
        self.write = write
        self.engine: SearchThread | None = SearchThread(searcher) if searcher is not None else None
        self._built: PlayerOptions | None = options if searcher is not None else None
        self.overhead_ms: float = DEFAULT_OVERHEAD_MS
        self.show_wdl = False
        self.debug = False
        self.multipv = 1
        self._clear_hash = False
        self._lock = threading.Lock()
        self._job: _Job | None = None
        self.lag = LagMeter()
        self.overrun = LagMeter()   # our own go-to-bestmove time beyond the hard budget
        self.base_clock_ms: float | None = None  # the largest clock seen this game
        # the last clock-timed go of each side, for the LagMeter (one process may play both)
        self._last_timed: dict[int, _Job] = {}
        self.handlers: dict[str, Callable[[list[str]], bool | None]] = {
            "uci": self.cmd_uci, "debug": self.cmd_debug, "isready": self.cmd_isready,
            "setoption": self.cmd_setoption, "register": lambda _: None,
            "ucinewgame": self.cmd_ucinewgame, "position": self.cmd_position, "go": self.cmd_go,
            "stop": self.cmd_stop, "ponderhit": self.cmd_ponderhit, "quit": lambda _: False,
        }
        self.setters: dict[str, Callable[[str | None], None]] = {   # server options; player ones: uci_options
            "move overhead": self.set_overhead,
            "multipv": self.set_multipv, "uci_showwdl": self.set_show_wdl,
            "ponder": lambda v: None, "clear hash": self.set_clear_hash,
            "uci_chess960": self.set_chess960,
        }

    # -- plumbing -----------------------------------------------------------------------
    def info(self, text: str) -> None:
        self.write("info string " + " ".join(text.split()))

    def error(self, text: str) -> None:
        self.info("error: " + text)

    def handle(self, line: str) -> bool:
        """Dispatch one input line; unknown leading tokens are skipped (UCI: 'joho debug on')."""
        tokens = line.split()
        for start, token in enumerate(tokens):
            handler = self.handlers.get(token.lower())
            if handler is not None:
                try:
                    return handler(tokens[start:]) is not False
                except Exception as exc:  # an adapter bug must not kill the engine
                    self.error(f"{token}: {_one_line(exc)}")
                    return True
        self.info(f"unknown command: {line[:80]}")
        return True

    def shutdown(self, timeout: float = 1.0) -> None:
        """quit/EOF: stop the search, give it a moment to print its bestmove."""
        job = self._job
        if job is not None:
            self._release(job)
        if self.engine is not None:
            self.engine.stop()
            self.engine.wait(timeout)

    def _searching(self) -> bool:
        return self.engine is not None and self.engine.searching

    def _ensure_engine(self) -> SearchThread:
        """(Re)build the searcher after option changes, lazily and never mid-search.
        A failure keeps the previous player (or, at the first build, falls back)."""
        if self.engine is None or self._built != self.options:
            previous = self._built
            try:
                built = build_player(self.game, self.options,
                                     fallbacks=FALLBACK_PLAYERS if previous is None else ())
            except PlayerBuildError as exc:
                if previous is None:
                    raise
                self.error(str(exc))
                self.options = previous
            else:
                for note in built.notes:
                    self.info(note)
                self.engine, self.options = SearchThread(built.searcher), built.options
                self._built = self.options
        assert self.engine is not None
        if self._clear_hash:
            self._clear_hash = False
            self.engine.new_game()
        return self.engine

    # -- search results (called from the search thread) --------------------------------
    def _deliver(self, job: _Job, line: str) -> None:
        with self._lock:
            job.line = line
            if job.released and not job.sent:
                self._send_bestmove(job)

    def _release(self, job: _Job) -> None:
        with self._lock:
            job.released = True
            if job.line is not None and not job.sent:
                self._send_bestmove(job)

    def _send_bestmove(self, job: _Job) -> None:
        assert job.line is not None
        job.sent = True
        answered = time.monotonic()
        timed = job.limits.time is not None and not job.pondered
        if self.debug and timed:
            self.info(f"answer {1000 * (answered - job.received):.0f} ms after go, "
                      f"search budget {1000 * job.limits.time:.0f} ms")   # type: ignore[operator]
        self.write(job.line)
        job.answered = answered
        if timed:     # clocks and movetime alike: how late our answers come out
            self.overrun.observe(1000 * (answered - job.search_started - job.limits.time))  # type: ignore[operator]

    def _measure_lag(self, previous: _Job | None, state: State, clock_ms: float | None) -> None:
        """Feed the LagMeter when this `go` continues the game of a timed, answered one by
        the same side: the clock then charged (before + increment - now) beyond our own
        go-to-bestmove time is lag we cannot see from inside."""
        if (previous is None or previous.clock_ms is None or clock_ms is None or previous.answered is None
                or previous.state.to_play != state.to_play
                or state.ply != previous.state.ply + 2):
            return
        charged = previous.clock_ms + previous.inc_ms - clock_ms
        self.lag.observe(charged - 1000 * (previous.answered - previous.received))

    def _on_done(self, job: _Job, result: SearchResult) -> None:
        try:
            line, problem = format_bestmove(job.state, result)
        except Exception as exc:
            line, _ = format_bestmove(job.state, SearchResult(best_move=None, value=0.0))
            problem = f"bestmove: {_one_line(exc)}"
        if problem:
            self.error(problem)
        if not job.info_sent:
            self._on_info(job, closing_info(job.state, result))
        self._deliver(job, line)

    def _on_error(self, job: _Job, exc: BaseException) -> None:
        self.error(f"search failed: {_one_line(exc)}")
        self._on_done(job, SearchResult(best_move=None, value=0.0))

    def _on_info(self, job: _Job, info: SearchInfo) -> None:
        try:
            if info.note:
                self.info(info.note)
            self.write(format_info(info, job.state, show_wdl=self.show_wdl,
                                   show_multipv=job.limits.multipv > 1))
            job.info_sent = True
        except Exception as exc:  # a bad report must not abort the search
            self.error(f"info: {_one_line(exc)}")

    def _retire_job(self) -> None:
        """Stop the current search and wait for it: its bestmove is printed once."""
        job, self._job = self._job, None
        if job is not None:
            self._release(job)
        if self.engine is not None:
            self.engine.stop()
            self.engine.wait()

    def _player_name(self) -> str:
        """The player the options pick: auto resolved (mcts when a chess network ships), and
        named as a switch where the game's profile hands clocks to alpha-beta (see
        engine/players/clock_switch.py)."""
        try:
            player = resolve_player(self.game, self.options).player
        except Exception:   # a bad WeightsFile is reported when the player is built, not here
            return self.options.player
        threshold = game_profile(self.game.name).auto_alphabeta_below_playouts
        if self.options.player != "auto" or player != "mcts" or threshold is None:
            return player
        if math.isinf(threshold() if callable(threshold) else threshold):
            return "auto: alphabeta, mcts under a node limit"
        return "auto: alphabeta under a short clock, mcts otherwise"

    # -- commands ----------------------------------------------------------------------
    def cmd_uci(self, _: list[str]) -> None:
        for line in (
            f"id name PlyZero {__version__} ({self._player_name()})",
            "id author PlyZero developers",
            *player_option_lines(self.options),
            f"option name Move Overhead type spin default {int(self.overhead_ms)} min 0 max 10000",
            "option name MultiPV type spin default 1 min 1 max 256",
            "option name UCI_ShowWDL type check default false",
            f"option name UCI_Chess960 type check default {str(self.game.chess960).lower()}",
            "option name Ponder type check default false",
            "option name Clear Hash type button",
            "uciok",
        ):
            self.write(line)

    def cmd_debug(self, tokens: list[str]) -> None:
        self.debug = len(tokens) > 1 and tokens[1].lower() == "on"

    def cmd_isready(self, _: list[str]) -> None:
        if not self._searching():
            self._ensure_engine()
        self.write("readyok")

    def cmd_setoption(self, tokens: list[str]) -> None:
        lowered = [t.lower() for t in tokens]
        if "name" not in lowered:
            self.error("setoption needs 'name <id> [value <x>]'")
            return
        start = lowered.index("name") + 1
        end = lowered.index("value", start) if "value" in lowered[start:] else len(tokens)
        name = " ".join(tokens[start:end]).lower()
        value = " ".join(tokens[end + 1:]) if end < len(tokens) else None
        try:
            changed = set_player_option(self.options, name, value)
            if changed is not None:
                self.options = changed
                return
            setter = self.setters.get(name)
            if setter is None:
                self.info(f"unknown option {name!r} ignored")
                return
            setter(value)
        except ValueError as exc:
            self.error(f"option {name!r}: {exc}")

    def cmd_ucinewgame(self, _: list[str]) -> None:
        self._retire_job()
        self._last_timed.clear()
        self.base_clock_ms = None
        self.state = self.game.initial_state()
        if self.engine is not None:
            self.engine.new_game()

    def cmd_position(self, tokens: list[str]) -> None:
        args = tokens[1:]
        moves: list[str] = []
        if "moves" in args:
            cut = args.index("moves")
            args, moves = args[:cut], args[cut + 1:]
        if args[:1] == ["startpos"]:
            fen = "startpos"
        elif args[:1] == ["fen"] and len(args) > 1:
            fen = " ".join(args[1:])
        else:
            self.error("position needs 'startpos' or 'fen <fen>'; position unchanged")
            return
        try:
            base = self.game.state_from_fen(fen)
        except GameSetupError as exc:
            self.error(f"{exc}; position unchanged")
            return
        try:
            self.state = self.game.state_from_fen(fen, moves)
        except IllegalMoveError:
            self.state = self._play_prefix(base, moves)

    def _play_prefix(self, state: State, moves: list[str]) -> State:
        for text in moves:
            try:
                state = state.play(self.game.parse_move(state, text))  # type: ignore[arg-type]
            except IllegalMoveError as exc:
                self.error(f"{exc}; using the position before it")
                break
        return state

    def cmd_go(self, tokens: list[str]) -> None:
        """Start the search `go` asks for.  Should that fail (a player that cannot be built, a
        bug), the error is reported and the go still gets its one bestmove: a GUI waits for it."""
        received = time.monotonic()
        self._retire_job()
        try:
            self._start_go(tokens, received)
        except Exception as exc:
            self.error(f"go: {_one_line(exc)}")
            job = self._job
            if job is None:
                self.write(_emergency_bestmove(self.state))
            elif job.line is None:
                self._deliver(job, _emergency_bestmove(job.state))

    def _start_go(self, tokens: list[str], received: float) -> None:
        engine = self._ensure_engine()
        state = self.state
        clock = parse_go(tokens[1:], state.to_play).clock_ms  # read first: the lag it shows counts now
        self._measure_lag(self._last_timed.get(state.to_play), state, clock)
        if clock is not None:
            self.base_clock_ms = max(clock, self.base_clock_ms or 0.0)
        go = parse_go(tokens[1:], state.to_play,
                      overhead_ms=max(self.overhead_ms, self.lag.worst),
                      lag_ms=self.lag.mean + self.overrun.mean, base_ms=self.base_clock_ms,
                      latency_ms=self.overrun.worst)
        if go.ignored:
            self.error(f"go: ignored {', '.join(go.ignored)}")
        legal = state.legal_moves()
        restrict = tuple(m for m in legal if m.uci() in go.searchmoves)
        if go.searchmoves and not restrict:
            self.info("no legal move in searchmoves; searching all moves")
        limits = replace(go.limits, searchmoves=restrict or None, multipv=self.multipv)
        job = _Job(state, limits, hold=go.ponder or limits.infinite, ponder=go.ponder)
        job.received = received
        if not go.ponder:
            job.clock_ms, job.inc_ms = go.clock_ms, go.inc_ms
        if job.clock_ms is not None:
            self._last_timed[state.to_play] = job
        else:
            self._last_timed.pop(state.to_play, None)
        if self.debug:
            self.info(f"go {self.options.player} ponder={go.ponder} {limits}")
        self._job = job
        if not legal:
            self._on_info(job, closing_info(state, SearchResult(best_move=None, value=0.0)))
            self._deliver(job, "bestmove 0000")
            return
        search_limits = limits
        if go.ponder:  # the clock starts at ponderhit; no clock at all: search until stop
            search_limits = (replace(limits, ponder=True) if not limits.unlimited else
                             Limits(infinite=True, searchmoves=limits.searchmoves, multipv=limits.multipv))
        job.search_started = time.monotonic()
        engine.go(state, search_limits, on_info=lambda info: self._on_info(job, info),
                  on_done=lambda result: self._on_done(job, result),
                  on_error=lambda exc: self._on_error(job, exc))

    def cmd_stop(self, _: list[str]) -> None:
        job = self._job
        if job is None or job.sent:
            return  # a stray or second stop
        self._release(job)
        if self.engine is not None:
            self.engine.stop()

    def cmd_ponderhit(self, _: list[str]) -> None:
        """The predicted move was played: the ponder search's clock starts now, with the
        budget a fresh `go` with the same clock would get (Limits.ponder)."""
        job = self._job
        if job is None or not job.ponder or job.released:
            return
        job.ponder = False
        if job.limits.infinite:
            return  # `go ponder infinite`: still held until stop
        self._release(job)
        if self.engine is not None and not job.sent:
            if job.limits.unlimited:
                self.engine.stop()  # nothing to spend after ponderhit: answer now
            else:
                self.engine.ponderhit()

    # -- options -------------------------------------------------------------------------
    def set_overhead(self, value: str | None) -> None:
        number = parse_int(value or "")
        if number is None or number < 0:
            raise ValueError(f"expected milliseconds >= 0, got {value!r}")
        self.overhead_ms = float(number)

    def set_multipv(self, value: str | None) -> None:
        number = parse_int(value or "")
        if number is None or number < 1:
            raise ValueError(f"expected an integer >= 1, got {value!r}")
        self.multipv = number

    def set_show_wdl(self, value: str | None) -> None:
        self.show_wdl = _check_value(value)

    def set_clear_hash(self, value: str | None) -> None:
        self._clear_hash = True

    def set_chess960(self, value: str | None) -> None:
        """Chess960 on: positions are read as Chess960 (X-FEN or Shredder-FEN castling) and
        castling is written king-takes-rook (e1h1), as the option's clients expect."""
        chess960 = _check_value(value)
        if chess960 != self.game.chess960:
            self.game = CHESS960 if chess960 else ChessGame()
            try:     # the position so far, read the new way (the GUI sends its own next)
                self.state = self.game.state_from_fen(self.state.fen())   # type: ignore[attr-defined]
            except GameSetupError:
                self.state = self.game.initial_state()


def serve(options: PlayerOptions, stdin: TextIO, stdout: TextIO, *, searcher: Searcher | None = None) -> int:
    """Run a UCI session until `quit` or end of input; returns the exit code.
    searcher: use this one instead of building from `options` (tests' fakes)."""
    reconfigure = getattr(stdin, "reconfigure", None)
    if reconfigure is not None:
        try:
            reconfigure(errors="replace")  # a stray non-UTF-8 byte must not end the session
        except (ValueError, OSError):
            pass
    server = UciServer(options, LineWriter(stdout), searcher=searcher)
    try:
        for line in LineReader(stdin):
            if not server.handle(line):
                break
    finally:
        server.shutdown()
    return 0


def main() -> None:
    """`plyzero-uci`: the zero-argument launcher for GUIs (default player: auto, i.e. mcts with
    the shipped chess network when there is one, else alphabeta)."""
    sys.exit(serve(PlayerOptions(player="auto"), sys.stdin, sys.stdout))
