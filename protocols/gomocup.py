"""The Gomocup (piskvork protocol) brain: `pbrain-plyzero` and `engine gomocup`.

Text <-> SearchThread calls, plus what the protocol leaves to the brain: the board and whose turn
it is, a watchdog that answers a fallback move when a search overruns, time_left between
INFO updates, and process hygiene (stderr silenced, one malloc arena).  The pure decisions
(budgets, rule bits, the fallback move, message text) live in gomocup_policy.py.
Input is read on its own thread (LineReader), searches run on the SearchThread's worker
thread, so `END` exits at once even mid-search.
A move request waits for nothing; any later command except INFO and END first waits
for the pending answer, which keeps the dialogue strictly request/answer.

One game state per game: `_stones` is the board as the manager describes it (who owns
each cell), `_line` the game that led there, as states in play order (line[0] the
set-up: an empty board or a BOARD's stones).  TURN, the brain's own answer and PLAY play
onto the line; TAKEBACK of the last move rewinds it; START/RESTART empty it; BOARD plays
on when the new stones continue the line (see gomocup_policy.follow_stones for the rule),
else rebuilds it.  So the root handed to search is the state self-play reaches by the
same moves, last move included (the network's last-move plane), and MCTS follows the
played moves into its old tree.

Choices the protocol leaves open (documented here, pinned by tests):
- BOARD field 3 (continuous-game mark) is an occupied cell that helps neither side;
  it is counted as an opponent stone, since a brain stone is the one thing it is not.
- The brain's colour follows from the stone counts at each move request: as many own
  as opponent stones -> the brain moves first; one opponent stone more -> second.
  Any other count is `ERROR` (not the brain's turn).
- INFO rule bitmask (engine.games.gomoku.rule_from_code): 4 -> renju (black's forbidden
  points never played, white wins by forcing black onto one), 8 -> caro, 1 -> exactly
  five, 0 -> freestyle.  Continuous games (2) are not played: the brain plays the rule
  without it and says so in a `MESSAGE` line before its next move.
- No INFO timeout_turn -> DEFAULT_TIMEOUT_TURN_MS (the fastgame setting).
- SWAP2BOARD (swap2 openings): no stones -> three (`x,y x,y x,y`, black white black); three
  or five -> `SWAP` (the brain takes black) or one move (it stays white and plays it); the
  brain never places two more stones (engine/games/gomoku/swap2.py says why).  The answer is
  thought over on a worker thread within one move's budget, like a move; the brain's board is
  left as it was (the manager sends BOARD next).
- A searcher that fails to build falls back to alphabeta, then random (MESSAGE says
  so); a search that fails or overruns its budget answers a fallback legal move.
- Nothing is ever written to stderr (piskvork reads it as the brain's stdout).
"""
from __future__ import annotations

import os
import sys
import threading
import time
from dataclasses import dataclass, field, replace
from typing import Callable, TextIO

from engine import __version__
from engine.games import GameSetupError, get_game
from engine.games.base import IllegalMoveError
from engine.games.gomoku import MAX_SIZE, MIN_SIZE, GomokuGame, GomokuState, rule_from_code
from engine.games.gomoku.swap2 import choose as choose_swap2_side, propose as propose_swap2_stones
from engine.search_thread import SearchThread
from engine.players import PlayerBuildError, PlayerOptions, build_player, resolve_player
from engine.types import Searcher
from engine.types import Limits, SearchInfo, SearchResult
from protocols.gomocup_policy import (INSTANT_S, UNLIMITED_MS, ProtocolError, brain_threads, fallback_move,
                                     follow_stones, format_message, keep_back_latency, move_budget,
                                     parse_ints)
from protocols.io import LineReader, LineWriter
from protocols.timeman import LagMeter

__all__ = ["serve", "serve_stdio", "GomocupBrain", "MatchSettings"]

WATCHDOG_GRACE_S = 0.25           # past the hard limit: stop the search; as long again: fallback
OWN, OPPONENT, MARK = 1, 2, 3     # BOARD field values

MakeSearcher = Callable[[GomokuGame, PlayerOptions], Searcher]


@dataclass
class MatchSettings:
    """What INFO has told us so far (ms, bytes, bitmask), mutable per session."""
    timeout_turn: int | None = None
    timeout_match: int | None = None
    time_left: int | None = None
    max_memory: int = 0
    game_type: int = 1
    rule_bits: int = 0
    max_node: int = 0       # Rapfi's and Yixin's extensions: a node / depth cap per move (0 = none)
    max_depth: int = 0
    thread_num: int = 0     # Yixin Board's extension: the threads the brain may use (0 = not told)
    folder: str | None = None


@dataclass(eq=False)
class _MoveRequest:
    """One pending move: answered exactly once, by the search or the fallback (silently after END)."""
    state: GomokuState
    limits: Limits
    notes: list[str]
    started: float
    time_left: int | None = None      # the match clock when it was asked (ms), for the lag
    done: threading.Event = field(default_factory=threading.Event)
    info: SearchInfo | None = None
    timer: threading.Timer | None = None


@dataclass(eq=False)
class _Swap2Request:
    """One pending SWAP2BOARD answer, thought over on its own thread."""
    done: threading.Event = field(default_factory=threading.Event)


class GomocupBrain:
    """Protocol state machine.  `handle(line)` returns False on END (exit now)."""

    def __init__(self, options: PlayerOptions, write: Callable[[str], None], *,
                 searcher_factory: MakeSearcher | None = None):
        self.options = options
        self.settings = MatchSettings()
        self._write = write
        self._make_searcher = searcher_factory
        self._size: tuple[int, int] | None = None
        self._stones: dict[int, int] = {}          # cell -> OWN / OPPONENT / MARK
        self._line: list[GomokuState] = []         # the game as played (see the module docstring)
        self._block: tuple[str, list[str]] | None = None   # BOARD / SWAP2BOARD lines until DONE
        self._engine: SearchThread | None = None
        self._engine_key: tuple[GomokuGame, PlayerOptions] | None = None
        self._player: str | None = None
        self._notes: list[str] = []
        self._pending: _MoveRequest | _Swap2Request | None = None
        self._lock = threading.Lock()
        self._closed = False
        self._latency = LagMeter()   # how late answers came out past their budget (ms)
        self._clock_lag = LagMeter() # what the match clock charged per move beyond our own time (ms)
        self._last_move: tuple[int, float] | None = None   # (time_left asked at, seconds spent)
        self._handlers: dict[str, Callable[[str], str | None]] = {
            "START": self._start, "RECTSTART": self._rectstart, "RESTART": self._restart,
            "BEGIN": self._begin, "TURN": self._turn, "TAKEBACK": self._takeback, "PLAY": self._play,
            "ABOUT": self._about, "BOARD": lambda arg: self._open_block("BOARD"),
            "SWAP2BOARD": lambda arg: self._open_block("SWAP2BOARD"),
        }

    # ---- dispatch -------------------------------------------------------------------
    def handle(self, line: str) -> bool:
        command, _, arg = line.strip().partition(" ")
        command, arg = command.upper(), arg.strip()
        if command == "END":
            self.abort()
            return False
        if command == "INFO" and self._block is None:
            self._info(arg)
            return True
        self.wait()
        try:
            if self._block is not None:
                answer = self._block_line(line.strip())
            else:
                handler = self._handlers.get(command)
                answer = handler(arg) if handler else f"UNKNOWN command {command!r} not understood"
        except ProtocolError as exc:
            answer = f"ERROR {exc}"
        except Exception as exc:  # a bug must not kill the brain or reach stderr
            answer = f"ERROR internal error: {type(exc).__name__}: {exc}".replace("\n", " ")
        if answer is not None:
            self._write(answer)
        return True

    def wait(self) -> None:
        """Block until the pending move (if any) has been answered."""
        request = self._pending
        if request is not None:
            request.done.wait()

    def abort(self) -> None:
        """END: stop searching, answer nothing more."""
        with self._lock:
            self._closed = True
        if self._engine is not None:
            self._engine.stop()

    # ---- board size and position ----------------------------------------------------
    def _game(self) -> GomokuGame:
        if self._size is None:
            raise ProtocolError("no board yet: send START or RECTSTART first")
        rule, _ = rule_from_code(self.settings.rule_bits)
        game = get_game("gomoku", width=self._size[0], height=self._size[1], rule=rule)
        assert isinstance(game, GomokuGame)
        return game

    def _new_board(self, width: int, height: int) -> str:
        if not (MIN_SIZE <= width <= MAX_SIZE and MIN_SIZE <= height <= MAX_SIZE):
            raise ProtocolError(f"unsupported board size {width}x{height} (supported {MIN_SIZE}..{MAX_SIZE})")
        self._size = (width, height)
        return self._restart("")

    def _start(self, arg: str) -> str:
        size = parse_ints(arg, 1, "START N")[0]
        return self._new_board(size, size)

    def _rectstart(self, arg: str) -> str:
        width, height = parse_ints(arg, 2, "RECTSTART W,H")
        return self._new_board(width, height)

    def _restart(self, arg: str) -> str:
        game = self._game()
        self._stones.clear()
        self._line = [game.initial_state()]
        self._last_move = None
        # Build the player now (loading a network can take seconds) so the first move keeps its time.
        self._engine_for(game).new_game()
        return "OK"

    def _cell(self, text: str, *, empty: bool) -> int:
        x, y = parse_ints(text, 2, "x,y")
        game = self._game()
        if not (0 <= x < game.width and 0 <= y < game.height):
            raise ProtocolError(f"{x},{y} is off the {game.width}x{game.height} board")
        cell = game.index(x, y)
        if empty and cell in self._stones:
            raise ProtocolError(f"{x},{y} is occupied")
        if not empty and cell not in self._stones:
            raise ProtocolError(f"no stone on {x},{y}")
        return cell

    def _position(self, listed: tuple[int, ...] = ()) -> GomokuState:
        """The brain to move: its colour follows from the stone counts; the line is played
        on or rebuilt to hold the stones (`listed`: a BOARD's cells in its order)."""
        own = sum(1 for f in self._stones.values() if f == OWN)
        other = len(self._stones) - own
        if own == other:
            own_stone = 1
        elif other == own + 1:
            own_stone = 2
        else:
            raise ProtocolError(f"not the brain's turn: {own} own and {other} opponent stones")
        game = self._game()
        cells = bytearray(game.width * game.height)
        for cell, f in self._stones.items():
            cells[cell] = own_stone if f == OWN else 3 - own_stone
        try:
            self._line = follow_stones(self._line_for(game), bytes(cells), listed)
        except GameSetupError as exc:
            raise ProtocolError(str(exc)) from None
        state = self._line[-1]
        outcome = state.outcome()
        if outcome is not None:
            raise ProtocolError(f"the game is over ({outcome.reason})")
        return state

    def _line_for(self, game: GomokuGame) -> list[GomokuState]:
        """The line in `game` (an INFO rule change mid-game replays it under the new rule)."""
        line = self._line
        if line and line[0].game == game:
            return line
        if not line or (line[0].width, line[0].height) != (game.width, game.height):
            return [game.initial_state()]
        try:
            base = line[0]
            start = game.state_from_stones([c for c, v in enumerate(base.cells) if v == 1],
                                           [c for c, v in enumerate(base.cells) if v == 2])
            replayed = [start]
            for state in line[1:]:
                assert state.last_move is not None
                replayed.append(replayed[-1].play(state.last_move))
            return replayed
        except Exception:   # a rule under which the line ended earlier
            return [game.initial_state()]

    def _play_on(self, cell: int) -> None:
        """A stone the game gained by a move (TURN, the brain's answer, PLAY): play it on.
        Should it not fit (odd command orders), _position rebuilds the line from the stones."""
        if self._line and self._line[-1].is_legal(cell):
            self._line.append(self._line[-1].play(cell))

    # ---- move requests --------------------------------------------------------------
    def _begin(self, arg: str) -> None:
        self._ask()

    def _turn(self, arg: str) -> None:
        cell = self._cell(arg, empty=True)
        line = list(self._line)
        self._stones[cell] = OPPONENT
        self._play_on(cell)
        try:
            self._ask()
        except BaseException:
            del self._stones[cell]   # after an ERROR the brain keeps its previous position
            self._line = line
            raise

    def _open_block(self, kind: str) -> None:
        self._block = (kind, [])

    def _block_line(self, line: str) -> str | None:
        assert self._block is not None
        if line.upper() != "DONE":
            self._block[1].append(line)
            return None
        kind, lines = self._block
        self._block = None
        if kind == "SWAP2BOARD":
            self._swap2(lines)   # answered by its worker thread
            return None
        game = self._game()
        stones: dict[int, int] = {}        # in the listed order (dicts keep it)
        for text in lines:
            x, y, f = parse_ints(text, 3, "x,y,field")
            if f not in (OWN, OPPONENT, MARK):
                raise ProtocolError(f"bad field {f} in {text!r} (expected 1, 2 or 3)")
            if not (0 <= x < game.width and 0 <= y < game.height):
                raise ProtocolError(f"{x},{y} is off the {game.width}x{game.height} board")
            if game.index(x, y) in stones:
                raise ProtocolError(f"{x},{y} is given twice")
            stones[game.index(x, y)] = f
        previous, played, self._stones = self._stones, list(self._line), stones
        try:
            self._ask(tuple(stones))
        except BaseException:
            self._stones, self._line = previous, played
            raise
        return None

    def _ask(self, listed: tuple[int, ...] = ()) -> None:
        """Start searching the current position; the answer is written by the worker."""
        started = time.monotonic()
        state = self._position(listed)
        settings = self.settings
        self._measure_clock_lag()
        limits = self._move_limits(len(self._stones), state.width * state.height - len(self._stones))
        engine = self._engine_for(state.game)   # may load a network: its time counts
        hard = limits.time
        assert hard is not None                 # move_budget always sets a hard time
        spent = time.monotonic() - started
        if spent > 0.01:
            hard = max(hard - spent, min(hard, INSTANT_S))
            soft = None if limits.soft_time is None else min(limits.soft_time, hard)
            limits = replace(limits, time=hard, soft_time=soft)
        if self.options.nodes is not None:
            limits = replace(limits, nodes=self.options.nodes)
        if settings.max_node > 0:
            limits = replace(limits, nodes=min(settings.max_node, limits.nodes or settings.max_node))
        if settings.max_depth > 0:
            limits = replace(limits, depth=settings.max_depth)
        notes, self._notes = self._notes, []
        request = _MoveRequest(state, limits, notes, started, time_left=settings.time_left)
        request.timer = threading.Timer(hard + WATCHDOG_GRACE_S, self._overrun, args=(request,))
        request.timer.daemon = True
        request.timer.start()
        self._pending = request

        def on_info(info: SearchInfo) -> None:
            request.info = info

        def on_done(result: SearchResult) -> None:
            self._answer(request, result.best_move, result.info or request.info)

        def on_error(exc: BaseException) -> None:
            request.notes.append(f"search failed ({type(exc).__name__}: {exc}); fallback move")
            self._answer(request, None, None)

        engine.go(state, limits, on_info=on_info, on_done=on_done, on_error=on_error)

    def _move_limits(self, stones: int, empty: int) -> Limits:
        """One move's budget from the match settings, less the answers' worst latency so far."""
        settings = self.settings
        return keep_back_latency(move_budget(settings.timeout_turn, settings.time_left, settings.timeout_match,
                                             stones, empty=empty, lag_ms=self._clock_lag.mean),
                                 self._latency.worst)

    # ---- swap2 ----------------------------------------------------------------------
    def _swap2(self, lines: list[str]) -> None:
        """SWAP2BOARD's stones (x,y in play order; a field after them is ignored): 0, 3 or 5."""
        game = self._game()
        cells = []
        for text in lines:
            numbers = parse_ints(text, 3, "x,y") if text.count(",") == 2 else parse_ints(text, 2, "x,y")
            x, y = numbers[0], numbers[1]
            if not (0 <= x < game.width and 0 <= y < game.height):
                raise ProtocolError(f"{x},{y} is off the {game.width}x{game.height} board")
            cells.append(game.index(x, y))
        if len(cells) not in (0, 3, 5):
            raise ProtocolError(f"SWAP2BOARD with {len(cells)} stones (expected 0, 3 or 5)")
        try:
            state = game.state_from_moves(cells)
        except IllegalMoveError as exc:
            raise ProtocolError(f"SWAP2BOARD: {exc}") from None
        if state.outcome() is not None:
            raise ProtocolError("SWAP2BOARD: the stones already end the game")
        limits = self._move_limits(len(cells), game.width * game.height - len(cells))
        engine = self._engine_for(game)
        seconds = max(INSTANT_S, limits.time or INSTANT_S)
        request = _Swap2Request()
        self._pending = request

        def evaluate(position: GomokuState, budget: float) -> tuple[float, int | None]:
            return self._search_value(engine, position, budget)

        def think() -> None:
            lines: list[str] = []
            try:
                choice = (propose_swap2_stones(game, evaluate, seconds) if not cells
                          else choose_swap2_side(state, evaluate, seconds))
                lines = ["MESSAGE " + choice.describe(game), "SWAP" if choice.swap else " ".join(
                    game.format_move(None, move) for move in choice.stones)]
            except Exception as exc:   # a bug must not kill the brain or leave the manager waiting
                lines = [f"ERROR swap2 failed: {type(exc).__name__}: {exc}".replace("\n", " ")]
            finally:
                with self._lock:
                    if not self._closed:
                        for line in lines:
                            self._write(line)
                request.done.set()

        threading.Thread(target=think, name="swap2", daemon=True).start()

    def _search_value(self, engine: SearchThread, state: GomokuState, seconds: float) -> tuple[float, int | None]:
        """A search of `seconds` (and the brain's node cap): its value for the side to move
        and its move; (0, None) if it failed or the brain is closing."""
        if self._closed:
            return 0.0, None
        finished = threading.Event()
        results: list[SearchResult] = []

        def on_done(result: SearchResult) -> None:
            results.append(result)
            finished.set()

        limits = Limits(time=seconds, nodes=self.options.nodes)
        engine.go(state, limits, on_done=on_done, on_error=lambda exc: finished.set())
        if not finished.wait(seconds + WATCHDOG_GRACE_S):
            engine.stop()
            finished.wait(WATCHDOG_GRACE_S)
        if not results:
            return 0.0, None
        return results[0].value, results[0].best_move

    def _overrun(self, request: _MoveRequest) -> None:
        """Watchdog: the searcher missed its hard limit; stop it, then answer without it."""
        if self._engine is not None:
            self._engine.stop()
        if not request.done.wait(WATCHDOG_GRACE_S):
            request.notes.append("search overran its budget; fallback move")
            self._answer(request, None, None)

    def _answer(self, request: _MoveRequest, move: int | None, info: SearchInfo | None) -> None:
        with self._lock:
            if request.done.is_set():
                return
            try:
                if request.timer is not None:
                    request.timer.cancel()
                state = request.state
                if move is None or not state.is_legal(move):
                    if move is not None:
                        request.notes.append(f"searcher returned illegal move {move}; fallback move")
                    move = fallback_move(state)
                    info = None
                if not self._closed:
                    self._stones[move] = OWN
                    self._play_on(move)
                    spent = time.monotonic() - request.started
                    self._spend(spent)
                    if request.time_left is not None and 0 < request.time_left < UNLIMITED_MS:
                        self._last_move = (request.time_left, spent)
                    if request.limits.time is not None:
                        self._latency.observe(1000 * (spent - request.limits.time))
                    for note in request.notes:
                        self._write("MESSAGE " + note.replace("\n", " "))
                    if info is not None:
                        self._write(format_message(info, state.game))
                    self._write(state.game.format_move(state, move))
            finally:
                request.done.set()   # never leave the input loop waiting

    def _measure_clock_lag(self) -> None:
        """The manager's time_left now against ours at the last move less what we spent on it:
        the rest is lag we cannot see (pipes, process start-up of the answer, a busy machine)."""
        last, self._last_move = self._last_move, None
        left = self.settings.time_left
        if last is not None and left is not None and left < UNLIMITED_MS:
            before, spent = last
            self._clock_lag.observe(before - 1000 * spent - left)

    def _spend(self, seconds: float) -> None:
        """Keep time_left roughly right if the manager does not resend it before every move."""
        left = self.settings.time_left
        if left is not None and 0 < left < UNLIMITED_MS:
            self.settings.time_left = left - int(seconds * 1000)

    def _engine_for(self, game: GomokuGame) -> SearchThread:
        """The SearchThread for this game and options, built on first use (lazy imports, weights)."""
        options = resolve_player(game, self.options)
        memory_mb = self.settings.max_memory // 2**20
        if memory_mb > 0:  # Hash = 1/6 of the judge's limit: alpha-beta's TT, or MCTS's tree plus a
            # network cache of Hash / 2 (engine/players/build.py): 1/4 of the limit at most
            options = options.with_changes(hash_mb=max(1, min(options.hash_mb, memory_mb // 6)))
        if self.settings.thread_num > 0:   # the manager's allowance: the network's threads
            threads = brain_threads(self.settings.thread_num, self.settings.max_memory)
            options = options.with_changes(threads=threads)
        key = (game, options)
        if self._engine is not None and self._engine_key == key:
            return self._engine
        if self._engine is not None:
            self._engine.stop()
            self._engine.wait()
        try:
            built = build_player(game, options, make=self._make_searcher)
        except PlayerBuildError as exc:
            raise ProtocolError(f"no player could be built: {exc}") from None
        self._notes.extend(built.notes)
        self._engine, self._engine_key, self._player = SearchThread(built.searcher), key, built.player
        return self._engine

    # ---- the rest ---------------------------------------------------------------------
    def _takeback(self, arg: str) -> str:
        cell = self._cell(arg, empty=False)
        del self._stones[cell]
        if len(self._line) > 1 and self._line[-1].last_move == cell:
            self._line.pop()          # the usual undo: rewind; any other stone: rebuilt at the next request
        return "OK"

    def _play(self, arg: str) -> str:
        cell = self._cell(arg, empty=True)
        self._stones[cell] = OWN
        self._play_on(cell)
        return self._game().format_move(None, cell)

    def _about(self, arg: str) -> str:
        player = self._player or resolve_player(get_game("gomoku"), self.options).player
        return (f'name="PlyZero", version="{__version__}", author="PlyZero developers", '
                f'country="International", player="{player}"')

    def _info(self, arg: str) -> None:
        """INFO key value: remembered, never answered; unknown keys and bad values ignored."""
        key, _, value = arg.partition(" ")
        key, value = key.lower(), value.strip()
        if key == "folder":
            self.settings.folder = value
            return
        if key not in ("timeout_turn", "timeout_match", "time_left", "max_memory", "game_type", "rule",
                       "max_node", "max_depth", "thread_num"):
            return
        try:
            number = int(value)
        except ValueError:
            return
        if key == "rule":
            _, note = rule_from_code(number)
            if note is not None:
                self._notes.append(note)
            self.settings.rule_bits = number
        else:
            setattr(self.settings, key, number)


def serve(options: PlayerOptions, stdin: TextIO, stdout: TextIO, *,
          searcher_factory: MakeSearcher | None = None) -> int:
    """Speak the protocol until END (exit at once) or end of input (answer, then exit)."""
    brain = GomocupBrain(options, LineWriter(stdout), searcher_factory=searcher_factory)
    for line in LineReader(stdin):
        if not brain.handle(line):
            return 0
    brain.wait()
    return 0


def _one_malloc_arena() -> None:
    """glibc gives each thread its own 64 MB malloc arena of address space; the Gomocup judge
    counts virtual size against max_memory (350 MB), and our three threads alone reached it.
    One arena keeps VmSize near the real footprint (measured: 320 MB -> 59 MB)."""
    try:
        import ctypes
        libc = ctypes.CDLL(None)
        libc.mallopt(-8, 1)   # M_ARENA_MAX = -8
    except (OSError, AttributeError):
        pass                  # not glibc: nothing to do


def serve_stdio(options: PlayerOptions) -> int:
    """serve() on the process's stdin/stdout with stderr silenced at the descriptor level
    (piskvork reads our stderr as stdout; C libraries write to fd 2 directly)."""
    _one_malloc_arena()
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 2)
    sys.stderr = open(os.devnull, "w")
    if hasattr(sys.stdin, "reconfigure"):
        sys.stdin.reconfigure(errors="replace")   # garbage bytes must not end the input thread
    return serve(options, sys.stdin, sys.stdout)
