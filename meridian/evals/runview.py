"""A run document read for ``compare`` without validating every task with pydantic.

``compare`` reads, per task, its id, its definition hash and each trial's status,
error and cost. Building the full ``Run`` model of a 10k-task run costs several times
parsing its JSON, so for a document the store wrote and nobody changed since, compare
reads those fields straight from the parsed JSON:

- "the store wrote it": the state branch's run index records the git blob id of the
  document as ``save_run`` wrote it (after validating, redacting and checking it), and
  the bytes read must still hash to that id (``store.load_for_compare``). Any other
  document (an exported file, a run saved before the id was recorded, a document
  edited on the branch) is read by ``runfile.loads``: fully validated, and refused
  with a one-line error naming the file and the field;
- the header (suite with its manifest, agent, settings, summary, version) is still
  validated by the ``Run`` model (with no results), and the consistency rules of
  ``runfile.inconsistency`` (no task twice, trials of their own task, no ``pass`` over
  a failing score, a summary that agrees with the results) are checked here over the
  raw results;
- a task's definition hash is the hash of its stored definition. That equals the
  model's (``Task.definition_hash``) when the stored definition is in the form the
  model writes, which is proved when it matches the suite's manifest entry for the
  task; otherwise (a redacted definition) that task is validated and hashed through
  the model, as before. Two tasks with equal stored definitions have equal hashes, so
  the tasks both runs hold unchanged (nearly all) are matched without hashing;
- anything not shaped as expected (a missing key, a wrong type) raises
  ``NotAsWritten`` and the caller falls back to ``runfile.loads``, whose error names
  the field.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from meridian.evals import run as runfile
from meridian.evals.types import Task
from meridian.records import canonical_json


class NotAsWritten(Exception):
    """The document is not as the store writes it: read it with ``runfile.loads``."""


@dataclass(frozen=True)
class Cost:
    cost_usd: float


@dataclass(frozen=True)
class TrialView:
    task_id: str
    status: str
    error: str | None
    trajectory: Cost | None
    failing_pass: bool = False  # marked pass over no score or a failing one


@dataclass
class TaskRef:
    """A task's id and stored definition; its hash is computed when first asked for."""

    id: str
    raw: dict[str, Any]
    manifest_hash: str | None  # the suite manifest's entry for this id, if any
    source: str
    _hash: str | None = None

    def definition_hash(self) -> str:
        """``Task.definition_hash`` of the stored definition (see the module docstring)."""
        if self._hash is None:
            digest = hashlib.sha256(canonical_json(self.raw).encode("utf-8")).hexdigest()
            if digest != self.manifest_hash:
                # Not proved to be in the model's form: hash it as the model does.
                try:
                    digest = Task.model_validate(self.raw).definition_hash()
                except ValidationError as exc:
                    raise runfile.RunFileError(
                        f"{self.source}: results: task {self.id!r}: "
                        f"{exc.errors()[0]['msg']!s}") from None
            self._hash = digest
        return self._hash

    def same_definition(self, other: TaskRef) -> bool:
        """Whether the two definitions hash alike: equal stored definitions do without
        hashing (the hash is a function of the stored definition)."""
        return self.raw == other.raw or self.definition_hash() == other.definition_hash()


@dataclass
class EntryView:
    """What compare reads of one ``TaskEntry``."""

    task: TaskRef
    trials: list[TrialView]
    passes: int
    graded: list[TrialView] = field(default_factory=list)

    @property
    def task_id(self) -> str:
        return self.task.id


@dataclass
class RunView:
    """A ``Run``'s header (validated) and its results as compare reads them."""

    header: runfile.Run  # results empty
    results: list[EntryView]

    @property
    def run_id(self) -> str | None:
        return self.header.run_id

    @property
    def suite(self) -> runfile.SuiteInfo:
        return self.header.suite

    @property
    def agent(self) -> runfile.AgentInfo:
        return self.header.agent

    @property
    def settings(self) -> runfile.Settings:
        return self.header.settings

    @property
    def summary(self) -> runfile.Summary:
        return self.header.summary

    @property
    def interrupted(self) -> bool:
        return self.header.interrupted

    @property
    def timings(self) -> bool:
        return self.header.timings


def read(data: bytes, source: str) -> RunView:
    """The view of a run document the store wrote (see the module docstring).

    Raises ``NotAsWritten`` when the document is not shaped as the store writes it,
    and ``runfile.RunFileError`` (naming ``source``) when it is but its parts disagree.
    """
    try:
        raw = json.loads(data)
        if not isinstance(raw, dict) or raw.get("version") != runfile.RUN_VERSION:
            raise NotAsWritten("not a current run document")
        results = raw["results"]
        if not isinstance(results, list):
            raise NotAsWritten("results")
        header = runfile.Run.model_validate({**raw, "results": []})
    except (ValueError, TypeError, KeyError) as exc:  # pydantic's ValidationError included
        raise NotAsWritten(str(exc)) from None
    try:
        entries = [_entry(item, header.suite.tasks, source) for item in results]
    except (KeyError, TypeError, AttributeError, ValueError) as exc:
        raise NotAsWritten(str(exc)) from None
    problem = _inconsistency(entries, header)
    if problem:
        raise runfile.RunFileError(f"{source}: {problem} (edited by hand?)")
    return RunView(header=header, results=entries)


def _entry(item: dict[str, Any], manifest: dict[str, str], source: str) -> EntryView:
    task = item["task"]
    task_id = task["id"]
    if not isinstance(task_id, str) or not isinstance(item["index"], int) \
            or not isinstance(task, dict):
        raise NotAsWritten("task id")
    trials = []
    passes = 0
    graded = []
    for trial in item["trials"]:
        status = trial["status"]
        if status not in ("pass", "fail", "infra_error"):
            raise NotAsWritten("status")
        trajectory = trial.get("trajectory")
        cost = None
        if trajectory is not None:
            value = trajectory["cost_usd"]
            if not isinstance(value, int | float) or isinstance(value, bool):
                raise NotAsWritten("cost_usd")
            cost = Cost(value)
        error = trial.get("error")
        if error is not None and not isinstance(error, str):
            raise NotAsWritten("error")
        failing_pass = False
        if status == "pass":
            scores = trial["scores"]
            failing_pass = not scores or not all(
                score["passed"] is True and score.get("infra_error") is not True for score in scores)
            passes += 1
        view = TrialView(task_id=trial["task_id"], status=status, error=error, trajectory=cost,
                         failing_pass=failing_pass)
        trials.append(view)
        if status != "infra_error":
            graded.append(view)
    return EntryView(task=TaskRef(task_id, task, manifest.get(task_id), source), trials=trials,
                     passes=passes, graded=graded)


def _inconsistency(entries: list[EntryView], header: runfile.Run) -> str | None:
    """``runfile.inconsistency`` over the views (the same rules, the same messages)."""
    seen: set[str] = set()
    trials = passed = infra = 0
    for entry in entries:
        if entry.task_id in seen:
            return f"results: task {entry.task_id!r} appears twice"
        seen.add(entry.task_id)
        for trial in entry.trials:
            if trial.task_id != entry.task_id:
                return f"results: {entry.task_id}: holds a trial of task {trial.task_id!r}"
            if trial.failing_pass:
                return f"results: {entry.task_id}: a trial marked pass has a failing score"
        trials += len(entry.trials)
        passed += entry.passes
        infra += len(entry.trials) - len(entry.graded)
    graded = trials - infra
    expected = {"tasks": len(entries), "trials": trials, "passed": passed,
                "failed": graded - passed, "infra_errors": infra,
                "pass_rate": round(passed / graded, 6) if graded else None}
    summary = header.summary
    for name in runfile._COUNTED:
        if getattr(summary, name) != expected[name]:
            return (f"summary.{name}: {getattr(summary, name)!r} disagrees with the "
                    f"results ({expected[name]!r})")
    return None
