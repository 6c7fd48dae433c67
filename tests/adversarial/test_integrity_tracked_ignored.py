"""Attack: hide committed code from its gate behind an ignore rule (rt4 F2).

``git add -f`` commits a file a ``.gitignore`` rule names; git ignores the rules for a
tracked file, so the commit ships it and every check imports it. Layer: the gate's
artifact listing (``globs.worktree_files`` and its pygit2-free twin
``plain_subject.worktree_files``), which the offline scan of ``gate submit``, the
subject that makes a pass stale, the status view and ``meridian ci`` (on a checkout of
tracked files) all read: a tracked file is an artifact whatever the ignore rules say, an
untracked one only when no rule ignores it, and a symlink is listed as git stores it.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from meridian import gitio
from meridian.gates import artifacts, globs, plain_subject
from tests.adversarial.conftest import CLEAN_MODULE, Proc, commit_all, pass_gate, write
from tests.adversarial.test_integrity_status_pass_view import _agree, _light, _states
from tests.conftest import git

STUB = '''\
def multiply(a: float, b: float) -> float:
    """Multiply two numbers."""
    raise NotImplementedError
'''
# A package of the same name as the passed module: ``import src.area`` loads it instead.
SHADOW = '''\
def area(width: float, height: float) -> float:
    """Area of a rectangle."""
    return width + height
'''
TEST = '''\
import unittest

from src.area import area


class AreaTest(unittest.TestCase):
    def test_area(self) -> None:
        self.assertEqual(area(2, 3), 6)
'''


def _force_commit(root: Path, ignore: str, relative: str, text: str, message: str) -> None:
    """``relative`` committed with ``git add -f`` under a ``.gitignore`` line naming it."""
    write(root, ".gitignore", ignore)
    write(root, relative, text)
    git(root, "add", ".gitignore")
    git(root, "add", "-f", relative)
    git(root, "commit", "-q", "-m", message)
    assert relative in git(root, "ls-files").split()
    assert git(root, "check-ignore", "--no-index", relative).strip() == relative


def _ci(cli: Callable[..., Proc], *args: str) -> tuple[int, dict]:
    result = cli("ci", "--no-fetch", "--json", *args)
    return result.code, json.loads(result.out)


def test_a_stub_committed_with_add_f_under_an_ignore_rule_fails_submit(
        project: Path, cli: Callable[..., Proc]) -> None:
    pass_gate(cli, project, "spec", "spec/spec.py")
    assert cli("gate", "start", "impl").code == 0
    write(project, "src/area.py", CLEAN_MODULE)
    commit_all(project, "area")
    _force_commit(project, "src/extra.py\n", "src/extra.py", STUB, "multiply; ignore editor files")
    result = cli("gate", "submit", "impl")
    assert result.code != 0, result
    assert "src/extra.py" in result.out + result.err
    document = json.loads(cli("status", "--json").out)
    [impl] = [g for g in document["gates"] if g["gate"] == "impl"]
    assert impl["state"] == "failed"


@pytest.fixture
def passed_impl(project: Path, cli: Callable[..., Proc]) -> Path:
    """spec and impl passed, impl with a check running the unit tests of ``src/area.py``."""
    gates = (project / ".meridian" / "gates.yaml").read_text().replace(
        'artifacts: ["src/**"]',
        'artifacts: ["src/**"]\n    checks: ['
        + json.dumps(f"{sys.executable} -m unittest discover -s tests -t . -q") + "]")
    write(project, ".meridian/gates.yaml", gates)
    write(project, "src/__init__.py", "")
    write(project, "tests/__init__.py", "")
    write(project, "tests/test_area.py", TEST)
    commit_all(project, "impl check")
    pass_gate(cli, project, "spec", "spec/spec.py")
    pass_gate(cli, project, "impl", "src/area.py")
    return project


def test_a_hidden_shadowing_package_makes_the_pass_stale_and_ci_fail(
        passed_impl: Path, cli: Callable[..., Proc]) -> None:
    """No gate command at all: a package ``src/area/`` shadows the passed ``src/area.py``
    (the unit tests now fail), committed with ``git add -f`` under ``src/area/``."""
    root = passed_impl
    base = git(root, "rev-parse", "HEAD").strip()
    _force_commit(root, "# build output\nsrc/area/\n", "src/area/__init__.py", SHADOW,
                  "build: cache dir")
    tests = subprocess.run([sys.executable, "-m", "unittest", "discover", "-s", "tests",
                            "-t", ".", "-q"], cwd=root, capture_output=True, text=True,
                           check=False)
    assert tests.returncode != 0  # the package is what the product imports
    answers = _agree(cli, root)  # the fast path's answers are the full derivation's
    assert _states(answers) == ["passed", "stale", "locked"]
    assert cli("status", "--strict").code == 1
    shutil.rmtree(root / ".git" / "meridian")
    assert cli("status", "--strict").code == 1
    document = json.loads(cli("status", "--json").out)
    [impl] = [g for g in document["gates"] if g["gate"] == "impl"]
    assert impl["changed_files"] == ["src/area/__init__.py"]
    code, report = _ci(cli, "--base", base)
    assert code != 0, report
    # the pass no longer judged what the commit holds: the run fails on it, by name
    [stale] = report["stale"]
    assert stale.startswith("`impl`") and "src/area/__init__.py" in stale, report
    assert not any(line.startswith("`impl`") for line in report["not_rechecked"])
    code, report = _ci(cli, "--all")
    assert code != 0 and any("src/area/__init__.py" in line for line in report["stale"])


def test_a_stub_hidden_after_the_pass_is_rechecked_and_failed_by_ci(
        passed_impl: Path, cli: Callable[..., Proc]) -> None:
    root = passed_impl
    base = git(root, "rev-parse", "HEAD").strip()
    _force_commit(root, "src/extra.py\n", "src/extra.py", STUB, "multiply; ignore editor files")
    assert _states(_agree(cli, root)) == ["passed", "stale", "locked"]
    for args in (("--base", base), ("--all",)):
        code, report = _ci(cli, *args)
        assert code != 0, (args, report)
        [stale] = report["stale"]
        assert stale.startswith("`impl`") and "src/extra.py" in stale, (args, report)


def test_a_pass_with_a_tracked_ignored_artifact_is_answered_fast_and_the_same(
        project: Path, cli: Callable[..., Proc]) -> None:
    """A genuine pass whose artifacts include a tracked file under an ignore rule: the
    status view's plain subject hashes it as the full path does (answered without
    pygit2, the same answers), and an edit of that file makes the pass stale."""
    pass_gate(cli, project, "spec", "spec/spec.py")
    assert cli("gate", "start", "impl").code == 0
    _force_commit(project, "src/gen/\n*.log\n", "src/gen/table.py", '"""Table."""\nROWS = 3\n',
                  "generated table")
    write(project, "src/gen/scratch.py", "untracked and ignored: not an artifact\n")
    write(project, "src/area.py", CLEAN_MODULE)
    commit_all(project, "area")
    assert cli("gate", "submit", "impl").code == 0
    root = project
    repo = gitio.open_repo(root)
    listing = globs.worktree_files(repo, root)
    assert "src/gen/table.py" in listing and "src/gen/scratch.py" not in listing
    plain = plain_subject.worktree_files(root, root / ".git", root / ".git")
    assert plain == listing
    full = artifacts.snapshot(repo, root, ["src/**"], listing)
    assert set(full.files) == {"src/area.py", "src/gen/table.py"}
    assert plain_subject.subject(root, plain, ["src/**"]) == full.subject
    answers = _agree(cli, root)
    assert _states(answers) == ["passed", "passed", "open"]
    assert _light(root)
    write(root, "src/gen/table.py", '"""Table."""\nROWS = 4\n')
    answers = _agree(cli, root)
    assert _states(answers) == ["passed", "stale", "locked"]
    write(root, "src/gen/table.py", '"""Table."""\nROWS = 3\n')
    write(root, "src/gen/scratch.py", "an ignored untracked edit changes nothing\n")
    assert _states(_agree(cli, root)) == ["passed", "passed", "open"]


def _main_listing(repo: gitio.Repository, root: Path) -> list[str]:
    """The listing before tracked files and symlinks to directories counted (main at
    d5c62d9): the work tree's regular files and symlinks to files, ignored ones dropped."""
    found: list[str] = []
    for current, dirs, files in os.walk(root):
        rel_dir = os.path.relpath(current, root)
        prefix = "" if rel_dir == "." else globs.normalise(rel_dir) + "/"
        dirs[:] = sorted(d for d in dirs
                         if d != ".git" and not gitio.is_ignored(repo, prefix + d + "/"))
        for name in files:
            rel = prefix + name
            if not gitio.is_ignored(repo, rel) and os.path.isfile(os.path.join(current, name)):
                found.append(rel)
    return sorted(found)


@pytest.mark.parametrize("seed", range(12))
def test_subject_ids_are_unchanged_without_tracked_ignored_files(tmp_path: Path,
                                                                 seed: int) -> None:
    """Existing passes stay valid: where no tracked file is ignored and no symlink to a
    directory or to nothing lies in the globs, the subject is the one the earlier listing
    gave, byte for byte (and where one is, the subject moves: the pass is stale)."""
    rng = random.Random(seed)
    root = tmp_path / "p"
    root.mkdir()
    git(root, "init", "-q")
    names = ["a.py", "b.md", "c.log", "d.pyc", "e e.txt", "é.py"]
    for top in ("src", "docs"):
        for _ in range(rng.randint(2, 6)):
            path = root / top / rng.choice(["", "sub/", "build/", "__pycache__/"]) / \
                rng.choice(names)
            if path.exists():
                continue
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(f"{path.name} {rng.random()}\n")
    (root / "src" / "link.md").symlink_to(root / ".gitignore")
    write(root, ".gitignore", "*.log\nbuild/\n__pycache__/\n*.pyc\n")
    git(root, "add", "-A")
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "x")
    repo = gitio.open_repo(root)
    patterns = [["src/**"], ["**/*.py"], ["docs", "src/*.md"], ["*"]]
    before = _main_listing(repo, root)
    assert globs.worktree_files(repo, root) == before
    for globs_ in patterns:
        old = artifacts.snapshot(repo, root, globs_, before).subject
        assert artifacts.snapshot(repo, root, globs_).subject == old
        assert plain_subject.subject(
            root, plain_subject.worktree_files(root, root / ".git", root / ".git") or [],
            globs_) == old
    # one ignored file tracked with -f: only the globs that take it change
    hidden = next((p for p in ("src/c.log", "src/build/a.py", "src/__pycache__/d.pyc")
                   if (root / p).is_file()), None)
    if hidden is None:
        write(root, "src/build/a.py", "x = 1\n")
        hidden = "src/build/a.py"
    git(root, "add", "-f", hidden)
    after = globs.worktree_files(repo, root)
    assert set(after) - set(before) == {hidden}
    for globs_ in patterns:
        old = artifacts.snapshot(repo, root, globs_, before).subject
        new = artifacts.snapshot(repo, root, globs_).subject
        assert (new != old) == globs.matches_any(globs_, hidden), (globs_, hidden)


def _linked_package(root: Path, target: Path) -> None:
    """``src/ext`` a symlink to ``target``, a package whose ``__init__.py`` is the stub."""
    target.mkdir(parents=True, exist_ok=True)
    (target / "__init__.py").write_text(STUB)
    (root / "src").mkdir(exist_ok=True)
    (root / "src" / "ext").symlink_to(os.path.relpath(target, root / "src"))


@pytest.mark.parametrize("where", ["vendor", "outside"])
def test_a_package_behind_a_directory_symlink_fails_submit_and_makes_the_pass_stale(
        passed_impl: Path, cli: Callable[..., Proc], tmp_path: Path, where: str) -> None:
    """``src/ext -> ../vendor/ext`` (or a directory outside the repository): the product
    imports ``src/ext/__init__.py``, which ``src/**`` matches through the link. The link
    is bound to the subject as git stores it, and the scan fails a gate whose globs reach
    files through it that it does not judge at their own path."""
    root = passed_impl
    base = git(root, "rev-parse", "HEAD").strip()
    target = root / "vendor" / "ext" if where == "vendor" else tmp_path / "elsewhere" / "ext"
    _linked_package(root, target)
    commit_all(root, "calc: multiply (shared with the cli)")
    assert "src/ext" in git(root, "ls-files").split()
    assert subprocess.run([sys.executable, "-c", "import src.ext as e; e.multiply"], cwd=root,
                          check=False).returncode == 0
    assert _states(_agree(cli, root)) == ["passed", "stale", "locked"]
    for args in (("--base", base), ("--all",)):
        code, report = _ci(cli, *args)
        assert code != 0 and any("src/ext" in line for line in report["stale"]), report
    assert cli("gate", "reopen", "impl", "--reason", "multiply").code == 0  # and started
    result = cli("gate", "submit", "impl")
    assert result.code != 0, result
    assert "`src/ext` is a symlink to a directory" in result.out
    assert "src/ext/__init__.py" in result.out
    # an edit behind the link is outside the artifacts (documented), the link itself not
    (root / "src" / "ext").unlink()
    (root / "src" / "ext").symlink_to("../vendor/other")
    repo = gitio.open_repo(root)
    listing = globs.worktree_files(repo, root)
    assert plain_subject.subject(root, plain_subject.worktree_files(
        root, root / ".git", root / ".git") or [], ["src/**/*.py"]) == artifacts.snapshot(
        repo, root, ["src/**/*.py"], listing).subject


def test_a_directory_symlink_to_judged_files_passes(project: Path,
                                                   cli: Callable[..., Proc]) -> None:
    """A link to a directory whose files the gate judges at their own path is fine: they
    are in the subject there, and the link is bound as its target path."""
    pass_gate(cli, project, "spec", "spec/spec.py")
    assert cli("gate", "start", "impl").code == 0
    write(project, "src/impl/area.py", CLEAN_MODULE)
    (project / "src" / "compat").symlink_to("impl")
    commit_all(project, "compat alias")
    result = cli("gate", "submit", "impl")
    assert result.code == 0, result
    repo = gitio.open_repo(project)
    snap = artifacts.snapshot(repo, project, ["src/**/*.py"])
    assert set(snap.files) == {"src/compat", "src/impl/area.py"} and snap.linked == {}
    assert _states(_agree(cli, project)) == ["passed", "passed", "open"]
