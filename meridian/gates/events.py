"""Data models of the gate events (see the event vocabulary in docs/architecture.md).

Registered with ``meridian.records`` so a malformed event is refused at write time
and reported by ``meridian verify``. ``gate.blocked`` is shared with the hooks, which
may add their own fields, so it alone allows extra keys.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from meridian import records

STARTED = "gate.started"
SUBMITTED = "gate.submitted"
PASSED = "gate.passed"
FAILED = "gate.failed"
EVALUATOR_UNAVAILABLE = "gate.evaluator_unavailable"
APPROVED = "gate.approved"
REOPENED = "gate.reopened"
BLOCKED = "gate.blocked"

GATE_KINDS = (STARTED, SUBMITTED, PASSED, FAILED, EVALUATOR_UNAVAILABLE, APPROVED, REOPENED,
              BLOCKED)
BlockSource = Literal["gate", "evaluator", "pre-commit", "pre-push", "claude"]


class _Event(BaseModel):
    model_config = ConfigDict(extra="forbid")

    gate: str = Field(min_length=1)


@records.register(STARTED)
class Started(_Event):
    estimate_hours: float | None = Field(default=None, gt=0)
    base_commit: str | None = None  # the user's HEAD when work began; diffs start here


@records.register(SUBMITTED)
class Submitted(_Event):
    self_score: float | None = Field(default=None, ge=0, le=10)
    subject: str  # artifact tree id at submission


class UsageData(BaseModel):
    model_config = ConfigDict(extra="allow")

    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = 0.0  # None: the model has no price entry (unknown, not free)
    # Events are stored without nulls: an unknown cost is said by an extra
    # ``cost_unknown: true`` (lifecycle.usage_data), never by a missing cost_usd.


class _Outcome(_Event):
    verdict: str  # path of the verdict document on the state branch
    overall: float
    threshold: float
    evaluator: str
    subject: str
    usage: UsageData = Field(default_factory=UsageData)
    issues: dict[str, int] = Field(default_factory=dict)  # severity -> count
    self_score: float | None = None
    # The verdict's four dimension scores (completeness, correctness, robustness,
    # spec_adherence), so readers such as `meridian health` need not open the verdict
    # document. Events written before it existed have none.
    scores: dict[str, float] | None = None
    # sha256 of the gate's definition (meridian.gates.definition) the verdict was decided
    # under. Events written before it existed have none: their definition is not compared.
    spec_hash: str | None = Field(default=None, pattern=r"^[0-9a-f]{64}$")
    # Model evaluators: who answered (endpoint, request and message ids, responding
    # model, client version) and how much of the evidence they saw.
    identity: dict[str, Any] | None = None
    coverage: dict[str, Any] | None = None
    # What the verdict judged (absent on events written before these existed): its scope
    # ("objective checks only" for the offline evaluator), the dimensions it could not
    # judge, why `kind: auto` fell back, inline exceptions (all / written during the
    # gate) and findings outside the change.
    scope: str | None = None
    not_judged: list[str] | None = None
    fallback: str | None = None
    suppressed: int | None = Field(default=None, ge=0)
    suppressed_added: int | None = Field(default=None, ge=0)
    pre_existing: int | None = Field(default=None, ge=0)


@records.register(PASSED)
class Passed(_Outcome):
    """The verdict passed: overall >= threshold and no high-severity issue."""


@records.register(FAILED)
class FailedVerdict(_Outcome):
    """The verdict failed; the verdict document lists the issues."""


@records.register(EVALUATOR_UNAVAILABLE)
class EvaluatorUnavailableEvent(_Event):
    evaluator: str
    reason: str
    usage: UsageData | None = None  # what the attempts cost, when any were made


@records.register(APPROVED)
class Approved(_Event):
    approver: str
    verdict: str  # the passing verdict this approval is bound to
    subject: str


@records.register(REOPENED)
class Reopened(_Event):
    reason: str = Field(min_length=1)
    base_commit: str | None = None


@records.register(BLOCKED)
class BlockedEvent(BaseModel):
    model_config = ConfigDict(extra="allow")

    gate: str | None = None
    source: BlockSource
    reason: str
    files: list[str] | None = None
