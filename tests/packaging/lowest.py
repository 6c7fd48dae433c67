"""The lowest dependency versions: the constraints file, and the fast subset of the tests
.ci/run runs with them (imported by .ci/lowest.py and by test_dependencies.py)."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CONSTRAINTS = ROOT / ".ci" / "constraints-lowest.txt"

# Every dependency is exercised: pygit2 (ledger, hooks, verify), pydantic and pyyaml (config,
# records, gates), jsonschema (memory), rich (health, log tables), anthropic (the evaluator
# and the judge through the real SDK against a fake transport), pre-commit (the framework
# route), pytest itself; the demo runs the whole product end to end.
FAST_SUBSET = [
    "tests/test_demo.py",
    "tests/test_ledger.py",
    "tests/test_records.py",
    "tests/test_verify.py",
    "tests/test_yamlio.py",
    "tests/test_cli.py",
    "tests/gates",
    "tests/memory",
    "tests/health",
    "tests/evaluators",
    "tests/evals/test_graders.py",
    "tests/evals/test_suite.py",
    "tests/hooks/test_precommit.py",
    "tests/hooks/test_framework.py::test_the_manifest_validates",
    "tests/hooks/test_framework.py::test_the_framework_runs_meridian_on_a_real_commit",
]


def lowest_pins() -> dict[str, str]:
    """distribution name (normalised) -> the pinned lowest version."""
    pins = {}
    for line in CONSTRAINTS.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, _, pin = line.partition("==")
            pins[name.strip().lower().replace("_", "-")] = pin.strip()
    return pins
