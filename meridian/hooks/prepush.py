"""``meridian hook pre-push``: what must not leave this clone.

git writes one line per pushed ref on stdin: ``<local ref> <local sha> <remote ref>
<remote sha>``. Pushes of the state branch and of Meridian's tags are Meridian's own
business (``meridian sync`` pushes them with ``--no-verify`` anyway) and are ignored,
as are deletions. For anything else the push is refused when:

- the state branch is not intact or stored memory is corrupt (every memory line is
  re-checked: pushing would spread it);
- a passed gate has gone stale (its artifacts or its definition changed since the verdict)
  (``hooks.block_stale_on_push`` in ``.meridian/config.yaml``, on by default);
- a suite with a pinned baseline has a latest run that regresses against it
  (``meridian.evals.compare``; rule mechanism ``prepush:regression_gate``);
- what the push adds to the files of gates holds a high finding of the offline scan (a
  stub, a test that cannot fail): the scan the pre-commit hook runs on staged files
  (rule mechanism ``hook:staged_heuristics``), over the pushed tip's gate files against
  the commits the remote has, so a commit made past the pre-commit hook (``git
  commit-tree``, ``cherry-pick``, ``am``, ``fast-import``, a clone without hooks) is
  caught here;
- a pushed commit changes a file of a gate that is locked now (rule mechanism
  ``hook:locked_gate_artifacts``): the commits themselves are read, not the work tree,
  so a ``git commit --no-verify`` that skipped the pre-commit hook is caught here;
- a pushed commit adds an ``approval.token_env`` (refused in new configs; HEAD holding
  it after a ``--no-verify`` commit does not make it existing);
- the state branch is missing although the clone shows it existed
  (``meridian.hooks.state_gone``).

The project facts and the gate fold are recomputed here, never read from the caches
under ``.git/meridian`` (an agent can rewrite those with a matching key and checksum).

Under the pre-commit framework stdin carries nothing; the pushed refs come from the
``PRE_COMMIT_LOCAL_BRANCH`` / ``PRE_COMMIT_REMOTE_BRANCH`` variables it sets.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from typing import TextIO

from meridian import gitio
from meridian.errors import MeridianError
from meridian.hooks import report
from meridian.hooks.project import ProjectFacts, ledger_problems
from meridian.hooks.report import Refusal

SOURCE = "pre-push"
REGRESSION_RULE = "prepush:regression_gate"
LOCKED_RULE = "hook:locked_gate_artifacts"
HEURISTICS_RULE = "hook:staged_heuristics"
ZERO = "0" * 40


@dataclass(frozen=True)
class PushedRef:
    local_ref: str
    local_sha: str
    remote_ref: str
    remote_sha: str


def parse_refs(stdin: str) -> list[PushedRef]:
    """The ref lines git gives a pre-push hook (malformed lines are ignored)."""
    pushed = []
    for line in stdin.splitlines():
        parts = line.split()
        if len(parts) == 4:
            pushed.append(PushedRef(*parts))
    if not pushed and os.environ.get("PRE_COMMIT_LOCAL_BRANCH"):
        pushed.append(PushedRef(
            os.environ["PRE_COMMIT_LOCAL_BRANCH"], os.environ.get("PRE_COMMIT_TO_REF", "HEAD"),
            os.environ.get("PRE_COMMIT_REMOTE_BRANCH", ""), os.environ.get("PRE_COMMIT_FROM_REF", ZERO)))
    return pushed


def _is_meridians(ref: str, branch: str) -> bool:
    return ref == f"refs/heads/{branch}" or ref.startswith("refs/tags/meridian/")


def relevant(pushed: list[PushedRef], branch: str) -> list[PushedRef]:
    """The pushed refs Meridian checks: not its own, not deletions."""
    return [p for p in pushed
            if p.local_sha != ZERO
            and not _is_meridians(p.local_ref, branch) and not _is_meridians(p.remote_ref, branch)]


@dataclass
class Result(report.Result):
    checked_refs: list[str] = field(default_factory=list)
    branch: str | None = None


def _integrity(repo: gitio.Repository, facts: ProjectFacts, use_cache: bool) -> list[Refusal]:
    problems = ledger_problems(repo, facts.branch, use_cache=use_cache)
    if problems:
        return [Refusal(
            reason=f"the state branch {facts.branch} is not intact: {problems[0]}",
            next_step="run `meridian verify`; push again once the branch is intact",
            details=problems[1:report.MAX_LISTED])]
    from meridian.ledger import Ledger
    from meridian.memory.verify import check_memory

    corrupt = check_memory(Ledger(repo, facts.branch))
    if corrupt:
        return [Refusal(
            reason=f"stored memory is corrupt ({len(corrupt)} bad line(s)): {corrupt[0]}",
            next_step="run `meridian memory verify` to list them; push again once memory is intact",
            details=report.listed(corrupt[1:]))]
    return []


def _stale(repo: gitio.Repository, facts: ProjectFacts, use_cache: bool) -> list[Refusal]:
    if not facts.has_graph:
        return []
    from meridian.gates.graph import load_graph
    from meridian.gates.snapshot import load_snapshot
    from meridian.gates.state import derive_states, stale_reason
    from meridian.ledger import Ledger

    snapshot = load_snapshot(repo, facts.branch, use_cache=use_cache)
    if not any(snapshot.phase(g.id) == "passed" for g in facts.gates):
        return []
    statuses = derive_states(Ledger(repo, facts.branch), load_graph(facts.root),
                             folds=snapshot.gate_folds())
    refusals = []
    for status in statuses.values():
        if status.state != "stale":
            continue
        changed = status.changed_files or []
        refusals.append(Refusal(
            reason=f"gate {status.gate} passed, but is stale: {stale_reason(status)}",
            next_step=(f"have the change judged: meridian gate submit {status.gate} "
                       "(or set hooks.block_stale_on_push: false in .meridian/config.yaml)"),
            gate=status.gate, files=changed, details=report.listed(changed)))
    return refusals


MAX_PUSHED_COMMITS = 5000


def _pushed_commits(repo: gitio.Repository, ref: PushedRef) -> list[gitio.CommitInfo]:
    """The commits ``ref`` pushes: not on the remote's ref (or, for a new ref, on no
    remote-tracking ref), newest first, at most MAX_PUSHED_COMMITS."""
    try:
        tip = gitio.Oid(hex=ref.local_sha)
    except ValueError:
        return []
    hide: list[gitio.Oid] = []
    if ref.remote_sha != ZERO:
        try:
            remote = gitio.Oid(hex=ref.remote_sha)
            repo[remote]  # the remote's tip must be known here to stop the walk at it
            hide.append(remote)
        except (ValueError, KeyError):
            pass
    if not hide:
        hide = [oid for name in gitio.list_refs(repo, "refs/remotes/")
                if (oid := gitio.ref_target(repo, name)) is not None]
    out = []
    for info in gitio.walk(repo, tip, hide=hide):
        out.append(info)
        if len(out) >= MAX_PUSHED_COMMITS:
            break
    return out


def _locked_in_commits(repo: gitio.Repository, facts: ProjectFacts, wanted: list[PushedRef],
                       use_cache: bool) -> list[Refusal]:
    """Files of gates locked now, changed by a pushed commit (however it was committed)."""
    if not facts.has_graph or not facts.is_active(LOCKED_RULE):
        return []
    touched: dict[str, list[str]] = {}  # path -> the pushed commits changing it
    for ref in wanted:
        for info in _pushed_commits(repo, ref):
            parent = gitio.commit_tree(repo, info.parents[0]) if info.parents else None
            for path, _, _ in gitio.changed_paths(repo, parent, gitio.commit_tree(repo, info.oid)):
                if facts.gates_for_path(path):
                    commits = touched.setdefault(path, [])
                    if str(info.oid) not in commits:
                        commits.append(str(info.oid))
    if not touched:
        return []
    from meridian.hooks.gate_view import path_decisions
    from meridian.hooks.precommit import need_step

    by_gate: dict[str, list[str]] = {}
    unmet_of: dict[str, list[tuple[str, str]]] = {}
    for decision in path_decisions(repo, facts, sorted(touched), use_cache=use_cache):
        if decision.allowed:
            continue
        gate = next(iter(decision.unmet))
        by_gate.setdefault(gate, []).append(decision.path)
        unmet_of[gate] = decision.unmet[gate]
    refusals = []
    for gate, files in by_gate.items():
        commits = sorted({c[:10] for f in files for c in touched[f]})
        unmet = unmet_of[gate]
        need_text = ", ".join(f"{n} ({state})" for n, state in unmet) or "its needs"
        refusals.append(Refusal(
            reason=(f"pushed commit(s) {', '.join(commits[:5])} change files of gate {gate}, "
                    f"which is locked (needs {need_text}); a commit that skipped the "
                    "pre-commit hook is checked here"),
            next_step=(need_step(*unmet[0]) if unmet else "see `meridian status`")
            + "; then rewrite those commits without the files, or push once the gate opens",
            gate=gate, files=files, details=report.listed(files), mechanism=LOCKED_RULE))
    return refusals


MAX_BASES = 8  # commits the remote has that a pushed line must differ from (merges)


def _push_bases(repo: gitio.Repository, ref: PushedRef,
                pushed: list[gitio.CommitInfo]) -> list[gitio.Oid]:
    """The commits the remote already has that the push builds on: first the one the
    pushed tip's first-parent line reaches (the remote's tip, for a fast-forward), then
    the other parents of pushed commits that are not pushed themselves (merged history).
    Empty for a history pushed from its root."""
    inside = {str(info.oid): info for info in pushed}
    bases: list[gitio.Oid] = []
    at = inside.get(ref.local_sha)
    while at is not None:
        if not at.parents:
            break
        first = at.parents[0]
        at = inside.get(str(first))
        if at is None:
            bases.append(first)
    for info in pushed:
        for parent in info.parents:
            if str(parent) not in inside and parent not in bases and len(bases) < MAX_BASES:
                bases.append(parent)
    return bases


def _stubs_in_push(repo: gitio.Repository, facts: ProjectFacts,
                   wanted: list[PushedRef]) -> list[Refusal]:
    """What the pre-commit hook's staged scan (``hook:staged_heuristics``) would refuse,
    over what the push adds: the findings of the pushed tip's gate files that are new
    against the commits the remote has (``_push_bases``), whatever made the commits (``git commit-tree``, ``cherry-pick``,
    ``am``, ``fast-import``, a clone without hooks fetched back, ``--no-verify``)."""
    if not facts.gates:
        return []
    from meridian.hooks.precommit import _heuristic_refusals, _owners

    refusals: list[Refusal] = []
    seen: set[str] = set()
    for ref in wanted:
        if ref.local_sha in seen:
            continue
        seen.add(ref.local_sha)
        pushed = _pushed_commits(repo, ref)
        if not pushed:
            continue
        bases = _push_bases(repo, ref, pushed)
        tip_tree = gitio.commit_tree(repo, gitio.Oid(hex=ref.local_sha))
        base_tree = gitio.commit_tree(repo, bases[0]) if bases else None
        files = {path: new for path, _, new in gitio.changed_paths(repo, base_tree, tip_tree)}
        owners = _owners(facts, sorted(files))
        if not owners:
            continue
        name = ref.local_ref.removeprefix("refs/heads/")
        commits = ", ".join(str(info.oid)[:10] for info in pushed[:3]) \
            + (" ..." if len(pushed) > 3 else "")
        refusals += _heuristic_refusals(
            repo, facts, owners, files, bases=bases, tip=gitio.Oid(hex=ref.local_sha),
            what=f"the files pushed by {name} (commit(s) {commits})",
            fix=("fix them in a new commit and push again (a commit made past the pre-commit "
                 "hook, by `git commit-tree`, `cherry-pick`, `am`, `fast-import` or in a clone "
                 "without hooks, is scanned here)"))
    return refusals


def _new_token_envs(repo: gitio.Repository, facts: ProjectFacts,
                    wanted: list[PushedRef]) -> list[Refusal]:
    """``approval.token_env`` entries a pushed commit introduced (absent from its parent's
    gates file) and the pushed tip still holds. Locally a ``--no-verify`` commit makes
    one "existing" at HEAD; what the remote already had is the trusted point here."""
    if not facts.has_graph:
        return []
    from meridian.gates.graph import TOKEN_ENV_FIX, token_envs_at

    relative = facts.files[1]
    refusals = []
    for ref in wanted:
        commits = _pushed_commits(repo, ref)
        introduced: dict[tuple[str, str], str] = {}
        for info in commits:
            tree = gitio.commit_tree(repo, info.oid)
            parent = info.parents[0] if info.parents else None
            blob = gitio.tree_entry(repo, tree, relative)
            before = gitio.tree_entry(repo, gitio.commit_tree(repo, parent), relative) \
                if parent is not None else None
            if blob is None or (before is not None and before.id == blob.id):
                continue
            old = token_envs_at(repo, str(parent), relative) if parent is not None else set()
            for entry in token_envs_at(repo, str(info.oid), relative) - old:
                introduced[entry] = str(info.oid)
        still = token_envs_at(repo, ref.local_sha, relative) if commits else set()
        for (gate, variable), commit in sorted(introduced.items()):
            if (gate, variable) not in still:
                continue
            refusals.append(Refusal(
                reason=(f"{relative}: gate {gate}: approval.token_env ${variable} was added by "
                        f"pushed commit {commit[:10]}; token_env is refused in new configs "
                        "(a commit that skipped the pre-commit hook does not make it existing)"),
                next_step=TOKEN_ENV_FIX + "; rewrite that commit, then push again",
                gate=gate))
    return refusals


def _regressions(repo: gitio.Repository, facts: ProjectFacts,
                 warnings: list[str] | None = None, *, use_cache: bool = True) -> list[Refusal]:
    # The comparison itself lives in meridian.evals.baselines (shared with `meridian ci`).
    from meridian.evals import store
    from meridian.evals.baselines import check_baselines
    from meridian.ledger import Ledger

    ledger = Ledger(repo, facts.branch)
    # the pins of each event shard come from a cache that is confirmed on the tip
    # (``store.pinned``): every push would otherwise read every shard
    known = store.baselines(ledger, use_cache=use_cache)
    if warnings is not None:
        for baseline in known:
            if baseline.untrusted:
                from meridian.evals.pins import Decision, Pin, untrusted_text

                pins = list(baseline.untrusted)
                trusted = Pin(baseline.name, baseline.run_id, baseline.commit,
                              baseline.pinned_at or "", False) if baseline.run_id else None
                warnings.append(untrusted_text(Decision(baseline.name, pins[-1], trusted, pins)))
            if baseline.tag_differs is not None:
                where = (f"was moved to {baseline.tag_differs[:12]} outside Meridian"
                         if baseline.tag_differs else
                         "is missing (deleted outside Meridian, or not fetched into this clone)")
                warnings.append(
                    f"tag {store.BASELINE_PREFIX}{baseline.name} {where}: checked against the "
                    f"pinned baseline (run {baseline.run_id}, commit {baseline.commit[:12]}); "
                    "`meridian sync` puts the tag back, `meridian baseline pin` records a new one")
    refusals = []
    for check in check_baselines(ledger, known=known):
        if check.partial and warnings is not None:
            warnings.append(
                f"suite {check.suite}: partial run(s) {', '.join(check.partial[:3])} (--limit, "
                "--tag, a shard or interrupted) not checked against baseline "
                f"{check.baseline}" + ("" if check.comparison is not None else
                                       "; no full run since the baseline"))
        if check.comparison is None and check.ok:
            continue
        if check.uncovered and warnings is not None:
            warnings.append(
                f"baseline {check.baseline} no longer covers {len(check.uncovered)} task(s) of "
                f"suite {check.suite} ({', '.join(check.uncovered[:5])}"
                + (" ..." if len(check.uncovered) > 5 else "") + "): changed or added since; pin "
                f"a new baseline to cover them: meridian baseline pin {check.baseline} "
                f"{check.latest_run}")
        if check.ok:
            continue
        others = check.failures[1:] if check.regressions else check.failures
        what = ([f"{len(check.regressions)} task(s) passed there and fail now"]
                if check.regressions else []) + others
        verb = "regresses against" if check.regressions else "fails the gate against"
        refusals.append(Refusal(
            reason=(f"suite {check.suite}: the latest run {check.latest_run} {verb} baseline "
                    f"{check.baseline} (run {check.baseline_run}): " + "; ".join(what)),
            next_step=(f"see `meridian eval compare {check.latest_run} baseline:{check.baseline}`; "
                       "fix the agent and run the suite again, or, if the change is intended, "
                       "a human pins a new baseline outside an agent session (a pin made in "
                       f"one is never the baseline): meridian baseline pin {check.baseline} "
                       f"{check.latest_run}"),
            details=report.listed(check.regressions), mechanism=REGRESSION_RULE))
    return refusals


def check(path: str, stdin: str, *, use_cache: bool = True) -> Result:
    repo = gitio.open_repo(path)
    root = gitio.workdir(repo)
    result = Result()
    if root is None:
        return result
    from meridian.hooks.precommit import load_or_refuse

    # The push is the last local gate before anything leaves this clone: the project
    # facts and the gate fold are derived again from the files and the state branch,
    # never read from the caches under .git/meridian (plain files an agent can rewrite,
    # recomputing any key or checksum). The recompute also rewrites both caches true.
    # Only the verified-tip marker is used (a cache whose earlier tips are re-checked
    # from the reflog, see meridian.verify); use_cache=False verifies from the root.
    facts = load_or_refuse(repo, root, result, use_cache=False,
                           next_step="fix that file and push again")
    if facts is None:
        return result
    pushed = parse_refs(stdin)
    wanted = relevant(pushed, facts.branch)
    if pushed and not wanted:
        return result  # only Meridian's own refs, or deletions
    result.checked_refs = [p.local_ref for p in wanted]
    if facts.is_active(HEURISTICS_RULE):
        # the content pushed, before anything of the state branch: a stub needs no record
        result.refusals += _stubs_in_push(repo, facts, wanted)
    if gitio.ref_target(repo, f"refs/heads/{facts.branch}") is None:
        from meridian.hooks.state_gone import missing_state

        gone = missing_state(repo, facts.branch) if facts.gates else None
        if gone is not None:  # deleted, not "nothing recorded yet"
            result.refusals.append(Refusal(reason=gone[0], next_step=gone[1] + ", then push again"))
        return result  # nothing recorded here yet, so nothing to regress or go stale
    integrity = _integrity(repo, facts, use_cache)
    result.refusals += integrity
    if integrity:
        return result
    result.refusals += _new_token_envs(repo, facts, wanted)
    result.refusals += _locked_in_commits(repo, facts, wanted, False)
    if facts.block_stale_on_push:
        result.refusals += _stale(repo, facts, False)
    if facts.is_active(REGRESSION_RULE):
        try:
            result.refusals += _regressions(repo, facts, result.warnings, use_cache=use_cache)
        except MeridianError as exc:
            result.warnings.append(f"baselines not compared: {exc}")
    return result


def run(path: str, stdin: str, *, remote: str | None = None, use_cache: bool = True,
        stderr: TextIO | None = None) -> int:
    """The hook: check, record each refusal, say what to do next; 0 or 2."""
    out = stderr or sys.stderr
    result = check(path, stdin, use_cache=use_cache)
    if result.refusals:
        report.record(gitio.open_repo(path), result.branch, result, SOURCE)
    action = f"push to {remote}" if remote else "push"
    for line in report.render(result, SOURCE, action):
        print(line, file=out)
    return 0 if result.ok else 2
