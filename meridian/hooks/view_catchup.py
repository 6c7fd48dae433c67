"""The PreToolUse view carried over state commits no Meridian writer followed.

A Meridian writer that moves the state tip re-keys the view itself (``claude_view.rekey``:
every new commit phase-neutral, read with pygit2). A writer that is not Meridian's (a
library caller appending an event, git plumbing) leaves a view keyed by the old tip, and
the next tool call took the full path (~200 ms: pygit2, the gate snapshot, the config
models). This reads the commits since the view's tip with git itself (``git log --raw``
and ``git cat-file --batch``, as ``commands/status_catchup.py`` does for the status view:
no pygit2) and lets the hook decide from the view when, and only when, they leave every
answer the view gives as it was. The rule is ``rekey``'s, made stricter for commits
nobody vouches for:

- the commits are a first-parent chain of single-parent commits from the view's tip, at
  most ``claude_view.REKEY_COMMITS`` (no merge, no rewrite: a tip that is not an
  ancestor; no grafts or shallow file; replace refs ignored, as libgit2 ignores them);
- each changes nothing but event shards (``events/YYYY-MM/N.jsonl`` or
  ``events/YYYY-MM/gN/N.jsonl``, mode 100644), and only by appending lines to a shard that
  ended with a newline (no edit in place, no deletion, no other stream: ``rekey`` does
  not read the others, this refuses them);
- every appended line has the shape every reader requires (``Ledger._quick_record``: a
  JSON object with the five record fields, ``data`` an object, ``kind`` a string: the
  full path reports a corrupt line, so a view must not outlive one) and is of a kind no
  gate fold reads for a phase (anything outside ``gate.``, and ``gate.blocked``, which
  only counts).

Then the view's phases, ``may_lock`` and harness are what the full path computes at the
new tip, and the hook writes the view re-keyed (as ``rekey`` would) so the next call
reads it directly. Anything else, a git that fails or an output this does not expect
included, is left to the full path, which rewrites the view.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

SHARD = re.compile(r"events/\d{4}-\d{2}/(?:g\d+/)?\d+\.jsonl")
HEX = re.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})?")
RECORD_FIELDS = frozenset({"id", "ts", "kind", "writer", "data"})  # ledger.RECORD_FIELDS
NEUTRAL_GATE_KINDS = ("gate.blocked",)  # claude_view.NEUTRAL_GATE_KINDS
# A line nesting ~1000 deep parses here, a few frames above the interpreter's recursion
# limit, and raises RecursionError in the full path's readers, deeper in the stack (which
# then deny the call: "the input nests too deeply"). Records nest a few levels; a line
# with more opening brackets than this (counted in strings too) is decided in full.
MAX_BRACKETS = 64


class _NotNeutral(Exception):
    """The commits do something only the full decision may answer."""


def _git(common: Path, args: list[str], data: bytes | None = None) -> bytes:
    # The repository given, nothing the environment says (the view's key holds the
    # locating variables); replace refs and optional locks off, no prompts, no pager, no
    # colour; run from the git directory with ``diff.relative`` off (a run from a
    # subdirectory with it on would list only the paths there: a hidden change).
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_NO_REPLACE_OBJECTS="1", GIT_OPTIONAL_LOCKS="0", GIT_TERMINAL_PROMPT="0")
    try:
        proc = subprocess.run(
            ["git", f"--git-dir={common}", "--no-replace-objects", "--no-pager",
             "-c", "core.quotePath=true", "-c", "log.showSignature=false",
             "-c", "diff.relative=false", "-c", "diff.ignoreSubmodules=none", *args],
            input=data, capture_output=True, env=env, cwd=common, check=False, timeout=20)
    except (OSError, subprocess.SubprocessError) as exc:
        raise _NotNeutral(f"git: {exc}") from None
    if proc.returncode != 0:
        raise _NotNeutral(proc.stderr.decode("utf-8", "replace")[:200])
    return proc.stdout


def _chain(common: Path, old: str, new: str, limit: int) -> list[list[tuple[str, str, str]]]:
    """For each commit from ``old`` (excluded) to ``new``: [(shard, old blob, new blob)]."""
    out = _git(common, ["log", "--no-color", "--no-decorate", "--no-renames", "--no-ext-diff",
                        "--no-textconv", "--no-abbrev", "--raw", "--format=%x01%H %P",
                        f"--max-count={limit + 1}", new, f"^{old}", "--"])
    parents: dict[str, list[str]] = {}
    changes: dict[str, list[tuple[str, str, str]]] = {}
    for chunk in out.decode("utf-8", "surrogateescape").split("\x01")[1:]:
        head, *rest = chunk.split("\n")
        commit, *its_parents = head.split(" ")
        if not HEX.fullmatch(commit) or commit in parents:
            raise _NotNeutral("an unexpected log line")
        parents[commit] = its_parents
        found = changes[commit] = []
        for line in rest:
            if not line:
                continue
            meta, tab, path = line.partition("\t")
            fields = meta.split(" ")
            if not tab or len(fields) != 5 or not fields[0].startswith(":"):
                raise _NotNeutral("an unexpected diff line")
            old_mode, new_mode, before, after, what = fields[0][1:], *fields[1:]
            if not (SHARD.fullmatch(path) and new_mode == "100644" and what in ("A", "M")
                    and old_mode in ("100644", "000000") and HEX.fullmatch(after)
                    and HEX.fullmatch(before)):
                raise _NotNeutral(f"{path}: not an append to an event shard")
            found.append((path, before, after))
    if len(parents) > limit:
        raise _NotNeutral("too many commits")
    ordered: list[str] = []
    at = new
    while at != old:
        above = parents.get(at)
        if above is None or len(above) != 1:
            raise _NotNeutral("not a chain of single-parent commits from the view's tip")
        ordered.append(at)
        at = above[0]
    if len(ordered) != len(parents):
        raise _NotNeutral("commits beside the chain")
    return [changes[commit] for commit in reversed(ordered)]


def _blobs(common: Path, oids: set[str]) -> dict[str, bytes]:
    wanted = sorted(oid for oid in oids if oid.strip("0"))
    if not wanted:
        return {}
    out = _git(common, ["cat-file", "--batch"], "".join(f"{oid}\n" for oid in wanted).encode())
    found: dict[str, bytes] = {}
    at = 0
    for oid in wanted:
        end = out.index(b"\n", at)
        header = out[at:end].split(b" ")
        if len(header) != 3 or header[0].decode() != oid or header[1] != b"blob":
            raise _NotNeutral(f"{oid}: not a blob")
        size = int(header[2])
        found[oid] = out[end + 1:end + 1 + size]
        if out[end + 1 + size:end + 2 + size] != b"\n":
            raise _NotNeutral(f"{oid}: a short read")
        at = end + 2 + size
    return found


def neutral_since(common: Path, old: str, new: str, limit: int) -> bool:
    """Whether the state commits from ``old`` (excluded) to ``new`` leave every gate's phase
    and every answer the view gives as they were (the module docstring's rule). Never
    raises: anything unexpected is False."""
    if not (HEX.fullmatch(old) and HEX.fullmatch(new)) or old == new:
        return False
    try:
        if any(os.path.lexists(common / name) for name in ("shallow", "info/grafts")):
            return False  # git and libgit2 may not see the same parents
        chain = _chain(common, old, new, limit)
        data = _blobs(common, {oid for found in chain for _, before, after in found
                               for oid in (before, after)})
        for found in chain:
            for _, before, after in found:
                old_data = data.get(before, b"")
                new_data = data[after]
                if not new_data.startswith(old_data) \
                        or (old_data and not old_data.endswith(b"\n")):
                    return False
                for line in new_data[len(old_data):].splitlines():
                    if not line.strip():
                        continue
                    if line.count(b"[") + line.count(b"{") > MAX_BRACKETS:
                        return False  # how deep it nests decides whether a reader fails
                    raw = json.loads(line)
                    if not isinstance(raw, dict) or not RECORD_FIELDS <= raw.keys() \
                            or not isinstance(raw["data"], dict) \
                            or not isinstance(raw["kind"], str):
                        return False
                    kind = raw["kind"]
                    if kind.startswith("gate.") and kind not in NEUTRAL_GATE_KINDS:
                        return False
    except (_NotNeutral, ValueError, KeyError, OSError, RecursionError):  # ValueError: a corrupt line
        return False
    return True
