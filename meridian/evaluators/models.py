"""The contract between gates and evaluators: the evidence bundle and the verdict.

Meridian computes pass/fail itself from the scores and the issues (``decide``);
whatever label an evaluator prints is never trusted.

A verdict says what it judged: ``scores`` holds only the dimensions the evaluator
judged (the offline evaluator cannot judge spec adherence, so it lists it in
``not_judged`` instead of awarding 10), ``overall`` is weighted over those, and
``scope`` labels a verdict of objective checks only. An issue outside the lines the
gate changed is ``pre_existing``: reported, blocking only under
``evaluator.block_pre_existing``. Stored verdicts written before these fields existed
read with their defaults (all four dimensions judged, nothing pre-existing).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from meridian.evaluators.findings import SEVERITY_ORDER, Severity

DIMENSIONS = ("completeness", "correctness", "robustness", "spec_adherence")
DEFAULT_WEIGHTS = {"completeness": 0.25, "correctness": 0.35, "robustness": 0.2,
                   "spec_adherence": 0.2}


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ArtifactFile(_Model):
    path: str
    content: str
    truncated: bool = False
    # When truncated: the length of the whole text (None: binary, no text to show).
    total_chars: int | None = None


class CheckResult(_Model):
    command: str
    exit_code: int | None  # None: timed out or could not start
    output: str = ""
    duration_s: float = 0.0
    timed_out: bool = False

    @property
    def passed(self) -> bool:
        return self.exit_code == 0 and not self.timed_out


class Bundle(_Model):
    """Everything an evaluator may read: nothing about who built it or how they feel."""

    gate: str
    description: str = ""
    acceptance: str = ""
    artifact_globs: list[str] = Field(default_factory=list)
    unmatched_globs: list[str] = Field(default_factory=list)  # declared, matched nothing
    artifacts: list[ArtifactFile] = Field(default_factory=list)
    checks: list[CheckResult] = Field(default_factory=list)
    diff: str = ""  # unified diff of the artifacts since the gate started
    diff_complete: bool = True  # False: the diff was cut when collected
    subject: str  # git tree id of exactly the artifact files read
    notes: list[str] = Field(default_factory=list)  # e.g. what was trimmed
    # path -> [[first, last], ...]: the artifact lines added or changed since the gate's
    # base commit (an unchanged file is absent). None: no base commit, judge everything.
    changed_lines: dict[str, list[tuple[int, int]]] | None = None
    # Globs (the gate's ``exclude:``) of artifact files the offline scan does not judge.
    exclude_globs: list[str] = Field(default_factory=list)
    # Feature id -> the test ids the features file lists for it (all stages): a change
    # touching a feature all of whose tests are switched off leaves it with none running.
    feature_tests: dict[str, list[str]] = Field(default_factory=dict)
    # The ``exclude:`` globs added since the gate's base commit: the work's author took
    # files out of the scan during the gate, which is evidence.
    exclude_added: list[str] = Field(default_factory=list)
    # A symlink to a directory -> the paths below it the artifact globs match that are no
    # artifact at their own path: the link is stored as its target path, so nothing
    # behind it is judged (``artifacts.Snapshot.linked``).
    linked_dirs: dict[str, list[str]] = Field(default_factory=dict)


class Issue(_Model):
    severity: Severity
    file: str | None = None
    line: int | None = Field(default=None, ge=1)
    message: str
    check: str | None = None  # heuristic check id, e.g. "stub_code"
    # Outside the lines the gate changed (offline scan findings only): not blocking
    # unless the gate's evaluator settings say ``block_pre_existing: true``.
    pre_existing: bool = False

    def where(self) -> str:
        if self.file and self.line:
            return f"{self.file}:{self.line}"
        return self.file or "(project)"


def ordered_issues(issues: Iterable[Issue]) -> list[Issue]:
    """Highest severity first, then by file and line: how issues are stored and shown."""
    return sorted(issues, key=lambda i: (SEVERITY_ORDER[i.severity], i.file or "", i.line or 0))


class SuppressedIssue(_Model):
    """A finding an inline ``meridian: allow KIND -- reason`` marker allowed."""

    file: str
    line: int  # the marker's line
    kind: str
    reason: str
    finding_line: int | None = None
    message: str
    added: bool = False  # the marker was written during this gate (part of its change)

    def where(self) -> str:
        return f"{self.file}:{self.line}"


MutantOutcome = Literal["killed", "survived", "timeout", "error", "not_tried"]


class MutantResult(_Model):
    """One changed function of the mutation smoke check: its body replaced by a raise,
    the gate's checks run against it. ``killed``: a check failed (the checks need the
    function); ``survived``: every check still passed (they do not exercise it: a high
    issue); ``timeout``: a check outlived its limit under the mutant; ``error``: no
    result (the mutant could not be built or run); ``not_tried``: beyond the budget."""

    function: str  # qualified name, e.g. "Cache.get"
    file: str
    line: int = Field(ge=1)  # the ``def`` line
    outcome: MutantOutcome
    duration_s: float = 0.0
    detail: str = ""  # the check that failed, the limit that was hit, why not tried

    def where(self) -> str:
        return f"{self.file}:{self.line}"


class MutationReport(_Model):
    """What the mutation smoke check did for a verdict (``gate submit``)."""

    mutants: list[MutantResult] = Field(default_factory=list)
    max_functions: int
    timeout_s: float
    duration_s: float = 0.0
    workers: int = 1  # mutants run at the same time
    note: str = ""  # why it did not run, or what limited it
    # False: the gate had no base commit, every function counted as changed (old code
    # included), so a surviving mutant is reported without blocking, unless
    # ``block_pre_existing`` says findings outside a change block too.
    scoped: bool = True
    # The control: a changed function's file rewritten with a raise that never runs
    # (what it does unchanged). Checks that fail under it notice the copy or the
    # rewrite, not the missing work: their kills say nothing (a high issue).
    control: MutantResult | None = None

    def counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for mutant in self.mutants:
            counts[mutant.outcome] = counts.get(mutant.outcome, 0) + 1
        return counts


class Usage(_Model):
    """Tokens and cost of an evaluation, every request and every retried attempt included.

    ``input_tokens`` are the uncached input tokens; cache writes and reads are counted
    apart (they are priced apart). ``cost_usd`` is None when the model has no price
    entry: unknown, never a made-up 0.
    """

    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0
    attempts: int = 0  # HTTP requests made (0: not an API evaluator)
    cost_usd: float | None = 0.0


class EvaluatorIdentity(_Model):
    """Who answered: recorded with a model evaluator's verdict, shown by status and why."""

    kind: str  # "anthropic", "claude-code"
    endpoint: str | None = None  # the API base URL the requests went to
    requested_model: str | None = None
    models: list[str] = Field(default_factory=list)  # the model(s) that answered
    request_ids: list[str] = Field(default_factory=list)
    message_ids: list[str] = Field(default_factory=list)
    client: str | None = None  # e.g. "anthropic-python 2.14.0", "claude-code 2.1.3"
    session_id: str | None = None

    def describe(self) -> str:
        parts = [f"{self.kind}"]
        if self.endpoint:
            parts.append(f"at {self.endpoint}")
        if self.models:
            parts.append(f"answered by {', '.join(self.models)}")
        if self.message_ids:
            parts.append(f"message {', '.join(self.message_ids)}")
        if self.request_ids:
            parts.append(f"request {', '.join(self.request_ids)}")
        if self.session_id:
            parts.append(f"session {self.session_id}")
        if self.client:
            parts.append(f"via {self.client}")
        return " ".join(parts)


class Coverage(_Model):
    """How much of the evidence the evaluator was shown."""

    bytes_seen: int
    bytes_total: int
    changed_lines_seen: int
    changed_lines_total: int
    requests: int = 1
    unseen: list[str] = Field(default_factory=list)  # what was left out, one line each

    @property
    def complete(self) -> bool:
        return (self.changed_lines_seen >= self.changed_lines_total
                and self.bytes_seen >= self.bytes_total and not self.unseen)

    def describe(self) -> str:
        return (f"saw {self.bytes_seen} of {self.bytes_total} bytes and "
                f"{self.changed_lines_seen} of {self.changed_lines_total} changed lines "
                f"in {self.requests} request(s)")


class Verdict(_Model):
    gate: str
    evaluator: str  # "heuristic", "anthropic:<model>", "command:<program>"
    subject: str
    scores: dict[str, float]
    weights: dict[str, float] = Field(default_factory=lambda: dict(DEFAULT_WEIGHTS))
    overall: float
    threshold: float
    passed: bool
    issues: list[Issue] = Field(default_factory=list)
    summary: str = ""
    usage: Usage = Field(default_factory=Usage)
    self_score: float | None = None
    # Model evaluators only: who answered, and how much of the evidence they saw.
    identity: EvaluatorIdentity | None = None
    coverage: Coverage | None = None
    # Set by the gate lifecycle: the hash of the gate definition this verdict was decided
    # under (meridian.gates.definition). Evaluators never see or set it.
    spec_hash: str | None = None
    # What the verdict could not judge (absent from ``scores``), and its label:
    # "objective checks only" for the offline evaluator.
    not_judged: list[str] = Field(default_factory=list)
    scope: str | None = None
    fallback: str | None = None  # why ``kind: auto`` ran the offline evaluator
    block_pre_existing: bool = False  # pre-existing high issues blocked this verdict
    suppressed: list[SuppressedIssue] = Field(default_factory=list)
    excluded: list[str] = Field(default_factory=list)  # artifact files the scan skipped
    exclude_added: list[str] = Field(default_factory=list)  # exclude globs added in the gate
    # The mutation smoke check's mutants (None: it did not apply or was switched off).
    mutation: MutationReport | None = None

    def judged(self) -> list[str]:
        return [d for d in DIMENSIONS if d in self.scores]

    def blocking(self) -> list[Issue]:
        return ordered_issues(self.issues)


def weighted_overall(scores: dict[str, float], weights: dict[str, float]) -> float:
    """The weighted mean over the dimensions present in ``scores`` (the judged ones)."""
    judged = [d for d in DIMENSIONS if d in scores]
    total = sum(weights.get(d, 0.0) for d in judged)
    if total <= 0:
        raise ValueError("dimension weights must sum to more than 0")
    return round(sum(scores[d] * weights.get(d, 0.0) for d in judged) / total, 2)


def blocks(issue: Issue, *, block_pre_existing: bool = False) -> bool:
    """A high issue blocks a pass, unless it is pre-existing and those do not block."""
    return issue.severity == "high" and (block_pre_existing or not issue.pre_existing)


def decide(
    *,
    gate: str,
    evaluator: str,
    subject: str,
    scores: dict[str, float],
    issues: list[Issue],
    threshold: float,
    weights: dict[str, float] | None = None,
    summary: str = "",
    usage: Usage | None = None,
    self_score: float | None = None,
    identity: EvaluatorIdentity | None = None,
    coverage: Coverage | None = None,
    not_judged: Iterable[str] = (),
    block_pre_existing: bool = False,
    **extra: object,
) -> Verdict:
    """The only place pass/fail is computed: overall (over the judged dimensions) >=
    threshold and no blocking high issue. ``extra``: the verdict's descriptive fields
    (``scope``, ``fallback``, ``suppressed``, ``excluded``).

    A verdict whose evaluator did not see every changed line (``coverage``) never
    passes: the facade adds a high issue saying what was not seen, and this refuses a
    pass even without it.
    """
    unjudged = [d for d in DIMENSIONS if d in set(not_judged)]
    missing = [d for d in DIMENSIONS if d not in scores and d not in unjudged]
    if missing:
        raise ValueError(f"scores missing dimensions: {', '.join(missing)}")
    if len(unjudged) == len(DIMENSIONS):
        raise ValueError("no dimension was judged")
    for name, value in scores.items():
        if not 0 <= value <= 10:  # NaN fails this too
            raise ValueError(f"score {name}={value} outside 0-10")
    weights = dict(weights or DEFAULT_WEIGHTS)
    judged = {d: float(scores[d]) for d in DIMENSIONS if d not in unjudged}
    overall = weighted_overall(judged, weights)
    passed = overall >= threshold and not any(
        blocks(i, block_pre_existing=block_pre_existing) for i in issues) \
        and (coverage is None or coverage.complete)
    return Verdict(
        gate=gate, evaluator=evaluator, subject=subject,
        scores=judged, weights=weights,
        overall=overall, threshold=threshold, passed=passed,
        issues=ordered_issues(issues),
        summary=summary, usage=usage or Usage(), self_score=self_score,
        identity=identity, coverage=coverage,
        not_judged=unjudged, block_pre_existing=block_pre_existing,
        **extra,  # type: ignore[arg-type]
    )


def with_issues(verdict: Verdict, issues: Iterable[Issue]) -> Verdict:
    """``verdict`` with more issues, pass/fail decided again by ``decide``; every other
    field (what was judged, suppressions, identity, spec_hash) is kept."""
    added = list(issues)
    if not added:
        return verdict
    kept = verdict.model_dump(exclude={
        "gate", "evaluator", "subject", "scores", "weights", "overall", "threshold", "passed",
        "issues", "summary", "usage", "self_score", "not_judged", "block_pre_existing",
        "identity", "coverage"})
    decided = decide(
        gate=verdict.gate, evaluator=verdict.evaluator, subject=verdict.subject,
        scores=verdict.scores, issues=[*verdict.issues, *added], threshold=verdict.threshold,
        weights=verdict.weights, summary=verdict.summary, usage=verdict.usage,
        self_score=verdict.self_score, identity=verdict.identity, coverage=verdict.coverage,
        not_judged=verdict.not_judged, block_pre_existing=verdict.block_pre_existing)
    return Verdict.model_validate({**decided.model_dump(), **kept})
