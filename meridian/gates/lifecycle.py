"""The gate lifecycle: start, submit, approve, reopen. Every step is a ledger event.

Refusals that enforce a rule (needs unmet, corrupt memory, approval without a
terminal or with a wrong token) are recorded as ``gate.blocked`` (source ``gate``)
before the command exits 2; plain usage mistakes (unknown gate, starting a gate
twice) are not events.

A gate with ``approval`` passes in two steps, in this order: the evaluator's verdict
passes (the gate shows ``submitted``, awaiting a human), then a human approves that
verdict with the token. The approval is bound to the verdict and its subject, so
changing the artifacts after the verdict means submitting again before approving.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path

from meridian import gitio
from meridian.config import EvaluatorSettings
from meridian.errors import Blocked, MeridianError
from meridian.evaluators.models import (
    Bundle,
    CheckResult,
    MutationReport,
    SuppressedIssue,
    Usage,
    Verdict,
)
from meridian.gates import artifacts, checks, completion
from meridian.gates import definition as gate_definition
from meridian.gates import events as ev
from meridian.gates.definition import evaluator_settings
from meridian.gates.graph import GateSpec
from meridian.gates.project import Project, open_project  # noqa: F401 - re-exported
from meridian.gates.state import GateStatus, derive_states
from meridian.ledger import EVENTS, Ledger, Write
from meridian.records import Record, canonical_json, now_ts

# The web-app template's approval hash: no token hashes to it, so until a human puts
# their token's hash in its place the gate cannot be approved (and is told why).
PLACEHOLDER_TOKEN_SHA256 = "0" * 64


def _require_ledger(project: Project) -> None:
    if not project.ledger.exists():
        raise MeridianError(
            f"no state branch '{project.ledger.branch}' in {project.root}; run `meridian init` first"
        )
    _catch_up_harness(project)


def _refuse_rewound(project: Project, action: str) -> None:
    """A state branch rewound locally is not believed (``verify.rewound``): the gate
    states it gives would hide what the lost tip recorded (a human's reopen)."""
    from meridian.verify import rewound, rewound_text

    problem = rewound(project.ledger)
    if problem is not None:
        raise MeridianError(rewound_text(project.ledger, problem, action))


def _catch_up_harness(project: Project) -> None:
    """Record harness changes of HEAD that skipped the pre-commit hook (meridian.harness)."""
    from meridian import harness

    try:
        harness.catch_up(project.repo, project.ledger, harness.harness_paths(project.root))
    except MeridianError:
        pass  # the gate command still runs; `meridian ci` lists the range regardless


def _refuse(project: Project, gate: str, reason: str) -> Blocked:
    """Record the refusal on the ledger and return the error to raise."""
    project.ledger.emit(ev.BLOCKED, {"gate": gate, "source": "gate", "reason": reason},
                        summary=f"gate.blocked {gate}: {reason}")
    return Blocked(reason)


def _unmet_text(status: GateStatus, statuses: dict[str, GateStatus]) -> str:
    return ", ".join(f"{n} ({statuses[n].state})" for n in status.unmet_needs)


# --- start -------------------------------------------------------------------------


def start_gate(project: Project, gate: str, estimate_hours: float | None = None) -> Record:
    spec = project.graph.gate(gate)
    _require_ledger(project)
    _refuse_rewound(project, f"start {gate}")
    if estimate_hours is not None and not (0 < estimate_hours < math.inf):
        raise MeridianError(f"--estimate: expected hours > 0, got {estimate_hours:g}")
    statuses = derive_states(project.ledger, project.graph)
    status = statuses[gate]
    if status.unmet_needs:
        raise _refuse(project, gate, f"cannot start {gate}: its needs have not passed: "
                                     f"{_unmet_text(status, statuses)}")
    if status.state != "open":
        raise MeridianError(
            f"{gate} is already {status.state} (started {status.started_at}); "
            f"to start over: meridian gate reopen {gate} --reason WHY"
        )
    data: dict[str, object] = {"gate": gate, "base_commit": gitio.head_commit(project.repo)}
    estimate = estimate_hours if estimate_hours is not None else spec.estimate_hours
    if estimate is not None:
        data["estimate_hours"] = estimate
    return project.ledger.emit(ev.STARTED, data)


# --- submit ------------------------------------------------------------------------


@dataclass
class Submission:
    verdict: Verdict
    verdict_path: str
    evidence_path: str
    record: Record
    checks: list[CheckResult]
    notes: list[str]
    warnings: list[str] = field(default_factory=list)  # the verdict stands; something else did not


def submit_gate(project: Project, gate: str, self_score: float | None = None, *,
                progress: checks.CheckProgress | None = None) -> Submission:
    """Run checks, build the bundle, evaluate, record the verdict (pass or fail).

    Raises Blocked when the submission is refused or the evaluator was unavailable
    (the gate is then unchanged). A failing verdict is returned, not raised: the
    caller decides how to present it.
    """
    spec = project.graph.gate(gate)
    _require_ledger(project)
    _refuse_rewound(project, f"submit {gate}")
    if self_score is not None and not 0 <= self_score <= 10:
        raise MeridianError(f"--self-score: expected 0-10, got {self_score:g}")
    ledger = project.ledger
    statuses = derive_states(ledger, project.graph)
    status = statuses[gate]
    if status.unmet_needs:
        raise _refuse(project, gate, f"cannot submit {gate}: its needs have not passed: "
                                     f"{_unmet_text(status, statuses)}")
    if status.state in ("open", "locked"):
        raise MeridianError(f"{gate} has not been started: meridian gate start {gate}")
    if status.state == "passed":
        raise MeridianError(
            f"{gate} already passed and its artifacts are unchanged (verdict {status.verdict}); "
            f"to redo it: meridian gate reopen {gate} --reason WHY"
        )
    problems = _memory_problems(ledger)
    if problems:
        raise _refuse(project, gate, f"cannot submit {gate}: stored memory is corrupt: "
                                     f"{problems[0]} (run `meridian memory verify`)")
    switched_off = _disabled_mechanisms(project.root)
    requirement = spec.features if spec.features and spec.features.hardened else None

    snap = artifacts.snapshot(project.repo, project.root, spec.artifacts)
    if requirement is not None:
        completion.remove_old_report(project.root, requirement)
    results = checks.run_checks(spec.checks, project.root, gate, progress)
    # The check results go into a verdict bound to ``snap.subject``: they must have run
    # on exactly those files, not on something swapped in while they ran.
    after = artifacts.snapshot(project.repo, project.root, spec.artifacts)
    if after.subject != snap.subject:
        changed = gitio.tree_changed_files(project.repo, snap.subject, after.subject) or []
        shown = ", ".join(changed[:5]) + (f" and {len(changed) - 5} more" if len(changed) > 5
                                          else "")
        raise _refuse(project, gate, (
            f"cannot submit {gate}: its artifacts changed while its checks ran "
            f"({shown or 'the artifact set'}); a check must not write to the artifacts. "
            f"Submit again once they are stable: meridian gate submit {gate}"))
    submitted: dict[str, object] = {"gate": gate, "subject": snap.subject}
    if self_score is not None:
        submitted["self_score"] = self_score
    ledger.emit(ev.SUBMITTED, submitted)
    features = completion.Completion()
    if requirement is not None:
        features = completion.judge(project.root, project.config.paths.features, requirement,
                                    results)
        if features.report is not None:
            completion.record(ledger, features.report, gate)

    bundle = build_bundle(project, spec, snap, results, status.base_commit)
    bundle.notes.extend(features.notes)
    mutation = _mutation_check(project, spec, snap, bundle, results, progress)
    # The definition is the one loaded before the checks ran: what the evaluation used,
    # even if a check rewrites gates.yaml (the gate then shows stale).
    defined = gate_definition.definition(project.graph, gate)
    settings = evaluator_settings(project.config, spec)
    if progress is not None:
        from meridian.evaluators import resolve_kind

        progress.evaluating(resolve_kind(settings))
    verdict = _evaluate(project, gate, bundle, settings, self_score, switched_off)
    verdict = completion.add_issues(verdict, features.issues)
    if mutation is not None:
        verdict = _with_mutation(verdict, *mutation)
    verdict = verdict.model_copy(update={"spec_hash": gate_definition.hash_definition(defined)})
    evidence: dict[str, object] = {"definition": defined}
    bound = _definition_files(project, gate, defined)
    if bound is not None:
        evidence["definition_files"] = bound
    if requirement is not None:
        evidence["features"] = features.evidence(requirement)
    submission = _record_verdict(project, verdict, bundle, evidence)
    if verdict.passed:
        try:
            _calibrate(project, gate, status, submission.record.ts)
        except MeridianError as exc:
            # The verdict is recorded and stands; a calibration write that was refused
            # must not make a pass look like a crash.
            submission.warnings.append(f"calibration not recorded: {exc}")
    return submission


def _definition_files(project: Project, gate: str,
                      defined: dict[str, object]) -> dict[str, object] | None:
    """The sha256 of the config, gate graph and features files, Meridian's version and
    the gate graph's order and needs, when loading those files as they are now gives
    ``defined`` (None otherwise: a check rewrote one, it cannot be read). Kept in the
    pass's evidence, so ``status`` can tell that the definition (and the graph) are still
    the verdict's without loading the models (``commands/status_passes.py``)."""
    from meridian.commands.status_passes import definition_files
    from meridian.config import CONFIG_PATH, load_config
    from meridian.gates.graph import load_graph

    programs = defined.get("programs")  # the files a command evaluator runs
    paths = [CONFIG_PATH.as_posix(), project.config.paths.gates, project.config.paths.features,
             *(programs if isinstance(programs, dict) else ())]
    try:
        before = definition_files(project.root, paths)
        graph = load_graph(project.root, load_config(project.root))
        again = gate_definition.definition(graph, gate)
        after = definition_files(project.root, paths)
    except Exception:  # noqa: BLE001 - a file that does not load: nothing recorded
        return None
    if again != defined or after != before:
        return None
    return {**before, "gates": [[spec.id, list(spec.needs)] for spec in graph.ordered()]}


def _mutation_check(project: Project, spec: GateSpec, snap: artifacts.Snapshot, bundle: Bundle,
                    results: list[CheckResult], progress: checks.CheckProgress | None,
                    ) -> tuple[MutationReport, list[SuppressedIssue]] | None:
    """The mutation smoke check (``meridian.gates.mutation``) when it applies: the report
    and the functions an inline ``meridian: allow mutation`` exempted."""
    from meridian.gates import mutation

    if not mutation.applies(spec, snap.files):
        return None
    started = getattr(progress, "mutation_started", None)
    finished = getattr(progress, "mutant_finished", None)
    # An exclude glob written during the gate does not keep its files from mutation.
    kept = [g for g in spec.exclude if g not in bundle.exclude_added]
    report, allowed = mutation.run(project.repo, project.root, spec, snap.files,
                                   bundle.changed_lines, results, exclude=kept,
                                   on_start=started, on_result=finished)
    bundle.notes.append(mutation.bundle_note(report))
    changed = bundle.changed_lines
    exempted = [SuppressedIssue(
        file=target.file, line=line, kind=mutation.CHECK_ID, reason=reason,
        finding_line=target.line, message=f"{target.qualname}: not mutated",
        added=changed is None or any(a <= line <= b for a, b in changed.get(target.file, ())))
        for target, reason, line in allowed]
    return report, exempted


def _with_mutation(verdict: Verdict, report: MutationReport,
                   exempted: list[SuppressedIssue]) -> Verdict:
    from meridian.evaluators.models import with_issues
    from meridian.gates import mutation

    verdict = with_issues(verdict, mutation.issues(
        report, block_pre_existing=verdict.block_pre_existing))
    return verdict.model_copy(update={"mutation": report,
                                      "suppressed": [*verdict.suppressed, *exempted]})


def build_bundle(project: Project, spec: GateSpec, snap: artifacts.Snapshot,
                 results: list[CheckResult], base_commit: str | None) -> Bundle:
    encoding = artifacts.encodings(project.repo, list(snap.files))
    files, notes = artifacts.artifact_files(snap.files, encoding)
    before = artifacts.base_files(project.repo, base_commit, spec.artifacts)
    diff, diff_notes = artifacts.diff_since(project.repo, base_commit, spec.artifacts, snap.files,
                                            before=before, encoding=encoding)
    if not base_commit:
        notes.append("the repository had no commit when the gate started: "
                     "the diff shows every artifact as added, and every line is judged")
    changed = artifacts.changed_lines(base_commit, before, snap.files, encoding)
    from meridian.evaluators.changes import added_allow_notes

    allow_notes = added_allow_notes(
        {f.path: f.content for f in files},
        None if changed is None else {p: tuple(r) for p, r in changed.items()})
    feature_tests, feature_notes = _feature_tests(project)
    notes += feature_notes
    exclude_added = _excludes_added(project, spec, base_commit)
    if exclude_added:
        notes.append("exclude: globs added during this gate (files taken out of the offline "
                     f"scan by the work's author: judge them): {', '.join(exclude_added)}")
    return Bundle(
        gate=spec.id, description=spec.description, acceptance=spec.acceptance,
        artifact_globs=list(spec.artifacts), unmatched_globs=snap.unmatched,
        artifacts=files, checks=results, diff=diff, subject=snap.subject,
        diff_complete=not diff_notes,  # its only note says the diff was cut
        notes=notes + diff_notes + allow_notes, changed_lines=changed,
        exclude_globs=list(spec.exclude), feature_tests=feature_tests,
        exclude_added=exclude_added, linked_dirs=snap.linked,
    )


def _excludes_added(project: Project, spec: GateSpec, base_commit: str | None) -> list[str]:
    """The gate's ``exclude:`` globs that its entry in the gates file at the base commit
    did not have (all of them when the file or the gate was not there)."""
    if not spec.exclude:
        return []
    from meridian import yamlio

    before: list[object] = []
    try:
        relative = (project.root / project.config.paths.gates).resolve().relative_to(
            project.root).as_posix()
        blob = None if not base_commit else gitio.blob_data(gitio.tree_entry(
            project.repo, gitio.commit_tree(project.repo, gitio.Oid(hex=base_commit)),
            relative))
        data = None if blob is None else yamlio.parse(blob.decode("utf-8", "replace"),
                                                      relative).data
    except (MeridianError, ValueError, OSError, KeyError):
        data = None
    gates = data.get("gates") if isinstance(data, dict) else None
    for entry in gates if isinstance(gates, list) else []:
        if isinstance(entry, dict) and entry.get("id") == spec.id \
                and isinstance(entry.get("exclude"), list):
            before = entry["exclude"]
    return [glob for glob in spec.exclude if glob not in before]


def _feature_tests(project: Project) -> tuple[dict[str, list[str]], list[str]]:
    """Feature id -> every test id the features file lists for it ({} without one), so
    the offline scan can tell a change that leaves a feature with no running test."""
    path = project.root / project.config.paths.features
    if not path.is_file():
        return {}, []
    from meridian.features import STAGES, load_features

    try:
        features = load_features(path)
    except MeridianError as exc:
        return {}, [f"features file not read: {exc}"]
    return {feature.id: [t for stage in STAGES for t in getattr(feature.tests, stage)]
            for feature in features}, []


def _evaluate(project: Project, gate: str, bundle: Bundle, settings: EvaluatorSettings,
              self_score: float | None, switched_off: frozenset[str]) -> Verdict:
    from meridian.evaluators import EvaluatorUnavailable, evaluate

    try:
        verdict = evaluate(bundle, settings, disabled_checks=heuristic_checks(switched_off),
                           self_score=self_score, cwd=project.root)
    except EvaluatorUnavailable as exc:
        unavailable: dict[str, object] = {"gate": gate, "evaluator": exc.evaluator,
                                          "reason": exc.reason}
        if exc.usage is not None and exc.usage.attempts:
            unavailable["usage"] = usage_data(exc.usage)
        project.ledger.emit(ev.EVALUATOR_UNAVAILABLE, unavailable)
        raise Blocked(f"{gate}: {exc}; submit again when it is back: "
                      f"meridian gate submit {gate}") from None
    except MeridianError as exc:
        # A misconfigured evaluator gives no verdict either: put the gate back as it was.
        project.ledger.emit(ev.EVALUATOR_UNAVAILABLE, {
            "gate": gate, "evaluator": settings.kind, "reason": f"configuration error: {exc}"})
        raise
    # The verdict is bound to what Meridian gave the evaluator, whatever it echoed back.
    return verdict.model_copy(update={"gate": gate, "subject": bundle.subject})


def usage_data(usage: Usage) -> dict[str, object]:
    """``usage`` for an event. Events are stored without null fields, so an unknown cost
    (``cost_usd`` None) is said with ``cost_unknown: true``: a reader must never take
    the missing cost for 0."""
    data: dict[str, object] = usage.model_dump(mode="json")
    if usage.cost_usd is None:
        data["cost_unknown"] = True
    return data


def _record_verdict(project: Project, verdict: Verdict, bundle: Bundle,
                    extra_evidence: dict[str, object]) -> Submission:
    """The verdict document, its evidence and the pass/fail event: one ledger write.

    ``extra_evidence`` holds the definition itself (so a gate that goes stale because
    its definition changed can say which part changed) and the features' completion.
    """
    gate = verdict.gate
    stamp = now_ts()
    document = verdict.model_dump(mode="json")
    digest = hashlib.sha256((stamp + canonical_json(document)).encode()).hexdigest()[:12]
    verdict_id = stamp[:19].replace("-", "").replace(":", "") + "-" + digest
    verdict_path = f"verdicts/{gate}/{verdict_id}.json"
    evidence_path = f"evidence/{gate}/{verdict_id}.json"
    evidence = {
        "verdict": verdict_path,
        "subject": bundle.subject,
        "artifacts": [a.path for a in bundle.artifacts],
        "unmatched_globs": bundle.unmatched_globs,
        "checks": [c.model_dump(mode="json") for c in bundle.checks],
        "diff_chars": len(bundle.diff),
        "notes": bundle.notes,
        **extra_evidence,
    }
    counts: dict[str, int] = {}
    for issue in verdict.issues:
        counts[issue.severity] = counts.get(issue.severity, 0) + 1
    kind = ev.PASSED if verdict.passed else ev.FAILED
    data: dict[str, object] = {
        "gate": gate, "verdict": verdict_path, "overall": verdict.overall,
        "threshold": verdict.threshold, "evaluator": verdict.evaluator,
        "subject": verdict.subject, "usage": usage_data(verdict.usage),
        "issues": counts, "scores": dict(verdict.scores), "spec_hash": verdict.spec_hash,
    }
    if verdict.self_score is not None:
        data["self_score"] = verdict.self_score
    if verdict.identity is not None:
        data["identity"] = verdict.identity.model_dump(mode="json")
    if verdict.coverage is not None:
        data["coverage"] = verdict.coverage.model_dump(mode="json", exclude={"unseen"})
    # What the verdict judged, so status, health and the session context can say it.
    if verdict.scope:
        data["scope"] = verdict.scope
    if verdict.not_judged:
        data["not_judged"] = list(verdict.not_judged)
    if verdict.fallback:
        data["fallback"] = verdict.fallback
    if verdict.suppressed:
        data["suppressed"] = len(verdict.suppressed)
        data["suppressed_added"] = sum(s.added for s in verdict.suppressed)
    pre_existing = sum(i.pre_existing for i in verdict.issues)
    if pre_existing:
        data["pre_existing"] = pre_existing
    ledger = project.ledger
    record = ledger.record(kind, data, ts=stamp)
    outcome = "passed" if verdict.passed else "failed"
    write = Write(
        summary=f"{kind} {gate}: overall {verdict.overall} vs {verdict.threshold} ({verdict.evaluator})",
        trailers={"Meridian-Event": kind, "Meridian-Gate": gate, "Meridian-Record": record.id,
                  "Meridian-Verdict": verdict_path, "Meridian-Outcome": outcome},
        blobs={
            verdict_path: (json.dumps(document, indent=2, sort_keys=True) + "\n").encode(),
            evidence_path: (json.dumps(evidence, indent=2, sort_keys=True) + "\n").encode(),
        },
    ).add(EVENTS, record)
    ledger.commit(write)
    return Submission(verdict=verdict, verdict_path=verdict_path, evidence_path=evidence_path,
                      record=record, checks=list(bundle.checks), notes=list(bundle.notes))


def _calibrate(project: Project, gate: str, status: GateStatus, passed_at: str) -> None:
    """Predicted vs actual hours, once the work passed its verdict.

    Actual is the active time from the latest start (or reopen) to the passing verdict
    (``memory.calibration``: Claude sessions and commits, idle gaps cut); time spent
    waiting for a human approval is not the agent's work and is not counted.
    """
    if status.started_at is None:
        return
    from meridian.memory.calibration import record_pass

    record_pass(project.ledger, gate, project.graph.gate(gate).artifacts, status.estimate_hours,
                status.started_at, passed_at,
                idle_cut_minutes=project.config.calibration.idle_cut_minutes)


# --- approve -----------------------------------------------------------------------


def approve_gate(project: Project, gate: str, token: str | None, *, interactive: bool) -> Record:
    spec = project.graph.gate(gate)
    _require_ledger(project)
    _refuse_rewound(project, f"approve {gate}")
    if spec.approval is None:
        raise MeridianError(f"{gate} has no approval step (no `approval:` in {project.graph.path})")
    if not interactive and not project.config.approval.allow_non_interactive:
        raise _refuse(project, gate, (
            f"refusing to approve {gate}: standard input is not a terminal. A human approves "
            "from a terminal; an agent must not approve on a human's behalf "
            "(approval.allow_non_interactive in .meridian/config.yaml overrides this)"))
    status = derive_states(project.ledger, project.graph)[gate]
    if status.state == "passed":
        raise MeridianError(f"{gate} is already approved (by {status.approver})")
    if not status.awaiting_approval or status.verdict is None or status.subject is None:
        raise _refuse(project, gate, (
            f"cannot approve {gate}: it has no passing verdict awaiting approval "
            f"(state {status.state}); first: meridian gate submit {gate}"))
    current = artifacts.snapshot(project.repo, project.root, spec.artifacts).subject
    if current != status.subject:
        raise _refuse(project, gate, (
            f"cannot approve {gate}: its artifacts changed since the verdict; "
            f"submit again: meridian gate submit {gate}"))
    if status.spec_hash and gate_definition.spec_hash(project.graph, gate) != status.spec_hash:
        raise _refuse(project, gate, (
            f"cannot approve {gate}: its definition (gates.yaml entry or evaluator settings) "
            f"changed since the verdict; submit again: meridian gate submit {gate}"))
    if token is None:
        raise MeridianError(f"gate approve {gate}: --token TOKEN is required without a terminal")
    if not _token_matches(spec, token):
        raise _refuse(project, gate, f"wrong approval token for {gate}")
    problems = _memory_problems(project.ledger)
    if problems:
        raise _refuse(project, gate, f"cannot approve {gate}: stored memory is corrupt: "
                                     f"{problems[0]} (run `meridian memory verify`)")
    name, email = gitio.identity(project.repo)
    return project.ledger.emit(ev.APPROVED, {
        "gate": gate, "approver": f"{name} <{email}>", "verdict": status.verdict,
        "subject": status.subject,
    })


def _token_matches(spec: GateSpec, token: str) -> bool:
    approval = spec.approval
    assert approval is not None
    if approval.token_sha256 is not None:
        if approval.token_sha256 == PLACEHOLDER_TOKEN_SHA256:
            raise MeridianError(
                f"{spec.id}: approval.token_sha256 is still the template's placeholder (64 "
                "zeros), which no token matches; put the sha256 of your token there: "
                "printf %s TOKEN | sha256sum")
        given = hashlib.sha256(token.encode()).hexdigest()
        return hmac.compare_digest(given, approval.token_sha256.lower())
    assert approval.token_env is not None
    expected = os.environ.get(approval.token_env)
    if not expected:
        raise MeridianError(
            f"{spec.id}: approval.token_env names ${approval.token_env}, which is not set in "
            "this environment; set it where the human approves"
        )
    return hmac.compare_digest(token.encode(), expected.encode())


# --- reopen ------------------------------------------------------------------------


def reopen_gate(project: Project, gate: str, reason: str) -> Record:
    project.graph.gate(gate)
    _require_ledger(project)
    if not reason.strip():
        raise MeridianError("--reason: say why the gate is reopened")
    status = derive_states(project.ledger, project.graph, check_stale=False)[gate]
    if status.state in ("open", "locked"):
        raise MeridianError(f"{gate} has not been started; nothing to reopen")
    if status.state == "in_progress":
        raise MeridianError(f"{gate} is already in progress (since {status.started_at})")
    # The base the gate had (the commit it was first started at), not HEAD now: code
    # committed since its last pass (past the hooks, --no-verify) is judged as new, never
    # laundered as "pre-existing" by a reopen (docs/gates.md, "Reopening").
    base = status.base_commit or gitio.head_commit(project.repo)
    return project.ledger.emit(ev.REOPENED, {
        "gate": gate, "reason": reason.strip(), "base_commit": base,
    })


# --- memory and rules (issue 4) ----------------------------------------------------


def _memory_problems(ledger: Ledger) -> list[str]:
    """``file:line: reason`` for each corrupt memory record; corrupt memory blocks a gate."""
    from meridian.memory.verify import check_memory

    return check_memory(ledger)


def _disabled_mechanisms(root: Path) -> frozenset[str]:
    """Mechanisms switched off by retired rules (e.g. ``heuristic:stub_code``)."""
    from meridian.rules import disabled_mechanisms

    return disabled_mechanisms(root)


# Never switched off, whatever a rules file says (rules.ALWAYS_ON refuses to retire it):
# the evaluators' objective finding for a failing check is what fails a gate whose
# check failed, whichever evaluator ran.
ALWAYS_ON_CHECKS = frozenset({"failing_check"})


def heuristic_checks(mechanisms: frozenset[str]) -> frozenset[str]:
    """Heuristic check ids among ``mechanisms`` (``heuristic:stub_code`` -> ``stub_code``)."""
    prefix = "heuristic:"
    return frozenset(m[len(prefix):] for m in mechanisms
                     if m.startswith(prefix)) - ALWAYS_ON_CHECKS
