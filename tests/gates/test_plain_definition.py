"""The plain reader of the config, gate graph and definitions (``gates/plain_definition.py``)
held to the full path's loaders (``config.load_config``, ``gates.graph.load_graph``,
``gates.definition.definition``).

Both read the same generated project files: valid config.yaml, gates.yaml and
features.yaml documents, each value broken in the ways YAML allows (wrong types,
coercible strings, bools for numbers, nulls, empty lists, huge, negative and non-finite
numbers, lone surrogates, unknown keys, dropped keys), graphs broken (duplicate ids,
unknown needs, cycles, bad globs), and hand-written YAML texts (YAML 1.1 booleans,
anchors and merge keys, duplicate keys, tabs, a BOM, CRLF). Wherever the plain reader
answers, the full path must load and give the same facts, order and definitions, to the
byte of their canonical JSON; whenever the full path refuses, the plain reader must be
unsure. And it must answer for the files Meridian writes (the templates, the default
config), else the fast path would never be taken.
"""

from __future__ import annotations

import copy
import random
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from meridian import templates
from meridian.config import DEFAULT_CONFIG_TEXT, load_config
from meridian.gates import plain_definition
from meridian.gates.definition import definition
from meridian.gates.graph import load_graph
from meridian.plainread import canonical_json

Outcome = tuple[str, str, str] | None


def _full(root: Path) -> Outcome:
    """(facts, order, definitions) as canonical JSON, or None when the full path refuses."""
    try:
        config = load_config(root)
        graph = load_graph(root, config)
        facts = {"branch": config.branch, "remote": config.remote,
                 "gates_path": config.paths.gates, "rules_path": config.paths.rules,
                 "features_path": config.paths.features}
        order = [[spec.id, list(spec.needs)] for spec in graph.ordered()]
        definitions = {gate: definition(graph, gate) for gate in graph.order}
        return canonical_json(facts), canonical_json(order), canonical_json(definitions)
    except Exception:  # noqa: BLE001 - any refusal (or crash) of the full path
        return None


def _plain(root: Path) -> Outcome:
    try:
        found = plain_definition.PlainDefinition(root)
    except plain_definition.Unsure:
        return None
    return (canonical_json(found.facts), canonical_json(found.order()),
            canonical_json(found.definitions))


# --- valid documents ------------------------------------------------------------------


def _config(rng: random.Random) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if rng.random() < 0.5:
        out["version"] = 1
    if rng.random() < 0.4:
        out["branch"] = rng.choice(["meridian/state", "state", "team/meridian.v2", "a-b_c"])
    if rng.random() < 0.3:
        out["remote"] = rng.choice(["origin", "upstream", "é"])
    evaluator: dict[str, Any] = {}
    if rng.random() < 0.6:
        evaluator["kind"] = rng.choice(["auto", "heuristic", "anthropic", "claude-code",
                                        "command"])
    if rng.random() < 0.5:
        evaluator["threshold"] = rng.choice([7, 7.0, 0, 10, 6.5, 9.25, 0.0])
    if rng.random() < 0.3:
        evaluator["command"] = rng.choice(["judge --strict", "python3 tools/judge.py",
                                           "./judge", ""])
    if rng.random() < 0.2:
        evaluator["require"] = rng.choice(["model", None])
    if rng.random() < 0.2:
        evaluator["block_pre_existing"] = rng.choice([True, False])
    if rng.random() < 0.3:
        evaluator["anthropic"] = {k: v for k, v in (
            ("model", rng.choice(["claude-opus-4", "m"])),
            ("base_url", rng.choice([None, "https://api.example.test/v1", "http://127.0.0.1:9"])),
            ("timeout_s", rng.choice([300, 1.5])), ("max_tokens", 4096),
            ("max_retries", rng.choice([0, 10])), ("max_bundle_chars", 1001),
            ("max_requests", 100), ("thinking", rng.choice(["auto", "off"])),
            ("allow_env_base_url", rng.choice([True, False]))) if rng.random() < 0.4}
    if rng.random() < 0.2:
        evaluator["claude_code"] = {k: v for k, v in (
            ("executable", "claude"), ("model", rng.choice([None, "sonnet"])),
            ("max_turns", rng.choice([1, 500])), ("timeout_s", 600),
            ("max_bundle_chars", 400000), ("max_requests", 4),
            ("allow_env_base_url", False)) if rng.random() < 0.4}
    if evaluator or rng.random() < 0.2:
        out["evaluator"] = evaluator
    if rng.random() < 0.2:
        out["approval"] = {"allow_non_interactive": rng.choice([True, False])}
    if rng.random() < 0.2:
        out["hooks"] = {"block_stale_on_push": True, "claude_stop_retry_cap": rng.choice([1, 7])}
    if rng.random() < 0.2:
        out["calibration"] = {"idle_cut_minutes": rng.choice([30, 1440, 0.5])}
    if rng.random() < 0.3:
        out["paths"] = {k: v for k, v in (
            ("gates", rng.choice([".meridian/gates.yaml", "gates.yml", "conf/g.yaml"])),
            ("rules", ".meridian/rules.yaml"),
            ("features", rng.choice([".meridian/features.yaml", "features.yaml"])),
            ("suites", "suites")) if rng.random() < 0.6}
    return out


def _gate(rng: random.Random, gate_id: str, earlier: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {"id": gate_id}
    if earlier and rng.random() < 0.6:
        out["needs"] = rng.sample(earlier, rng.randint(1, min(2, len(earlier))))
    for key, values in (("description", ["", "d", "ünïcode ✓"]),
                        ("acceptance", ["", "All tests pass.\n", "criteria: x"])):
        if rng.random() < 0.5:
            out[key] = rng.choice(values)
    if rng.random() < 0.7:
        out["artifacts"] = rng.sample(["src/**", "docs", "*.md", "tests/test_*.py",
                                       "a[bc].py", "./lib/", "x/**/y"], rng.randint(0, 3))
    if rng.random() < 0.5:
        out["checks"] = [rng.choice(["pytest -q", {"run": "make test"},
                                     {"run": "true", "timeout": rng.choice([5, 0.5, 600])}])
                         for _ in range(rng.randint(0, 2))]
    if rng.random() < 0.5:
        evaluate: dict[str, Any] = {}
        for key, values in (("threshold", [None, 8, 7.5, 0, 10]),
                            ("evaluator", [None, "heuristic", "anthropic", "command",
                                           "claude-code", "auto"]),
                            ("command", [None, "judge", "python3 -m judge"]),
                            ("require", [None, "model"]),
                            ("block_pre_existing", [None, True, False])):
            if rng.random() < 0.4:
                evaluate[key] = rng.choice(values)
        out["evaluate"] = evaluate
    if rng.random() < 0.15:
        out["approval"] = rng.choice([None, {"token_sha256": "ab" * 32},
                                      {"token_sha256": "AB" * 32, "token_env": None}])
    if rng.random() < 0.3:
        out["estimate_hours"] = rng.choice([None, 1, 1.5, 40])
    if rng.random() < 0.2:
        out["features"] = rng.choice([None, {}, {"hardened": ["login"]},
                                      {"hardened": ["login", "export"], "junit": "out/j.xml"}])
    if rng.random() < 0.2:
        out["exclude"] = rng.choice([[], ["vendor/**"], ["*.min.js", "gen"]])
    if rng.random() < 0.3:
        out["mutation"] = rng.choice([True, False, {}, {"enabled": False},
                                      {"max_functions": 20, "timeout_s": 300},
                                      {"max_functions": 5}, {"timeout_s": 30.5}])
    return out


def _gates(rng: random.Random) -> dict[str, Any]:
    ids: list[str] = []
    gates = []
    for _ in range(rng.randint(1, 4)):
        gate_id = rng.choice(["spec", "core", "api", "docs", "release", "g.1", "A-b"])
        if gate_id in ids:
            continue
        gates.append(_gate(rng, gate_id, ids))
        ids.append(gate_id)
    rng.shuffle(gates)  # declared in any order: the order is the needs'
    out: dict[str, Any] = {"gates": gates}
    if rng.random() < 0.5:
        out["version"] = 1
    return out


def _features(rng: random.Random) -> dict[str, Any] | None:
    if rng.random() < 0.6:
        return None
    features: list[dict[str, Any]] = [{"id": "login", "tests": {"happy_path": ["t::a"]}}]
    if rng.random() < 0.5:
        features.append({"id": "export", "description": "csv export", "tests": {
            "happy_path": ["tests/test_e.py::test_ok"], "edge_cases": ["tests.test_e.*"],
            "failure_modes": rng.choice([[], ["tests/test_e.py::test_bad[1]"]])}})
    out: dict[str, Any] = {"features": features}
    if rng.random() < 0.5:
        out["version"] = 1
    return out


# --- broken documents -----------------------------------------------------------------

ODD_VALUES: list[Any] = [None, True, False, 0, 1, -1, 1.0, 7, 7.5, 11, -0.5, 2 ** 63,
                         10 ** 400, float("nan"), float("inf"), float("-inf"), "", "7", "7.0",
                         "true", "yes", "on", "auto", "model", "\ud800", "ü", " ", "a\n", "a\0",
                         [], ["x"], [1], {}, {"x": 1}, {"run": "x"}]


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix] if prefix else []
    if isinstance(value, dict):
        for key, item in value.items():
            out += _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            out += _paths(item, (*prefix, index))
    return out


def _set(document: Any, path: tuple[Any, ...], value: Any) -> Any:
    out = copy.deepcopy(document)
    target = out
    for part in path[:-1]:
        target = target[part]
    target[path[-1]] = value
    return out


def _drop(document: Any, path: tuple[Any, ...]) -> Any:
    out = copy.deepcopy(document)
    target = out
    for part in path[:-1]:
        target = target[part]
    del target[path[-1]]
    return out


def _broken(rng: random.Random, document: Any, known: list[tuple[Any, ...]]) -> list[Any]:
    """``document`` broken at a few of its places (and at ``known`` places it may lack)."""
    out = []
    paths = _paths(document)
    for path in rng.sample(paths, min(len(paths), 6)):
        out.append(_set(document, path, rng.choice(ODD_VALUES)))
        if isinstance(path[-1], str):
            out.append(_drop(document, path))
        if isinstance(path[-1], int):
            out.append(_set(document, path[:-1], []))
    for path in rng.sample(known, min(len(known), 3)):
        try:
            out.append(_set(document, path, rng.choice(ODD_VALUES)))
        except (KeyError, IndexError, TypeError):
            pass
    if isinstance(document, dict):
        out.append({**document, "unknown_key": 1})
    out.append(rng.choice(ODD_VALUES))
    return out


CONFIG_PLACES = [("evaluator", "threshold"), ("evaluator",), ("branch",), ("paths", "gates"),
                 ("paths",), ("evaluator", "kind"), ("version",), ("remote",),
                 ("hooks", "claude_stop_retry_cap"), ("calibration", "idle_cut_minutes")]
GATE_PLACES = [("gates", 0, "evaluate", "threshold"), ("gates", 0, "mutation"),
               ("gates", 0, "id"), ("gates", 0, "needs"), ("gates", 0, "checks"),
               ("gates", 0, "approval"), ("gates", 0, "features"), ("gates", 0, "artifacts"),
               ("gates", 0, "estimate_hours"), ("gates", 0, "evaluate"), ("version",),
               ("gates", 0, "exclude"), ("gates", 0, "unknown")]


def _graph_breaks(rng: random.Random, document: dict[str, Any]) -> list[Any]:
    gates = document["gates"]
    first = gates[0]["id"]
    out: list[Any] = [{**document, "gates": [*gates, copy.deepcopy(gates[0])]},  # duplicate id
                      _set(document, ("gates", 0, "needs"), ["nowhere"]),
                      _set(document, ("gates", 0, "needs"), [first]),  # needs itself
                      _set(document, ("gates", 0, "artifacts"), ["/abs"]),
                      _set(document, ("gates", 0, "artifacts"), ["a[b"]),
                      _set(document, ("gates", 0, "exclude"), ["!neg"]),
                      _set(document, ("gates", 0, "approval"), {"token_env": "TOKEN"}),
                      _set(document, ("gates", 0, "approval"), {"token": "x"}),
                      _set(document, ("gates", 0, "features"), {"junit": "../out.xml"}),
                      _set(document, ("gates", 0, "features"), {"hardened": ["a", "a"]}),
                      _set(document, ("gates", 0, "evaluate"),
                           {"evaluator": "command", "command": "python3 judge.py"}),
                      {**document, "gates": []}]
    if len(gates) > 1:
        a, b = gates[0]["id"], gates[1]["id"]
        cyclic = _set(document, ("gates", 0, "needs"), [b])
        out.append(_set(cyclic, ("gates", 1, "needs"), [a]))
        out.append(_set(document, ("gates", 1, "needs"), [a, a]))
    return out


# --- hand-written texts ---------------------------------------------------------------

GATES = "gates:\n  - id: spec\n    artifacts: [spec/**]\n"
TEXTS: list[tuple[str, str]] = [
    ("evaluator:\n  threshold: yes\n", GATES),
    ("evaluator:\n  threshold: \"7\"\n", GATES),
    ("evaluator:\n  threshold: .inf\n", GATES),
    ("evaluator:\n  threshold: .nan\n", GATES),
    ("evaluator:\n  threshold: 0x7\n", GATES),
    ("evaluator:\n  threshold: 7_0\n", GATES),
    ("evaluator:\n  threshold: 1e1\n", GATES),
    ("evaluator:\n  threshold: 1.0e+1\n", GATES),
    ("evaluator:\n  block_pre_existing: on\n", GATES),
    ("evaluator:\n  block_pre_existing: \"true\"\n", GATES),
    ("evaluator:\n  block_pre_existing: 1\n", GATES),
    ("approval:\n  allow_non_interactive: Yes\n", GATES),
    ("evaluator:\n  threshold: 7\n  threshold: 0\n", GATES),
    ("base: &b\n  threshold: 0\nevaluator:\n  <<: *b\n", GATES),
    ("evaluator: &e\n  threshold: 6\n", GATES),
    ("evaluator:\n  <<: {threshold: 0}\n  kind: heuristic\n", GATES),
    ("evaluator:\n\tthreshold: 0\n", GATES),
    ("\ufeffbranch: meridian/state\n", GATES),
    ("branch: meridian/state\r\nevaluator:\r\n  threshold: 8\r\n", GATES),
    ("branch: \"meridian/state\\n\"\n", GATES),
    ("branch: meridian/state\nbranch: other\n", GATES),
    ("paths:\n  gates: other.yaml\n", GATES),
    ("paths:\n  gates: .meridian\n", GATES),
    ("paths:\n  gates: \"\"\n", GATES),
    ("", GATES),
    ("# only a comment\n", GATES),
    ("[]\n", GATES),
    ("null\n", GATES),
    ("version: !!int \"1\"\n", GATES),
    ("remote: !!binary aGVsbG8=\n", GATES),
    ("remote: 2026-01-01\n", GATES),
    ("on: 1\n", GATES),
    ("1: x\n", GATES),
    ("", "gates:\n  - id: spec\n    evaluate:\n      threshold: \"8\"\n"),
    ("", "gates:\n  - id: spec\n    evaluate:\n      threshold: 8\n"),
    ("", "gates:\n  - id: spec\n    evaluate:\n      threshold: true\n"),
    ("", "gates:\n  - id: spec\n    mutation: off\n"),
    ("", "gates:\n  - id: spec\n    mutation: \"false\"\n"),
    ("", "gates:\n  - id: spec\n    mutation: 0\n"),
    ("", "gates:\n  - id: spec\n    checks: [\"\"]\n"),
    ("", "gates:\n  - id: spec\n    checks: [{run: x, timeout: .inf}]\n"),
    ("", "gates:\n  - id: spec\n    checks: [{run: x, timeout: \"5\"}]\n"),
    ("", "gates:\n  - id: spec\n    checks: [7]\n"),
    ("", "gates:\n  - id: spec\n    estimate_hours: 0\n"),
    ("", "gates:\n  - id: spec\n    evaluate: null\n"),
    ("", "gates:\n  - id: spec\n  - id: spec\n"),
    ("", "gates:\n  - id: spec\n    id: other\n"),
    ("", "x: &g {id: spec, artifacts: [a]}\ngates:\n  - *g\n"),
    ("", "gates:\n  - &g {id: spec, artifacts: [a]}\n  - {<<: *g, id: two, needs: [spec]}\n"),
    ("", "gates:\n  - id: \"spec\\n\"\n"),
    ("", "gates:\n  - id: 7\n"),
    ("", "gates:\n  - id: yes\n"),
    ("", "version: 1.0\ngates:\n  - id: spec\n"),
    ("", "version: true\ngates:\n  - id: spec\n"),
    ("", "version: 2\ngates:\n  - id: spec\n"),
    ("", "gates: []\n"),
    ("", "gates:\n  - id: spec\n    approval: {token_sha256: " + "A" * 64 + "}\n"),
    ("", "gates:\n  - id: spec\n    approval: {token_sha256: \"" + "a" * 64 + "\\n\"}\n"),
    ("", "gates:\n  - id: spec\n    approval: {token_sha256: " + "a" * 63 + "}\n"),
    ("", "gates:\n  - id: spec\n    features: {hardened: [login]}\n"),
    ("", "gates:\n  - id: spec\n    features: {junit: ./j.xml}\n"),
    ("", "\ufeffgates:\n  - id: spec\n"),
    ("", "gates:\r\n  - id: spec\r\n    acceptance: \"a\\r\\nb\"\r\n"),
    ("", "gates:\n\t- id: spec\n"),
    ("", "gates:\n  - id: spec\n    description: !!python/name:os.system\n"),
    ("", "gates:\n  - {id: spec, artifacts: [a, a]}\n"),
    ("evaluator:\n  anthropic:\n    base_url: \"https://x.test/\\u00a0\"\n", GATES),
    ("evaluator:\n  anthropic:\n    base_url: \"https://x.test/a\\nb\"\n", GATES),
    ("evaluator:\n  anthropic:\n    base_url: https://x.test/\n", GATES),
    ("evaluator:\n  anthropic:\n    timeout_s: 1e308\n", GATES),
    ("evaluator:\n  anthropic:\n    max_tokens: 99999999999999999999999\n", GATES),
    ("hooks:\n  claude_stop_retry_cap: 7.0\n", GATES),
    ("evaluator:\n  kind: command\n  command: python3 judge.py\n", GATES),
    ("evaluator:\n  kind: command\n  command: judge --x=judge.py\n", GATES),
    ("evaluator:\n  kind: command\n  command: \"judge 'unbalanced\"\n", GATES),
]


_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def _write(root: Path, config: Any, gates: Any, features: Any,
           as_text: bool = False) -> None:
    """The project's files, the earlier case's removed (directories are kept: cheaper)."""
    for old in list(_WRITTEN):
        old.unlink(missing_ok=True)
        _WRITTEN.discard(old)
    (root / ".meridian").mkdir(parents=True, exist_ok=True)

    def put(path: Path, value: Any) -> None:
        if as_text:
            text = str(value)
        else:
            try:
                text = yaml.dump(value, Dumper=_DUMPER, allow_unicode=True)
                text.encode("utf-8")
            except UnicodeEncodeError:  # a lone surrogate: written as an escape
                text = yaml.dump(value, Dumper=yaml.SafeDumper, allow_unicode=False)
        if path.exists() or path in _WRITTEN:
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        _WRITTEN.add(path)

    if config is not _ABSENT:
        put(root / ".meridian" / "config.yaml", config)
    paths = config.get("paths") if isinstance(config, dict) else None
    target = paths.get("gates") if isinstance(paths, dict) else None
    if gates is not _ABSENT:
        put(root / (target if _writable(target) else ".meridian/gates.yaml"), gates)
    if features is not None:
        target = paths.get("features") if isinstance(paths, dict) else None
        put(root / (target if _writable(target) else ".meridian/features.yaml"), features)
    if not (root / "judge.py").exists():
        (root / "judge.py").write_text("print('{}')\n")


_WRITTEN: set[Path] = set()
_ABSENT = object()


def _writable(path: Any) -> bool:
    """A path the test writes the file at (an odd one is left absent: a refusal)."""
    return isinstance(path, str) and re.fullmatch(r"[A-Za-z0-9_.][A-Za-z0-9_./-]*", path) \
        is not None and ".." not in path.split("/")


def _agree(root: Path, counts: dict[str, int], failures: list[Any], case: Any) -> None:
    plain, full = _plain(root), _full(root)
    counts["cases"] += 1
    counts["full_loads"] += full is not None
    counts["plain_answers"] += plain is not None
    if plain is not None and plain != full:
        failures.append((case, plain, full))


def _case_documents(seed: int, count: int) -> list[tuple[Any, Any, Any]]:
    rng = random.Random(seed)
    cases: list[tuple[Any, Any, Any]] = []
    for _ in range(count):
        config, gates, features = _config(rng), _gates(rng), _features(rng)
        cases.append((config, gates, features))
        cases += [(broken, gates, features)
                  for broken in _broken(rng, config, CONFIG_PLACES)]
        cases += [(config, broken, features) for broken in _broken(rng, gates, GATE_PLACES)]
        cases += [(config, broken, features) for broken in _graph_breaks(rng, gates)]
        cases.append((_ABSENT, gates, features))
        cases.append((config, _ABSENT, features))
        if features is not None:
            cases += [(config, gates, broken)
                      for broken in _broken(rng, features, [("features", 0, "id")])]
    return cases


@pytest.mark.parametrize("seed", range(3))
def test_the_plain_reader_agrees_with_the_full_path_wherever_it_answers(
        tmp_path: Path, seed: int) -> None:
    cases = _case_documents(seed, 55)
    counts = {"cases": 0, "full_loads": 0, "plain_answers": 0}
    failures: list[Any] = []
    root = tmp_path / "p"
    for config, gates, features in cases:
        _write(root, config, gates, features)
        _agree(root, counts, failures, (config, gates, features))
    assert not failures[:3], failures[:3]
    # Every outcome is exercised: answers, refusals, and loads the plain reader leaves.
    assert counts["cases"] > 1_500, counts
    assert counts["plain_answers"] > 300, counts
    assert counts["full_loads"] - counts["plain_answers"] > 100, counts
    assert counts["cases"] - counts["full_loads"] > 300, counts


def test_hand_written_yaml_is_read_as_the_full_path_reads_it(tmp_path: Path) -> None:
    counts = {"cases": 0, "full_loads": 0, "plain_answers": 0}
    failures: list[Any] = []
    root = tmp_path / "p"
    for config, gates in TEXTS:
        _write(root, config, gates, None, as_text=True)
        _agree(root, counts, failures, (config, gates))
        # The same with a features file the gates may require.
        _write(root, config, gates, "version: 1\nfeatures:\n  - id: login\n", as_text=True)
        _agree(root, counts, failures, (config, gates, "features"))
    assert not failures, failures
    assert counts["plain_answers"] >= 15 and counts["full_loads"] > counts["plain_answers"]


def _template_project(root: Path, template: str, config_text: str) -> None:
    (root / ".meridian").mkdir(parents=True, exist_ok=True)
    for old in root.rglob("*"):
        if old.is_file():
            old.unlink()
    (root / ".meridian" / "config.yaml").write_text(config_text, encoding="utf-8")
    templates.install_template(template, root)


@pytest.mark.parametrize("template", templates.list_templates())
def test_it_answers_for_every_template_and_the_default_config(tmp_path: Path,
                                                              template: str) -> None:
    for config_text in (DEFAULT_CONFIG_TEXT, "",
                        DEFAULT_CONFIG_TEXT.replace("kind: auto", "kind: heuristic")
                        .replace("threshold: 7.0", "threshold: 8")):
        _template_project(tmp_path / "p", template, config_text)
        plain = _plain(tmp_path / "p")
        assert plain is not None, (template, config_text[:40])
        assert plain == _full(tmp_path / "p")


def test_it_answers_for_the_documents_it_generates_when_they_are_plain(tmp_path: Path) -> None:
    """The valid documents generated above, without the shapes it leaves to the full path
    (token_env, a command running a project file): answered, all of them."""
    rng = random.Random(5)
    root = tmp_path / "p"
    answered = 0
    for _ in range(150):
        config, gates = _config(rng), _gates(rng)
        config.get("evaluator", {}).pop("command", None)
        for gate in gates["gates"]:
            gate.get("evaluate", {}).pop("command", None)
        features = {"features": [{"id": "login"}, {"id": "export", "tests": {
            "edge_cases": ["t::e"]}}]} if rng.random() < 0.5 else None
        _write(root, config, gates, features)
        plain, full = _plain(root), _full(root)
        assert full is not None and plain == full, (config, gates, features)
        answered += 1
    assert answered == 150


def test_its_defaults_are_the_models() -> None:
    from meridian.config import DEFAULT_BRANCH, AnthropicSettings, EvaluatorSettings
    from meridian.gates.graph import (
        DEFAULT_CHECK_TIMEOUT_S,
        DEFAULT_JUNIT,
        EvaluateSpec,
        MutationSpec,
    )

    assert plain_definition.DEFAULT_BRANCH == DEFAULT_BRANCH
    assert plain_definition.DEFAULT_MODEL == AnthropicSettings().model
    assert plain_definition.DEFAULT_THRESHOLD == EvaluatorSettings().threshold
    assert plain_definition.DEFAULT_CHECK_TIMEOUT_S == DEFAULT_CHECK_TIMEOUT_S
    assert plain_definition.DEFAULT_JUNIT == DEFAULT_JUNIT
    assert plain_definition.DEFAULT_MUTATION == MutationSpec().model_dump(mode="json")
    assert set(plain_definition.KINDS) == set(
        EvaluatorSettings.model_fields["kind"].annotation.__args__)  # type: ignore[union-attr]
    assert set(plain_definition._EVALUATE({})) == set(EvaluateSpec.model_fields)
