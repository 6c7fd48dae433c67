"""The state commits since a view's tip, read with git itself: the one reader both fast
paths use to carry a view over commits they did not write.

Two views are keyed by the state branch tip, and a new commit would make their next
reader derive everything again (pygit2, the gate snapshot, the config models):

- the PreToolUse view (``hooks/claude_view.py``): a Meridian writer re-keys it itself
  (``claude_view.rekey``), a writer that is not Meridian's (a library caller appending an
  event, git plumbing) leaves it keyed by the old tip; ``neutral_since`` says when the
  hook may still decide from it;
- the status view (``commands/status_view.py``): ``caught_up`` applies the commits to its
  document when, and only when, the full derivation would give exactly that document.

Both read the commits since the view's tip with ``git log --raw`` and ``git cat-file
--batch`` (no pygit2, no ``typing``: the hook's import graph stays lean,
``tests/hooks/test_lean.py``) and hold them to one rule (``appended_records``):

- the commits are a first-parent chain of single-parent commits from the view's tip, at
  most the caller's limit (no merge, no rewrite: a tip that is not an ancestor; no grafts
  or shallow file; replace refs ignored, as libgit2 ignores them);
- under ``events/`` each only appends lines to shards (``events/YYYY-MM/N.jsonl`` or
  ``events/YYYY-MM/gN/N.jsonl``, mode 100644) that ended with a newline: no edit in
  place, no deletion, nothing else under ``events/``. Another stream (memory, runs,
  verdicts) is refused for the hook (``rekey`` does not read them) and skipped for
  status (it does not show them: a pass it shows is checked on the commit that added it,
  ``status_passes``);
- every blob is read whole (a short read from ``cat-file`` is refused), and every
  appended line has the shape every reader requires (``Ledger._quick_record``: a JSON
  object with the five record fields, ``data`` an object, ``kind`` a string; a corrupt
  line is the full path's to report) and nests no deeper than ``MAX_BRACKETS`` (a line
  nesting ~1000 deep parses here, a few frames above the interpreter's recursion limit,
  and raises ``RecursionError`` in the full path's readers, deeper in the stack).

Then the hook's rule (``neutral_since``): no appended line is a gate event other than
``gate.blocked`` (which only counts), so every phase, ``may_lock`` and the harness are
what the full path computes at the new tip. Status's (``caught_up``): no gate event other
than ``gate.blocked`` and no harness change; a block adds to its gate's count and
``updated_at``; the remote-tracking counts are counted again (``git rev-list
--left-right --count``). Anything not shown to hold, a git that fails or an output this
does not expect included, is left to the full path, which rewrites the view.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

TYPE_CHECKING = False  # no `typing` on the Claude hook's path (meridian.lean)
if TYPE_CHECKING:
    from typing import Any

MAX_COMMITS = 256  # status: beyond this many new state commits the full path is as cheap
SHARD = re.compile(r"events/\d{4}-\d{2}/(?:g\d+/)?\d+\.jsonl")
HEX = re.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})?")
RECORD_FIELDS = frozenset({"id", "ts", "kind", "writer", "data"})  # ledger.RECORD_FIELDS
NEUTRAL_GATE_KINDS = ("gate.blocked",)  # claude_view.NEUTRAL_GATE_KINDS
BLOCKED = "gate.blocked"  # gates.events.BLOCKED
HARNESS_KIND = "harness.changed"  # meridian.harness.KIND
# Records nest a few levels; a line with more opening brackets than this (counted in
# strings too) is derived in full (see the module docstring).
MAX_BRACKETS = 64
GIT_TIMEOUT = 60  # seconds; the hook passes its own, shorter, deadline


class _NotCaughtUp(Exception):
    """The commits since the view do something only the full derivation may answer."""


def _git(common: Path, args: list[str], data: bytes | None = None, *,
         timeout: float = GIT_TIMEOUT) -> bytes:
    # The repository given, nothing the environment says (a view is never used with a
    # locating variable set; the others are in the view's key); replace refs and
    # optional locks off, no prompts, no pager, no colour. Run from the git directory,
    # with ``diff.relative`` off: a work tree in the config and a run from a subdirectory
    # with ``diff.relative=true`` would list only the paths under that subdirectory (no
    # ``events/`` change at all), and a hidden change is never derived.
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_NO_REPLACE_OBJECTS="1", GIT_OPTIONAL_LOCKS="0", GIT_TERMINAL_PROMPT="0")
    try:
        proc = subprocess.run(
            ["git", f"--git-dir={common}", "--no-replace-objects", "--no-pager",
             "-c", "core.quotePath=true", "-c", "log.showSignature=false",
             "-c", "diff.relative=false", "-c", "diff.ignoreSubmodules=none", *args],
            input=data, capture_output=True, env=env, cwd=common, check=False,
            timeout=timeout)
    except (OSError, subprocess.SubprocessError) as exc:
        raise _NotCaughtUp(f"git: {exc}") from None
    if proc.returncode != 0:
        raise _NotCaughtUp(proc.stderr.decode("utf-8", "replace")[:200])
    return proc.stdout


def _chain(common: Path, old: str, new: str, limit: int, *, other_streams: bool,
           timeout: float) -> list[list[tuple[str, str, str]]]:
    """For each commit from ``old`` (excluded) to ``new``, oldest first: [(shard path, old
    blob, new blob)] sorted by path (ledger order). A change outside ``events/`` is
    skipped when ``other_streams``, refused otherwise."""
    out = _git(common, ["log", "--no-color", "--no-decorate", "--no-renames", "--no-ext-diff",
                        "--no-textconv", "--no-abbrev", "--raw", "--format=%x01%H %P",
                        f"--max-count={limit + 1}", new, f"^{old}", "--"], timeout=timeout)
    parents: dict[str, list[str]] = {}
    changes: dict[str, list[tuple[str, str, str]]] = {}
    for chunk in out.decode("utf-8", "surrogateescape").split("\x01")[1:]:
        head, *rest = chunk.split("\n")
        commit, *its_parents = head.split(" ")
        if not HEX.fullmatch(commit) or commit in parents:
            raise _NotCaughtUp("an unexpected log line")
        parents[commit] = its_parents
        found = changes[commit] = []
        for line in rest:
            if not line:
                continue
            meta, tab, path = line.partition("\t")
            fields = meta.split(" ")
            if not tab or len(fields) != 5 or not fields[0].startswith(":"):
                raise _NotCaughtUp("an unexpected diff line")
            if other_streams and not path.startswith("events/") and not path.startswith('"'):
                continue  # another stream: not what the view shows
            old_mode, new_mode, before, after, what = fields[0][1:], *fields[1:]
            if not (SHARD.fullmatch(path) and new_mode == "100644" and what in ("A", "M")
                    and old_mode in ("100644", "000000") and HEX.fullmatch(after)
                    and HEX.fullmatch(before)):
                raise _NotCaughtUp(f"{path}: not an append to an event shard")
            found.append((path, before, after))
    if len(parents) > limit:
        raise _NotCaughtUp("too many commits")
    ordered: list[str] = []
    at = new
    while at != old:
        above = parents.get(at)
        if above is None or len(above) != 1:
            raise _NotCaughtUp("not a chain of single-parent commits from the view's tip")
        ordered.append(at)
        at = above[0]
    if len(ordered) != len(parents):
        raise _NotCaughtUp("commits beside the chain")
    return [sorted(changes[commit]) for commit in reversed(ordered)]


def _blobs(common: Path, oids: set[str], timeout: float = GIT_TIMEOUT) -> dict[str, bytes]:
    wanted = sorted(oid for oid in oids if oid.strip("0"))
    if not wanted:
        return {}
    out = _git(common, ["cat-file", "--batch"], "".join(f"{oid}\n" for oid in wanted).encode(),
               timeout=timeout)
    found: dict[str, bytes] = {}
    at = 0
    for oid in wanted:
        end = out.index(b"\n", at)  # ValueError when the output ends early
        header = out[at:end].split(b" ")
        if len(header) != 3 or header[0].decode() != oid or header[1] != b"blob":
            raise _NotCaughtUp(f"{oid}: not a blob")
        size = int(header[2])
        found[oid] = out[end + 1:end + 1 + size]
        if out[end + 1 + size:end + 2 + size] != b"\n":
            raise _NotCaughtUp(f"{oid}: a short read")
        at = end + 2 + size
    return found


def appended_records(common: Path, old: str, new: str, limit: int = MAX_COMMITS, *,
                     other_streams: bool = True,
                     timeout: float = GIT_TIMEOUT) -> list[dict[str, Any]]:
    """The records the commits from ``old`` to ``new`` appended to the events, in ledger
    order; raises ``_NotCaughtUp`` for anything but appends of well-formed lines (the
    module docstring's rule; ``other_streams``: whether a change outside ``events/`` is
    skipped rather than refused)."""
    if any(os.path.lexists(common / name) for name in ("shallow", "info/grafts")):
        raise _NotCaughtUp("git and libgit2 may not see the same parents")
    chain = _chain(common, old, new, limit, other_streams=other_streams, timeout=timeout)
    data = _blobs(common, {oid for found in chain for _, before, after in found
                           for oid in (before, after)}, timeout)
    records: list[dict[str, Any]] = []
    for found in chain:
        for path, before, after in found:
            old_data = data.get(before, b"")
            new_data = data[after]
            if not new_data.startswith(old_data) or (old_data and not old_data.endswith(b"\n")):
                raise _NotCaughtUp(f"{path}: not an append")
            for line in new_data[len(old_data):].splitlines():
                if not line.strip():
                    continue
                if line.count(b"[") + line.count(b"{") > MAX_BRACKETS:
                    raise _NotCaughtUp(f"{path}: a line nesting deeper than records do")
                try:
                    raw = json.loads(line)
                except (ValueError, RecursionError):  # UnicodeDecodeError too
                    raise _NotCaughtUp(f"{path}: a corrupt line") from None
                if raw.__class__ is not dict or not RECORD_FIELDS <= raw.keys() \
                        or raw["data"].__class__ is not dict or raw["kind"].__class__ is not str:
                    raise _NotCaughtUp(f"{path}: a corrupt line")
                records.append(raw)
    return records


# --- the PreToolUse view ------------------------------------------------------------------


def neutral_since(common: Path, old: str, new: str, limit: int, timeout: float = 20) -> bool:
    """Whether the state commits from ``old`` (excluded) to ``new`` leave every gate's phase
    and every answer the PreToolUse view gives as they were (appends only to event shards,
    no gate event but ``gate.blocked``). Never raises: anything unexpected is False."""
    if not (HEX.fullmatch(old) and HEX.fullmatch(new)) or old == new:
        return False
    try:
        records = appended_records(common, old, new, limit, other_streams=False,
                                   timeout=timeout)
    except (_NotCaughtUp, ValueError, KeyError, OSError, RecursionError):
        return False
    return not any(raw["kind"].startswith("gate.") and raw["kind"] not in NEUTRAL_GATE_KINDS
                   for raw in records)


# --- the status view ----------------------------------------------------------------------


def _counts(common: Path, remote_tip: str, tip: str) -> tuple[int, int]:
    """(behind, ahead): commits of the remote branch the local lacks, and the reverse."""
    out = _git(common, ["rev-list", "--left-right", "--count", f"{remote_tip}...{tip}", "--"])
    behind, ahead = out.split()
    return int(behind), int(ahead)


def remote_note(remote: str, branch: str, behind: int, ahead: int) -> dict[str, Any]:
    """The status document's ``remote`` entry (``status.remote_state``), hint included."""
    hint = None
    if behind:
        hint = (f"{remote}/{branch} has {behind} state commit(s) this clone lacks (as of "
                f"the last fetch), so gates may be further along than shown: run `meridian sync`")
    elif ahead:
        hint = (f"this clone has {ahead} state commit(s) {remote} lacks: `meridian sync` "
                "shares them")
    return {"remote": remote, "ref": f"{remote}/{branch}", "behind": behind, "ahead": ahead,
            "hint": hint}


def caught_up(common: Path, body: dict[str, Any], key: dict[str, Any]) -> dict[str, Any] | None:
    """The status view's document as the full path would derive it at ``key`` (which
    differs from the view's own key in the tips alone), or None: derive it."""
    old, new = body["key"]["tip"], key["tip"]
    if not (isinstance(old, str) and isinstance(new, str) and HEX.fullmatch(old)
            and HEX.fullmatch(new)):
        return None
    if any(os.path.lexists(common / name) for name in ("shallow", "info/grafts")):
        return None  # git and libgit2 may not see the same parents
    try:
        records = appended_records(common, old, new) if old != new else []
        document = json.loads(json.dumps(body["document"]))
        gates = {g["gate"]: g for g in document["gates"]}
        for raw in records:
            kind = raw["kind"]
            if kind == HARNESS_KIND or (kind.startswith("gate.") and kind != BLOCKED):
                return None
            gate = raw["data"].get("gate")
            if kind == BLOCKED and isinstance(gate, str) and gate in gates:
                gates[gate]["blocks"] += 1
                gates[gate]["updated_at"] = raw["ts"]
        remote_tip = key["remote_tip"]
        if remote_tip is None:
            document["remote"] = None
        elif not HEX.fullmatch(remote_tip):
            return None
        else:
            facts = body["facts"]
            document["remote"] = remote_note(facts["remote"], facts["branch"],
                                             *_counts(common, remote_tip, new))
    except (_NotCaughtUp, KeyError, TypeError, ValueError, OSError, RecursionError):
        return None
    return document
