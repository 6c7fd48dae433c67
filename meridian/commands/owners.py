"""``meridian owners PATH... [--json]``: which gates own a path, and what committing it does.

The answer is the rule the pre-commit and Claude Code hooks apply
(``meridian.hooks.gate_view.decide_path``): a path is refused only when every gate that
owns it is locked; a change to a passed gate's file is allowed and makes that gate stale.
Here the states are fully derived (``derive_states`` over the trusted gate snapshot,
as ``status`` does), so an already stale owner shows as
``stale``; one whose need was taken back shows ``locked``, as the hooks treat it
(``gate_view.owner_states``). Exit 0 when every path may be committed, 2 when one would be refused.
"""

from __future__ import annotations

import argparse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="+", metavar="PATH",
                        help="a file (relative to the current directory); it need not exist")
    parser.add_argument("--json", action="store_true", help="print the decisions as JSON")


def _repo_relative(root: object, given: str) -> str:
    import os
    from pathlib import Path

    from meridian.errors import MeridianError
    from meridian.gates.globs import normalise

    absolute = Path(os.path.abspath(given))
    try:
        relative = absolute.relative_to(Path(str(root)))
    except ValueError:
        raise MeridianError(f"{given}: not inside the repository ({root})") from None
    text = normalise(relative.as_posix())
    if text in ("", "."):
        raise MeridianError(f"{given}: the repository root is not a file; name a path in it")
    if absolute.is_dir():
        # Gates own files: "src" itself matches no "src/**", which would read "no gate".
        raise MeridianError(f"{given}: a directory; name a file in it (e.g. {text}/FILE)")
    return text


def run(args: argparse.Namespace) -> int:
    import json

    from meridian.gates.lifecycle import open_project
    from meridian.gates.snapshot import trusted_folds
    from meridian.gates.state import derive_states
    from meridian.hooks.gate_view import decide_path, owner_states

    project = open_project(".")
    paths = [_repo_relative(project.root, given) for given in args.paths]
    # The hooks' notion of locked (a passed gate whose need was taken back waits too),
    # from the gate snapshot (what is new since it folded on; passes re-checked on their
    # commits), as `status` derives it: the cost does not follow the history.
    states, unmet = owner_states(derive_states(
        project.ledger, project.graph, folds=trusted_folds(project.ledger, project.graph)))
    decisions = [decide_path(path, [(g, states[g]) for g in project.graph.gate_for_path(path)],
                             unmet) for path in paths]
    if args.json:
        print(json.dumps({"paths": [d.to_json() for d in decisions]}, indent=2))
    else:
        for decision in decisions:
            owners = ", ".join(f"{g} ({s})" for g, s in decision.owners) or "(no gate)"
            print(f"{decision.path}: {owners}")
            print(f"  commit: {decision.effect}")
    return 0 if all(d.allowed for d in decisions) else 2
