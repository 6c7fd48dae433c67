"""Graders of the trajectory: how the agent got to its answer.

A final-answer grader cannot tell apart two agents that say the same thing; these
can. Every one handles an empty trajectory and a zero denominator without crashing,
and says in the detail when a pass is vacuous.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from pydantic import JsonValue

from meridian.evals.graders.registry import grader
from meridian.evals.types import Score, Task, Trajectory


def _ratio_detail(numerator: float, denominator: float) -> str:
    return f"{numerator:g}/{denominator:g}"


@grader("step_efficiency", kind="trajectory", requires=("reference_steps",))
def step_efficiency(task: Task, trajectory: Trajectory, *, slack: int = 0) -> Score:
    """Steps taken against the task's reference optimum (`reference_steps`), with `slack`."""
    reference = task.reference_steps or 0
    taken = len(trajectory.steps)
    allowed = reference + max(slack, 0)
    passed = taken <= allowed
    # Value is reference/taken: 1.0 at or under the optimum, falling as steps pile up.
    value = 1.0 if taken <= reference else reference / taken
    detail = f"{taken} step(s), reference {reference}"
    if slack:
        detail += f" + slack {slack}"
    if taken == 0:
        detail += " (no steps recorded)"
    return Score(name="step_efficiency", value=value, passed=passed, detail=detail)


@grader("tool_choice_precision", kind="trajectory", requires=("expected_tools",))
def tool_choice_precision(
    task: Task, trajectory: Trajectory, *, min_precision: float = 1.0, min_recall: float = 1.0
) -> Score:
    """Precision and recall of the tools called against `expected_tools` (one-to-one)."""
    called = Counter(step.name for step in trajectory.tool_steps)
    expected = Counter(task.expected_tools)
    # Tools match by name, so the maximum one-to-one matching is the multiset
    # intersection: each expected use is matched by at most one call and vice versa.
    matched = sum((called & expected).values())
    n_called, n_expected = sum(called.values()), sum(expected.values())
    precision = matched / n_called if n_called else 1.0
    recall = matched / n_expected if n_expected else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    passed = precision >= min_precision and recall >= min_recall
    detail = (
        f"precision {precision:.2f} ({_ratio_detail(matched, n_called)}), "
        f"recall {recall:.2f} ({_ratio_detail(matched, n_expected)})"
    )
    unexpected = called - expected
    unused = expected - called
    if unexpected:
        detail += "; unexpected " + ", ".join(f"{name}x{n}" for name, n in sorted(unexpected.items()))
    if unused:
        detail += "; not called " + ", ".join(f"{name}x{n}" for name, n in sorted(unused.items()))
    if not n_called:
        detail += "; no tool calls"
    return Score(name="tool_choice_precision", value=f1, passed=passed, detail=detail)


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
    task: Task, trajectory: Trajectory, *, max_redundant: int = 0, count_retries: bool = False
) -> Score:
    """No tool called twice with the same arguments (a retry after an error is allowed)."""
    tool_steps = trajectory.tool_steps
    if not tool_steps:
        return Score(name="no_redundant_calls", value=1.0, passed=True,
                     detail="no tool calls (vacuous pass)")
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
    detail = f"{len(redundant)} redundant of {len(tool_steps)} tool call(s)"
    if redundant:
        detail += ": " + "; ".join(redundant[:5]) + (" ..." if len(redundant) > 5 else "")
    return Score(name="no_redundant_calls", value=value, passed=passed, detail=detail)


@grader("recovered_from_error", kind="trajectory")
def recovered_from_error(task: Task, trajectory: Trajectory) -> Score:
    """Every errored step is followed by a later successful step and the agent finished."""
    errored = trajectory.errored_steps
    if not errored:
        return Score(name="recovered_from_error", value=1.0, passed=True,
                     detail="no errored steps (vacuous pass)")
    # Positions, not step.index: an external agent's indices need not be in order.
    last_success = max((i for i, s in enumerate(trajectory.steps) if not s.failed), default=-1)
    recovered = [i for i, s in enumerate(trajectory.steps) if s.failed and i < last_success]
    value = len(recovered) / len(errored)
    passed = len(recovered) == len(errored) and trajectory.completed
    detail = f"{len(recovered)}/{len(errored)} errored step(s) followed by a success"
    if not trajectory.completed:
        detail += "; the agent did not complete"
    return Score(name="recovered_from_error", value=value, passed=passed, detail=detail)


def _budget_score(name: str, spent: float, budget: float, unit: str) -> Score:
    passed = spent <= budget
    if passed:
        value = 1.0
    else:
        value = budget / spent if spent > 0 else 0.0
    if unit == "$":
        detail = f"${spent:.4f} of ${budget:.4f} budget"
    else:
        detail = f"{spent:.3f}s of {budget:.3f}s budget"
    return Score(name=name, value=value, passed=passed, detail=detail + ("" if passed else " (over)"))


@grader("cost_budget", kind="trajectory", requires=("cost_budget_usd",))
def cost_budget(task: Task, trajectory: Trajectory) -> Score:
    """Trajectory cost within the task's `cost_budget_usd`."""
    return _budget_score("cost_budget", trajectory.cost_usd, task.cost_budget_usd or 0.0, "$")


@grader("latency_budget", kind="trajectory", requires=("latency_budget_s",))
def latency_budget(task: Task, trajectory: Trajectory) -> Score:
    """Wall-clock latency within the task's `latency_budget_s`."""
    return _budget_score("latency_budget", trajectory.latency_s, task.latency_budget_s or 0.0, "s")


@grader("completed", kind="trajectory")
def completed(task: Task, trajectory: Trajectory) -> Score:
    """The agent terminated normally with an answer."""
    if trajectory.completed and trajectory.error is None:
        return Score(name="completed", value=1.0, passed=True,
                     detail=f"completed in {len(trajectory.steps)} step(s)")
    reason = trajectory.error or "the agent did not report completion"
    return Score(name="completed", value=0.0, passed=False, detail=f"not completed: {reason}")
