"""The files the fast paths answer from (``.git/meridian/<name>-<work tree>.json``).

The Claude hook's view (``hooks/claude_view.py``) and the status view
(``commands/status_view.py``) are stored the same way: ``{"body": ..., "checksum":
sha256 of the body's canonical JSON}``, one file per work tree (linked worktrees share
the common dir, not their views), written then renamed so a reader never sees half a
file. Only the standard library: both are on paths that import little.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

TYPE_CHECKING = False  # no `typing` on the Claude hook's allow path (meridian.lean)
if TYPE_CHECKING:
    from hashlib import sha256
    from typing import Any
else:
    # The interpreter's own sha256: ``hashlib`` loads OpenSSL first, some 3 ms of every
    # Claude hook call (which hashes the view and a few small files).
    try:
        from _sha256 import sha256  # CPython 3.11
    except ImportError:
        try:
            from _sha2 import sha256  # CPython 3.12 and later
        except ImportError:
            from hashlib import sha256


def checksum(body: dict[str, Any]) -> str:
    """sha256 of ``body`` as canonical JSON (sorted keys, no spaces)."""
    return sha256(json.dumps(body, sort_keys=True, separators=(",", ":"))
                          .encode()).hexdigest()


def view_path(common: Path, root: Path, name: str) -> Path:
    """``<common>/meridian/<name>-<16 hex of the work tree path's sha256>.json``."""
    tag = sha256(str(root).encode("utf-8", "surrogateescape")).hexdigest()[:16]
    return common / "meridian" / f"{name}-{tag}.json"


def replace_with(target: Path, content: bytes) -> None:
    """Write ``content`` to a new temporary file beside ``target``, then rename it over
    ``target``; raises ``OSError`` when it cannot, leaving no temporary file behind.

    The temporary file is created, never opened as found (``O_EXCL``, no symlink
    followed): a FIFO planted at its predictable name would block the writer forever
    (a hook past its timeout lets the tool call through), a symlink would redirect the
    write. Whatever is there (a crashed run's file, a planted one) is removed first."""
    temporary = target.with_name(f"{target.name}.{os.getpid()}.tmp")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    try:
        try:
            descriptor = os.open(temporary, flags, 0o644)
        except FileExistsError:
            temporary.unlink()
            descriptor = os.open(temporary, flags, 0o644)
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(content)
        os.replace(temporary, target)
    except OSError:
        try:
            if not temporary.is_dir():
                temporary.unlink(missing_ok=True)
        except OSError:
            pass
        raise


def write(target: Path, body: dict[str, Any], *, sort_keys: bool = False) -> None:
    """Store ``body`` with its checksum at ``target`` (write then rename); raises
    ``OSError`` when it cannot, leaving no temporary file behind."""
    target.parent.mkdir(parents=True, exist_ok=True)
    replace_with(target, json.dumps({"body": body, "checksum": checksum(body)},
                                    sort_keys=sort_keys).encode("utf-8"))
