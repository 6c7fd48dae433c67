"""``meridian status [--json] [--strict]``: every gate in dependency order with its state.

Status tells the truth about where its answer comes from:

- a project with ``.meridian/config.yaml`` and no state branch is an error (exit 2), not
  a fresh project: the gate history is missing, and the message says how to get it
  back (``meridian sync`` when the remote has it, the last state commit this clone saw,
  a fetch from another clone) or start a new one on purpose (``meridian init``);
- when the remote-tracking branch (as of the last fetch; status never opens the
  network) has state commits this clone lacks, the listing says so and names
  ``meridian sync``.
"""

from __future__ import annotations

import argparse
from typing import Any


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print the statuses as JSON")
    parser.add_argument("--strict", action="store_true",
                        help="exit 1 when a passed gate is stale (its artifacts or its "
                        "definition changed since the verdict, or a gate it needs was "
                        "reopened), a pass is forged or inconsistent, or the state branch "
                        "was rewound locally")


def _last_seen_tip(project: Any) -> str | None:
    """The newest state commit still in this repository that no branch reaches: the
    deleted branch's tip (until `git gc` prunes it), else the one the hooks' caches name."""
    import json

    from meridian import gitio
    from meridian.gates.snapshot import cache_path as snapshot_path
    from meridian.verify import cache_path as verified_path

    found: dict[str, gitio.CommitInfo] = {}
    for oid in gitio.unreachable_commits(project.repo):
        info = gitio.commit_info(project.repo, gitio.Oid(hex=oid))
        if "Meridian-Event" in info.trailers or "Meridian-Record" in info.trailers:
            found[oid] = info
    parents = {str(p) for info in found.values() for p in info.parents}
    tips = sorted((i for o, i in found.items() if o not in parents), key=lambda i: i.time)
    if tips:
        return str(tips[-1].oid)
    cached = []
    try:
        cached.append(verified_path(project.ledger).read_text().strip())
    except OSError:
        pass
    try:
        cached.append(str(json.loads(snapshot_path(project.repo, project.ledger.branch)
                                     .read_text())["tip"]))
    except (OSError, ValueError, KeyError, TypeError):
        pass
    for candidate in cached:
        try:
            gitio.commit_info(project.repo, gitio.Oid(hex=candidate))
            return candidate
        except (ValueError, KeyError, AssertionError):
            continue
    return None


def missing_branch_error(project: Any) -> str:
    """Why a configured project without its state branch cannot be shown, and the way out."""
    from meridian import gitio

    ledger, remote = project.ledger, project.config.remote
    branch = ledger.branch
    tracking = gitio.ref_target(project.repo, ledger.remote_refname(remote))
    head = (f"no state branch {branch} in this repository, although .meridian/config.yaml "
            "says it uses Meridian: the gate history is missing, not empty, so the gates "
            "cannot be shown")
    if tracking is not None:
        return (f"{head}. The remote {remote} has it ({remote}/{branch} at "
                f"{str(tracking)[:10]}, as of the last fetch): run `meridian sync` to bring it "
                "here")
    ways = []
    seen = _last_seen_tip(project)
    if seen is not None:
        ways.append(f"`git branch {branch} {seen[:12]}` restores the last state commit this "
                    "clone saw (then `meridian verify`)")
    if gitio.has_remote(project.repo, remote):
        ways.append(f"`meridian sync` fetches it from {remote} if {remote} has it")
    ways.append(f"from another clone that has it: `git fetch CLONE {branch}:{branch}`")
    ways.append("to start a new, empty history on purpose: `meridian init`")
    return f"{head}. Restore it: " + "; or ".join(ways)


def remote_state(project: Any) -> dict[str, Any] | None:
    """How the local state branch compares with the remote-tracking one (None: no remote
    branch known here). Counts are commits, as of the last fetch."""
    from meridian import gitio

    ledger, remote = project.ledger, project.config.remote
    tracking = gitio.ref_target(project.repo, ledger.remote_refname(remote))
    local = ledger.tip()
    if tracking is None or local is None:
        return None
    from meridian.state_catchup import remote_note

    behind = sum(1 for _ in gitio.walk(project.repo, tracking, hide=[local]))
    ahead = sum(1 for _ in gitio.walk(project.repo, local, hide=[tracking]))
    return remote_note(remote, ledger.branch, behind, ahead)


def run(args: argparse.Namespace) -> int:
    from meridian.commands import status_view

    # The answer kept from an earlier run, when nothing it depends on changed and it
    # shows no pass (``status_view``): printed without opening the repository.
    shown = status_view.answer(args.json, args.strict)
    if shown is not None:
        return shown

    import json
    import sys

    from meridian import harness
    from meridian.config import CONFIG_PATH
    from meridian.errors import MeridianError
    from meridian.gates.project import open_project
    from meridian.gates.report import identity_lines, status_lines, summary_line
    from meridian.gates.snapshot import recent_harness, trusted_snapshot
    from meridian.gates.state import derive_states, stale_reason

    project = open_project(".")
    facts = {"branch": project.ledger.branch, "remote": project.config.remote,
             "gates_path": project.config.paths.gates, "rules_path": project.config.paths.rules,
             "features_path": project.config.paths.features}
    before = status_view.key_now(facts)
    if not project.ledger.exists() and (project.root / CONFIG_PATH).is_file():
        raise MeridianError(missing_branch_error(project))
    # The snapshot of the gate fold (passes re-checked on their commits), caught up with
    # what was appended since; harness changes are shown, not written: status only reads
    # (gate commands and `meridian ci` catch up).
    snapshot = trusted_snapshot(project.ledger)
    changes = recent_harness(project.ledger, snapshot)
    statuses = list(derive_states(project.ledger, project.graph,
                                  folds=snapshot.gate_folds(project.graph)).values())
    stale_statuses = [s for s in statuses if s.state == "stale"]
    stale = [s.gate for s in stale_statuses]
    remote = remote_state(project)
    document = {"branch": project.ledger.branch, "gates": [s.to_json() for s in statuses],
                "stale": stale, "remote": remote,
                "harness_changes": [{"ts": r.ts, **r.data} for r in changes]}
    text = [*status_lines(statuses), *identity_lines(statuses), summary_line(statuses)]
    if remote is not None and remote["hint"]:
        text.append(f"note: {remote['hint']}")
    if changes:
        text.append("harness changes, latest first (meridian log --kind harness.changed):")
        text.extend(f"  {harness.line(record)}" for record in changes)
    if args.json:
        print(json.dumps(document, indent=2))
    else:
        for line in text:
            print(line)
    from meridian.verify import pending_evidence, rewound, rewound_text

    # A branch rewound here (a tip the verified-tip marker or the reflog remembers is no
    # longer on it): the gates shown may hide what that tip recorded (a human's reopen).
    lost = rewound(project.ledger)
    if lost is not None:
        print(f"meridian: warning: {rewound_text(project.ledger, lost, None)}", file=sys.stderr)
    # (``rewound`` keeps what it found as evidence: said above, and no view is stored)
    evidence = pending_evidence(project.ledger) if lost is None else []
    if evidence:
        print(f"meridian: warning: tampering found earlier and not acknowledged "
              f"({len(evidence)} problem(s)), first: {evidence[0]}; see `meridian verify`; "
              "a human acknowledges it with `meridian verify --acknowledge REASON`",
              file=sys.stderr)
    elif lost is None and before is not None and str(before[0]) == str(project.root):
        status_view.store(before, facts, json.loads(json.dumps(document)), text)
    forged = [s for s in statuses if s.state == "forged"]
    if args.strict and forged:
        reasons = "; ".join(f"{s.gate}: {s.forged_reason}" for s in forged)
        print(f"meridian: forged or inconsistent pass(es): {reasons}", file=sys.stderr)
    if args.strict and stale:
        reasons = "; ".join(f"{s.gate}: {stale_reason(s)}" for s in stale_statuses)
        print(f"meridian: stale gate(s): {reasons}; submit them again", file=sys.stderr)
    return 1 if args.strict and (stale or forged or lost is not None) else 0
