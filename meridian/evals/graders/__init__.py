"""Graders: registered by name, each a pure function ``fn(task, trajectory, **kwargs)``.

    from meridian.evals.graders import grader
    from meridian.evals.types import Score

    @grader("one_sentence", kind="final_answer")
    def one_sentence(task, trajectory, *, max_sentences: int = 1) -> Score:
        \"\"\"The answer is at most `max_sentences` sentences.\"\"\"
        n = str(trajectory.final_output).count(".")
        return Score(name="one_sentence", value=float(n <= max_sentences),
                     passed=n <= max_sentences, detail=f"{n} sentence(s)")

Importing this package registers the built-in graders.
"""

from __future__ import annotations

# Imported for their side effect: each module registers its graders.
from meridian.evals.graders import final_answer as _final_answer  # noqa: F401
from meridian.evals.graders import llm_judge as _llm_judge  # noqa: F401
from meridian.evals.graders import trajectory as _trajectory  # noqa: F401
from meridian.evals.graders.registry import (
    GraderArgumentError,
    GraderInfo,
    UnknownGrader,
    check_arguments,
    describe,
    get,
    grader,
    missing_requirement,
    names,
    run_grader,
)
from meridian.evals.types import Score, Task, TaskResult, Trajectory, task_status

__all__ = [
    "GraderArgumentError",
    "GraderInfo",
    "UnknownGrader",
    "check_arguments",
    "describe",
    "get",
    "grade",
    "grade_task",
    "grader",
    "missing_requirement",
    "names",
    "run_grader",
    "task_status",
]


def grade(task: Task, trajectory: Trajectory, *, offline: bool = False) -> list[Score]:
    """Every grader of ``task`` on ``trajectory``, in the task's order.

    Never raises for a grader's sake: a grader that breaks, or one that needs the
    network in an offline run, yields a Score with ``infra_error=True``.
    """
    return [run_grader(spec.name, spec.args, task, trajectory, offline=offline)
            for spec in task.graders]


def grade_task(
    task: Task,
    trajectory: Trajectory,
    *,
    offline: bool = False,
    epoch: int = 0,
    attempts: int = 1,
) -> TaskResult:
    """Grade ``trajectory`` and wrap it in a TaskResult with its status."""
    scores = grade(task, trajectory, offline=offline)
    status = task_status(scores)
    infra = [s for s in scores if s.infra_error]
    error = "; ".join(f"{s.name}: {s.detail}" for s in infra) if infra else None
    return TaskResult(task_id=task.id, epoch=epoch, status=status, scores=scores,
                      trajectory=trajectory, error=error, attempts=attempts)
