"""The contract between gates and evaluators: the evidence bundle and the verdict.

Meridian computes pass/fail itself from the scores and the issues (``decide``);
whatever label an evaluator prints is never trusted.
"""

from __future__ import annotations

from collections.abc import Iterable

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


class Issue(_Model):
    severity: Severity
    file: str | None = None
    line: int | None = Field(default=None, ge=1)
    message: str
    check: str | None = None  # heuristic check id, e.g. "stub_code"

    def where(self) -> str:
        if self.file and self.line:
            return f"{self.file}:{self.line}"
        return self.file or "(project)"


def ordered_issues(issues: Iterable[Issue]) -> list[Issue]:
    """Highest severity first, then by file and line: how issues are stored and shown."""
    return sorted(issues, key=lambda i: (SEVERITY_ORDER[i.severity], i.file or "", i.line or 0))


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

    def blocking(self) -> list[Issue]:
        return ordered_issues(self.issues)


def weighted_overall(scores: dict[str, float], weights: dict[str, float]) -> float:
    total = sum(weights.get(d, 0.0) for d in DIMENSIONS)
    if total <= 0:
        raise ValueError("dimension weights must sum to more than 0")
    return round(sum(scores[d] * weights.get(d, 0.0) for d in DIMENSIONS) / total, 2)


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
) -> Verdict:
    """The only place pass/fail is computed: overall >= threshold and no high issue.

    A verdict whose evaluator did not see every changed line (``coverage``) never
    passes: the facade adds a high issue saying what was not seen, and this refuses a
    pass even without it.
    """
    missing = [d for d in DIMENSIONS if d not in scores]
    if missing:
        raise ValueError(f"scores missing dimensions: {', '.join(missing)}")
    for name, value in scores.items():
        if not 0 <= value <= 10:  # NaN fails this too
            raise ValueError(f"score {name}={value} outside 0-10")
    weights = dict(weights or DEFAULT_WEIGHTS)
    overall = weighted_overall(scores, weights)
    passed = overall >= threshold and not any(i.severity == "high" for i in issues) \
        and (coverage is None or coverage.complete)
    return Verdict(
        gate=gate, evaluator=evaluator, subject=subject,
        scores={d: float(scores[d]) for d in DIMENSIONS}, weights=weights,
        overall=overall, threshold=threshold, passed=passed,
        issues=ordered_issues(issues),
        summary=summary, usage=usage or Usage(), self_score=self_score,
        identity=identity, coverage=coverage,
    )
