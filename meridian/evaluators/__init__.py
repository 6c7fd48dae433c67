"""Evaluators: something other than the agent that did the work judges it.

``evaluate(bundle, settings)`` picks the evaluator (``settings.kind``; ``auto`` means
anthropic when ``ANTHROPIC_API_KEY`` is set, else claude-code when the ``claude`` CLI is
on ``PATH``, else heuristic; ``choose_kind`` says which and why), gets its scores and
issues, and lets ``models.decide`` compute pass/fail. Whatever the evaluator says about
passing is ignored. The offline scan runs under every evaluator: its findings (and the
objective ones: a declared artifact that matched nothing, a failing check) are shown to
a model evaluator and added to every evaluator's issues, so no reviewer can argue them
away. A model evaluator that did not see every changed line gets a high issue saying
what it missed, so the verdict cannot pass. An evaluator that gives no verdict (or
scores ``decide`` cannot use) raises ``EvaluatorUnavailable``: neither pass nor fail,
the caller leaves the gate unchanged.

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
from typing import TYPE_CHECKING, Any, cast

from meridian.errors import ConfigError

if TYPE_CHECKING:
    from meridian.config import EvaluatorSettings
    from meridian.evaluators._base import (
        Assessment,
        Evaluator,
        EvaluatorUnavailable,
        ModelEvaluator,
    )
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
    "choose_kind",
    "decide",
    "evaluate",
    "fallback_reason",
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


def choose_kind(settings: EvaluatorSettings) -> tuple[str, str]:
    """The evaluator that will run and why: ``auto`` resolved against the environment."""
    if settings.kind != "auto":
        return settings.kind, f"evaluator.kind is {settings.kind}"
    if os.environ.get("ANTHROPIC_API_KEY"):
        return "anthropic", "auto: ANTHROPIC_API_KEY is set"
    import shutil

    executable = settings.claude_code.executable
    if shutil.which(executable):
        return "claude-code", f"auto: no ANTHROPIC_API_KEY, the `{executable}` CLI is on PATH"
    return "heuristic", f"auto: no ANTHROPIC_API_KEY and no `{executable}` CLI on PATH"


def resolve_kind(settings: EvaluatorSettings) -> str:
    """The evaluator that will run: ``auto`` resolved against the environment."""
    return choose_kind(settings)[0]


def fallback_reason(settings: EvaluatorSettings) -> str | None:
    """Why ``kind: auto`` runs the offline evaluator, stated and recorded (None: it does not)."""
    if settings.kind != "auto":
        return None
    kind, why = choose_kind(settings)
    if kind != "heuristic":
        return None
    return (f"evaluator kind auto fell back to the offline heuristic evaluator ({why}): "
            "objective checks only; give it a model, or set evaluator.require: model so "
            "the heuristic alone cannot pass")


def select_evaluator(settings: EvaluatorSettings, *,
                     disabled_checks: frozenset[str] = frozenset(), cwd: Path | None = None,
                     http_client: Any | None = None) -> Evaluator:
    kind = resolve_kind(settings)
    if kind == "heuristic":
        from meridian.evaluators.heuristic import HeuristicEvaluator

        return HeuristicEvaluator(disabled_checks, block_pre_existing=settings.block_pre_existing)
    if kind == "command":
        if not settings.command:
            raise ConfigError("evaluator.command: required when evaluator.kind is 'command' "
                              "(a shell command that reads the bundle JSON on stdin and "
                              "prints a verdict JSON)")
        from meridian.evaluators.command_evaluator import CommandEvaluator

        return CommandEvaluator(settings.command, cwd=cwd)
    if kind == "claude-code":
        from meridian.evaluators.claude_code_evaluator import ClaudeCodeEvaluator

        return ClaudeCodeEvaluator(settings.claude_code, cwd=cwd)
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
    from meridian.evaluators._base import EvaluatorUnavailable
    from meridian.evaluators.heuristic import HeuristicEvaluator, bundle_scan
    from meridian.evaluators.models import Issue, decide

    evaluator = select_evaluator(settings, disabled_checks=disabled_checks, cwd=cwd,
                                 http_client=http_client)
    if isinstance(evaluator, HeuristicEvaluator):
        assessment = evaluator.assess(bundle)
        issues = list(assessment.issues)
        suppressed, excluded = list(assessment.suppressed), list(assessment.excluded)
    else:
        # The offline scan runs under every evaluator; a model is shown its findings.
        scanned, suppressed, excluded = bundle_scan(bundle, disabled_checks)
        assessment = cast("ModelEvaluator", evaluator).assess(bundle, scanned)
        issues = _with_objective_findings(assessment.issues, scanned)
    summary = assessment.summary
    if settings.kind == "auto":  # say which evaluator auto chose, and why
        summary = f"{summary} [{choose_kind(settings)[1]}]".strip()
    coverage = assessment.coverage
    if coverage is not None and not coverage.complete:
        missed = "; ".join(coverage.unseen[:3]) + (
            f" and {len(coverage.unseen) - 3} more" if len(coverage.unseen) > 3 else "")
        issues = [*issues, Issue(
            severity="high", check="coverage",
            message=f"the evaluator did not see all of the evidence: it {coverage.describe()}"
                    + (f" (not shown: {missed})" if missed else "")
                    + "; a submission whose changed lines were not all seen cannot pass "
                      "(raise the evaluator's max_requests or max_bundle_chars)")]
    if settings.require == "model" and isinstance(evaluator, HeuristicEvaluator):
        issues = [*issues, Issue(severity="high", message=(
            "this gate requires a model evaluator (evaluator require: model) and only the "
            "offline heuristic judged it: set ANTHROPIC_API_KEY, or an evaluator kind "
            "anthropic, claude-code or command, then submit again"))]
    not_judged = list(assessment.not_judged)
    try:
        return decide(
            gate=bundle.gate, evaluator=assessment.evaluator, subject=bundle.subject,
            scores={d: v for d, v in assessment.scores.items() if d not in not_judged},
            issues=issues,
            threshold=settings.threshold if threshold is None else threshold,
            weights=dict(weights) if weights is not None else None,
            summary=summary, usage=assessment.usage, self_score=self_score,
            identity=assessment.identity, coverage=coverage,
            not_judged=not_judged, block_pre_existing=settings.block_pre_existing,
            scope=assessment.scope, fallback=fallback_reason(settings),
            suppressed=suppressed, excluded=excluded, exclude_added=list(bundle.exclude_added),
        )
    except ValueError as err:  # scores decide cannot use are no verdict
        raise EvaluatorUnavailable(assessment.evaluator, f"its scores are unusable: {err}",
                                   usage=assessment.usage) from None
