"""``meridian calibration``: predicted vs actual hours, and the project's multiplier."""

from __future__ import annotations

import argparse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--last", type=int, default=10, metavar="N",
                        help="the multiplier is the median ratio of the last N corrections "
                             "(default 10)")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")


def _hours(value: float | None) -> str:
    return "-" if value is None else f"{value:.3g}"


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
        table = Table(title="corrections (ratio = actual / predicted)", box=None, pad_edge=False)
        for column in ("gate", "predicted h", "actual h", "ratio", "root cause", "next action"):
            table.add_column(column, overflow="fold")
        for c in report.corrections:
            table.add_row(c.gate, _hours(c.predicted_hours), _hours(c.actual_hours),
                          _hours(c.ratio), c.root_cause or "-", c.next_action or "-")
        console.print(table)
    else:
        print("no corrections yet: one is written each time a gate passes")
    if report.multiplier is None:
        print("multiplier: none yet (no correction with both predicted and actual hours)")
    else:
        print(f"multiplier: {report.multiplier:g} (median ratio of the last {report.sample} "
              f"correction(s); window {report.window})")
    if report.suggestions:
        table = Table(title="open gates", box=None, pad_edge=False)
        for column in ("gate", "estimate h", "from", "suggested h"):
            table.add_column(column)
        for s in report.suggestions:
            table.add_row(s.gate, _hours(s.estimate_hours), s.estimate_source,
                          _hours(s.suggested_hours))
        console.print(table)
    return 0
