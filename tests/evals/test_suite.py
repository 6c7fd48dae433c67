"""Suite loading: defaults, grader spellings, hashes, and located errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from meridian.errors import ConfigError
from meridian.evals.suite import Suite, load_suite, parse_suite
from meridian.evals.types import GraderSpec

GOOD = """\
suite: demo
defaults:
  timeout_s: 15
  cost_budget_usd: 0.025
  tags: [default]
  metadata: {owner: evals}
tasks:
  - id: reverse
    input: "Reverse the capital of Japan."
    expected: "oykoT"
    grader:
      - exact_match: {case_sensitive: true}
      - tool_choice_precision
      - step_efficiency: {slack: 1}
    expected_tools: [lookup, string_op]
    reference_steps: 3
    tags: [composite]
    metadata: {source: seed}
  - id: add
    input: "What is 2 + 2?"
    expected: 4
    grader: numeric_tolerance
    timeout_s: 5
  - id: mapping_form
    input: "x"
    expected: "x"
    grader: {exact_match: null, completed: {}}
"""


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def load_text(workdir: Path, text: str) -> Suite:
    (workdir / "suite.yaml").write_text(text)
    return load_suite("suite.yaml")


def error_of(workdir: Path, text: str) -> str:
    with pytest.raises(ConfigError) as err:
        load_text(workdir, text)
    return str(err.value)


def test_a_suite_loads_with_defaults_merged(workdir: Path) -> None:
    suite = load_text(workdir, GOOD)
    assert suite.name == "demo"
    reverse, add, mapping_form = suite.tasks
    assert reverse.graders == [GraderSpec(name="exact_match", args={"case_sensitive": True}),
                               GraderSpec(name="tool_choice_precision"),
                               GraderSpec(name="step_efficiency", args={"slack": 1})]
    assert (reverse.timeout_s, reverse.cost_budget_usd, reverse.tags) == (15, 0.025, ["composite"])
    assert reverse.metadata == {"owner": "evals", "source": "seed"}
    assert (add.timeout_s, add.tags, add.graders) == (5, ["default"], [GraderSpec(name="numeric_tolerance")])
    assert [g.name for g in mapping_form.graders] == ["exact_match", "completed"]
    assert suite.task("add") is add


def test_suite_hash_follows_the_task_definitions_not_the_text(workdir: Path) -> None:
    base = parse_suite(GOOD).hash
    reformatted = GOOD.replace("suite: demo", "# a comment\nsuite: demo").replace("[default]", "[ default ]")
    assert parse_suite(reformatted).hash == base
    assert parse_suite(GOOD.replace("expected: 4", "expected: 5")).hash != base
    assert parse_suite(GOOD.replace("{slack: 1}", "{slack: 2}")).hash != base
    assert len(base) == 64


def test_select_by_tag_limit_and_offline() -> None:
    suite = parse_suite(GOOD + """\
  - id: judged
    input: "q"
    expected: "a"
    grader: llm_judge
    tags: [llm]
""")
    assert [t.id for t in suite.select(tags=["composite"])] == ["reverse"]
    assert [t.id for t in suite.select(limit=2)] == ["reverse", "add"]
    assert [t.id for t in suite.select(offline=True)] == ["reverse", "add", "mapping_form"]
    assert [t.id for t in suite.select(tags=["llm"])] == ["judged"]


@pytest.mark.parametrize(("text", "message"), [
    (GOOD + "  - id: add\n    input: again\n    grader: no_such_grader\n",
     "suite.yaml:28: task 'add': id: duplicate task id (first defined at line 19)"),
    (GOOD.replace("grader: numeric_tolerance", "grader: numeric_tolerence"),
     ("suite.yaml:22: task 'add': grader: unknown grader 'numeric_tolerence' (known: completed, "
     "contains_all, cost_budget, exact_match, json_schema_match, latency_budget, llm_judge, "
     "no_redundant_calls, numeric_tolerance, recovered_from_error, regex_match, step_efficiency, "
     "tool_choice_precision)")),
    (GOOD.replace("{slack: 1}", "{slak: 1}"),
     ("suite.yaml:14: task 'reverse': grader[2]: grader 'step_efficiency' has no argument 'slak' "
     "(accepted: kinds, reference_steps, slack)")),
    (GOOD.replace("{case_sensitive: true}", "{case_sensitive: maybe}"),
     ("suite.yaml:12: task 'reverse': grader[0]: grader 'exact_match' argument 'case_sensitive': "
     "input should be a valid boolean, got 'maybe'")),
    (GOOD.replace("exact_match: null", "exact_match: [1]"),
     ("suite.yaml:27: task 'mapping_form': grader.exact_match: arguments of exact_match must be a "
     "mapping, got [1]")),
    (GOOD.replace("    reference_steps: 3\n", ""),
     ("suite.yaml:14: task 'reverse': grader[2]: step_efficiency needs reference_steps, which the task "
     "does not set")),
    (GOOD.replace("    grader: numeric_tolerance\n", ""),
     "suite.yaml:19: task 'add': grader: at least one grader is required"),
    (GOOD.replace("    timeout_s: 5", "    timeout_s: -5"),
     "suite.yaml:23: task 'add': timeout_s: input should be greater than 0"),
    (GOOD.replace("    timeout_s: 5", "    timeout: 5"),
     "suite.yaml:23: task 'add': timeout: unknown key"),
    (GOOD.replace("  timeout_s: 15", "  timeout_s: fifteen"),
     "suite.yaml:3: defaults.timeout_s: input should be a valid number, unable to parse string as a number"),
    (GOOD.replace("  timeout_s: 15", "  id: fifteen"),
     "suite.yaml:3: defaults.id: unknown key"),
    (GOOD.replace("suite: demo\n", ""),
     "suite.yaml:1: suite: required field is missing"),
    ("suite: demo\ntasks: []\n",
     "suite.yaml:2: tasks: a suite needs 'tasks' (a list) or 'tasks_from' (a file)"),
    ("suite: demo\ntasks:\n  - just a string\n",
     "suite.yaml:3: tasks[0]: a task is a mapping with at least 'id' and 'input'"),
    ("suite: demo\ntasks:\n  - id: a\n    grader: completed\n",
     "suite.yaml:3: task 'a': input: required field is missing"),
    ("- a\n- b\n", "suite.yaml:1: a suite is a mapping with 'suite' and 'tasks'"),
    ("suite: demo\ntasks:\n  - id: a\n    input: q\n    grader: [[completed]]\n",
     ("suite.yaml:5: task 'a': grader[0]: expected a grader name, a list of names and "
     "{name: {arguments}}, or a mapping")),
    # Values no run file can hold (strict JSON) are refused here, not at save time.
    ("suite: demo\ntasks:\n  - id: a\n    input: [1,\n      {b: .nan}]\n    grader: completed\n",
     "suite.yaml:5: task 'a': input[1].b: input should be a finite number"),
    ("suite: demo\ntasks:\n  - id: a\n    input: q\n    timeout_s: 1e400\n    grader: completed\n",
     "suite.yaml:5: task 'a': timeout_s: input should be a finite number"),
    ("suite: demo\ntasks:\n  - id: a\n    input: q\n    grader: {json_schema_match: {schema: {maximum: .inf}}}\n",
     "suite.yaml:5: task 'a': grader.json_schema_match: argument 'schema': input should be a finite number"),
])
def test_errors_name_file_line_task_and_field(workdir: Path, text: str, message: str) -> None:
    assert error_of(workdir, text) == message


def test_grader_from_defaults_is_reported_at_the_defaults(workdir: Path) -> None:
    text = ("suite: demo\ndefaults:\n  grader:\n    - completed\n    - step_efficiency\n"
            "tasks:\n  - id: a\n    input: q\n")
    assert error_of(workdir, text) == (
        "suite.yaml:5: task 'a': defaults.grader[1]: step_efficiency needs reference_steps, "
        "which the task does not set"
    )
    suite = load_text(workdir, text.replace("input: q", "input: q\n    reference_steps: 2"))
    assert [g.name for g in suite.tasks[0].graders] == ["completed", "step_efficiency"]


def test_missing_file_is_a_config_error(workdir: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        load_suite("nope.yaml")
    assert str(caught.value) == ("nope.yaml: no such suite file, and no bundled suite of that "
                                 "name (bundled: reference; see `meridian eval suites`)")


def test_a_name_that_is_not_a_file_is_a_bundled_suite(workdir: Path) -> None:
    suite = load_suite("reference")
    assert suite.name == "reference" and len(suite.tasks) == 25
    (workdir / "reference").write_text("suite: mine\ntasks:\n  - {id: a, input: q, grader: completed}\n")
    # a bare bundled name always means the bundled suite (rt4 F6); the file is a path
    assert load_suite("reference").name == "reference"
    assert load_suite("./reference").name == "mine"
    assert load_suite(Path("reference")).name == "mine"  # a Path object is a path
