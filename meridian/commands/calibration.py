"""``meridian calibration``: predicted vs actual hours, and the project's multiplier."""

from __future__ import annotations

import argparse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--last", type=int, default=10, metavar="N",
                        help="the multiplier is the median ratio of the last N corrections "
                             "(default 10)")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")


def _hours(value: float | None) -> str:
    from meridian.durations import human_hours

    return human_hours(value)


def _ratio(value: float | None) -> str:
    from meridian.durations import human_ratio

    return human_ratio(value)


def _how(correction: object) -> str:
    measured = getattr(correction, "measured", None)
    if getattr(correction, "source", None) != "gate_pass" or not measured:
        return measured or "given by the user"
    return measured.split(";")[0].removeprefix("active time: ")


def run(args: argparse.Namespace) -> int:
    import json

    from meridian.errors import MeridianError
    from meridian.ledger import Ledger
    from meridian.memory.calibration import build_report

    if args.last < 1:
        raise MeridianError("--last: expected a number >= 1")
    ledger = Ledger.open(".")
    if not ledger.exists():
        raise MeridianError(f"no state branch {ledger.branch}: run `meridian init` first")
    report = build_report(ledger, ledger.workdir, args.last)
    if args.json:
        print(json.dumps(report.to_json(), indent=2))
        return 0

    from rich.table import Table

    from meridian.console import make_console

    console = make_console()
    if report.corrections:
        table = Table(title="corrections (ratio = actual / predicted; actual = active time)",
                      box=None, pad_edge=False)
        for column in ("id", "gate", "predicted", "actual", "wall", "ratio", "how measured",
                       "root cause", "next action"):
            table.add_column(column, overflow="fold")
        for c in report.corrections:
            table.add_row(c.id[:8], c.gate, _hours(c.predicted_hours), _hours(c.actual_hours),
                          _hours(c.wall_hours), _ratio(c.ratio), _how(c), c.root_cause or "-",
                          c.next_action or "-")
        console.print(table)
        print("amend one: meridian memory add corrections --json "
              "'{\"gate\": \"GATE\", \"amends\": \"ID\", \"actual_hours\": HOURS}' "
              "(ID: the full id, from `meridian calibration --json`)")
    else:
        print("no corrections yet: one is written each time a gate passes")
    if report.multiplier is None:
        print("multiplier: none yet (no correction with both predicted and actual hours)")
    else:
        print(f"multiplier: {_ratio(report.multiplier)} (median ratio of the last {report.sample} "
              f"correction(s); window {report.window})")
    if report.suggestions:
        table = Table(title="open gates", box=None, pad_edge=False)
        for column in ("gate", "estimate", "from", "suggested"):
            table.add_column(column)
        for s in report.suggestions:
            table.add_row(s.gate, _hours(s.estimate_hours), s.estimate_source,
                          _hours(s.suggested_hours))
        console.print(table)
    return 0
