"""``meridian verify``: prove the state branch is append-only and every record valid."""

from __future__ import annotations

import argparse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--full", action="store_true",
                        help="re-check every commit, ignoring the cached last verified commit")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")


def run(args: argparse.Namespace) -> int:
    import json

    from meridian.ledger import Ledger
    from meridian.verify import verify

    ledger = Ledger.open(".")
    if not ledger.exists():
        from meridian.errors import MeridianError

        raise MeridianError(f"no state branch {ledger.branch}: run `meridian init` first")
    report = verify(ledger, full=args.full)
    if args.json:
        print(json.dumps({
            "ok": report.ok, "tip": report.tip, "commits_checked": report.commits,
            "incremental": report.incremental,
            "problems": [{"commit": p.commit, "path": p.path, "line": p.line,
                          "record": p.record, "reason": p.reason} for p in report.problems],
        }, indent=2))
    else:
        for problem in report.problems:
            print(f"TAMPERED {problem}")
        scope = "new commits" if report.incremental else "commits"
        status = "OK" if report.ok else f"FAILED ({len(report.problems)} problem(s))"
        print(f"{ledger.branch}: {status}; checked {report.commits} {scope} up to {report.tip[:12] if report.tip else '-'}")
    return 0 if report.ok else 1
