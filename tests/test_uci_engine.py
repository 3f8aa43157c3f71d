"""`plyzero-uci` and `engine uci` as real processes, driven the way GUIs drive them:
python-chess's UCI client for games, raw pipes for timing and malformed input.
Engines start without PYTHONUNBUFFERED, so a missing flush shows up as a hang."""
from __future__ import annotations

import logging
import queue
import random
import re
import statistics
import subprocess
import threading
import time

import chess
import chess.engine
import pytest

from conftest import console_script, engine_env

MATED_FEN = "rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3"


def plyzero_uci() -> list[str]:
    return [console_script("plyzero-uci")]


def engine_uci(player: str) -> list[str]:
    return [console_script("engine"), "uci", "--player", player]


class RawUci:
    """An engine process over raw pipes; a reader thread makes every read time-bounded."""

    def __init__(self, command: list[str]):
        self.started = time.monotonic()
        self.proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, env=engine_env())
        self.lines: queue.Queue[tuple[float, str | None]] = queue.Queue()
        self.seen: list[str] = []
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for raw in self.proc.stdout:
            self.lines.put((time.monotonic(), raw.decode("utf-8", "replace").rstrip("\r\n")))
        self.lines.put((time.monotonic(), None))

    def send(self, *lines: str | bytes) -> float:
        """Write lines; returns the time just after the flush."""
        assert self.proc.stdin is not None
        for line in lines:
            self.proc.stdin.write((line if isinstance(line, bytes) else line.encode()) + b"\n")
        self.proc.stdin.flush()
        return time.monotonic()

    def expect(self, prefix: str, timeout: float = 10.0) -> tuple[float, str]:
        """(arrival time, line) of the next line starting with `prefix`."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                at, line = self.lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise AssertionError(f"no {prefix!r} within {timeout}s; saw {self.seen[-20:]}") from None
            if line is None:
                raise AssertionError(f"engine exited before {prefix!r}; saw {self.seen[-20:]}; "
                                     f"stderr {self.proc.stderr.read()[-500:]!r}")  # type: ignore[union-attr]
            self.seen.append(line)
            if line.startswith(prefix):
                return at, line

    def ready(self) -> None:
        self.send("isready")
        self.expect("readyok")

    def quit(self, timeout: float = 5.0) -> int:
        self.send("quit")
        try:
            return self.proc.wait(timeout)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()


@pytest.fixture
def raw():
    engines: list[RawUci] = []

    def start(command: list[str] | None = None) -> RawUci:
        engines.append(RawUci(command or plyzero_uci()))
        return engines[-1]

    yield start
    for engine in engines:
        engine.close()


def _legal(board: chess.Board, line: str) -> chess.Move:
    move = chess.Move.from_uci(line.split()[1])
    assert move in board.legal_moves, f"{line} illegal in {board.fen()}"
    return move


# ----------------------------------------------------------------------------- start-up

def test_uciok_comes_fast_from_process_start(raw):
    """Target < 1 s (GUIs allow 10-35 s); the bound is loose for a loaded 2-core machine."""
    times = []
    for _ in range(2):
        engine = raw()
        engine.send("uci")
        arrived, _ = engine.expect("uciok")
        times.append(arrived - engine.started)
        assert engine.quit() == 0
    print(f"uciok after {min(times) * 1000:.0f} ms (best of {len(times)})")
    assert min(times) < 3.0


def test_engine_uci_subcommand_names_the_player():
    with chess.engine.SimpleEngine.popen_uci(engine_uci("random"), env=engine_env()) as engine:
        assert engine.id["name"].endswith("(random)")
        board = chess.Board()
        for _ in range(6):
            result = engine.play(board, chess.engine.Limit(time=0.02))
            assert result.move in board.legal_moves
            board.push(result.move)


# ----------------------------------------------------------------------------- games

def test_game_at_movetime_50ms_against_a_random_mover():
    rng = random.Random(7)
    board = chess.Board()
    with chess.engine.SimpleEngine.popen_uci(engine_uci("alphabeta"), env=engine_env()) as engine:
        while not board.is_game_over(claim_draw=True) and board.ply() < 100:
            if board.turn == chess.WHITE:
                result = engine.play(board, chess.engine.Limit(time=0.05))
                assert result.move is not None and result.move in board.legal_moves
                board.push(result.move)
            else:
                board.push(rng.choice(list(board.legal_moves)))
    assert board.ply() >= 20 or board.is_checkmate()


def test_game_at_1s_plus_10ms_never_flags():
    """Engine against itself (one process, both sides); the test keeps both clocks."""
    clocks, inc = [1.0, 1.0], 0.01
    board = chess.Board()
    lowest = 1.0
    spent: list[tuple[float, int, float]] = []   # (seconds, ply, clock before): shown on a flag
    with chess.engine.SimpleEngine.popen_uci(plyzero_uci(), env=engine_env()) as engine:
        # As GUIs do (cutechess, fastchess: isready, then the clock starts at go): the network loads
        # at isready, which python-chess's first play() would otherwise send inside the timed move.
        engine.ping()
        while not board.is_game_over(claim_draw=True) and board.ply() < 120:
            side = 0 if board.turn == chess.WHITE else 1
            limit = chess.engine.Limit(white_clock=clocks[0], black_clock=clocks[1],
                                       white_inc=inc, black_inc=inc)
            started = time.monotonic()
            result = engine.play(board, limit)
            spent.append((time.monotonic() - started, board.ply(), clocks[side]))
            clocks[side] -= spent[-1][0]
            lowest = min(lowest, clocks[side])
            if clocks[side] <= 0:
                slowest = ", ".join(f"ply {ply}: {1000 * took:.0f} ms of {1000 * clock:.0f}"
                                    for took, ply, clock in sorted(spent, reverse=True)[:5])
                pytest.fail(f"flagged at ply {board.ply()}; slowest moves: {slowest}")
            clocks[side] += inc
            assert result.move in board.legal_moves
            board.push(result.move)
    print(f"1s+10ms: {board.ply()} plies, lowest clock {lowest * 1000:.0f} ms")


def test_pondering_game_keeps_one_bestmove_per_go(caplog):
    """python-chess ponders after each move and sends ponderhit or stop: any extra or
    missing bestmove would desynchronise it (and it logs unexpected lines)."""
    caplog.set_level(logging.WARNING, logger="chess.engine")
    rng = random.Random(11)
    board = chess.Board()
    with chess.engine.SimpleEngine.popen_uci(plyzero_uci(), env=engine_env()) as engine:
        for ply in range(24):
            if board.is_game_over():
                break
            if board.turn == chess.WHITE:
                limit = chess.engine.Limit(white_clock=2, black_clock=2, white_inc=0.05, black_inc=0.05)
                result = engine.play(board, limit, ponder=True)
                assert result.move in board.legal_moves
                board.push(result.move)
                if result.ponder is not None and ply % 4 == 0:
                    board.push(result.ponder)  # ponderhit next time
                    continue
            if not board.is_game_over():
                board.push(rng.choice(list(board.legal_moves)))
    assert not [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]


# ----------------------------------------------------------------------------- timing

def test_stop_after_go_infinite_is_answered_quickly(raw):
    engine = raw()
    engine.send("uci")
    engine.expect("uciok")
    engine.ready()
    latencies = []
    for moves in ("", " moves e2e4 e7e5 g1f3", " moves d2d4 d7d5 c2c4 e7e6 b1c3 g8f6"):
        engine.send(f"position startpos{moves}", "go infinite")
        time.sleep(0.3)
        sent = engine.send("stop")
        arrived, line = engine.expect("bestmove")
        board = chess.Board()
        for move in moves.split()[1:]:
            board.push_uci(move)
        _legal(board, line)
        latencies.append(arrived - sent)
    print("stop -> bestmove: " + ", ".join(f"{x * 1000:.1f} ms" for x in latencies))
    assert statistics.median(latencies) < 0.2
    assert max(latencies) < 1.0
    assert engine.quit() == 0


def test_isready_is_answered_during_a_search(raw):
    engine = raw()
    engine.send("position startpos", "go infinite")
    time.sleep(0.1)
    sent = engine.send("isready")
    arrived, _ = engine.expect("readyok")
    assert not any(line.startswith("bestmove") for line in engine.seen)
    assert arrived - sent < 1.0
    engine.send("stop")
    _legal(chess.Board(), engine.expect("bestmove")[1])
    assert engine.quit() == 0


def test_quit_during_search_and_eof_both_exit_cleanly(raw):
    engine = raw()
    engine.send("position startpos", "go infinite")
    engine.ready()
    started = time.monotonic()
    assert engine.quit() == 0
    assert time.monotonic() - started < 3.0
    engine = raw()
    engine.send("uci", "position startpos", "go infinite")
    engine.expect("uciok")
    engine.proc.stdin.close()  # type: ignore[union-attr]
    assert engine.proc.wait(5) == 0


# ----------------------------------------------------------------------------- bad input

def test_bad_input_gives_info_strings_and_the_engine_plays_on(raw):
    engine = raw()
    engine.send("uci")
    engine.expect("uciok")
    engine.send("position startpos moves e2e4")
    for bad in ("position fen rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP w KQkq - 0 1",  # malformed FEN
                "position startpos moves e2e4 e7e5 e1e8",                        # illegal move
                "setoption name NoSuchOption value 12"):                         # unknown option
        engine.send(bad)
        engine.expect("info string")
        engine.ready()
    engine.send(b"\xff\xfe garbage \x00 bytes", "xyzzy plugh", "go nowhere fast")
    engine.ready()
    engine.send("go movetime 50")
    _, line = engine.expect("bestmove")
    board = chess.Board()
    board.push_uci("e2e4")
    board.push_uci("e7e5")  # the position up to before the illegal e1e8
    _legal(board, line)
    assert engine.quit() == 0
    assert engine.proc.stderr.read() == b""  # type: ignore[union-attr]


def test_no_legal_moves_gives_bestmove_0000(raw):
    engine = raw()
    engine.send("uci", f"position fen {MATED_FEN}", "go movetime 50")
    assert engine.expect("bestmove")[1] == "bestmove 0000"
    engine.send(f"position fen {MATED_FEN}", "go infinite")
    engine.ready()
    time.sleep(0.2)
    engine.ready()  # held back: no second bestmove has arrived before these answers
    assert sum(line.startswith("bestmove") for line in engine.seen) == 1
    engine.send("stop")
    assert engine.expect("bestmove")[1] == "bestmove 0000"
    assert sum(line.startswith("bestmove") for line in engine.seen) == 2
    assert engine.quit() == 0


def test_mate_score_is_positive_for_the_side_that_mates():
    with chess.engine.SimpleEngine.popen_uci(plyzero_uci(), env=engine_env()) as engine:
        board = chess.Board("6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1")
        info = engine.analyse(board, chess.engine.Limit(depth=3))
        assert info["score"].relative == chess.engine.Mate(1)
        assert info["pv"][0] == chess.Move.from_uci("a1a8")


def test_promotion_is_sent_in_lower_case(raw):
    engine = raw()
    # Black's king has no move, so every legal move promotes (whichever player Player auto picks).
    engine.send("position fen k7/P7/1K6/8/8/8/4p3/8 b - - 0 1", "go depth 2")
    _, line = engine.expect("bestmove")
    assert re.fullmatch("e2e1[qrbn]", line.split()[1])  # fastchess forfeits an engine that sends e2e1Q
    assert engine.quit() == 0
