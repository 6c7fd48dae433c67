"""``meridian evaluator bench``: measure an evaluator on a corpus of known cases.

    meridian evaluator bench [--evaluator KIND] [--corpus DIR] [--json] [--min-recall R]

Each case runs through the real gate path in a throwaway repository (init, start,
submit); the report gives recall on planted defects and the false-block rate on clean
idioms, per class. Exit 0 when recall >= --min-recall and no clean case was blocked,
1 otherwise, 2 for a corpus that cannot be read. The corpus format is documented in
``meridian/evaluators/bench.py`` and docs/gates.md.
"""

from __future__ import annotations

import argparse

KINDS = ("heuristic", "anthropic", "claude-code", "command")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    verbs = parser.add_subparsers(dest="verb", required=True, metavar="VERB")
    p = verbs.add_parser("bench", help="recall and false-block rate on a corpus of cases")
    p.add_argument("--evaluator", choices=KINDS, default="heuristic",
                   help="evaluator kind to measure (default: heuristic, offline)")
    p.add_argument("--corpus", metavar="DIR",
                   help="directory of *.yaml cases (default: the corpus shipped with Meridian)")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument("--min-recall", type=float, default=0.95, metavar="R",
                   help="exit 1 when recall on defects is below R (default: 0.95)")


def run(args: argparse.Namespace) -> int:
    import json
    import sys
    from pathlib import Path

    from meridian.evaluators import bench

    if not 0 <= args.min_recall <= 1:
        print(f"meridian: --min-recall: expected 0-1, got {args.min_recall:g}", file=sys.stderr)
        return 2
    corpus = Path(args.corpus) if args.corpus else bench.CORPUS_DIR
    cases = bench.load_corpus(corpus)
    quiet = args.json or not sys.stderr.isatty()

    def progress(number: int, total: int, result: bench.CaseResult) -> None:
        if not quiet:
            mark = "ok" if result.ok else "MISS"
            print(f"\r[{number}/{total}] {mark:<4} {result.id[:60]:<60}", end="",
                  file=sys.stderr, flush=True)

    evaluator = None if args.evaluator == "heuristic" else args.evaluator
    report = bench.run_bench(cases, evaluator, progress)
    if not quiet:
        print(file=sys.stderr)
    report.corpus = str(corpus)
    if args.json:
        print(json.dumps(report.to_json(), indent=2))
    else:
        for line in bench.iter_lines(report):
            print(line)
    total = report.total()
    recall_ok = total.recall is None or total.recall >= args.min_recall
    return 0 if recall_ok and total.false_blocks == 0 else 1
