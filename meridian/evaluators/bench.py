"""``meridian evaluator bench``: an evaluator against a corpus of small known cases.

Each case runs through the real gate path in a throwaway repository: ``git init``,
``meridian init`` (no hooks), the case's ``base`` files committed, a one-gate graph
whose artifacts are the case's files, ``gate start``, the case's ``files`` written,
``gate submit``. The verdict is then held against what the case expects:

    expect: block    a planted defect: the verdict must fail with a blocking (high, in
                     the change) issue of the case's ``check``
    expect: report   a defect reported without blocking (e.g. ``except Exception:
                     pass``): an issue of the case's ``check`` must be listed
    expect: pass     a clean idiom: the verdict must not be blocked by any issue

Recall per class is the share of defect cases caught; the false-block rate per class
is the share of clean cases whose verdict failed.

Corpus format (``--corpus DIR``): every ``*.yaml`` file below DIR holds one case, or
``cases:`` with a list of them. A case is a mapping:

    id: py-stub-pass            unique name (default: the file name and index)
    class: stub_code            the class it belongs to (rows of the report)
    check: stub_code            the check id expected to fire (default: the class)
    lang: python                shown in the report
    expect: block               block | report | pass
    description: ...            optional, one line
    base: {path: text}          optional: committed before the gate starts
    files: {path: text}         written during the gate (the change)

The corpus shipped with Meridian is ``meridian/evaluators/corpus/``.

A model evaluator (``--evaluator anthropic|claude-code|command``) runs through the same
path: each throwaway repository's ``.meridian/config.yaml`` holds the evaluator settings
the bench was given (the endpoint, model, timeouts), with the kind overridden. The
offline scan still runs and its findings still reach the verdict, but a defect counts
as caught only by the evaluator's own issues (those without a check id): the bench
measures the model, not the scanner. A case whose evaluator was unavailable is neither
caught nor passed: it is reported apart. Each case's cost is the verdict's usage
(``None``: unknown, never 0).
"""

from __future__ import annotations

import os
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from meridian import yamlio
from meridian.errors import ConfigError

CORPUS_DIR = Path(__file__).with_name("corpus")
EXPECTATIONS = ("block", "report", "pass")
CASE_KEYS = {"id", "class", "check", "lang", "expect", "description", "base", "files"}


@dataclass(frozen=True)
class Case:
    id: str
    cls: str
    check: str
    lang: str
    expect: str
    description: str
    base: dict[str, str]
    files: dict[str, str]
    source: str  # file:index it was read from


@dataclass
class CaseResult:
    id: str
    cls: str
    lang: str
    expect: str
    ok: bool
    passed: bool  # the verdict passed
    found: list[str] = field(default_factory=list)  # "severity check file:line" of issues
    error: str | None = None
    unavailable: str | None = None  # the evaluator gave no verdict (the reason)
    cost_usd: float | None = 0.0  # None: unknown (a model without a price entry)
    input_tokens: int = 0
    output_tokens: int = 0
    attempts: int = 0


def _text_map(value: Any, where: str, key: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(isinstance(k, str) and isinstance(v, str)
                                              for k, v in value.items()):
        raise ConfigError(f"{where}: {key}: expected a mapping of relative path to file text")
    for path in value:
        pure = PurePosixPath(path)
        if pure.is_absolute() or ".." in pure.parts or path.startswith((".meridian", ".git")):
            raise ConfigError(f"{where}: {key}: '{path}': expected a relative path inside the "
                              "repository (not under .git or .meridian)")
    return dict(value)


def _case(data: Any, where: str, default_id: str) -> Case:
    if not isinstance(data, dict):
        raise ConfigError(f"{where}: expected a mapping with class, expect and files")
    unknown = sorted(set(data) - CASE_KEYS)
    if unknown:
        raise ConfigError(f"{where}: unknown key(s) {', '.join(unknown)} "
                          f"(known: {', '.join(sorted(CASE_KEYS))})")
    cls = data.get("class")
    if not isinstance(cls, str) or not cls:
        raise ConfigError(f"{where}: class: required (the defect class, e.g. stub_code)")
    expect = data.get("expect")
    if expect not in EXPECTATIONS:
        raise ConfigError(f"{where}: expect: expected one of {', '.join(EXPECTATIONS)}, "
                          f"got {expect!r}")
    files = _text_map(data.get("files"), where, "files")
    if not files:
        raise ConfigError(f"{where}: files: required (the files the gate's change writes)")
    return Case(id=str(data.get("id") or default_id), cls=cls, check=str(data.get("check") or cls),
                lang=str(data.get("lang") or "?"), expect=str(expect),
                description=str(data.get("description") or ""),
                base=_text_map(data.get("base"), where, "base"), files=files, source=where)


def load_corpus(directory: Path) -> list[Case]:
    """Every case under ``directory``; a malformed one is a ConfigError naming it."""
    if not directory.is_dir():
        raise ConfigError(f"--corpus {directory}: not a directory")
    cases: list[Case] = []
    for path in sorted(directory.rglob("*.yaml")):
        shown = yamlio.display_path(path)
        data = yamlio.load(path).data
        items = data.get("cases") if isinstance(data, dict) and "cases" in data else [data]
        if not isinstance(items, list):
            raise ConfigError(f"{shown}: cases: expected a list of cases")
        for index, item in enumerate(items):
            cases.append(_case(item, f"{shown}: case {index + 1}",
                               f"{path.stem}-{index + 1}" if len(items) > 1 else path.stem))
    seen: dict[str, str] = {}
    for case in cases:
        if case.id in seen:
            raise ConfigError(f"{case.source}: duplicate case id '{case.id}' "
                              f"(first in {seen[case.id]})")
        seen[case.id] = case.source
    if not cases:
        raise ConfigError(f"--corpus {directory}: no *.yaml case files")
    return cases


def _git(root: Path, *args: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_AUTHOR_NAME="bench", GIT_AUTHOR_EMAIL="bench@meridian.invalid",
               GIT_COMMITTER_NAME="bench", GIT_COMMITTER_EMAIL="bench@meridian.invalid")
    subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True,
                   timeout=60)


def _write(root: Path, files: dict[str, str]) -> None:
    for relative, text in files.items():
        target = root / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")


def _gates_yaml(paths: list[str], evaluator: str | None) -> str:
    import json

    lines = ["version: 1", "gates:", "  - id: bench",
             "    description: a corpus case", f"    artifacts: {json.dumps(paths)}"]
    if evaluator:
        lines.append(f"    evaluate: {{evaluator: {evaluator}}}")
    return "\n".join(lines) + "\n"


def _config_yaml(evaluator: str, settings: Any) -> str:
    import json

    data = settings.model_dump(mode="json", exclude_none=True)
    data["kind"] = evaluator
    return f"version: 1\nevaluator: {json.dumps(data)}\n"


def _unavailable_event(root: Path) -> dict[str, Any] | None:
    """The data of the last ``gate.evaluator_unavailable`` event, if the gate's last
    event is one."""
    from meridian.gates import events as ev
    from meridian.ledger import Ledger

    try:
        last = next(Ledger.open(root).records("events", newest_first=True), None)
    except Exception:  # noqa: BLE001 - no readable ledger: not an unavailable evaluator
        return None
    return last.data if last is not None and last.kind == ev.EVALUATOR_UNAVAILABLE else None


def run_case(case: Case, workdir: Path, evaluator: str | None,
             settings: Any | None = None) -> CaseResult:
    """One case through init, start, submit in a fresh repository under ``workdir``.

    ``settings`` (EvaluatorSettings) go into the repository's config with the kind set to
    ``evaluator``: how a model evaluator is given its endpoint, model and timeouts."""
    from meridian.errors import MeridianError
    from meridian.evaluators.models import blocks
    from meridian.gates.lifecycle import open_project, start_gate, submit_gate
    from meridian.init import initialise

    root = workdir / case.id.replace("/", "_")
    root.mkdir(parents=True)
    result = CaseResult(id=case.id, cls=case.cls, lang=case.lang, expect=case.expect, ok=False,
                        passed=False)
    previous = Path.cwd()
    try:
        _git(root, "init", "-q", "-b", "main")
        _write(root, {"README.md": f"# {case.id}\n\n{case.description}\n", **case.base})
        initialise(str(root), hooks=False)
        paths = sorted({*case.base, *case.files})
        (root / ".meridian" / "gates.yaml").write_text(_gates_yaml(paths, evaluator))
        if evaluator and settings is not None:
            (root / ".meridian" / "config.yaml").write_text(_config_yaml(evaluator, settings))
        _git(root, "add", "-A")
        _git(root, "commit", "-q", "--no-verify", "-m", "base")
        os.chdir(root)
        project = open_project(root)
        start_gate(project, "bench")
        _write(root, case.files)
        submission = submit_gate(open_project(root), "bench")
    except (MeridianError, OSError, subprocess.SubprocessError) as exc:
        event = _unavailable_event(root) if isinstance(exc, MeridianError) else None
        if event is not None:
            result.unavailable = " ".join(str(event.get("reason", "")).split())[:300]
            _take_usage(result, event.get("usage") or {})
        else:
            result.error = " ".join(str(exc).split())[:300]
        return result
    finally:
        os.chdir(previous)
    verdict = submission.verdict
    result.passed = verdict.passed
    _take_usage(result, verdict.usage.model_dump(mode="json"))
    result.found = [f"{i.severity} {i.check or '-'} {i.where()}"
                    + (" pre-existing" if i.pre_existing else "") for i in verdict.issues]
    # A model evaluator is measured by its own issues (the offline scan's carry a check id).
    of_check = [i for i in verdict.issues
                if (i.check is None if evaluator else i.check == case.check)]
    if case.expect == "block":
        result.ok = not verdict.passed and any(
            blocks(i, block_pre_existing=verdict.block_pre_existing) for i in of_check)
    elif case.expect == "report":
        result.ok = bool(of_check)
    else:
        result.ok = verdict.passed
    return result


def _take_usage(result: CaseResult, usage: dict[str, Any]) -> None:
    result.cost_usd = None if usage.get("cost_unknown") else usage.get("cost_usd", 0.0)
    result.input_tokens = int(usage.get("input_tokens") or 0)
    result.output_tokens = int(usage.get("output_tokens") or 0)
    result.attempts = int(usage.get("attempts") or 0)


@dataclass
class ClassRow:
    cls: str
    defects: int = 0
    caught: int = 0
    clean: int = 0
    false_blocks: int = 0
    unavailable: int = 0

    @property
    def recall(self) -> float | None:
        return round(self.caught / self.defects, 4) if self.defects else None

    @property
    def false_block_rate(self) -> float | None:
        return round(self.false_blocks / self.clean, 4) if self.clean else None


@dataclass
class BenchReport:
    evaluator: str
    corpus: str
    results: list[CaseResult]
    seconds: float

    def rows(self) -> list[ClassRow]:
        rows: dict[str, ClassRow] = {}
        for r in self.results:
            row = rows.setdefault(r.cls, ClassRow(r.cls))
            if r.unavailable is not None:
                row.unavailable += 1
            elif r.expect == "pass":
                row.clean += 1
                row.false_blocks += not r.ok
            else:
                row.defects += 1
                row.caught += r.ok
        return [rows[k] for k in sorted(rows)]

    def total(self) -> ClassRow:
        total = ClassRow("all")
        for row in self.rows():
            total.defects += row.defects
            total.caught += row.caught
            total.clean += row.clean
            total.false_blocks += row.false_blocks
            total.unavailable += row.unavailable
        return total

    def cost(self) -> tuple[float, int]:
        """The known cost in USD of every case, and how many cases' cost is unknown."""
        known = [r.cost_usd for r in self.results if r.cost_usd is not None]
        return round(sum(known), 6), len(self.results) - len(known)

    def outcome(self, r: CaseResult) -> str:
        if r.unavailable is not None:
            return "unavailable"
        if r.expect == "pass":
            return "pass" if r.ok else "false-block"
        return "caught" if r.ok else "missed"

    def to_json(self) -> dict[str, Any]:
        def row_json(row: ClassRow) -> dict[str, Any]:
            return {"class": row.cls, "defects": row.defects, "caught": row.caught,
                    "recall": row.recall, "clean": row.clean, "false_blocks": row.false_blocks,
                    "false_block_rate": row.false_block_rate}

        cost, unknown = self.cost()

        return {"evaluator": self.evaluator, "corpus": self.corpus, "seconds": self.seconds,
                "cases": len(self.results), "classes": [row_json(r) for r in self.rows()],
                "total": row_json(self.total()),
                "misses": [asdict(r) for r in self.results
                           if not r.ok and r.unavailable is None],
                "unavailable": [asdict(r) for r in self.results if r.unavailable is not None],
                "cost_usd": cost, "cost_unknown_cases": unknown,
                "per_case": [{"id": r.id, "class": r.cls, "expect": r.expect,
                              "outcome": self.outcome(r), "cost_usd": r.cost_usd,
                              "cost_known": r.cost_usd is not None,
                              "input_tokens": r.input_tokens, "output_tokens": r.output_tokens,
                              "attempts": r.attempts} for r in self.results]}


def run_bench(cases: list[Case], evaluator: str | None = None,
              progress: Callable[[int, int, CaseResult], None] | None = None,
              settings: Any | None = None) -> BenchReport:
    started = time.perf_counter()
    results: list[CaseResult] = []
    with _isolated_env(), tempfile.TemporaryDirectory(prefix="meridian-bench-") as tmp:
        for number, case in enumerate(cases, 1):
            result = run_case(case, Path(tmp), evaluator, settings)
            results.append(result)
            if progress is not None:
                progress(number, len(cases), result)
    return BenchReport(evaluator=evaluator or "heuristic", corpus="", results=results,
                       seconds=round(time.perf_counter() - started, 2))


class _isolated_env:
    """No user git config or hooks path leaks into the throwaway repositories."""

    KEYS = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_CONFIG_GLOBAL")

    def __enter__(self) -> None:
        self.saved = {k: os.environ.get(k) for k in self.KEYS}
        for key in self.KEYS[:3]:
            os.environ.pop(key, None)

    def __exit__(self, *exc: object) -> None:
        for key, value in self.saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def iter_lines(report: BenchReport) -> Iterator[str]:
    def percent(value: float | None) -> str:
        return "-" if value is None else f"{value * 100:.1f}%"

    yield (f"evaluator bench: {len(report.results)} cases, evaluator {report.evaluator}, "
           f"{report.seconds:g}s")
    header = f"  {'class':<18} {'defects':>7} {'caught':>6} {'recall':>7}   {'clean':>5} " \
             f"{'blocked':>7} {'false-block':>11}"
    yield header
    for row in [*report.rows(), report.total()]:
        yield (f"  {row.cls:<18} {row.defects:>7} {row.caught:>6} {percent(row.recall):>7}   "
               f"{row.clean:>5} {row.false_blocks:>7} {percent(row.false_block_rate):>11}")
    def dollars(value: float | None) -> str:
        return "unknown" if value is None else f"${value:.4f}"

    if report.evaluator != "heuristic":
        yield "per case:"
        for r in report.results:
            yield (f"  {r.id[:40]:<40} {r.expect:<6} {report.outcome(r):<11} "
                   f"{dollars(r.cost_usd):>9}  {r.input_tokens} in / {r.output_tokens} out")
        cost, unknown = report.cost()
        yield (f"cost: {dollars(cost)}" + (f" plus {unknown} case(s) of unknown cost"
                                           if unknown else ""))
    misses = [r for r in report.results if not r.ok and r.unavailable is None]
    if misses:
        yield "misses:"
        for r in misses:
            what = ("missed" if r.expect != "pass" else "falsely blocked")
            detail = r.error or "; ".join(r.found[:4]) or "no findings"
            yield f"  {r.id} ({r.lang}, {r.cls}, expect {r.expect}): {what}: {detail}"
    unavailable = [r for r in report.results if r.unavailable is not None]
    if unavailable:
        yield f"unavailable ({len(unavailable)}: not counted as caught, passed or blocked):"
        for r in unavailable:
            yield f"  {r.id}: {r.unavailable}"
