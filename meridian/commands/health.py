"""``meridian health``: gates, calibration, evaluator, cost, completion, memory, evaluation."""

from __future__ import annotations

import argparse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument("--html", metavar="FILE",
                        help="write the report as one self-contained HTML file with charts "
                        "(instead of printing the tables)")


def run(args: argparse.Namespace) -> int:
    import sys
    from pathlib import Path

    from meridian.errors import MeridianError
    from meridian.health import build_report
    from meridian.ledger import Ledger

    ledger = Ledger.open(".")
    if not ledger.exists():
        raise MeridianError(f"no state branch {ledger.branch}: run `meridian init` first")
    report = build_report(ledger, ledger.workdir)

    if args.html:
        from meridian.health import render_html

        target = Path(args.html)
        try:
            target.write_text(render_html.render(report), encoding="utf-8")
        except OSError as exc:
            raise MeridianError(f"--html {args.html}: cannot write: {exc.strerror or exc}") from None
    if args.json:
        sys.stdout.write(report.model_dump_json(indent=2) + "\n")
        return 0
    if args.html:
        # The page is the report: printing every table too would bury this line.
        print(f"wrote {args.html} ({report.events} events, {report.gates.total} gates; "
              "open it in a browser)")
        return 0

    from meridian.health import render_terminal

    render_terminal.render(report)
    return 0
