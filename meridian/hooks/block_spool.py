"""Blocks the PreToolUse hook denied from its cached view, recorded after the answer.

Recording a ``gate.blocked`` event opens the repository and validates the record
(pygit2 and pydantic: some 150 ms of imports), where the deny itself is decided from
``claude_view`` in a few. So a deny decided from the view first puts the block in a
spool, ``.git/meridian/claude-blocks/<ts>-<pid>-<random>.json`` (written then renamed:
a reader never sees half of one), answers Claude Code, and then records it in a child
process it does not wait for (``record_soon``). Nothing is lost when that child, or the
hook, is killed: every Meridian command, git hook and full Claude hook decision drains
what is still spooled first (``drain_here``, ``drain``), one drainer at a time (an OS
lock), each block appended with the time it happened and skipped when that very record
is on the branch already (a drainer killed between its commit and removing the entry).

A block that cannot be recorded (no state branch, a branch held too long) is logged
to ``.git/meridian/error.log`` and dropped, as the full path's ``claude._block`` does:
the deny stands either way. The spool is under ``.git/meridian``, a harness location the
hook denies writes to.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import time
from pathlib import Path

TYPE_CHECKING = False  # no `typing` on the Claude hook's allow path (meridian.lean)
if TYPE_CHECKING:
    from typing import Any

    from meridian import gitio

SPOOL = "claude-blocks"
LOCK_WAIT_SECONDS = 20.0  # a drainer waits this long for another to finish, then leaves it
ENTRY_LIMIT = 1024 * 1024  # a spooled block is a few hundred bytes; anything larger is not one
VIEW_PREFIX = "claude-view-"  # claude_view.view_path
HEX = re.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})?")
SMALL = 64 * 1024  # a .git file, a ref, a commondir: never more
PACKED_REFS_LIMIT = 64 * 1024 * 1024


def spool_dir(common: Path) -> Path:
    return common / "meridian" / SPOOL


def now_ts() -> str:
    """``records.now_ts`` without importing the record models."""
    seconds, nanos = divmod(time.time_ns(), 1_000_000_000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{nanos // 1000:06d}Z"


def put(common: Path, entry: dict[str, Any]) -> Path:
    """Spool one block (``entry``: what ``project.record_block`` takes, with ``ts``)."""
    directory = spool_dir(common)
    directory.mkdir(parents=True, exist_ok=True)
    name = f"{entry['ts']}-{os.getpid()}-{os.urandom(4).hex()}.json"
    temporary = directory / f".{name}.tmp"
    temporary.write_text(json.dumps(entry, sort_keys=True), encoding="utf-8")
    target = directory / name
    os.replace(temporary, target)
    return target


def pending(common: Path) -> list[Path]:
    """Spooled blocks, oldest first."""
    try:
        names = os.listdir(spool_dir(common))
    except OSError:
        return []
    return [spool_dir(common) / n for n in sorted(names)
            if n.endswith(".json") and not n.startswith(".")]


def record_soon(root: Path) -> None:
    """Record the spooled blocks of the work tree at ``root`` in a child process this one
    does not wait for. Call it once the answer is written: the standard streams are
    pointed at the null device first, so neither this process's exit nor the child holds
    Claude Code's pipes open. Where there is no ``fork``, now."""
    import sys

    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    os.close(devnull)
    if not hasattr(os, "fork"):  # pragma: no cover - Windows
        drain_at(root)
        return
    parent = os.getpid()
    try:
        pid = os.fork()
    except OSError:
        return  # the next Meridian command drains the spool
    if pid:
        return
    try:  # the child: a session of its own, so the terminal's signals are not its
        os.setsid()
        # Behind the caller: the hook's own exit and Claude Code's next step go first on
        # a busy machine (the deny's wall time); the spool holds the block meanwhile.
        with contextlib.suppress(OSError):
            os.nice(10)
        _after_exit_of(parent)
        _drain_detached(root)
    except BaseException:  # noqa: BLE001, S110 - the spool keeps it for the next drainer
        pass
    finally:
        os._exit(0)


PARENT_EXIT_WAIT_SECONDS = 2.0  # the hook exits within milliseconds of answering


def _after_exit_of(parent: int) -> None:
    """Return once ``parent`` (the hook that forked this child) has exited, or after
    ``PARENT_EXIT_WAIT_SECONDS``: recording a block imports pygit2 and the record models
    (some 300 ms of CPU), which must not compete with the hook's own exit for a CPU
    (what Claude Code waits for). An exited parent leaves this child to another parent."""
    deadline = time.monotonic() + PARENT_EXIT_WAIT_SECONDS
    while os.getppid() == parent and time.monotonic() < deadline:
        time.sleep(0.005)


def _drain_detached(root: Path) -> None:
    """The deny's child: take the spool's lock before anything heavy is imported and hold
    it until the blocks are recorded and the view is brought up to date, so a drainer
    that finds the lock held waits for all of it; when another drainer recorded the
    blocks first, leave without importing anything."""
    common = _common_dir(Path(os.path.abspath(root)))
    if common is None or not pending(common):
        return
    lock = os.open(spool_dir(common) / ".lock", os.O_CREAT | os.O_RDWR, 0o644)
    elsewhere = None
    try:
        if not _lock(lock) or not pending(common):
            return  # recorded by the drainer that held the lock
        from meridian import gitio

        repo = gitio.open_repo(root)
        found = Path(gitio.common_dir(repo))
        if os.path.realpath(found) != os.path.realpath(common):
            elsewhere = repo  # not the lock git's layout names: drain under that one
        else:
            _drain_locked(repo, found)
    finally:
        os.close(lock)
    if elsewhere is not None:
        drain(elsewhere)


def drain_at(root: Path) -> int:
    """``drain`` for the repository whose work tree is ``root``."""
    from meridian import gitio

    return drain(gitio.open_repo(root))


def _common_dir(start: Path) -> Path | None:
    """The common git dir of the repository around ``start``, read as git does (a ``.git``
    directory or ``gitdir:`` file, then ``commondir``), or None."""
    for candidate in (start, *start.parents):
        dotgit = candidate / ".git"
        if dotgit.is_dir():
            gitdir = dotgit
        elif dotgit.is_file():
            text = dotgit.read_text(encoding="utf-8", errors="replace")[:4096]
            if not text.startswith("gitdir:"):
                return None
            gitdir = candidate / text[len("gitdir:"):].strip()
        else:
            continue
        pointer = gitdir / "commondir"
        if pointer.is_file():
            return gitdir / pointer.read_text(encoding="utf-8", errors="replace")[:4096].strip()
        return gitdir
    return None


def _read_small(path: Path, limit: int = SMALL) -> str | None:
    """The text of a regular file of at most ``limit`` bytes; None when it is absent."""
    from meridian.userfiles import read_bounded

    try:
        return read_bounded(path, limit=limit).decode("utf-8", "surrogateescape")
    except FileNotFoundError:
        return None


def read_ref(common: Path, refname: str) -> str | None:
    """The commit ``refname`` names, read from the loose ref or ``packed-refs``; None when
    it is absent or cannot be read this way (a symbolic ref, the reftable format)."""
    if os.path.lexists(common / "reftable"):
        return None
    try:
        loose = _read_small(common / refname)
    except Exception:  # noqa: BLE001 - a FIFO, a directory: not readable this way
        return None
    if loose is not None:
        # as git and libgit2 read it: the id first, then only their blanks (a leading
        # blank or a trailing \x1c is a corrupt ref to them, which the full path denies)
        value = loose.rstrip(" \t\n\v\f\r")
        return value if HEX.fullmatch(value) else None
    packed = _read_small(common / "packed-refs", PACKED_REFS_LIMIT)
    for line in (packed or "").split("\n"):  # git's lines: "\r\n" keeps a "\r" in the name
        oid, _, name = line.partition(" ")
        if name == refname and HEX.fullmatch(oid):
            return oid
    return None


def has_view(start: str | os.PathLike[str] = ".") -> bool:
    """Whether the repository around ``start`` keeps a Claude PreToolUse view (a few
    file-system calls; the standard library only)."""
    try:
        common = _common_dir(Path(os.path.abspath(start)))
        return common is not None and any(
            n.startswith(VIEW_PREFIX) for n in os.listdir(common / "meridian"))
    except OSError:
        return False


def view_tips(start: str | os.PathLike[str] = ".") -> dict[str, str | None] | None:
    """For each Claude PreToolUse view of the repository around ``start``: the tip its
    state branch has now (plain file reads, nothing opened); None when there is no view.
    Compared before and after a command, it says whether the command moved a tip a view
    is keyed by (``claude_view.update_views``)."""
    try:
        common = _common_dir(Path(os.path.abspath(start)))
        if common is None:
            return None
        names = sorted(n for n in os.listdir(common / "meridian")
                       if n.startswith(VIEW_PREFIX) and n.endswith(".json"))
    except OSError:
        return None
    from meridian.userfiles import read_bounded

    out: dict[str, str | None] = {}
    for name in names:
        try:
            view = json.loads(read_bounded(common / "meridian" / name, limit=PACKED_REFS_LIMIT))
            branch = view["body"]["facts"]["branch"]
            if not isinstance(branch, str) or ".." in branch or branch.startswith("/"):
                raise ValueError(branch)  # a view's branch never leaves refs/heads
            out[name] = read_ref(common, f"refs/heads/{branch}")
        except Exception:  # noqa: BLE001 - a damaged view: the full path rewrites it
            out[name] = None
    return out or None


def drain_here(start: str | os.PathLike[str] = ".") -> None:
    """Record what is spooled in the repository around ``start``, if anything (a few
    file-system calls when nothing is); never raises: a problem leaves the spool for the
    next drainer."""
    try:
        common = _common_dir(Path(os.path.abspath(start)))
        if common is None or not pending(common):
            return
        from meridian import gitio

        drain(gitio.open_repo(start))
    except Exception:  # noqa: BLE001, S110 - the spool is kept for the next drainer
        pass


def settle(start: str | os.PathLike[str] = ".") -> None:
    """Wait until no drainer of the repository around ``start`` is at work (its lock
    free: a deny's child holds it until its blocks are recorded and the view is brought
    up to date, ``LOCK_WAIT_SECONDS`` at most), then record what is still spooled. For
    a caller that must not run beside a drainer (a benchmark, a test)."""
    try:
        common = _common_dir(Path(os.path.abspath(start)))
        if common is None or not spool_dir(common).is_dir():
            return
        lock = os.open(spool_dir(common) / ".lock", os.O_CREAT | os.O_RDWR, 0o644)
        try:
            _lock(lock)
        finally:
            os.close(lock)
    except OSError:
        pass
    drain_here(start)


def drain(repo: gitio.Repository) -> int:
    """Append every spooled block of ``repo`` to its state branch (oldest first), then
    bring the Claude view up to date with the tip those appends moved
    (``claude_view.update``); returns how many were recorded. Waits for a drainer already at work (up to ``LOCK_WAIT_SECONDS``)."""
    from meridian import gitio

    common = Path(gitio.common_dir(repo))
    if not pending(common):
        return 0
    lock = os.open(spool_dir(common) / ".lock", os.O_CREAT | os.O_RDWR, 0o644)
    where = os.path.realpath(common)
    try:
        if not _lock(lock, wait=where not in _GAVE_UP):
            # another drainer holds it (it drains these too), or one that never finishes
            # (stopped, a debugger): this process waited for it once and does not again,
            # so a git hook that drains twice (cli.main, the hook) costs one wait, not two
            _GAVE_UP.add(where)
            return 0
        return _drain_locked(repo, common)
    finally:
        os.close(lock)


_GAVE_UP: set[str] = set()  # spools whose lock this process waited for in vain


def _lock(fd: int, *, wait: bool = True) -> bool:
    """Take the spool's lock; waits up to ``LOCK_WAIT_SECONDS`` for its holder
    (``wait=False``: one try). False when it is still held."""
    if os.name == "nt":  # pragma: no cover - Windows
        import msvcrt

        try:
            msvcrt.locking(fd, msvcrt.LK_LOCK if wait else msvcrt.LK_NBLCK,  # type: ignore[attr-defined]
                           1)
        except OSError:
            return False
        return True
    import fcntl

    deadline = time.monotonic() + LOCK_WAIT_SECONDS
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if not wait or time.monotonic() > deadline:
                return False
            time.sleep(0.01)


def _log(common: Path, message: str) -> None:
    try:
        with (common / "meridian" / "error.log").open("a", encoding="utf-8") as handle:
            handle.write(f"meridian hook claude PreToolUse: {message}\n")
    except OSError:
        pass


def _check_target(repo: gitio.Repository, common: Path, root: Path, branch: str) -> None:
    """An entry is recorded only on the state branch its work tree's configuration names,
    and only for a work tree of this repository: a spool file is never a way to write to
    another branch. MeridianError otherwise."""
    from meridian.errors import MeridianError
    from meridian.hooks.claude import _real
    from meridian.hooks.claude_view import git_dirs
    from meridian.hooks.project import load_facts

    dirs = git_dirs(root) if root.is_absolute() else None
    if dirs is None or dirs[1] != _real(common) or not _registered(common, dirs[0], root):
        raise MeridianError(f"{root} is not a work tree of this repository")
    named = load_facts(repo, root).branch
    if named != branch:
        raise MeridianError(f"it names branch {branch!r}; the configuration's is {named!r}")


def _registered(common: Path, gitdir: Path, root: Path) -> bool:
    """Whether ``root`` (whose git dir is ``gitdir``) is a work tree git itself knows for
    the repository at ``common``: its main work tree, or a linked worktree whose entry
    under ``worktrees/`` points back at ``root/.git``. Any directory can hold a ``.git``
    file naming this git dir (and a config naming any branch): that makes it none."""
    from meridian import gitio
    from meridian.hooks.claude import _real

    real_common = _real(common)
    if gitdir == real_common:
        repo = gitio.open_repo(real_common)
        main = gitio.workdir(repo)
        if main is not None and _real(main) == _real(root):
            return True
        # `git init --separate-git-dir`: a git dir not named .git and no core.worktree
        # record the main work tree nowhere but in its own .git file; that is all to go by
        return real_common.name != ".git" and (root / ".git").is_file() \
            and gitio.config_value(repo, "core.worktree") is None
    if gitdir.parent != real_common / "worktrees":
        return False
    try:
        back = (gitdir / "gitdir").read_text(encoding="utf-8", errors="replace")[:4096].strip()
    except OSError:
        return False
    return bool(back) and _real(Path(back)) == _real(root / ".git")


def _drain_locked(repo: gitio.Repository, common: Path) -> int:
    from meridian.errors import MeridianError
    from meridian.hooks.project import block_commit
    from meridian.userfiles import read_bounded

    recorded = 0
    roots: set[str] = set()  # work trees whose view the appends moved past
    for path in pending(common):
        try:
            # a regular file of bounded size only: a FIFO (or a symlink to one) put there
            # would hang this drainer, and every command drains first
            entry = json.loads(read_bounded(path, limit=ENTRY_LIMIT).decode("utf-8"))
            branch = str(entry["branch"])
            _check_target(repo, common, Path(str(entry["root"])), branch)
            commit = block_commit(
                repo, branch, source=str(entry["source"]), reason=str(entry["reason"]),
                gate=entry.get("gate"), files=entry.get("files"), extra=entry.get("extra"),
                ts=str(entry["ts"]), dedupe=True)
        except FileNotFoundError:
            continue  # another drainer (without the lock: none) took it
        except (MeridianError, ValueError, KeyError, TypeError) as exc:
            _log(common, f"spooled block {path.name} not recorded: {exc}")
            with contextlib.suppress(OSError):  # a directory stays, and is skipped again
                path.unlink(missing_ok=True)
            continue
        path.unlink(missing_ok=True)
        if commit is False:
            _log(common, f"spooled block {path.name} not recorded: no state branch {branch}")
            continue
        recorded += 1
        if commit is not None:
            roots.add(str(entry.get("root")))
    from meridian.hooks import claude_view

    for root in roots:  # a block changes no gate's phase: the view is re-keyed for the new tip
        if not claude_view.update(repo, Path(root)):
            _log(common, f"view of {root} not brought up to date after the spooled blocks")
    return recorded
