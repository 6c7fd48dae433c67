"""Differential fuzz: the status fast path's plain work tree listing
(``gates/plain_subject.worktree_files``, which decides "ignored" without pygit2) against
git (``git ls-files --others --exclude-standard -z`` in a repository with nothing
tracked) and libgit2 (``globs.worktree_files``, what the full path lists), over random
trees with non-ASCII names and random ignore rules (``?``, ``*`` and classes next to
multi-byte characters, anchored and directory rules, a UTF-8 byte order mark starting a
file, in nested ``.gitignore`` files and ``.git/info/exclude``).

Whenever the plain listing answers (it returns None for rules it does not read exactly:
the caller then derives in full) it must be both git's and libgit2's answer, byte for
byte. Deterministic seeds; a failure prints the tree's rules to replay it.
"""

from __future__ import annotations

import os
import random
import subprocess
from pathlib import Path

import pygit2
import pytest

from meridian.gates import globs, plain_subject

NAMES = ["a", "b", "ab", "a.b", ".a", "é", "éé", "ée", "eé", "x y", "A", "c.txt", "d1",
         "a[b]", "ü.txt", "日本", "日", "ñ", "e\u0301", "€x", "\U0001f600", "ß.py", "z"]
ATOMS = ["a", "b", "ab", "é", "*", "?", "??", "???", "????", "*.txt", "[ab]", "c.txt", "d?",
         "*b", "a*", "é*", "?.txt", "[é]", "[ü]", "*.*", "d1", "日*", "?本", "[日]", "e?",
         "?e", "ñ", "?.py", "ß*", "€?", "*\U0001f600", "?x"]
BOM = "\ufeff"
CASES = 300


def _pattern(rng: random.Random) -> str:
    pattern = "/".join(rng.choice(ATOMS) for _ in range(rng.choice([1, 1, 1, 2, 2, 3])))
    if rng.random() < 0.25:
        pattern = "/" + pattern
    if rng.random() < 0.25:
        pattern += "/"
    return pattern


def _build(root: Path, rng: random.Random, depth: int = 0) -> None:
    for _ in range(rng.randint(1, 4)):
        path = root / rng.choice(NAMES)
        if path.exists():
            continue
        if depth < 3 and rng.random() < 0.4:
            path.mkdir()
            _build(path, rng, depth + 1)
        else:
            path.write_text(path.name)


def _ignore_text(rng: random.Random) -> str:
    text = "\n".join(_pattern(rng) for _ in range(rng.randint(1, 3))) + "\n"
    return (BOM if rng.random() < 0.2 else "") + text


def _git_listing(root: Path, env: dict[str, str]) -> list[str]:
    out = subprocess.run(["git", "ls-files", "--others", "--exclude-standard", "-z"],
                         cwd=root, env=env, capture_output=True, check=True).stdout
    return sorted(name.decode("utf-8") for name in out.split(b"\0") if name)


@pytest.fixture
def quiet_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """A HOME and XDG config of the test's own (no global excludes file), for git,
    libgit2 and the plain listing alike."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    return {k: v for k, v in os.environ.items() if not k.startswith("GIT_") or k ==
            "GIT_CONFIG_NOSYSTEM"}


def test_the_plain_listing_is_git_s_and_libgit2_s(tmp_path: Path,
                                                  quiet_home: dict[str, str]) -> None:
    answered = 0
    multibyte_rules = 0
    for seed in range(CASES):
        rng = random.Random(seed)
        root = tmp_path / f"w{seed}"
        root.mkdir()
        subprocess.run(["git", "init", "-q", str(root)], check=True, env=quiet_home)
        _build(root, rng)
        dirs = [root] + [Path(d) for d, _, _ in os.walk(root) if ".git" not in Path(d).parts]
        rules: dict[str, str] = {}
        for directory in rng.sample(dirs, min(len(dirs), rng.randint(1, 3))):
            text = _ignore_text(rng)
            (directory / ".gitignore").write_text(text, encoding="utf-8")
            rules[str(directory.relative_to(root))] = text
        if rng.random() < 0.4:
            text = _ignore_text(rng)
            (root / ".git" / "info" / "exclude").write_text(text, encoding="utf-8")
            rules[".git/info/exclude"] = text
        plain = plain_subject.worktree_files(root, root / ".git", root / ".git")
        if plain is None:
            continue
        answered += 1
        multibyte_rules += any(ch >= "\x80" for text in rules.values() for ch in text)
        git = _git_listing(root, quiet_home)
        libgit2 = globs.worktree_files(pygit2.Repository(str(root)), root)
        assert plain == git == libgit2, (seed, rules, sorted(set(plain) ^ set(git)),
                                         sorted(set(plain) ^ set(libgit2)))
    # The listing answers for most trees (it refuses only what it cannot read exactly),
    # and many of those have rules with multi-byte characters and byte order marks.
    assert answered > CASES * 2 // 3
    assert multibyte_rules > CASES // 3


def _paths(root: Path) -> list[str]:
    out = []
    for current, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d != ".git"]
        out += [os.path.relpath(os.path.join(current, n), root) for n in (*dirs, *files)]
    return sorted(out)


def _git_tracked_or_kept(root: Path, env: dict[str, str]) -> list[str]:
    """What git holds or would add: the index's paths and the untracked files its
    ignore rules keep (``git ls-files --cached --others --exclude-standard``)."""
    out = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard",
                          "-z"], cwd=root, env=env, capture_output=True, check=True).stdout
    return sorted({name.decode("utf-8") for name in out.split(b"\0") if name})


def test_tracked_ignored_files_and_symlinks_are_listed_as_git_holds_them(
        tmp_path: Path, quiet_home: dict[str, str]) -> None:
    """Files tracked in the index under an ignore rule (``git add -f``, or a rule written
    after the commit) are listed whatever the rules say, untracked ones only when no rule
    ignores them; a symlink (to a file, a directory, outside the tree, nowhere) is a file
    as git stores it, never walked into. The plain listing, libgit2's and git's agree."""
    answered = tracked_ignored = links = 0
    outside = tmp_path / "outside"
    (outside / "pkg").mkdir(parents=True)
    (outside / "pkg" / "mod.py").write_text("x = 1\n")
    for seed in range(CASES):
        rng = random.Random(10_000 + seed)
        root = tmp_path / f"t{seed}"
        root.mkdir()
        subprocess.run(["git", "init", "-q", str(root)], check=True, env=quiet_home)
        _build(root, rng)
        existing = _paths(root)
        for _ in range(rng.randint(0, 3)):
            base = root / rng.choice(["", *(p for p in existing if (root / p).is_dir())])
            name = base / ("ln-" + rng.choice(NAMES))
            if name.exists() or name.is_symlink():
                continue
            target = rng.choice([*(os.path.relpath(root / p, base) for p in existing),
                                 str(outside / "pkg"), str(outside / "nowhere")])
            os.symlink(target, name)
        everything = _paths(root)
        # some paths tracked before any rule exists (or added with -f afterwards)
        chosen = [p for p in everything if rng.random() < 0.35
                  and ((root / p).is_symlink() or (root / p).is_file())]
        if chosen:
            subprocess.run(["git", "add", "-f", "--", *chosen], cwd=root, check=True,
                           env=quiet_home, capture_output=True)
        dirs = [root] + [root / p for p in everything
                         if (root / p).is_dir() and not (root / p).is_symlink()]
        rules: dict[str, str] = {}
        for directory in rng.sample(dirs, min(len(dirs), rng.randint(1, 3))):
            text = _ignore_text(rng)
            (directory / ".gitignore").write_text(text, encoding="utf-8")
            rules[str(directory.relative_to(root))] = text
        if rng.random() < 0.4:
            text = _ignore_text(rng)
            (root / ".git" / "info" / "exclude").write_text(text, encoding="utf-8")
            rules[".git/info/exclude"] = text
        plain = plain_subject.worktree_files(root, root / ".git", root / ".git")
        if plain is None:
            continue
        answered += 1
        git = _git_tracked_or_kept(root, quiet_home)
        libgit2 = globs.worktree_files(pygit2.Repository(str(root)), root)
        assert plain == git == libgit2, (seed, rules, chosen, sorted(set(plain) ^ set(git)),
                                         sorted(set(plain) ^ set(libgit2)))
        ignored = set(_git_ignored(root, quiet_home))
        tracked_ignored += any(p in ignored for p in chosen)
        links += any((root / p).is_symlink() for p in plain)
    assert answered > CASES * 2 // 3
    assert tracked_ignored > CASES // 10 and links > CASES // 4, (tracked_ignored, links)


def _git_ignored(root: Path, env: dict[str, str]) -> list[str]:
    """The tracked paths git's rules would ignore (``ls-files -ci --exclude-standard``)."""
    out = subprocess.run(["git", "ls-files", "--cached", "--ignored", "--exclude-standard",
                          "-z"], cwd=root, env=env, capture_output=True, check=True).stdout
    return sorted(name.decode("utf-8") for name in out.split(b"\0") if name)
