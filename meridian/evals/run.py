"""The run file: a versioned, byte-deterministic record of one evaluation run.

    {
      "version": 1,                       always first; readers refuse newer versions
      "agent": {"name", "version", "spec"},
      "created_at", "duration_s", "git": {"commit", "dirty"}, "run_id",
      "interrupted", "merged_from", "settings": {...}, "suite": {"name", "hash", "path"},
      "summary": {...}, "timings": true,
      "results": [ one block per task, in suite order:
        {"index", "task": <definition, graders with args>, "trials": [<TaskResult per epoch>]}
      ]
    }

Serialisation (``dumps``) is JSON with ``version`` first and every other key sorted at
every depth, indented down to the second level, with each task's block (definition and
trials, in epoch order) on one line, tasks in suite order: the same ``Run`` always gives
the same bytes and a change to one task changes only that task's line (and the
summary). Older files, indented all the way down, read the same.

Wall-clock fields (``run_id``, ``created_at``, ``duration_s``, ``git``, ``merged_from``,
step and trajectory latencies, the p95 latency, and the measured figure in a
``latency_budget`` score) differ between two runs that produced identical results. The run committed to the state branch keeps them; the *portable*
form written into the working tree (``eval run --save``, ``eval export``) drops them
and says so with ``"timings": false``. So re-running an unchanged agent rewrites a
byte-identical file, and a pull request that changes the agent shows only the tasks
whose results changed.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from meridian.errors import MeridianError
from meridian.evals import stats
from meridian.evals.types import Task, TaskResult

RUN_VERSION = 2


def _v1_to_v2(data: dict[str, Any]) -> dict[str, Any]:
    # Version 2 added the suite's task manifest (``suite.tasks``), Score.metadata,
    # Trajectory.reported_latency_s and Task.visible, all optional: a v1 file has none.
    return {**data, "version": 2}


# version n -> a function turning a version-n document into a version-(n+1) one.
# Changing the format bumps RUN_VERSION and adds the step from the previous version
# here, so every older file still reads.
_MIGRATIONS: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {1: _v1_to_v2}

# Keys dropped from trajectories and steps in the portable form (wall-clock noise).
_TIMING_KEYS = ("latency_s", "started_at", "reported_latency_s")
# Graders that judge wall-clock time: in the portable form their scores keep pass/fail
# but not the measured figure (detail "0.004s of 2.000s budget", value budget/spent).
WALL_CLOCK_GRADERS = frozenset({"latency_budget"})


class RunFileError(MeridianError):
    """A run file that cannot be read (corrupt, not a run, or from a newer Meridian)."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)


class SuiteInfo(_Strict):
    """The suite a run measured. ``hash`` is informational (any edit changes it);
    ``tasks`` maps every task id of the suite (run or not) to its definition hash, so
    compare can tell a task the run skipped from one the suite no longer has."""

    name: str
    hash: str
    path: str | None = None
    tasks: dict[str, str] = Field(default_factory=dict)


class AgentInfo(_Strict):
    name: str
    version: str
    spec: str


class GitInfo(_Strict):
    """The user's code the agent was measured at: HEAD and whether the tree was dirty."""

    commit: str | None
    dirty: bool


class ShardInfo(_Strict):
    index: int = Field(ge=1)
    count: int = Field(ge=1)

    @model_validator(mode="after")
    def _in_range(self) -> ShardInfo:
        if self.index > self.count:
            raise ValueError(f"shard {self.index}/{self.count}: index exceeds count")
        return self

    def label(self) -> str:
        return f"{self.index}/{self.count}"


class Settings(_Strict):
    """What selected and shaped the run (what ``eval run`` was asked to do)."""

    epochs: int = Field(default=1, ge=1)
    offline: bool = False
    isolation: bool = True
    tags: list[str] = Field(default_factory=list)
    limit: int | None = None
    shard: ShardInfo | None = None


class TaskEntry(_Strict):
    """One task of the suite and its trials (one ``TaskResult`` per epoch)."""

    index: int = Field(ge=0)  # position in the suite, so shards merge back in order
    task: Task
    trials: list[TaskResult] = Field(default_factory=list)

    @property
    def task_id(self) -> str:
        return self.task.id

    @property
    def graded(self) -> list[TaskResult]:
        """Trials that got a verdict (infra errors excluded)."""
        return [t for t in self.trials if t.status != "infra_error"]

    @property
    def passes(self) -> int:
        return sum(1 for t in self.trials if t.status == "pass")

    @property
    def infra_errors(self) -> int:
        return sum(1 for t in self.trials if t.status == "infra_error")

    @property
    def pass_rate(self) -> float | None:
        graded = len(self.graded)
        return self.passes / graded if graded else None

    @property
    def status(self) -> str:
        """``pass`` / ``fail`` (all graded trials agree), ``flaky`` (they do not),
        or ``infra_error`` (no trial got a verdict)."""
        rate = self.pass_rate
        if rate is None:
            return "infra_error"
        return "pass" if rate == 1.0 else "fail" if rate == 0.0 else "flaky"


class Summary(_Strict):
    tasks: int
    trials: int
    passed: int
    failed: int
    infra_errors: int
    pass_rate: float | None  # passed / graded trials
    pass_at_k: dict[str, float] = Field(default_factory=dict)
    pass_hat_k: dict[str, float] = Field(default_factory=dict)
    cost_usd: float
    tokens: int
    median_steps: float | None
    tool_error_rate: float | None
    p95_latency_s: float | None
    # Graded trials whose agent reported no tokens and no cost: their cost is unknown
    # (counted as $0), so a cost figure over them is a floor, not a measurement.
    usage_unreported: int = 0


class Run(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    version: int = RUN_VERSION
    run_id: str | None = None
    created_at: str | None = None
    duration_s: float | None = None
    git: GitInfo | None = None
    suite: SuiteInfo
    agent: AgentInfo
    settings: Settings
    merged_from: list[str] = Field(default_factory=list)
    regraded_from: str | None = None  # the run whose trajectories were graded again
    interrupted: bool = False
    timings: bool = True
    summary: Summary
    results: list[TaskEntry]

    @model_validator(mode="before")
    @classmethod
    def _migrate(cls, data: Any) -> Any:
        """Bring an older run file up to RUN_VERSION; refuse one from a newer Meridian."""
        if not isinstance(data, dict):
            return data
        version = data.get("version", RUN_VERSION)  # absent only when built in code
        if not isinstance(version, int) or isinstance(version, bool) or version < 1:
            raise ValueError(f"version: expected a run-file version >= 1, got {version!r}")
        if version > RUN_VERSION:
            raise ValueError(
                f"run-file version {version} is newer than this Meridian reads "
                f"({RUN_VERSION}); upgrade Meridian"
            )
        while version < RUN_VERSION:
            data = _MIGRATIONS[version](dict(data))
            version = data["version"]
        return data

    def entry(self, task_id: str) -> TaskEntry | None:
        return next((e for e in self.results if e.task_id == task_id), None)

    def trials(self) -> list[TaskResult]:
        return [trial for entry in self.results for trial in entry.trials]

    def portable(self) -> Run:
        """This run without wall-clock and identity fields (see the module docstring)."""
        results = [entry.model_copy(update={"trials": [_without_clock(t) for t in entry.trials]})
                   for entry in self.results]
        return self.model_copy(update={
            "run_id": None, "created_at": None, "duration_s": None, "git": None,
            "merged_from": [], "timings": False, "results": results,
            "summary": summarize(results, self.settings.epochs, timings=False),
        })


def _without_clock(trial: TaskResult) -> TaskResult:
    if not any(score.name in WALL_CLOCK_GRADERS for score in trial.scores):
        return trial
    scores = [
        score.model_copy(update={"value": 1.0 if score.passed else 0.0, "detail": "",
                                 "metadata": {}})
        if score.name in WALL_CLOCK_GRADERS else score
        for score in trial.scores
    ]
    return trial.model_copy(update={"scores": scores})


# --- summary ------------------------------------------------------------------------


def summarize(results: Sequence[TaskEntry], epochs: int, *, timings: bool = True) -> Summary:
    trials = [trial for entry in results for trial in entry.trials]
    graded = [t for t in trials if t.status != "infra_error"]
    passed = sum(1 for t in graded if t.status == "pass")
    trajectories = [t.trajectory for t in graded if t.trajectory is not None]
    tool_steps = [step for traj in trajectories for step in traj.tool_steps]
    pass_at: dict[str, float] = {}
    pass_hat: dict[str, float] = {}
    # Over every task with a trial, an infra error counting as a try that did not
    # pass, and k capped at the task's own trial count: each task's pass^k is then
    # non-increasing in k (and pass@k non-decreasing) over the same set of tasks, so
    # an infra error can never make pass^2 beat pass^1 by dropping a task.
    tried = [e for e in results if e.trials]
    for k in range(1, epochs + 1):
        if not tried:
            break
        pass_at[str(k)] = _mean([stats.pass_at_k(len(e.trials), e.passes, min(k, len(e.trials)))
                                 for e in tried])
        pass_hat[str(k)] = _mean([stats.pass_hat_k(len(e.trials), e.passes, min(k, len(e.trials)))
                                  for e in tried])
    return Summary(
        tasks=len(results),
        trials=len(trials),
        passed=passed,
        failed=len(graded) - passed,
        infra_errors=len(trials) - len(graded),
        pass_rate=_round(passed / len(graded)) if graded else None,
        pass_at_k=pass_at,
        pass_hat_k=pass_hat,
        cost_usd=_round(sum(t.trajectory.cost_usd for t in trials if t.trajectory), 10),
        tokens=sum(t.trajectory.tokens for t in trials if t.trajectory),
        median_steps=stats.median([len(traj.steps) for traj in trajectories]),
        tool_error_rate=(_round(sum(1 for s in tool_steps if s.failed) / len(tool_steps))
                         if tool_steps else None),
        p95_latency_s=(stats.percentile([traj.latency_s for traj in trajectories], 95)
                       if timings else None),
        usage_unreported=sum(1 for traj in trajectories if not traj.usage_reported),
    )


def _mean(values: Sequence[float]) -> float:
    return _round(sum(values) / len(values))


def _round(value: float, digits: int = 6) -> float:
    return round(value, digits)


# --- serialisation ------------------------------------------------------------------


def _sorted(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _sorted(value[key]) for key in sorted(value)}
    if isinstance(value, list):
        return [_sorted(item) for item in value]
    return value


def to_document(run: Run) -> dict[str, Any]:
    """The JSON document of ``run``: ``version`` first, every other key sorted."""
    ordered = _sorted(document(run))
    return {"version": ordered.pop("version"), **ordered}


def document(run: Run) -> dict[str, Any]:
    """The JSON document of ``run``, keys in model order (``dumps_document`` sorts them)."""
    data = run.model_dump(mode="json")
    if not run.timings:
        for entry in data["results"]:
            for trial in entry["trials"]:
                trajectory = trial.get("trajectory")
                if trajectory:
                    for key in _TIMING_KEYS:
                        trajectory.pop(key, None)
                    for step in trajectory["steps"]:
                        for key in _TIMING_KEYS:
                            step.pop(key, None)
    return data


def dumps(run: Run) -> bytes:
    """Byte-deterministic serialisation: equal runs give equal bytes."""
    return dumps_document(document(run))


def _compact(value: Any) -> str:
    # No indent: the C encoder (indent forces the pure-Python one, 30x slower).
    return json.dumps(value, ensure_ascii=False, allow_nan=False, sort_keys=True)


def _expanded(value: Any, depth: int) -> str:
    """``value`` indented two spaces a level down to depth 2, compact below; each
    element of the top-level ``results`` on one line of its own."""
    if depth > 2 or not value or not isinstance(value, dict | list):
        return _compact(value)
    pad, close = "  " * (depth + 1), "  " * depth
    if isinstance(value, list):
        items = [pad + _expanded(item, depth + 1) for item in value]
        return "[\n" + ",\n".join(items) + "\n" + close + "]"
    keys = sorted(value)
    if depth == 0 and "version" in value:
        keys.remove("version")
        keys.insert(0, "version")
    items = []
    for key in keys:
        item = value[key]
        if depth == 0 and key == "results" and isinstance(item, list) and item:
            body = ",\n".join("    " + _compact(entry) for entry in item)
            items.append(f'{pad}"results": [\n{body}\n  ]')
        else:
            items.append(f"{pad}{_compact(key)}: {_expanded(item, depth + 1)}")
    return "{\n" + ",\n".join(items) + "\n" + close + "}"


def dumps_document(data: dict[str, Any]) -> bytes:
    """The run file's bytes for a run document (``document(run)``, redacted or not).

    Layout: ``version`` first, every other key sorted at every depth; indented like
    ``json.dumps(indent=2)`` down to the second level, and each task of ``results`` one
    line of compact JSON (tasks in suite order). So a change to one task changes one
    line (and the summary), and the file is written by the C encoder. Readers parse
    JSON, so run files in the older fully indented layout read the same.
    """
    return (_expanded(data, 0) + "\n").encode("utf-8")


def export_bytes(run: Run) -> bytes:
    """The portable run file for the working tree (no wall-clock fields)."""
    return dumps(run.portable())


# A run file larger than this is refused before it is parsed (parsing takes about five
# times its size in memory; a 10k-task run is ~13 MB): a huge file is one clear error,
# not minutes of swapping. ``save_run`` refuses to write a larger one.
MAX_RUN_BYTES = 512 * 1024 * 1024


def too_large(size: int, source: str) -> RunFileError:
    return RunFileError(f"{source}: {size:,} bytes; a run file is at most "
                        f"{MAX_RUN_BYTES:,} bytes (512 MiB)")


def read_file(path: Any, source: str) -> bytes:
    """The bytes of the run file at ``path``, refused with one line when it cannot be
    read, is not a regular file (opened without blocking: a FIFO swapped in is refused,
    never waited on) or is larger than ``MAX_RUN_BYTES`` (checked before reading)."""
    import stat

    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    try:
        descriptor = os.open(path, flags)
    except OSError as exc:
        raise RunFileError(f"{source}: cannot read ({exc.strerror or exc})") from None
    try:
        info = os.fstat(descriptor)
        if not stat.S_ISREG(info.st_mode):
            raise RunFileError(f"{source}: not a regular file")
        if info.st_size > MAX_RUN_BYTES:
            raise too_large(info.st_size, source)
        with os.fdopen(os.dup(descriptor), "rb") as handle:
            data = handle.read(MAX_RUN_BYTES + 1)
    except OSError as exc:
        raise RunFileError(f"{source}: cannot read ({exc.strerror or exc})") from None
    finally:
        os.close(descriptor)
    if len(data) > MAX_RUN_BYTES:  # grew while it was read
        raise too_large(len(data), source)
    return data


def loads(data: bytes | str, source: str) -> Run:
    """Parse a run file; RunFileError names ``source`` and the problem."""
    from meridian.evals import nogc

    with nogc.paused():
        return validate(parse(data, source), source)


def parse(data: bytes | str, source: str) -> Any:
    """The JSON of a run file (``RunFileError`` for one too large, or not JSON)."""
    if len(data) > MAX_RUN_BYTES:
        raise too_large(len(data), source)
    try:
        return json.loads(data)
    except RecursionError:
        raise RunFileError(f"{source}: not valid JSON (nested too deeply)") from None
    except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError, a 5,000-digit number
        raise RunFileError(f"{source}: not valid JSON ({exc})") from None


def validate(raw: Any, source: str) -> Run:
    """The ``Run`` of a parsed run file, validated in full and checked for consistency."""
    if not isinstance(raw, dict) or "results" not in raw:
        raise RunFileError(f"{source}: not a Meridian run file (no 'results')")
    if "version" not in raw:
        raise RunFileError(f"{source}: version: missing (every run file starts with its version)")
    try:
        run = Run.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        parts = [str(part) for part in first["loc"]]
        if len(parts) > 16:  # a value nested hundreds deep: the line stays readable
            parts = [*parts[:10], f"...({len(parts) - 12} more)", *parts[-2:]]
        field = ".".join(parts)
        message = str(first["msg"]).removeprefix("Value error, ")
        raise RunFileError(f"{source}: {field + ': ' if field else ''}{message}") from None
    problem = inconsistency(run)
    if problem:
        raise RunFileError(f"{source}: {problem} (edited by hand?)")
    return run


_COUNTED = ("tasks", "trials", "passed", "failed", "infra_errors", "pass_rate")


def inconsistency(run: Run) -> str | None:
    """Why ``run``'s parts disagree, or None. The gate reads the summary (infra-error
    count, pass rate) and the results (regressions): a file whose summary was edited to
    hide infra errors, whose results hold a task twice, or whose trial says ``pass``
    over a failing score is refused rather than believed."""
    seen: set[str] = set()
    for entry in run.results:
        if entry.task_id in seen:
            return f"results: task {entry.task_id!r} appears twice"
        seen.add(entry.task_id)
        for trial in entry.trials:
            if trial.task_id != entry.task_id:
                return f"results: {entry.task_id}: holds a trial of task {trial.task_id!r}"
            if trial.status == "pass" and (not trial.scores or not all(
                    score.passed and not score.infra_error for score in trial.scores)):
                return f"results: {entry.task_id}: a trial marked pass has a failing score"
    expected = summarize(run.results, run.settings.epochs, timings=False)
    for name in _COUNTED:
        if getattr(run.summary, name) != getattr(expected, name):
            return (f"summary.{name}: {getattr(run.summary, name)!r} disagrees with the "
                    f"results ({getattr(expected, name)!r})")
    return None


# --- re-grading ---------------------------------------------------------------------


def regrade(run: Run, *, offline: bool = False) -> Run:
    """``run`` with every stored trajectory graded again by today's graders.

    The task definitions (graders and their arguments) are the ones the run
    recorded, so the result says what today's grader code makes of the same
    trajectories. Trials without a trajectory (the agent failed or timed out, an
    infra error before an answer) are kept as they were: there is nothing to grade.
    """
    from meridian.evals.graders import grade_task

    results = []
    for entry in run.results:
        trials = []
        for trial in entry.trials:
            if trial.trajectory is None:
                trials.append(trial)
                continue
            graded = grade_task(entry.task, trial.trajectory, offline=offline, epoch=trial.epoch,
                                attempts=trial.attempts)
            trials.append(graded)
        results.append(entry.model_copy(update={"trials": trials}))
    return run.model_copy(update={
        "run_id": None, "merged_from": [], "results": results,
        "summary": summarize(results, run.settings.epochs, timings=run.timings),
    })


# --- merging shards -----------------------------------------------------------------


def merge(runs: Sequence[Run]) -> Run:
    """Join the shard runs of one suite into the run an unsharded invocation makes.

    Refuses anything that would not be that run: a run that is not a shard, shards of
    different suites, agents or settings, a shard given twice, or a missing shard.
    """
    if not runs:
        raise MeridianError("merge needs at least one shard run")
    label = [run.run_id or f"#{i + 1}" for i, run in enumerate(runs)]
    for name, run in zip(label, runs, strict=True):
        if run.settings.shard is None:
            raise MeridianError(f"run {name} is not a shard (run with --shard i/n)")
    first = runs[0]
    assert first.settings.shard is not None
    count = first.settings.shard.count
    for name, run in zip(label, runs, strict=True):
        assert run.settings.shard is not None
        for what, mine, theirs in (
            ("suite hash", run.suite.hash, first.suite.hash),
            ("agent", run.agent, first.agent),
            ("shard count", run.settings.shard.count, count),
            ("settings", run.settings.model_copy(update={"shard": None}),
             first.settings.model_copy(update={"shard": None})),
        ):
            if mine != theirs:
                raise MeridianError(f"run {name} differs from run {label[0]} in {what}; "
                                    "only shards of one invocation merge")
    seen: dict[int, str] = {}
    for name, run in zip(label, runs, strict=True):
        assert run.settings.shard is not None
        index = run.settings.shard.index
        if index in seen:
            raise MeridianError(f"shard {index}/{count} given twice (runs {seen[index]} and {name})")
        seen[index] = name
    missing = [str(i) for i in range(1, count + 1) if i not in seen]
    if missing:
        raise MeridianError(f"missing shard(s) {', '.join(f'{m}/{count}' for m in missing)}")
    positions: dict[int, str] = {}
    for name, run in zip(label, runs, strict=True):
        for entry in run.results:
            if entry.index in positions:
                raise MeridianError(f"task {entry.task_id!r} appears in runs {positions[entry.index]} "
                                    f"and {name}; shards overlap")
            positions[entry.index] = name
    results = sorted((entry for run in runs for entry in run.results), key=lambda e: e.index)
    commits = {run.git.commit for run in runs if run.git is not None}
    if len(commits) > 1:
        raise MeridianError("shards were run at different commits: " + ", ".join(
            sorted(c or "none" for c in commits)))
    gits = [run.git for run in runs if run.git is not None]
    timings = all(run.timings for run in runs)
    created = sorted(run.created_at for run in runs if run.created_at)
    durations = [run.duration_s for run in runs if run.duration_s is not None]
    return Run(
        created_at=created[0] if created else None,
        duration_s=max(durations) if durations else None,
        git=GitInfo(commit=gits[0].commit, dirty=any(g.dirty for g in gits)) if gits else None,
        suite=first.suite,
        agent=first.agent,
        settings=first.settings.model_copy(update={"shard": None}),
        merged_from=[run.run_id for run in sorted(runs, key=_shard_index) if run.run_id],
        interrupted=any(run.interrupted for run in runs),
        timings=timings,
        summary=summarize(results, first.settings.epochs, timings=timings),
        results=results,
    )


def _shard_index(run: Run) -> int:
    return run.settings.shard.index if run.settings.shard else 0
