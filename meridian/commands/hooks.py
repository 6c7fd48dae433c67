"""``meridian hooks install|uninstall|snippet``: Meridian's git hooks in this repository."""

from __future__ import annotations

import argparse
import sys


def add_arguments(parser: argparse.ArgumentParser) -> None:
    verbs = parser.add_subparsers(dest="verb", required=True, metavar="VERB",
                                  parser_class=type(parser))
    install = verbs.add_parser(
        "install", help="write the pre-commit and pre-push stubs into .git/hooks "
        "(an existing hook is kept and still runs)",
        description="Install Meridian's pre-commit and pre-push stubs. Idempotent; an existing "
        "hook is kept as <hook>.meridian-chained and runs first. Refuses when core.hooksPath "
        "is set (see `meridian hooks snippet`).")
    install.add_argument("--json", action="store_true", help="print what changed as JSON")
    uninstall = verbs.add_parser(
        "uninstall", help="remove Meridian's stubs and restore the hooks they chained",
        description="Remove Meridian's stubs; a chained hook is put back where it was.")
    uninstall.add_argument("--json", action="store_true", help="print what changed as JSON")
    uninstall.add_argument("--claude", action="store_true",
                           help="also remove Meridian's hooks from .claude/settings.json and "
                           "its MERIDIAN_PYTHON from .claude/settings.local.json (what "
                           "`meridian init --claude` added, and only that)")
    snippet = verbs.add_parser(
        "snippet", help="print the .pre-commit-config.yaml entries for the pre-commit framework",
        description="The `repo: local` entries that run Meridian's hooks through the "
        "pre-commit framework (for repositories with core.hooksPath or their own hook manager). "
        "By default the framework builds its own environment with meridian-gates in it "
        "(`language: python`), so no virtual environment needs to be active and the entries "
        "can be committed; --python PATH runs an interpreter you choose instead.",
        epilog="example (no .pre-commit-config.yaml yet; otherwise merge the `repos` entry):\n"
        "  meridian hooks snippet > .pre-commit-config.yaml\n"
        "  pre-commit install --hook-type pre-commit --hook-type pre-push",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    snippet.add_argument("--python", metavar="PATH", nargs="?", const=sys.executable,
                         help="run the hooks with this absolute interpreter (`language: "
                         "system`; this machine only); without PATH, the Python running "
                         "this command")


def run(args: argparse.Namespace) -> int:
    import json

    if args.verb == "snippet":
        from meridian.hooks import snippet

        print(snippet.render(args.python), end="")
        return 0

    from meridian import gitio
    from meridian.hooks import install

    repo = gitio.open_repo(".")
    changes = install.install(repo) if args.verb == "install" else install.uninstall(repo)
    claude: list[str] = []
    if args.verb == "uninstall" and getattr(args, "claude", False):
        from meridian.hooks import claude_settings

        root = gitio.workdir(repo)
        claude = claude_settings.remove_from(root) if root is not None else []
    if args.json:
        document = {"hooks_dir": str(gitio.hooks_dir(repo)),
                    "changes": [c.to_json() for c in changes]}
        if getattr(args, "claude", False):
            document["claude"] = claude
        print(json.dumps(document, indent=2))
    else:
        for change in changes:
            print(change.describe())
        for line in claude:
            print(line)
    return 0
