"""``runview`` against the full reader: valid run documents read alike, and over thousands
of forged ones (every field of an entry set to every kind of wrong value, keys dropped
and added, random combinations) the view never accepts what ``runfile.loads`` refuses,
refuses with the same line, and where both accept, compare gives the same answer.

The checks are derived from the models at import; a model they cannot check is
refused then (a new constraint or validator must be taught to ``runview`` first)."""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import BaseModel, Field, ValidationError

from meridian.evals import compare as cmp
from meridian.evals import run as runfile
from meridian.evals import runview
from meridian.evals.types import GraderSpec, Score, Step, Task, TaskResult, Trajectory, Usage
from tests.evals.runs_support import make_run


def rich_run(run_id: str = "a" * 12) -> runfile.Run:
    """A run using every optional field: epochs, infra errors, judge usage, metadata,
    budgets, visible fields, reported latencies, tool errors."""
    run = make_run({"a": ["pass", "fail"], "b": ["infra_error", "pass"], "c": ["fail", "fail"]},
                   run_id=run_id, b={"tool_errors": 1})
    entries = []
    for entry in run.results:
        task = entry.task.model_copy(update={
            "input": {"q": [1, 2.5, None, True, {"nested": ["x"]}]}, "tags": ["t1", "t2"],
            "difficulty": "hard", "timeout_s": 3.0, "cost_budget_usd": 0.5,
            "latency_budget_s": 2.0, "reference_steps": 2, "expected_tools": ["lookup"],
            "metadata": {"source": "unit", "weight": 2}, "visible": ["tags"],
            "graders": [GraderSpec(name="exact_match", args={"case": False, "n": 1.5})]})
        trials = []
        for trial in entry.trials:
            if trial.trajectory is not None:
                trial = trial.model_copy(update={
                    "scores": [*trial.scores, Score(
                        name="judge", value=0.5 if trial.status == "fail" else 1.0,
                        passed=trial.status == "pass", detail="ok",
                        usage=Usage(tokens_in=10, tokens_out=2, cost_usd=0.001),
                        metadata={"why": ["a", 1]})],
                    "trajectory": trial.trajectory.model_copy(update={
                        "reported_latency_s": 0.25, "error": None}),
                    "attempts": 2})
            trials.append(trial)
        entries.append(entry.model_copy(update={"task": task, "trials": trials}))
    return run.model_copy(update={"results": entries})


def document(run: runfile.Run) -> dict[str, Any]:
    return json.loads(runfile.dumps(run))


def encode(doc: dict[str, Any]) -> bytes:
    return json.dumps(doc).encode()  # NaN and Infinity written as JSON's extensions


def outcome(data: bytes, other: runfile.Run) -> tuple[str, Any]:
    """("refused", the line) or ("read", compare's answer against ``other``)."""
    try:
        run = runfile.loads(data, "run.json")
    except runfile.RunFileError as exc:
        return "refused", str(exc)
    return "read", cmp.compare(run, other, a_ref="A", b_ref="B", force=True).to_json()


def view_outcome(data: bytes, other: runfile.Run) -> tuple[str, Any]:
    try:
        run = runview.load(data, "run.json")
    except runfile.RunFileError as exc:
        return "refused", str(exc)
    return "read", cmp.compare(run, other, a_ref="A", b_ref="B", force=True).to_json()


BASELINE = make_run({"a": ["pass", "pass"], "b": "pass", "c": "pass"}, run_id="b" * 12)


@pytest.mark.parametrize("run", [
    make_run({"a": "pass", "b": "fail", "c": "infra_error"}),
    make_run({"a": ["pass", "fail", "pass"], "b": ["infra_error"] * 3}),
    rich_run(),
    rich_run().portable(),
], ids=["plain", "epochs", "rich", "portable"])
def test_a_valid_document_is_read_by_the_checks_with_the_full_readers_answer(
        run: runfile.Run) -> None:
    data = runfile.dumps(run)
    view = runview.load(data, "run.json")
    assert isinstance(view, runview.RunView)
    for item in json.loads(data)["results"]:
        assert runview._check_entry(item), item  # the checks, not pydantic, took it
    assert view_outcome(data, BASELINE) == outcome(data, BASELINE)
    full = runfile.loads(data, "run.json")
    for mine, theirs in zip(view.results, full.results, strict=True):
        assert mine.task.definition_hash() == theirs.task.definition_hash()


# --- every field of an entry, every kind of value ----------------------------------------

WRONG_VALUES: list[Any] = [
    None, True, False, 0, 1, -1, 2, 0.0, -0.0, 0.5, 1.0, -0.5, 1.5, 2**53 + 1, 10**30,
    float("nan"), float("inf"), float("-inf"), "", "x", "pass", "\ud800", [], [1], ["x"],
    [None], {}, {"k": 1}, {"name": "x"}, json.loads("[" * 300 + "]" * 300),
    json.loads("[" * 60 + "]" * 60),
]


def paths(value: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every key path inside ``value`` (dict keys and list indexes)."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield (*prefix, key)
            yield from paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield (*prefix, index)
            yield from paths(item, (*prefix, index))


def dicts(value: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    if isinstance(value, dict):
        yield prefix
        for key, item in value.items():
            yield from dicts(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from dicts(item, (*prefix, index))


def at(value: Any, path: tuple[Any, ...]) -> Any:
    for part in path:
        value = value[part]
    return value


def mutations(entry: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    for path in paths(entry):
        for wrong in WRONG_VALUES:
            edited = copy.deepcopy(entry)
            at(edited, path[:-1])[path[-1]] = copy.deepcopy(wrong)
            yield f"{path}={str(wrong)[:20]}", edited
        parent = at(entry, path[:-1])
        if isinstance(parent, dict):
            edited = copy.deepcopy(entry)
            del at(edited, path[:-1])[path[-1]]
            yield f"del {path}", edited
    for path in dicts(entry):
        edited = copy.deepcopy(entry)
        at(edited, path)["unknown_key"] = 1
        yield f"extra {path}", edited


def model_accepts(entry: Any) -> bool:
    try:
        runfile.TaskEntry.model_validate(entry)
    except ValidationError:
        return False
    return True


def test_what_the_checks_accept_the_model_accepts_for_every_field_and_value() -> None:
    entries = document(rich_run())["results"] + document(rich_run().portable())["results"]
    checked = accepted = 0
    for entry in entries[:2] + entries[3:5]:
        for label, edited in mutations(entry):
            checked += 1
            if "\ud800" in label:  # pydantic's str refuses it: the document is not read
                assert runview._may_hold_surrogate(json.dumps(edited).encode()), label
                continue
            if runview._check_entry(edited):
                accepted += 1
                assert model_accepts(edited), label
    assert checked > 5000 and accepted > 200, (checked, accepted)  # both sides exercised


def test_random_combinations_of_forgeries_read_alike_in_full() -> None:
    rng = random.Random(17)
    base = document(rich_run())
    ids = set()
    for _ in range(400):
        doc = copy.deepcopy(base)
        for _ in range(rng.randint(1, 3)):
            entry = rng.choice(doc["results"])
            choice = rng.random()
            targets = list(paths(entry))
            path = rng.choice(targets)
            parent = at(entry, path[:-1])
            if choice < 0.6:
                parent[path[-1]] = copy.deepcopy(rng.choice(WRONG_VALUES))
            elif choice < 0.75 and isinstance(parent, dict):
                del parent[path[-1]]
            elif choice < 0.9:
                holder = at(entry, rng.choice(list(dicts(entry))))
                holder[rng.choice(["status", "passed", "extra", "cost_usd", "id"])] = \
                    copy.deepcopy(rng.choice(WRONG_VALUES))
            else:
                doc["results"].append(copy.deepcopy(entry))  # a task twice
        if rng.random() < 0.3:  # and a summary that agrees with the forged statuses
            try:
                forged = runfile.Run.model_validate(doc)
                doc["summary"] = json.loads(forged.summary.model_dump_json())
            except ValidationError:
                pass
        data = encode(doc)
        full, fast = outcome(data, BASELINE), view_outcome(data, BASELINE)
        assert fast == full, (full, fast)
        ids.add(full[0])
    assert ids == {"read", "refused"}


@pytest.mark.parametrize(("label", "edit"), [
    ("bool for a score's pass", lambda d: d["results"][0]["trials"][0]["scores"][0]
     .__setitem__("passed", 1)),
    ("a float for an int", lambda d: d["results"][0]["trials"][0].__setitem__("epoch", 0.0)),
    ("visible not normalised", lambda d: d["results"][0]["task"]
     .__setitem__("visible", ["tags", "id", "tags"])),
    ("totals left to the steps", lambda d: [d["results"][0]["trials"][0]["trajectory"].pop(k)
                                            for k in ("cost_usd", "tokens_in", "tokens_out")]),
    ("nesting past the checks' depth", lambda d: d["results"][0]["task"]
     .__setitem__("input", json.loads("[" * 100 + "]" * 100))),
])
def test_what_pydantic_takes_and_the_checks_do_not_is_read_through_the_model(label, edit) -> None:  # type: ignore[no-untyped-def]
    doc = document(rich_run())
    edit(doc)
    assert not runview._check_entry(doc["results"][0]), label
    data = encode(doc)
    assert view_outcome(data, BASELINE) == outcome(data, BASELINE)
    assert outcome(data, BASELINE)[0] == "read"


@pytest.mark.parametrize("text", [
    '"\\ud800"', '"\\udfff x"', '"a\\uD83D"',
])
def test_a_document_that_may_hold_a_lone_surrogate_is_left_to_the_full_reader(text: str) -> None:
    doc = document(make_run({"a": "pass"}))
    data = encode(doc).replace(b'"demo-agent"', text.encode(), 1)
    assert view_outcome(data, BASELINE) == outcome(data, BASELINE)
    with pytest.raises(runview.NotAsWritten):
        runview.read(data, "run.json")


def test_definitions_equal_under_python_but_not_in_the_hash_are_not_matched() -> None:
    # 1 == 1.0 == True in Python, but the definition hash tells them apart: the task
    # is "changed", not compared (as the full reader says)
    base = document(make_run({"a": "pass"}, run_id="b" * 12))
    base["results"][0]["task"]["input"] = 1
    for other in (1.0, True):
        doc = document(make_run({"a": "fail"}))
        doc["results"][0]["task"]["input"] = other
        a, b = encode(doc), encode(base)
        fast = cmp.compare(runview.load(a, "a"), runview.load(b, "b"))
        full = cmp.compare(runfile.loads(a, "a"), runfile.loads(b, "b"))
        assert fast.to_json() == full.to_json()
        assert fast.changed == ["a"] and not fast.regressions


def test_a_model_the_checks_cannot_follow_is_refused_when_they_are_derived() -> None:
    class Bounded(BaseModel):
        model_config = {"extra": "forbid"}
        name: str = Field(max_length=3)

    class Lenient(BaseModel):
        name: str

    for model in (Bounded, Lenient):
        with pytest.raises(TypeError, match="runview"):
            runview._compile(model)
    for model in (runfile.TaskEntry, Task, GraderSpec, TaskResult, Score, Usage, Trajectory,
                  Step):
        assert model in runview.CHECKED
        runview._compile(model)
