"""The completion tracker: which features are working and which are hardened.

``.meridian/features.yaml`` lists features and, by stage, the tests that prove them::

    version: 1
    features:
      - id: login
        description: users sign in with email and password
        tests:
          happy_path: [tests/test_login.py::test_valid_password]
          edge_cases: [tests/test_login.py::test_unicode_*]
          failure_modes: ["tests.test_login.test_wrong_password"]

A test id is a pytest node id (``tests/test_x.py::TestC::test_y``) or a JUnit
``classname.name``. Ids containing ``*`` or ``?`` are globs (``fnmatch``: there ``[``
opens a character class); other ids match exactly, and a pytest id without brackets
also matches all of its parametrised cases (``test_y`` covers ``test_y[1]``).

Status comes only from a JUnit XML report of a real test run, never from what anyone
says: a feature is **working** when it lists happy-path tests and every one was found
and passed; **hardened** when it is working and lists at least one edge-case and one
failure-mode test, every one found and passed.
"""

from __future__ import annotations

import fnmatch
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from meridian import records, yamlio
from meridian.errors import ConfigError

STAGES: tuple[str, ...] = ("happy_path", "edge_cases", "failure_modes")
Stage = Literal["happy_path", "edge_cases", "failure_modes"]
Outcome = Literal["passed", "failed", "error", "skipped"]
# When one test id appears more than once (reruns, several suites), the worst outcome counts.
_OUTCOME_RANK = {"passed": 0, "skipped": 1, "failed": 2, "error": 3}
FEATURES_COMPUTED = "features.computed"
FEATURE_ID = r"^[A-Za-z0-9][A-Za-z0-9_.-]*$"
_GLOB_CHARS = re.compile(r"[*?]")
_PARAMS = re.compile(r"\[.*\]$")


# --- the features file ---------------------------------------------------------------


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class FeatureTests(_Strict):
    happy_path: list[str] = Field(default_factory=list,
                                  description="tests of the feature's main use; all must pass")
    edge_cases: list[str] = Field(default_factory=list,
                                  description="tests of unusual but valid input")
    failure_modes: list[str] = Field(default_factory=list,
                                     description="tests that bad input or a broken dependency "
                                     "is handled")


class Feature(_Strict):
    id: str = Field(pattern=FEATURE_ID)
    description: str = ""
    tests: FeatureTests = Field(default_factory=FeatureTests)


class FeaturesFile(_Strict):
    version: Literal[1] = 1
    features: list[Feature] = Field(default_factory=list)


def load_features(path: Path) -> list[Feature]:
    """The features of ``path``; a ConfigError naming file and line when malformed."""
    if not yamlio.present(path):
        raise ConfigError(f"{yamlio.display_path(path)}: file not found; list your features and "
                          "the tests that prove them there (`meridian init --features` writes "
                          "a commented example to start from)")
    located = yamlio.load(path)
    if located.data is None:
        return []
    if not isinstance(located.data, dict):
        raise located.error((), "expected a mapping with `version` and `features`")
    parsed = yamlio.validate(FeaturesFile, located)
    seen: dict[str, int] = {}
    for index, feature in enumerate(parsed.features):
        if feature.id in seen:
            raise located.error(("features", index, "id"),
                                f"duplicate feature id {feature.id!r} (also features[{seen[feature.id]}])")
        seen[feature.id] = index
        for stage in STAGES:
            for position, test_id in enumerate(getattr(feature.tests, stage)):
                if not test_id.strip():
                    raise located.error(("features", index, "tests", stage, position),
                                        "expected a test id, got an empty string")
    return parsed.features


# --- the JUnit report ----------------------------------------------------------------


@dataclass(frozen=True)
class TestCase:
    """One ``<testcase>`` of a JUnit report."""

    id: str  # what reports show: pytest node id when derivable, else classname.name
    aliases: tuple[str, ...]  # every id a features file may use for this test
    outcome: Outcome


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def _node_ids(classname: str, name: str, file: str | None) -> list[str]:
    """pytest node ids this case may have, the most likely first.

    pytest's classname is the module path with dots plus any class names. With a
    ``file`` attribute (xunit1) the split is known; without it (xunit2) every split
    point is a candidate, since a module and a class look alike in dotted form. The
    most likely split treats trailing capitalised parts as classes (``TestLogin``).
    """
    parts = classname.split(".")
    if file and file.endswith(".py"):
        path = file.replace("\\", "/")
        # Compared as dotted text: a directory may have a dot in its name (tests/v1.2/).
        module = path[:-3].replace("/", ".")
        if classname == module or classname.startswith(module + "."):
            classes = classname[len(module) + 1:]
            return ["::".join([path, *(classes.split(".") if classes else []), name])]
    likely = len(parts)
    while likely > 1 and parts[likely - 1][:1].isupper():
        likely -= 1
    cuts = [likely] + [cut for cut in range(len(parts), 0, -1) if cut != likely]
    return ["::".join(["/".join(parts[:cut]) + ".py", *parts[cut:], name]) for cut in cuts]


def junit_form(test_id: str) -> str | None:
    """The ``classname.name`` pytest's JUnit writer gives the node ``test_id``, or None
    for an id that is not a node id. pytest joins the file path (dots for slashes,
    without ``.py``) and the ``::`` parts with dots, leaving the ``[params]`` as they
    are, so this matches however the module and class split is guessed back."""
    path, bracket, params = test_id.partition("[")
    names = path.split("::")
    # A glob's file part may not end in .py (tests/v1.2/*): it is converted the same way.
    if len(names) < 2 or not (names[0].endswith(".py") or _GLOB_CHARS.search(names[0])):
        return None
    names[0] = names[0].removesuffix(".py").replace("/", ".")
    return ".".join(names) + bracket + params


def _looks_like_pytest(classname: str) -> bool:
    return any(part in ("test", "tests") or part.startswith("test_") or part.endswith("_test")
               for part in classname.split("."))


def _case(element: ET.Element) -> TestCase:
    name = element.get("name", "")
    classname = element.get("classname", "") or ""
    outcome: Outcome = "passed"
    for child in element:
        tag = _local(child.tag)
        if tag in ("failure", "error", "skipped"):
            candidate: Outcome = "failed" if tag == "failure" else tag  # type: ignore[assignment]
            if _OUTCOME_RANK[candidate] > _OUTCOME_RANK[outcome]:
                outcome = candidate
    if not classname:
        return TestCase(name, (name,), outcome)
    junit_id = f"{classname}.{name}"
    nodes = _node_ids(classname, name, element.get("file"))
    shown = nodes[0] if element.get("file") or _looks_like_pytest(classname) else junit_id
    return TestCase(shown, (junit_id, *nodes), outcome)


def parse_junit(path: Path) -> list[TestCase]:
    """Every test case of a JUnit XML report (``<testsuites>`` or ``<testsuite>`` root)."""
    shown = yamlio.display_path(path)
    try:
        tree = ET.parse(path)
    except FileNotFoundError:
        raise ConfigError(f"{shown}: file not found") from None
    except ET.ParseError as exc:
        line, column = exc.position
        reason = str(exc).split(":")[0]
        raise ConfigError(f"{shown}:{line}: malformed JUnit XML: {reason} (column {column + 1})") from None
    except OSError as exc:
        raise ConfigError(f"{shown}: cannot read: {exc.strerror or exc}") from None
    root = tree.getroot()
    if _local(root.tag) not in ("testsuites", "testsuite"):
        raise ConfigError(f"{shown}:1: not a JUnit report: expected a <testsuites> or "
                          f"<testsuite> root element, got <{_local(root.tag)}>")
    return [_case(element) for element in root.iter() if _local(element.tag) == "testcase"]


# --- matching and status -------------------------------------------------------------


class TestResult(_Strict):
    """One listed test id of one stage and what the report says about it."""

    stage: Stage
    test: str
    matched: int  # test cases in the report that this id matches
    passed: int
    failing: list[str] = Field(default_factory=list)  # failed or errored cases
    skipped: list[str] = Field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.matched > 0 and self.passed == self.matched


class FeatureStatus(_Strict):
    id: str
    description: str
    working: bool
    hardened: bool
    tests: list[TestResult]
    missing: list[str]  # why the feature is not (yet) hardened, one line each


class CompletionReport(_Strict):
    features_file: str
    junit: str
    tests_in_report: int
    total: int
    working: int
    hardened: int
    working_pct: float  # 0.0 when no features are listed
    hardened_pct: float
    features: list[FeatureStatus]

    def event_data(self) -> dict[str, Any]:
        """What ``features.computed`` stores: the figures, not the per-test detail."""
        return {
            "junit": self.junit,
            "total": self.total,
            "working": self.working,
            "hardened": self.hardened,
            "working_pct": self.working_pct,
            "hardened_pct": self.hardened_pct,
            "working_ids": [f.id for f in self.features if f.working],
            "hardened_ids": [f.id for f in self.features if f.hardened],
        }


@records.register(FEATURES_COMPUTED)
class FeaturesComputed(_Strict):
    """Event data: the tracker's result, so `meridian health` can show completion."""

    junit: str
    total: int = Field(ge=0)
    working: int = Field(ge=0)
    hardened: int = Field(ge=0)
    working_pct: float = Field(ge=0, le=100)
    hardened_pct: float = Field(ge=0, le=100)
    working_ids: list[str] = Field(default_factory=list)
    hardened_ids: list[str] = Field(default_factory=list)


class _CaseIndex:
    """Test cases by every id they answer to, so a listed id is a lookup, not a scan."""

    def __init__(self, cases: list[TestCase]) -> None:
        self.cases = cases
        self.by_alias: dict[str, list[int]] = {}
        self.by_unparametrised: dict[str, list[int]] = {}
        for index, case in enumerate(cases):
            for alias in case.aliases:
                self.by_alias.setdefault(alias, []).append(index)
                bare = _PARAMS.sub("", alias)
                if bare != alias:
                    self.by_unparametrised.setdefault(bare, []).append(index)

    def find(self, test_id: str) -> list[TestCase]:
        # A node id is also looked up in the dotted form pytest writes into the report.
        forms = {test_id, junit_form(test_id) or test_id}
        if _GLOB_CHARS.search(test_id):
            patterns = [re.compile(fnmatch.translate(form)) for form in forms]
            found = {i for alias, ids in self.by_alias.items()
                     if any(pattern.match(alias) for pattern in patterns) for i in ids}
        else:
            found = set()
            for form in forms:
                found.update(self.by_alias.get(form, ()))
                if "[" not in form:
                    found.update(self.by_unparametrised.get(form, ()))
        return [self.cases[i] for i in sorted(found)]


def _match(test_id: str, stage: Stage, index: _CaseIndex) -> TestResult:
    by_id: dict[str, Outcome] = {}
    for case in index.find(test_id):
        previous = by_id.get(case.id)
        if previous is None or _OUTCOME_RANK[case.outcome] > _OUTCOME_RANK[previous]:
            by_id[case.id] = case.outcome
    return TestResult(
        stage=stage, test=test_id, matched=len(by_id),
        passed=sum(1 for outcome in by_id.values() if outcome == "passed"),
        failing=sorted(i for i, o in by_id.items() if o in ("failed", "error")),
        skipped=sorted(i for i, o in by_id.items() if o == "skipped"),
    )


def _problems(stage: Stage, results: list[TestResult]) -> list[str]:
    if not results:
        return [f"{stage}: no tests listed"]
    lines = []
    for result in results:
        if result.matched == 0:
            lines.append(f"{stage}: {result.test}: not found in the report")
        lines.extend(f"{stage}: {case}: failed" for case in result.failing)
        lines.extend(f"{stage}: {case}: skipped" for case in result.skipped)
    return lines


def feature_status(feature: Feature, index: _CaseIndex) -> FeatureStatus:
    by_stage: dict[str, list[TestResult]] = {
        stage: [_match(test_id, stage, index) for test_id in getattr(feature.tests, stage)]  # type: ignore[arg-type]
        for stage in STAGES
    }

    def complete(stage: str) -> bool:
        return bool(by_stage[stage]) and all(result.ok for result in by_stage[stage])

    working = complete("happy_path")
    hardened = working and complete("edge_cases") and complete("failure_modes")
    missing = [line for stage in STAGES for line in _problems(stage, by_stage[stage])]  # type: ignore[arg-type]
    return FeatureStatus(
        id=feature.id, description=feature.description, working=working, hardened=hardened,
        tests=[result for stage in STAGES for result in by_stage[stage]], missing=missing,
    )


def _percent(part: int, whole: int) -> float:
    return round(100.0 * part / whole, 1) if whole else 0.0


def compute(features_path: Path | str, junit_path: Path | str) -> CompletionReport:
    """Working and hardened status of every feature, from a JUnit XML report."""
    features = load_features(Path(features_path))
    cases = parse_junit(Path(junit_path))
    index = _CaseIndex(cases)
    statuses = [feature_status(feature, index) for feature in features]
    working = sum(1 for s in statuses if s.working)
    hardened = sum(1 for s in statuses if s.hardened)
    return CompletionReport(
        features_file=yamlio.display_path(features_path), junit=yamlio.display_path(junit_path),
        tests_in_report=len(cases), total=len(statuses), working=working, hardened=hardened,
        working_pct=_percent(working, len(statuses)), hardened_pct=_percent(hardened, len(statuses)),
        features=statuses,
    )


def hardened_ids(report: CompletionReport) -> set[str]:
    """Ids of the hardened features (what a gate's ``features: {hardened: [...]}`` needs)."""
    return {status.id for status in report.features if status.hardened}


def missing_hardened(report: CompletionReport, required: Iterable[str]) -> list[str]:
    """One line per required feature that is not hardened, saying why; [] when all are."""
    by_id = {status.id: status for status in report.features}
    lines = []
    for feature_id in required:
        status = by_id.get(feature_id)
        if status is None:
            lines.append(f"feature {feature_id}: not listed in {report.features_file}")
        elif not status.hardened:
            reasons = "; ".join(status.missing) or "not hardened"
            lines.append(f"feature {feature_id}: not hardened ({reasons})")
    return lines
