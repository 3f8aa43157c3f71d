"""Shared test helpers."""
from __future__ import annotations

import os
import shutil
import sys

import pytest


def engine_env() -> dict[str, str]:
    """Environment for engine subprocesses: without PYTHONUNBUFFERED, so a missing flush shows."""
    env = dict(os.environ)
    env.pop("PYTHONUNBUFFERED", None)
    return env


def default_sigint() -> None:
    """preexec_fn for a child that must see Ctrl-C: an ignored SIGINT is inherited, and some
    library used earlier in the suite leaves the test process ignoring it (the child's Python
    then installs no KeyboardInterrupt handler)."""
    import signal
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def random_states(game, count: int, seed: int, max_plies: int = 20) -> list:
    """`count` positions of `game`, each 0..max_plies-1 uniformly random moves from the start
    (a game that ends stops there), reproducible from `seed`."""
    import numpy as np
    rng = np.random.default_rng(seed)
    states = []
    for _ in range(count):
        state = game.initial_state()
        for _ in range(int(rng.integers(0, max_plies))):
            moves = list(state.legal_moves())
            state = state.play(moves[int(rng.integers(len(moves)))])
            if state.outcome() is not None:
                break
        states.append(state)
    return states


def console_script(name: str) -> str:
    """Path of an installed console script next to this interpreter (falls back to PATH)."""
    candidate = os.path.join(os.path.dirname(sys.executable), name)
    if os.path.exists(candidate):
        return candidate
    found = shutil.which(name)
    if found is None:
        pytest.fail(f"console script {name!r} is not installed (pip install -e .)")
    return found


@pytest.fixture
def board_server():
    """Start web board servers (engine/web) on free ports: board_server(GameSettings(...), external=...)."""
    from board_client import RunningBoard

    boards: list[RunningBoard] = []

    def start(settings, **kwargs):
        board = RunningBoard(settings, **kwargs)
        boards.append(board)
        return board

    yield start
    for board in boards:
        board.close()


@pytest.fixture
def chromium(tmp_path):
    """argv builder for one-shot headless Chromium runs; skips where there is no browser."""
    from browser import chromium_command, missing_browser

    reason = missing_browser(driven=False)
    if reason is not None:
        pytest.skip(reason)
    return lambda *args: chromium_command(tmp_path / "chromium-profile", *args)


@pytest.fixture
def browser(tmp_path):
    """A selenium WebDriver on headless Chromium (fresh profile, downloads in
    browser.downloads_dir(tmp_path)); skips where there is no browser."""
    from browser import downloads_dir, missing_browser, start_driver

    reason = missing_browser()
    if reason is not None:
        pytest.skip(reason)
    driver = start_driver(tmp_path / "chromium-profile", downloads_dir(tmp_path))
    yield driver
    driver.quit()
