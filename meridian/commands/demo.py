"""``meridian demo``: a one-minute offline tour in a throwaway repository."""

from __future__ import annotations

import argparse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--keep", action="store_true",
                        help="keep the throwaway repository and print where it is")
    parser.add_argument("--dir", metavar="PATH",
                        help="build the demo repository in PATH (must be empty; kept)")


def run(args: argparse.Namespace) -> int:
    from meridian.demo import run_demo

    return run_demo(keep=args.keep, directory=args.dir)
