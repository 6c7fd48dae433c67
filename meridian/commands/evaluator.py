"""``meridian evaluator bench``: measure an evaluator on a corpus of known cases.

    meridian evaluator bench [--evaluator KIND] [--corpus DIR] [--json] [--min-recall R]
                             [--config FILE] [--case GLOB]...

Each case runs through the real gate path in a throwaway repository (init, start,
submit); the report gives recall on planted defects and the false-block rate on clean
idioms, per class. Exit 0 when recall >= --min-recall and no clean case was blocked,
1 otherwise, 2 for a corpus that cannot be read. The corpus format is documented in
``meridian/evaluators/bench.py`` and docs/gates.md.

A model evaluator (anthropic, claude-code, command) is given the ``evaluator:`` settings
of ``--config FILE`` (default: ./.meridian/config.yaml when there is one) with its kind
overridden; each case's cost is printed (unknown when the model has no price), and a
case whose evaluator was unavailable is reported apart (exit 1: the run is incomplete).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from meridian.config import EvaluatorSettings

KINDS = ("heuristic", "anthropic", "claude-code", "command")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    verbs = parser.add_subparsers(dest="verb", required=True, metavar="VERB")
    from meridian.help_examples import EXAMPLES

    p = verbs.add_parser(
        "bench", help="recall and false-block rate on a corpus of cases",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="examples:\n"
               f"  {EXAMPLES['evaluator bench']}\n"
               "  meridian evaluator bench --evaluator anthropic --config bench.yaml "
               "--case 'py-stub-*' --json\n"
               "    (a model: its settings from bench.yaml, cost per case; see docs/gates.md)")
    p.add_argument("--evaluator", choices=KINDS, default="heuristic",
                   help="evaluator kind to measure (default: heuristic, offline)")
    p.add_argument("--corpus", metavar="DIR",
                   help="directory of *.yaml cases (default: the corpus shipped with Meridian)")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument("--min-recall", type=float, default=0.95, metavar="R",
                   help="exit 1 when recall on defects is below R (default: 0.95)")
    p.add_argument("--config", metavar="FILE",
                   help="a Meridian config.yaml whose evaluator: settings (model, base_url, "
                        "timeouts) a model evaluator runs with (default: ./.meridian/config.yaml)")
    p.add_argument("--case", action="append", metavar="GLOB", default=[],
                   help="run only the cases whose id matches GLOB (repeatable), e.g. to "
                        "bound what a real API run costs")


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
    if args.case:
        from fnmatch import fnmatchcase

        cases = [c for c in cases if any(fnmatchcase(c.id, g) for g in args.case)]
        if not cases:
            print(f"meridian: --case: no case id matches {', '.join(args.case)}",
                  file=sys.stderr)
            return 2
    settings = None
    if args.evaluator != "heuristic":
        from meridian.config import Config, load_config

        if args.config:
            config_file = Path(args.config)
            if not config_file.is_file():
                print(f"meridian: --config {args.config}: no such file", file=sys.stderr)
                return 2
            settings = _load_settings(config_file)
        elif (Path.cwd() / ".meridian" / "config.yaml").is_file():
            settings = load_config(Path.cwd()).evaluator
        else:
            settings = Config().evaluator
    quiet = args.json or not sys.stderr.isatty()

    def progress(number: int, total: int, result: bench.CaseResult) -> None:
        if not quiet:
            mark = "n/a" if result.unavailable is not None else "ok" if result.ok else "MISS"
            print(f"\r[{number}/{total}] {mark:<4} {result.id[:60]:<60}", end="",
                  file=sys.stderr, flush=True)

    evaluator = None if args.evaluator == "heuristic" else args.evaluator
    report = bench.run_bench(cases, evaluator, progress, settings)
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
    return 0 if recall_ok and total.false_blocks == 0 and total.unavailable == 0 else 1


def _load_settings(path: Path) -> EvaluatorSettings:
    """The ``evaluator:`` section of a config file anywhere (validated as config.yaml)."""
    from meridian import yamlio
    from meridian.config import Config

    located = yamlio.load(path)
    if located.data is None:
        return Config().evaluator
    if not isinstance(located.data, dict):
        raise located.error((), "expected a mapping of settings")
    return yamlio.validate(Config, located).evaluator
