"""What every evaluator hands back, and the one way an evaluator can fail.

An evaluator only *assesses*: it returns scores, issues, a summary and its usage.
It never decides pass or fail; the facade turns an ``Assessment`` into a ``Verdict``
through ``models.decide``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from meridian.errors import MeridianError
from meridian.evaluators.models import (
    Bundle,
    Coverage,
    EvaluatorIdentity,
    Issue,
    SuppressedIssue,
    Usage,
)


class EvaluatorUnavailable(MeridianError):
    """The evaluator gave no verdict (API down, bad key, command crashed or lied in format).

    Neither a pass nor a fail: the caller records it and leaves the gate where it was.
    ``evaluator`` and ``reason`` are kept for the ``gate.evaluator_unavailable`` event.
    """

    def __init__(self, evaluator: str, reason: str, *, usage: Usage | None = None) -> None:
        self.evaluator = evaluator
        self.reason = " ".join(reason.split())[:2000]  # one line, whatever the cause printed
        self.usage = usage  # what the attempts cost, when the evaluator made any
        super().__init__(
            f"evaluator {evaluator} was unavailable: {self.reason} "
            "(no verdict: neither pass nor fail, the gate is unchanged)"
        )


@dataclass(frozen=True)
class Assessment:
    evaluator: str  # "heuristic", "anthropic:<model>", "command:<program>"
    scores: dict[str, float]
    issues: list[Issue]
    summary: str = ""
    usage: Usage = field(default_factory=Usage)
    identity: EvaluatorIdentity | None = None  # model evaluators: who answered
    coverage: Coverage | None = None  # model evaluators: how much of the bundle they saw
    # Dimensions the evaluator could not judge: left out of ``scores`` (never a free 10).
    not_judged: tuple[str, ...] = ()
    scope: str | None = None  # e.g. "objective checks only"
    suppressed: list[SuppressedIssue] = field(default_factory=list)
    excluded: list[str] = field(default_factory=list)


class Evaluator(Protocol):
    @property
    def label(self) -> str: ...

    def assess(self, bundle: Bundle) -> Assessment: ...


class ModelEvaluator(Protocol):
    """An evaluator that is shown the offline scan's findings with the bundle."""

    @property
    def label(self) -> str: ...

    def assess(self, bundle: Bundle, findings: list[Issue] | None = None) -> Assessment: ...
