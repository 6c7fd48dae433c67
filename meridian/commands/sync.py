"""``meridian sync [REMOTE]``: merge the state branch with a remote's, by record id."""

from __future__ import annotations

import argparse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("remote", nargs="?", help="git remote (default: `remote` in config, origin)")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")


def run(args: argparse.Namespace) -> int:
    import json
    from dataclasses import asdict

    from meridian.config import load_config
    from meridian.ledger import Ledger
    from meridian.sync import sync

    ledger = Ledger.open(".")
    remote = args.remote or load_config(ledger.workdir).remote
    result = sync(ledger, remote)
    if args.json:
        print(json.dumps(asdict(result), indent=2))
        return 0
    described = {
        "nothing": "nothing to sync",
        "adopted": "adopted the remote state branch",
        "up-to-date": "remote had nothing new",
        "fast-forward": "fast-forwarded to the remote",
        "merged": f"merged {result.added} record(s) from the remote",
    }[result.action]
    pushed = "; pushed" if result.pushed else ""
    print(f"{ledger.branch} <-> {remote}: {described}{pushed}"
          + (f" (after {result.attempts} attempts)" if result.attempts > 1 else ""))
    return 0
