"""``meridian init``: config, state branch, rules, template, hooks. Idempotent."""

from __future__ import annotations

import argparse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--template", metavar="NAME", help="copy a gate graph template "
                        "(see --list-templates) into .meridian/gates.yaml")
    parser.add_argument("--list-templates", action="store_true", help="list templates and exit")
    parser.add_argument("--no-hooks", action="store_true", help="do not install git hooks")
    parser.add_argument("--claude", action="store_true",
                        help="add Meridian's hooks to .claude/settings.json")
    parser.add_argument("--ci", choices=["github"], help="copy a CI workflow template")
    parser.add_argument("--features", action="store_true",
                        help="write a commented .meridian/features.yaml for `meridian features` "
                        "(never overwrites one)")


def run(args: argparse.Namespace) -> int:
    from meridian import init

    if args.list_templates:
        from meridian import templates

        for name in templates.list_templates():
            print(name)
        return 0
    outcome = init.initialise(
        ".", template=args.template, hooks=not args.no_hooks, claude=args.claude, ci=args.ci,
        features=args.features,
    )
    for line in outcome.lines():
        print(line)
    return 0
