"""The mutation smoke check: would the gate's checks fail if the work were not there?

Static rules cannot see every hollow test (an assertion on the wrong value, the subject
mocked through a fixture, a suite that never imports the changed module). At
``gate submit``, once the gate's checks passed, every Python function or method the
gate changed (``meridian.evaluators.mutants``: the changed lines since the base
commit, mapped to functions through the AST) gets a mutant: its body replaced by one
that raises. The gate's checks run against each mutant in a temporary copy of the
tree; a mutant under which every check still passes is a high issue at the function's
``def`` line: the checks do not exercise it.

How it runs:

- Each worker has its own copy of the work tree (the files git does not ignore, the
  artifacts exactly as the verdict's subject holds them; a virtualenv or
  ``node_modules`` directory at the top is linked, not copied). The user's work tree
  is never written; the copies are removed when the check ends, whatever happens.
- A baseline run of the checks in a copy, without any mutant, comes first: when the
  checks fail there (they depend on ignored files, on ``.git``, or notice the copy on
  purpose), no mutant can say anything: the verdict says the check could not run, a
  high issue (the checks passed on the work tree), never a pass by default.
- With it runs the control (``mutants.neutral``): a changed file rewritten with the
  mutant's raise under a condition that never holds. Checks that fail under it notice
  the rewrite, not the missing work, and their kills count for nothing (a high issue).
- ``PYTHONPATH`` puts the copy's package roots first, so an editable install of the
  project does not import the unmutated files of the real tree; bytecode is not
  written (a restored file must never run from a stale ``.pyc``).
- Up to ``os.cpu_count()`` mutants run at once. Each check runs in its own process
  group, killed whole on timeout; a check's limit under a mutant is the smallest of its
  own timeout, what is left of the budget, and four times what it took on the real
  tree (at least 30 s), so a mutant that makes a check hang costs a bounded time.
- The budget (``mutation: {max_functions, timeout_s}``): functions beyond
  ``max_functions`` and mutants not started before ``timeout_s`` ran out are reported
  as not tried, never as passed.

A mutant that makes the checks fail before any test runs (an import or collection
error) counts as killed: the function ran while the checks loaded the code (at import
time: a decorator, a module-level call), so the checks do depend on it; they do not
necessarily assert on what it returns, which the static rules judge.
"""

from __future__ import annotations

import hashlib
import os
import queue
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Literal

from meridian import gitio
from meridian.evaluators.models import CheckResult, Issue, MutantResult, MutationReport
from meridian.evaluators.mutants import Target, changed_functions, mutant, neutral
from meridian.gates import globs
from meridian.gates.checks import run_check
from meridian.gates.graph import CheckSpec, GateSpec, MutationSpec

CHECK_ID = "mutation"
MIN_CHECK_LIMIT_S = 30.0
SLOWDOWN_FACTOR = 4.0
LINKED_DIRS = frozenset({"node_modules"})  # and any directory holding a pyvenv.cfg

COPY_PREFIX = "meridian-mutation-"  # + the pid of the run that owns the copies

ProgressCallback = Callable[[int, int, MutantResult], None]


def applies(spec: GateSpec, files: Mapping[str, bytes]) -> bool:
    """On by default for a gate with checks whose artifacts include Python code."""
    return bool(spec.checks) and spec.mutation.enabled and any(
        p.endswith(".py") for p in files)


@dataclass(frozen=True)
class Plan:
    targets: list[Target]  # to try, in order
    beyond: list[Target]  # over max_functions: not tried
    allowed: list[tuple[Target, str, int]]  # (target, reason, marker line) of inline exceptions


def plan(files: Mapping[str, bytes], changed: Mapping[str, Sequence[tuple[int, int]]] | None,
         exclude: Sequence[str], settings: MutationSpec) -> Plan:
    """The changed functions of the gate's Python artifacts (test files and files under
    ``exclude:`` left out), split at ``max_functions`` (which ones: drawn by a hash of
    the change, never by their place in it)."""
    from meridian.evaluators.changes import allow_markers, substantive
    from meridian.evaluators.scan import is_python_test_file

    found: list[Target] = []
    allowed: list[tuple[Target, str, int]] = []
    for path in sorted(files):
        if not path.endswith(".py") or is_python_test_file(path) or \
                globs.matches_any(exclude, path):
            continue
        ranges = None if changed is None else changed.get(path)
        if changed is not None and not ranges:
            continue
        text = gitio.decode_text(files[path])
        if text is None:
            continue
        markers = [m for m in allow_markers(text) if CHECK_ID in m.kinds
                   and substantive(m.reason)] if "meridian:" in text else []
        lines = text.splitlines()
        for target in changed_functions(path, text, ranges):
            marker = next((m for m in markers if _marks(m.line, target, lines)), None)
            if marker is not None:
                allowed.append((target, marker.reason, marker.line))
            else:
                found.append(target)
    if len(found) <= settings.max_functions:
        return Plan(targets=found, beyond=[], allowed=allowed)
    # Over the budget, which functions are tried is not their place in the change (the
    # last file, the last lines: where an agent would put what its tests do not reach)
    # but a hash of the change's content and the function's name: stable for one
    # change, different for any edit of it.
    digest = hashlib.sha256()
    for path in sorted({t.file for t in found}):
        digest.update(path.encode() + b"\0" + files[path] + b"\0")
    seed = digest.digest()

    def draw(target: Target) -> bytes:
        return hashlib.sha256(seed + f"{target.file}:{target.qualname}".encode()).digest()

    drawn = sorted(found, key=draw)
    order = {id(t): i for i, t in enumerate(found)}
    chosen = sorted(drawn[:settings.max_functions], key=lambda t: order[id(t)])
    rest = sorted(drawn[settings.max_functions:], key=lambda t: order[id(t)])
    return Plan(targets=chosen, beyond=rest, allowed=allowed)


def _marks(line: int, target: Target, lines: list[str]) -> bool:
    """A ``meridian: allow mutation`` marker on the function's first lines (decorators to
    ``def``) or in the comment block right above it."""
    if target.first <= line <= target.line:
        return True
    above = target.first - 1
    while above >= 1 and lines[above - 1].lstrip().startswith("#"):
        if above == line:
            return True
        above -= 1
    return False


# --- the copies ----------------------------------------------------------------------


def _copy_tree(repo: gitio.Repository, root: Path, listing: Sequence[str],
               artifacts: Mapping[str, bytes], into: Path) -> None:
    for rel in listing:
        if rel.endswith((".pyc", ".pyo")) or "__pycache__" in rel.split("/"):
            continue  # bytecode of the real tree: it could run in place of a mutant
        source, target = root / rel, into / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if rel in artifacts:
            if source.is_symlink():
                os.symlink(os.readlink(source), target)
            else:
                target.write_bytes(artifacts[rel])
            continue
        try:
            if source.is_symlink():
                os.symlink(os.readlink(source), target)
            else:
                shutil.copy2(source, target)
        except OSError:
            continue  # gone since it was listed: the baseline says whether it mattered
    for rel, data in artifacts.items():
        if rel not in listing:  # bound in the subject, no longer on disk
            (into / rel).parent.mkdir(parents=True, exist_ok=True)
            (into / rel).write_bytes(data)
    for entry in sorted(os.listdir(root)):
        path = root / entry
        if entry == ".git" or not path.is_dir() or path.is_symlink():
            continue
        if (entry in LINKED_DIRS or (path / "pyvenv.cfg").is_file()) and \
                gitio.is_ignored(repo, entry + "/"):
            os.symlink(path, into / entry, target_is_directory=True)


def _sweep_stale_copies() -> None:
    """Remove the copies of runs that died without cleaning up (``kill -9``, a lost
    machine): ``meridian-mutation-PID-*`` directories of ours whose process is gone."""
    base = Path(tempfile.gettempdir())
    try:
        entries = list(base.glob(f"{COPY_PREFIX}*-*"))
    except OSError:
        return
    for entry in entries:
        pid = entry.name[len(COPY_PREFIX):].split("-", 1)[0]
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            if entry.is_symlink() or not entry.is_dir() or entry.stat().st_uid != os.getuid():
                continue
            os.kill(int(pid), 0)
        except ProcessLookupError:
            shutil.rmtree(entry, ignore_errors=True)
        except OSError:
            continue  # alive under another user, or not ours to judge


def _package_roots(paths: Sequence[str], listing: set[str]) -> list[str]:
    """The directory each file is imported from: above its outermost package."""
    roots: list[str] = []
    for path in paths:
        directory = PurePosixPath(path).parent
        while str(directory) != "." and f"{directory}/__init__.py" in listing:
            directory = directory.parent
        rel = "" if str(directory) == "." else str(directory)
        if rel not in roots:
            roots.append(rel)
    return roots


def _environment(copy: Path, roots: Sequence[str]) -> dict[str, str]:
    entries = [str(copy / r) if r else str(copy) for r in roots]
    inherited = os.environ.get("PYTHONPATH")
    if inherited:
        entries.append(inherited)
    return {"PYTHONPATH": os.pathsep.join(entries), "PYTHONDONTWRITEBYTECODE": "1"}


# --- running -------------------------------------------------------------------------


class _Budget:
    def __init__(self, seconds: float) -> None:
        self.deadline = time.monotonic() + seconds
        self.cancelled = threading.Event()

    def left(self) -> float:
        return self.deadline - time.monotonic()


def _limit(check: CheckSpec, real: CheckResult | None, budget: _Budget) -> float:
    usual = max(MIN_CHECK_LIMIT_S, SLOWDOWN_FACTOR * (real.duration_s if real else 0.0))
    return max(0.0, min(check.timeout, budget.left(), usual))


def _last_line(output: str) -> str:
    lines = [ln.strip() for ln in output.splitlines() if ln.strip()]
    return lines[-1][:160] if lines else ""


def _run_checks(checks: Sequence[CheckSpec], real: Sequence[CheckResult], copy: Path, gate: str,
                env: Mapping[str, str], budget: _Budget) -> tuple[str, str]:
    """(outcome, detail) of the gate's checks in ``copy``: the first failing check kills."""
    for index, check in enumerate(checks):
        limit = _limit(check, real[index] if index < len(real) else None, budget)
        if limit <= 0:
            return "timeout", "the mutation budget ran out"
        result = run_check(check.model_copy(update={"timeout": limit}), copy, gate,
                           extra_env=env)
        if result.timed_out:
            by_budget = budget.left() <= 0.5
            return "timeout", (f"`{check.run}` outlived {limit:g}s" +
                               (" (the mutation budget ran out)" if by_budget else ""))
        if not result.passed:
            how = "could not start" if result.exit_code is None else f"exit {result.exit_code}"
            tail = _last_line(result.output)
            return "killed", f"`{check.run}` failed ({how})" + (f": {tail}" if tail else "")
    return "survived", "every check passed"


def run(repo: gitio.Repository, root: Path, spec: GateSpec, snap_files: Mapping[str, bytes],
        changed: Mapping[str, Sequence[tuple[int, int]]] | None,
        real_results: Sequence[CheckResult], *, exclude: Sequence[str] | None = None,
        on_start: Callable[[int, int, float], None] | None = None,
        on_result: ProgressCallback | None = None,
        workers: int | None = None) -> tuple[MutationReport, list[tuple[Target, str, int]]]:
    """Run the mutants of ``spec``'s changed functions; the report and the functions an
    inline ``meridian: allow mutation -- reason`` exempted. ``exclude``: the globs whose
    files are not mutated (default: the gate's ``exclude:``)."""
    settings = spec.mutation
    report = MutationReport(max_functions=settings.max_functions, timeout_s=settings.timeout_s,
                            scoped=changed is not None)
    chosen = plan(snap_files, changed, spec.exclude if exclude is None else exclude, settings)
    beyond = [_not_tried(t, f"beyond max_functions {settings.max_functions}")
              for t in chosen.beyond]
    if not all(r.passed for r in real_results):
        report.note = "not run: a check failed on the work tree, so no mutant could tell anything"
        report.mutants = [_not_tried(t, "a check failed") for t in chosen.targets] + beyond
        return report, chosen.allowed
    if not chosen.targets:
        report.note = "no changed Python function to mutate" + (
            f" ({len(chosen.allowed)} exempted inline)" if chosen.allowed else "")
        return report, chosen.allowed
    started = time.monotonic()
    count = min(len(chosen.targets), max(1, workers or os.cpu_count() or 1))
    report.workers = count
    if on_start is not None:
        on_start(len(chosen.targets), count, settings.timeout_s)
    budget = _Budget(settings.timeout_s)
    listing = globs.worktree_files(repo, root)
    listed = set(listing) | set(snap_files)
    env_roots = _package_roots(sorted({t.file for t in chosen.targets}), listed)
    sources = {t.file: snap_files[t.file] for t in chosen.targets}
    control = _control(chosen.targets, sources)
    control_result: list[MutantResult] = []
    copies: queue.Queue[Path] = queue.Queue()
    _sweep_stale_copies()
    parent = Path(tempfile.mkdtemp(prefix=f"{COPY_PREFIX}{os.getpid()}-"))
    baseline: list[str] = []
    results: list[MutantResult | None] = [None] * len(chosen.targets)
    done = [0]
    lock = threading.Lock()

    def mutate(index: int) -> None:
        target = chosen.targets[index]
        if budget.cancelled.is_set():
            result = _not_tried(target, "the baseline run failed")
        elif budget.left() <= 0:
            result = _not_tried(target, f"the {settings.timeout_s:g}s budget ran out")
        else:
            result = _try(target)
        results[index] = result
        with lock:
            done[0] += 1
            position = done[0]
        if on_result is not None:
            on_result(position, len(chosen.targets), result)

    def _try(target: Target, text: str | None = None) -> MutantResult:
        began = time.monotonic()
        try:
            text = text or mutant(sources[target.file].decode("utf-8"), target)
        except (ValueError, UnicodeDecodeError) as exc:
            return _result(target, "error", began, str(exc))
        copy = copies.get()
        path = copy / target.file
        try:
            path.write_text(text, encoding="utf-8")
            outcome, detail = _run_checks(spec.checks, real_results, copy, spec.id,
                                          _environment(copy, env_roots), budget)
        except OSError as exc:
            outcome, detail = "error", f"could not write the mutant: {exc}"
        finally:
            try:
                path.write_bytes(sources[target.file])
            finally:
                copies.put(copy)
        return _result(target, outcome, began, detail)

    def run_baseline() -> None:
        copy = copies.get()
        try:
            outcome, detail = _run_checks(spec.checks, real_results, copy, spec.id,
                                          _environment(copy, env_roots), budget)
        finally:
            copies.put(copy)
        if outcome != "survived":
            baseline.append(detail)
            budget.cancelled.set()

    def run_control() -> None:
        if control is None or budget.cancelled.is_set():
            return
        control_result.append(_try(*control))

    try:
        for number in range(count):
            copy = parent / f"tree-{number}"
            copy.mkdir()
            _copy_tree(repo, root, listing, snap_files, copy)
            copies.put(copy)
        with ThreadPoolExecutor(max_workers=count, thread_name_prefix="meridian-mutant") as pool:
            futures = [pool.submit(run_baseline), pool.submit(run_control)]
            futures += [pool.submit(mutate, i) for i in range(len(chosen.targets))]
            for future in futures:
                future.result()
    finally:
        shutil.rmtree(parent, ignore_errors=True)
    report.duration_s = round(time.monotonic() - started, 3)
    mutants = [r for r in results if r is not None]
    report.control = control_result[0] if control_result and not baseline else None
    if report.control is not None and _control_failed(report.control):
        report.note = ("no result: the checks fail when a changed file is rewritten without "
                       f"changing what it does ({report.control.detail}), so their kills "
                       "say nothing")
    if baseline:
        report.note = ("could not run: in a temporary copy of the tree the checks fail "
                       f"without any mutant ({baseline[0]}); they depend on something the "
                       "copy lacks (ignored files, .git, absolute paths)")
        mutants = [r if r.outcome == "not_tried" else r.model_copy(update={
            "outcome": "error", "detail": "the baseline run failed: no result"}) for r in mutants]
    report.mutants = mutants + beyond
    return report, chosen.allowed


def _control_failed(control: MutantResult | None) -> bool:
    """The checks failed under the control, or hung on it past their own limit (a hang
    because the mutation budget ran out says nothing)."""
    if control is None:
        return False
    return control.outcome == "killed" or (
        control.outcome == "timeout" and "budget ran out" not in control.detail)


def _control(targets: Sequence[Target], sources: Mapping[str, bytes],
             ) -> tuple[Target, str] | None:
    """The first target whose file can carry the control (``mutants.neutral``)."""
    for target in targets:
        try:
            text = neutral(sources[target.file].decode("utf-8"), target)
        except UnicodeDecodeError:
            continue
        if text is not None:
            return target, text
    return None


def _result(target: Target, outcome: str, began: float, detail: str) -> MutantResult:
    return MutantResult(function=target.qualname, file=target.file, line=target.line,
                        outcome=outcome,  # type: ignore[arg-type]
                        duration_s=round(time.monotonic() - began, 3), detail=detail)


def _not_tried(target: Target, why: str) -> MutantResult:
    return MutantResult(function=target.qualname, file=target.file, line=target.line,
                        outcome="not_tried", detail=why)


# --- what the verdict says -----------------------------------------------------------


def survived_message(function: str) -> str:
    return (f"changed function {function} is not exercised by the gate's checks (they still "
            "pass with its body removed)")


def issues(report: MutationReport, *, block_pre_existing: bool = False) -> list[Issue]:
    """A high issue per surviving mutant (medium when the gate had no base commit, so
    old code counted as changed, unless ``block_pre_existing``); a low one for what was
    not tried or gave no result. The checks passed on the work tree (the check runs only
    then), so checks that fail in the copy without any mutant, or under the control (a
    rewrite that changes nothing), are a high issue too: checks that notice where they
    run, or that a file was rewritten, would otherwise make every mutant look killed, or
    the check never run."""
    blocking = report.scoped or block_pre_existing
    severity: Literal["high", "medium"] = "high" if blocking else "medium"
    unscoped = "" if report.scoped else (
        " (no base commit: every function counted as changed, old code included"
        + ("" if blocking else "; not blocking unless evaluator.block_pre_existing") + ")")
    could_not_run = report.note.startswith("could not run")
    found = [Issue(severity=severity, file=m.file, line=m.line,
                   check=CHECK_ID, message=survived_message(m.function) + unscoped)
             for m in report.mutants if m.outcome == "survived"]
    if could_not_run:
        found.append(Issue(severity=severity, check=CHECK_ID, message=(
            "mutation smoke check could not run: the gate's checks pass on the work tree "
            "but fail in a temporary copy of it without any mutant ("
            + report.note.split("without any mutant (", 1)[-1].split("); they depend", 1)[0]
            + "): checks that depend on where they run (an ignored file, .git, an absolute "
            "path, the directory's name) cannot show that they exercise the change; make "
            "them pass from a copy of the tree, or switch the check off for this gate with "
            "`mutation: false` (a recorded weakening of the gate)" + unscoped)))
    control = report.control
    if control is not None and _control_failed(control):
        found.append(Issue(severity=severity, file=control.file, line=control.line,
                           check=CHECK_ID, message=(
            "mutation smoke check: the gate's checks fail (or hang) when a changed file is "
            f"rewritten without changing what it does (a raise that never runs put in {control.function}:"
            f" {control.detail}): they notice the rewrite or the copy rather than test the "
            "code, so no mutant they kill says anything" + unscoped)))
    skipped = [m for m in report.mutants if m.outcome == "not_tried"]
    if skipped and not report.note.startswith("not run") and not could_not_run:
        shown = ", ".join(f"{m.function} ({m.where()})" for m in skipped[:5])
        more = f" and {len(skipped) - 5} more" if len(skipped) > 5 else ""
        found.append(Issue(severity="low", check=CHECK_ID, message=(
            f"mutation smoke check: {len(skipped)} changed function(s) not tried "
            f"({skipped[0].detail}): {shown}{more}; raise mutation.max_functions or "
            "mutation.timeout_s to try them")))
    errors = [m for m in report.mutants if m.outcome == "error"]
    if errors and not could_not_run:
        found.append(Issue(severity="low", check=CHECK_ID, message=(
            f"mutation smoke check: no result for {len(errors)} function(s): "
            + "; ".join(f"{m.function}: {m.detail}" for m in errors[:3]))))
    return found


def bundle_note(report: MutationReport) -> str:
    counts = report.counts()
    said = ", ".join(f"{n} {k.replace('_', ' ')}" for k, n in sorted(counts.items()))
    return (f"mutation smoke check: {said or 'no mutant'}"
            + (f" ({report.note})" if report.note else "")
            + "; a survived mutant is a changed function the checks pass without")

