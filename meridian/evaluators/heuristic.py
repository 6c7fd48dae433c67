"""The offline evaluator: deterministic checks for unfinished or unproven work.

It does not judge the acceptance criteria (only a reader can); it looks for objective
signs that work is missing or cannot be trusted, each a finding with a stable check id:

    missing_artifact  a declared artifact glob matched no file, or the gate  high
                      has no artifact file and no check (nothing to judge)
    failing_check     a gate check exited non-zero, timed out or never ran  high
    stub_code         NotImplementedError, do-nothing bodies, placeholder   high
                      returns next to TODO markers; a bare TODO/FIXME/XXX/
                      TBD comment is low, a comment admitting "not
                      implemented"/"placeholder" is medium
    hollow_test       a test that cannot fail (no assert of any kind)       high
    skipped_test      skip/skipif/xfail/only/todo, commented-out tests      medium
    empty_file        an artifact that is empty or only whitespace          medium
    syntax_error      a Python artifact that does not parse (the stub and   high
                      test checks cannot read it, so it must not pass)

Scores: every dimension starts at 10; each finding subtracts the points in
``PENALTIES[check]`` times ``SEVERITY_FACTOR[severity]`` from the dimensions listed;
each score is clamped to 0-10. The rules system turns a check off by its id
(rule mechanism ``heuristic:<check id>``): a disabled check is not run at all.

The checks that read file contents live in ``scan`` and produce plain ``Finding``
values (no pydantic: the pre-commit hook runs them); this module adds the objective
findings and the scores, and turns findings into the verdict's ``Issue`` models.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping

from meridian.evaluators._base import Assessment
from meridian.evaluators.findings import Finding
from meridian.evaluators.models import DIMENSIONS, Bundle, CheckResult, Issue
from meridian.evaluators.scan import (
    CHECK_IDS,
    EMPTY_IS_FINE,
    check_disabled,
    is_python_test_file,
    order_key,
    scan_file,
    scan_findings,
)

__all__ = [
    "CHECK_IDS", "EMPTY_IS_FINE", "PENALTIES", "SEVERITY_FACTOR", "HeuristicEvaluator",
    "as_issue", "bundle_findings", "is_python_test_file", "objective_findings", "scan_files",
    "score",
]

# Points taken from each dimension by one high-severity finding of a check.
PENALTIES: dict[str, dict[str, float]] = {
    "missing_artifact": {"completeness": 4.0, "spec_adherence": 3.0},
    "failing_check": {"correctness": 4.0, "robustness": 2.0},
    "stub_code": {"completeness": 3.0, "correctness": 2.0},
    "hollow_test": {"robustness": 3.0, "correctness": 1.5},
    "skipped_test": {"robustness": 2.0, "completeness": 1.0},
    "empty_file": {"completeness": 3.0, "spec_adherence": 1.0},
    "syntax_error": {"correctness": 4.0, "robustness": 1.0},
}
SEVERITY_FACTOR: dict[str, float] = {"high": 1.0, "medium": 0.5, "low": 0.1}

CHECK_OUTPUT_TAIL = 300


def as_issue(finding: Finding) -> Issue:
    """The verdict's model of a scanner finding (same fields)."""
    return Issue(severity=finding.severity, file=finding.file, line=finding.line,
                 message=finding.message, check=finding.check)


def scan_files(files: Mapping[str, str], disabled: frozenset[str] = frozenset()) -> list[Issue]:
    """Findings in file contents (path -> text) as ``Issue`` models.

    The pre-commit hook calls ``scan.scan_findings`` instead: the same findings as
    plain values, without importing pydantic.
    """
    return [as_issue(finding) for finding in scan_findings(files, disabled)]


def _describe_check(check: CheckResult) -> str:
    if check.timed_out:
        outcome = f"timed out after {check.duration_s:g}s" if check.duration_s else "timed out"
    elif check.exit_code is None:
        outcome = "could not be started"
    else:
        outcome = f"failed with exit code {check.exit_code}"
    tail = [line.strip() for line in check.output.splitlines() if line.strip()]
    last = f": {tail[-1][:CHECK_OUTPUT_TAIL]}" if tail else ""
    return f"check `{check.command}` {outcome}{last}"


def objective_findings(bundle: Bundle, disabled: frozenset[str] = frozenset()) -> list[Issue]:
    """Facts no evaluator may argue with: declared artifacts missing, checks failing."""
    disabled = check_disabled(disabled)
    issues: list[Issue] = []
    if "missing_artifact" not in disabled:
        issues += [Issue(severity="high", file=glob, check="missing_artifact",
                         message=f"declared artifact `{glob}` matched no file")
                   for glob in bundle.unmatched_globs]
        if not bundle.artifacts and not bundle.checks and not bundle.unmatched_globs:
            # No evidence at all must not score 10 out of 10.
            issues.append(Issue(severity="high", check="missing_artifact",
                                message="the gate has no artifact file and no check: there is "
                                        "no evidence to judge; declare `artifacts:` or `checks:`"))
    if "failing_check" not in disabled:
        issues += [Issue(severity="high", check="failing_check", message=_describe_check(c))
                   for c in bundle.checks if not c.passed]
    return issues


def bundle_findings(bundle: Bundle, disabled: frozenset[str] = frozenset()) -> list[Issue]:
    disabled = check_disabled(disabled)
    found = objective_findings(bundle, disabled)
    for artifact in sorted(bundle.artifacts, key=lambda a: a.path):
        found += map(as_issue, scan_file(artifact.path, artifact.content,
                                         truncated=artifact.truncated))
    return sorted((i for i in found if i.check not in disabled), key=order_key)


def score(issues: Iterable[Issue]) -> dict[str, float]:
    """10 per dimension minus the documented penalty of every finding, clamped to 0-10."""
    lost = dict.fromkeys(DIMENSIONS, 0.0)
    for issue in issues:
        factor = SEVERITY_FACTOR[issue.severity]
        for dimension, points in PENALTIES.get(issue.check or "", {}).items():
            lost[dimension] += points * factor
    return {d: round(min(10.0, max(0.0, 10.0 - lost[d])), 2) for d in DIMENSIONS}


def _summary(bundle: Bundle, issues: list[Issue]) -> str:
    by_severity = Counter(i.severity for i in issues)
    counts = ", ".join(f"{by_severity[s]} {s}" for s in ("high", "medium", "low")
                       if by_severity[s]) or "none"
    passed = sum(c.passed for c in bundle.checks)
    return (f"heuristic review of {len(bundle.artifacts)} artifact file(s) and "
            f"{len(bundle.checks)} check(s) ({passed} passed): findings {counts}. "
            "The acceptance criteria were not judged (offline evaluator).")


class HeuristicEvaluator:
    """Deterministic: the same bundle always gives the same assessment."""

    label = "heuristic"

    def __init__(self, disabled: frozenset[str] = frozenset()) -> None:
        self.disabled = check_disabled(disabled)

    def assess(self, bundle: Bundle) -> Assessment:
        issues = bundle_findings(bundle, self.disabled)
        return Assessment(evaluator=self.label, scores=score(issues), issues=issues,
                          summary=_summary(bundle, issues))
