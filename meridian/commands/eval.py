"""``meridian eval``: run agent evaluation suites, inspect, compare and export runs.

    meridian eval run SUITE --agent A [--agent B ...] [--workers N] [--limit N] [--tag T]
                      [--offline] [--epochs K] [--shard i/n] [--save PATH] [--no-isolation]
                      [--max-concurrency N] [--no-store | --dry-run]
    meridian eval merge RUN... [--save PATH]
    meridian eval regrade RUN [--no-store]
    meridian eval list | show RUN | trace RUN TASK | export RUN PATH
    meridian eval compare A B [--fail-on-regression] [--accept-changed-tasks] [--max-infra-errors N]
                      [--min-pass-rate R] [--format text|json|markdown] [--force]
    meridian eval report RUN --html FILE [--baseline RUN] | graders | suites | schema
    meridian eval prune --keep N

SUITE is the name of a bundled suite (``meridian eval suites``) or a suite file's path. A
bare name that is a bundled suite's always means the bundled suite, even when the working
directory holds a file of that name; name a project file as a path (``./reference``,
``suites/mine.yaml``: a ``/`` or a .yaml/.yml suffix).
RUN is a run id prefix, ``latest``, ``latest~N``, ``baseline:NAME``, a baseline name,
or the path of an exported run file.
"""

from __future__ import annotations

import argparse
from typing import Any

RUN_REF_HELP = "run id prefix, latest, latest~N, baseline:NAME, or a run file path"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    verbs = parser.add_subparsers(dest="verb", required=True, metavar="VERB")

    p = verbs.add_parser("run", help="run a suite against an agent and store the run",
                         description="Run SUITE against an agent; the run is committed to "
                                     "the state branch (secrets redacted).")
    p.add_argument("suite", metavar="SUITE",
                   help="a bundled suite's name (see `meridian eval suites`; a bundled name "
                        "always means the bundled suite), or a suite file's path "
                        "(./NAME, DIR/NAME, or NAME.yaml)")
    p.add_argument("--agent", required=True, action="append", metavar="A",
                   help="reference-v1, reference-v2, module:attr or command:PROGRAM; repeat to "
                        "run several agents and compare them with the first in one report")
    p.add_argument("--workers", type=int, default=None, metavar="N",
                   help="tasks run in parallel (default: CPU count, at most 4)")
    p.add_argument("--limit", type=int, default=None, metavar="N", help="only the first N tasks")
    p.add_argument("--tag", action="append", default=[], metavar="T",
                   help="only tasks with this tag (repeatable: any of them)")
    p.add_argument("--offline", action="store_true",
                   help="no network: tasks graded by a model API are skipped")
    p.add_argument("--epochs", type=int, default=1, metavar="K",
                   help="run every task K times (pass rate, pass@k, pass^k)")
    p.add_argument("--shard", default=None, metavar="i/n",
                   help="run only shard i of n (1-based); join shards with `eval merge`")
    p.add_argument("--save", default=None, metavar="PATH",
                   help="also write the portable run file to PATH (deterministic, no timings)")
    p.add_argument("--no-isolation", dest="isolation", action="store_false",
                   help="run tasks in this process (faster start; timeouts cannot stop a task)")
    p.add_argument("--max-concurrency", type=int, default=10, metavar="N",
                   help="async agents (async def run): tasks in flight at once (default 10)")
    p.add_argument("--no-store", "--dry-run", dest="store", action="store_false",
                   help="do not commit the run to the state branch (print it; --save still "
                        "writes the portable file)")
    p.add_argument("--json", action="store_true", help="print the run's index record as JSON")

    p = verbs.add_parser("regrade", help="re-grade a stored run's trajectories with today's "
                                         "graders, into a new run",
                         description="Grade every stored trajectory of RUN again (the task "
                                     "definitions the run recorded, today's grader code) and "
                                     "store the result as a new run. Trials without a "
                                     "trajectory (agent failures, infra errors) are kept.")
    p.add_argument("run", metavar="RUN", help=RUN_REF_HELP)
    p.add_argument("--offline", action="store_true",
                   help="no network: model-graded scores become infra errors")
    p.add_argument("--no-store", "--dry-run", dest="store", action="store_false",
                   help="do not commit the new run")
    p.add_argument("--save", default=None, metavar="PATH", help="also write the portable run file")
    p.add_argument("--json", action="store_true", help="print the new run's index record")

    p = verbs.add_parser("merge", help="join the shard runs of one invocation into one run")
    p.add_argument("runs", nargs="+", metavar="RUN", help=RUN_REF_HELP)
    p.add_argument("--save", default=None, metavar="PATH", help="also write the portable run file")
    p.add_argument("--json", action="store_true", help="print the merged run's index record")

    p = verbs.add_parser("list", help="stored runs, newest first")
    p.add_argument("--all", action="store_true", help="include pruned runs")
    p.add_argument("-n", dest="limit", type=int, default=None, metavar="N", help="at most N runs")
    p.add_argument("--json", action="store_true", help="one JSON object per line")

    p = verbs.add_parser("show", help="a run's summary and per-task breakdown")
    p.add_argument("run", metavar="RUN", help=RUN_REF_HELP)
    p.add_argument("--json", action="store_true", help="the whole run document")

    p = verbs.add_parser("trace", help="step-by-step trajectory of one task in a run")
    p.add_argument("run", metavar="RUN", help=RUN_REF_HELP)
    p.add_argument("task", metavar="TASK", help="task id")
    p.add_argument("--epoch", type=int, default=None, metavar="N", help="only this epoch")
    p.add_argument("--json", action="store_true", help="the task's trials as JSON")

    p = verbs.add_parser("compare", help="compare run A with run B; REGRESSIONS are pass -> fail")
    p.add_argument("a", metavar="A", help="candidate run (" + RUN_REF_HELP + ")")
    p.add_argument("b", metavar="B", help="reference run (" + RUN_REF_HELP + ")")
    p.add_argument("--fail-on-regression", action="store_true",
                   help="exit 1 when any task regressed, a task of the suite is missing from A, "
                        "a task of B is not compared (definition changed or removed; see "
                        "--accept-changed-tasks), no task is compared, A is interrupted or "
                        "partial, or A's infra errors exceed --max-infra-errors (the CI gate)")
    p.add_argument("--max-infra-errors", type=int, default=0, metavar="N",
                   help="infra-error trials A may have under --fail-on-regression (default 0)")
    p.add_argument("--accept-changed-tasks", action="store_true",
                   help="under --fail-on-regression, accept tasks of B whose definition "
                        "changed or that left the suite (not compared); still fails when no "
                        "task at all is compared")
    p.add_argument("--min-pass-rate", type=float, default=None, metavar="R",
                   help="also fail when A's pass rate is below R (0-1, e.g. 0.9)")
    p.add_argument("--format", choices=("text", "json", "markdown"), default="text")
    p.add_argument("--json", action="store_true", help="same as --format json")
    p.add_argument("--force", action="store_true", help="compare runs of different suites")

    p = verbs.add_parser("report", help="write a self-contained HTML report of a run")
    p.add_argument("run", metavar="RUN", help=RUN_REF_HELP)
    p.add_argument("--html", required=True, metavar="FILE", help="output file")
    p.add_argument("--baseline", default=None, metavar="RUN",
                   help="add a diff against this run (" + RUN_REF_HELP + ")")

    p = verbs.add_parser("export", help="write a run's portable file into the working tree")
    p.add_argument("run", metavar="RUN", help=RUN_REF_HELP)
    p.add_argument("path", metavar="PATH", help="output file")

    p = verbs.add_parser("graders", help="registered graders, one line each")
    p.add_argument("--json", action="store_true", help="one JSON object per line")

    p = verbs.add_parser("suites", help="the suites bundled with Meridian (run them by name)")
    p.add_argument("--json", action="store_true", help="one JSON object per line")

    p = verbs.add_parser("schema", help="JSON Schemas of the command: agent protocol",
                         description="Print the JSON Schema of what a command: agent reads on "
                                     "stdin (input) and prints on stdout (output), protocol "
                                     "meridian.agent/1.")
    p.add_argument("which", nargs="?", choices=("input", "output"), default=None,
                   help="only this side (default: both)")

    p = verbs.add_parser("prune", help="retire all but the N newest runs from listings")
    p.add_argument("--keep", type=int, required=True, metavar="N", help="runs to keep")
    p.add_argument("--json", action="store_true", help="the retired run ids as JSON")


def run(args: argparse.Namespace) -> int:
    handler = {
        "run": _run, "merge": _merge, "list": _list, "show": _show, "trace": _trace,
        "compare": _compare, "report": _report, "export": _export, "graders": _graders,
        "prune": _prune, "regrade": _regrade, "suites": _suites, "schema": _schema,
    }[args.verb]
    return handler(args)


# --- shared helpers -------------------------------------------------------------------


def _ledger() -> Any:
    from meridian.ledger import Ledger

    return Ledger.open(".")


def _load_ref(ledger: Any, ref: str, *, for_compare: bool = False) -> tuple[Any, str]:
    """(Run, label): a run on the state branch, or an exported run file. ``for_compare``:
    either may come back as the lighter view compare reads (``runview.load``: checked
    as the models check it)."""
    from pathlib import Path

    from meridian.evals import run as runfile
    from meridian.evals import store

    path = Path(ref)
    if _is_run_file(ref):
        data = runfile.read_file(path, ref)
        if for_compare:
            from meridian.evals import runview

            return runview.load(data, ref), ref
        return runfile.loads(data, ref), ref
    if ledger is None:
        ledger = _ledger()
    if for_compare:
        entries = store.index(ledger, include_pruned=True)
        run_id = store.resolve(ledger, ref, entries)
        return store.load_for_compare(ledger, run_id, entries), run_id
    run_id = store.resolve(ledger, ref)
    return store.load_run(ledger, run_id), run_id


def _is_run_file(ref: str) -> bool:
    """Whether ``ref`` names a run file rather than a run on the state branch."""
    from pathlib import Path

    path = Path(ref)
    return path.is_file() and (path.suffix == ".json" or "/" in ref)


def _write_file(path_text: str, data: bytes | str) -> None:
    from pathlib import Path

    from meridian.errors import MeridianError

    path = Path(path_text)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(data, str):
            path.write_text(data, encoding="utf-8")
        else:
            path.write_bytes(data)
    except OSError as exc:
        raise MeridianError(f"{path_text}: cannot write ({exc.strerror or exc})") from None


def _print_json(value: Any) -> None:
    import json

    print(json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False))


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value * 100:.1f}%"


def _parse_shard(text: str | None) -> Any:
    import re

    from meridian.errors import MeridianError
    from meridian.evals.run import ShardInfo

    if text is None:
        return None
    match = re.fullmatch(r"(\d+)/(\d+)", text.strip())
    if not match or not 1 <= int(match.group(1)) <= int(match.group(2)):
        raise MeridianError(f"--shard: expected i/n with 1 <= i <= n (e.g. 1/4), got {text!r}")
    return ShardInfo(index=int(match.group(1)), count=int(match.group(2)))


class _PlainProgress:
    """One line per finished trial on stderr (stderr is not a terminal)."""

    def started(self, total: int) -> None:
        self.total = total

    def finished(self, result: Any, done: int, total: int) -> None:
        import sys

        detail = f" ({result.error})" if result.error else ""
        print(f"[{done}/{total}] {result.task_id} epoch {result.epoch}: {result.status}{detail}",
              file=sys.stderr, flush=True)


class _BarProgress:
    """A rich progress bar on stderr (stderr is a terminal)."""

    def __init__(self) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
        )

        self.bar = Progress(TextColumn("eval"), BarColumn(), MofNCompleteColumn(),
                            TextColumn("{task.description}"), TimeElapsedColumn(),
                            console=Console(stderr=True), transient=True)
        self.counts = {"pass": 0, "fail": 0, "infra_error": 0}
        self.task_id: Any = None

    def started(self, total: int) -> None:
        self.bar.start()
        self.task_id = self.bar.add_task("", total=total)

    def finished(self, result: Any, done: int, total: int) -> None:
        self.counts[result.status] = self.counts.get(result.status, 0) + 1
        c = self.counts
        self.bar.update(self.task_id, completed=done,
                        description=f"{c['pass']} pass, {c['fail']} fail, {c['infra_error']} infra")

    def stop(self) -> None:
        self.bar.stop()


def _print_table(headers: list[str], rows: list[list[str]]) -> None:
    """Plain aligned columns: greppable, and never wrapped mid-value on a narrow terminal."""
    widths = [max(len(str(cell)) for cell in column) for column in zip(headers, *rows, strict=True)]
    for line in [headers, *rows]:
        print("  ".join(str(cell).ljust(width) for cell, width in zip(line, widths, strict=True))
              .rstrip())


def _summary_lines(run: Any) -> list[str]:
    s = run.summary
    graded = s.passed + s.failed
    lines = [
        f"run {run.run_id}  {run.suite.name} / {run.agent.name}@{run.agent.version}"
        + (f"  shard {run.settings.shard.label()}" if run.settings.shard else "")
        + ("  INTERRUPTED (partial)" if run.interrupted else ""),
        (f"passed {s.passed}/{graded} ({_pct(s.pass_rate)})  failed {s.failed}  "
         f"infra errors {s.infra_errors}  cost ${s.cost_usd:.4f}"
         + (f" ({s.usage_unreported} trial(s) reported no usage: cost unknown)"
            if s.usage_unreported else "")),
    ]
    if run.settings.epochs > 1:
        lines.append("  ".join(f"pass@{k} {_pct(v)}  pass^{k} {_pct(s.pass_hat_k[k])}"
                               for k, v in s.pass_at_k.items()))
    return lines


def _store_and_report(ledger: Any, run: Any, args: argparse.Namespace) -> Any:
    import sys

    from meridian.evals import store

    saved = store.save_run(ledger, run)
    if saved.redactions.total:
        print(f"redacted {saved.redactions.total} secret(s) before committing: "
              f"{saved.redactions.describe()}", file=sys.stderr)
    if args.save:
        _write_file(args.save, store.checked_bytes(saved.run, portable=True))
    if args.json:
        _print_json(store.index_data(saved.run))
    else:
        for line in _summary_lines(saved.run):
            print(line)
        print(f"stored {ledger.branch}:{store.run_path(str(saved.run.run_id))} "
              f"(commit {saved.commit[:12]})" + (f"; portable copy in {args.save}" if args.save else ""))
    return saved


# --- verbs ----------------------------------------------------------------------------


def _run(args: argparse.Namespace) -> int:
    import os
    import sys

    from meridian import gitio
    from meridian.errors import MeridianError
    from meridian.evals import runner
    from meridian.evals.run import GitInfo
    from meridian.evals.suite import load_suite, shadowed_file

    for flag, value, low in (("--workers", args.workers, 1), ("--epochs", args.epochs, 1),
                             ("--limit", args.limit, 0), ("--max-concurrency", args.max_concurrency, 1)):
        if value is not None and value < low:
            raise MeridianError(f"{flag}: expected a number >= {low}, got {value}")
    agents = list(dict.fromkeys(a.strip() for a in args.agent))
    if args.save and len(agents) > 1:
        raise MeridianError("--save writes one run file; give one --agent with it")
    shard = _parse_shard(args.shard)
    # Before the run: no repository means nothing to store it in (unless --no-store).
    ledger = _ledger() if args.store else _ledger_or_none()
    suite = load_suite(args.suite)
    if (shadow := shadowed_file(args.suite)) is not None:
        import sys

        print(f"note: {args.suite} is the bundled suite; ./{shadow} is not used "
              f"(name a project file as a path: ./{shadow})", file=sys.stderr)
    workers = args.workers or min(4, os.cpu_count() or 1)
    options = runner.RunOptions(workers=workers, epochs=args.epochs, offline=args.offline,
                                isolation=args.isolation, max_concurrency=args.max_concurrency)
    if not suite.select(tags=args.tag, limit=args.limit, offline=args.offline):
        raise MeridianError(f"{args.suite}: no task selected (check --tag, --limit and --offline)")
    # A shard may be empty (more shards than tasks): it is stored, so `eval merge` of
    # every shard of a CI matrix still works.
    skipped = len(suite.select(tags=args.tag)) - len(suite.select(tags=args.tag, offline=True))
    if args.offline and skipped:
        print(f"--offline: skipping {skipped} task(s) graded by a model API", file=sys.stderr)
    runner.refuse_without_model_key(suite.select(tags=args.tag, limit=args.limit,
                                                 offline=args.offline), offline=args.offline)
    git = (GitInfo(commit=gitio.head_commit(ledger.repo), dirty=gitio.is_dirty(ledger.repo))
           if ledger is not None else None)
    runs = []
    for agent in agents:
        run = _run_one(suite, agent, options, args, shard, git)
        if args.store:
            saved = _store_and_report(ledger, run, args)
            run = saved.run
        else:
            _report_unstored(run, args)
        runs.append(run)
        if run.interrupted:
            print(f"interrupted: partial run saved as {run.run_id}" if args.store
                  else "interrupted: partial run (not stored)", file=sys.stderr)
            return 130
    if len(runs) > 1 and not args.json:
        from meridian.evals import compare as cmp

        reference = runs[0]
        for other, spec in zip(runs[1:], agents[1:], strict=True):
            print()
            print(cmp.render_text(cmp.compare(other, reference, a_ref=f"{other.run_id or spec}",
                                              b_ref=f"{reference.run_id or agents[0]}")), end="")
    return 0


def _run_one(suite: Any, agent: str, options: Any, args: argparse.Namespace, shard: Any,
             git: Any) -> Any:
    import signal
    import sys

    from meridian.evals import runner

    progress: Any = _BarProgress() if sys.stderr.isatty() else _PlainProgress()

    def on_sigterm(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt  # a cancelled CI job keeps its partial run too

    previous = signal.signal(signal.SIGTERM, on_sigterm)
    try:
        return runner.run_suite(suite, agent, options, tags=args.tag, limit=args.limit,
                                shard=shard, progress=progress, git=git)
    finally:
        signal.signal(signal.SIGTERM, previous)
        if isinstance(progress, _BarProgress):
            progress.stop()


def _ledger_or_none() -> Any:
    from meridian.errors import MeridianError

    try:
        return _ledger()
    except MeridianError:
        return None


def _report_unstored(run: Any, args: argparse.Namespace) -> None:
    from meridian.evals import store

    clean = store.redacted(run)
    if args.save:
        _write_file(args.save, store.checked_bytes(clean, portable=True))
    if args.json:
        _print_json(store.index_data(clean))
        return
    for line in _summary_lines(clean):
        print(line)
    print("not stored (--no-store)" + (f"; portable copy in {args.save}" if args.save else ""))


def _regrade(args: argparse.Namespace) -> int:
    from meridian.evals.run import regrade
    from meridian.evals.runner import new_run_id, refuse_without_model_key

    ledger = _ledger() if args.store else _ledger_or_none()
    source, label = _load_ref(ledger, args.run)
    refuse_without_model_key([e.task for e in source.results
                              if any(t.trajectory is not None for t in e.trials)],
                             offline=args.offline)
    new = regrade(source, offline=args.offline).model_copy(
        update={"run_id": new_run_id(), "regraded_from": source.run_id or label})
    if args.store:
        _store_and_report(ledger, new, args)
    else:
        _report_unstored(new, args)
    return 0


def _suites(args: argparse.Namespace) -> int:
    import json

    from meridian.errors import ConfigError
    from meridian.evals.suite import bundled_suites, load_suite

    for name, path in bundled_suites().items():
        try:
            suite = load_suite(path)
            tasks, description = len(suite.tasks), suite.description
        except ConfigError as exc:
            tasks, description = 0, f"(cannot load: {exc})"
        if args.json:
            print(json.dumps({"name": name, "tasks": tasks, "description": description,
                              "path": str(path)}, sort_keys=True))
        else:
            print(f"{name:<16}{tasks:>4} tasks  {description}")
    return 0


def _schema(args: argparse.Namespace) -> int:
    from meridian.evals.agents.protocol import schemas

    documents = schemas()
    _print_json(documents[args.which] if args.which else documents)
    return 0


def _merge(args: argparse.Namespace) -> int:
    from meridian.evals import run as runfile
    from meridian.evals.runner import new_run_id

    ledger = _ledger()
    runs = [_load_ref(ledger, ref)[0] for ref in args.runs]
    merged = runfile.merge(runs).model_copy(update={"run_id": new_run_id()})
    _store_and_report(ledger, merged, args)
    return 0


def _list(args: argparse.Namespace) -> int:
    import json

    from meridian.errors import MeridianError
    from meridian.evals import store

    if args.limit is not None and args.limit < 1:
        raise MeridianError(f"-n: expected a number >= 1, got {args.limit}")
    ledger = _ledger()
    entries = list(reversed(store.index(ledger, include_pruned=args.all)))
    if args.limit is not None:
        entries = entries[: args.limit]
    pinned: dict[str, list[str]] = {}
    for baseline in store.baselines(ledger):
        if baseline.run_id:
            pinned.setdefault(baseline.run_id, []).append(baseline.name)
    if args.json:
        for entry in entries:
            row = {"ts": entry.ts, **entry.data.model_dump(mode="json"), "pruned": entry.pruned,
                   "baselines": pinned.get(entry.run_id, [])}
            print(json.dumps(row, sort_keys=True, ensure_ascii=False))
        return 0
    if not entries:
        print("no runs (run `meridian eval run SUITE --agent A`)")
        return 0
    rows = []
    for entry in entries:
        d = entry.data
        notes = [f"baseline:{name}" for name in pinned.get(entry.run_id, [])]
        notes += [f"shard {d.shard}"] if d.shard else []
        notes += [f"{d.epochs} epochs"] if d.epochs > 1 else []
        notes += ["interrupted"] if d.interrupted else []
        notes += ["pruned"] if entry.pruned else []
        notes += ["dirty"] if d.dirty else []
        rows.append([d.run_id, entry.ts[:16].replace("T", " "), d.suite,
                     f"{d.agent}@{d.agent_version}", f"{d.passed}/{d.passed + d.failed}",
                     str(d.infra_errors), f"${d.cost_usd:.4f}", " ".join(notes)])
    _print_table(["run", "committed (UTC)", "suite", "agent", "passed", "infra", "cost", "notes"],
                 rows)
    return 0


def _show(args: argparse.Namespace) -> int:
    import json

    from meridian.evals import run as runfile

    run, _ = _load_ref(None, args.run)
    if args.json:
        print(json.dumps(runfile.to_document(run), indent=2, ensure_ascii=False))
        return 0
    for line in _summary_lines(run):
        print(line)
    git = run.git
    print(f"suite {run.suite.name} ({run.suite.hash[:12]})  agent spec {run.agent.spec}"
          + (f"  commit {(git.commit or 'none')[:12]}{' (dirty)' if git.dirty else ''}" if git else ""))
    rows = []
    for entry in run.results:
        trials = entry.trials
        steps = "/".join(str(len(t.trajectory.steps)) for t in trials if t.trajectory) or "-"
        cost = sum(t.trajectory.cost_usd for t in trials if t.trajectory)
        failing = sorted({s.name for t in trials for s in t.scores if not s.passed})
        errors = sorted({t.error for t in trials if t.error})
        rows.append([entry.task_id, entry.status, f"{entry.passes}/{len(entry.graded)}", steps,
                     f"${cost:.4f}", ", ".join(failing + errors)])
    print()
    _print_table(["task", "status", "passed", "steps", "cost", "failing graders / error"], rows)
    return 0


def _trace(args: argparse.Namespace) -> int:
    import json

    from meridian.errors import MeridianError

    run, label = _load_ref(None, args.run)
    entry = run.entry(args.task)
    if entry is None:
        known = ", ".join(e.task_id for e in run.results[:10])
        raise MeridianError(f"run {label} has no task {args.task!r} (tasks: {known}"
                            + (", ..." if len(run.results) > 10 else "") + ")")
    trials = [t for t in entry.trials if args.epoch is None or t.epoch == args.epoch]
    if not trials:
        raise MeridianError(f"task {args.task!r} in run {label} has no epoch {args.epoch}")
    if args.json:
        _print_json([t.model_dump(mode="json") for t in trials])
        return 0

    def show(value: Any) -> str:
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        return text if len(text) <= 400 else text[:400] + " ..."

    print(f"task {entry.task_id}  run {label}  {run.agent.name}@{run.agent.version}")
    print(f"input: {show(entry.task.input)}")
    print(f"expected: {show(entry.task.expected)}")
    for trial in trials:
        print()
        print(f"epoch {trial.epoch}: {trial.status}"
              + (f" after {trial.attempts} attempts" if trial.attempts > 1 else "")
              + (f"  ({trial.error})" if trial.error else ""))
        traj = trial.trajectory
        if traj is not None:
            for step in traj.steps:
                timing = f" {step.latency_s:.3f}s" if run.timings else ""
                print(f"  #{step.index} {step.kind} {step.name}{timing} ${step.cost_usd:.4f}"
                      + (f"  ERROR {step.error}" if step.error else ""))
                print(f"      input:  {show(step.input)}")
                print(f"      output: {show(step.output)}")
            print(f"  final output: {show(traj.final_output)}"
                  + ("" if traj.completed else "  (did not complete)"))
        if traj is not None and traj.reported_latency_s is not None and run.timings:
            print(f"  latency {traj.latency_s:.3f}s measured, {traj.reported_latency_s:.3f}s "
                  "reported by the agent")
        for score in trial.scores:
            print(f"  {'pass' if score.passed else 'FAIL'} {score.name} {score.value:.2f}"
                  f"  {score.detail}")
            if score.metadata:
                print(f"      {json.dumps(score.metadata, sort_keys=True, ensure_ascii=False)}")
    return 0


def _compare(args: argparse.Namespace) -> int:
    from meridian.evals import nogc

    # The collector stays off until both runs and their comparison are freed (they hold
    # no cycles): turned back on while they live, its first pass walks all of them.
    with nogc.paused():
        return _compare_runs(args)


def _compare_runs(args: argparse.Namespace) -> int:
    from meridian.evals import compare as cmp

    ledger = None if _is_run_file(args.a) and _is_run_file(args.b) else _ledger()
    a, a_label = _load_ref(ledger, args.a, for_compare=True)
    b, b_label = _load_ref(ledger, args.b, for_compare=True)
    result = cmp.compare(a, b, a_ref=a_label, b_ref=b_label, force=args.force)
    import sys

    from meridian.errors import MeridianError

    if args.max_infra_errors < 0:
        raise MeridianError(f"--max-infra-errors: expected a number >= 0, got {args.max_infra_errors}")
    if args.min_pass_rate is not None and not 0 <= args.min_pass_rate <= 1:
        raise MeridianError(f"--min-pass-rate: expected a rate between 0 and 1, got {args.min_pass_rate}")
    policy = cmp.GatePolicy(max_infra_errors=args.max_infra_errors, min_pass_rate=args.min_pass_rate,
                            accept_changed_tasks=args.accept_changed_tasks)
    fmt = "json" if args.json else args.format
    if fmt == "markdown":
        print(cmp.render_markdown(result, policy), end="")
    elif fmt == "json":
        document = result.to_json()
        document["gate_failures"] = cmp.gate_failures(result, policy)
        document["accepted_changed_tasks"] = (sorted(result.baseline_uncompared)
                                              if args.accept_changed_tasks else [])
        _print_json(document)
    else:
        print(cmp.render_text(result), end="")
    failures = cmp.gate_failures(result, policy)
    if args.fail_on_regression and failures:
        for reason in failures:
            print(f"gate: {reason}", file=sys.stderr)
        return 1
    if args.fail_on_regression and args.accept_changed_tasks and result.baseline_uncompared:
        print(f"gate: accepted {len(result.baseline_uncompared)} task(s) of B not compared "
              "(definition changed or removed): --accept-changed-tasks", file=sys.stderr)
    return 0


def _report(args: argparse.Namespace) -> int:
    from meridian.evals import store
    from meridian.evals.report import render_html

    run, label = _load_ref(None, args.run)
    baseline = None
    if args.baseline:
        from meridian.evals import compare as cmp

        base_run, base_label = _load_ref(None, args.baseline)
        baseline = cmp.compare(store.redacted(run), store.redacted(base_run), a_ref=label,
                               b_ref=base_label, force=True)
    # Redacted like an export: RUN may be a hand-made file, and the page may be shared.
    _write_file(args.html, render_html(store.redacted(run), baseline=baseline))
    print(f"wrote {args.html} (run {label})")
    return 0


def _export(args: argparse.Namespace) -> int:
    from meridian.evals import store

    run, label = _load_ref(None, args.run)
    _write_file(args.path, store.checked_bytes(store.redacted(run), portable=True))
    print(f"wrote {args.path} (run {label})")
    return 0


def _graders(args: argparse.Namespace) -> int:
    import json

    from meridian.evals import graders

    for name in graders.names():
        info = graders.get(name)
        if args.json:
            print(json.dumps({"name": name, "kind": info.kind, "description": info.description,
                              "arguments": info.argument_names(), "network": info.network},
                             sort_keys=True))
        else:
            print(f"{name:<24}{info.kind:<13}{info.description}")
    return 0


def _prune(args: argparse.Namespace) -> int:
    from meridian.evals import store

    retired = store.prune(_ledger(), args.keep)
    if args.json:
        _print_json({"pruned": retired, "keep": args.keep})
    elif retired:
        print(f"pruned {len(retired)} run(s): {', '.join(retired)} (hidden from listings; the "
              "append-only state branch keeps their documents)")
    else:
        print("nothing to prune")
    return 0
