"""``meridian why GATE [--json]``: the story of a gate, each submission, verdict and block."""

from __future__ import annotations

import argparse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("gate", metavar="GATE")
    parser.add_argument("--json", action="store_true", help="print the story as JSON")


def run(args: argparse.Namespace) -> int:
    import json

    from meridian.gates.lifecycle import open_project
    from meridian.gates.report import story_lines
    from meridian.gates.snapshot import trusted_folds
    from meridian.gates.state import derive_states
    from meridian.gates.story import gate_story

    project = open_project(".")
    project.graph.gate(args.gate)
    status = derive_states(project.ledger, project.graph,
                           folds=trusted_folds(project.ledger, project.graph))[args.gate]
    entries = gate_story(project.ledger, project.graph, args.gate)
    if args.json:
        print(json.dumps({
            "gate": args.gate, "status": status.to_json(),
            "story": [{"id": r.id, "ts": r.ts, "kind": r.kind, "writer": r.writer, "data": r.data,
                       **({"verdict_document": doc} if doc is not None else {})}
                      for r, doc in entries],
        }, indent=2))
        return 0
    for line in story_lines(args.gate, status, entries, project.ledger.branch):
        print(line)
    return 0
