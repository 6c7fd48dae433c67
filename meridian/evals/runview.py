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
- every task definition is validated by the ``Task`` model and its hash is the
  model's (``Task.definition_hash``), computed only when asked for: two tasks with
  equal stored definitions have equal hashes, so the tasks both runs hold unchanged
  (nearly all) are matched without hashing. (The suite manifest proves nothing here:
  whoever can write the document and its index record writes the manifest too, and a
  manifest entry naming the hash of a definition in another form than the model's
  turned a regressed task into a "changed" one, out of the gate);
- every score is validated by the ``Score`` model, and the trial, its trajectory
  and the entry are checked field by field as the models check them (no unknown key,
  ranges, finite numbers), so a document compare reads through the view is one the
  full reader accepts. Not re-checked: the trajectory's steps and final output
  (compare reads neither; the summary figures made from them are the header's own,
  which the full reader does not check against the steps either);
- anything not as the models accept it raises ``NotAsWritten`` and the caller falls
  back to ``runfile.loads``, whose error names the field.

The blob id is not a proof that Meridian wrote the document: an agent with a shell
can write a document and an index record naming its blob id. It only tells a document
worth trying the view on; everything the view accepts, the full reader accepts too
(``tests/adversarial/test_compare_view_forged.py``).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

from meridian.evals import run as runfile
from meridian.evals.types import Score, Task, TaskResult, Trajectory


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
    """A task's id, stored definition and its validated model; its hash is computed
    when first asked for."""

    id: str
    raw: dict[str, Any]
    model: Task
    _hash: str | None = None

    def definition_hash(self) -> str:
        """``Task.definition_hash`` of the stored definition."""
        if self._hash is None:
            self._hash = self.model.definition_hash()
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
        entries = [_entry(item) for item in results]
    except (KeyError, TypeError, AttributeError, ValueError) as exc:
        raise NotAsWritten(str(exc)) from None
    problem = _inconsistency(entries, header)
    if problem:
        raise runfile.RunFileError(f"{source}: {problem} (edited by hand?)")
    return RunView(header=header, results=entries)


_ENTRY_KEYS = frozenset(runfile.TaskEntry.model_fields)
_TRIAL_KEYS = frozenset(TaskResult.model_fields)
_TRAJECTORY_KEYS = frozenset(Trajectory.model_fields)


def _int(value: Any, least: int) -> bool:
    return type(value) is int and value >= least


def _number(value: Any, *, optional: bool = False) -> bool:
    """A finite number >= 0 (what the models' ``ge=0`` floats accept)."""
    if value is None:
        return optional
    return type(value) in (int, float) and math.isfinite(value) and value >= 0


def _entry(item: dict[str, Any]) -> EntryView:
    """One entry, checked as ``TaskEntry`` checks it (``NotAsWritten`` when it is not
    exactly what the models accept: the full reader then names the field)."""
    if not isinstance(item, dict) or not item.keys() <= _ENTRY_KEYS:
        raise NotAsWritten("entry")
    task = item["task"]
    if not isinstance(task, dict) or not _int(item["index"], 0):
        raise NotAsWritten("task")
    model = Task.model_validate(task)  # a ValidationError is a ValueError: NotAsWritten
    task_id = model.id
    trials = []
    passes = 0
    graded = []
    raw_trials = item.get("trials", [])
    if not isinstance(raw_trials, list):
        raise NotAsWritten("trials")
    for trial in raw_trials:
        if not isinstance(trial, dict) or not trial.keys() <= _TRIAL_KEYS:
            raise NotAsWritten("trial")
        status = trial["status"]
        if (type(status) is not str or status not in ("pass", "fail", "infra_error")
                or type(trial["task_id"]) is not str or not _int(trial.get("epoch", 0), 0)
                or not _int(trial.get("attempts", 1), 1)):
            raise NotAsWritten("trial")
        raw_scores = trial.get("scores", [])
        if not isinstance(raw_scores, list):
            raise NotAsWritten("scores")
        scores = [Score.model_validate(score) for score in raw_scores]
        cost = _trajectory_cost(trial.get("trajectory"))
        error = trial.get("error")
        if error is not None and type(error) is not str:
            raise NotAsWritten("error")
        failing_pass = False
        if status == "pass":
            failing_pass = not scores or not all(
                score.passed and not score.infra_error for score in scores)
            passes += 1
        view = TrialView(task_id=trial["task_id"], status=status, error=error, trajectory=cost,
                         failing_pass=failing_pass)
        trials.append(view)
        if status != "infra_error":
            graded.append(view)
    return EntryView(task=TaskRef(task_id, task, model), trials=trials, passes=passes,
                     graded=graded)


def _trajectory_cost(trajectory: Any) -> Cost | None:
    """The trajectory's cost, once its own fields are what ``Trajectory`` accepts."""
    if trajectory is None:
        return None
    if not isinstance(trajectory, dict) or not trajectory.keys() <= _TRAJECTORY_KEYS:
        raise NotAsWritten("trajectory")
    task_id = trajectory["task_id"]
    value = trajectory["cost_usd"]  # written by the model; absent: the full reader sums steps
    if (type(task_id) is not str or not task_id or not _number(value)
            or not _number(trajectory.get("latency_s", 0.0))
            or not _number(trajectory.get("reported_latency_s"), optional=True)
            or not _int(trajectory.get("tokens_in", 0), 0)
            or not _int(trajectory.get("tokens_out", 0), 0)
            or type(trajectory.get("completed", False)) is not bool
            or not isinstance(trajectory.get("steps", []), list)
            or type(trajectory.get("error")) not in (str, type(None))):
        raise NotAsWritten("trajectory")
    return Cost(value)


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
