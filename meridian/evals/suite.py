"""Evaluation suites: YAML files of tasks, loaded with every mistake located.

    suite: reference
    defaults:            # merged into every task; a task's own value wins
      timeout_s: 15
    tasks:
      - id: reverse_capital
        input: "Reverse the capital of Japan."
        expected: "oykoT"
        grader:          # a name, a list of names / {name: {kwargs}}, or one mapping
          - exact_match: {case_sensitive: true}
          - step_efficiency
        reference_steps: 2

An error names the file, the line, the task and the field:
``suites/x.yaml:14: task 'reverse_capital': grader[0]: unknown grader 'exact' (known: ...)``.
Grader names, arguments (against the grader's signature) and the task fields a
grader needs are all checked here, before any agent runs.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, JsonValue, ValidationError

from meridian import yamlio
from meridian.errors import ConfigError, MeridianError
from meridian.evals import graders
from meridian.evals.types import GraderSpec, Task
from meridian.records import canonical_json

GRADER_KEYS = ("grader", "graders")
_JSON_VALUE_TAGS = frozenset({"list", "dict", "str", "int", "float", "bool", "[key]"})


class _Defaults(BaseModel):
    """What ``defaults`` may set: every task field except the task's identity."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    expected: JsonValue = None
    grader: JsonValue = None
    graders: JsonValue = None
    expected_tools: list[str] | None = None
    reference_steps: int | None = Field(default=None, ge=0)
    tags: list[str] | None = None
    difficulty: str | None = None
    timeout_s: float | None = Field(default=None, gt=0)
    cost_budget_usd: float | None = Field(default=None, ge=0)
    latency_budget_s: float | None = Field(default=None, gt=0)
    metadata: dict[str, JsonValue] | None = None
    visible: list[str] | None = None


class _TasksFrom(BaseModel):
    """``tasks_from: {path, fields, metadata}``: one task per JSONL line or CSV row."""

    model_config = ConfigDict(extra="forbid")

    path: str = Field(min_length=1)
    # task field -> column (``input: question``); id/input/expected default to themselves.
    fields: dict[str, str] = Field(default_factory=dict)
    # Columns copied into the task's metadata (shown to the agent); others are dropped.
    metadata: list[str] = Field(default_factory=list)


class _SuiteFile(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    suite: str = Field(min_length=1)
    description: str = ""
    defaults: dict[str, Any] = Field(default_factory=dict)
    # Task fields every task shows its agent besides id, input and metadata.
    visible: list[str] = Field(default_factory=list)
    tasks: list[Any] = Field(default_factory=list)
    tasks_from: str | _TasksFrom | None = None


@dataclass(frozen=True)
class Suite:
    """A loaded suite: tasks in file order, defaults already merged in."""

    name: str
    path: str
    tasks: list[Task]
    description: str = ""
    _by_id: dict[str, Task] = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        self._by_id.update({task.id: task for task in self.tasks})

    @property
    def hash(self) -> str:
        """sha256 of the canonical JSON of the task definitions (not the file's bytes).

        Comments, key order and YAML spelling do not change it; any change to what
        a task asks or how it is graded does. Runs of different hashes do not compare.
        """
        return suite_hash(self.tasks)

    def task_hashes(self) -> dict[str, str]:
        """task id -> definition hash, for every task of the suite (not only those run)."""
        return {task.id: task.definition_hash() for task in self.tasks}

    def task(self, task_id: str) -> Task:
        try:
            return self._by_id[task_id]
        except KeyError:
            raise MeridianError(f"suite {self.name!r} has no task {task_id!r}") from None

    def select(
        self,
        *,
        tags: Sequence[str] = (),
        limit: int | None = None,
        offline: bool = False,
    ) -> list[Task]:
        """Tasks carrying any of ``tags`` (all when empty), without network graders
        when ``offline``, the first ``limit`` of them, in suite order."""
        chosen = [
            task for task in self.tasks
            if (not tags or set(tags) & set(task.tags))
            and not (offline and needs_network(task))
        ]
        return chosen if limit is None else chosen[: max(limit, 0)]


def suite_hash(tasks: Sequence[Task]) -> str:
    payload = canonical_json([task.model_dump(mode="json") for task in tasks])
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def needs_network(task: Task) -> bool:
    """Whether any grader of ``task`` calls a model API (``llm_judge``)."""
    return any(
        spec.name in graders.names() and graders.get(spec.name).network for spec in task.graders
    )


def bundled_suites_dir() -> Path:
    """Where the suites shipped with Meridian live: the one place in evals that knows
    (``meridian.resources`` finds the wheel's copy, else the checkout's)."""
    from meridian import resources

    return resources.resource_dir("suites", "reference.yaml")


def bundled_suites() -> dict[str, Path]:
    """name -> path of every bundled suite (``reference`` for suites/reference.yaml)."""
    try:
        folder = bundled_suites_dir()
    except MeridianError:
        return {}
    return {path.stem: path for path in sorted(folder.glob("*.yaml"))}


def is_bare_name(name_or_path: str) -> bool:
    """A suite given by name, not by path: no ``/`` (or ``\\``) and no ``.yaml``/``.yml``
    suffix (``reference``; ``./reference`` and ``suites/x.yaml`` are paths)."""
    return ("/" not in name_or_path and "\\" not in name_or_path
            and not name_or_path.lower().endswith((".yaml", ".yml")))


def resolve_suite_path(name_or_path: str | Path) -> Path:
    """The suite file ``name_or_path`` means.

    The rule (docs/evals.md "Naming a suite"): a bare name that is a bundled suite's
    name always means the bundled suite, whatever the working directory holds, so a
    file a branch commits as ``reference`` cannot stand in for the bundled
    ``reference`` a CI workflow names. A project's suite is named as a path (with a
    ``/`` such as ``./reference``, or ending in ``.yaml``/``.yml``); a bare name that
    is no bundled suite is a file of that name. A ``Path`` object is always a path.
    """
    if isinstance(name_or_path, Path):
        if name_or_path.is_file():
            return name_or_path
        raise ConfigError(f"{name_or_path}: no such suite file")
    bundled = bundled_suites()
    if is_bare_name(name_or_path) and name_or_path in bundled:
        return bundled[name_or_path]
    path = Path(name_or_path)
    if path.is_file():
        return path
    known = ", ".join(bundled) or "none"
    if path.exists():
        raise ConfigError(f"{name_or_path}: not a file (a suite is a YAML file, or a bundled "
                          f"suite's name: {known})")
    raise ConfigError(f"{name_or_path}: no such suite file, and no bundled suite of that name "
                      f"(bundled: {known}; see `meridian eval suites`)")


def shadowed_file(name_or_path: str) -> Path | None:
    """The file or directory in the working directory that a bare bundled name does
    *not* mean (``reference`` when ./reference exists), for a one-line note."""
    if isinstance(name_or_path, str) and is_bare_name(name_or_path) \
            and name_or_path in bundled_suites() and Path(name_or_path).exists():
        return Path(name_or_path)
    return None


def load_suite(path: Path | str) -> Suite:
    """Load and fully check the suite at ``path`` (or a bundled suite's name);
    ConfigError names file, line, task, field. See ``resolve_suite_path`` for how a
    name is told from a path."""
    return _build(yamlio.load(resolve_suite_path(path)))


def parse_suite(text: str, path: Path | str = "<suite>") -> Suite:
    """Like ``load_suite`` for YAML text already in memory."""
    return _build(yamlio.parse(text, path))


def _build(located: yamlio.Located) -> Suite:
    if not isinstance(located.data, dict):
        raise located.error((), "a suite is a mapping with 'suite' and 'tasks'")
    head = yamlio.validate(_SuiteFile, located)
    defaults = _check_defaults(located, head.defaults)
    if head.visible:
        defaults = {**defaults, "visible": [*head.visible, *(defaults.get("visible") or [])]}
    if not head.tasks and head.tasks_from is None:
        raise located.error(("tasks",), "a suite needs 'tasks' (a list) or 'tasks_from' (a file)")
    tasks: list[Task] = []
    first_line: dict[str, str] = {}
    rows: list[tuple[Any, str, int, Any]] = [
        (raw, "", index, None) for index, raw in enumerate(head.tasks)]  # (raw, origin, index, _)
    if head.tasks_from is not None:
        rows += _rows_from_file(located, head.tasks_from)
    for raw, origin, index, row_error in rows:
        # Duplicates first: a copy-pasted task is the likelier mistake than its fields.
        raw_id = raw.get("id") if isinstance(raw, dict) else None
        if isinstance(raw_id, str) and raw_id in first_line:
            message = f"duplicate task id (first defined at {first_line[raw_id]})"
            if origin:
                raise ConfigError(f"{origin}: task {raw_id!r}: {message}")
            raise _yaml_task_error(located, index, raw_id, ("id",), message)
        if origin:
            task = _build_task(located, index, raw, defaults, origin=origin)
            first_line[task.id] = origin
        else:
            task = _build_task(located, index, raw, defaults)
            first_line[task.id] = f"line {located.line(('tasks', index))}"
        tasks.append(task)
    return Suite(name=head.suite, path=located.path, tasks=tasks, description=head.description)


MAX_DATASET_BYTES = 256 * 1024 * 1024


def _read_dataset(path: Path, where: str) -> str:
    """The text of a ``tasks_from`` file: a regular file (a FIFO or a device would
    block or never end), at most MAX_DATASET_BYTES, UTF-8."""
    import stat

    try:
        info = path.stat()
    except OSError as exc:
        raise ConfigError(f"{where}: tasks_from: cannot read {path} ({exc.strerror or exc})") from None
    if not stat.S_ISREG(info.st_mode):
        raise ConfigError(f"{where}: tasks_from: {path} is not a regular file")
    if info.st_size > MAX_DATASET_BYTES:
        raise ConfigError(f"{where}: tasks_from: {path} is {info.st_size} bytes "
                          f"(at most {MAX_DATASET_BYTES} read)")
    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_DATASET_BYTES + 1)
    except OSError as exc:
        raise ConfigError(f"{where}: tasks_from: cannot read {path} ({exc.strerror or exc})") from None
    if len(data) > MAX_DATASET_BYTES:
        raise ConfigError(f"{where}: tasks_from: {path} is over {MAX_DATASET_BYTES} bytes")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{where}: tasks_from: {path}: not UTF-8 (byte {exc.start})") from None


def _rows_from_file(located: yamlio.Located, spec: str | _TasksFrom) -> list[tuple[Any, str, int, Any]]:
    """(raw task, "file:line", index, None) for each row of a ``tasks_from`` file."""
    import csv
    import json

    source = spec if isinstance(spec, _TasksFrom) else _TasksFrom(path=spec)
    base = Path(located.path).parent if located.path != "<suite>" else Path(".")
    path = Path(source.path) if Path(source.path).is_absolute() else base / source.path
    where = located.where(("tasks_from",))
    mappable = set(Task.model_fields) - {"graders", "visible", "metadata"}
    unknown = sorted(set(source.fields) - mappable)
    if unknown:
        raise ConfigError(f"{where}: tasks_from.fields: {unknown[0]!r} is not a task field a "
                          f"column can set (one of: {', '.join(sorted(mappable))}); graders "
                          "come from defaults")
    suffix = path.suffix.lower()
    if suffix not in (".csv", ".jsonl", ".ndjson"):
        raise ConfigError(f"{where}: tasks_from: {path.name}: expected a .jsonl or .csv file")
    text = _read_dataset(path, where)
    records: list[tuple[int, dict[str, Any]]] = []
    if suffix == ".csv":
        reader = csv.DictReader(text.splitlines())
        try:
            records = [(reader.line_num, dict(row)) for row in reader]
        except csv.Error as exc:
            raise ConfigError(f"{path}:{reader.line_num}: not valid CSV ({exc})") from None
    else:
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                value = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ConfigError(f"{path}:{number}: not valid JSON ({exc.msg})") from None
            except RecursionError:
                raise ConfigError(f"{path}:{number}: JSON nested too deeply") from None
            if not isinstance(value, dict):
                raise ConfigError(f"{path}:{number}: expected a JSON object per line")
            records.append((number, value))
    if not records:
        raise ConfigError(f"{path}: no rows (tasks_from needs at least one)")
    mapping = {"id": "id", "input": "input", "expected": "expected", **source.fields}
    rows: list[tuple[Any, str, int, Any]] = []
    for index, (number, record) in enumerate(records):
        origin = f"{path}:{number}"
        raw: dict[str, Any] = {}
        for field_name, column in mapping.items():
            if column in record and record[column] not in (None, ""):
                raw[field_name] = record[column]
        for required in ("id", "input"):
            if required not in raw:
                raise ConfigError(f"{origin}: no {mapping[required]!r} column "
                                  f"(map the task's {required} with tasks_from.fields)")
        raw["id"] = str(raw["id"])
        if source.metadata:
            raw["metadata"] = {c: record[c] for c in source.metadata if c in record}
        rows.append((raw, origin, index, None))
    return rows


def _check_defaults(located: yamlio.Located, defaults: dict[str, Any]) -> dict[str, Any]:
    yamlio.validate(_Defaults, located, data=defaults, base=("defaults",))
    if all(key in defaults for key in GRADER_KEYS):
        raise located.error(("defaults", "graders"), "give 'grader' or 'graders', not both")
    return defaults


def _yaml_task_error(
    located: yamlio.Located, index: int, task_id: str | None, loc: tuple[str | int, ...], message: str
) -> ConfigError:
    where = located.where(("tasks", index) + loc)
    who = f"task {task_id!r}" if task_id else f"tasks[{index}]"
    field_name = yamlio.dotted(loc)
    return ConfigError(f"{where}: {who}: {field_name + ': ' if field_name else ''}{message}")


def _build_task(
    located: yamlio.Located, index: int, raw: Any, defaults: dict[str, Any],
    *, origin: str | None = None,
) -> Task:
    def _task_error(located: yamlio.Located, index: int, task_id: str | None,
                    loc: tuple[str | int, ...], message: str) -> ConfigError:
        if origin is None:
            return _yaml_task_error(located, index, task_id, loc, message)
        field_name = yamlio.dotted(loc)
        return ConfigError(f"{origin}: task {task_id!r}: "
                           f"{field_name + ': ' if field_name else ''}{message}")

    if not isinstance(raw, dict):
        raise _task_error(located, index, None, (), "a task is a mapping with at least 'id' and 'input'")
    task_id = raw.get("id") if isinstance(raw.get("id"), str) else None
    if all(key in raw for key in GRADER_KEYS):
        raise _task_error(located, index, task_id, ("graders",), "give 'grader' or 'graders', not both")
    own_grader_key = next((key for key in GRADER_KEYS if key in raw), None)
    default_grader_key = next((key for key in GRADER_KEYS if key in defaults), None)

    merged: dict[str, Any] = {k: v for k, v in defaults.items() if k not in GRADER_KEYS}
    for key, value in raw.items():
        if key in GRADER_KEYS:
            continue
        if key == "metadata" and isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = {**merged[key], **value}  # metadata merges; other fields replace
        elif key == "visible" and isinstance(value, list) and isinstance(merged.get(key), list):
            merged[key] = [*merged[key], *value]  # so does visible
        else:
            merged[key] = value

    grader_loc: tuple[str | int, ...]
    if own_grader_key:
        grader_value, grader_loc = raw[own_grader_key], ("tasks", index, own_grader_key)
    elif default_grader_key:
        grader_value, grader_loc = defaults[default_grader_key], ("defaults", default_grader_key)
    else:
        raise _task_error(located, index, task_id, ("grader",), "at least one grader is required")
    specs = _grader_specs(located, index, task_id, grader_value, grader_loc)
    merged["graders"] = [spec.model_dump() for spec in specs]

    try:
        task = Task.model_validate(merged)
    except ValidationError as exc:
        first = exc.errors()[0]
        # Drop pydantic's union tags (``input.list[1].dict.b.float``) so the path is the
        # YAML's own (``input[1].b``) and locates the line.
        loc = tuple(part for part in first["loc"]
                    if not str(part).startswith("function-") and part not in _JSON_VALUE_TAGS)
        # A bad value inherited from defaults is reported where the defaults say it.
        if loc and loc[0] not in raw and loc[0] in defaults:
            raise located.error(("defaults",) + loc,
                                f"{yamlio.pydantic_message(dict(first))} (in task {task_id!r})") from None
        raise _task_error(located, index, task_id, loc, yamlio.pydantic_message(dict(first))) from None

    for position, spec in enumerate(task.graders):
        missing = graders.missing_requirement(spec.name, task, spec.args)
        if missing:
            raise _located_grader_error(
                located, index, task_id, grader_loc, position,
                f"{spec.name} needs {missing}, which the task does not set",
            )
    return task


def _grader_entries(value: Any) -> list[tuple[Any, Any]] | None:
    """``[(name, args), ...]`` from any accepted spelling, or None when malformed."""
    if isinstance(value, str):
        return [(value, None)]
    if isinstance(value, dict):
        return list(value.items())
    if isinstance(value, list):
        entries: list[tuple[Any, Any]] = []
        for item in value:
            if isinstance(item, str):
                entries.append((item, None))
            elif isinstance(item, dict) and len(item) == 1:
                entries.append(next(iter(item.items())))
            else:
                return None
        return entries
    return None


def _located_grader_error(
    located: yamlio.Located,
    index: int,
    task_id: str | None,
    grader_loc: tuple[str | int, ...],
    position: int,
    message: str,
) -> ConfigError:
    key = grader_loc[-1]
    value = located.data
    for part in grader_loc:
        value = value[part]
    if isinstance(value, list):
        item_loc: tuple[str | int, ...] = grader_loc + (position,)
        label = f"{key}[{position}]"
    elif isinstance(value, dict):
        item_loc = grader_loc + (list(value)[position],)
        label = f"{key}.{list(value)[position]}"
    else:
        item_loc, label = grader_loc, str(key)
    where = located.where(item_loc)
    who = f"task {task_id!r}" if task_id else f"tasks[{index}]"
    origin = "defaults." if grader_loc[0] == "defaults" else ""
    return ConfigError(f"{where}: {who}: {origin}{label}: {message}")


def _grader_specs(
    located: yamlio.Located,
    index: int,
    task_id: str | None,
    value: Any,
    grader_loc: tuple[str | int, ...],
) -> list[GraderSpec]:
    entries = _grader_entries(value)
    if not entries:
        raise _located_grader_error(
            located, index, task_id, grader_loc, 0,
            "expected a grader name, a list of names and {name: {arguments}}, or a mapping",
        )
    specs: list[GraderSpec] = []
    for position, (name, args) in enumerate(entries):
        def fail(message: str, position: int = position) -> ConfigError:
            return _located_grader_error(located, index, task_id, grader_loc, position, message)

        if not isinstance(name, str):
            raise fail(f"grader name must be a string, got {name!r}")
        if name not in graders.names():
            raise fail(f"unknown grader {name!r} (known: {', '.join(graders.names())})")
        if args is None:
            args = {}
        if not isinstance(args, dict):
            raise fail(f"arguments of {name} must be a mapping, got {args!r}")
        try:
            checked = graders.check_arguments(name, args)
        except graders.GraderArgumentError as exc:
            raise fail(str(exc)) from None
        # Stored as written (JSON values), so the run file can re-grade it later.
        try:
            specs.append(GraderSpec(name=name, args={k: args[k] for k in checked}))
        except ValidationError as exc:  # a value no run file can hold (NaN, a date)
            first = exc.errors()[0]
            where = yamlio.dotted(tuple(p for p in first["loc"] if p != "args")[:1])
            raise fail(f"argument {where!r}: {yamlio.pydantic_message(dict(first))}") from None
    return specs
