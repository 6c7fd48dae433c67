"""``meridian verify``: prove the state branch is append-only and every record valid."""

from __future__ import annotations

import argparse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--full", action="store_true",
                        help="re-check every commit, ignoring the cached last verified commit")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument("--acknowledge", metavar="REASON",
                        help="a human acknowledges the tampering found earlier (kept in "
                        ".git/meridian and reported until then); recorded on the branch with "
                        "REASON; needs a terminal")


def run(args: argparse.Namespace) -> int:
    import json

    from meridian.errors import MeridianError
    from meridian.ledger import Ledger
    from meridian.verify import verify

    ledger = Ledger.open(".")
    if not ledger.exists():
        raise MeridianError(f"no state branch {ledger.branch}: run `meridian init` first")
    if args.acknowledge is not None:
        import sys

        from meridian.verify import acknowledge

        if not args.acknowledge.strip():
            raise MeridianError("--acknowledge: say why the tampering is acknowledged")
        if not sys.stdin.isatty():
            raise MeridianError("--acknowledge needs a terminal: a human acknowledges "
                                "tampering, an agent must not do it on their behalf")
        covered = acknowledge(ledger, args.acknowledge.strip())
        if not covered:
            print(f"{ledger.branch}: no tampering evidence to acknowledge")
        for text in covered:
            print(f"acknowledged: {text}")
        return 0
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
        scope = ("new " if report.incremental else "") + ("commit" if report.commits == 1
                                                         else "commits")
        status = "OK" if report.ok else f"FAILED ({len(report.problems)} problem(s))"
        print(f"{ledger.branch}: {status}; checked {report.commits} {scope} up to {report.tip[:12] if report.tip else '-'}")
    return 0 if report.ok else 1
