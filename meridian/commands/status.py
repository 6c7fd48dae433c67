"""``meridian status [--json] [--strict]``: every gate in dependency order with its state."""

from __future__ import annotations

import argparse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print the statuses as JSON")
    parser.add_argument("--strict", action="store_true",
                        help="exit 1 when a passed gate is stale (its artifacts or its "
                        "definition changed since the verdict, or a gate it needs was "
                        "reopened) or a pass is forged or inconsistent")


def run(args: argparse.Namespace) -> int:
    import json
    import sys

    from meridian.gates.lifecycle import open_project
    from meridian.gates.report import identity_lines, status_lines, summary_line
    from meridian.gates.state import derive_states, stale_reason

    project = open_project(".")
    statuses = list(derive_states(project.ledger, project.graph).values())
    stale_statuses = [s for s in statuses if s.state == "stale"]
    stale = [s.gate for s in stale_statuses]
    if args.json:
        print(json.dumps({"branch": project.ledger.branch,
                          "gates": [s.to_json() for s in statuses], "stale": stale}, indent=2))
    else:
        for line in status_lines(statuses):
            print(line)
        for line in identity_lines(statuses):
            print(line)
        print(summary_line(statuses))
    forged = [s for s in statuses if s.state == "forged"]
    if args.strict and forged:
        reasons = "; ".join(f"{s.gate}: {s.forged_reason}" for s in forged)
        print(f"meridian: forged or inconsistent pass(es): {reasons}", file=sys.stderr)
    if args.strict and stale:
        reasons = "; ".join(f"{s.gate}: {stale_reason(s)}" for s in stale_statuses)
        print(f"meridian: stale gate(s): {reasons}; submit them again", file=sys.stderr)
    return 1 if args.strict and (stale or forged) else 0
