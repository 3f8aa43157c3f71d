"""File helpers shared by checkpoints and ONNX exports (stdlib only, no torch)."""
from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path
from typing import Any

__all__ = ["atomic_write", "file_sha256"]


def file_sha256(path: str | Path) -> str:
    """sha256 of a file's bytes: names a checkpoint's ONNX export without loading it."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def atomic_write(path: str | Path, write: Any) -> None:
    """Call write(file) on a temp file beside `path`, then rename: readers never see half a file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            write(handle)
        os.chmod(tmp, 0o644)  # mkstemp makes 0600; a network file is not a secret
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
