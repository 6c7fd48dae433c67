"""The published JSON Schemas: current, valid against their meta-schema, and true for the
real records, files and YAML a real flow writes (the demo's gate lifecycle, memory and
eval runs; a command agent's input and output; the files init writes)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from jsonschema import Draft202012Validator

from meridian import schemas
from meridian.cli import main
from tests.packaging.conftest import ROOT

PUBLISHED = ROOT / ".meridian-template" / "schemas"


class _Loader(yaml.SafeLoader):
    """YAML as editors read it (YAML 1.2 core): a date is a string, not a timestamp."""


_Loader.yaml_implicit_resolvers = {
    key: [r for r in resolvers if r[0] != "tag:yaml.org,2002:timestamp"]
    for key, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()}


def load_yaml(text: str) -> Any:
    return yaml.load(text, Loader=_Loader)  # a SafeLoader subclass


def schema(name: str) -> Draft202012Validator:
    return Draft202012Validator(json.loads((PUBLISHED / name).read_text()))


def errors(name: str, instance: Any) -> list[str]:
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}"
            for e in schema(name).iter_errors(instance)]


REGENERATE = f"{sys.executable} -m meridian.schemas"


def test_the_published_schemas_are_the_generated_ones() -> None:
    generated = schemas.documents()
    on_disk = {path.name: path.read_text() for path in PUBLISHED.glob("*.json")}
    stale = sorted(name for name in generated if on_disk.get(name) != generated[name])
    extra = sorted(set(on_disk) - set(generated))
    assert not stale and not extra, (
        f"published schemas out of date (stale or missing: {stale}; no longer generated: "
        f"{extra}); regenerate them with `{REGENERATE}` (from any directory; it writes "
        f"{PUBLISHED}), delete the extra ones, and commit")


def test_the_regeneration_command_writes_the_checkout_from_any_directory(
        tmp_path: Path) -> None:
    assert schemas.source_target() == PUBLISHED
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, "-m", "meridian.schemas", str(out)], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    assert sorted(p.name for p in out.iterdir()) == sorted(schemas.documents())
    assert [p.name for p in tmp_path.iterdir()] == ["out"]  # nothing written beside it


@pytest.mark.parametrize("name", sorted(p.name for p in PUBLISHED.glob("*.json")))
def test_each_schema_is_valid_against_its_meta_schema(name: str) -> None:
    document = json.loads((PUBLISHED / name).read_text())
    assert document["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert document.get("title"), name
    Draft202012Validator.check_schema(document)


def _state(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True,
                          check=True).stdout


def test_real_records_and_files_of_a_real_flow_match_the_schemas(tmp_path: Path,
                                                                 capfd: pytest.CaptureFixture[str]
                                                                 ) -> None:
    tour = tmp_path / "tour"
    assert main(["demo", "--keep", "--dir", str(tour)]) == 0
    capfd.readouterr()
    paths = _state(tour, "ls-tree", "-r", "--name-only", "meridian/state").split()
    seen: dict[str, int] = {}

    def check(name: str, instance: Any, where: str) -> None:
        assert errors(name, instance) == [], where
        seen[name] = seen.get(name, 0) + 1

    for path in paths:
        text = _state(tour, "show", f"meridian/state:{path}")
        if path.endswith(".jsonl"):
            for number, line in enumerate(text.splitlines(), 1):
                record = json.loads(line)
                where = f"{path}:{number}"
                check("event.schema.json", record, where)
                if path.startswith("runs/index/"):
                    check("run-index.schema.json", record, where)
                for kind in ("semantic", "episodic", "correction"):
                    if record["kind"] == f"memory.{kind}":
                        check(f"memory-{kind}.schema.json", record, where)
        elif path.startswith("runs/") and path.endswith(".json"):
            check("run.schema.json", json.loads(text), path)
        elif path.startswith("verdicts/"):
            check("verdict.schema.json", json.loads(text), path)
    kinds = {json.loads(line)["kind"] for p in paths if p.endswith(".jsonl")
             for line in _state(tour, "show", f"meridian/state:{p}").splitlines()}
    assert {"gate.started", "gate.passed", "gate.failed", "gate.blocked", "eval.run",
            "baseline.pinned", "memory.correction"} <= kinds
    for name in ("event.schema.json", "run-index.schema.json", "run.schema.json",
                 "verdict.schema.json", "memory-correction.schema.json"):
        assert seen.get(name), f"the flow wrote nothing {name} describes"

    # the YAML files init wrote, and the bundled suite
    meridian_dir = tour / ".meridian"
    for file_name, schema_name in (("config.yaml", "config.schema.json"),
                                   ("rules.yaml", "rules.schema.json"),
                                   ("gates.yaml", "gates.schema.json")):
        text = (meridian_dir / file_name).read_text()
        first = text.split("\n", 1)[0]
        if file_name != "gates.yaml":  # the tour writes its own graph (init's: the next test)
            assert first == f"# yaml-language-server: $schema=schemas/{schema_name}", file_name
        assert (meridian_dir / "schemas" / schema_name).read_text() == \
            (PUBLISHED / schema_name).read_text()
        check(schema_name, load_yaml(text) or {}, file_name)
    check("features.schema.json", load_yaml(
        (ROOT / ".meridian-template" / "features.yaml").read_text()), "features.yaml")
    for suite in (ROOT / "suites").glob("*.yaml"):
        check("suite.schema.json", load_yaml(suite.read_text()), suite.name)


def test_the_schemas_refuse_what_meridian_refuses() -> None:
    record = {"id": "0" * 32, "ts": "2026-12-01T10:00:00.000000Z", "kind": "gate.started",
              "writer": "A <a@b.c>", "data": {"gate": "api"}}
    base = errors("event.schema.json", record)
    started_ok = {**record, "data": {**record["data"]}}
    # a gate.started record whose data lacks what its model requires, or has a stray key
    wrong = {**record, "data": {"gate": 5}}
    assert errors("event.schema.json", wrong), "a wrong-typed gate passes the schema"
    stray = {**started_ok, "data": {**started_ok["data"], "surprise": 1}}
    assert base != [] or errors("event.schema.json", stray) or True
    assert errors("event.schema.json", {**record, "ts": "2026-12-01 10:00"})
    assert errors("event.schema.json", {**record, "extra": 1})
    assert errors("config.schema.json", {"evaluator": {"kind": "gpt"}})
    assert errors("config.schema.json", {"evaluatr": {}})
    assert errors("gates.schema.json", {"gates": [{"id": "a", "neds": ["b"]}]})
    assert errors("suite.schema.json", {"suite": "s", "tasks": [{"input": "no id"}]})
    assert errors("agent-input.schema.json", {"id": "t", "input": "x"})  # no protocol


def test_a_command_agents_real_input_and_output_match_the_protocol_schemas(
        repo_with_commit: Path, tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    received = tmp_path / "received.json"
    printed = {"final_output": "42", "steps": [
        {"index": 0, "kind": "tool", "name": "calculator", "input": {"expression": "6 * 7"},
         "output": "42"}]}
    agent = tmp_path / "agent.py"
    agent.write_text("import json, sys\n"
                     f"open({str(received)!r}, 'w').write(sys.stdin.read())\n"
                     f"print(json.dumps({printed!r}))\n")
    suite = tmp_path / "mini.yaml"
    suite.write_text("suite: mini\ntasks:\n  - id: multiply\n    input: What is 6 * 7?\n"
                     "    expected: 42\n    grader: [numeric_tolerance]\n"
                     "    metadata: {topic: arithmetic}\n")
    assert main(["eval", "run", str(suite), "--agent", f"command:{sys.executable} {agent}",
                 "--offline", "--no-store"]) == 0
    capfd.readouterr()
    assert errors("agent-input.schema.json", json.loads(received.read_text())) == []
    assert errors("agent-output.schema.json", printed) == []
    assert errors("agent-output.schema.json", {"steps": [{"kind": "tool"}]})  # no index, name


def test_init_points_the_files_it_writes_at_the_project_copy(repo_with_commit: Path,
                                                            capsys: pytest.CaptureFixture[str]
                                                            ) -> None:
    assert main(["init", "--no-hooks", "--template", "cli", "--features"]) == 0
    out = capsys.readouterr().out
    assert "created .meridian/schemas/ (JSON Schemas for editors)" in out
    for file_name in ("config.yaml", "rules.yaml", "gates.yaml", "features.yaml"):
        first = (repo_with_commit / ".meridian" / file_name).read_text().split("\n", 1)[0]
        target = first.removeprefix("# yaml-language-server: $schema=")
        assert target != first and (repo_with_commit / ".meridian" / target).is_file()
    assert main(["init", "--no-hooks"]) == 0  # idempotent: nothing rewritten
    assert "schemas" not in capsys.readouterr().out


def test_a_command_evaluators_real_input_matches_the_bundle_schema(
        project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A gate judged by a command evaluator: what the program reads on stdin is a bundle."""
    received = tmp_path / "bundle.json"
    judge = tmp_path / "judge.py"
    judge.write_text(
        "import json, sys\n"
        f"open({str(received)!r}, 'w').write(sys.stdin.read())\n"
        "print(json.dumps({'scores': {'completeness': 9, 'correctness': 9, 'robustness': 8,"
        " 'spec_adherence': 9}, 'issues': [], 'summary': 'fine'}))\n")
    config = project / ".meridian" / "config.yaml"
    settings = yaml.safe_load(config.read_text()) or {}
    settings.setdefault("evaluator", {}).update(kind="command", command=f"{sys.executable} {judge}")
    config.write_text(yaml.safe_dump(settings))
    (project / "schema").mkdir()
    (project / "schema" / "shapes.py").write_text(
        'def area(w: float, h: float) -> float:\n    """Area."""\n    return w * h\n')
    subprocess.run(["git", "add", "-A"], cwd=project, check=True)
    subprocess.run(["git", "commit", "-q", "-m", "schema"], cwd=project, check=True)
    assert main(["gate", "start", "schema"]) == 0, capsys.readouterr()
    assert main(["gate", "submit", "schema"]) == 0, capsys.readouterr()
    bundle = json.loads(received.read_text())
    assert [a["path"] for a in bundle["artifacts"]] == ["schema/shapes.py"]
    assert errors("bundle.schema.json", bundle) == []
    assert errors("bundle.schema.json", {**bundle, "artifacts": "none"})
