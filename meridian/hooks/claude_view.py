"""The PreToolUse allow path, decided from a small cached view of the project.

PreToolUse runs before every tool call an agent makes, and nearly every call is
allowed. Deciding in full opens the repository (pygit2), reads the gate snapshot and,
for gates that can be locked, folds the states (the gates package, yaml, pydantic):
some 300 modules. The view holds what an allow needs, in
``.git/meridian/claude-view-<work tree>.json``:

- the checked project facts (``hooks.project``: branch, gates and their artifact
  globs, retired mechanisms) and the repository's harness locations
  (``claude.repository_harness``);
- ``may_lock``: the gates that are locked now or could become locked without a new
  state event. A gate never started that has needs is in it (a passed need goes
  stale the moment its files change, so whether it is locked depends on the work
  tree); a passed gate is in it only when a need was taken back after it passed
  (``derive_states(check_stale=False)`` says so from the events alone). Every other
  gate cannot be locked until the state branch moves.

It is keyed by everything that decides those: Meridian's version, the sha256 of the
config, gate graph and rules file (``project._fingerprint``, the same key as
``hook-project.json``), the state branch tip read from ``refs/heads/...`` or
``packed-refs`` with plain file reads, the git config files a ``core.hooksPath`` can
come from (and the ``GIT_*``/``HOME`` environment), and the git directories. The
view only ever proves an *allow*: a call that would write a harness location, a
file every owner of which may be locked, or that names one in a form that cannot be
read, or anything the view cannot answer (no view, a key that does not match, a
checksum that does not, no state branch, a ``git stash`` to read, a hook bypass) is
decided by the full path in ``claude.handle``, which then rewrites the view. The full
path writes it only when the key read before and after computing it is the same.

Every Meridian writer that moves the state tip leaves the view valid for the new one
(``update``): a command or git hook run through ``cli.main`` (the tips compared before
and after it), the spool's drainer, the Claude hook's own SessionStart, Stop and
SessionEnd. Over phase-neutral commits the view is re-keyed (``rekey``); after a phase
change (``gate start``, ``submit``, ``reopen``, a ``sync`` that adopted one) it is
computed again as the full path computes it (the snapshot is caught up from its cached
tip, so that costs the command some milliseconds). A writer is not the deciding
process: it keys the view with the environment stored in the view it replaces, and
only when the two agree on every variable the key's files are found by (``key_for``);
otherwise its own, which the hook then finds not matching. After a state change no
Meridian writer followed (git plumbing, a library caller) the hook reads the commits
since the view's tip with git (``state_catchup``) and, when they only append blocks and
other kinds no gate fold reads for a phase to the events, decides from the view re-keyed
(and writes it so); anything else goes to the full decision.

Caches are not trust (issue #11): the view only makes the hook faster. A view an
attacker edited can at most let a write through here; the pre-commit hook, pre-push
and ``meridian ci`` (docs/security.md) derive everything again, and
``.git/meridian`` is itself a harness location the hook denies writes to.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from meridian import viewfile
from meridian.hooks import claude
from meridian.hooks.block_spool import PACKED_REFS_LIMIT, _read_small, read_ref
from meridian.hooks.project import _fingerprint, _from_json, _to_json
from meridian.viewfile import sha256

TYPE_CHECKING = False  # no `typing` on the Claude hook's allow path (meridian.lean)
if TYPE_CHECKING:
    from typing import Any

    from meridian.hooks.project import ProjectFacts

VIEW_VERSION = 4  # 2: HEAD, commondir, worktrees/, a .git file, included git configs: harness
# 3: the gates' phases (a deny decided from the view); 4: .pre-commit-config.yaml: harness
VIEW_NAME = "claude-view"  # block_spool.VIEW_PREFIX


def git_dirs(root: Path) -> tuple[Path, Path] | None:
    """(git dir, common dir) of the work tree at ``root``, read as git reads them: a
    ``.git`` directory, or a ``.git`` file ``gitdir: PATH`` (linked worktrees,
    submodules), and the git dir's ``commondir`` file. None when neither is there."""
    dotgit = root / ".git"
    if dotgit.is_dir():
        gitdir = dotgit
    else:
        text = _read_small(dotgit)
        if text is None or not text.startswith("gitdir:"):
            return None
        gitdir = root / text[len("gitdir:"):].strip()
    pointer = _read_small(gitdir / "commondir")
    common = gitdir / pointer.strip() if pointer is not None else gitdir
    return claude._real(gitdir), claude._real(common)


def _file_digest(path: Path) -> str | None:
    try:
        text = _read_small(path, PACKED_REFS_LIMIT)
    except Exception as exc:  # noqa: BLE001 - a FIFO, a directory: a key that never matches
        return f"unreadable: {type(exc).__name__}"
    return None if text is None else sha256(text.encode("utf-8", "surrogateescape")
                                                   ).hexdigest()


def _git_config_files(gitdir: Path, common: Path) -> list[Path]:
    """Where git reads ``core.hooksPath`` from (local, worktree, global, XDG, system)."""
    home = Path.home()
    xdg = Path(os.environ.get("XDG_CONFIG_HOME") or home / ".config")
    files = [common / "config", gitdir / "config.worktree", home / ".gitconfig",
             xdg / "git" / "config", Path("/etc/gitconfig")]
    for name in ("GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM"):
        if os.environ.get(name):
            files.append(Path(os.environ[name]))
    return files + claude.config_includes(files)  # `[include] path = ...` files too


def view_key(root: Path, gitdir: Path, common: Path, facts_json: dict[str, Any]) -> dict[str, Any]:
    """Everything the view's answers depend on, read now (no pygit2, no yaml)."""
    files = facts_json["files"]
    return {
        "view": VIEW_VERSION,
        "root": str(root), "gitdir": str(gitdir), "common": str(common),
        "project": _fingerprint(root, files[1], files[2]),
        "tip": read_ref(common, f"refs/heads/{facts_json['branch']}"),
        "git_config": [_file_digest(p) for p in _git_config_files(gitdir, common)],
        "environment": sorted([k, v] for k, v in os.environ.items()
                              if k.startswith("GIT_") or k in ("HOME", "XDG_CONFIG_HOME")),
    }


# What the key's and the harness's file locations are read from: a writer whose values of
# these are the deciding process's computes the same key, whatever else its environment
# holds (a git hook runs with GIT_INDEX_FILE, GIT_PREFIX, GIT_AUTHOR_DATE, ...).
LOCATING = ("HOME", "XDG_CONFIG_HOME", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM")


def key_for(root: Path, gitdir: Path, common: Path, facts_json: dict[str, Any],
            like: dict[str, Any] | None) -> dict[str, Any]:
    """``view_key`` as the process that wrote the key ``like`` reads it, for a writer
    (a Meridian command, a git hook, the spool's drainer) that is not that process: the
    same, with ``like``'s environment in place of this one's when the two agree on every
    ``LOCATING`` variable (so every file the key hashes is the same file). Otherwise this
    process's own: a view the deciding process then finds not matching, and recomputes."""
    key = view_key(root, gitdir, common, facts_json)
    if like is not None and locates_alike(key, like):
        key["environment"] = like["environment"]
    return key


def locates_alike(key: dict[str, Any], other: dict[str, Any]) -> bool:
    """Whether two keys' environments agree on every ``LOCATING`` variable."""
    try:
        mine, theirs = dict(key["environment"]), dict(other["environment"])
    except (KeyError, TypeError, ValueError):
        return False
    return all(mine.get(name) == theirs.get(name) for name in LOCATING)


_checksum = viewfile.checksum


def view_path(common: Path, root: Path) -> Path:
    """One view per work tree: linked worktrees share the common dir, not their files."""
    return viewfile.view_path(common, root, VIEW_NAME)


def load_view(common: Path, root: Path) -> dict[str, Any] | None:
    """The stored view, or None when absent, unreadable or not matching its checksum."""
    from meridian.userfiles import read_bounded

    try:
        # a regular file of bounded size only: a FIFO or a device put there never blocks
        document = json.loads(read_bounded(view_path(common, root), limit=PACKED_REFS_LIMIT))
        body = document["body"]
        if document.get("checksum") != _checksum(body) or body["key"]["view"] != VIEW_VERSION:
            return None
    except Exception:  # noqa: BLE001 - absent, not a regular file, torn: no view
        return None
    return body  # type: ignore[no-any-return]


# --- the fast decision ------------------------------------------------------------------


def allows(payload_text: str) -> bool:
    """True when the view proves this PreToolUse call is allowed (and the subagent's
    writes are noted, as the full path does); False: decide in full."""
    return decide(payload_text) is ALLOWED


class Denied:
    """A deny the view proved: the reply, and the block to record after answering."""

    def __init__(self, reply: claude.Reply, root: Path) -> None:
        self.reply, self.root = reply, root


ALLOWED = claude.ALLOW


def decide(payload_text: str) -> claude.Reply | Denied | None:
    """``ALLOWED`` when the view proves this PreToolUse call allowed; a ``Denied`` when it
    proves it writes a locked gate's files (the block already spooled, ``block_spool``);
    None: decide in full. Raises nothing the caller must handle differently from None."""
    payload = json.loads(payload_text)
    if not isinstance(payload, dict) or claude._malformed_tool_input(payload) is not None:
        return None
    cwd, roots = claude.project_candidates(payload)
    if not roots:
        return ALLOWED  # no git work tree anywhere: the full path allows it too (nothing to enforce)
    root = roots[0]
    dirs = git_dirs(root)
    if dirs is None:
        return None
    gitdir, common = dirs
    body = load_view(common, root)
    if body is None or body["key"]["root"] != str(root):
        return None
    key = view_key(root, gitdir, common, body["facts"])
    if key != body["key"]:
        body = carried_over(root, gitdir, common, body, key)
        if body is None:
            return None
    if body["key"]["tip"] is None:
        return None  # no state branch: the full path decides (and says why)
    facts = _from_json(root, body["facts"])
    context = claude.Context(payload=payload, repo=None,  # type: ignore[arg-type]
                             root=root, cwd=cwd, facts=facts, common=common)
    if _allowed(context, body):
        return ALLOWED
    return _denied(context, body)


def carried_over(root: Path, gitdir: Path, common: Path, body: dict[str, Any],
                 key: dict[str, Any]) -> dict[str, Any] | None:
    """The view re-keyed to ``key`` when the state tip alone moved, over commits that
    leave its answers as they were (``state_catchup.neutral_since``: a library caller's or
    git plumbing's blocks and other plain appends to the events), written back so the
    next call reads it directly (when the key still reads the same); None: decide in full."""
    old, new = body["key"]["tip"], key["tip"]
    if old is None or new is None or {**key, "tip": None} != {**body["key"], "tip": None}:
        return None
    from meridian import state_catchup

    if not state_catchup.neutral_since(common, old, new, REKEY_COMMITS):
        return None
    carried = {**body, "key": key}
    try:
        if view_key(root, gitdir, common, body["facts"]) == key:  # not moved meanwhile
            write_view(common, root, carried)
    except Exception:  # noqa: BLE001, S110 - only a speed cache: the next call checks again
        pass
    return carried


def _allowed(context: claude.Context, body: dict[str, Any]) -> bool:
    facts = context.facts
    command = claude._command(context)
    if command is not None:
        from meridian.hooks.bash_writes import hook_bypasses

        if hook_bypasses(command, state_branch=claude.bypass_branch(command, facts.branch)):
            return False
    try:
        targets = claude._targets(context, removals=True)
    except LookupError:  # a `git stash pop` to read: the full path reads the stash
        return False
    if targets.patches or targets.archives:  # (a patch from a pipe, an archive that
        return False  # cannot be listed: the full path says why it is denied)
    if targets.paths or targets.into or targets.unresolved:
        harness = claude.make_harness([(Path(p), n) for p, n in body["harness"]],
                                      fold=context.folds_case)
        files, unreadable = claude.harness_hits(context, harness, targets, facts.files)
        if files or unreadable:
            return False
    if facts.gates and facts.is_active(claude.LOCKED_RULE):
        may_lock = set(body["may_lock"])
        paths, owners, unreadable_paths = claude.gate_writes(context, targets)
        if any(all(g in may_lock for g in facts.gates_for_path(p)) for p in paths):
            return False
        if any(g in may_lock for g in (*owners, *unreadable_paths)):
            return False
        if targets.anywhere and may_lock:
            return False
    claude.note_agent_writes(context)
    return True


def fixed_locks(facts: ProjectFacts, phases: dict[str, str]) -> dict[str, list[tuple[str, str]]]:
    """The gates locked whatever the work tree holds -> their unmet needs as (need, state),
    exactly as ``derive_states`` gives them: a gate never started whose needs, and their
    needs in turn, include no passed gate. Staleness (the work tree) only ever changes a
    passed gate's state, so without one in the closure every state follows from the
    phases: each need is unmet, an open need with needs of its own is itself locked."""
    needs = {g.id: g.needs for g in facts.gates}

    def state(gate: str) -> str:
        phase = phases.get(gate, "open")
        return ("locked" if needs.get(gate) else "open") if phase == "open" else phase

    out: dict[str, list[tuple[str, str]]] = {}
    for gate in facts.gates:
        if not gate.needs or phases.get(gate.id, "open") != "open":
            continue
        closure, pending = set(), list(gate.needs)
        while pending:
            need = pending.pop()
            if need not in closure:
                closure.add(need)
                pending.extend(needs.get(need, ()))
        if any(phases.get(g, "open") == "passed" or g not in needs for g in closure):
            continue
        out[gate.id] = [(need, state(need)) for need in gate.needs]
    return out


def _denied(context: claude.Context, body: dict[str, Any]) -> Denied | None:
    """A deny of a locked gate's files the view proves (the full path's rule and reason,
    ``claude.locked_refusal``, on the view's phases), its block spooled; None otherwise:
    a harness location, a hook bypass, a command writing anywhere, or a gate whose lock
    depends on the work tree (a passed gate among its needs) go to the full path."""
    facts = context.facts
    phases = body.get("phases")
    if not facts.gates or not facts.is_active(claude.LOCKED_RULE) or not isinstance(phases, dict):
        return None
    command = claude._command(context)
    if command is not None:
        from meridian.hooks.bash_writes import hook_bypasses

        if hook_bypasses(command, state_branch=claude.bypass_branch(command, facts.branch)):
            return None
    targets = claude._targets(context, removals=True)
    if targets.anywhere or targets.patches or targets.archives:
        return None
    harness = claude.make_harness([(Path(p), n) for p, n in body["harness"]],
                                  fold=context.folds_case)
    files, unreadable = claude.harness_hits(context, harness, targets, facts.files)
    if files or unreadable:
        return None  # the harness rule comes first, and words its own reason
    fixed = fixed_locks(facts, phases)
    may_lock = set(body["may_lock"])

    def locked_of(gates: list[str]) -> dict[str, list[tuple[str, str]]]:
        if any(g in may_lock and g not in fixed for g in gates):
            raise LookupError("a lock that depends on the work tree")
        return {g: fixed[g] for g in gates if g in fixed}

    from meridian.hooks.gate_view import decisions_from

    paths, owners, unreadable_paths = claude.gate_writes(context, targets)
    try:
        refusal = claude.locked_refusal(
            context, paths, owners, unreadable_paths, [],
            lambda found: decisions_from(facts, found, locked_of,
                                         lambda g: str(phases.get(g, "open"))),
            locked_of)
    except LookupError:
        return None
    if refusal is None:
        return None  # not a lock after all: the full path decides (and rewrites the view)
    reason, gate, files = refusal
    from meridian.hooks import block_spool

    block_spool.put(context.common or context.root, {
        "root": str(context.root), "branch": facts.branch, "source": claude.SOURCE,
        "reason": reason, "gate": gate, "files": files or None, "ts": block_spool.now_ts(),
        "extra": {"event": "PreToolUse", "session": context.session,
                  "tool": str(context.payload.get("tool_name"))}})
    return Denied(claude.deny(reason), context.root)


# --- writing the view (the full path) ---------------------------------------------------


def may_lock(repo: Any, facts: ProjectFacts) -> tuple[str | None, list[str], dict[str, str]]:
    """(the state tip the answer is for, the gates that are or may become locked before
    the state branch moves, every gate's phase): see the module docstring."""
    from meridian.gates.snapshot import load_snapshot

    needy = [g.id for g in facts.gates if g.needs]
    snapshot = load_snapshot(repo, facts.branch)
    passed = [g for g in needy if snapshot.phase(g) == "passed"]
    taken_back: set[str] = set()
    if passed:
        from meridian.gates.graph import load_graph
        from meridian.gates.state import derive_states
        from meridian.ledger import Ledger

        statuses = derive_states(Ledger(repo, facts.branch), load_graph(facts.root),
                                 check_stale=False, folds=snapshot.gate_folds())
        taken_back = {g for g in passed if statuses[g].stale_needs}
    return (snapshot.tip, [g for g in needy if snapshot.phase(g) == "open" or g in taken_back],
            {g.id: snapshot.phase(g.id) for g in facts.gates})


def refresh(context: claude.Context, *, for_decider: bool = False) -> bool:
    """Rewrite the view for the repository of a fully decided call, when it is not
    current; False when it cannot be written (a layout the fast reader cannot follow,
    something changed while it was computed). ``for_decider``: written by a process
    other than the Claude hook, keyed (``key_for``) as the hook that wrote the view
    there now reads it. Never raises for a cache problem."""
    from meridian import gitio
    from meridian.hooks.project import load_facts

    repo = context.repo
    dirs = git_dirs(context.root)
    if dirs is None or dirs != (claude._real(repo.path), claude._real(gitio.common_dir(repo))):
        return False
    gitdir, common = dirs
    current = load_view(common, context.root)
    like = current["key"] if current is not None and for_decider else None
    earlier = key_for(context.root, gitdir, common, _to_json(context.facts), like)
    if current is not None and current["key"] == earlier:
        return True
    if for_decider and (like is None or not locates_alike(earlier, like)):
        return False  # a view of another environment's (or none): the hook writes its own
    facts = load_facts(repo, context.root)  # the facts for the files as they are now
    facts_json = _to_json(facts)
    before = key_for(context.root, gitdir, common, facts_json, like)
    if before["project"] != earlier["project"]:
        # a config file changed while the facts were read (or names other files now):
        # the facts may be of the older bytes, so no view is written for the newer ones
        return False
    tip, gates, phases = may_lock(repo, facts)
    if tip is None or tip != before["tip"]:
        return False
    body = {"key": before, "facts": facts_json, "may_lock": gates, "phases": phases,
            "harness": [[str(p), n] for p, n in
                        claude.repository_harness(context, facts.files, facts.branch)]}
    if key_for(context.root, gitdir, common, facts_json, like) != before:
        return False
    write_view(common, context.root, body)
    return True


def write_view(common: Path, root: Path, body: dict[str, Any]) -> None:
    """Store ``body`` (key, facts, may_lock, phases, harness) with its checksum."""
    viewfile.write(view_path(common, root), body, sort_keys=True)


# --- keeping the view across state writes that change no gate's phase --------------------

REKEY_COMMITS = 64  # beyond this many new state commits the full path rewrites the view
NEUTRAL_GATE_KINDS = ("gate.blocked",)  # counted by a fold, never changing a phase


def _phase_neutral(repo: Any, commit: Any, parent: Any) -> bool:
    """Whether ``commit`` (on ``parent``) leaves every gate's phase and every position a
    lock is decided by as they were: it changes no event shard, or only appends to event
    shards lines of kinds no gate fold reads (any kind outside ``gate.``, and blocks).
    Each line must also have the shape every reader requires (``Ledger._quick_record``:
    an object with the five record fields, ``data`` an object, ``kind`` a string): a
    corrupt line makes the full decision fail closed, so the view must not outlive it."""
    from meridian import gitio
    from meridian.ledger import EVENTS, RECORD_FIELDS

    old_tree, new_tree = gitio.commit_tree(repo, parent), gitio.commit_tree(repo, commit)
    for path, old, new in gitio.changed_paths(repo, gitio.tree_entry(repo, old_tree, EVENTS),
                                              gitio.tree_entry(repo, new_tree, EVENTS)):
        if new is None or not path.endswith(".jsonl"):
            return False
        before = gitio.read_blob(repo, old) if old is not None else b""
        after = gitio.read_blob(repo, new)
        if not after.startswith(before):
            return False
        for line in after[len(before):].splitlines():
            if not line.strip():
                continue
            try:
                raw = json.loads(line)
            except ValueError:  # UnicodeDecodeError too
                return False
            if not isinstance(raw, dict) or not RECORD_FIELDS <= raw.keys() \
                    or not isinstance(raw["data"], dict) or not isinstance(raw["kind"], str):
                return False
            kind = raw["kind"]
            if kind.startswith("gate.") and kind not in NEUTRAL_GATE_KINDS:
                return False
    return True


def rekey(repo: Any, root: Path) -> bool:
    """Key the view of the work tree at ``root`` by the state tip now, when only the tip
    moved and every commit since the view's tip is ``_phase_neutral`` (a first-parent
    chain of single-parent commits, at most ``REKEY_COMMITS``): a memory episode, a
    block, a run leave the view's phases and ``may_lock`` true. True when the view is
    current afterwards; False leaves it to the full path."""
    from meridian import gitio

    dirs = git_dirs(root)
    if dirs is None:
        return False
    gitdir, common = dirs
    body = load_view(common, root)
    if body is None or body["key"]["root"] != str(root):
        return False
    key = key_for(root, gitdir, common, body["facts"], body["key"])
    if key == body["key"]:
        return True
    old_tip, new_tip = body["key"]["tip"], key["tip"]
    if old_tip is None or new_tip is None or {**key, "tip": None} != {**body["key"], "tip": None}:
        return False
    try:
        commit = gitio.Oid(hex=new_tip)
        for _ in range(REKEY_COMMITS):
            parents = gitio.commit_parents(repo, commit)
            if len(parents) != 1 or not _phase_neutral(repo, commit, parents[0]):
                return False
            commit = parents[0]
            if str(commit) == old_tip:
                break
        else:
            return False
    except (KeyError, ValueError, gitio.GitError):
        return False
    if key_for(root, gitdir, common, body["facts"], body["key"]) != key:
        return False  # the branch moved again meanwhile
    write_view(common, root, {**body, "key": key})
    return True


def update(repo: Any, root: Path) -> bool:
    """Leave the view of the work tree at ``root`` valid for the state tip and the files
    as they are now, after a Meridian writer moved the tip: ``rekey`` when every new
    commit is phase-neutral (a few blob reads), else the view computed again as the full
    path does (``refresh``: the facts, the gate snapshot caught up from its cached tip,
    ``may_lock``). True when the view is current afterwards. Never raises for a cache
    problem; a writer calls it after its own write is done, so its outcome never
    depends on it."""
    try:
        if rekey(repo, root):
            return True
        # only a view there is kept, and only by a writer that reads the files its key
        # names as the hook that wrote it does (``refresh(for_decider=True)``)
        from meridian.hooks.project import load_facts

        facts = load_facts(repo, root)
        context = claude.Context(payload={}, repo=repo, root=root, cwd=root, facts=facts)
        return refresh(context, for_decider=True)
    except Exception:  # noqa: BLE001 - a broken config, a damaged repository: no view
        return False


def _views_in(common: Path) -> list[Path]:
    try:
        names = os.listdir(common / "meridian")
    except OSError:
        return []
    return [common / "meridian" / n for n in sorted(names)
            if n.startswith(f"{VIEW_NAME}-") and n.endswith(".json")]


def update_views(start: str | os.PathLike[str] = ".") -> None:
    """``update`` every view of the repository around ``start`` that no longer matches
    its key, each for its own work tree (linked worktrees share the state branch). A
    view whose key still matches costs a few file reads and opens nothing. Never raises,
    never changes the caller's outcome."""
    try:
        from meridian.hooks.block_spool import _common_dir

        common = _common_dir(Path(os.path.abspath(start)))
        if common is None:
            return
        for path in _views_in(common):
            try:
                _update_view_file(common, path)
            except Exception:  # noqa: BLE001, S112 - the view is only a speed cache
                continue
    except Exception:  # noqa: BLE001, S110 - the view is only a speed cache
        pass


def _update_view_file(common: Path, path: Path) -> None:
    from meridian.userfiles import read_bounded

    body = json.loads(read_bounded(path, limit=PACKED_REFS_LIMIT))["body"]
    root = Path(str(body["key"]["root"]))
    dirs = git_dirs(root) if root.is_absolute() else None
    if dirs is None or dirs[1] != claude._real(common) or view_path(common, root) != path:
        return  # a work tree gone, of another repository, or a file not named for its root
    if key_for(root, dirs[0], common, body["facts"], body["key"]) == body["key"]:
        return
    from meridian import gitio

    repo = gitio.open_repo(root)
    if claude._real(repo.path) != dirs[0]:
        return
    update(repo, root)
