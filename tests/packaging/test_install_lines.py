"""Every install line the project prints or ships installs Meridian by its distribution
name, ``meridian-gates`` (``pip install meridian`` gets an unrelated package)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from meridian import DISTRIBUTION
from tests.packaging.conftest import ROOT

# pip options whose next word is a value, not a requirement
VALUE_OPTIONS = {"-c", "--constraint", "-r", "--requirement", "-t", "--target", "--python",
                 "-w", "--wheel-dir", "-d", "--dest", "-i", "--index-url", "--extra-index-url",
                 "-f", "--find-links", "--cache-dir", "--root", "--prefix"}
# Other packages a shipped line may install (each a deliberate choice).
OTHER_PACKAGES = {"build", "hatchling", "pre-commit"}
INSTALL = re.compile(r"pip3?\s+(?:install|download|wheel)\b([^\n`&;|)]*)")


def _shipped_files() -> list[Path]:
    """The tracked text that reaches users: docs, templates, hooks, CI, the package."""
    out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, text=True,
                         check=True).stdout
    files = []
    for name in out.split("\0"):
        if not name or name.startswith(("tests/", "benchmarks/")):
            continue
        path = ROOT / name
        if path.suffix in {".md", ".py", ".yml", ".yaml", ".toml", ".txt", ".json", ""} \
                and path.is_file():
            files.append(path)
    return files


def _targets(arguments: str) -> list[str]:
    words = [w.strip("'\"") for w in arguments.split()]
    targets, skip = [], False
    for word in words:
        if skip:
            skip = False
            continue
        if word in VALUE_OPTIONS:
            skip = True
            continue
        if word == "-e":
            continue  # an editable install: the next word is a path, checked below
        if word.startswith("-") or not word:
            continue
        targets.append(word)
    return targets


def _is_local(target: str) -> bool:
    return target.startswith((".", "/", "$", "{", "<")) or ".whl" in target \
        or "*" in target


def install_lines() -> list[tuple[str, str]]:
    found = []
    for path in _shipped_files():
        text = path.read_text(encoding="utf-8", errors="replace")
        for match in INSTALL.finditer(text):
            line = text.count("\n", 0, match.start()) + 1
            for target in _targets(match.group(1)):
                found.append((f"{path.relative_to(ROOT)}:{line}", target))
    return found


def test_every_install_line_names_the_distribution() -> None:
    lines = install_lines()
    wrong = [(where, target) for where, target in lines
             if not _is_local(target) and re.match(r"meridian(?![-_]gates)", target, re.IGNORECASE)]
    assert wrong == [], "install lines naming the wrong distribution"
    others = {re.split(r"[<>=\[ ]", target)[0] for _, target in lines
              if not _is_local(target) and not target.startswith(DISTRIBUTION)}
    assert others <= OTHER_PACKAGES, others


def test_the_readme_and_the_ci_template_install_meridian_gates() -> None:
    named = {where.split(":")[0] for where, target in install_lines()
             if target.startswith(DISTRIBUTION)}
    assert "README.md" in named
    assert ".meridian-template/ci/github-actions.yml" in named


def test_the_checker_sees_a_wrong_line(tmp_path: Path) -> None:
    # the rule the first test applies, on lines it must refuse and accept
    assert _targets(' -q "meridian>=0.1" -c lowest.txt') == ["meridian>=0.1"]
    assert _targets(" -e '.[test]'") == [".[test]"]
    assert INSTALL.search("run: python -m pip install meridian\n").group(1).split() == ["meridian"]
    assert re.match(r"meridian(?![-_]gates)", "meridian")
    assert not re.match(r"meridian(?![-_]gates)", "meridian-gates[test]")
