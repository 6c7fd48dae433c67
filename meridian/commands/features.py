"""``meridian features``: working and hardened features, computed from a JUnit report."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from meridian.features import CompletionReport


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--junit", required=True, metavar="REPORT.xml",
                        help="JUnit XML report of a test run (pytest: --junitxml=REPORT.xml)")
    parser.add_argument("--features", metavar="PATH",
                        help="features file (default: paths.features of .meridian/config.yaml, "
                        ".meridian/features.yaml)")
    parser.add_argument("--json", action="store_true", help="print the full report as JSON")
    parser.add_argument("--no-record", action="store_true",
                        help="do not store the result as a features.computed event")


def run(args: argparse.Namespace) -> int:
    import sys
    from pathlib import Path

    from meridian import features
    from meridian.config import load_config
    from meridian.errors import NotARepository
    from meridian.ledger import Ledger

    ledger: Ledger | None
    try:
        ledger = Ledger.open(".")
        root = ledger.workdir or Path.cwd()
    except NotARepository:
        ledger, root = None, Path.cwd()
    path = Path(args.features) if args.features else root / load_config(root).paths.features
    report = features.compute(path, Path(args.junit))

    recorded = False
    if ledger is not None and ledger.exists() and not args.no_record:
        ledger.emit(features.FEATURES_COMPUTED, report.event_data(),
                    summary=f"features: {report.working}/{report.total} working, "
                    f"{report.hardened}/{report.total} hardened")
        recorded = True

    if args.json:
        sys.stdout.write(report.model_dump_json(indent=2) + "\n")
        return 0
    _print(report, recorded)
    return 0


def _print(report: CompletionReport, recorded: bool) -> None:
    from rich.markup import escape
    from rich.table import Table

    from meridian.console import make_console

    console = make_console()
    if not report.features:
        console.print(f"no features listed in {escape(report.features_file)}")
        return
    table = Table(box=None, pad_edge=False)
    for column in ("feature", "working", "hardened", "missing"):
        table.add_column(column, overflow="fold")
    for status in report.features:
        table.add_row(
            escape(status.id),
            "[green]yes[/]" if status.working else "[red]no[/]",
            "[green]yes[/]" if status.hardened else "[red]no[/]",
            escape("\n".join(status.missing)),
        )
    console.print(table)
    console.print(
        f"working {report.working}/{report.total} ({report.working_pct:.1f}%), "
        f"hardened {report.hardened}/{report.total} ({report.hardened_pct:.1f}%) "
        f"from {report.tests_in_report} tests in {escape(report.junit)}"
        + ("" if recorded else " (not recorded: no state branch or --no-record)")
    )
