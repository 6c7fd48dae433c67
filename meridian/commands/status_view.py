"""``meridian status`` answered from a small cached view, when nothing it shows can differ.

Deriving the status opens the repository (pygit2), validates the config and the gate
graph (yaml, pydantic), reads the gate snapshot and folds it: some 300 modules, ~250 ms
before a line is printed, whatever the history's length. The answer is a function of
what the key below names, so the full path stores it in
``.git/meridian/status-view-<work tree>.json`` and a later run whose key matches prints
it without importing any of that. The key, read with plain file reads (the same readers
as the Claude hook's view, ``meridian.hooks.claude_view``):

- Meridian's version and the sha256 of the config, gate graph and rules files
  (``hooks.project._fingerprint``) and of the features file the graph is validated
  against;
- the state branch tip and the remote-tracking branch's tip (ahead/behind counts);
- the tamper evidence file (``verify.evidence_path``): a view is never used while there
  is unacknowledged evidence to warn about;
- the work tree, the git directories and the ``GIT_*`` environment (a view is never used
  with a variable set that tells git where the repository is, ``GIT_DIR`` and the like).

A view whose key differs from now in the state and remote tips alone is caught up
(``state_catchup``): the commits since its tip are read with git itself, and when they
only append well-formed events that change nothing it shows but block counts (episodes,
blocks, runs, memory), its document is brought to the new tip, its remote counts counted
again, and it is rewritten; anything else (a state event, a harness change, an edit, a
rewrite) is derived in full.

A pass is held only as a plain ``passed`` gate, and checked again on every run
(``status_passes``): whether it is still passed depends on its pass being backed by
its verdict, on the definition it was decided under and on the work tree (its
artifacts, hashed), none of which is in the key. So the fast path re-reads the
snapshot's fold, the pass's commit, event, verdict and evidence on the branch (git
itself, no pygit2), the config and gate graph (read from the files, without pydantic
when ``gates/plain_definition`` is sure of them, else by the full path's loaders: the
branch and the definition are never the view's) and the work tree each time, and the full
path writes no view when a gate is stale, awaiting approval or approved, or when a
pass cannot be checked that way (a view that shows one, hand-made, is refused: the
status is derived again). A view with a pass caught up over new commits (below) is
checked against the snapshot of its own tip and not rewritten.
The printed lines are never free text either:
a view is used only when its lines are what the full path prints for its document
(``text_matches``: the table, summary, remote note and harness changes rendered again,
no terminal control characters), so forged lines cannot say "passed" either. A view is a cache, never trust
(docs/security.md): a damaged one, one whose checksum does not match its body or whose
key does not match the files now is derived again and rewritten; a view forged with a
recomputed checksum can change how non-passed gates are shown (as a forged gate snapshot
can), never make a gate look passed, and pre-push and ``meridian ci`` derive everything
from the files and the branch (tests/adversarial/test_integrity_status_view.py).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from meridian import viewfile
from meridian.gates.status_text import summary_text, table_lines

VIEW_VERSION = 1
VIEW_NAME = "status-view"
PASS_STATES = ("passed", "stale")
# The states a view may show (``gates.state.STATES`` less the passes); anything else is
# not what the derivation gives, and is refused.
SHOWN_STATES = frozenset({"locked", "open", "in_progress", "submitted", "failed", "forged"})
# Variables that tell git where the repository is: with one set, git may not find the
# work tree the nearest ``.git`` names, so the view is not used (the others are keyed).
LOCATING = frozenset({"GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR", "GIT_CEILING_DIRECTORIES",
                      "GIT_DISCOVERY_ACROSS_FILESYSTEM", "GIT_NAMESPACE", "GIT_OBJECT_DIRECTORY",
                      "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_INDEX_FILE"})


def _root() -> Path | None:
    """The work tree containing the current directory (the nearest ``.git``), or None
    when git would be told otherwise (``GIT_DIR``, ``GIT_WORK_TREE``, ...)."""
    if LOCATING.intersection(os.environ):
        return None
    try:
        here = Path(os.getcwd())
    except OSError:
        return None
    for candidate in (here, *here.parents):
        if os.path.lexists(candidate / ".git"):
            return candidate
    return None


_checksum = viewfile.checksum


def evidence_path(common: Path, branch: str) -> Path:
    """The pending tamper evidence ``verify.evidence_path`` names, found without importing
    the ledger (a test holds the two to the same file)."""
    return common / "meridian" / f"tamper-{branch.replace('/', '__')}.jsonl"


def view_path(common: Path, root: Path) -> Path:
    return viewfile.view_path(common, root, VIEW_NAME)


def view_key(root: Path, gitdir: Path, common: Path, facts: dict[str, Any]) -> dict[str, Any]:
    """Everything the stored answer depends on, read now (no pygit2, no yaml)."""
    from meridian.hooks.claude_view import _file_digest, read_ref
    from meridian.hooks.project import _fingerprint

    branch, remote = facts["branch"], facts["remote"]
    return {
        "view": VIEW_VERSION, "root": str(root), "gitdir": str(gitdir), "common": str(common),
        "project": _fingerprint(root, facts["gates_path"], facts["rules_path"]),
        # The gate graph is validated against the features file (``paths.features``).
        "features": _file_digest(root / facts["features_path"]),
        "tip": read_ref(common, f"refs/heads/{branch}"),
        "remote_tip": read_ref(common, f"refs/remotes/{remote}/{branch}"),
        "evidence": _file_digest(evidence_path(common, branch)),
        "environment": sorted([k, v] for k, v in os.environ.items() if k.startswith("GIT_")),
    }


def _locate() -> tuple[Path, Path, Path] | None:
    from meridian.hooks.claude_view import git_dirs

    root = _root()
    if root is None:
        return None
    dirs = git_dirs(root)
    if dirs is None:
        return None
    from meridian.hooks.claude import _real

    return _real(root), *dirs


def shows_a_pass(document: dict[str, Any]) -> bool:
    """Whether a status document counts any pass (what a view must never prove)."""
    return any(not isinstance(g, dict) or g.get("state") in PASS_STATES
               or g.get("awaiting_approval") or g.get("approver") is not None
               for g in document.get("gates", ()))


def load(root: Path, gitdir: Path, common: Path) -> dict[str, Any] | None:
    """The stored view's body when it is intact and its key matches now, or it can be
    caught up to now (``state_catchup``: only the tips moved, over commits that change
    nothing it shows but counts); else None."""
    from meridian.userfiles import read_bounded

    try:
        document = json.loads(read_bounded(view_path(common, root), limit=16 * 1024 * 1024))
        body = document["body"]
        if document.get("checksum") != _checksum(body) or body["key"]["view"] != VIEW_VERSION:
            return None
        if body["key"]["root"] != str(root) or body["key"]["tip"] is None:
            return None
        if not _shows_only_what_it_may(body):
            return None
        key = view_key(root, gitdir, common, body["facts"])
        passes = shows_a_pass(body["document"])
        if key != body["key"]:
            if not passes:
                return _caught_up(root, gitdir, common, body, key)
            # Its passes checked against the snapshot of the view's own tip, the commits
            # since shown to append nothing but counts; not rewritten (the snapshot it is
            # checked against stays at that tip until a full derivation moves both).
            fresh = _caught_up(root, gitdir, common, body, key, keep=False)
            if fresh is None or not _passes_hold(root, gitdir, common, fresh,
                                                 since=body["key"]["tip"]):
                return None
            return fresh
        if passes and not _passes_hold(root, gitdir, common, body):
            return None
    except Exception:  # noqa: BLE001 - absent, not a regular file, torn, malformed: derive
        return None
    return body


def _passes_hold(root: Path, gitdir: Path, common: Path, body: dict[str, Any],
                 since: str | None = None) -> bool:
    """Every pass the view shows checked again, now (``status_passes``); ``since``: the
    tip the view was caught up from (the snapshot's)."""
    from meridian.commands.status_passes import recheck

    return recheck(root, gitdir, common, body, since)


def _shows_only_what_it_may(body: dict[str, Any]) -> bool:
    """No evidence pending when it was written, lines that are its document's, and a pass
    only as a plain ``passed`` gate (no stale gate, no approval: those are derived)."""
    if body["key"]["evidence"] is not None:
        return False
    if not (isinstance(body["text"], list) and all(isinstance(t, str) for t in body["text"])
            and isinstance(body["document"], dict)):
        return False
    passes = shows_a_pass(body["document"])
    if passes and not plain_passes(body["document"]):
        return False
    return text_matches(body["document"], body["text"], passes=passes)


def plain_passes(document: dict[str, Any]) -> bool:
    """Whether the passes a document shows are all plain ``passed`` gates: no stale
    gate, none awaiting or carrying an approval (what ``status_passes`` can check)."""
    return all(isinstance(g, dict) and g.get("state") != "stale"
               and not g.get("awaiting_approval") and g.get("approver") is None
               for g in document.get("gates", ())) and document.get("stale") == []


def _caught_up(root: Path, gitdir: Path, common: Path, body: dict[str, Any],
               key: dict[str, Any], keep: bool = True) -> dict[str, Any] | None:
    """The view brought to ``key`` when only the state and remote tips moved and the
    commits since change nothing it shows but counts (``state_catchup``); kept for the
    next run when the key is still the same afterwards."""
    moved = ("tip", "remote_tip")
    if key["tip"] is None or key["evidence"] is not None or {
            k: v for k, v in key.items() if k not in moved} != {
            k: v for k, v in body["key"].items() if k not in moved}:
        return None
    from meridian.state_catchup import caught_up

    document = caught_up(common, body, key)
    if document is None:
        return None
    text = body["text"]
    text = text[:len(text) - len(_tail(body["document"]))] + _tail(document)
    fresh = {**body, "key": key, "document": document, "text": text}
    if not _shows_only_what_it_may(fresh):
        return None
    if keep and view_key(root, gitdir, common, body["facts"]) == key:
        _write(common, root, fresh)
    return fresh


def _table(gates: list[dict[str, Any]]) -> list[str]:
    return table_lines(gates)


def _summary(gates: list[dict[str, Any]]) -> str:
    return summary_text(g["state"] for g in gates)


def _harness_line(change: dict[str, Any]) -> str:
    """``meridian.harness.line`` for a document's harness change ({"ts": ..., **data})."""
    marks = []
    if change.get("weakening"):
        marks.append("WEAKENS enforcement")
    if change.get("agent_session"):
        marks.append("during an agent session")
    where = f"commit {str(change['commit'])[:10]}" if change.get("commit") else "staged"
    return (f"{str(change['ts'])[:19]}  {where}  {'; '.join(change.get('changes') or [])}"
            + (f"  [{', '.join(marks)}]" if marks else ""))


def text_matches(document: dict[str, Any], text: list[str], *, passes: bool = False) -> bool:
    """Whether ``text`` is what the full path prints for ``document``: the table, the
    summary, the remote note and the harness changes rendered from it here, and one
    ``  GATE: verdict by ...`` line for each gate with an identity (its description needs
    the verdict models). A view's lines are never free text: a forged one that says
    "passed" where its document does not, or carries terminal control characters, is
    refused (raises or False: derive)."""
    gates = document["gates"]
    if document["stale"] != [] or not all(
            isinstance(g["gate"], str)
            and (g["state"] in SHOWN_STATES or (passes and g["state"] == "passed"))
            and isinstance(g["detail"], str) for g in gates):
        return False
    if any(ch < " " or ch == "\x7f" or "\x80" <= ch <= "\x9f" for line in text for ch in line):
        return False
    head = _table(gates)
    who = [g["gate"] for g in gates if g.get("identity")]
    identity = text[len(head):len(head) + len(who)]
    if text[:len(head)] != head or len(identity) != len(who) or not all(
            line.startswith(f"  {gate}: verdict by ") for gate, line in zip(who, identity)):
        return False
    return text[len(head) + len(who):] == _tail(document)


def _tail(document: dict[str, Any]) -> list[str]:
    """The lines after the table and the identities: summary, remote note, harness changes."""
    tail = [_summary(document["gates"])]
    remote = document["remote"]
    if remote is not None and remote["hint"]:
        tail.append(f"note: {remote['hint']}")
    changes = document["harness_changes"]
    if changes:
        tail.append("harness changes, latest first (meridian log --kind harness.changed):")
        tail.extend(f"  {_harness_line(change)}" for change in changes)
    return tail


def strict_problems(document: dict[str, Any]) -> list[str]:
    """What ``--strict`` reports for a document without passes: forged passes."""
    forged = [g for g in document["gates"] if g.get("state") == "forged"]
    if not forged:
        return []
    reasons = "; ".join(f"{g['gate']}: {g.get('forged_reason')}" for g in forged)
    return [f"meridian: forged or inconsistent pass(es): {reasons}"]


def answer(json_output: bool, strict: bool) -> int | None:
    """Print the status from the view and return the exit code; None: derive it."""
    try:
        located = _locate()
        body = None if located is None else load(*located)
    except Exception:  # noqa: BLE001 - a .git that cannot be read this way: derive it
        return None
    if body is None:
        return None
    document = body["document"]
    if json_output:
        print(json.dumps(document, indent=2))
    else:
        for line in body["text"]:
            print(line)
    problems = strict_problems(document) if strict else []
    for line in problems:
        print(line, file=sys.stderr)
    return 1 if problems else 0


def key_now(facts: dict[str, Any]) -> tuple[Path, Path, Path, dict[str, Any]] | None:
    """(root, git dir, common dir, key) for the project the full path is about to derive."""
    try:
        located = _locate()
        return None if located is None else (*located, view_key(*located, facts))
    except Exception:  # noqa: BLE001 - a file that cannot be read: no view
        return None


def store(before: tuple[Path, Path, Path, dict[str, Any]] | None, facts: dict[str, Any],
          document: dict[str, Any], text: list[str]) -> None:
    """Keep the derived answer when it may be shown again: no pass in it, no evidence
    pending, a state branch, and the key read before deriving is still the key now (a
    commit or an edit meanwhile: the answer may be of neither)."""
    if before is None:
        return
    root, gitdir, common, key = before
    body = {"key": key, "facts": facts, "document": document, "text": text}
    if shows_a_pass(document) and not (plain_passes(document)
                                       and _passes_hold(root, gitdir, common, body)):
        # A pass the fast path could not check (stale, an approval, a pass recorded
        # without its definition files...): nothing kept that could be mistaken for this
        # answer (the old view's key would not match anyway).
        try:
            view_path(common, root).unlink(missing_ok=True)
        except OSError:
            pass  # a directory there, a read-only .git: its key never matches a pass anyway
        return
    if key["tip"] is None or key["evidence"] is not None or key["root"] != str(root):
        return
    after = key_now(facts)
    if after is None or after[3] != key:
        return
    _write(common, root, body)


def _write(common: Path, root: Path, body: dict[str, Any]) -> None:
    try:
        viewfile.write(view_path(common, root), body)
    except OSError:
        pass  # a view that cannot be written is only slower
