"""A brain's process tree as the Gomocup judge sees it: its members, their memory, and
suspending or resuming all of them.

The judge freezes a brain (SIGSTOP) while its opponent thinks, so a brain can neither
ponder nor count that time, and it sums the *virtual* size of the brain's processes
against `max_memory` (piskvork reads the working set, the resident size).  Linux only
(/proc); elsewhere memory is unknown (None) and suspending does nothing.
"""
from __future__ import annotations

import os
import signal
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Memory", "tree_pids", "tree_memory", "suspend_tree", "resume_tree"]

PROC = Path("/proc")


@dataclass(frozen=True)
class Memory:
    """Bytes summed over a process tree."""
    virtual: int      # VmSize: what the Gomocup judge counts
    resident: int     # VmRSS: what piskvork counts

    @property
    def virtual_mb(self) -> float:
        return self.virtual / 2**20

    @property
    def resident_mb(self) -> float:
        return self.resident / 2**20


def tree_pids(pid: int) -> list[int]:
    """`pid` and all its descendants (breadth first); [] when it is gone or /proc is absent."""
    if not (PROC / str(pid)).is_dir():
        return []
    found, frontier = [pid], [pid]
    while frontier:
        parent = frontier.pop()
        try:
            tasks = list((PROC / str(parent) / "task").iterdir())
        except OSError:
            continue
        for task in tasks:
            try:
                children = [int(c) for c in (task / "children").read_text().split()]
            except (OSError, ValueError):
                continue
            for child in children:
                if child not in found:
                    found.append(child)
                    frontier.append(child)
    return found


def _status_kb(pid: int, field: str) -> int:
    try:
        for line in (PROC / str(pid) / "status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return 0


def tree_memory(pid: int) -> Memory | None:
    """VmSize and VmRSS summed over the tree of `pid`; None when it cannot be read."""
    pids = tree_pids(pid)
    if not pids:
        return None
    return Memory(virtual=1024 * sum(_status_kb(p, "VmSize") for p in pids),
                  resident=1024 * sum(_status_kb(p, "VmRSS") for p in pids))


def _signal_tree(pid: int, sig: int) -> None:
    for member in tree_pids(pid) or [pid]:
        try:
            os.kill(member, sig)
        except (ProcessLookupError, PermissionError):
            pass


def suspend_tree(pid: int) -> None:
    """Freeze the brain and its children (the judge between the brain's turns)."""
    if hasattr(signal, "SIGSTOP"):
        _signal_tree(pid, signal.SIGSTOP)


def resume_tree(pid: int) -> None:
    """Let a frozen tree run again (before the judge's next message to the brain)."""
    if hasattr(signal, "SIGCONT"):
        _signal_tree(pid, signal.SIGCONT)
