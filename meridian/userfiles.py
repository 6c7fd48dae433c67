"""Reading the files a user (or an agent) writes, without hanging on them.

The config, gate graph, rules, features and suites live in the work tree, and every hook
reads them. A FIFO or a ``/dev/zero`` symlink in their place would block a read forever
or fill memory, so a read takes only a regular file and at most ``MAX_BYTES``. No
third-party import: the git hooks' hot path uses this too.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from meridian.errors import ConfigError

MAX_BYTES = 4 * 1024 * 1024  # the largest suite we ship is a few kB


def _shown(path: Path | str) -> str:
    try:
        return str(Path(path).absolute().relative_to(Path.cwd()))
    except (ValueError, OSError):
        return str(path)


class NotARegularFile(ConfigError):
    """A FIFO, device, socket or directory where a file the user writes was expected."""


def read_bounded(path: Path | str, shown: str | None = None,
                 limit: int = MAX_BYTES) -> bytes:
    """The bytes of the regular file at ``path`` (symlinks followed), never more than
    ``limit``: a FIFO or device is refused without blocking on it (the file is opened
    non-blocking and checked with fstat, so it cannot be swapped in between)."""
    shown = shown or str(path)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    try:
        descriptor = os.open(path, flags)
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise ConfigError(f"{shown}: cannot read: {exc.strerror or exc}") from None
    try:
        mode = os.fstat(descriptor).st_mode
        if not stat.S_ISREG(mode):
            kind = ("a directory" if stat.S_ISDIR(mode) else "a FIFO" if stat.S_ISFIFO(mode)
                    else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else
                    "a socket" if stat.S_ISSOCK(mode) else "not a regular file")
            raise NotARegularFile(f"{shown}: is {kind}, not a regular file; replace it with "
                                  "the file itself")
        chunks = []
        size = 0
        while True:
            chunk = os.read(descriptor, 1024 * 1024)
            if not chunk:
                break
            size += len(chunk)
            if size > limit:
                raise ConfigError(f"{shown}: larger than {limit // (1024 * 1024)} MiB; not a "
                                  "Meridian file")
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(descriptor)


def present(path: Path | str) -> bool:
    """Whether the file a user writes is there: False when nothing is at ``path``; a
    ConfigError when something that is not a regular file is (a FIFO, a device, a
    directory, a dangling or looping symlink): treating that as "no file" would let a
    hook skip the checks the file configures."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        if not os.path.lexists(path):
            return False
        raise NotARegularFile(f"{_shown(path)}: is a symlink to nothing; replace it "
                              "with the file itself") from None
    except OSError as exc:  # a symlink loop, a path through a file
        raise NotARegularFile(f"{_shown(path)}: cannot be read: "
                              f"{exc.strerror or exc}") from None
    if not stat.S_ISREG(mode):
        read_bounded(path, _shown(path))  # raises, naming what it is
    return True


