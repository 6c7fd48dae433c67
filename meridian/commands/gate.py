"""``meridian gate start|submit|approve|reopen|show GATE``: move a gate through its lifecycle."""

from __future__ import annotations

import argparse
from typing import Any


def add_arguments(parser: argparse.ArgumentParser) -> None:
    verbs = parser.add_subparsers(dest="verb", required=True, metavar="VERB",
                                  parser_class=type(parser))

    start = verbs.add_parser("start", help="begin work on a gate (refused while its needs have not passed)")
    start.add_argument("gate", metavar="GATE")
    start.add_argument("--estimate", type=float, metavar="HOURS",
                       help="predicted hours of work (default: the gate's estimate_hours)")

    submit = verbs.add_parser("submit", help="run checks and the independent evaluator on a gate")
    submit.add_argument("gate", metavar="GATE")
    submit.add_argument("--self-score", type=float, metavar="N",
                        help="your own 0-10 score, recorded next to the evaluator's (never shown to it)")
    submit.add_argument("--json", action="store_true", help="print the verdict as JSON")
    submit.add_argument("--quiet", "-q", action="store_true",
                        help="no progress while the checks and the evaluator run (the verdict "
                        "is still printed)")

    approve = verbs.add_parser("approve", help="a human approves a gate whose verdict passed")
    approve.add_argument("gate", metavar="GATE")
    approve.add_argument("--token", metavar="TOKEN",
                         help="the approval token (prompted for when omitted in a terminal)")

    reopen = verbs.add_parser("reopen", help="put a gate back in progress")
    reopen.add_argument("gate", metavar="GATE")
    reopen.add_argument("--reason", required=True, help="why the gate is reopened")

    show = verbs.add_parser("show", help="a gate's definition, state and latest verdict")
    show.add_argument("gate", metavar="GATE")
    show.add_argument("--json", action="store_true", help="print as JSON")


def run(args: argparse.Namespace) -> int:
    from meridian.gates.lifecycle import open_project

    project = open_project(".")
    handlers = {"start": _start, "submit": _submit, "approve": _approve, "reopen": _reopen,
                "show": _show}
    return handlers[args.verb](project, args)


def _start(project: Any, args: argparse.Namespace) -> int:
    from meridian.gates.lifecycle import start_gate

    record = start_gate(project, args.gate, args.estimate)
    estimate = record.data.get("estimate_hours")
    from meridian.durations import human_hours

    suffix = f" (estimate {human_hours(estimate)})" if estimate is not None else ""
    print(f"started {args.gate}{suffix}; when done: meridian gate submit {args.gate}")
    return 0


def _submit(project: Any, args: argparse.Namespace) -> int:
    import json
    import sys

    from meridian.errors import Blocked
    from meridian.gates.lifecycle import submit_gate
    from meridian.gates.report import verdict_lines

    progress = None if args.quiet else submit_progress(sys.stderr)
    try:
        result = submit_gate(project, args.gate, args.self_score, progress=progress)
    finally:
        if progress is not None:
            progress.close()
    verdict = result.verdict
    approval_needed = verdict.passed and project.graph.gate(args.gate).approval is not None
    if args.json:
        print(json.dumps({
            "gate": args.gate, "passed": verdict.passed, "approval_needed": approval_needed,
            "verdict_path": result.verdict_path, "evidence_path": result.evidence_path,
            "verdict": verdict.model_dump(mode="json"),
            "checks": [c.model_dump(mode="json") for c in result.checks],
        }, indent=2))
    else:
        for line in verdict_lines(verdict, verdict_path=result.verdict_path,
                                  branch=project.ledger.branch, checks=result.checks,
                                  approval_needed=approval_needed):
            print(line)
    for warning in result.warnings:
        print(f"meridian: warning: {warning}", file=sys.stderr)
    if not verdict.passed:
        from meridian.evaluators.models import blocks

        # Only what blocked: pre-existing high findings are reported, not counted here.
        high = sum(1 for i in verdict.issues
                   if blocks(i, block_pre_existing=verdict.block_pre_existing))
        kept = sum(1 for i in verdict.issues if i.severity == "high") - high
        shown = f" ({kept} more pre-existing, not blocking)" if kept else ""
        raise Blocked(f"gate {args.gate} failed: overall {verdict.overall} "
                      f"(threshold {verdict.threshold}), {high} high-severity issue(s){shown}")
    return 0


class PlainProgress:
    """One line per step on a stream that is not a terminal (a CI log, a pipe)."""

    def __init__(self, out: Any) -> None:
        self.out = out

    def _say(self, text: str) -> None:
        print(f"meridian: {text}", file=self.out, flush=True)

    def started(self, index: int, total: int, command: str) -> None:
        self._say(f"check {index}/{total} running: {command}")

    def running(self, index: int, total: int, command: str, elapsed_s: float) -> None:
        from meridian.durations import human_hours

        self._say(f"check {index}/{total} still running after {human_hours(elapsed_s / 3600)}: "
                  f"{command}")

    def finished(self, index: int, total: int, result: Any) -> None:
        self._say(f"check {index}/{total} {_outcome(result)} in {_seconds(result.duration_s)}: "
                  f"{result.command}")

    def evaluating(self, evaluator: str) -> None:
        self._say(f"evaluating with the {evaluator} evaluator")

    def mutation_started(self, total: int, workers: int, budget_s: float) -> None:
        self._say(f"mutation smoke check: {total} changed function(s), {workers} at a time, "
                  f"budget {_seconds(budget_s)}")

    def mutant_finished(self, index: int, total: int, mutant: Any) -> None:
        self._say(f"mutant {index}/{total} {mutant.outcome.replace('_', ' ')} in "
                  f"{_seconds(mutant.duration_s)}: {mutant.function} ({mutant.where()})")

    def close(self) -> None:
        return None


class RichProgress(PlainProgress):
    """A live display on a terminal: a spinner and the elapsed time for each check."""

    def __init__(self, out: Any) -> None:
        from rich.console import Console
        from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

        super().__init__(out)
        self.display = Progress(SpinnerColumn(), TextColumn("{task.description}"),
                                TimeElapsedColumn(), console=Console(file=out),
                                transient=False)
        self.tasks: dict[int, Any] = {}
        self.display.start()

    def started(self, index: int, total: int, command: str) -> None:
        from rich.markup import escape

        self.tasks[index] = self.display.add_task(f"check {index}/{total}: {escape(command)}",
                                                  total=1)

    def running(self, index: int, total: int, command: str, elapsed_s: float) -> None:
        return None  # the display keeps its own clock

    def finished(self, index: int, total: int, result: Any) -> None:
        from rich.markup import escape

        self.display.update(self.tasks[index], completed=1, description=(
            f"check {index}/{total} {_outcome(result)}: {escape(result.command)}"))

    def evaluating(self, evaluator: str) -> None:
        self.tasks[0] = self.display.add_task(f"evaluating with the {evaluator} evaluator",
                                              total=None)

    def mutation_started(self, total: int, workers: int, budget_s: float) -> None:
        self.tasks[-1] = self.display.add_task(
            f"mutation smoke check: {total} changed function(s), {workers} at a time", total=total)

    def mutant_finished(self, index: int, total: int, mutant: Any) -> None:
        from rich.markup import escape

        self.display.update(self.tasks[-1], completed=index, description=(
            f"mutation smoke check {index}/{total}: {mutant.outcome.replace('_', ' ')} "
            f"{escape(mutant.function)} ({escape(mutant.where())})"))

    def close(self) -> None:
        if 0 in self.tasks:
            self.display.update(self.tasks[0], total=1, completed=1)
        self.display.stop()


def _outcome(result: Any) -> str:
    if result.timed_out:
        return "timed out"
    if result.exit_code is None:
        return "could not start"
    return "ok" if result.exit_code == 0 else f"FAILED (exit {result.exit_code})"


def _seconds(value: float) -> str:
    return f"{value:.1f} s" if value < 60 else f"{value / 60:.1f} min"


def submit_progress(out: Any) -> PlainProgress:
    """A live display on a terminal, plain lines otherwise."""
    isatty = getattr(out, "isatty", None)
    return RichProgress(out) if callable(isatty) and isatty() else PlainProgress(out)


def _approve(project: Any, args: argparse.Namespace) -> int:
    import getpass
    import sys

    from meridian.gates.lifecycle import approve_gate

    interactive = sys.stdin is not None and sys.stdin.isatty()
    token = args.token
    if token is None and interactive:
        token = getpass.getpass(f"approval token for {args.gate}: ")
    record = approve_gate(project, args.gate, token, interactive=interactive)
    print(f"approved {args.gate} by {record.data['approver']}: the gate passed")
    return 0


def _reopen(project: Any, args: argparse.Namespace) -> int:
    from meridian.gates.lifecycle import reopen_gate

    reopen_gate(project, args.gate, args.reason)
    print(f"reopened {args.gate}; it is in progress again")
    return 0


def _show(project: Any, args: argparse.Namespace) -> int:
    import json

    from meridian.evaluators.models import Verdict
    from meridian.gates.report import verdict_lines
    from meridian.gates.snapshot import trusted_folds
    from meridian.gates.state import derive_states

    spec = project.graph.gate(args.gate)
    status = derive_states(project.ledger, project.graph,
                           folds=trusted_folds(project.ledger, project.graph))[args.gate]
    document = project.ledger.read_json(status.verdict) if status.verdict else None
    if args.json:
        print(json.dumps({"spec": spec.model_dump(mode="json"), "status": status.to_json(),
                          "verdict": document}, indent=2))
        return 0
    print(f"{spec.id}: {status.state} ({status.detail})")
    if spec.description:
        print(f"  description: {spec.description.strip()}")
    print(f"  needs: {', '.join(spec.needs) or '(none)'}")
    print(f"  artifacts: {', '.join(spec.artifacts) or '(none)'}")
    for check in spec.checks:
        print(f"  check: {check.run} (timeout {check.timeout:g}s)")
    if spec.approval is not None:
        print("  approval: a human token is required after the verdict passes")
    if spec.acceptance:
        print("  acceptance:")
        for line in spec.acceptance.strip().splitlines():
            print(f"    {line}")
    if document is not None and status.verdict is not None:
        print("latest verdict:")
        for line in verdict_lines(Verdict.model_validate(document), verdict_path=status.verdict,
                                  branch=project.ledger.branch):
            print(f"  {line}")
    return 0
