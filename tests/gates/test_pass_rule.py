"""The plain-Python pass rule (``gates/pass_rule.py``) held to the full one.

Both judge the same generated set of verdict documents (valid ones, each field broken
in the ways JSON allows, adversarial values: coerced types, NaN, huge numbers, lone
surrogates, unknown keys, nested models broken): wherever the plain rule is sure
(``ACCEPT``/``REFUSE``) it must agree with ``evidence._check_document``, and on the
documents Meridian writes it must be sure (else the fast path would never be used).
"""

from __future__ import annotations

import copy
import json
import random
from typing import Any

import pytest

from meridian.evaluators import models
from meridian.gates import pass_rule
from meridian.gates.evidence import _check_document
from meridian.records import Record


def _full(document: Any, data: dict[str, Any]) -> str:
    record = Record.model_construct(id="0" * 32, ts="2026-01-01T00:00:00.000000Z",
                                    kind="gate.passed", writer="t", data=data)
    if not isinstance(document, dict):
        return pass_rule.REFUSE  # check_pass: "is not a verdict"
    return pass_rule.ACCEPT if _check_document(record, "verdicts/g/x.json", document,
                                               None) is None else pass_rule.REFUSE


def _written(rng: random.Random) -> dict[str, Any]:
    """A verdict as Meridian writes it (``decide`` then ``model_dump(mode="json")``)."""
    not_judged = rng.choice([[], [], ["spec_adherence"], ["robustness", "spec_adherence"]])
    scores = {d: rng.choice([0, 3, 6.5, 7, 7.25, 8, 9.5, 10, rng.uniform(0, 10)])
              for d in models.DIMENSIONS if d not in not_judged}
    issues = [models.Issue(severity=rng.choice(["high", "medium", "low"]),
                           file=rng.choice([None, "src/a.py"]), line=rng.choice([None, 1, 40]),
                           message="m", pre_existing=rng.random() < 0.3)
              for _ in range(rng.choice([0, 0, 1, 3]))]
    coverage = None
    if rng.random() < 0.3:
        total = rng.randint(0, 50)
        coverage = models.Coverage(bytes_seen=rng.randint(0, 100), bytes_total=rng.randint(0, 100),
                                   changed_lines_seen=total - rng.choice([0, 0, 1]),
                                   changed_lines_total=total,
                                   unseen=rng.choice([[], [], ["x"]]))
    identity = None
    if rng.random() < 0.4:
        identity = models.EvaluatorIdentity(kind="anthropic", endpoint="http://127.0.0.1:1",
                                            models=["m"], request_ids=["r"], message_ids=["q"])
    weights = rng.choice([None, None, {"completeness": 1, "correctness": 1, "robustness": 1,
                                       "spec_adherence": 1}, {"correctness": 2.0}])
    verdict = models.decide(
        gate="g", evaluator=rng.choice(["heuristic", "anthropic:m"]), subject="a" * 40,
        scores=scores, issues=issues, threshold=rng.choice([0, 5, 7.0, 7.5, 9, 10]),
        weights=weights, coverage=coverage, identity=identity, not_judged=not_judged,
        block_pre_existing=rng.random() < 0.2, scope=rng.choice([None, "objective checks only"]))
    if rng.random() < 0.3:
        verdict = verdict.model_copy(update={"mutation": models.MutationReport(
            mutants=[models.MutantResult(function="f", file="src/a.py", line=3,
                                         outcome="killed")], max_functions=20, timeout_s=300)})
    verdict = verdict.model_copy(update={"spec_hash": rng.choice([None, "b" * 64])})
    return json.loads(json.dumps(verdict.model_dump(mode="json")))


def _data(document: dict[str, Any]) -> dict[str, Any]:
    return {"gate": document.get("gate"), "subject": document.get("subject"),
            "spec_hash": document.get("spec_hash"), "threshold": document.get("threshold"),
            "overall": document.get("overall"), "verdict": "verdicts/g/x.json"}


ODD_VALUES: list[Any] = [None, True, False, 0, 1, -1, 1.0, 1.5, 11, -0.5, 2 ** 60, 10 ** 400,
                         float("nan"), float("inf"), "", "8", "8.5", "true", "high", "\ud800",
                         [], [1], {}, {"x": 1}, "killed"]


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


def _variants(rng: random.Random, document: dict[str, Any]) -> list[Any]:
    """The document broken at each of its places in the ways JSON can."""
    out: list[Any] = [document]
    for path in _paths(document):
        for value in rng.sample(ODD_VALUES, 4):
            out.append(_set(document, path, value))
        if isinstance(path[-1], str):
            out.append(_drop(document, path))
    for extra in ("extra", "passed_by_hand"):
        out.append({**document, extra: 1})
    if document.get("issues"):
        out.append(_set(document, ("issues", 0, "unexpected"), "x"))
    if document.get("identity"):
        out.append(_set(document, ("identity", "unexpected"), "x"))
    # adversarial: a high issue relabelled, a score just outside the range, the label lying
    out.append({**document, "passed": True, "issues": [{"severity": "high", "message": "x"}]})
    out.append({**document, "scores": {**document["scores"], "completeness": 10.000001}})
    out.append({**document, "scores": {**document["scores"], "bonus": 11}})
    out.append({**document, "weights": {d: 0 for d in pass_rule.DIMENSIONS}})
    out.append({**document, "weights": {d: -1 for d in pass_rule.DIMENSIONS}})
    out.append({**document, "weights": {}})
    out.append({**document, "not_judged": list(pass_rule.DIMENSIONS)})
    out.append({**document, "not_judged": ["bogus", *document.get("not_judged", [])]})
    out.append({**document, "coverage": {"bytes_seen": 1, "bytes_total": 2,
                                         "changed_lines_seen": 3, "changed_lines_total": 3}})
    out.append([document])
    out.append("not a verdict")
    return out


def _cases(seed: int, count: int) -> list[tuple[Any, dict[str, Any]]]:
    rng = random.Random(seed)
    cases: list[tuple[Any, dict[str, Any]]] = []
    for _ in range(count):
        document = _written(rng)
        data = _data(document)
        for variant in _variants(rng, document):
            cases.append((variant, data))
        # the event's side broken: ties and figures that differ from the verdict
        for key, value in (("gate", "other"), ("subject", "b" * 40), ("spec_hash", "c" * 64),
                           ("threshold", 0), ("overall", 10), ("overall", None),
                           ("threshold", True), ("overall", str(document["overall"]))):
            cases.append((document, {**data, key: value}))
    return cases


def test_the_plain_rule_agrees_with_the_full_rule_wherever_it_is_sure() -> None:
    cases = _cases(17, 120)
    assert len(cases) > 10_000
    counts = {pass_rule.ACCEPT: 0, pass_rule.REFUSE: 0, pass_rule.UNSURE: 0}
    disagreements = []
    for document, data in cases:
        plain = pass_rule.judge(document, data)
        counts[plain] += 1
        if plain != pass_rule.UNSURE and plain != _full(document, data):
            disagreements.append((plain, document, data))
    assert not disagreements[:3], disagreements[:3]
    # every outcome is exercised (most broken values are ones pydantic might coerce: unsure)
    assert counts[pass_rule.ACCEPT] > 1_000 and counts[pass_rule.REFUSE] > 5_000
    assert counts[pass_rule.UNSURE] > 5_000


@pytest.mark.parametrize("seed", range(5))
def test_it_is_sure_about_every_verdict_meridian_writes(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(200):
        document = _written(rng)
        data = _data(document)
        assert pass_rule.judge(document, data) == _full(document, data)


def test_its_constants_are_the_models() -> None:
    assert pass_rule.DIMENSIONS == models.DIMENSIONS
    assert pass_rule.DEFAULT_WEIGHTS == models.DEFAULT_WEIGHTS
    assert set(pass_rule._VERDICT[0] | pass_rule._VERDICT[1]) == set(models.Verdict.model_fields)
    for plain, model in ((pass_rule._ISSUE, models.Issue), (pass_rule._USAGE, models.Usage),
                         (pass_rule._IDENTITY, models.EvaluatorIdentity),
                         (pass_rule._COVERAGE, models.Coverage),
                         (pass_rule._SUPPRESSED, models.SuppressedIssue),
                         (pass_rule._MUTANT, models.MutantResult),
                         (pass_rule._MUTATION, models.MutationReport)):
        fields = model.model_fields
        assert plain[0] == {name for name, f in fields.items() if f.is_required()}, model
        assert plain[1] == {name for name, f in fields.items() if not f.is_required()}, model
