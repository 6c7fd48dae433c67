"""The health report's data model: what ``meridian health --json`` prints.

Rates are fractions (0-1), hours are hours, money is US dollars. A figure that has
no data yet is ``None`` (never 0 pretending to be a measurement).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class GateRow(_Model):
    gate: str
    state: str
    submissions: int = 0
    verdicts: int = 0
    failed_verdicts: int = 0
    first_verdict_passed: bool | None = None  # None: no verdict yet
    blocks: int = 0
    hours_in_progress: float | None = None  # started -> passed, summed over passes
    last_overall: float | None = None
    cost_usd: float = 0.0
    cost_unknown: int = 0  # verdicts with no price: cost_usd then covers only the priced ones


class GateHealth(_Model):
    total: int = 0
    by_state: dict[str, int] = Field(default_factory=dict)
    with_verdict: int = 0
    first_try_passed: int = 0
    first_try_pass_rate: float | None = None  # gates whose first verdict passed / gates with one
    verdicts: int = 0
    failed_verdicts: int = 0
    evaluator_fail_rate: float | None = None  # failed verdicts / all verdicts
    evaluator_unavailable: int = 0
    # Verdicts of the offline evaluator (scope: objective checks only): they did not judge
    # the acceptance criteria.
    objective_only_verdicts: int = 0
    # Inline `meridian: allow` exceptions in verdicts, those written during their gate,
    # and findings reported as pre-existing (outside the change, not blocking).
    suppressed: int = 0
    suppressed_added: int = 0
    pre_existing_findings: int = 0
    blocks: int = 0
    blocks_by_source: dict[str, int] = Field(default_factory=dict)
    mean_hours_in_progress: float | None = None  # mean over started -> passed intervals
    intervals: int = 0
    gates: list[GateRow] = Field(default_factory=list)


class CorrectionPoint(_Model):
    ts: str
    gate: str
    predicted_hours: float | None
    actual_hours: float | None
    ratio: float | None  # actual / predicted: above 1 took longer than predicted
    multiplier: float | None  # the project's multiplier just after this correction


class CalibrationHealth(_Model):
    corrections: list[CorrectionPoint] = Field(default_factory=list)
    multiplier: float | None = None  # median ratio of the last `window` corrections
    window: int = 10
    sample: int = 0
    median_ratio: float | None = None  # median over every correction with a ratio


class Distribution(_Model):
    """Summary of a set of 0-10 scores; ``histogram[i]`` counts scores in [i, i+1)
    (10 is counted in the last bucket)."""

    count: int = 0
    min: float | None = None
    q1: float | None = None
    median: float | None = None
    q3: float | None = None
    max: float | None = None
    mean: float | None = None
    histogram: list[int] = Field(default_factory=lambda: [0] * 10)


class GapPoint(_Model):
    ts: str
    gate: str
    self_score: float
    overall: float
    gap: float  # self_score - overall: positive means the agent rated itself higher
    rolling_mean: float  # mean gap of the last `gap_window` submissions


class EvaluatorHealth(_Model):
    dimensions: dict[str, Distribution] = Field(default_factory=dict)
    overall: Distribution = Field(default_factory=Distribution)
    verdicts: int = 0
    verdicts_read: int = 0  # verdict documents read for per-dimension scores
    gaps: list[GapPoint] = Field(default_factory=list)
    gap_window: int = 5
    mean_gap: float | None = None
    early_mean_gap: float | None = None  # first half of the submissions
    recent_mean_gap: float | None = None  # second half


class CostLine(_Model):
    input_tokens: int = 0
    output_tokens: int = 0
    tokens: int = 0  # input + output, or a total where the split is not recorded
    cost_usd: float = 0.0  # what the priced records cost
    # Records whose cost is unknown (a model with no price): never counted as 0; with any,
    # cost_usd is a lower bound and every view says "unknown".
    cost_unknown: int = 0


class GateCost(CostLine):
    gate: str
    verdicts: int = 0


class WeekCost(_Model):
    week: str  # ISO week, 2026-W48
    evaluator_usd: float = 0.0
    llm_judge_usd: float = 0.0
    eval_agents_usd: float = 0.0
    tokens: int = 0
    cost_usd: float = 0.0
    cost_unknown: int = 0  # records of the week with no price (see CostLine)


class CostHealth(_Model):
    total: CostLine = Field(default_factory=CostLine)
    by_source: dict[str, CostLine] = Field(default_factory=dict)  # evaluator, llm_judge, eval_agents
    by_gate: list[GateCost] = Field(default_factory=list)
    by_week: list[WeekCost] = Field(default_factory=list)


class CompletionHealth(_Model):
    computed_at: str
    junit: str
    total: int
    working: int
    hardened: int
    working_pct: float
    hardened_pct: float


class MemoryHealth(_Model):
    records: dict[str, int] = Field(default_factory=dict)
    invalid: int = 0
    problems: list[str] = Field(default_factory=list)  # the first few, as verify prints them
    duplicates_prevented: int = 0


class DueRule(_Model):
    id: str
    rule: str
    review_date: str | None


class RulesHealth(_Model):
    total: int = 0
    active: int = 0
    due: list[DueRule] = Field(default_factory=list)


class SuiteHealth(_Model):
    suite: str
    runs: int
    latest_run: str
    latest_at: str
    agent: str
    tasks: int
    passed: int
    failed: int
    infra_errors: int
    pass_rate: float | None
    baseline: str | None = None
    baseline_run: str | None = None
    baseline_passed: int | None = None
    baseline_pass_rate: float | None = None
    regressions: int | None = None  # tasks passing in the baseline, not in the latest run
    fixes: int | None = None  # tasks failing in the baseline, passing in the latest run


class EvaluationHealth(_Model):
    runs: int = 0
    suites: list[SuiteHealth] = Field(default_factory=list)


class HarnessChange(_Model):
    """One ``harness.changed`` event (meridian.harness), as health shows it."""

    ts: str
    changes: list[str] = Field(default_factory=list)
    weakening: bool = False  # a change that weakens enforcement
    agent_session: bool = False  # made while a Claude Code session was active
    commit: str | None = None
    source: str | None = None  # pre-commit or catch-up


class HealthReport(_Model):
    version: int = 1
    branch: str
    commit: str | None  # the state commit the report was computed from
    generated_at: str
    events: int = 0
    notes: list[str] = Field(default_factory=list)  # sections computed with less than all data
    gates: GateHealth = Field(default_factory=GateHealth)
    calibration: CalibrationHealth = Field(default_factory=CalibrationHealth)
    evaluator: EvaluatorHealth = Field(default_factory=EvaluatorHealth)
    cost: CostHealth = Field(default_factory=CostHealth)
    completion: CompletionHealth | None = None
    memory: MemoryHealth = Field(default_factory=MemoryHealth)
    rules: RulesHealth = Field(default_factory=RulesHealth)
    evaluation: EvaluationHealth = Field(default_factory=EvaluationHealth)
    # The latest harness changes (gate graph, rules, config, features), newest first.
    harness: list[HarnessChange] = Field(default_factory=list)
