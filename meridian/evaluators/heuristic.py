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
    hollow_test       a test that cannot fail: no reachable assertion,      high
                      tautologies, swallowed assertions, its unit mocked
    skipped_test      unconditional skip, non-strict xfail, it.skip/xit,    high
                      commented-out tests; a skip on a real condition with
                      a reason is medium; high in the change, old skips
                      included, when a changed module or feature is left
                      with no running test
    empty_file        an artifact that is empty or only whitespace          medium
    syntax_error      a Python artifact that does not parse (the stub and   high
                      test checks cannot read it, so it must not pass); a
                      source file (py, js/ts, go, rs, java/kt, sh) that
                      cannot be read as text at all
    swallowed_error   ``except Exception: pass`` / ``catch (e) {}`` in      medium
                      shipped code

What it judges: completeness always; correctness when the gate has checks (they are
the only objective evidence of it); robustness when the artifacts hold tests; never
spec adherence (it does not read the acceptance criteria). A dimension it cannot judge
is absent from the scores and listed as not judged; the verdict's scope reads
``objective checks only``.

Scores: every judged dimension starts at 10; each finding in the change subtracts the
points in ``PENALTIES[check]`` times ``SEVERITY_FACTOR[severity]`` from the dimensions
listed; each score is clamped to 0-10. Findings outside the change (``pre_existing``)
are reported without costing points (unless pre-existing findings block). The rules
system turns a check off by its id (rule mechanism ``heuristic:<check id>``): a disabled
check is not run at all.

The checks that read file contents live in ``scan`` and produce plain ``Finding``
values (no pydantic: the pre-commit hook runs them); this module adds the objective
findings and the scores, and turns findings into the verdict's ``Issue`` models.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping

from meridian.evaluators._base import Assessment
from meridian.evaluators.changes import Suppressed
from meridian.evaluators.findings import Finding
from meridian.evaluators.models import DIMENSIONS, Bundle, CheckResult, Issue, SuppressedIssue
from meridian.evaluators.scan import (
    CHECK_IDS,
    EMPTY_IS_FINE,
    check_disabled,
    is_python_test_file,
    is_test_path,
    order_key,
    scan_findings,
    scan_tree,
    unreadable_source,
)

__all__ = [
    "CHECK_IDS", "EMPTY_IS_FINE", "PENALTIES", "SCOPE", "SEVERITY_FACTOR", "HeuristicEvaluator",
    "as_issue", "bundle_findings", "bundle_scan", "is_python_test_file", "judged_dimensions",
    "objective_findings", "scan_files", "score",
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
    "swallowed_error": {"robustness": 2.0, "correctness": 1.0},
}
SCOPE = "objective checks only"
SEVERITY_FACTOR: dict[str, float] = {"high": 1.0, "medium": 0.5, "low": 0.1}

CHECK_OUTPUT_TAIL = 300


def as_issue(finding: Finding) -> Issue:
    """The verdict's model of a scanner finding (same fields)."""
    return Issue(severity=finding.severity, file=finding.file, line=finding.line,
                 message=finding.message, check=finding.check, pre_existing=finding.pre_existing)


def as_suppressed(item: Suppressed) -> SuppressedIssue:
    return SuppressedIssue(file=item.file, line=item.line, kind=item.kind, reason=item.reason,
                           finding_line=item.finding_line, message=item.message, added=item.added)


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
        targets = {a.path: a.content for a in bundle.artifacts}
        for link, paths in sorted(bundle.linked_dirs.items()):
            shown = ", ".join(paths[:3]) + (f" and {len(paths) - 3} more" if len(paths) > 3 else "")
            issues.append(Issue(
                severity="high", file=link, check="missing_artifact",
                message=(f"`{link}` is a symlink to a directory ({targets.get(link, '?')}): "
                         f"{shown} match the gate's artifacts through it, but git stores the "
                         "link as its target path, so no file behind it is judged or bound "
                         "to the verdict; put the files in the tree in place of the link, "
                         "or cover the target's own path with the gate's artifacts")))
        if not bundle.artifacts and not bundle.checks and not bundle.unmatched_globs:
            # No evidence at all must not score 10 out of 10.
            issues.append(Issue(severity="high", check="missing_artifact",
                                message="the gate has no artifact file and no check: there is "
                                        "no evidence to judge; declare `artifacts:` or `checks:`"))
    if "failing_check" not in disabled:
        issues += [Issue(severity="high", check="failing_check", message=_describe_check(c))
                   for c in bundle.checks if not c.passed]
    return issues


def _excluded(bundle: Bundle) -> list[str]:
    if not bundle.exclude_globs:
        return []
    from meridian.gates.globs import matches_any

    return sorted(a.path for a in bundle.artifacts if matches_any(bundle.exclude_globs, a.path))


def _added_exclusions(bundle: Bundle, excluded: list[str],
                      changed: dict[str, tuple[tuple[int, int], ...]] | None) -> list[Issue]:
    """A medium issue per ``exclude:`` glob added during the gate that keeps changed
    files out of the scan: the work's author silenced the offline scan on them."""
    if not bundle.exclude_added:
        return []
    from meridian.gates.globs import matches_any

    out = []
    for glob in bundle.exclude_added:
        hidden = [p for p in excluded if matches_any([glob], p)
                  and (changed is None or changed.get(p))]
        if hidden:
            shown = ", ".join(hidden[:5]) + (f" and {len(hidden) - 5} more"
                                             if len(hidden) > 5 else "")
            out.append(Issue(severity="medium", check="exclude", message=(
                f"`exclude: {glob}` was added during this gate and keeps changed file(s) "
                f"out of the offline scan: {shown}; the work's author silenced the scan "
                "there, so what those files hold was not judged")))
    return out


def bundle_scan(bundle: Bundle, disabled: frozenset[str] = frozenset()
                ) -> tuple[list[Issue], list[SuppressedIssue], list[str]]:
    """Every finding of the bundle (objective ones first), the findings inline markers
    allowed, and the artifact files the gate's ``exclude:`` globs keep out of the scan."""
    disabled = check_disabled(disabled)
    found = objective_findings(bundle, disabled)
    excluded = _excluded(bundle)
    skip = set(excluded)
    files = {a.path: a.content for a in bundle.artifacts if a.path not in skip}
    truncated = frozenset(a.path for a in bundle.artifacts if a.truncated)
    changed = None if bundle.changed_lines is None else {
        path: tuple((int(a), int(b)) for a, b in ranges)
        for path, ranges in bundle.changed_lines.items()}
    result = scan_tree(files, disabled, changed=changed, truncated=truncated,
                       features=bundle.feature_tests)
    found += map(as_issue, result.findings)
    # A source file the scan could not read as text is judged unreadable, not skipped.
    found += [as_issue(finding) for a in bundle.artifacts
              if a.path not in skip and a.truncated and a.total_chars is None and not a.content
              if (finding := unreadable_source(a.path)) is not None]
    found += _added_exclusions(bundle, excluded, changed)
    issues = sorted((i for i in found if i.check not in disabled), key=order_key)
    return issues, [as_suppressed(s) for s in result.suppressed], excluded


def bundle_findings(bundle: Bundle, disabled: frozenset[str] = frozenset()) -> list[Issue]:
    return bundle_scan(bundle, disabled)[0]


def judged_dimensions(bundle: Bundle) -> list[str]:
    """What objective evidence can speak to: see the module docstring."""
    judged = ["completeness"]
    if bundle.checks:
        judged.append("correctness")
    if bundle.checks or any(is_test_path(a.path) for a in bundle.artifacts):
        judged.append("robustness")
    return judged


def score(issues: Iterable[Issue], judged: Iterable[str] = DIMENSIONS, *,
          block_pre_existing: bool = False) -> dict[str, float]:
    """10 per judged dimension minus the documented penalty of every finding in the
    change, clamped to 0-10."""
    judged = [d for d in DIMENSIONS if d in set(judged)]
    lost = dict.fromkeys(judged, 0.0)
    for issue in issues:
        if issue.pre_existing and not block_pre_existing:
            continue
        factor = SEVERITY_FACTOR[issue.severity]
        for dimension, points in PENALTIES.get(issue.check or "", {}).items():
            if dimension in lost:
                lost[dimension] += points * factor
    return {d: round(min(10.0, max(0.0, 10.0 - lost[d])), 2) for d in judged}


def _summary(bundle: Bundle, issues: list[Issue], suppressed: list[SuppressedIssue],
             excluded: list[str], not_judged: list[str]) -> str:
    current = [i for i in issues if not i.pre_existing]
    by_severity = Counter(i.severity for i in current)
    counts = ", ".join(f"{by_severity[s]} {s}" for s in ("high", "medium", "low")
                       if by_severity[s]) or "none"
    passed = sum(c.passed for c in bundle.checks)
    text = (f"heuristic review ({SCOPE}) of {len(bundle.artifacts)} artifact file(s) and "
            f"{len(bundle.checks)} check(s) ({passed} passed): findings in the change {counts}")
    older = len(issues) - len(current)
    if older:
        text += f"; {older} pre-existing finding(s) outside the change"
    if suppressed:
        added = sum(s.added for s in suppressed)
        text += f"; {len(suppressed)} finding(s) allowed by inline markers"
        if added:
            text += f" ({added} written during this gate)"
    if excluded:
        text += f"; {len(excluded)} file(s) excluded from the scan"
    return text + (f". Not judged: {', '.join(not_judged)} (the offline evaluator does not read "
                   "the acceptance criteria or judge what checks and tests cannot show).")


class HeuristicEvaluator:
    """Deterministic: the same bundle always gives the same assessment."""

    label = "heuristic"

    def __init__(self, disabled: frozenset[str] = frozenset(), *,
                 block_pre_existing: bool = False) -> None:
        self.disabled = check_disabled(disabled)
        self.block_pre_existing = block_pre_existing

    def assess(self, bundle: Bundle) -> Assessment:
        issues, suppressed, excluded = bundle_scan(bundle, self.disabled)
        judged = judged_dimensions(bundle)
        not_judged = [d for d in DIMENSIONS if d not in judged]
        return Assessment(evaluator=self.label,
                          scores=score(issues, judged, block_pre_existing=self.block_pre_existing),
                          issues=issues,
                          summary=_summary(bundle, issues, suppressed, excluded, not_judged),
                          not_judged=tuple(not_judged), scope=SCOPE, suppressed=suppressed,
                          excluded=excluded)
