"""A gate's required features, judged at submit from the JUnit report its checks wrote.

A gate with ``features: {hardened: [ids], junit: PATH}`` passes only when every listed
feature is hardened (``meridian.features``) according to the report at ``PATH``
(default ``build/junit.xml``), written by one of the gate's checks during this very
submission: a report left from an earlier run is removed before the checks run, so
neither a stale report nor a hand-written one can stand in for a test run.

Each required feature that is not hardened is a high-severity issue (the reason from
``features.missing_hardened``); so is a report that is missing (naming the check that
should have written it) or unreadable. The result is recorded as ``features.computed``,
as ``meridian features`` records it, so ``meridian health`` shows it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from meridian.errors import ConfigError
from meridian.evaluators.models import CheckResult, Issue, Verdict, with_issues
from meridian.gates.graph import FeatureRequirements

if TYPE_CHECKING:
    from meridian.features import CompletionReport
    from meridian.ledger import Ledger

FEATURE_ISSUE = "feature_not_hardened"
REPORT_ISSUE = "junit_report"


@dataclass
class Completion:
    """What the required features add to a submission."""

    issues: list[Issue] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # for the evaluator's bundle
    report: CompletionReport | None = None

    def evidence(self, requirement: FeatureRequirements) -> dict[str, Any]:
        """What the verdict's evidence document keeps about the features."""
        from meridian.features import hardened_ids

        done = hardened_ids(self.report) if self.report else set()
        return {"junit": requirement.junit, "required": list(requirement.hardened),
                "hardened": [f for f in requirement.hardened if f in done],
                "issues": [issue.message for issue in self.issues]}


def remove_old_report(root: Path, requirement: FeatureRequirements) -> None:
    """Delete the report an earlier run left, so only this submission's checks can write it."""
    path = root / requirement.junit
    if path.is_symlink() or path.is_file():
        path.unlink()


def judge(root: Path, features_file: str, requirement: FeatureRequirements,
          results: list[CheckResult]) -> Completion:
    """Completion of the required features from the report the checks just wrote."""
    from meridian.features import compute, hardened_ids, missing_hardened

    required = list(requirement.hardened)
    junit = requirement.junit
    if not (root / features_file).is_file():
        return Completion(issues=[
            Issue(severity="high", file=features_file, check=FEATURE_ISSUE,
                  message=f"feature {feature_id}: must be hardened, but {features_file} "
                          "does not exist to say which tests prove it")
            for feature_id in required])
    if not (root / junit).is_file():
        return Completion(issues=[Issue(severity="high", file=junit, check=REPORT_ISSUE,
                                        message=_missing_report(junit, results))])
    try:
        report = compute(root / features_file, root / junit)
    except ConfigError as exc:
        return Completion(issues=[Issue(
            severity="high", file=junit, check=REPORT_ISSUE,
            message=f"the JUnit report the checks wrote cannot be read: {exc}")])
    issues = [Issue(severity="high", file=features_file, check=FEATURE_ISSUE, message=line)
              for line in missing_hardened(report, required)]
    done = hardened_ids(report)
    note = (f"required features, from the JUnit report {junit} the checks wrote: "
            f"hardened: {', '.join(f for f in required if f in done) or 'none'}; "
            f"not hardened: {', '.join(f for f in required if f not in done) or 'none'}")
    return Completion(issues=issues, notes=[note], report=report)


def _missing_report(junit: str, results: list[CheckResult]) -> str:
    writer = next((result for result in results if junit in result.command), None)
    if writer is None:
        return (f"JUnit report {junit} was not written: no check of this gate writes it; "
                f"add one that does, e.g. `pytest --junitxml={junit}`")
    outcome = ("" if writer.passed else " (it timed out)" if writer.timed_out else
               " (it could not start)" if writer.exit_code is None else
               f" (it exited {writer.exit_code})")
    return f"JUnit report {junit} was not written: check `{writer.command}` should write it{outcome}"


def record(ledger: Ledger, report: CompletionReport, gate: str) -> None:
    """The ``features.computed`` event, with the data ``meridian features`` records."""
    from meridian.features import FEATURES_COMPUTED

    ledger.emit(FEATURES_COMPUTED, report.event_data(),
                summary=f"features: {report.working}/{report.total} working, "
                        f"{report.hardened}/{report.total} hardened (gate submit {gate})")


def add_issues(verdict: Verdict, issues: list[Issue]) -> Verdict:
    """The verdict with more issues, pass/fail decided again (a high issue fails it)."""
    if not issues:
        return verdict
    return with_issues(verdict, issues)
