"""Attack: the status fast path reads the config, gate graph and definitions without
pydantic (``gates/plain_definition.py``); crafted YAML where a plain reader could read
otherwise than the models (coercions, YAML 1.1 booleans, ``"7"``, ``.inf``, duplicate
keys, anchors and ``<<`` merge keys, tabs, a BOM, CRLF, a gates path moved in the config)
must never make ``meridian status`` answer otherwise than the full derivation.

Layer: state derivation. The invariant: ``meridian status`` (text, ``--json``,
``--strict``, exit codes) answered through a view that shows a pass is what the full
derivation prints, whatever the files say. Two ways in:

- the crafted files are in place when the gate is passed (the pass records their
  sha256, so the fast path reads exactly them afterwards): the plain reader either
  answers with the full path's definition (the pass holds, the view is used) or is
  unsure and the full loaders decide;
- the files are crafted after the pass and the view is rewritten with the key of the
  files now (a forged view): the full path refuses them, or reads another definition.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from meridian.commands import status_passes, status_view
from meridian.gates import plain_definition
from meridian.viewfile import write as write_view
from tests.adversarial.conftest import CHAIN, Proc, commit_all, pass_gate, write

ARGS = ((), ("--json",), ("--strict",), ("--json", "--strict"))
Answer = tuple[int, object, str]
HEX = "ab" * 32


def _views(root: Path) -> list[Path]:
    return sorted((root / ".git" / "meridian").glob("status-view-*.json"))


def _answer(cli: Callable[..., Proc], args: tuple[str, ...]) -> Answer:
    proc = cli("status", *args)
    return proc.code, json.loads(proc.out) if "--json" in args and proc.out else proc.out, proc.err


def _fast_and_full(cli: Callable[..., Proc], root: Path,
                   attack: Callable[[], None]) -> tuple[list[Answer], list[Answer]]:
    fast, full = [], []
    for args in ARGS:
        attack()
        assert _views(root)
        fast.append(_answer(cli, args))
    for args in ARGS:
        attack()
        for view in _views(root):
            view.unlink()
        full.append(_answer(cli, args))
    return fast, full


def _plain_answers(root: Path) -> bool:
    try:
        plain_definition.PlainDefinition(root)
    except plain_definition.Unsure:
        return False
    return True


CONFIG = """\
version: 1
branch: meridian/state
remote: origin
"""

# (name, config.yaml, gates.yaml or None for the chain, whether the plain reader answers)
AT_PASS: list[tuple[str, str, str | None, bool]] = [
    ("threshold-coerced-string", CONFIG + "evaluator:\n  threshold: \"7\"\n", None, False),
    ("threshold-yaml-bool", CONFIG + "evaluator:\n  threshold: yes\n", None, False),
    ("threshold-int", CONFIG + "evaluator:\n  threshold: 7\n", None, True),
    ("threshold-exponent", CONFIG + "evaluator:\n  threshold: 6.5e+0\n", None, True),
    ("yaml-1.1-on", CONFIG + "evaluator:\n  block_pre_existing: on\n", None, True),
    ("bool-as-string", CONFIG + "evaluator:\n  block_pre_existing: \"false\"\n", None, False),
    ("merge-key", CONFIG + "evaluator:\n  <<: {threshold: 6, kind: auto}\n  threshold: 6.5\n",
     None, True),
    ("bom-crlf", "\ufeff" + CONFIG.replace("\n", "\r\n") + "evaluator:\r\n  threshold: 6\r\n",
     None, True),
    ("tabs-in-values", CONFIG, CHAIN.replace("acceptance: Says what the code does.",
                                             "acceptance: \"Says\\twhat\"").replace(
        "description: The specification.", "description: The\tspecification."), True),
    ("gates-path-moved", CONFIG + "paths:\n  gates: conf/graph.yml\n", CHAIN, True),
    ("version-coerced", CONFIG.replace("version: 1", "version: \"1\""), None, False),
    ("gate-overrides", CONFIG, CHAIN.replace(
        '    artifacts: ["spec/**"]\n',
        '    artifacts: ["spec/**"]\n    evaluate: {threshold: 6, block_pre_existing: no}\n'
        '    mutation: off\n    checks: [{run: "true", timeout: 30}, "true"]\n'), True),
    ("gate-threshold-coerced", CONFIG, CHAIN.replace(
        '    artifacts: ["spec/**"]\n',
        '    artifacts: ["spec/**"]\n    evaluate: {threshold: "6"}\n'), False),
    ("estimate-coerced", CONFIG, CHAIN.replace(
        '    artifacts: ["spec/**"]\n', '    artifacts: ["spec/**"]\n    estimate_hours: "2"\n'),
     False),
    ("anchors-in-the-graph", CONFIG, """\
version: 1
gates:
  - &spec {id: spec, acceptance: Says what the code does., artifacts: ["spec/**"]}
  - {<<: *spec, id: impl, needs: [spec], artifacts: ["src/**"]}
  - id: release
    needs: [impl]
    artifacts: ["release/**"]
    approval: {token_sha256: HEX}
""".replace("HEX", HEX.upper()), True),
    ("unicode", CONFIG, CHAIN.replace("Says what the code does.", "Dit ce que fait le code ✓"),
     True),
    ("mutation-default-spelled-out", CONFIG, CHAIN.replace(
        '    artifacts: ["spec/**"]\n',
        '    artifacts: ["spec/**"]\n    mutation: {enabled: true, max_functions: 20, '
        'timeout_s: 300}\n'), True),
]


@pytest.mark.parametrize("name, config, gates, answers", AT_PASS, ids=[c[0] for c in AT_PASS])
def test_files_crafted_before_the_pass_are_read_as_the_full_path_reads_them(
        project: Path, cli: Callable[..., Proc], name: str, config: str, gates: str | None,
        answers: bool) -> None:
    (project / ".meridian" / "config.yaml").write_bytes(config.encode("utf-8"))
    if gates is not None:
        target = "conf/graph.yml" if name == "gates-path-moved" else ".meridian/gates.yaml"
        write(project, target, gates)
    commit_all(project, "crafted settings")
    assert cli("status").code == 0
    pass_gate(cli, project, "spec", "spec/spec.py")
    assert cli("status").code == 0
    assert cli("status").code == 0
    [view] = _views(project)
    body = json.loads(view.read_text())["body"]
    assert status_view.shows_a_pass(body["document"])
    # The plain reader answers for the plain files, and leaves the rest to the full path.
    assert _plain_answers(project) is answers
    located = status_view._locate()
    assert located is not None
    assert status_passes.recheck(*located, body) is True
    saved = view.read_bytes()
    fast, full = _fast_and_full(cli, project, lambda: view.write_bytes(saved))
    assert fast == full
    document = full[1][1]
    assert isinstance(document, dict) and document["gates"][0]["state"] == "passed"


# (name, config.yaml, gates.yaml or None: unchanged), written after the pass
AFTER_PASS: list[tuple[str, str, str | None]] = [
    ("duplicate-key", CONFIG + "evaluator:\n  threshold: 7\n  threshold: 0\n", None),
    ("infinite-threshold", CONFIG + "evaluator:\n  threshold: .inf\n", None),
    ("tab-indent", CONFIG + "evaluator:\n\tthreshold: 0\n", None),
    ("coerced-threshold-zero", CONFIG + "evaluator:\n  threshold: \"0\"\n", None),
    ("bool-threshold", CONFIG + "evaluator:\n  threshold: false\n", None),
    ("merge-lowers-threshold", CONFIG + "evaluator:\n  <<: {threshold: 0}\n", None),
    ("gates-path-moved", CONFIG + "paths:\n  gates: conf/graph.yml\n",
     CHAIN.replace('artifacts: ["spec/**"]', 'artifacts: ["spec/**"]\n    evaluate: '
                   '{threshold: 0}')),
    ("token-env-new", CONFIG, CHAIN + "    approval: {token_env: MERIDIAN_TOKEN}\n"),
    ("unknown-key", CONFIG + "evaluator:\n  threshhold: 0\n", None),
    ("a-cycle", CONFIG, CHAIN.replace("  - id: spec\n", "  - id: spec\n    needs: [release]\n")),
]


@pytest.mark.parametrize("name, config, gates", AFTER_PASS, ids=[c[0] for c in AFTER_PASS])
def test_files_crafted_after_the_pass_behind_a_rekeyed_view_are_derived_as_in_full(
        project: Path, cli: Callable[..., Proc], name: str, config: str,
        gates: str | None) -> None:
    pass_gate(cli, project, "spec", "spec/spec.py")
    assert cli("status").code == 0
    assert cli("status").code == 0
    [view] = _views(project)
    saved = json.loads(view.read_text())["body"]
    (project / ".meridian" / "config.yaml").write_bytes(config.encode("utf-8"))
    if gates is not None:
        target = "conf/graph.yml" if name == "gates-path-moved" else ".meridian/gates.yaml"
        write(project, target, gates)
    located = status_view._locate()
    assert located is not None
    # The view rewritten with the key of the files now (its checksum recomputed): only
    # the recheck stands between it and the answer.
    body = {**saved, "key": status_view.view_key(*located, saved["facts"])}
    assert status_passes.recheck(*located, body) is False
    target = status_view.view_path(located[2], located[0])
    fast, full = _fast_and_full(cli, project, lambda: write_view(target, body))
    assert fast == full
    document = full[1][1]
    assert full[0][0] == 2 or (isinstance(document, dict)
                               and document["gates"][0]["state"] != "passed")
