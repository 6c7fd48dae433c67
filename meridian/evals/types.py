"""The data model of the evaluation harness: Task, Step, Trajectory, Score, TaskResult.

Everything here is plain pydantic v2 and JSON-serialisable. Field order is the
serialisation order, so ``model_dump_json()`` of equal values gives equal bytes; the
run store builds byte-deterministic run files on that. Models that read what a user
or an external agent wrote (``Task``, ``GraderSpec``, ``Step``, ``Trajectory``) forbid
unknown keys, so a typo is reported instead of silently ignored.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue, field_validator, model_validator

Status = Literal["pass", "fail", "infra_error"]
STATUSES: tuple[Status, ...] = ("pass", "fail", "infra_error")

# What a runner uses when neither the task nor the suite defaults name a timeout.
DEFAULT_TIMEOUT_S = 30.0

# What an agent is always shown of a task, and what a suite may additionally reveal
# with ``visible: [...]``. Graders never leave the harness.
ALWAYS_VISIBLE = ("id", "input", "metadata", "timeout_s")
MAY_BE_VISIBLE = ("expected", "expected_tools", "reference_steps", "tags", "difficulty",
                  "cost_budget_usd", "latency_budget_s")


class _Strict(BaseModel):
    # No NaN or infinity anywhere: a run file is strict JSON (``allow_nan=False``), so a
    # non-finite number must be refused where it enters (a suite, an agent's output).
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)


class GraderSpec(_Strict):
    """One grader a task is scored by: its registered name and keyword arguments."""

    name: str = Field(min_length=1)
    args: dict[str, JsonValue] = Field(default_factory=dict)

    def label(self) -> str:
        """``name`` or ``name(k=v, ...)`` for tables and error messages."""
        if not self.args:
            return self.name
        inner = ", ".join(f"{key}={value!r}" for key, value in sorted(self.args.items()))
        return f"{self.name}({inner})"


class Task(_Strict):
    """One evaluation task, after suite defaults are merged in."""

    id: str = Field(min_length=1)
    input: JsonValue
    expected: JsonValue = None
    graders: list[GraderSpec] = Field(default_factory=list)
    expected_tools: list[str] = Field(default_factory=list)
    reference_steps: int | None = Field(default=None, ge=0)
    tags: list[str] = Field(default_factory=list)
    difficulty: str | None = None
    timeout_s: float | None = Field(default=None, gt=0)
    cost_budget_usd: float | None = Field(default=None, ge=0)
    latency_budget_s: float | None = Field(default=None, gt=0)
    metadata: dict[str, JsonValue] = Field(default_factory=dict)
    # Fields besides ALWAYS_VISIBLE the agent is shown (targets stay hidden by default).
    visible: list[str] = Field(default_factory=list)

    @field_validator("visible")
    @classmethod
    def _known_visible(cls, value: list[str]) -> list[str]:
        for name in value:
            if name in ALWAYS_VISIBLE:
                continue
            if name == "graders" or name == "grader":
                raise ValueError("graders are never shown to the agent")
            if name not in MAY_BE_VISIBLE:
                raise ValueError(f"{name!r} is not a task field an agent can be shown "
                                 f"(one of: {', '.join(MAY_BE_VISIBLE)})")
        return sorted(set(value) - set(ALWAYS_VISIBLE))

    def effective_timeout_s(self) -> float:
        return self.timeout_s if self.timeout_s is not None else DEFAULT_TIMEOUT_S

    def definition_hash(self) -> str:
        """sha256 of this task's canonical definition: compare matches tasks by id AND
        this, so a task whose input, target or graders changed is not compared."""
        import hashlib

        from meridian.records import canonical_json

        payload = canonical_json(self.model_dump(mode="json"))
        # surrogatepass: a JSON value may hold a lone surrogate (pydantic's JsonValue
        # keeps one a forged run file escapes as \ud800); it hashes, never raises
        return hashlib.sha256(payload.encode("utf-8", "surrogatepass")).hexdigest()

    def for_agent(self) -> AgentTask:
        """What the agent is handed: id, input, metadata, the timeout, and only the
        fields the suite lists under ``visible:``. Never graders or (unless listed)
        the target and references."""
        shown: dict[str, Any] = {"id": self.id, "input": self.input, "metadata": self.metadata,
                                 "timeout_s": self.effective_timeout_s()}
        for name in self.visible:
            shown[name] = getattr(self, name)
        return AgentTask(**shown)


class AgentTask(_Strict):
    """A task as an agent sees it (the ``command:`` protocol's input, version 1).

    Fields the suite did not make visible are absent from the JSON and ``None`` here.
    """

    id: str = Field(min_length=1)
    input: JsonValue
    metadata: dict[str, JsonValue] = Field(default_factory=dict)
    timeout_s: float = Field(default=DEFAULT_TIMEOUT_S, gt=0)
    expected: JsonValue = None
    expected_tools: list[str] | None = None
    reference_steps: int | None = None
    tags: list[str] | None = None
    difficulty: str | None = None
    cost_budget_usd: float | None = None
    latency_budget_s: float | None = None

    def effective_timeout_s(self) -> float:
        return self.timeout_s


class Step(_Strict):
    """One recorded action of an agent: an LLM call, a tool call, or anything else.

    ``started_at`` is seconds since the trajectory started (an offset, not a wall-clock
    timestamp), so a trajectory says when each step ran relative to the others
    without embedding the date of the run.
    """

    index: int = Field(ge=0)
    kind: str = Field(min_length=1)  # "llm", "tool", or an agent-specific kind
    name: str = Field(min_length=1)
    input: JsonValue = None
    output: JsonValue = None
    error: str | None = None
    started_at: float = Field(default=0.0, ge=0)
    latency_s: float = Field(default=0.0, ge=0)
    tokens_in: int = Field(default=0, ge=0)
    tokens_out: int = Field(default=0, ge=0)
    cost_usd: float = Field(default=0.0, ge=0)

    @property
    def failed(self) -> bool:
        return self.error is not None


class Trajectory(_Strict):
    """Everything an agent did for one task, and what it answered.

    ``completed`` is True when the agent terminated normally with an answer.
    ``cost_usd``, ``tokens_in`` and ``tokens_out`` default to the sums over the
    steps when the producer leaves them out (agents speaking JSON over stdin/stdout
    may report only steps). ``latency_s`` is wall time of the whole run: once the
    runner has it, the harness's own clock around the agent call, with what the
    agent said kept in ``reported_latency_s``. ``usage_reported`` is False when the
    agent reported no tokens and no cost anywhere (its cost figure is then unknown,
    not zero).
    """

    task_id: str = Field(min_length=1)
    steps: list[Step] = Field(default_factory=list)
    final_output: JsonValue = None
    completed: bool = False
    error: str | None = None
    latency_s: float = Field(default=0.0, ge=0)
    cost_usd: float = Field(default=0.0, ge=0)
    tokens_in: int = Field(default=0, ge=0)
    tokens_out: int = Field(default=0, ge=0)
    reported_latency_s: float | None = Field(default=None, ge=0)

    @property
    def usage_reported(self) -> bool:
        return (self.cost_usd > 0 or self.tokens_in > 0 or self.tokens_out > 0
                or any(s.cost_usd > 0 or s.tokens_in > 0 or s.tokens_out > 0 for s in self.steps))

    @model_validator(mode="before")
    @classmethod
    def _totals_from_steps(cls, data: Any) -> Any:
        if not isinstance(data, dict) or not isinstance(data.get("steps"), list):
            return data
        steps = [s for s in data["steps"] if isinstance(s, dict | Step)]
        if len(steps) != len(data["steps"]):
            return data  # let field validation report the malformed step
        filled = dict(data)

        def total(field: str) -> Any:
            return sum(
                (s.get(field, 0) if isinstance(s, dict) else getattr(s, field)) or 0
                for s in steps
            )

        for field in ("cost_usd", "tokens_in", "tokens_out"):
            if field not in filled:
                try:
                    filled[field] = total(field)
                except TypeError:
                    return data  # a non-numeric step value; the step model reports it
        return filled

    @property
    def tokens(self) -> int:
        return self.tokens_in + self.tokens_out

    @property
    def tool_steps(self) -> list[Step]:
        return [step for step in self.steps if step.kind == "tool"]

    @property
    def errored_steps(self) -> list[Step]:
        return [step for step in self.steps if step.failed]


class Usage(BaseModel):
    """Tokens and money a grader itself spent (only model-backed graders spend any)."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    tokens_in: int = Field(default=0, ge=0)
    tokens_out: int = Field(default=0, ge=0)
    cost_usd: float = Field(default=0.0, ge=0)


class Score(BaseModel):
    """The verdict of one grader on one trajectory.

    ``infra_error`` means the grader could not judge (an API outage, say): the score
    is neither a pass nor a failure, and the task's status becomes ``infra_error``.
    """

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    name: str
    value: float = Field(ge=0.0, le=1.0)
    passed: bool
    detail: str = ""
    infra_error: bool = False
    usage: Usage | None = None
    # Structured per-grader details (what was read, matched, counted), for the trace
    # and the HTML report; JSON values only, so the run file stays strict JSON.
    metadata: dict[str, JsonValue] = Field(default_factory=dict)


class TaskResult(BaseModel):
    """One task attempted once (one epoch): its status, scores and trajectory."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    task_id: str
    epoch: int = Field(default=0, ge=0)
    status: Status
    scores: list[Score] = Field(default_factory=list)
    trajectory: Trajectory | None = None
    # Why the trial failed without a verdict on its answer: an infra error's cause, or
    # the agent's own failure (it raised, printed garbage, exited non-zero, timed out).
    error: str | None = None
    attempts: int = Field(default=1, ge=1)

    @property
    def passed(self) -> bool:
        return self.status == "pass"


def task_status(scores: list[Score], *, error: str | None = None) -> Status:
    """Pass iff there is at least one score, every score passed and nothing broke.

    ``error`` is a transient infrastructure failure (retries exhausted on a rate
    limit, say): neither pass nor fail. The agent's own failures (it raised, printed
    garbage, exited non-zero, timed out) are verdicts: the runner records them as a
    failing ``completed`` score. A task with no scores fails rather than passing
    vacuously.
    """
    if error is not None or any(score.infra_error for score in scores):
        return "infra_error"
    if scores and all(score.passed for score in scores):
        return "pass"
    return "fail"
