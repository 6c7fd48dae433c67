"""``meridian hook pre-commit``: what a commit must not carry past Meridian.

In order, each step only when the one before passed:

1. config, gate graph and rules are valid (``project.load_facts``; cached by content),
   and the commit carries them as the work tree has them (they are read from the work
   tree, so an unstaged edit would otherwise decide what a commit may hold);
2. the state branch is intact: every commit since the last verified one is checked,
   which re-validates every memory, gate and run record written since;
3. staged files every owner of which is **locked** are refused, naming the gates and the
   needs that have not passed (rule mechanism ``hook:locked_gate_artifacts``); a file
   shared with a gate that is open, in progress or further along is that gate's work.
   A staged file of a passed gate is a warning naming the gate it makes stale
   (``gate_view.decide_path`` is the rule, ``meridian owners PATH`` shows it);
4. the heuristic evaluator reads the staged content of files that belong to gates and
   a high-severity finding (a stub, a test that cannot fail) in the staged hunks is
   refused with file:line (``hook:staged_heuristics``, and each check's own
   ``heuristic:<id>`` mechanism), and so is one on an untouched line that HEAD's version
   of the scanned files does not have (``new_findings``: a deletion that removed a
   stub's excuse). Findings HEAD already has are the gate's business, not this
   commit's; ``meridian: allow KIND -- reason`` markers and the gates' ``exclude:``
   globs are honoured as at submit.

Every refusal is a ``gate.blocked`` event with ``source: "pre-commit"``. Nothing here
imports anthropic or rich, opens the network, or reads history beyond what is new:
gate states come from ``meridian.gates.snapshot`` and verification is incremental.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from meridian import gitio
from meridian.errors import ConfigError, MeridianError
from meridian.hooks import report
from meridian.hooks.gate_view import need_step
from meridian.hooks.project import ProjectFacts, ledger_problems, load_facts
from meridian.hooks.report import Refusal

SOURCE = "pre-commit"
LOCKED_RULE = "hook:locked_gate_artifacts"
HEURISTICS_RULE = "hook:staged_heuristics"
MAX_LISTED = report.MAX_LISTED


@dataclass
class Result(report.Result):
    staged: int = 0  # paths the commit changes
    gate_files: int = 0  # of those, paths that belong to a gate's artifacts
    branch: str | None = None  # the state branch, once the config was read


def _owners(facts: ProjectFacts, paths: list[str]) -> dict[str, list[str]]:
    """gate -> the given paths among its artifacts (dependency order of gates)."""
    owned: dict[str, list[str]] = {}
    for path in paths:
        for gate in facts.gates_for_path(path):
            owned.setdefault(gate, []).append(path)
    return {g.id: owned[g.id] for g in facts.gates if g.id in owned}


def _locked_refusals(repo: gitio.Repository, facts: ProjectFacts, paths: list[str],
                     result: Result, *, use_cache: bool) -> list[Refusal]:
    """Refusals for staged paths every owner of which is locked (``gate_view.decide_path``);
    a warning on ``result`` for each passed gate the commit makes stale."""
    from meridian.hooks.gate_view import path_decisions

    decisions = path_decisions(repo, facts, paths, use_cache=use_cache)
    refused: dict[tuple[str, ...], list[str]] = {}
    stale: dict[str, list[str]] = {}
    unmet: dict[str, list[tuple[str, str]]] = {}
    for decision in decisions:
        if not decision.allowed:
            refused.setdefault(tuple(decision.unmet), []).append(decision.path)
            unmet.update(decision.unmet)
        for gate in decision.goes_stale:
            stale.setdefault(gate, []).append(decision.path)
    for gate, files in stale.items():
        result.warnings.append(
            f"{_shown(files)} belong{'s' if len(files) == 1 else ''} to gate {gate}, which "
            f"passed: this change makes {gate} stale until it is submitted again "
            f"(meridian gate submit {gate})")
    refusals = []
    # Before the first commit there is no HEAD for `git restore --staged` to restore from.
    unstage = "git restore --staged --" if gitio.head_commit(repo) else "git rm -q --cached --"
    for gates, files in refused.items():
        gate = gates[0]
        if len(gates) == 1:
            whose = (f"belong to gate {gate}, which is locked: its needs have not passed: "
                     f"{_unmet_text(unmet[gate])}")
        else:
            whose = (f"belong to gates {', '.join(gates)}, all of them locked: "
                     + "; ".join(f"{g} needs {_unmet_text(unmet[g])}" for g in gates))
        first_need = unmet[gate][0] if unmet[gate] else (gate, "locked")
        refusals.append(Refusal(
            reason=f"{len(files)} staged file(s) {whose}",
            next_step=(f"{need_step(*first_need)}, or leave these files out of the commit: "
                       f"{unstage} {' '.join(files[:5])}"
                       + (" ..." if len(files) > 5 else "")),
            gate=gate, files=files, details=report.listed(files), mechanism=LOCKED_RULE,
        ))
    return refusals


def _unmet_text(unmet: list[tuple[str, str]]) -> str:
    return ", ".join(f"{need} ({state})" for need, state in unmet)


def _shown(files: list[str]) -> str:
    return ", ".join(files[:5]) + (f" and {len(files) - 5} more" if len(files) > 5 else "")


def project_branch(root: Path) -> str | None:
    """The state branch the config names, when only the gate graph or the rules are invalid
    (so that refusal is recorded too); None when the config itself cannot be read."""
    from meridian.config import load_config

    try:
        return load_config(root).branch
    except ConfigError:
        return None


def load_or_refuse(repo: gitio.Repository, root: Path, result: Any, *, use_cache: bool,
                   next_step: str) -> ProjectFacts | None:
    """The project's facts, or None with a refusal on ``result`` when the configuration is
    invalid (``result.branch`` names where that refusal is recorded, when it can)."""
    try:
        facts = load_facts(repo, root, use_cache=use_cache)
    except ConfigError as exc:
        result.refusals.append(Refusal(reason=f"invalid Meridian configuration: {exc}",
                                       next_step=next_step))
        result.branch = project_branch(root)
        return None
    result.branch = facts.branch
    return facts


def _head_text(repo: gitio.Repository, head: gitio.Oid | None, path: str) -> str | None:
    """``path`` as HEAD has it, as text (None: not in HEAD, or binary)."""
    if head is None:
        return None
    entry = gitio.tree_entry(repo, gitio.commit_tree(repo, head), path)
    if entry is None or not hasattr(entry, "data"):
        return None
    return gitio.decode_text(entry.data)


def _heuristic_refusals(repo: gitio.Repository, facts: ProjectFacts,
                        owners: dict[str, list[str]],
                        staged: dict[str, gitio.Oid | None], *,
                        bases: list[gitio.Oid] | None = None,
                        tip: gitio.Oid | None = None,
                        what: str = "staged files",
                        fix: str = "fix them and commit again") -> list[Refusal]:
    """Refusals for the new high findings of the gate files ``staged`` (path -> new blob
    id, None: deleted) changes, relative to HEAD (``bases``: relative to each of these
    commits, none: all of it is new). A finding is new when it is on a line the change
    touches (a line counts as changed when it differs from every base) or when no base's
    version of the scanned files holds it (``new_findings``: a deletion that removed its
    excuse). ``tip``: the commit holding the new files (None: the index). pre-push calls
    this with the pushed tip's files and the commits the remote has."""
    from meridian.evaluators.changes import changed_lines, rename_source

    texts: dict[str, str] = {}
    changed: dict[str, tuple[tuple[int, int], ...]] = {}
    if bases is None:
        head = gitio.head_commit(repo)
        bases = [gitio.Oid(hex=head)] if head else []
    head_oid = bases[0] if bases else None
    removed: dict[str, str] | None = None  # files this commit deletes, read when needed
    unreadable: list[str] = []  # staged files that are not text (a source one is a finding)
    before: dict[str, str] = {}  # the first base's version of each scanned file
    moved: set[str] = set()  # rename sources (their text is in ``before`` by new path)
    for paths in owners.values():
        for path in paths:
            oid = staged.get(path)
            if oid is None or path in texts or path in unreadable:
                continue
            if facts.scan_excluded(path, facts.gates_for_path(path)):
                continue
            text = gitio.decode_text(gitio.read_blob(repo, oid))
            if text is None:
                unreadable.append(path)
            else:
                texts[path] = text
                # The staged hunks: what this commit changes in the file (a file moved or
                # renamed by this commit: against its old self).
                old = _head_text(repo, head_oid, path)
                if old is None and head_oid is not None:
                    if removed is None:
                        removed = {p: t for p, o in staged.items() if o is None
                                   if (t := _head_text(repo, head_oid, p)) is not None}
                    source = rename_source(text, removed) if removed else None
                    old = None if source is None else removed[source]
                    if source is not None:
                        moved.add(source)
                changed[path] = changed_lines(old, text)
                if old is not None:
                    before[path] = old
                for other in bases[1:]:
                    changed[path] = _common(changed[path],
                                            changed_lines(_head_text(repo, other, path), text))
    deleted = {path: text for paths in owners.values() for path in paths
               if path in staged and staged[path] is None and path not in moved
               and not facts.scan_excluded(path, facts.gates_for_path(path))
               if (text := _head_text(repo, head_oid, path)) is not None}
    if not texts and not unreadable and not deleted:
        return []
    owners = _with_related(repo, facts, owners, texts, before, deleted, changed,
                           head_oid, tip)
    # The plain-value scan: the evaluator's pydantic Issue model is not needed to refuse.
    from meridian.evaluators.scan import scan_tree, unreadable_source

    disabled = facts.heuristic_disabled()
    found = scan_tree(texts, disabled, changed=changed).findings
    if head_oid is not None and any(f.pre_existing and f.severity == "high" for f in found):
        found = _unmasked(repo, found, texts, {**before, **deleted}, deleted, bases, disabled)
    # A staged source file that cannot be read as text is refused, not skipped.
    found += [f for path in unreadable if (f := unreadable_source(path)) is not None
              and f.check not in disabled]
    refusals = []
    for gate, paths in owners.items():
        # Outside the staged hunks too when the gate says so (evaluator.block_pre_existing).
        older = facts.blocks_pre_existing(gate)
        mine = [i for i in found if i.file in paths
                and (i.blocks or (older and i.severity == "high"))]
        if not mine:
            continue
        first = mine[0]
        checks = sorted({i.check for i in mine if i.check})
        rules = ", ".join(facts.rule_hint(f"heuristic:{c}") for c in checks)
        files = sorted({i.file for i in mine if i.file})
        refusals.append(Refusal(
            reason=(f"{len(mine)} high-severity finding(s) in {what} of gate {gate}, "
                    f"first {first.where()}: {first.message}"),
            next_step=(f"{fix}. The checks are rules: {rules}; "
                       "switching one off takes a recorded reason: "
                       f"meridian rules retire ID --reason WHY, then git add {facts.rules_file}"),
            gate=gate, files=files, mechanism=HEURISTICS_RULE,
            details=[f"{i.where()}  [{i.check}] {i.message}" for i in mine[:MAX_LISTED]]
            + ([f"... and {len(mine) - MAX_LISTED} more"] if len(mine) > MAX_LISTED else []),
        ))
    return refusals


def _with_related(repo: gitio.Repository, facts: ProjectFacts,
                  owners: dict[str, list[str]], texts: dict[str, str],
                  before: dict[str, str], deleted: dict[str, str],
                  changed: dict[str, tuple[tuple[int, int], ...]],
                  head_oid: gitio.Oid | None, tip: gitio.Oid | None) -> dict[str, list[str]]:
    """``owners`` with the gate files the changed and deleted Python files import, read
    into ``texts`` (new version, untouched) and ``before`` (first base's version): an
    excuse the change removed may be for a stub in one of them."""
    from meridian.hooks.new_findings import related_paths

    # Only a change that removes a line can remove an excuse: a file the change adds or
    # only adds to brings in no file it imports (the common commit pays nothing more).
    sources = {path: [t for t in (before.get(path), texts.get(path), deleted.get(path))
                      if t is not None]
               for path in [*texts, *deleted]
               if path in deleted or (path in before and path in texts and not set(
                   before[path].splitlines()) <= set(texts[path].splitlines()))}
    if tip is None:
        index = gitio._commit_index(repo)

        def new_blob(path: str) -> gitio.Oid | None:
            try:
                return index[path].id
            except KeyError:
                return None
    else:
        tree = gitio.commit_tree(repo, tip)

        def new_blob(path: str) -> gitio.Oid | None:
            entry = gitio.tree_entry(repo, tree, path)
            return entry.id if entry is not None and hasattr(entry, "data") else None

    blobs: dict[str, gitio.Oid] = {}

    def exists(path: str) -> bool:
        oid = new_blob(path)
        if oid is not None:
            blobs[path] = oid
        return oid is not None

    extra = [p for p in related_paths(sources, exists) if p not in texts
             if facts.gates_for_path(p) and not facts.scan_excluded(p, facts.gates_for_path(p))]
    if not extra:
        return owners
    merged = {gate: list(paths) for gate, paths in owners.items()}
    for path in extra:
        text = gitio.decode_text(gitio.read_blob(repo, blobs[path]))
        if text is None:
            continue
        texts[path] = text
        changed[path] = ()
        old = _head_text(repo, head_oid, path)
        if old is not None:
            before[path] = old
        for gate in facts.gates_for_path(path):
            if path not in merged.setdefault(gate, []):
                merged[gate].append(path)
    return merged


def _unmasked(repo: gitio.Repository, found: list[Any], texts: dict[str, str],
              first: dict[str, str], deleted: dict[str, str], bases: list[gitio.Oid],
              disabled: frozenset[str]) -> list[Any]:
    """``found`` with its pre-existing high findings that no base's version of the
    scanned files holds made blocking (``new_findings.unmatched``)."""
    from dataclasses import replace

    from meridian.evaluators.scan import scan_tree
    from meridian.hooks.new_findings import unmatched

    candidates = [f for f in found if f.pre_existing and f.severity == "high"]
    befores = []
    for number, base in enumerate(bases):
        if number == 0:
            old = first
        else:
            old = {p: t for p in [*texts, *deleted]
                   if (t := _head_text(repo, base, p)) is not None}
        befores.append((scan_tree(old, disabled, changed={}).findings, old))
        if not unmatched(candidates, texts, befores):
            return found
    new = {id(f) for f in unmatched(candidates, texts, befores)}
    return [replace(f, pre_existing=False) if id(f) in new else f for f in found]


def _common(a: tuple[tuple[int, int], ...],
            b: tuple[tuple[int, int], ...]) -> tuple[tuple[int, int], ...]:
    """The line ranges both ``a`` and ``b`` hold."""
    out = []
    for start, end in a:
        for other_start, other_end in b:
            low, high = max(start, other_start), min(end, other_end)
            if low <= high:
                out.append((low, high))
    return tuple(sorted(out))


def _state_gone(repo: gitio.Repository, branch: str, result: Result) -> bool:
    """A deleted state branch refuses the commit (meridian.hooks.state_gone)."""
    from meridian.hooks.state_gone import missing_state

    gone = missing_state(repo, branch)
    if gone is not None:
        result.refusals.append(Refusal(reason=gone[0], next_step=gone[1] + ", then commit again"))
    return gone is not None


def check(path: str = ".", *, use_cache: bool = True) -> Result:
    """Everything the pre-commit hook checks, without printing or recording anything."""
    repo = gitio.open_repo(path)
    root = gitio.workdir(repo)
    result = Result()
    if root is None:
        return result
    facts = load_or_refuse(repo, root, result, use_cache=use_cache, next_step=(
        "fix that file and commit again (`meridian status` reads it the same way)"))
    if facts is None:
        return result
    unstaged = gitio.unstaged_paths(repo, facts.files)
    if unstaged:
        # The checks read these files from the work tree. Were they allowed to differ from
        # the commit, an edit never committed (a glob dropped from a gate, a rule retired,
        # the gate graph moved aside) would switch enforcement off without a trace.
        shown = " ".join(unstaged)
        result.refusals.append(Refusal(
            reason=(f"{', '.join(unstaged)}: the work tree differs from what this commit "
                    "carries (unstaged changes, or the file was removed), so the commit cannot "
                    "be checked by the configuration it contains"),
            next_step=(f"commit the change with it (git add -- {shown}) or set it aside "
                       f"(git stash push -- {shown}), then commit again"),
            files=unstaged))
        return result
    if facts.gates and _state_gone(repo, facts.branch, result):
        return result
    problems = ledger_problems(repo, facts.branch, use_cache=use_cache)
    if problems:
        result.refusals.append(Refusal(
            reason=f"the state branch {facts.branch} is not intact: {problems[0]}",
            next_step=("run `meridian verify` to see every problem; records are never edited "
                       "in place, so restore the branch from a clone that has it intact"),
            details=problems[1:MAX_LISTED]))
        return result
    staged = gitio.staged_changes(repo)
    result.staged = len(staged)
    if not facts.gates or not staged:
        return result
    owners = _owners(facts, sorted(staged))
    result.gate_files = sum(len(p) for p in owners.values())
    if not owners:
        return result
    if facts.is_active(LOCKED_RULE):
        if gitio.ref_target(repo, f"refs/heads/{facts.branch}") is None:
            result.warnings.append(
                f"no state branch {facts.branch} here, so gate states are unknown and locked "
                "gates were not checked; run `meridian init` (it adopts the remote's branch)")
        else:
            result.refusals += _locked_refusals(repo, facts, sorted(staged), result,
                                                use_cache=use_cache)
    if facts.is_active(HEURISTICS_RULE):
        result.refusals += _heuristic_refusals(repo, facts, owners, staged)
    return result


def _record_harness_change(path: str, result: Result) -> None:
    """A commit that changes the gate graph, rules, config or features: a
    ``harness.changed`` event saying what changed (``meridian.harness``)."""
    repo = gitio.open_repo(path)
    staged = gitio.staged_changes(repo)
    if not any(p.startswith(".meridian/") or p.endswith((".yaml", ".yml")) for p in staged):
        return  # the usual commit: nothing to import, nothing to record
    root = gitio.workdir(repo)
    from meridian import harness
    from meridian.ledger import Ledger

    try:
        harness.record_staged(repo, Ledger(repo, str(result.branch)),
                              harness.harness_paths(root), staged)
    except MeridianError as exc:
        result.warnings.append(f"harness change not recorded: {exc} "
                               "(`meridian status` records it later)")


def run(path: str = ".", *, use_cache: bool = True, stderr: TextIO | None = None) -> int:
    """The hook: check, record each refusal, print what was refused and why; 0 or 2."""
    out = stderr or sys.stderr
    from meridian.hooks.block_spool import drain_here

    drain_here(path)  # blocks a Claude deny left to record: before the branch is verified
    result = check(path, use_cache=use_cache)
    if result.refusals:
        report.record(gitio.open_repo(path), result.branch, result, SOURCE)
    elif result.branch is not None:
        _record_harness_change(path, result)
    for line in report.render(result, SOURCE, "commit"):
        print(line, file=out)
    return 0 if result.ok else 2
