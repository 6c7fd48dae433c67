"""The config, gate graph and gate definitions read without pydantic, or "unsure".

``meridian status`` re-checks every pass a status view shows (``commands/status_passes``)
against the definition now, read from the files. The full path's loaders
(``config.load_config``, ``gates.graph.load_graph``, ``gates.definition.definition``)
import pydantic and build the models: some 150-200 ms, more than the rest of the check.
This module reads the same files with the same YAML code (``meridian.yamlparse``: the
loader, duplicate keys, aliases, merge keys and limits of ``yamlio``) and validates the
values itself, mirroring the models of ``meridian/config.py`` and ``gates/graph.py`` and
``parse_graph``'s checks (``gates/graph_rules.py``, ``gates/globs.py``: the same code),
then builds each gate's definition as ``gates/definition.py`` does.

It is conservative: it answers only for values whose treatment by the models is exact
and plain, and raises ``Unsure`` for anything else, whether or not the models would
accept it; the caller then loads with the full path (which prints the error, if any).
So, for example:

- a float field takes an int or a float, finite (made a float as pydantic does); a bool
  (pydantic takes ``true`` as 1.0), a string (``"7"``, which it coerces), ``.inf`` or
  ``.nan`` are unsure; an int field takes an int (not a bool, not ``7.0``) below 2**63;
  a str field a str that encodes as UTF-8; a bool field a bool (YAML's ``yes`` and
  ``on`` are already bools when parsed, on both paths); a list a list;
- a pattern is matched in full with ASCII classes (pydantic's regex engine anchors
  ``$`` at the very end: a trailing newline is refused there and here); a ``base_url``
  is taken only as printable ASCII without spaces;
- an unknown key, a null where a section is expected, a key that is not a string;
- ``approval.token_env`` (its policy reads HEAD's gates file with pygit2 and warns);
- in the features file (read only when a gate requires hardened features, as the full
  path reads it), the same: a duplicate or unknown feature id, an empty test id;
- a command evaluator whose command names a file of the project (its ``programs`` are
  the blob ids of the tracked files it names, and what git tracks is not read here);
- duplicate ids or needs, unknown needs, cycles, artifact globs ``globs.pattern_problem``
  refuses, a JUnit path ``graph_rules.junit_problem`` refuses, a file that does not
  parse.

A differential test (tests/gates/test_plain_definition.py) holds it to the full path
over generated documents: whenever this answers, the full path loads the same facts,
order and definitions; whenever the full path refuses, this is unsure.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from meridian.errors import ConfigError
from meridian.gates import globs, graph_rules
from meridian.plainread import CONFIG_FILE
from meridian.userfiles import present
from meridian.yamlparse import load

# The models' defaults (``meridian.config``, ``gates.graph``); the differential test
# compares the definitions built from them with the models'.
DEFAULT_BRANCH = "meridian/state"
DEFAULT_MODEL = "claude-sonnet-4-6"
DEFAULT_THRESHOLD = 7.0
DEFAULT_CHECK_TIMEOUT_S = 600.0
DEFAULT_JUNIT = "build/junit.xml"
DEFAULT_MUTATION = {"enabled": True, "max_functions": 20, "timeout_s": 300.0}
KINDS = ("auto", "heuristic", "anthropic", "claude-code", "command")
_BRANCH = re.compile(r"[A-Za-z0-9._/-]+")
_BASE_URL = re.compile(r"https?://[!-~]+")  # printable ASCII, no space: pydantic's [^\s]+
_GATE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
_SHA256 = re.compile(r"[0-9a-fA-F]{64}")
_MAX_INT = 2 ** 63
_MAX_EXACT_FLOAT = 2 ** 53


class Unsure(Exception):
    """Not decided exactly as the full path decides: load with the full path."""


Check = Callable[[Any], Any]


def _str(value: Any) -> str:
    if type(value) is not str:
        raise Unsure("not a string")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise Unsure("a string with a lone surrogate") from None
    return value


def _nonempty(value: Any) -> str:
    if not _str(value):
        raise Unsure("an empty string")
    return value


def _bool(value: Any) -> bool:
    if type(value) is not bool:
        raise Unsure("not a bool")
    return value


def _int(low: int, high: int = _MAX_INT) -> Check:
    def check(value: Any) -> int:
        if type(value) is not int or not low <= value <= high:
            raise Unsure("not an int in range")
        return value
    return check


def _float(low: float, high: float, low_open: bool = False) -> Check:
    """An int or a float in [low, high] (``low_open``: above ``low``), as a float."""
    def check(value: Any) -> float:
        if type(value) is int:
            if abs(value) > _MAX_EXACT_FLOAT:
                raise Unsure("an int a float cannot hold exactly")
            value = float(value)
        elif type(value) is not float or not math.isfinite(value):
            raise Unsure("not a finite number")
        if not (low < value if low_open else low <= value) or not value <= high:
            raise Unsure("a number out of range")
        return value
    return check


def _literal(*allowed: str) -> Check:
    def check(value: Any) -> str:
        if type(value) is not str or value not in allowed:
            raise Unsure("not one of the literals")
        return value
    return check


def _pattern(regex: re.Pattern[str]) -> Check:
    def check(value: Any) -> str:
        if regex.fullmatch(_str(value)) is None:
            raise Unsure("a string its pattern may not match")
        return value
    return check


def _optional(check: Check) -> Check:
    return lambda value: None if value is None else check(value)


def _list(check: Check) -> Check:
    def each(value: Any) -> list[Any]:
        if type(value) is not list:
            raise Unsure("not a list")
        return [check(item) for item in value]
    return each


def _section(fields: dict[str, tuple[Check, Any]]) -> Check:
    """A strict mapping (``extra="forbid"``): each field checked, absent ones defaulted
    (a callable default is called, for a fresh value)."""
    def check(value: Any) -> dict[str, Any]:
        if type(value) is not dict or not all(type(k) is str for k in value) \
                or set(value) - set(fields):
            raise Unsure("not a mapping of the known keys")
        out: dict[str, Any] = {}
        for name, (field, default) in fields.items():
            if name in value:
                out[name] = field(value[name])
            else:
                out[name] = default() if callable(default) else default
        return out
    return check


def _default(check: Check) -> Callable[[], Any]:
    """A section's default: the section of no keys."""
    return lambda: check({})


# --- meridian/config.py ---------------------------------------------------------------

_ANTHROPIC = _section({
    "model": (_str, DEFAULT_MODEL),
    "base_url": (_optional(_pattern(_BASE_URL)), None),
    "allow_env_base_url": (_bool, False),
    "max_tokens": (_int(1), 16_000),
    "timeout_s": (_float(0, 1e300, low_open=True), 300.0),
    "max_retries": (_int(0, 10), 2),
    "max_bundle_chars": (_int(1001), 400_000),
    "max_requests": (_int(1, 100), 8),
    "thinking": (_literal("auto", "off"), "auto"),
})
_CLAUDE_CODE = _section({
    "executable": (_str, "claude"),
    "model": (_optional(_str), None),
    "max_turns": (_int(1, 500), 30),
    "timeout_s": (_float(0, 1e300, low_open=True), 600.0),
    "max_bundle_chars": (_int(1001), 400_000),
    "max_requests": (_int(1, 100), 4),
    "allow_env_base_url": (_bool, False),
})
_EVALUATOR = _section({
    "kind": (_literal(*KINDS), "auto"),
    "command": (_optional(_str), None),
    "threshold": (_float(0, 10), DEFAULT_THRESHOLD),
    "require": (_optional(_literal("model")), None),
    "block_pre_existing": (_bool, False),
    "anthropic": (_ANTHROPIC, _default(_ANTHROPIC)),
    "claude_code": (_CLAUDE_CODE, _default(_CLAUDE_CODE)),
})
_APPROVAL_SETTINGS = _section({"allow_non_interactive": (_bool, False)})
_HOOKS = _section({"block_stale_on_push": (_bool, True),
                   "claude_stop_retry_cap": (_int(1, 7), 3)})
_CALIBRATION = _section({"idle_cut_minutes": (_float(0, 24 * 60, low_open=True), 30.0)})
_PATHS = _section({
    "gates": (_str, ".meridian/gates.yaml"),
    "rules": (_str, ".meridian/rules.yaml"),
    "features": (_str, ".meridian/features.yaml"),
    "suites": (_str, "suites"),
})
_CONFIG = _section({
    "version": (_int(-_MAX_INT), 1),
    "branch": (_pattern(_BRANCH), DEFAULT_BRANCH),
    "remote": (_str, "origin"),
    "evaluator": (_EVALUATOR, _default(_EVALUATOR)),
    "approval": (_APPROVAL_SETTINGS, _default(_APPROVAL_SETTINGS)),
    "hooks": (_HOOKS, _default(_HOOKS)),
    "paths": (_PATHS, _default(_PATHS)),
    "calibration": (_CALIBRATION, _default(_CALIBRATION)),
})


def _read(path: Path) -> Any:
    """The YAML values of ``path`` as ``yamlio.load`` builds them (None: no file)."""
    try:
        if not present(path):
            return None
        return load(path).data
    except (ConfigError, OSError, ValueError):  # ValueError: a NUL in the path, say
        raise Unsure("a file the full path refuses, or may") from None


def config(root: Path) -> dict[str, Any]:
    """``config.load_config(root)`` as plain values."""
    data = _read(root / CONFIG_FILE)
    return _CONFIG({} if data is None else data)


# --- gates/graph.py -------------------------------------------------------------------


def _check(value: Any) -> dict[str, Any]:
    """``Check``: a command string, or a mapping with run: and timeout:."""
    if type(value) is str:
        value = {"run": value}
    return _section({"run": (_nonempty, None),
                     "timeout": (_float(0, 1e300, low_open=True), DEFAULT_CHECK_TIMEOUT_S)
                     })(_required(value, "run"))


def _required(value: Any, *names: str) -> Any:
    if type(value) is not dict or any(name not in value for name in names):
        raise Unsure("a required field is missing")
    return value


_EVALUATE = _section({
    "threshold": (_optional(_float(0, 10)), None),
    "evaluator": (_optional(_literal(*KINDS)), None),
    "command": (_optional(_nonempty), None),
    "require": (_optional(_literal("model")), None),
    "block_pre_existing": (_optional(_bool), None),
})
_MUTATION_FIELDS = _section({
    "enabled": (_bool, True),
    "max_functions": (_int(1, 10_000), 20),
    "timeout_s": (_float(0, 1e300, low_open=True), 300.0),
})


def _mutation(value: Any) -> dict[str, Any]:
    """``Mutation``: false, true or a mapping."""
    if type(value) is bool:
        value = {"enabled": value}
    return _MUTATION_FIELDS(value)


def _approval(value: Any) -> dict[str, Any] | None:
    """``ApprovalSpec | None``, with a token_sha256 only (token_env: unsure)."""
    if value is None:
        return None
    fields = _section({"token_sha256": (_pattern(_SHA256), None),
                       "token_env": (_none, None)})(value)
    if fields["token_sha256"] is None:
        raise Unsure("no token_sha256")
    return fields


def _none(value: Any) -> None:
    if value is not None:
        raise Unsure("token_env: its policy is the full path's")


_FEATURES = _section({"hardened": (_list(_str), list),
                      "junit": (_nonempty, DEFAULT_JUNIT)})


def _estimate(value: Any) -> float | None:
    return _optional(_float(0, 1e300, low_open=True))(value)


_GATE = _section({
    "id": (_pattern(_GATE_ID), None),
    "needs": (_list(_str), list),
    "description": (_str, ""),
    "acceptance": (_str, ""),
    "artifacts": (_list(_str), list),
    "checks": (_list(_check), list),
    "evaluate": (_EVALUATE, _default(_EVALUATE)),
    "approval": (_approval, None),
    "estimate_hours": (_estimate, None),
    "features": (_optional(_FEATURES), None),
    "exclude": (_list(_str), list),
    "mutation": (_mutation, lambda: dict(DEFAULT_MUTATION)),
})


def _gates_file(value: Any) -> list[dict[str, Any]]:
    """``GatesFile``: the gates, each checked as ``GateSpec``."""
    if type(value) is not dict or "gates" not in value:
        raise Unsure("not a mapping with gates:")
    parsed = _section({"version": (_one, 1), "gates": (_list(_gate), None)})(value)
    if not parsed["gates"]:
        raise Unsure("no gates")
    return parsed["gates"]


def _one(value: Any) -> int:
    if type(value) is not int or value != 1:
        raise Unsure("version is not 1")
    return value


def _gate(value: Any) -> dict[str, Any]:
    return _GATE(_required(value, "id"))


def _graph(root: Path, settings: dict[str, Any]) -> list[dict[str, Any]]:
    """The gates of ``load_graph(root, config)`` in declaration order, once every check
    ``parse_graph`` makes holds (else unsure)."""
    path = root / settings["paths"]["gates"]
    data = _read(path)
    if data is None:
        raise Unsure("no gate graph")
    gates = _gates_file(data)
    ids = [gate["id"] for gate in gates]
    if len(set(ids)) != len(ids):
        raise Unsure("a duplicate gate id")
    for gate in gates:
        if len(set(gate["needs"])) != len(gate["needs"]) \
                or any(need not in ids for need in gate["needs"]):
            raise Unsure("needs listed twice or unknown")
        if any(globs.pattern_problem(pattern) for key in ("artifacts", "exclude")
               for pattern in gate[key]):
            raise Unsure("a glob the full path refuses")
        features = gate["features"]
        if features is not None and (
                len(set(features["hardened"])) != len(features["hardened"])
                or graph_rules.junit_problem(features["junit"])):
            raise Unsure("hardened listed twice, or a JUnit path refused")
    if graph_rules.find_cycle({gate["id"]: gate["needs"] for gate in gates}):
        raise Unsure("a cycle")
    return gates


_FEATURE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
_FEATURE_TESTS = _section({"happy_path": (_list(_str), list), "edge_cases": (_list(_str), list),
                           "failure_modes": (_list(_str), list)})
_FEATURE = _section({"id": (_pattern(_FEATURE_ID), None), "description": (_str, ""),
                     "tests": (_FEATURE_TESTS, _default(_FEATURE_TESTS))})


def _feature(value: Any) -> dict[str, Any]:
    return _FEATURE(_required(value, "id"))


def _required_features(root: Path, settings: dict[str, Any], gates: list[dict[str, Any]]
                       ) -> dict[str, dict[str, list[str]]]:
    """``graph._required_features``: the test lists of the features gates require, from
    the features file (``features.load_features``) when it is a file; an unknown id, a
    duplicate id or an empty test id there is unsure (the full path refuses them)."""
    required = [gate for gate in gates if gate["features"] and gate["features"]["hardened"]]
    path = root / settings["paths"]["features"]
    if not required or not path.is_file():
        return {}
    data = _read(path)
    if data is None:
        known: dict[str, Any] = {}
    else:
        parsed = _section({"version": (_one, 1), "features": (_list(_feature), list)})(data)
        known = {feature["id"]: feature for feature in parsed["features"]}
        if len(known) != len(parsed["features"]) or any(
                not test.strip() for feature in parsed["features"]
                for tests in feature["tests"].values() for test in tests):
            raise Unsure("a duplicate feature id or an empty test id")
    needed = {feature for gate in required for feature in gate["features"]["hardened"]}
    if needed - set(known):
        raise Unsure("an unknown feature")
    return {feature: {stage: list(tests) for stage, tests in known[feature]["tests"].items()}
            for feature in needed}


# --- gates/definition.py --------------------------------------------------------------


def _effective(evaluator: dict[str, Any], evaluate: dict[str, Any]) -> dict[str, Any]:
    """``definition.evaluator_settings``: the config's with the gate's overrides."""
    settings = dict(evaluator)
    for key, name in (("threshold", "threshold"), ("evaluator", "kind"),
                      ("command", "command"), ("require", "require"),
                      ("block_pre_existing", "block_pre_existing")):
        if evaluate[key] is not None:
            settings[name] = evaluate[key]
    return settings


def _evaluator(settings: dict[str, Any]) -> dict[str, Any]:
    """``definition._evaluator``."""
    effective: dict[str, Any] = {"kind": settings["kind"], "threshold": settings["threshold"]}
    if settings["kind"] == "command":
        effective["command"] = settings["command"]
    if settings["kind"] in ("auto", "anthropic"):
        effective["model"] = settings["anthropic"]["model"]
        if settings["anthropic"]["base_url"] is not None:
            effective["base_url"] = settings["anthropic"]["base_url"]
    if settings["kind"] == "claude-code":
        effective["model"] = settings["claude_code"]["model"]
    if settings["require"] is not None:
        effective["require"] = settings["require"]
    if settings["block_pre_existing"]:
        effective["block_pre_existing"] = True
    return effective


def _names_a_file(root: Path, command: str | None) -> bool:
    """Whether ``programs.command_files`` would ask git what it tracks (a word of the
    command names a file of the project): the same words and paths, no git here."""
    from meridian.gates.programs import _relative, _words

    if not command:
        return False
    for word in _words(command):
        candidates = [word] if not word.startswith("-") else []
        if "=" in word:
            candidates.append(word.split("=", 1)[1])
        for candidate in candidates:
            relative = _relative(root, candidate)
            if relative is not None and (root / relative).is_file():
                return True
    return False


def _definition(root: Path, settings: dict[str, Any], gate: dict[str, Any],
                known: dict[str, dict[str, list[str]]]) -> dict[str, Any]:
    """``definition.definition(graph, gate)``."""
    approval = None
    if gate["approval"] is not None:
        approval = {"token_sha256": gate["approval"]["token_sha256"].lower() or None,
                    "token_env": None}
    features = gate["features"]
    evaluate = gate["evaluate"]
    hashed: dict[str, Any] = {"threshold": evaluate["threshold"],
                              "evaluator": evaluate["evaluator"],
                              "command": evaluate["command"]}
    if evaluate["require"] is not None or evaluate["block_pre_existing"] is not None:
        hashed["require"] = evaluate["require"]
        hashed["block_pre_existing"] = evaluate["block_pre_existing"]
    body: dict[str, Any] = {
        "acceptance": gate["acceptance"],
        "artifacts": list(gate["artifacts"]),
        "checks": [{"run": check["run"], "timeout": check["timeout"]}
                   for check in gate["checks"]],
        "evaluate": hashed,
        "approval": approval,
        "features": None if features is None else {"hardened": list(features["hardened"]),
                                                   "junit": features["junit"]},
    }
    if gate["exclude"]:
        body["exclude"] = list(gate["exclude"])
    if gate["mutation"] != DEFAULT_MUTATION:
        body["mutation"] = dict(gate["mutation"])
    effective = _effective(settings["evaluator"], evaluate)
    defined: dict[str, Any] = {"gate": body, "evaluator": _evaluator(effective)}
    if effective["kind"] == "command" and _names_a_file(root, effective["command"]):
        raise Unsure("a command evaluator running a file of the project")
    if features is not None and features["hardened"]:
        defined["feature_tests"] = {feature: known.get(feature)
                                    for feature in features["hardened"]}
    return defined


class PlainDefinition:
    """What ``status_passes._Definition`` needs, read without the models: the facts the
    config gives, each gate's definition and the graph's order. Raises ``Unsure``."""

    def __init__(self, root: Path) -> None:
        settings = config(root)
        paths = settings["paths"]
        self.facts = {"branch": settings["branch"], "remote": settings["remote"],
                      "gates_path": paths["gates"], "rules_path": paths["rules"],
                      "features_path": paths["features"]}
        gates = _graph(root, settings)
        self.specs = {gate["id"]: gate for gate in gates}
        known = _required_features(root, settings, gates)
        self.definitions = {gate["id"]: _definition(root, settings, gate, known)
                            for gate in gates}
        order = graph_rules.dependency_order({gate["id"]: gate["needs"] for gate in gates})
        self.graph_order = [[gate, list(self.specs[gate]["needs"])] for gate in order]

    def definition(self, gate: str) -> dict[str, Any]:
        return self.definitions[gate]

    def order(self) -> list[list[Any]]:
        return [[gate, list(needs)] for gate, needs in self.graph_order]
