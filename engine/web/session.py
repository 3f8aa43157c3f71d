"""One game on the board: the position, the moves, the opponent's SearchThread, and the live view.

Threads: requests come from the HTTP server's threads, search reports from the SearchThread's
worker.  `_actions` serialises the requests that change the game; `_lock` guards the fields
and is the only lock a search callback takes.  No one waits for a search while holding
`_lock`, so a finishing search can always report.  Every search carries an id; a result whose
id is no longer current (undo, new game, swap while it ran) is dropped.
"""
from __future__ import annotations

import threading
from dataclasses import replace
from functools import partial
from typing import Any, Callable, Mapping

from engine.games import board_view
from engine.games.base import Game, GameSetupError, IllegalMoveError, Outcome
from engine.web.look import LiveView, move_label, move_text
from engine.web.opponents import ExternalFactory, build_searcher
from engine.web.record import game_record, result_text
from engine.web.settings import FROM_COMMAND_LINE, PROTOCOLS, AllowList, GameSettings, Opponent, RequestError
from engine.search_thread import SearchThread
from engine.types import Searcher
from engine.types import Limits, Move, SearchInfo, SearchResult

__all__ = ["Session"]



class Session:
    """The game a board shows.  Methods raise RequestError for what cannot be done now.

    `external` starts external engines (the command line supplies it; engine/ starts no
    processes); it is only ever handed an argv that `allowed` lists."""

    def __init__(self, settings: GameSettings, *, external: ExternalFactory | None = None,
                 allowed: AllowList = AllowList(),
                 build: Callable[[Game, Mapping[str, Any]], Searcher] = build_searcher):
        self._external, self._build = external, build
        self.allowed = allowed
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._actions = threading.Lock()
        self.version = 0
        self._search_id = 0
        self._engine: SearchThread | None = None
        self._engine_key: tuple[Game, Opponent] | None = None
        self._view: LiveView | None = None
        self.thinking: str | None = None          # "move" | "analysis" while a search runs
        self.analysing = False                    # analysis restarts after each change until stopped
        self.error: str | None = None             # the last thing the opponent got wrong
        self.resigned: Outcome | None = None
        self.settings = settings
        self.game: Any = None
        self.states: list[Any] = []
        self.moves: list[Move] = []
        self.texts: list[str] = []
        self.labels: list[str] = []
        self.new_game(settings)

    @property
    def external_names(self) -> list[str]:
        """The external engines the page may pick: those the command line listed, if it can start them."""
        return self.allowed.names() if self._external is not None else []

    # --- requests -------------------------------------------------------------------------

    def new_game(self, settings: GameSettings) -> None:
        """Start over with these settings (a new opponent only when it changed)."""
        with self._actions:
            try:
                game = settings.make_game()
            except GameSetupError as exc:
                raise RequestError(str(exc)) from None
            start, setup = self._position(game, settings.position)
            fresh = None
            if self._engine is None or self._engine_key != (game, settings.opponent):
                fresh = self._make_searcher(game, settings.opponent)   # failing here leaves the game as it was
            self._cancel()
            self._use_engine(game, settings.opponent, fresh)
            with self._lock:
                self.settings, self.game = settings, game
                self.states, self.moves, self.texts, self.labels = [start], [], [], []
                for move in setup:
                    self._push(move)
                self.resigned, self.error, self._view = None, None, None
                self.analysing = self.analysing and settings.mode == "analysis"
                self._bump()
            self._after_change()

    def set_position(self, text: str) -> None:
        """A FEN (chess) or stones `x,y x,y ...` (gomoku, first player first) to play or analyse from."""
        self.new_game(replace(self.settings, position=text))

    def play(self, text: str) -> None:
        """The person's move, as the protocols write it (`e2e4`, `e7e8q`, `7,7`)."""
        with self._actions:
            with self._lock:
                state = self.states[-1]
                self._check_not_over()
                if self.settings.mode == "play":
                    if self.thinking == "move":
                        raise RequestError("the engine is thinking: wait, or press Stop to make it move now", 409)
                    if state.to_play != self.settings.human:
                        raise RequestError("it is the engine's turn", 409)
                try:
                    move = self.game.parse_move(state, str(text))
                except IllegalMoveError as exc:
                    raise RequestError(str(exc)) from None
                if move not in state.legal_moves():
                    raise RequestError(f"illegal move {text!r}")
            self._cancel()
            with self._lock:
                self._push(move)
                self.error = None
                self._bump()
            self._after_change()

    def undo(self) -> None:
        """Take back to the person's previous turn (analysis: one ply); un-resign first."""
        with self._actions:
            self._cancel()
            with self._lock:
                plies = 1
                if self.settings.mode == "play" and self.states[-1].to_play == self.settings.human:
                    plies = 2                     # the engine's reply and the person's move
                if self.resigned is not None:
                    self.resigned, plies = None, 0
                elif plies > len(self.moves):
                    plies = -1
                for _ in range(max(plies, 0)):
                    self.states.pop()
                    self.moves.pop()
                    self.texts.pop()
                    self.labels.pop()
                if plies >= 0:
                    self.error, self._view = None, None
                self._bump()
            self._after_change()                  # also restarts a search the undo request cut
            if plies < 0:
                raise RequestError("nothing to undo", 409)

    def swap(self) -> None:
        """The person takes the other colour; the engine moves if that makes it its turn."""
        with self._actions:
            self._cancel()
            with self._lock:
                self.settings = replace(self.settings, human=1 - self.settings.human)
                self._bump()
            self._after_change()

    def resign(self) -> None:
        with self._actions:
            with self._lock:
                if self.settings.mode != "play":
                    raise RequestError("there is no game to resign in analysis mode", 409)
                self._check_not_over()
            self._cancel()
            with self._lock:
                loser = self.settings.human
                self.resigned = Outcome(winner=1 - loser, reason=f"{board_view(self.game).COLOURS[loser]} resigns")
                self._bump()

    def stop(self) -> None:
        """Stop the search now: a move search plays its best move so far; analysis ends."""
        with self._lock:
            self.analysing = False
            self._bump()
        if self._engine is not None:
            self._engine.stop()

    def analyse(self, on: bool) -> None:
        """Analysis mode: search the position on the board until stopped (and after each change)."""
        if not on:
            self.stop()
            return
        with self._actions:
            with self._lock:
                if self.settings.mode != "analysis":
                    raise RequestError("switch to analysis mode first", 409)
                self._check_not_over()
                self.analysing = True
            self._cancel()
            self._after_change()

    def record(self) -> tuple[str, str]:
        """(file name, text): PGN for chess, a move list for gomoku."""
        with self._lock:
            engine_name = self.settings.opponent.name
            names = ("You", engine_name) if self.settings.human == 0 else (engine_name, "You")
            return game_record(self.game, self.states[0], self.moves, names, self._outcome())

    def snapshot(self, after: int = -1, timeout: float = 0.0) -> dict[str, Any]:
        """The board as JSON, once its version is past `after` (or `timeout` seconds passed)."""
        with self._lock:
            self._changed.wait_for(lambda: self.version > after, timeout=timeout)
            return self._snapshot()

    def wake(self) -> None:
        """Answer every waiting poll now (a tab took the game over: the old one hears it at once)."""
        with self._lock:
            self._bump()

    def close(self) -> None:
        with self._actions:
            self._cancel()
            self._close_engine()

    # --- searching -------------------------------------------------------------------------

    def _use_engine(self, game: Game, opponent: Opponent, fresh: Searcher | None) -> None:
        """A new SearchThread over `fresh`, or the kept one told a new game starts."""
        if fresh is None and self._engine is not None:
            self._engine.new_game()
            return
        assert fresh is not None
        self._close_engine()
        self._engine = SearchThread(fresh)
        self._engine_key = (game, opponent)

    def _make_searcher(self, game: Game, opponent: Opponent) -> Searcher:
        if opponent.kind == "builtin":
            try:
                return self._build(game, dict(opponent.options))
            except (ValueError, OSError) as exc:   # unknown player, missing or corrupt network
                raise RequestError(f"cannot build {opponent.name}: {exc}") from None
        if self._external is None or not self.allowed.allows(opponent):   # the last check before a process starts
            raise RequestError(f"{opponent.name!r} is not an external engine of this board: {FROM_COMMAND_LINE}")
        try:
            return self._external(game, PROTOCOLS[game.name], opponent.command)
        except OSError as exc:
            raise RequestError(f"cannot start {opponent.command[0]!r}: {exc.strerror or exc}") from None
        except Exception as exc:   # the process started but did not speak its protocol
            raise RequestError(f"{opponent.name} failed to start: {exc}") from None

    def _close_engine(self) -> None:
        if self._engine is not None:
            close = getattr(self._engine.searcher, "close", None)
            if close is not None:
                close()
        self._engine, self._engine_key = None, None

    def _after_change(self) -> None:
        """Start the search the new situation calls for: the engine's move, or analysis."""
        with self._lock:
            if self._outcome() is not None:
                return
            if self.settings.mode == "play":
                purpose = "move" if self.states[-1].to_play != self.settings.human else None
            else:
                purpose = "analysis" if self.analysing else None
        if purpose is not None:
            self._go(purpose)

    def _go(self, purpose: str) -> None:
        engine = self._engine
        if engine is None:
            raise RequestError("no opponent: start a new game", 409)
        with self._lock:
            self._search_id += 1
            search_id = self._search_id
            state = self.states[-1]
            settings = self.settings
            self.thinking = purpose
            self._view = LiveView(self.game, state, settings.opponent.name)
            self.error = None
            self._bump()
        if purpose == "analysis":
            limits = Limits(infinite=True, multipv=settings.lines)
        else:
            limits = Limits(time=settings.movetime or None, multipv=settings.lines)
        engine.go(state, limits, on_info=partial(self._on_info, search_id),
                  on_done=partial(self._on_done, search_id, purpose),
                  on_error=partial(self._on_error, search_id))

    def _cancel(self) -> None:
        """End any search and drop its result (the caller holds `_actions`, not `_lock`)."""
        with self._lock:
            self._search_id += 1
            self.thinking = None
        if self._engine is not None:
            self._engine.stop()
            self._engine.wait()

    def _on_info(self, search_id: int, info: SearchInfo) -> None:
        with self._lock:
            if search_id == self._search_id and self._view is not None:
                self._view.add(info)
                self._bump()

    def _on_done(self, search_id: int, purpose: str, result: SearchResult) -> None:
        with self._lock:
            if search_id != self._search_id:
                return
            self.thinking = None
            if purpose == "move":
                state = self.states[-1]
                if result.best_move is None or result.best_move not in state.legal_moves():
                    self.error = f"{self.settings.opponent.name} answered no legal move ({result.best_move})"
                else:
                    self._push(result.best_move)
            self._bump()

    def _on_error(self, search_id: int, exc: BaseException) -> None:
        with self._lock:
            if search_id != self._search_id:
                return
            self.thinking = None
            self.analysing = False
            self.error = f"{self.settings.opponent.name} failed: {exc}"
            self._engine_key = None      # the next new game starts the opponent afresh
            self._bump()

    # --- state (callers hold _lock) -----------------------------------------------------

    def _position(self, game: Any, text: str) -> tuple[Any, list[Move]]:
        """Start state and set-up moves: chess from a FEN, gomoku from stones played in order
        (the game's board view reads the text)."""
        try:
            return board_view(game).position(game, text.strip())
        except GameSetupError as exc:
            raise RequestError(str(exc)) from None
        except IllegalMoveError as exc:
            raise RequestError(f"stones: {exc}") from None

    def _push(self, move: Move) -> None:
        state = self.states[-1]
        self.texts.append(move_text(self.game, state, move))
        self.labels.append(move_label(self.game, state, move))
        self.moves.append(move)
        self.states.append(state.play(move))

    def _outcome(self) -> Outcome | None:
        return self.resigned or self.states[-1].outcome()

    def _check_not_over(self) -> None:
        outcome = self._outcome()
        if outcome is not None:
            raise RequestError(f"the game is over: {outcome.reason}", 409)

    def _bump(self) -> None:
        self.version += 1
        self._changed.notify_all()

    def _snapshot(self) -> dict[str, Any]:
        settings, state = self.settings, self.states[-1]
        outcome = self._outcome()
        board: dict[str, Any] = board_view(self.game).snapshot(self.game, state)
        if settings.mode == "analysis":
            turn = "either"
        else:
            turn = "human" if state.to_play == settings.human else "engine"
        return {
            "version": self.version, "settings": settings.to_json(), "opponent": settings.opponent.name,
            "colours": board_view(self.game).COLOURS, "to_play": state.to_play, "turn": turn,
            "thinking": self.thinking, "analysing": self.analysing, "board": board,
            "moves": [{"move": t, "label": lab} for t, lab in zip(self.texts, self.labels)],
            "result": None if outcome is None else {
                "winner": outcome.winner, "reason": outcome.reason, "text": result_text(outcome)},
            "look": None if self._view is None else self._view.to_json(),
            "error": self.error,
        }


