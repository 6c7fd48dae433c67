"""``meridian baseline``: pin evaluation runs as named baselines (git tags).

    meridian baseline pin NAME [RUN]     tag meridian/baseline/NAME on the state commit
                                         that wrote RUN (default: latest)
    meridian baseline list [--json]

The CI gate is then ``meridian eval compare latest baseline:NAME --fail-on-regression``.
Pinning a name again moves its tag; every pin is a ``baseline.pinned`` event, so the
history of a baseline is in ``meridian log --kind baseline``.
"""

from __future__ import annotations

import argparse

PINS_LISTED = 20


def add_arguments(parser: argparse.ArgumentParser) -> None:
    verbs = parser.add_subparsers(dest="verb", required=True, metavar="VERB")
    p = verbs.add_parser("pin", help="pin a run as baseline NAME (a tag on the state branch)")
    p.add_argument("name", metavar="NAME", help="baseline name (letters, digits, . _ -)")
    p.add_argument("run", nargs="?", default="latest", metavar="RUN",
                   help="run id prefix, latest, latest~N or baseline:NAME (default: latest)")
    p = verbs.add_parser("list", help="baselines and the runs they pin")
    p.add_argument("--json", action="store_true", help="one JSON object per line")


def run(args: argparse.Namespace) -> int:
    import json

    from meridian.evals import store
    from meridian.ledger import Ledger

    ledger = Ledger.open(".")
    if args.verb == "pin":
        run_id = store.resolve(ledger, args.run)
        baseline = store.pin_baseline(ledger, args.name, run_id)
        print(f"baseline {baseline.name} -> run {run_id} "
              f"(tag {store.BASELINE_PREFIX}{baseline.name} at {baseline.commit[:12]})")
        from meridian.harness import agent_session_active

        if agent_session_active():
            import sys

            now = next((b for b in store.baselines(ledger) if b.name == baseline.name), None)
            used = (f"run {now.run_id}, the latest pin made outside one" if now and now.run_id
                    else "no run (no pin was made outside one)")
            print(f"meridian: warning: pinned in an agent session (CLAUDECODE is set): a pin "
                  f"made in one is never the baseline; pre-push, `eval compare "
                  f"baseline:{baseline.name}` and CI use {used}, and the CI job fails until a "
                  "human pins the baseline outside an agent session", file=sys.stderr)
        return 0
    from meridian.evals.pins import history

    index = {entry.run_id: entry for entry in store.index(ledger, include_pruned=True)}
    pins = history(ledger)
    rows = []
    known = store.baselines(ledger)
    for baseline in known:
        entry = index.get(baseline.run_id or "")
        rows.append({
            "name": baseline.name, "run_id": baseline.run_id, "commit": baseline.commit,
            "suite": entry.data.suite if entry else None,
            "agent": f"{entry.data.agent}@{entry.data.agent_version}" if entry else None,
            "passed": entry.data.passed if entry else None,
            "graded": entry.data.passed + entry.data.failed if entry else None,
            # the tag meridian/baseline/NAME moved or deleted with git alone ("" deleted):
            # the pinned baseline is the event's, the tag only its export
            "tag_differs": baseline.tag_differs,
            "pinned_at": baseline.pinned_at,
            # pins made in an agent session after this one: never the baseline; the CI
            # workflow fails while there is one (docs/ci.md)
            "agent_pins": [{"run_id": p.run_id, "commit": p.commit, "ts": p.ts}
                           for p in baseline.untrusted],
            # the newest pins of the name, oldest first (`meridian log --kind baseline`)
            "pins": [{"run_id": p.run_id, "ts": p.ts, "agent_session": p.agent_session}
                     for p in pins.get(baseline.name, [])[-PINS_LISTED:]],
        })
    if args.json:
        for row in rows:
            print(json.dumps(row, sort_keys=True))
        return 0
    if not rows:
        print("no baselines (pin one with `meridian baseline pin NAME [RUN]`)")
        return 0
    for row, baseline in zip(rows, known, strict=True):
        detail = (f"{row['suite']} {row['agent']} {row['passed']}/{row['graded']} passed"
                  if row["suite"] else "(run not in the index)")
        moved = row["tag_differs"]
        if isinstance(moved, str):
            detail += ("  (its tag " + (f"was moved to {moved[:12]} outside Meridian" if moved
                                          else "is missing: deleted outside Meridian, or not "
                                          "fetched") + "; `meridian sync` puts it back)")
        if baseline.untrusted:
            latest = baseline.untrusted[-1]
            detail += (f"  (re-pinned in an agent session to run {latest.run_id} at "
                       f"{latest.ts[:19]}Z: not used; a human pins it outside one)")
        print(f"{row['name']:<20}{row['run_id'] or '-':<14}{detail}")
    return 0
