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


def console_script(name: str) -> str:
    """Path of an installed console script next to this interpreter (falls back to PATH)."""
    candidate = os.path.join(os.path.dirname(sys.executable), name)
    if os.path.exists(candidate):
        return candidate
    found = shutil.which(name)
    if found is None:
        pytest.fail(f"console script {name!r} is not installed (pip install -e .)")
    return found
