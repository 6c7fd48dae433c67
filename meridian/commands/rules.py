"""``meridian rules``: the rules the harness enforces; retire or activate one."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from meridian.rules import Edited


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--due", action="store_true",
                        help="only active rules whose review date has come")
    parser.add_argument("--json", action="store_true", help="print the rules as JSON")
    verbs = parser.add_subparsers(dest="verb", required=False, metavar="VERB")
    retire = verbs.add_parser("retire", help="retire a rule: its mechanism is switched off")
    retire.add_argument("rule_id", metavar="ID")
    retire.add_argument("--reason", required=True, help="why (kept in the rules file)")
    activate = verbs.add_parser("activate", help="activate a rule: its mechanism is switched on")
    activate.add_argument("rule_id", metavar="ID")


def run(args: argparse.Namespace) -> int:
    from meridian import gitio

    root = gitio.workdir(gitio.open_repo(".")) or Path(".")
    if args.verb == "retire":
        from meridian.rules import retire_rule

        return _report_edit(retire_rule(root, args.rule_id, args.reason))
    if args.verb == "activate":
        from meridian.rules import activate_rule

        return _report_edit(activate_rule(root, args.rule_id))
    return _list(root, args)


def _report_edit(edited: Edited) -> int:
    from meridian.rules import MECHANISMS
    from meridian.yamlio import display_path

    rule = edited.rule
    shown = display_path(edited.path)
    if not edited.changed:
        print(f"rule {rule.id} is already {rule.status}; {shown} unchanged")
        return 0
    state = "off" if rule.status == "retired" else "on"
    print(f"rule {rule.id} is now {rule.status}: {rule.mechanism} is switched {state} "
          f"({MECHANISMS[rule.mechanism]})")
    if not edited.comments_kept:
        print(f"note: {shown} was rewritten; its comments and layout were not kept")
    return 0


def _list(root: Path, args: argparse.Namespace) -> int:
    import datetime as dt
    import json

    from meridian.rules import due_rules, load_rules, rules_path
    from meridian.yamlio import display_path

    path = rules_path(root)
    shown = display_path(path)
    rules = due_rules(root) if args.due else load_rules(root)
    if args.json:
        print(json.dumps([rule.to_json() for rule in rules], indent=2))
        return 0
    if not path.is_file():
        print(f"{shown} not found: every mechanism is on "
              "(`meridian init` writes the default rules)")
        return 0
    if not rules:
        print("no rule is due for review" if args.due else f"{shown} lists no rules")
        return 0

    # One block per rule: the rule and its failure mode are sentences, not table cells.
    today = dt.date.today()
    for rule in rules:
        triggers = []
        if rule.review.date:
            due = " (due)" if rule.due(today) else ""
            triggers.append(f"on {rule.review.date.isoformat()}{due}")
        if rule.review.condition:
            triggers.append(f"when {rule.review.condition}")
        status = "active" if rule.active else (
            f"RETIRED {rule.retired_on or ''}: {rule.retired_reason}".replace(" :", ":"))
        print(f"{rule.id}  [{status}]  {rule.mechanism}")
        print(f"  rule:           {rule.rule}")
        print(f"  guards against: {rule.failure_mode}")
        print(f"  review:         {' or '.join(triggers)}")
    return 0
