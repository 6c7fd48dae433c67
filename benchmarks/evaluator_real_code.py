"""The offline evaluator on real, mature code: false alarms per 10,000 lines, and a
planted stub caught through ``gate submit``.

For each library (default: attrs, cachetools, click, itsdangerous, more-itertools,
packaging) the sdist is fetched with ``pip download --no-deps --no-binary :all:`` and
unpacked, then:

1. whole-tree scan: every file the offline scan reads, judged as if all of it were new
   (no base commit); prints the high findings per 10,000 lines (target: at most 1);
2. adoption: the tree is committed in a throwaway repository with Meridian initialised
   (no hooks) and a gate whose artifacts are the package and its tests (``src/**`` and
   ``tests/**`` where they exist); after ``gate start`` a harmless edit (a comment line
   added to a module) is submitted and must pass (pre-existing findings do not block);
3. a stub planted in a changed line: one real function's body replaced by
   ``raise NotImplementedError``; ``gate submit`` must fail with a high finding at that
   file and line.

    python benchmarks/evaluator_real_code.py [--packages a b ...] [--cache DIR] [--json]
                                             [--show N]

Downloads need the network (or a pip index/mirror); this is a script, not a test.
Exit 1 when a target is missed (a library above 1 high per 10k lines, a harmless edit
blocked, or a planted stub missed).
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any

DEFAULT_PACKAGES = ["attrs", "cachetools", "click", "itsdangerous", "more-itertools",
                    "packaging"]
TARGET_PER_10K = 1.0


def fetch(package: str, cache: Path) -> Path:
    """The sdist of ``package`` in ``cache`` (downloaded when absent)."""
    stem = package.replace("-", "_").lower()
    found = [p for p in cache.glob("*.tar.gz")
             if p.name.replace("-", "_").lower().startswith(stem + "_")]
    if found:
        return max(found)
    subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:",
                    "-q", "-d", str(cache), package], check=True, timeout=600)
    return fetch(package, cache)


def unpack(sdist: Path, into: Path) -> Path:
    with tarfile.open(sdist) as archive:
        archive.extractall(into, filter="data")
    (root,) = [p for p in into.iterdir() if p.is_dir()]
    return root


def readable_files(root: Path) -> dict[str, str]:
    from meridian.evaluators.scan import scan_file  # noqa: F401  (what the scan reads)

    files = {}
    for path in sorted(root.rglob("*")):
        if not path.is_file() or path.suffix not in (".py", ".pyi", ".js", ".ts", ".go", ".rs",
                                                     ".sh"):
            continue
        try:
            files[path.relative_to(root).as_posix()] = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
    return files


def whole_tree(root: Path, show: int) -> dict[str, Any]:
    from meridian.evaluators.scan import scan_tree

    files = readable_files(root)
    lines = sum(text.count("\n") + 1 for text in files.values())
    started = time.perf_counter()
    result = scan_tree(files)
    seconds = time.perf_counter() - started
    high = [f for f in result.findings if f.severity == "high"]
    return {"files": len(files), "lines": lines, "high": len(high),
            "per_10k": round(len(high) / lines * 10_000, 2) if lines else 0.0,
            "scan_s": round(seconds, 2),
            "examples": [f"{f.where()} [{f.check}] {f.message[:100]}" for f in high[:show]]}


def _git(root: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_AUTHOR_NAME="bench", GIT_AUTHOR_EMAIL="bench@meridian.invalid",
               GIT_COMMITTER_NAME="bench", GIT_COMMITTER_EMAIL="bench@meridian.invalid")
    return subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True,
                          text=True, timeout=120).stdout


def artifact_globs(root: Path) -> list[str]:
    globs = [f"{d}/**" for d in ("src", "tests") if (root / d).is_dir()]
    if not (root / "src").is_dir():  # a flat layout: the package directory itself
        packages = sorted(p.name for p in root.iterdir()
                          if p.is_dir() and (p / "__init__.py").is_file() and p.name != "tests")
        globs = [f"{p}/**" for p in packages] + globs
    return globs


def plant_target(root: Path, globs: list[str]) -> tuple[str, int, str] | None:
    """A real function to stub: (path, line of its first body statement, new text)."""
    from meridian.evaluators.scan import is_python_test_file
    from meridian.gates.globs import matches_any

    for path in sorted(root.rglob("*.py")):
        relative = path.relative_to(root).as_posix()
        if not matches_any(globs, relative) or is_python_test_file(relative):
            continue
        text = path.read_text(encoding="utf-8")
        try:
            tree = ast.parse(text)
        except SyntaxError:
            continue
        for node in tree.body:
            if isinstance(node, ast.FunctionDef) and len(node.body) >= 2 \
                    and not node.name.startswith("_"):
                body = [s for s in node.body if not (isinstance(s, ast.Expr)
                                                     and isinstance(s.value, ast.Constant))]
                if not body:
                    continue
                lines = text.splitlines(keepends=True)
                first, last = body[0].lineno, node.end_lineno or body[-1].lineno
                indent = lines[first - 1][:len(lines[first - 1]) - len(lines[first - 1].lstrip())]
                new = "".join(lines[:first - 1]) + f"{indent}raise NotImplementedError\n" \
                    + "".join(lines[last:])
                return relative, first, new
    return None


def through_the_gate(root: Path, work: Path) -> dict[str, Any]:
    from meridian.gates.lifecycle import open_project, start_gate, submit_gate
    from meridian.init import initialise

    repo = work / root.name
    shutil.copytree(root, repo)
    globs = artifact_globs(repo)
    _git(repo, "init", "-q", "-b", "main")
    initialise(str(repo), hooks=False)
    (repo / ".meridian" / "gates.yaml").write_text(
        "version: 1\ngates:\n  - id: adopt\n    description: the library as it is\n"
        f"    artifacts: {json.dumps(globs)}\n    evaluate: {{evaluator: heuristic}}\n")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "--no-verify", "-m", "adopt")
    previous = Path.cwd()
    os.chdir(repo)
    try:
        start_gate(open_project(repo), "adopt")
        module = next(p for p in sorted(repo.rglob("*.py"))
                      if "tests" not in p.parts and p.name != "__init__.py"
                      and any(p.relative_to(repo).as_posix().startswith(g[:-3]) for g in globs))
        original = module.read_text(encoding="utf-8")
        module.write_text(original + "\n# reviewed for the Meridian adoption\n", encoding="utf-8")
        started = time.perf_counter()
        harmless = submit_gate(open_project(repo), "adopt").verdict
        harmless_s = time.perf_counter() - started
        module.write_text(original, encoding="utf-8")
        target = plant_target(repo, globs)
        planted: dict[str, Any] = {"caught": False}
        if target is not None:
            path, line, text = target
            (repo / path).write_text(text, encoding="utf-8")
            verdict = submit_gate(open_project(repo), "adopt").verdict
            hits = [i for i in verdict.issues if i.file == path and i.line == line
                    and i.severity == "high" and not i.pre_existing]
            planted = {"at": f"{path}:{line}", "caught": bool(hits) and not verdict.passed,
                       "blocking": sum(1 for i in verdict.issues
                                       if i.severity == "high" and not i.pre_existing)}
    finally:
        os.chdir(previous)
    high_pre_existing = sum(1 for i in harmless.issues if i.severity == "high" and i.pre_existing)
    return {"artifacts": globs, "harmless_edit_passes": harmless.passed,
            "harmless_overall": harmless.overall, "pre_existing_high": high_pre_existing,
            "submit_s": round(harmless_s, 2), "planted": planted}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--packages", nargs="+", default=DEFAULT_PACKAGES)
    parser.add_argument("--cache", type=Path, help="where sdists are kept (default: a temp dir)")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--show", type=int, default=5, help="high findings listed per library")
    args = parser.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory(prefix="meridian-realcode-") as tmp:
        cache = args.cache or Path(tmp) / "sdists"
        cache.mkdir(parents=True, exist_ok=True)
        for package in args.packages:
            print(f"{package}: fetching and scanning ...", file=sys.stderr, flush=True)
            sdist = fetch(package, cache)
            unpacked = Path(tmp) / "src" / package
            unpacked.mkdir(parents=True)
            root = unpack(sdist, unpacked)
            row = {"package": package, "sdist": sdist.name, **whole_tree(root, args.show),
                   **through_the_gate(root, Path(tmp) / "repos" / package)}
            rows.append(row)
    total_lines = sum(r["lines"] for r in rows)
    total_high = sum(r["high"] for r in rows)
    summary = {"lines": total_lines, "high": total_high,
               "per_10k": round(total_high / total_lines * 10_000, 2) if total_lines else 0.0}
    missed = [r["package"] for r in rows if r["per_10k"] > TARGET_PER_10K
              or not r["harmless_edit_passes"] or not r["planted"].get("caught")]
    if args.json:
        print(json.dumps({"libraries": rows, "total": summary, "missed": missed}, indent=2))
    else:
        print(f"{'library':<16} {'files':>5} {'lines':>7} {'high':>4} {'/10k':>6} "
              f"{'scan s':>6}  {'edit passes':<11} {'planted stub caught at'}")
        for r in rows:
            planted = r["planted"]
            caught = (f"yes {planted['at']}" if planted.get("caught")
                      else f"NO {planted.get('at', '(no target)')}")
            print(f"{r['package']:<16} {r['files']:>5} {r['lines']:>7} {r['high']:>4} "
                  f"{r['per_10k']:>6.2f} {r['scan_s']:>6.2f}  "
                  f"{'yes' if r['harmless_edit_passes'] else 'NO':<11} {caught}")
            for example in r["examples"]:
                print(f"    {example}")
        print(f"{'all':<16} {'':>5} {total_lines:>7} {total_high:>4} {summary['per_10k']:>6.2f}"
              f"   (target <= {TARGET_PER_10K:g} per 10k lines)")
        if missed:
            print(f"missed targets: {', '.join(missed)}")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
