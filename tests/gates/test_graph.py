"""gates.yaml loading: every mistake is one line with file, line and field; exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from meridian import yamlio
from meridian.gates import globs
from meridian.gates.graph import load_graph, parse_graph, schema_json
from meridian.templates import template_root

SCHEMA_FILE = Path(__file__).resolve().parents[2] / ".meridian-template" / "schemas" / "gates.schema.json"


@pytest.mark.parametrize(("text", "expected"), [
    pytest.param(
        """
        gates:
          - id: scope
            colour: red
        """,
        "gates.yaml:3: gates[0].colour: unknown key",
        id="unknown-key",
    ),
    pytest.param(
        """
        gates:
          - id: scope
          - id: backend
            needs: [scope, api]
        """,
        "gates.yaml:4: gates[1].needs[1]: unknown gate 'api' (gates: scope, backend)",
        id="unknown-need",
    ),
    pytest.param(
        """
        gates:
          - id: scope
          - id: backend
          - id: scope
        """,
        "gates.yaml:4: gates[2].id: duplicate gate id 'scope' (first declared at line 2)",
        id="duplicate-id",
    ),
    pytest.param(
        """
        gates:
          - id: scope
            estimate_hours: a few
        """,
        "gates.yaml:3: gates[0].estimate_hours: input should be a valid number, "
        "unable to parse string as a number",
        id="wrong-type",
    ),
    pytest.param(
        """
        gates:
          - id: scope
            needs: scope
        """,
        "gates.yaml:3: gates[0].needs: input should be a valid list",
        id="needs-not-a-list",
    ),
    pytest.param(
        """
        gates:
          - id: scope
            checks:
              - pytest -q
              - 42
        """,
        "gates.yaml:5: gates[0].checks[1]: a check is a command string or a mapping "
        "with run: and timeout:",
        id="bad-check",
    ),
    pytest.param(
        """
        gates:
          - id: scope
            checks:
              - {run: pytest, timeout: -1}
        """,
        "gates.yaml:4: gates[0].checks[0].timeout: input should be greater than 0",
        id="bad-timeout",
    ),
    pytest.param(
        """
        gates:
          - id: scope
            checks:
              - {run: pytest, timeout: .inf}
        """,
        # An infinite timeout once crashed submit after the gate was marked submitted.
        "gates.yaml:4: gates[0].checks[0].timeout: input should be a finite number",
        id="infinite-timeout",
    ),
    pytest.param(
        """
        gates:
          - id: scope
            estimate_hours: .nan
        """,
        "gates.yaml:3: gates[0].estimate_hours: input should be a finite number",
        id="nan-estimate",
    ),
    pytest.param(
        """
        gates:
          - id: deploy
            approval: {token: hunter2}
        """,
        "gates.yaml:3: gates[0].approval: never store the token itself; give token_sha256 "
        "(printf %s TOKEN | sha256sum) or token_env",
        id="plain-token",
    ),
    pytest.param(
        """
        gates:
          - id: deploy
            artifacts: [../secrets]
        """,
        "gates.yaml:3: gates[0].artifacts[0]: '../secrets': '..' would leave the repository",
        id="glob-outside-repo",
    ),
    pytest.param(
        """
        gates:
          - id: a
            needs: [c]
          - id: b
            needs: [a]
          - id: c
            needs: [b]
        """,
        "gates.yaml:3: gates[0].needs[0]: cycle in needs: a -> b -> c -> a "
        "(each gate needs the one before it)",
        id="cycle",
    ),
    pytest.param(
        """
        gates:
          - id: solo
            needs: [solo]
        """,
        "gates.yaml:3: gates[0].needs[0]: cycle in needs: solo -> solo "
        "(each gate needs the one before it)",
        id="self-cycle",
    ),
    pytest.param("gates: []\n", "gates.yaml:1: gates: list should have at least 1 item after "
                 "validation, not 0", id="empty"),
    pytest.param("- id: a\n", "gates.yaml:1: expected a mapping with a 'gates:' list",
                 id="not-a-mapping"),
])
def test_graph_errors_name_file_line_and_field(write_gates, cli, text, expected) -> None:
    write_gates(text)
    result = cli("status")
    assert result.code == 2
    assert result.err == f"meridian: .meridian/{expected}\n"


@pytest.mark.parametrize(("pattern", "problem"), [
    # A '[' whose class never closes once sent the glob translator into an endless loop.
    ("src/]a[", "unbalanced '[' in character class"),
    ("src/[]", "unbalanced '[' in character class"),
    ("src/[z-a].py", "invalid character class: bad character range z-a"),
])
def test_a_glob_that_cannot_compile_is_a_located_error(write_gates, cli, pattern, problem
                                                        ) -> None:
    write_gates(f"""
        gates:
          - id: a
            artifacts: ["{pattern}"]
    """)
    result = cli("status")
    assert result.code == 2
    assert result.err == (f"meridian: .meridian/gates.yaml:3: gates[0].artifacts[0]: "
                          f"'{pattern}': {problem}\n")


def test_a_need_listed_twice_is_reported(write_gates, cli) -> None:
    write_gates("""
        gates:
          - id: a
          - id: b
            needs: [a, a]
    """)
    result = cli("status")
    assert result.code == 2
    assert result.err == ("meridian: .meridian/gates.yaml:4: gates[1].needs[1]: "
                          "'a' is already listed in needs\n")


def test_cycle_is_printed_as_its_path_even_behind_other_gates(write_gates, cli) -> None:
    write_gates("""
        gates:
          - id: scope
          - id: frontend
            needs: [backend]
          - id: backend
            needs: [scope, deployed]
          - id: deployed
            needs: [frontend]
    """)
    result = cli("gate", "show", "scope")
    assert result.code == 2
    assert "cycle in needs: frontend -> deployed -> backend -> frontend" in result.err
    assert "gates.yaml:4: gates[1].needs[0]" in result.err


def test_missing_graph_says_how_to_create_one(project, cli) -> None:
    result = cli("status")
    assert result.code == 2
    assert result.err == (
        "meridian: .meridian/gates.yaml: no gate graph; write one or run "
        "`meridian init --template NAME` (`meridian init --list-templates` lists them)\n")


def test_dependency_order_and_gate_for_path(write_gates, project) -> None:
    write_gates("""
        gates:
          - id: frontend
            needs: [backend]
            artifacts: ["web/**"]
          - id: docs
            artifacts: [README.md, "docs"]
          - id: backend
            artifacts: ["src/**/*.py", "tests/test_*.py"]
          - id: release
            needs: [frontend, docs]
            artifacts: ["*.md"]
    """)
    graph = load_graph(project)
    assert graph.order == ["docs", "backend", "frontend", "release"]
    assert graph.gate_for_path("src/app/models.py") == ["backend"]
    assert graph.gate_for_path("src/models.py") == ["backend"]
    assert graph.gate_for_path("src/app/models.txt") == []
    assert graph.gate_for_path("README.md") == ["docs", "release"]
    assert graph.gate_for_path("./docs/guide/intro.md") == ["docs"]
    assert graph.gate_for_path("tests/test_api.py") == ["backend"]
    assert graph.gate_for_path("tests/unit/test_api.py") == []
    assert graph.gate_for_path("web/index.html") == ["frontend"]
    assert graph.dependents("backend") == ["frontend"]


@pytest.mark.parametrize(("pattern", "path", "expected"), [
    ("*.py", "a.py", True),
    ("*.py", "pkg/a.py", False),
    ("**/*.py", "a.py", True),
    ("**/*.py", "pkg/sub/a.py", True),
    ("src/**", "src/a/b/c.txt", True),
    ("src/", "src/a.txt", True),
    ("src", "srcx/a.txt", False),
    ("file?.txt", "file1.txt", True),
    ("file?.txt", "file10.txt", False),
    ("[ab].txt", "b.txt", True),
    ("[!ab].txt", "b.txt", False),
    ("data.v1.csv", "dataxv1.csv", False),
    ("src/[]]x", "src/]x", True),  # ']' first in a class is a member, as in fnmatch
    ("x/[^a]", "x/^", True),  # '^' is not negation in a glob
    ("x/[^a]", "x/b", False),
])
def test_glob_semantics(pattern, path, expected) -> None:
    assert globs.matches(pattern, path) is expected


def test_published_schema_matches_the_models() -> None:
    assert SCHEMA_FILE.read_text() == schema_json(), (
        "regenerate: python -m meridian.gates.graph > .meridian-template/schemas/gates.schema.json")
    schema = json.loads(SCHEMA_FILE.read_text())
    assert schema["additionalProperties"] is False
    assert set(schema["$defs"]["GateSpec"]["properties"]) == {
        "id", "needs", "description", "acceptance", "artifacts", "checks", "evaluate",
        "approval", "estimate_hours", "features", "exclude", "mutation"}


def test_every_template_loads_validates_and_matches_the_schema(tmp_path) -> None:
    import jsonschema

    schema = json.loads(SCHEMA_FILE.read_text())
    names = sorted(p.stem for p in (template_root() / "gates").glob("*.yaml"))
    assert names == ["cli", "library", "ml-research", "web-app"]
    for name in names:
        located = yamlio.load(template_root() / "gates" / f"{name}.yaml")
        jsonschema.validate(located.data, schema)
        graph = parse_graph(located, tmp_path)
        assert graph.order[0] == graph.ordered()[0].id
        assert all(spec.acceptance.strip() for spec in graph.ordered()), name
    web = parse_graph(yamlio.load(template_root() / "gates" / "web-app.yaml"), tmp_path)
    assert web.order == ["scope", "backend", "frontend", "integrated", "deployed"]


def test_features_requirement_is_kept_for_the_completion_tracker(write_gates, project) -> None:
    write_gates("""
        gates:
          - id: auth
            features: {hardened: [login, logout]}
    """)
    assert load_graph(project).gate("auth").features.hardened == ["login", "logout"]
