"""External engine processes as Searchers, so the web board (engine/web) can play them
through the same SearchThread API as its own players.  engine/ starts no processes: the `engine
play` command hands `external_searcher` to the board.

UCI engines are driven by python-chess (`chess.engine`), whose reports become SearchInfo;
Gomocup brains by our GomocupClient (BOARD with the whole position before each move, so
undo and set-up positions need nothing more).  Both start from an argument list, never a shell.
"""
from __future__ import annotations

import threading
import time
from typing import Any, Callable, Sequence

import chess
import chess.engine

from engine.games.gomoku import RULE_CODES
from engine.types import Searcher
from engine.types import Limits, SearchInfo, SearchResult, value_from_cp
from protocols.gomocup_client import GomocupClient

__all__ = ["UciSearcher", "GomocupSearcher", "external_searcher", "info_from_uci"]

STARTUP_TIMEOUT = 30.0     # seconds to uciok / START's OK
DEFAULT_MOVETIME = 1.0     # seconds, when the board asks for the player's own budget
GOMOCUP_TOLERANCE = 2.0    # seconds beyond timeout_turn before a brain counts as hung


def info_from_uci(info: chess.engine.InfoDict, elapsed: float) -> SearchInfo | None:
    """python-chess's report -> SearchInfo (side to move's view); None for lines with no score."""
    score = info.get("score")
    if score is None:
        return None
    relative = score.relative
    mate = relative.mate()
    if mate is not None:
        value, mate_plies = (1.0, 2 * mate - 1) if mate > 0 else (-1.0, 2 * mate)
    else:
        value, mate_plies = value_from_cp(relative.score() or 0), None
    wdl = info.get("wdl")
    depth = int(info.get("depth", 0))
    return SearchInfo(depth=depth, seldepth=int(info.get("seldepth", depth)), value=value,
                      nodes=int(info.get("nodes", 0)), time=float(info.get("time", elapsed)),
                      pv=tuple(info.get("pv", ())), mate_plies=mate_plies,
                      wdl=None if wdl is None else tuple(wdl.relative),   # type: ignore[arg-type]
                      multipv=int(info.get("multipv", 1)))


def _watch(stop: threading.Event | None, done: threading.Event, halt: Callable[[], None]) -> None:
    """Call halt() once `stop` is set, unless the search ended first."""
    if stop is None:
        return

    def run() -> None:
        while not done.is_set():
            if stop.wait(0.02):
                halt()
                return

    threading.Thread(target=run, name="stop-watch", daemon=True).start()


class UciSearcher:
    """A chess engine process; a search is one `go` (infinite when the limits say so)."""

    def __init__(self, argv: Sequence[str]):
        self.engine = chess.engine.SimpleEngine.popen_uci(list(argv), timeout=STARTUP_TIMEOUT)
        self._game = object()

    def new_game(self) -> None:
        self._game = object()      # python-chess sends ucinewgame when this changes

    def search(self, state: Any, limits: Limits, *, stop: threading.Event | None = None,
               on_info: Callable[[SearchInfo], None] | None = None) -> SearchResult:
        limit = None
        if not limits.infinite:
            limit = chess.engine.Limit(time=limits.time, nodes=limits.nodes, depth=limits.depth)
            if limits.unlimited:
                limit = chess.engine.Limit(time=DEFAULT_MOVETIME)
        started = time.monotonic()
        head: SearchInfo | None = None
        done = threading.Event()
        with self.engine.analysis(state.board, limit, multipv=limits.multipv if limits.multipv > 1 else None,
                                  game=self._game, root_moves=limits.searchmoves) as analysis:
            _watch(stop, done, analysis.stop)
            try:
                for report in analysis:
                    info = info_from_uci(report, time.monotonic() - started)
                    if info is None:
                        continue
                    head = info if info.multipv == 1 else head
                    if on_info is not None:
                        on_info(info)
                best = analysis.wait()
            finally:
                done.set()
        return SearchResult(best_move=best.move, value=head.value if head else 0.0, info=head,
                            ponder_move=best.ponder)

    def close(self) -> None:
        try:
            self.engine.quit()
        except (chess.engine.EngineError, TimeoutError, RuntimeError):
            self.engine.close()


class GomocupSearcher:
    """A Gomocup brain for one board size and rule.  The protocol has no stop: a search ends
    when the brain answers, within its turn time."""

    def __init__(self, game: Any, argv: Sequence[str]):
        self.game = game
        self.client = GomocupClient(list(argv))
        try:
            self.client.start(game.width, game.height, timeout=STARTUP_TIMEOUT)
            self.client.info("rule", RULE_CODES[game.rule])
            self.client.info("game_type", 0)      # the opponent is a person
            self.client.info("timeout_match", 0)
        except BaseException:
            self.client.close()
            raise

    def new_game(self) -> None:
        self.client.restart(timeout=STARTUP_TIMEOUT)

    def search(self, state: Any, limits: Limits, *, stop: threading.Event | None = None,
               on_info: Callable[[SearchInfo], None] | None = None) -> SearchResult:
        turn = limits.time or DEFAULT_MOVETIME
        self.client.info("timeout_turn", int(turn * 1000))
        self.client.info("time_left", 2147483647)
        own = 1 + state.to_play
        width = self.game.width
        stones = [(i % width, i // width, 1 if cell == own else 2) for i, cell in enumerate(state.cells) if cell]
        x, y = self.client.board(stones, timeout=turn + GOMOCUP_TOLERANCE)
        if not (0 <= x < width and 0 <= y < self.game.height):
            return SearchResult(best_move=None, value=0.0)
        return SearchResult(best_move=self.game.index(x, y), value=0.0)

    def close(self) -> None:
        self.client.close()


def external_searcher(game: Any, protocol: str, argv: Sequence[str]) -> Searcher:
    """The board's ExternalFactory: `protocol` is "uci" (chess) or "gomocup" (gomoku)."""
    if not argv:
        raise ValueError("an external engine needs a command line")
    if protocol == "uci":
        return UciSearcher(argv)
    if protocol == "gomocup":
        return GomocupSearcher(game, argv)
    raise ValueError(f"unknown protocol {protocol!r} (expected uci or gomocup)")
