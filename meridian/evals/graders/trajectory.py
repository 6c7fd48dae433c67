"""Graders of the trajectory: how the agent got to its answer.

A final-answer grader cannot tell apart two agents that say the same thing; these
can. Every one handles an empty trajectory and a zero denominator without crashing,
and says in the detail when a pass is vacuous.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import JsonValue

from meridian.evals.graders.registry import grader
from meridian.evals.types import Score, Task, Trajectory


def _ratio_detail(numerator: float, denominator: float) -> str:
    return f"{numerator:g}/{denominator:g}"


@grader("step_efficiency", kind="trajectory", requires=("reference_steps",))
def step_efficiency(task: Task, trajectory: Trajectory, *, slack: int | float = 0,  # noqa: PYI041
                    reference_steps: int | None = None, kinds: list[str] | None = None) -> Score:
    """Steps taken against the reference optimum (`reference_steps`): an integer `slack`
    adds steps, a float multiplies the reference (caliper's `slack: 1.5`)."""
    reference = reference_steps if reference_steps is not None else (task.reference_steps or 0)
    counted = [s for s in trajectory.steps if not kinds or s.kind in kinds]
    taken = len(counted)
    if isinstance(slack, float):
        allowed: float = reference * slack
        slack_text = f" x slack {slack:g}"
    else:
        allowed = reference + max(slack, 0)
        slack_text = f" + slack {slack}" if slack else ""
    metadata: dict[str, JsonValue] = {"taken": taken, "reference": reference, "allowed": allowed}
    if taken == 0:
        # Nothing recorded is no evidence of efficiency: an empty trajectory fails.
        return Score(name="step_efficiency", value=0.0, passed=False, metadata=metadata,
                     detail=f"no steps recorded (reference {reference}{slack_text})")
    passed = taken <= allowed
    # Value is reference/taken: 1.0 at or under the optimum, falling as steps pile up.
    value = 1.0 if taken <= reference else reference / taken
    detail = f"{taken} step(s), reference {reference}{slack_text}"
    return Score(name="step_efficiency", value=value, passed=passed, detail=detail,
                 metadata=metadata)


@grader("tool_choice_precision", kind="trajectory", requires=("expected_tools",))
def tool_choice_precision(
    task: Task, trajectory: Trajectory, *, min_precision: float = 1.0, min_recall: float = 1.0,
    require_recall: bool | None = None, expected_tools: list[str] | None = None,
) -> Score:
    """Precision and recall of the distinct tools used against `expected_tools` (a retry
    of a right tool is not a wrong choice)."""
    wanted = set(expected_tools if expected_tools is not None else task.expected_tools)
    if require_recall is not None:
        min_recall = 1.0 if require_recall else 0.0
    calls = [step.name for step in trajectory.tool_steps]
    used = set(calls)
    right = used & wanted
    # Calling nothing is no evidence of choosing well: precision 0, not a vacuous 1.
    precision = len(right) / len(used) if used else (0.0 if wanted else 1.0)
    recall = len(right) / len(wanted) if wanted else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    passed = (bool(used) or not wanted) and precision >= min_precision and recall >= min_recall
    detail = (
        f"precision {precision:.2f} ({_ratio_detail(len(right), len(used))} distinct tools), "
        f"recall {recall:.2f} ({_ratio_detail(len(right), len(wanted))})"
    )
    unexpected, unused = sorted(used - wanted), sorted(wanted - used)
    if unexpected:
        detail += "; unexpected " + ", ".join(unexpected)
    if unused:
        detail += "; not called " + ", ".join(unused)
    if not used:
        detail += "; no tool calls"
    metadata: dict[str, Any] = {"precision": precision, "recall": recall, "used": sorted(used),
                                "unexpected": unexpected, "not_called": unused,
                                "calls": len(calls)}
    return Score(name="tool_choice_precision", value=f1, passed=passed, detail=detail,
                 metadata=metadata)


def canonical_arguments(value: JsonValue) -> str:
    """Arguments as a canonical string: ``1`` equals ``1.0``, dict key order is irrelevant."""
    return json.dumps(_normalise(value), sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _normalise(value: Any) -> Any:
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int):
        return value  # exact: 2**53 + 1 is not 2**53, and 10**400 does not overflow
    if isinstance(value, float):
        # Integral floats as ints so 1, 1.0 and 1e0 share one spelling.
        return int(value) if value.is_integer() else value
    if isinstance(value, dict):
        return {str(key): _normalise(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_normalise(item) for item in value]
    return str(value)


@grader("no_redundant_calls", kind="trajectory")
def no_redundant_calls(
    task: Task, trajectory: Trajectory, *, max_redundant: int = 0, count_retries: bool = False,
    allow: int | None = None, kinds: list[str] | None = None,
) -> Score:
    """No tool or retrieval call made twice with the same arguments (a retry after an
    error is allowed); `kinds` picks the step kinds, `allow` is caliper's `max_redundant`."""
    if allow is not None:
        max_redundant = allow
    counted = tuple(kinds) if kinds else ("tool", "retrieval")
    tool_steps = [step for step in trajectory.steps if step.kind in counted]
    if not tool_steps:
        return Score(name="no_redundant_calls", value=1.0, passed=True,
                     detail=f"no {'/'.join(counted)} calls (vacuous pass)")
    # A repeat is redundant when an earlier identical call already succeeded; repeating
    # a call that errored is a retry, which recovered_from_error judges instead.
    answered: set[tuple[str, str]] = set()
    attempted: set[tuple[str, str]] = set()
    redundant: list[str] = []
    for step in tool_steps:
        key = (step.name, canonical_arguments(step.input))
        if key in answered or (count_retries and key in attempted):
            redundant.append(f"#{step.index} {step.name}({key[1]})")
        attempted.add(key)
        if not step.failed:
            answered.add(key)
    value = 1.0 - len(redundant) / len(tool_steps)
    passed = len(redundant) <= max_redundant
    detail = f"{len(redundant)} redundant of {len(tool_steps)} call(s)"
    if redundant:
        detail += ": " + "; ".join(redundant[:5]) + (" ..." if len(redundant) > 5 else "")
    metadata: dict[str, Any] = {"redundant": redundant[:20], "calls": len(tool_steps)}
    return Score(name="no_redundant_calls", value=value, passed=passed, detail=detail,
                 metadata=metadata)


@grader("recovered_from_error", kind="trajectory")
def recovered_from_error(task: Task, trajectory: Trajectory, *, same_tool_only: bool = False) -> Score:
    """Every errored step is followed by a later successful step (of the same tool with
    `same_tool_only`) and the agent finished."""
    errored = trajectory.errored_steps
    if not errored:
        return Score(name="recovered_from_error", value=1.0, passed=True,
                     detail="no errored steps (vacuous pass)")
    # Positions, not step.index: an external agent's indices need not be in order.
    steps = trajectory.steps

    def recovered_at(i: int) -> bool:
        return any(not later.failed and (not same_tool_only or later.name == steps[i].name)
                   for later in steps[i + 1:])

    recovered = [i for i, s in enumerate(steps) if s.failed and recovered_at(i)]
    value = len(recovered) / len(errored)
    passed = len(recovered) == len(errored) and trajectory.completed
    detail = f"{len(recovered)}/{len(errored)} errored step(s) followed by a success"
    if not trajectory.completed:
        detail += "; the agent did not complete"
    return Score(name="recovered_from_error", value=value, passed=passed, detail=detail)


def _budget_score(name: str, spent: float, budget: float, unit: str, note: str = "",
                  metadata: dict[str, JsonValue] | None = None) -> Score:
    passed = spent <= budget
    if passed:
        value = 1.0
    else:
        value = budget / spent if spent > 0 else 0.0
    if unit == "$":
        detail = f"${spent:.4f} of ${budget:.4f} budget"
    else:
        detail = f"{spent:.3f}s of {budget:.3f}s budget"
    return Score(name=name, value=value, passed=passed,
                 detail=detail + ("" if passed else " (over)") + note, metadata=metadata or {})


@grader("cost_budget", kind="trajectory", requires=("cost_budget_usd|budget_usd",))
def cost_budget(task: Task, trajectory: Trajectory, *, budget_usd: float | None = None) -> Score:
    """Trajectory cost (from the usage the agent reported) within `cost_budget_usd`;
    flagged when the agent reported no usage at all."""
    budget = budget_usd if budget_usd is not None else (task.cost_budget_usd or 0.0)
    reported = trajectory.usage_reported
    note = "" if reported else " [no usage reported: cost unknown, counted as $0]"
    return _budget_score("cost_budget", trajectory.cost_usd, budget, "$", note,
                         {"usage_reported": reported, "cost_usd": trajectory.cost_usd})


@grader("latency_budget", kind="trajectory", requires=("latency_budget_s|budget_s",))
def latency_budget(task: Task, trajectory: Trajectory, *, budget_s: float | None = None) -> Score:
    """Wall-clock latency, as the harness measured it, within `latency_budget_s`."""
    budget = budget_s if budget_s is not None else (task.latency_budget_s or 0.0)
    reported = trajectory.reported_latency_s
    note = "" if reported is None else f" (measured; the agent reported {reported:.3f}s)"
    return _budget_score("latency_budget", trajectory.latency_s, budget, "s", note,
                         {"measured_s": trajectory.latency_s, "reported_s": reported})


@grader("completed", kind="trajectory")
def completed(task: Task, trajectory: Trajectory) -> Score:
    """The agent terminated normally with an answer."""
    if trajectory.completed and trajectory.error is None:
        return Score(name="completed", value=1.0, passed=True,
                     detail=f"completed in {len(trajectory.steps)} step(s)")
    reason = trajectory.error or "the agent did not report completion"
    return Score(name="completed", value=0.0, passed=False, detail=f"not completed: {reason}")
