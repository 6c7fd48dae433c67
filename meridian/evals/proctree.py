"""Killing a process and everything it started, including children in new sessions.

A timed-out agent must leave nothing behind: a grandchild that called ``setsid()``
(a daemon, ``nohup``, a browser) is in neither the agent's process group nor its
session, so ``killpg`` misses it, and it can hold the output pipe open forever.

Linux: the runner's worker processes make themselves *child subreapers*
(``PR_SET_CHILD_SUBREAPER``), so a descendant whose parent exits is re-parented to
the worker instead of to init and stays findable. ``kill_tree`` walks ``/proc`` for
every descendant of the root by parent pid, stops each with SIGSTOP (a stopped
process cannot fork any more), walks again until no new process appears, then
SIGKILLs them all, and the root's process group too.

Elsewhere (macOS, BSD) there is no ``/proc`` walk: ``kill_tree`` kills the root's
process group only, so a descendant that started its own session survives a timeout
there. That is the documented fallback.
"""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

_PR_SET_CHILD_SUBREAPER = 36  # linux/prctl.h
_subreaper = False


def become_subreaper() -> bool:
    """Make this process the reaper of its orphaned descendants (Linux); success."""
    global _subreaper
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        _subreaper = libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        _subreaper = False
    return _subreaper


def is_subreaper() -> bool:
    return _subreaper


def _parents() -> dict[int, int]:
    """pid -> parent pid of every process (Linux /proc), or {} when unreadable."""
    table: dict[int, int] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return table
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue  # exited meanwhile
        fields = stat.rsplit(")", 1)[-1].split()
        if len(fields) > 1 and fields[1].isdigit():
            table[int(entry)] = int(fields[1])
    return table


def descendants(root: int) -> list[int]:
    """Every live descendant of ``root`` (not ``root`` itself), parents first."""
    children: dict[int, list[int]] = {}
    for pid, parent in _parents().items():
        children.setdefault(parent, []).append(pid)
    found: list[int] = []
    frontier = [root]
    while frontier:
        pid = frontier.pop()
        for child in children.get(pid, []):
            if child not in found and child != root:
                found.append(child)
                frontier.append(child)
    return found


def _signal(pid: int, signum: int) -> None:
    try:
        os.kill(pid, signum)
    except (ProcessLookupError, PermissionError):
        pass


def _killpg(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError, OSError):
        pass


def kill_tree(root: int, *, include_root: bool = True, leader_exited: bool = False) -> list[int]:
    """SIGKILL ``root``, its process group and every descendant; the pids signalled.

    ``leader_exited``: ``root`` already exited (and was reaped); only its process
    group is left to clean up. ``include_root=False`` kills the descendants only
    (a worker clearing up after its own agent).
    """
    if leader_exited:
        _killpg(root)
        return []
    stopped: list[int] = []
    if sys.platform.startswith("linux"):
        if include_root:
            _signal(root, signal.SIGSTOP)
        for _ in range(50):  # each pass stops what the last one found; stopped cannot fork
            fresh = [pid for pid in descendants(root) if pid not in stopped]
            if not fresh:
                break
            for pid in fresh:
                _signal(pid, signal.SIGSTOP)
            stopped.extend(fresh)
    if include_root:
        _killpg(root)
    for pid in stopped:
        _signal(pid, signal.SIGKILL)
    if include_root:
        _signal(root, signal.SIGKILL)
        stopped.insert(0, root)
    return stopped
