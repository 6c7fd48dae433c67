"""``meridian ci``: the authority outside the agent's reach.

Layer: CI. Everything local (hooks, caches, even the state derivation) runs as the same
user as the agent and can be bypassed by it. This command runs on the CI server, with
the server's checkout and secrets, and trusts nothing it did not recompute:

1. fetch the state branch (when a remote is configured and reachable);
2. verify it from the root (``verify --full``: append-only, valid records, consistent
   passes, no record from the future), ignoring every local cache;
3. re-derive every gate from the events (``forged or inconsistent`` passes fail);
4. for every gate that stands passed *in the range* (see below): build the artifact
   tree of the checked-out commit in a temporary worktree and compare it with the
   verdict's subject, re-run the gate's checks and the offline scan there
   (``--reevaluate``: the configured evaluator too, with CI's own credentials), and fail
   the pass if any of it does not reproduce;
5. list the harness changes between ``--base`` and the checked-out commit, in words,
   computed from the commits themselves (recorded or not);

The range. With ``--base REV`` (the pull request's base, the push's previous tip) a
pass is *earlier*, and not re-checked, only when it judged exactly what the base held:
its verdict's subject is the gate's artifact tree at the base and its definition hash
the gate's definition there, and no pass re-checked here needs it (transitively): a pass
in the range that rests on it re-checks it too. Which pass is earlier is decided from
the code commits (trees, ancestry), never from a date or a field of the records, which
whoever wrote them chose (a state commit dated in the past is re-checked like any
other). Every earlier pass is listed with the reason it was not re-checked. Without a
base, or with ``--all``, every standing pass is re-checked.

and exits 1 on any failure, with a markdown summary (``--summary FILE``, and appended
to ``$GITHUB_STEP_SUMMARY`` when set) for the pull request.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

from meridian import gitio, yamlio
from meridian.errors import MeridianError

if TYPE_CHECKING:
    from meridian.gates.graph import CheckSpec


@dataclass
class GateCheck:
    gate: str
    ok: bool
    lines: list[str] = field(default_factory=list)
    # What does not reproduce, in a few words each ("its checks fail: `pytest` exit 1").
    reasons: list[str] = field(default_factory=list)
    # the gate the base defined these files under, when the range renamed it (_renamed_from)
    renamed_from: str | None = None

    def fail(self, reason: str, line: str) -> None:
        self.ok = False
        self.reasons.append(reason)
        self.lines.append(line)

    def headline(self) -> str:
        return (f"gate {self.gate}: its pass does not reproduce: " + "; ".join(self.reasons)
                if not self.ok else f"gate {self.gate}: reproduces")


@dataclass
class CiReport:
    branch: str
    tip: str | None = None
    head: str | None = None
    base: str | None = None
    verify_problems: list[str] = field(default_factory=list)
    forged: list[str] = field(default_factory=list)
    stale: list[str] = field(default_factory=list)
    gates: list[GateCheck] = field(default_factory=list)
    harness: list[str] = field(default_factory=list)
    harness_weakening: bool = False
    # Inline ``meridian: allow KIND -- reason`` markers the range added (each silences a
    # finding of the scan: a harness change made in the code itself).
    suppressions: list[dict[str, Any]] = field(default_factory=list)
    # Earlier passes (judged what the base held) not re-checked, each with the reason.
    not_rechecked: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    # Problems with no gate to hang on (e.g. the gate graph removed while the state branch
    # records gates).
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not (self.verify_problems or self.forged or self.stale or self.problems
                    or any(not g.ok for g in self.gates))

    def to_json(self) -> dict[str, Any]:
        return {"ok": self.ok, "branch": self.branch, "tip": self.tip, "head": self.head,
                "base": self.base, "verify_problems": self.verify_problems,
                "forged": self.forged, "stale": self.stale,
                "gates": [{"gate": g.gate, "ok": g.ok, "reasons": g.reasons,
                           "details": g.lines} for g in self.gates],
                "not_rechecked": self.not_rechecked,
                "harness_changes": self.harness, "harness_weakening": self.harness_weakening,
                "suppressions_added": self.suppressions,
                "problems": self.problems, "notes": self.notes}

    def markdown(self) -> str:
        verdict = "passed" if self.ok else "FAILED"
        out = [f"## Meridian ci: {verdict}", ""]
        out.append(f"State branch `{self.branch}` at `{(self.tip or '-')[:12]}`, "
                   f"code at `{(self.head or '-')[:12]}`"
                   + (f", range from `{self.base[:12]}`" if self.base else ""))
        out.append("")
        if self.verify_problems:
            out.append("### The state branch is not intact")
            out += [f"- {p}" for p in self.verify_problems[:50]]
            out.append("")
        if self.problems:
            out.append("### Problems")
            out += [f"- {p}" for p in self.problems]
            out.append("")
        if self.forged:
            out.append("### Forged or inconsistent passes")
            out += [f"- {p}" for p in self.forged]
            out.append("")
        if self.stale:
            out.append("### Stale passes (the code differs from what was judged)")
            out += [f"- {p}" for p in self.stale]
            out.append("")
        failing = [g for g in self.gates if not g.ok]
        if failing:
            out.append("### Passes that do not reproduce")
            out += [f"- {g.headline()}" for g in failing]
            out.append("")
        if self.gates:
            out.append("### Passed gates, re-checked here")
            for check in self.gates:
                out.append(f"- {'ok' if check.ok else '**does not reproduce**'}: `{check.gate}`")
                out += [f"  - {line}" for line in check.lines]
            out.append("")
        if self.not_rechecked:
            out.append("### Earlier passes, not re-checked")
            out += [f"- {line}" for line in self.not_rechecked]
            out.append("")
        out.append("### Harness changes in the range")
        if self.harness:
            out += [f"- {line}" for line in self.harness]
            if self.harness_weakening:
                out.append("")
                out.append("Some of these **weaken enforcement**: review them (CODEOWNERS on "
                           "`.meridian/` makes that review required).")
        else:
            out.append("- none")
        out.append("")
        out.append("### Inline suppressions added in the range")
        if self.suppressions:
            for added in self.suppressions:
                reason = added["reason"] or "(no reason given)"
                weak = "" if added["substantive"] else "; its reason says nothing checkable"
                out.append(f"- `{added['file']}:{added['line']}` allows "
                           f"`{', '.join(added['kinds'])}` -- {reason[:200]} "
                           f"**(a finding silenced in the range{weak}: review it)**")
        else:
            out.append("- none")
        for note in self.notes:
            out += ["", f"_{note}_"]
        return "\n".join(out) + "\n"


def _fetch(ledger: Any, remote: str, report: CiReport) -> None:
    if not gitio.has_remote(ledger.repo, remote):
        report.notes.append(f"no remote {remote}: the local state branch was checked as it is")
        return
    try:
        fetched = gitio.fetch_branch(ledger.repo, remote, ledger.branch)
    except MeridianError as exc:
        report.notes.append(f"could not fetch {remote}/{ledger.branch}: {exc}")
        return
    if fetched is None:
        return
    tip = ledger.tip()
    if tip is None or gitio.is_ancestor(ledger.repo, tip, fetched):
        gitio.set_ref(ledger.repo, ledger.refname, fetched, expected=tip)
    elif not gitio.is_ancestor(ledger.repo, fetched, tip):
        report.notes.append(f"the local {ledger.branch} and {remote}'s have diverged; the "
                            "local one was checked (run `meridian sync`)")


def _harness_changes(repo: gitio.Repository, root: Path, base: str | None,
                     head: str, report: CiReport) -> None:
    from meridian import harness

    paths = harness.harness_paths(root)
    spec = f"{base}..{head}" if base else head
    # Every commit of the range, no cap: a weakening must not hide behind a few hundred
    # cosmetic commits (the local catch-up is capped; this listing is the authority).
    listed = gitio.git(["rev-list", "--reverse", spec, "--", *paths], root, check=False)
    if listed.returncode != 0:
        report.notes.append(f"harness changes not listed: git rev-list {spec} failed")
        return
    for commit in listed.stdout.split():
        info = gitio.commit_info(repo, gitio.Oid(hex=commit))
        tree = gitio.commit_tree(repo, info.oid)
        parent = gitio.commit_tree(repo, info.parents[0]) if info.parents else None
        for path in paths:
            before = gitio.blob_data(gitio.tree_entry(repo, parent, path)) if parent else None
            after = gitio.blob_data(gitio.tree_entry(repo, tree, path))
            if before == after:
                continue
            described = harness.describe(path, before, after, harness.roles_of(paths))
            mark = " **(weakens enforcement)**" if described.weakening else ""
            report.harness.append(f"`{commit[:10]}` {info.summary}: "
                                  + "; ".join(described.changes) + mark)
            report.harness_weakening = report.harness_weakening or described.weakening


def _suppressions_in_range(root: Path, base: str | None, head: str, report: CiReport) -> None:
    """Every inline ``meridian: allow KIND -- reason`` marker on a line the range added
    (no base: every marker the checked-out commit holds), with its file, line, kinds and
    reason: each one silences a scan finding, so the reviewer sees it like a harness
    change.

    The diff is read hunk by hunk (``@@ -a,b +c,d @@`` says how many lines follow), so
    an added line whose text starts ``++ `` (``+++ x`` in the diff) is an added line, not
    a file header; paths git quotes (a tab, a newline, a quote) are unquoted. Without a
    base, ``git grep -z`` separates path, line and text with NULs: a path holding ``:``
    is read whole."""
    if base:
        proc = gitio.git(["-c", "core.quotePath=false", "diff", "-U0", "--no-color",
                          "--no-ext-diff", "--no-renames", "--no-textconv",
                          "--src-prefix=a/", "--dst-prefix=b/", "--diff-filter=AMCRT", base,
                          head, "--"], root, check=False)
    else:
        proc = gitio.git(["-c", "core.quotePath=false", "grep", "-n", "-z", "-I", "--no-color",
                          "--no-textconv", "-E", "-e", r"meridian:[[:space:]]*allow", head,
                          "--"], root, check=False)
    if proc.returncode not in (0, 1):
        report.notes.append("inline suppressions not listed: git "
                            f"{'diff' if base else 'grep'} failed")
        return
    found = _added_lines(proc.stdout) if base else _grep_lines(proc.stdout, head)
    _suppressions_of(found, report)


def _added_lines(diff: str) -> list[tuple[str, int, str]]:
    """(path, line number, text) of every added line of a ``git diff -U0`` patch."""
    out: list[tuple[str, int, str]] = []
    path: str | None = None
    number = old_left = new_left = 0
    for raw in diff.split("\n"):
        if old_left > 0 or new_left > 0:  # inside a hunk: its lines, whatever they hold
            if raw.startswith("+"):
                if path is not None:
                    out.append((path, number, raw[1:]))
                number, new_left = number + 1, new_left - 1
                continue
            if raw.startswith("-"):
                old_left -= 1
                continue
            if raw.startswith(" "):  # context (none with -U0)
                old_left, new_left, number = old_left - 1, new_left - 1, number + 1
                continue
            if raw.startswith("\\"):  # "\ No newline at end of file"
                continue
            old_left = new_left = 0  # not a line of the hunk: read on as a header
        if raw.startswith("diff --git "):
            path = None
        elif raw.startswith("+++ "):
            name = _unquote(raw[4:].rstrip("\t"))
            path = None if name == "/dev/null" else name.removeprefix("b/")
        elif raw.startswith("@@"):
            match = _HUNK.match(raw)
            if match is None:
                continue
            old_left = int(match.group(2)) if match.group(2) is not None else 1
            number = int(match.group(3))
            new_left = int(match.group(4)) if match.group(4) is not None else 1
    return out


_HUNK = re.compile(r"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_C_ESCAPES = {"a": 7, "b": 8, "t": 9, "n": 10, "v": 11, "f": 12, "r": 13, '"': 34, "\\": 92}


def _unquote(name: str) -> str:
    """A path as git prints it in a patch: C-quoted (``"b/a\\tb.py"``) when it holds a
    character git quotes, else as it is."""
    if not (len(name) >= 2 and name.startswith('"') and name.endswith('"')):
        return name
    raw = bytearray()
    body, at = name[1:-1], 0
    while at < len(body):
        char = body[at]
        if char == "\\" and at + 1 < len(body):
            following = body[at + 1]
            if following in _C_ESCAPES:
                raw.append(_C_ESCAPES[following])
                at += 2
                continue
            if body[at + 1:at + 4].isdigit() and len(body[at + 1:at + 4]) == 3:
                raw.append(int(body[at + 1:at + 4], 8) & 0xFF)
                at += 4
                continue
        raw.extend(char.encode("utf-8", "surrogateescape"))
        at += 1
    return raw.decode("utf-8", "replace")


def _grep_lines(output: str, head: str) -> list[tuple[str, int, str]]:
    """(path, line number, text) of ``git grep -n -z`` output over ``head``: records of
    ``REV:path NUL line NUL text LF`` (the path may hold ``:`` or a newline)."""
    out: list[tuple[str, int, str]] = []
    at = 0
    prefix = f"{head}:"
    while at < len(output):
        name_end = output.find("\0", at)
        line_end = output.find("\0", name_end + 1) if name_end >= 0 else -1
        if line_end < 0:
            break
        text_end = output.find("\n", line_end + 1)
        text_end = len(output) if text_end < 0 else text_end
        name, number = output[at:name_end], output[name_end + 1:line_end]
        at = text_end + 1
        if name.startswith(prefix) and number.isdigit():
            out.append((name[len(prefix):], int(number), output[line_end + 1:text_end]))
    return out


def _suppressions_of(lines: list[tuple[str, int, str]], report: CiReport) -> None:
    from meridian.evaluators.changes import ALLOW, substantive

    for where, line, text in lines:
        if "meridian:" not in text:
            continue
        match = ALLOW.search(text)
        if match is None:
            continue
        reason = (match.group("reason") or "").strip()
        report.suppressions.append({
            "file": where, "line": line,
            "kinds": sorted(k.strip() for k in match.group("kinds").split(",")),
            "reason": reason, "substantive": substantive(reason)})


@dataclass
class BaseHarness:
    """The harness as the range's base defined it (gate graph, config, switched-off
    mechanisms): what the reviewer already trusted. A range that changes a gate's checks
    or evaluation settings is re-checked with these too, so the range cannot weaken the
    very harness its own passes are re-checked with."""

    graph: Any
    config: Any
    disabled: frozenset[str]


def _base_harness(base_tree: Path, report: CiReport) -> BaseHarness | None:
    from meridian.config import load_config
    from meridian.gates.graph import load_graph
    from meridian.gates.lifecycle import _disabled_mechanisms, heuristic_checks

    try:
        config = load_config(base_tree)
        graph = load_graph(base_tree, config)
    except MeridianError as exc:
        report.notes.append(f"the harness at base {str(report.base)[:12]} does not load "
                            f"({exc}); passes were re-checked with the pushed one only")
        return None
    return BaseHarness(graph=graph, config=config,
                       disabled=heuristic_checks(_disabled_mechanisms(base_tree)))


def _run_checks(check: GateCheck, commands: list[CheckSpec], worktree: Path, gate: str,
                label: str) -> list[Any]:
    """Run ``commands`` in ``worktree``; a failure fails ``check``, ``label`` saying whose
    checks they are. Returns the results."""
    from meridian.gates import checks

    results = checks.run_checks(commands, worktree, gate)
    failed = [r for r in results if not r.passed]
    for result in results:
        if result.passed:
            check.lines.append(f"check ok{label}: `{result.command}`")
            continue
        how = "timed out" if result.timed_out else f"exit {result.exit_code}"
        tail = " / ".join(line for line in result.output.splitlines()[-3:] if line.strip())
        line = (f"check FAILED{label} ({how}): `{result.command}`"
                + (f": {tail[:300]}" if tail else ""))
        check.lines.append(line)
    if failed:
        first = failed[0]
        how = "timed out" if first.timed_out else f"exit {first.exit_code}"
        check.ok = False
        check.reasons.append(f"its checks{label} do not reproduce ({len(failed)} of "
                             f"{len(results)} fail; `{first.command[:80]}` {how})")
    return results


def _pristine(worktree: Path, commit: str) -> None:
    """The worktree back to ``commit`` (the checked-out one), as a check found it: what
    one check wrote, deleted or checked out is not what the next check or the scan reads."""
    gitio.git(["checkout", "-q", "--force", "--detach", commit], worktree, check=False)
    gitio.git(["reset", "-q", "--hard", commit], worktree, check=False)
    gitio.git(["clean", "-qffdx"], worktree, check=False)


def _recorded_bases(ledger: Any) -> dict[str, list[str]]:
    """gate -> the ``base_commit`` of each of its ``gate.started``/``gate.reopened``
    events, in ledger order: read once per CI run (every pass re-checked asks)."""
    from meridian.gates import events as ev
    from meridian.ledger import EVENTS

    out: dict[str, list[str]] = {}
    for record in ledger.records(EVENTS):
        if record.kind not in (ev.STARTED, ev.REOPENED):
            continue
        gate, recorded = record.data.get("gate"), record.data.get("base_commit")
        if isinstance(gate, str) and isinstance(recorded, str) and len(recorded) == 40:
            out.setdefault(gate, []).append(recorded)
    return out


def _widest_base(project: Any, gate: str, base: str | None,
                 recorded: dict[str, list[str]] | None = None) -> str | None:
    """The range's ``base``, or the first base the gate's own events recorded
    (``gate.started``/``gate.reopened``, in ledger order) that is an ancestor of it: the
    change the gate's judgements were scoped to began there, and widening the change can
    only judge more lines as new, never hide one. None stays None (everything is new).
    ``recorded``: ``_recorded_bases`` of the ledger, when the caller read it already."""
    if base is None:
        return None
    repo = project.repo
    try:
        tip = gitio.Oid(hex=base)  # resolved to a full id by _resolve_base
    except ValueError:
        return base
    every = recorded if recorded is not None else _recorded_bases(project.ledger)
    for candidate in every.get(gate, []):
        try:
            if gitio.is_ancestor(repo, gitio.Oid(hex=candidate), tip):
                return candidate
        except Exception:  # noqa: BLE001, S112 - a commit this clone lacks widens nothing
            continue
    return base


@dataclass
class _Recheck:
    """One re-checked pass across the three phases of ``run_ci`` (every gate's checks as
    the base defined them; then those the range added or changed; then the scans)."""

    status: Any
    spec: Any
    check: GateCheck
    here: Any
    snap: Any
    offline: Any
    disabled: frozenset[str]
    features_file: str
    # The gate as the base defined it (None: no base, or a gate the range added).
    old_spec: Any = None
    base_features_file: str | None = None
    # The pushed checks are the range's (the gate is new, or its checks changed): they run
    # in the second phase, after every gate's checks as the base defined them.
    from_range: bool = False
    results: list[Any] = field(default_factory=list)
    features: Any = None
    base_results: list[Any] | None = None
    base_features: Any = None


def _requirement(spec: Any) -> Any:
    return spec.features if spec.features and spec.features.hardened else None


def _prepare(project: Any, status: Any, worktree: Path,
             base_harness: BaseHarness | None) -> _Recheck:
    """What the judgement of one pass reads from the commit, read before any check of
    any gate runs: a check is a program of the pushed commit and may rewrite its work
    tree (the config, the rules, the files a later check or the scan reads)."""
    from meridian.config import load_config
    from meridian.gates import artifacts
    from meridian.gates.definition import evaluator_settings
    from meridian.gates.lifecycle import Project, _disabled_mechanisms, heuristic_checks

    spec = project.graph.gate(status.gate)
    check = GateCheck(gate=status.gate, ok=True)
    repo = gitio.open_repo(worktree)
    snap = artifacts.snapshot(repo, worktree, spec.artifacts)
    here = Project(root=worktree, repo=repo, config=load_config(worktree), graph=project.graph,
                   ledger=project.ledger)
    offline = evaluator_settings(here.config, spec).model_copy(
        update={"kind": "heuristic", "require": None})
    item = _Recheck(status=status, spec=spec, check=check, here=here, snap=snap,
                    offline=offline, disabled=heuristic_checks(_disabled_mechanisms(worktree)),
                    features_file=here.config.paths.features)
    if snap.subject != status.subject:
        check.fail("its verdict judged other files than the commit holds",
                   f"the artifacts here (tree {snap.subject[:12]}) are not what the "
                   f"verdict judged (tree {str(status.subject)[:12]})")
        return item
    check.lines.append(f"artifacts match the verdict's subject {snap.subject[:12]}")
    if base_harness is not None:
        item.old_spec = base_harness.graph.specs.get(status.gate)
        if item.old_spec is None:
            item.old_spec = _renamed_from(project, base_harness, snap, check)
        item.base_features_file = base_harness.config.paths.features
        item.from_range = item.old_spec is None or list(item.old_spec.checks) != list(spec.checks)
    return item


def _renamed_from(project: Any, base_harness: BaseHarness, snap: Any,
                  check: GateCheck) -> Any:
    """For a gate the base did not define: the base's definition of a gate the range
    removed whose artifacts this gate's files are (a gate renamed in the range), or None.
    A rename must not escape the re-checks as the base defined the gate: the pass is
    judged with the old id's checks, scan settings and needs too."""
    from meridian.gates import globs

    gone = [spec for gate_id, spec in base_harness.graph.specs.items()
            if gate_id not in project.graph]
    for old in gone:
        if any(globs.matches_any(old.artifacts, path) for path in snap.files):
            check.lines.append(f"new in the range, holding files of gate {old.id}, which the "
                               f"range removed: checked as the base defined {old.id} too")
            check.renamed_from = old.id
            return old
    return None


def _checks_with_features(item: _Recheck, commands: list[Any], worktree: Path, pinned: str,
                          label: str, requirements: list[tuple[Any, str | None]]
                          ) -> tuple[list[Any], list[Any]]:
    """Run ``commands``, then judge the required features (``features.hardened``) from
    the JUnit report they wrote, as submit does, for each (requirement, features file);
    the tree is put back afterwards. The features file is read as the commit holds it,
    not as a check left it."""
    from meridian.gates import completion

    for requirement, _ in requirements:
        if requirement is not None:
            completion.remove_old_report(worktree, requirement)
    results = _run_checks(item.check, commands, worktree, item.status.gate, label)
    judged = []
    for requirement, features_file in requirements:
        if requirement is None or features_file is None:
            judged.append(completion.Completion())
            continue
        gitio.git(["checkout", "-q", pinned, "--", features_file], worktree, check=False)
        judged.append(completion.judge(worktree, features_file, requirement, results))
    _pristine(worktree, pinned)
    return results, judged


def _first_checks(item: _Recheck, worktree: Path, pinned: str) -> None:
    """Phase 1: the checks as the base defined them (the pushed ones when the range left
    them alone, or when there is no base to compare with)."""
    if not item.check.ok:
        return
    old = item.old_spec
    if not item.from_range:
        wanted: list[tuple[Any, str | None]] = [(_requirement(item.spec), item.features_file)]
        if old is not None and _requirement(old) != _requirement(item.spec):
            wanted.append((_requirement(old), item.base_features_file))
        item.results, judged = _checks_with_features(item, list(item.spec.checks), worktree,
                                                     pinned, "", wanted)
        item.features = judged[0]
        item.base_features = judged[1] if len(judged) > 1 else None
    elif old is not None and old.checks:
        item.base_results, judged = _checks_with_features(
            item, list(old.checks), worktree, pinned, " as the base defined them",
            [(_requirement(old), item.base_features_file)])
        item.base_features = judged[0]


def _range_checks(item: _Recheck, worktree: Path, pinned: str) -> None:
    """Phase 2: the checks the range added or changed, after every gate's checks as the
    base defined them (a check of the range may change the environment: see
    docs/security.md)."""
    if not item.check.ok or not item.from_range:
        return
    item.results, [item.features] = _checks_with_features(
        item, list(item.spec.checks), worktree, pinned, "",
        [(_requirement(item.spec), item.features_file)])
    if item.old_spec is not None and not item.old_spec.checks:
        item.base_results = []
        if _requirement(item.old_spec) is not None:
            from meridian.gates import completion

            item.base_features = completion.judge(worktree, str(item.base_features_file),
                                                  _requirement(item.old_spec), [])


def _judged(item: _Recheck, worktree: Path, pinned: str, spec: Any, snap: Any,
            results: list[Any], features: Any, base: str | None) -> tuple[Any, Any]:
    """The bundle of ``spec`` (the pushed gate or the base's) and its mutation smoke
    check, run as submit runs it; the tree is put back after the mutants."""
    from meridian.gates.lifecycle import _mutation_check, build_bundle

    bundle = build_bundle(item.here, spec, snap, results, base)
    if features is not None:
        bundle.notes.extend(features.notes)
    mutation = _mutation_check(item.here, spec, snap, bundle, results, None)
    if mutation is not None:
        _pristine(worktree, pinned)
    return bundle, mutation


def _judge(item: _Recheck, worktree: Path, pinned: str, reevaluate: bool, base: str | None,
           base_harness: BaseHarness | None,
           recorded: dict[str, list[str]] | None = None) -> None:
    """Phase 3: the offline scan (and with ``reevaluate`` the configured evaluator) on
    what the checks gave, with the required features and the mutation smoke check added
    as submit adds them; where the range changed anything of the gate that decides what
    the scan sees or how it judges (checks, evaluation settings, switched-off scan checks,
    artifacts, exclude, mutation, required features), the scan as the base defined it
    too."""
    from meridian.evaluators import EvaluatorUnavailable, evaluate
    from meridian.gates import artifacts, completion
    from meridian.gates.definition import evaluator_settings
    from meridian.gates.lifecycle import _with_mutation
    from meridian.gates.mutation import bundle_note as mutation_note

    check, spec = item.check, item.spec
    # The change is judged from the range's base (or, without one, every artifact as
    # added), never from a later gate.started record's base_commit: whoever wrote the
    # events chose that one, and a base at the tip hides every line from the scan. A
    # base the gate recorded that is an ancestor of the range's only widens the change:
    # it is used, so code committed past the hooks after an earlier pass is judged as
    # new here too (``_widest_base``).
    scope = _widest_base(item.here, item.status.gate, base, recorded)
    bundle, mutation = _judged(item, worktree, pinned, spec, item.snap, item.results,
                               item.features, scope)
    kinds: list[tuple[str, Any, frozenset[str], Any, Any, Any]] = [
        ("offline scan", item.offline, item.disabled, bundle, item.features, mutation)]
    old = item.old_spec
    if old is not None and base_harness is not None:
        was = evaluator_settings(base_harness.config, old).model_copy(
            update={"kind": "heuristic", "require": None})
        seen = (list(old.artifacts), list(old.exclude))
        narrowed = seen != (list(spec.artifacts), list(spec.exclude))
        changed = (narrowed or item.base_results is not None or old.mutation != spec.mutation
                   or _requirement(old) != _requirement(spec))
        if changed or was != item.offline or base_harness.disabled != item.disabled:
            results = item.base_results if item.base_results is not None else item.results
            features = item.base_features if item.base_features is not None else (
                item.features if _requirement(old) == _requirement(spec) else None)
            if changed:
                snap = (artifacts.snapshot(item.here.repo, worktree, old.artifacts)
                        if narrowed else item.snap)
                was_bundle, was_mutation = _judged(item, worktree, pinned, old, snap,
                                                   results, features, scope)
            else:
                was_bundle, was_mutation = bundle, mutation
            kinds.append(("offline scan as the base defined it", was, base_harness.disabled,
                          was_bundle, features, was_mutation))
    if reevaluate:
        kinds.append(("evaluator", evaluator_settings(item.here.config, spec), item.disabled,
                      bundle, item.features, mutation))
    for label, settings, switched_off, judged, features, mutated in kinds:
        try:
            verdict = evaluate(judged, settings, disabled_checks=switched_off, cwd=worktree)
        except (EvaluatorUnavailable, MeridianError) as exc:
            check.fail(f"the {label} gave no verdict", f"{label}: no verdict ({exc})")
            continue
        if features is not None:
            verdict = completion.add_issues(verdict, features.issues)
        if mutated is not None:
            # Without a base every function counts as changed, as every line does for the
            # scan: a survivor blocks there as a changed one does at submit (CI trusts no
            # base the events name; the workflow always passes one for a pull request).
            blocks = verdict.block_pre_existing or base is None
            verdict = _with_mutation(verdict.model_copy(update={"block_pre_existing": blocks}),
                                     *mutated).model_copy(
                update={"block_pre_existing": verdict.block_pre_existing})
            check.lines.append(f"{label}: {mutation_note(mutated[0])}")
        high = [i for i in verdict.issues if i.severity == "high"]
        if verdict.passed:
            check.lines.append(f"{label} ({verdict.evaluator}): passes, overall {verdict.overall}")
        else:
            check.fail(
                f"the {label} fails it (overall {verdict.overall} vs {verdict.threshold}"
                + (f"; {high[0].where()} [{high[0].check}] {high[0].message[:200]}" if high
                   else "") + ")",
                f"{label} ({verdict.evaluator}): FAILS, overall {verdict.overall} vs "
                f"{verdict.threshold}" + (f"; {high[0].where()} {high[0].message}" if high else ""))


def _recheck(project: Any, passed: list[Any], worktree: Path, reevaluate: bool,
             base: str | None, base_harness: BaseHarness | None) -> list[GateCheck]:
    """Re-run what each pass rests on, in ``worktree`` (the checked-out commit), with the
    harness the commit defines and, where the range changed a gate, with the base's too.
    Order across gates: everything is read first; then every gate's checks as the base
    defined them; then the checks the range added or changed; then the scans. A check
    of the range runs after every check the reviewer already trusted."""
    pinned = str(gitio.head_commit(gitio.open_repo(worktree)))
    items = [_prepare(project, status, worktree, base_harness) for status in passed]
    for item in items:
        _first_checks(item, worktree, pinned)
    for item in items:
        _range_checks(item, worktree, pinned)
    recorded = _recorded_bases(project.ledger) if base is not None else None  # read once
    for item in items:
        if item.snap.subject == item.status.subject:
            _judge(item, worktree, pinned, reevaluate, base, base_harness, recorded)
    return [item.check for item in items]


def run_ci(path: str = ".", *, base: str | None = None, remote: str | None = None,
           fetch: bool = True, reevaluate: bool = False, recheck_all: bool = False) -> CiReport:
    from meridian.gates.state import derive_states
    from meridian.verify import verify

    project = _open_project(path)
    if project is None:
        return _run_without_graph(path, base=base, remote=remote, fetch=fetch)
    resolved = _resolve_base(project.root, base)
    report = CiReport(branch=project.ledger.branch, base=resolved)
    ledger = _state_ledger(project, resolved, report)
    named: list[str] | None = None  # _other_state_branches, computed once when needed
    if fetch:
        _fetch(ledger, remote or project.config.remote, report)
        where = remote or project.config.remote
        if gitio.has_remote(project.repo, where):
            named = _other_state_branches(project, resolved, ledger.branch)
        for other in named or []:
            try:
                gitio.fetch_branch(project.repo, where, other)
            except MeridianError:
                pass
    head = gitio.head_commit(project.repo)
    report.head = head
    if head is not None:
        _harness_changes(project.repo, project.root, report.base, head, report)
        _suppressions_in_range(project.root, report.base, head, report)
        _token_envs_in_range(project, report.base, head, report)
    if not ledger.exists():
        if named is None:
            named = _other_state_branches(project, resolved, ledger.branch)
        held = [b for b in named if _branch_held(project.repo, b, remote or project.config.remote)]
        if held:
            report.problems.append(
                f"{CONFIG_FILE}: the state branch it names, {ledger.branch}, does not exist, "
                f"but {', '.join(held)}, named by the config earlier in the history, does: "
                "a renamed state branch is not \"no gate has passed\"; point `branch:` back "
                "(or move the state branch with its history) and push it")
        else:
            report.notes.append(f"no state branch {ledger.branch}: no gate has passed, "
                                "nothing to re-check")
        return report
    report.tip = str(ledger.tip())
    checked = verify(ledger, full=True)
    report.verify_problems = [str(p) for p in checked.problems]
    statuses = derive_states(ledger, project.graph)
    for status in statuses.values():
        if status.state == "forged":
            report.forged.append(f"`{status.gate}`: {status.forged_reason}")
        elif status.state == "stale":
            report.stale.append(f"`{status.gate}`: {_stale_text(project.repo, status, head)}")
    passed = [s for s in statuses.values() if s.state == "passed"]
    if not passed or head is None:
        return report
    worktree = Path(tempfile.mkdtemp(prefix="meridian-ci-"))
    try:
        base_harness = None
        if report.base is not None:
            gitio.git(["worktree", "add", "--detach", "--force", str(worktree / "base"),
                       report.base], project.root)
            base_harness = _base_harness(worktree / "base", report)
            if not recheck_all:
                passed = _in_range(project, passed, worktree / "base", report)
        gitio.git(["worktree", "add", "--detach", "--force", str(worktree / "tree"), head],
                  project.root)
        checks = _recheck(project, passed, worktree / "tree", reevaluate, report.base,
                          base_harness)
        for status, check in zip(passed, checks, strict=True):
            _base_needs(check, project, status, statuses, base_harness)
            report.gates.append(check)
    finally:
        for name in ("tree", "base"):
            if (worktree / name).exists():
                gitio.git(["worktree", "remove", "--force", str(worktree / name)],
                          project.root, check=False)
        shutil.rmtree(worktree, ignore_errors=True)
    return report


CONFIG_FILE = ".meridian/config.yaml"


def _branch_at(repo: gitio.Repository, commit: str) -> str | None:
    """The state branch the config at ``commit`` names (the default when the file or the
    key is absent); None when the file does not parse."""
    from meridian.config import DEFAULT_BRANCH

    try:
        blob = gitio.blob_data(gitio.tree_entry(
            repo, gitio.commit_tree(repo, gitio.Oid(hex=commit)), CONFIG_FILE))
        data = None if blob is None else yamlio.parse(blob.decode("utf-8", "replace"),
                                                      CONFIG_FILE).data
    except (MeridianError, ValueError, OSError, KeyError):
        return None
    branch = data.get("branch") if isinstance(data, dict) else None
    return branch if isinstance(branch, str) and branch else DEFAULT_BRANCH


def _state_ledger(project: Any, base: str | None, report: CiReport) -> Any:
    """The state branch CI re-derives: with a base, the base's (what the reviewer
    trusted); a range that changes ``branch:`` fails, named, and is checked against the
    base's branch all the same: one line of pushed config must not point CI at an empty
    branch and make it check nothing."""
    from meridian.ledger import Ledger

    if base is None:
        return project.ledger
    trusted = _branch_at(project.repo, base)
    if trusted is None or trusted == project.ledger.branch:
        return project.ledger
    report.problems.append(
        f"{CONFIG_FILE}: branch: changed in the range ({trusted} -> {project.ledger.branch}); "
        f"the gates were re-derived from the base's state branch {trusted}: a range cannot "
        "move the state branch CI checks it against (a deliberate move is merged by a "
        "human overriding this check)")
    project.ledger = Ledger(project.repo, trusted)
    report.branch = trusted
    return project.ledger


def _other_state_branches(project: Any, base: str | None, branch: str) -> list[str]:
    """The state branches other than ``branch`` that the config named in the range (no
    base: the whole history of the config file), oldest first."""
    spec = f"{base}..HEAD" if base else "HEAD"
    proc = gitio.git(["rev-list", "--reverse", spec, "--", CONFIG_FILE], project.root,
                     check=False)
    commits = proc.stdout.split() if proc.returncode == 0 else []
    if base:
        commits.insert(0, base)
    named = [_branch_at(project.repo, c) for c in commits]
    return list(dict.fromkeys(b for b in named if b and b != branch))


def _branch_held(repo: gitio.Repository, branch: str, remote: str) -> bool:
    return any(gitio.ref_target(repo, ref) is not None
               for ref in (f"refs/heads/{branch}", f"refs/remotes/{remote}/{branch}"))


def _base_needs(check: GateCheck, project: Any, status: Any, statuses: dict[str, Any],
                base_harness: BaseHarness | None) -> None:
    """A need the range dropped still counts: a pass whose gate needed X at the base
    rests on X, passed or not, whatever the pushed gates file says now."""
    if base_harness is None:
        return
    was = base_harness.graph.specs.get(status.gate or "") or base_harness.graph.specs.get(
        check.renamed_from or "")
    if was is None:
        return
    now = set(project.graph.gate(status.gate).needs)
    for need in was.needs:
        held = statuses.get(need)
        if need in now or (held is not None and held.state == "passed"):
            continue
        state = held.state if held is not None else "not in the pushed gate graph"
        check.fail(f"it needs {need} as the base defined it, and {need} is {state}",
                   f"needs {need} at the base (the range dropped it): {need} is {state}")


def _token_envs_in_range(project: Any, base: str | None, head: str,
                         report: CiReport) -> None:
    """``approval.token_env`` at the checked-out commit that the base did not hold (no
    base: the whole history, so every one): refused, whatever HEAD's history says. A
    ``--no-verify`` commit makes one "existing" locally; the base is the trusted point."""
    from meridian.gates.graph import TOKEN_ENV_FIX, gates_path, token_envs_at

    relative = gates_path(project.root, project.config).relative_to(project.root).as_posix()
    new = token_envs_at(project.repo, head, relative) - token_envs_at(project.repo, base,
                                                                     relative)
    since = f"the base {base[:12]}" if base else "the start of the history (no --base)"
    for gate, variable in sorted(new):
        report.problems.append(
            f"{relative}: gate {gate}: approval.token_env ${variable} is new since {since}; "
            f"token_env is refused in new configs: {TOKEN_ENV_FIX}")


def _stale_text(repo: gitio.Repository, status: Any, head: str | None) -> str:
    """Why a stale pass does not cover the checked-out code, said for a PR reviewer."""
    from meridian.gates.state import stale_reason

    reason = stale_reason(status)
    if status.subject and status.current_subject and status.subject != status.current_subject:
        try:
            held = gitio.Oid(hex=status.subject) in repo
        except ValueError:
            held = False
        at = f" at {head[:12]}" if head else ""
        reason += (f"; its verdict judged tree {status.subject[:12]}, the gate's artifacts{at} "
                   f"are tree {status.current_subject[:12]}"
                   + ("" if held else " (a tree this repository does not hold: no real "
                      "evaluation read it)"))
    return reason


def _in_range(project: Any, passed: list[Any], base_tree: Path, report: CiReport) -> list[Any]:
    """The passes to re-check for the range from ``base_tree`` (a worktree of the base);
    the earlier ones go to ``report.not_rechecked`` with the reason."""
    from meridian.config import load_config
    from meridian.gates import artifacts
    from meridian.gates.definition import spec_hash
    from meridian.gates.globs import worktree_files
    from meridian.gates.graph import load_graph

    base = str(report.base)[:12]
    try:
        base_graph = load_graph(base_tree, load_config(base_tree))
    except MeridianError as exc:
        report.notes.append(f"the gate graph at base {base} does not load ({exc}); every pass "
                            "was re-checked")
        return passed
    repo = gitio.open_repo(base_tree)
    listing = None
    earlier: dict[str, str] = {}
    for status in passed:
        if status.gate not in base_graph.specs:
            continue
        listing = listing if listing is not None else worktree_files(repo, base_tree)
        spec = base_graph.gate(status.gate)
        subject = artifacts.snapshot(repo, base_tree, spec.artifacts, listing).subject
        if subject == status.subject and spec_hash(base_graph, status.gate) == status.spec_hash:
            earlier[status.gate] = subject
    # A pass re-checked here rests on every pass it needs: those are re-checked too.
    wanted = {s.gate for s in passed if s.gate not in earlier}
    pending = list(wanted)
    while pending:
        for need in project.graph.gate(pending.pop()).needs:
            if need not in wanted:
                wanted.add(need)
                pending.append(need)
    for status in passed:
        if status.gate in earlier and status.gate not in wanted:
            report.not_rechecked.append(
                f"`{status.gate}`: its verdict judged tree {earlier[status.gate][:12]}, the "
                f"gate's artifacts and definition at base {base}, unchanged in the range, and "
                "no pass re-checked here needs it: nothing in the range rests on it "
                "(`meridian ci --all` re-checks it)")
    return [s for s in passed if s.gate in wanted]


def _open_project(path: str) -> Any:
    """The project with its gate graph, or None when it has no gate graph file at all (an
    eval-only project). A graph that is present but wrong stays an error."""
    from meridian.config import load_config
    from meridian.gates.graph import gates_path
    from meridian.gates.lifecycle import open_project

    root = gitio.workdir(gitio.open_repo(path))
    if root is not None and not yamlio.present(gates_path(root.resolve(),
                                                          load_config(root.resolve()))):
        return None
    return open_project(path)


def _run_without_graph(path: str, *, base: str | None, remote: str | None,
                       fetch: bool) -> CiReport:
    """No gate graph in the checked-out commit: there is no gate to re-derive, but the
    state branch is still verified and the range's harness changes listed. A state branch
    that records gates fails: removing the graph must not turn a gated project green."""
    from meridian.config import load_config
    from meridian.gates.graph import gates_path
    from meridian.ledger import Ledger
    from meridian.verify import verify

    repo = gitio.open_repo(path)
    workdir = gitio.workdir(repo)
    if workdir is None:
        raise MeridianError(f"{repo.path}: a bare repository has no work tree to check")
    root = workdir.resolve()
    config = load_config(root)
    # the state branch the base's config names, as run_ci takes it (_state_ledger): a
    # range that removes the graph and renames `branch:` must not point CI at nothing
    resolved = _resolve_base(root, base)
    shim = SimpleNamespace(repo=repo, root=root, ledger=Ledger(repo, config.branch))
    report = CiReport(branch=config.branch, base=resolved)
    ledger = _state_ledger(shim, resolved, report)
    if fetch:
        _fetch(ledger, remote or config.remote, report)
    head = gitio.head_commit(repo)
    report.head = head
    if head is not None:
        _harness_changes(repo, root, report.base, head, report)
        _suppressions_in_range(root, report.base, head, report)
    shown = gates_path(root, config).relative_to(root).as_posix()
    if not ledger.exists():
        held = [b for b in _other_state_branches(shim, resolved, ledger.branch)
                if _branch_held(repo, b, remote or config.remote)]
        if held:
            report.problems.append(
                f"{CONFIG_FILE}: the state branch it names, {ledger.branch}, does not exist, "
                f"but {', '.join(held)}, named by the config earlier in the history, does: "
                "a renamed state branch is not \"no gate has passed\"; point `branch:` back "
                "(or move the state branch with its history) and push it")
            return report
        report.notes.append(f"no gate graph ({shown}) and no state branch {ledger.branch}: "
                            "nothing to re-check")
        return report
    report.tip = str(ledger.tip())
    report.verify_problems = [str(p) for p in verify(ledger, full=True).problems]
    gated = sorted({str(r.data.get("gate")) for r in ledger.records()
                    if r.kind.startswith("gate.") and r.data.get("gate")})
    if gated:
        report.problems.append(
            f"no gate graph ({shown}) in the checked-out commit, but the state branch "
            f"records gates ({', '.join(gated[:10])}{', ...' if len(gated) > 10 else ''}): "
            "a removed gate graph does not pass; restore it (see the harness changes)")
    else:
        report.notes.append(f"no gate graph ({shown}): no gate to re-derive (an eval-only "
                            "project); the state branch was verified")
    return report


def _resolve_base(root: Path, base: str | None) -> str | None:
    if not base:
        return None
    try:
        return gitio.git(["rev-parse", "--verify", f"{base}^{{commit}}"], root).stdout.strip()
    except MeridianError:
        raise MeridianError(f"--base {base}: not a commit in this repository") from None


def write_summary(report: CiReport, summary: str | None) -> None:
    text = report.markdown()
    targets = [summary] if summary else []
    if os.environ.get("GITHUB_STEP_SUMMARY"):
        targets.append(os.environ["GITHUB_STEP_SUMMARY"])
    for target in targets:
        try:
            with open(target, "a", encoding="utf-8") as handle:
                handle.write(text)
        except OSError as exc:
            raise MeridianError(f"{target}: cannot write the summary ({exc.strerror})") from None
