"""JSON Schemas (draft 2020-12) of every file a user reads or writes, generated from the
pydantic models that read them, so a schema cannot drift from the code.

Published in ``.meridian-template/schemas/`` (regenerate with
``python -m meridian.schemas .meridian-template/schemas``; a test compares) and copied
into a project's ``.meridian/schemas/`` by ``meridian init``, which points the YAML files
it writes at them with a ``# yaml-language-server: $schema=...`` line.

| file | describes |
| --- | --- |
| ``config.schema.json`` | ``.meridian/config.yaml`` |
| ``gates.schema.json`` | the gate graph (``.meridian/gates.yaml``), from ``meridian.gates.graph`` |
| ``rules.schema.json`` | ``.meridian/rules.yaml`` |
| ``features.schema.json`` | ``.meridian/features.yaml`` |
| ``suite.schema.json`` | an evaluation suite file |
| ``event.schema.json`` | one record of the state branch (``meridian log --json``), data by kind |
| ``verdict.schema.json`` | an evaluator's verdict (``verdicts/<gate>/*.json``; the command evaluator's output) |
| ``bundle.schema.json`` | the evidence of a gate (``evidence/<gate>/*.json``; the command evaluator's input) |
| ``run.schema.json`` | a run file (``runs/<id>.json``, ``meridian eval export``) |
| ``run-index.schema.json`` | one line of the run index (``eval.run`` records) |
| ``agent-input.schema.json``, ``agent-output.schema.json`` | the ``command:`` agent protocol (``meridian eval schema``) |
| ``memory-*.schema.json`` | exported memory lines, from ``meridian.memory.schemas`` |
"""

from __future__ import annotations

import json
from typing import Any

DIALECT = "https://json-schema.org/draft/2020-12/schema"
YAML_SCHEMA_LINE = "# yaml-language-server: $schema={path}\n"

# The YAML files meridian init writes -> their schema file.
YAML_FILES = {
    "config": "config.schema.json",
    "gates": "gates.schema.json",
    "rules": "rules.schema.json",
    "features": "features.schema.json",
}


def _document(model: Any, title: str, description: str, **extra: Any) -> dict[str, Any]:
    schema = model.model_json_schema()
    body = {key: value for key, value in schema.items() if key not in ("title", "description")}
    return {"$schema": DIALECT, "title": title, "description": description, **extra, **body}


def config_schema() -> dict[str, Any]:
    from meridian.config import Config

    return _document(Config, "Meridian config (.meridian/config.yaml)",
                     "The human-written settings of a project. Unknown keys are refused.")


def gates_schema() -> dict[str, Any]:
    from meridian.gates.graph import GatesFile

    return _document(GatesFile, "Meridian gate graph (.meridian/gates.yaml)",
                     "The project's gates as a dependency graph (docs/gates.md).")


def rules_schema() -> dict[str, Any]:
    from meridian.rules import RulesFile

    return _document(RulesFile, "Meridian rules (.meridian/rules.yaml)",
                     "The rules the harness enforces, with their failure modes and review "
                     "triggers (`meridian rules`).")


def features_schema() -> dict[str, Any]:
    from meridian.features import FeaturesFile

    return _document(FeaturesFile, "Meridian features (.meridian/features.yaml)",
                     "The features of the completion tracker and the tests that prove them "
                     "(`meridian features --junit REPORT.xml`).")


def suite_schema() -> dict[str, Any]:
    from meridian.evals.suite import _Defaults, _SuiteFile

    schema = _document(_SuiteFile, "Meridian evaluation suite",
                       "A suite of tasks for `meridian eval run` (docs/evals.md).")
    task = _Defaults.model_json_schema()
    task_defs = task.pop("$defs", {})
    task.pop("title", None)
    task["properties"] = {"id": {"type": "string", "minLength": 1, "description": "unique id"},
                          "input": {"description": "the task given to the agent"},
                          **task["properties"]}
    task["required"] = ["id", "input"]
    task["description"] = "One task: the defaults' keys plus id and input."
    defs = {**schema.get("$defs", {}), **task_defs, "Task": task}
    schema["$defs"] = defs
    schema["properties"]["tasks"] = {"type": "array", "items": {"$ref": "#/$defs/Task"}}
    return schema


def verdict_schema() -> dict[str, Any]:
    from meridian.evaluators.models import Verdict

    return _document(Verdict, "Meridian evaluator verdict",
                     "An independent evaluator's verdict on a gate (`data.verdict` of "
                     "gate.passed and gate.failed events; `meridian why GATE`).")


def bundle_schema() -> dict[str, Any]:
    from meridian.evaluators.models import Bundle

    return _document(Bundle, "Meridian evidence bundle",
                     "The evidence an evaluator judges a gate on (evidence/<gate>/*.json on "
                     "the state branch; what the command evaluator reads on stdin).")


def run_schema() -> dict[str, Any]:
    from meridian.evals.run import Run

    return _document(Run, "Meridian evaluation run file",
                     "A run of a suite (runs/<id>.json on the state branch; "
                     "`meridian eval export RUN PATH`).")


def _record(kinds: dict[str, Any], title: str, description: str) -> dict[str, Any]:
    """The record envelope, with ``data`` checked by the model of each kind in ``kinds``."""
    defs: dict[str, Any] = {}
    cases = []
    for kind, model in sorted(kinds.items()):
        data = model.model_json_schema()
        defs.update(data.pop("$defs", {}))
        name = "data:" + kind
        defs[name] = data
        cases.append({"if": {"properties": {"kind": {"const": kind}}, "required": ["kind"]},
                      "then": {"properties": {"data": {"$ref": f"#/$defs/{name}"}}}})
    schema: dict[str, Any] = {
        "$schema": DIALECT,
        "title": title,
        "description": description,
        "type": "object",
        "additionalProperties": False,
        "required": ["id", "ts", "kind", "writer", "data"],
        "properties": {
            "id": {"type": "string", "pattern": "^[0-9a-f]{32}$",
                   "description": "content hash of the record (kind, data, and for events ts "
                                  "and writer)"},
            "ts": {"type": "string",
                   "pattern": r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$",
                   "description": "when it was written (UTC)"},
            "kind": {"type": "string", "pattern": r"^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*$"},
            "writer": {"type": "string", "description": "git identity of the writer"},
            "data": {"type": "object"},
        },
    }
    if len(kinds) == 1:
        kind = next(iter(kinds))
        schema["properties"]["kind"] = {"const": kind}
        schema["properties"]["data"] = {"$ref": f"#/$defs/data:{kind}"}
    else:
        schema["allOf"] = cases
    schema["$defs"] = defs
    return schema


def event_schema() -> dict[str, Any]:
    from meridian import records

    records.registered_kinds()
    return _record(dict(records.DATA_MODELS), "Meridian state-branch record",
                   "One record of the state branch, as `meridian log --json` prints it: every "
                   "kind with a data model has its data checked (kinds: "
                   + ", ".join(sorted(records.DATA_MODELS)) + "); kinds without one ("
                   + ", ".join(records.KINDS_WITHOUT_MODEL) + ") have free-form data.")


def run_index_schema() -> dict[str, Any]:
    from meridian import records

    records.registered_kinds()
    return _record({"eval.run": records.DATA_MODELS["eval.run"]},
                   "Meridian run index line",
                   "One line of runs/index on the state branch: the summary of a run.")


def agent_schemas() -> dict[str, dict[str, Any]]:
    from meridian.evals.agents.protocol import input_schema, output_schema

    return {"agent-input.schema.json": {"$schema": DIALECT, **input_schema()},
            "agent-output.schema.json": {"$schema": DIALECT, **output_schema()}}


def schemas() -> dict[str, dict[str, Any]]:
    """file name -> schema, for every published schema."""
    from meridian.memory.schemas import KINDS, json_schema

    found = {
        "config.schema.json": config_schema(),
        "gates.schema.json": gates_schema(),
        "rules.schema.json": rules_schema(),
        "features.schema.json": features_schema(),
        "suite.schema.json": suite_schema(),
        "event.schema.json": event_schema(),
        "verdict.schema.json": verdict_schema(),
        "bundle.schema.json": bundle_schema(),
        "run.schema.json": run_schema(),
        "run-index.schema.json": run_index_schema(),
        **agent_schemas(),
    }
    for spec in KINDS.values():
        found[spec.schema_file] = json_schema(spec)
    return found


def render(schema: dict[str, Any]) -> str:
    return json.dumps(schema, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def documents() -> dict[str, str]:
    """file name -> published text (the memory schemas as their own module writes them)."""
    from meridian.memory.schemas import schema_documents

    texts = {name: render(schema) for name, schema in schemas().items()}
    texts.update(schema_documents())
    return dict(sorted(texts.items()))


def source_target() -> Any:
    """The published folder of the source checkout this module runs from
    (``.meridian-template/schemas`` at its top), or None when it does not run from one
    (an installed wheel: its copy is regenerated by building a new wheel)."""
    from pathlib import Path

    top = Path(__file__).resolve().parent.parent
    if (top / "pyproject.toml").is_file() and (top / ".meridian-template").is_dir():
        return top / ".meridian-template" / "schemas"
    return None


def main(argv: list[str] | None = None) -> int:
    """``python -m meridian.schemas [DIRECTORY]``: regenerate the published schemas (by
    default in the source checkout this module runs from, whatever the current directory)."""
    import sys
    from pathlib import Path

    args = sys.argv[1:] if argv is None else argv
    if args[:1] in (["-h"], ["--help"]) or len(args) > 1:
        print("usage: python -m meridian.schemas [DIRECTORY]  (default: the source "
              "checkout's .meridian-template/schemas)", file=sys.stderr if args[:1] not in
              (["-h"], ["--help"]) else sys.stdout)
        return 0 if args[:1] in (["-h"], ["--help"]) else 2
    target = Path(args[0]) if args else source_target()
    if target is None:
        print("meridian.schemas: not running from a source checkout (no pyproject.toml and "
              ".meridian-template/ beside the package); give the DIRECTORY to write to",
              file=sys.stderr)
        return 2
    try:
        target.mkdir(parents=True, exist_ok=True)
        for file_name, text in documents().items():
            (target / file_name).write_text(text, encoding="utf-8")
            print(f"wrote {target / file_name}")
    except OSError as exc:
        print(f"meridian.schemas: {target}: cannot write ({exc.strerror})", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())


# --- a project's copy: meridian init ----------------------------------------------------

PROJECT_SCHEMAS = ".meridian/schemas"


def install(root: Any) -> tuple[list[str], bool]:
    """Copy the published schemas into ``root/.meridian/schemas/`` (Meridian's files:
    refreshed to this version). Returns (files written, whether the folder was new)."""
    from pathlib import Path

    from meridian.resources import resource_dir

    source = resource_dir("template", "schemas") / "schemas"
    target = Path(root) / PROJECT_SCHEMAS
    new = not target.is_dir()
    target.mkdir(parents=True, exist_ok=True)
    written = []
    for path in sorted(source.glob("*.schema.json")):
        text = path.read_bytes()
        destination = target / path.name
        if not destination.is_file() or destination.read_bytes() != text:
            destination.write_bytes(text)
            written.append(path.name)
    return written, new


def annotate(path: Any, root: Any, name: str) -> None:
    """Put the ``# yaml-language-server: $schema=...`` line at the top of the YAML file
    ``path`` (which init just wrote), pointing at the project's copy of schema ``name``."""
    import os
    from pathlib import Path

    path = Path(path)
    schema = Path(root) / PROJECT_SCHEMAS / YAML_FILES[name]
    relative = os.path.relpath(schema, path.parent).replace(os.sep, "/")
    text = path.read_text(encoding="utf-8")
    if "yaml-language-server:" in text.split("\n", 1)[0]:
        return
    path.write_text(YAML_SCHEMA_LINE.format(path=relative) + text, encoding="utf-8")
