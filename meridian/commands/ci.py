"""``meridian ci [--base REV] [--all] [--reevaluate] [--summary FILE] [--json]``: re-derive every
pass from scratch, as CI (the authority outside the agent's reach) does."""

from __future__ import annotations

import argparse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "in CI: re-derive every pass from scratch; exit 1 on one that does not reproduce. "
        "Run in CI, with CI's checkout and secrets: fetch the state branch, verify it from "
        "the root, re-derive every gate, and for every passed gate rebuild the artifact tree "
        "of the checked-out commit, compare it with the verdict's subject and re-run the "
        "gate's checks and the offline scan in a temporary worktree; list the harness "
        "changes of the range. Exit 1 when any pass does not reproduce.")
    parser.add_argument("--base", metavar="REV",
                        help="start of the pushed range (the pull request's base commit, the "
                        "push's previous tip): harness changes are listed from it, and a pass "
                        "that judged exactly what it held, with nothing in the range resting "
                        "on it, is listed as earlier instead of re-checked (default: the "
                        "whole history, every pass re-checked)")
    parser.add_argument("--all", action="store_true", dest="recheck_all",
                        help="re-check every standing pass, earlier ones too")
    parser.add_argument("--remote", help="remote to fetch the state branch from "
                        "(default: the config's remote)")
    parser.add_argument("--no-fetch", action="store_true",
                        help="check the local state branch as it is")
    parser.add_argument("--reevaluate", action="store_true",
                        help="also re-run the configured evaluator (with CI's own credentials)")
    parser.add_argument("--summary", metavar="FILE",
                        help="append the markdown summary to FILE (it is also appended to "
                        "$GITHUB_STEP_SUMMARY when that is set)")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")


def run(args: argparse.Namespace) -> int:
    import json

    from meridian.ci import run_ci, write_summary

    report = run_ci(".", base=args.base, remote=args.remote, fetch=not args.no_fetch,
                    reevaluate=args.reevaluate, recheck_all=args.recheck_all)
    write_summary(report, args.summary)
    if args.json:
        print(json.dumps(report.to_json(), indent=2))
    else:
        print(report.markdown(), end="")
    return 0 if report.ok else 1
