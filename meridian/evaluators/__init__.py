"""Evaluators: something other than the agent that did the work judges it.

``evaluate(bundle, settings)`` picks the evaluator (``settings.kind``; ``auto`` means
anthropic when ``ANTHROPIC_API_KEY`` is set, else heuristic), gets its scores and
issues, and lets ``models.decide`` compute pass/fail. Whatever the evaluator says about
passing is ignored. The objective findings (a declared artifact that matched nothing,
a failing check) are added to every evaluator's issues, so no reviewer can argue them
away. An evaluator that gives no verdict raises ``EvaluatorUnavailable``: neither pass
nor fail, the caller leaves the gate unchanged.

Importing this package loads none of its modules: every name below is imported from
its module on first use (``__getattr__``). The pre-commit hook imports
``meridian.evaluators.scan`` on every commit that touches a gate, and that must not
pay for pydantic (the verdict models) or the anthropic SDK; the SDK is imported only
when the anthropic evaluator runs.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from meridian.errors import ConfigError

if TYPE_CHECKING:
    from meridian.config import EvaluatorSettings
    from meridian.evaluators._base import Assessment, Evaluator, EvaluatorUnavailable
    from meridian.evaluators.heuristic import objective_findings, scan_files
    from meridian.evaluators.models import (
        DEFAULT_WEIGHTS,
        DIMENSIONS,
        ArtifactFile,
        Bundle,
        CheckResult,
        Issue,
        Usage,
        Verdict,
        decide,
    )
    from meridian.evaluators.scan import CHECK_IDS

# name -> the module that defines it, imported when the name is first read
_LAZY: dict[str, str] = {
    "CHECK_IDS": "meridian.evaluators.scan",
    "Assessment": "meridian.evaluators._base",
    "Evaluator": "meridian.evaluators._base",
    "EvaluatorUnavailable": "meridian.evaluators._base",
    "HeuristicEvaluator": "meridian.evaluators.heuristic",
    "objective_findings": "meridian.evaluators.heuristic",
    "scan_files": "meridian.evaluators.heuristic",
    **dict.fromkeys(("DEFAULT_WEIGHTS", "DIMENSIONS", "ArtifactFile", "Bundle", "CheckResult",
                     "Issue", "Usage", "Verdict", "decide"), "meridian.evaluators.models"),
}

__all__ = [
    "CHECK_IDS",
    "DEFAULT_WEIGHTS",
    "DIMENSIONS",
    "ArtifactFile",
    "Assessment",
    "Bundle",
    "CheckResult",
    "Evaluator",
    "EvaluatorUnavailable",
    "Issue",
    "Usage",
    "Verdict",
    "decide",
    "evaluate",
    "objective_findings",
    "resolve_kind",
    "scan_files",
    "select_evaluator",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later reads skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})


def resolve_kind(settings: EvaluatorSettings) -> str:
    """The evaluator that will run: ``auto`` resolved against the environment."""
    if settings.kind == "auto":
        return "anthropic" if os.environ.get("ANTHROPIC_API_KEY") else "heuristic"
    return settings.kind


def select_evaluator(settings: EvaluatorSettings, *,
                     disabled_checks: frozenset[str] = frozenset(), cwd: Path | None = None,
                     http_client: Any | None = None) -> Evaluator:
    kind = resolve_kind(settings)
    if kind == "heuristic":
        from meridian.evaluators.heuristic import HeuristicEvaluator

        return HeuristicEvaluator(disabled_checks)
    if kind == "command":
        if not settings.command:
            raise ConfigError("evaluator.command: required when evaluator.kind is 'command' "
                              "(a shell command that reads the bundle JSON on stdin and "
                              "prints a verdict JSON)")
        from meridian.evaluators.command_evaluator import CommandEvaluator

        return CommandEvaluator(settings.command, cwd=cwd)
    from meridian.evaluators.anthropic_evaluator import AnthropicEvaluator

    return AnthropicEvaluator(settings.anthropic, http_client=http_client)


def _with_objective_findings(issues: list[Issue], objective: list[Issue]) -> list[Issue]:
    known = {(i.check, i.file, i.message) for i in issues}
    return [*issues, *(i for i in objective if (i.check, i.file, i.message) not in known)]


def evaluate(
    bundle: Bundle,
    settings: EvaluatorSettings,
    *,
    disabled_checks: frozenset[str] = frozenset(),
    self_score: float | None = None,
    threshold: float | None = None,
    weights: Mapping[str, float] | None = None,
    cwd: Path | None = None,
    http_client: Any | None = None,
) -> Verdict:
    """Judge ``bundle``; pass iff weighted overall >= threshold and no high issue.

    ``threshold`` and ``weights`` override the settings for one gate. ``cwd`` is where a
    command evaluator runs (default: the current directory). ``http_client`` replaces
    the anthropic SDK's HTTP client (e.g. a proxy). Raises ``EvaluatorUnavailable``
    when no verdict could be had, ``ConfigError`` for a bad evaluator configuration.
    """
    from meridian.evaluators.heuristic import HeuristicEvaluator, objective_findings
    from meridian.evaluators.models import decide

    evaluator = select_evaluator(settings, disabled_checks=disabled_checks, cwd=cwd,
                                 http_client=http_client)
    objective = objective_findings(bundle, disabled_checks)
    assessment = evaluator.assess(bundle)
    issues = assessment.issues
    if not isinstance(evaluator, HeuristicEvaluator):
        issues = _with_objective_findings(issues, objective)
    return decide(
        gate=bundle.gate, evaluator=assessment.evaluator, subject=bundle.subject,
        scores=assessment.scores, issues=issues,
        threshold=settings.threshold if threshold is None else threshold,
        weights=dict(weights) if weights is not None else None,
        summary=assessment.summary, usage=assessment.usage, self_score=self_score,
    )
