"""The artifact tree id without pygit2 (``gates/plain_subject.py``) held to the full path
(``globs.worktree_files`` with libgit2's ignore rules, ``artifacts.snapshot``), and the
constants ``commands/status_passes.py`` copies held to their sources."""

from __future__ import annotations

import dataclasses
import json
import os
import random
from pathlib import Path

import pytest

from meridian import gitio
from meridian.commands import status_passes
from meridian.gates import artifacts, evidence, globs, plain_subject, snapshot
from meridian.gates.state import GateFold
from tests.conftest import git

NAMES = ["a.py", "b.md", "notes.log", "build", "cache", ".hidden", "x y.txt", "data.json",
         "keep.log", "__pycache__", "mod.pyc", "deep"]
IGNORES = ["*.log", "build/", "/cache", "__pycache__/", "*.py[co]", "deep/inner", "?.md",
           ".hidden", "docs/*.json", "# a comment", "", "data.*"]
UNSURE = ["!keep.log", "**/x", "trailing ", r"\#literal", "[!a]b", "a[0-9]"]
PATTERNS = [["src/**"], ["docs", "src/*.py"], ["**/*.md"], ["*"], ["nothing/**"]]


def _tree(rng: random.Random, root: Path, depth: int = 0) -> None:
    for name in rng.sample(NAMES, rng.randint(2, 6)):
        path = root / name
        if depth < 2 and rng.random() < 0.35:
            path.mkdir(exist_ok=True)
            _tree(rng, path, depth + 1)
        elif not path.exists():
            path.write_text(f"{name} {rng.random()}\n")


def _project(tmp_path: Path, seed: int) -> Path:
    rng = random.Random(seed)
    root = tmp_path / f"p{seed}"
    root.mkdir()
    git(root, "init", "-q")
    for top in ("src", "docs", "spec"):
        (root / top).mkdir()
        _tree(rng, root / top)
    lines = rng.sample(IGNORES, rng.randint(0, 5))
    if rng.random() < 0.25:
        lines.append(rng.choice(UNSURE))
    (root / ".gitignore").write_text("\n".join(lines) + "\n")
    if rng.random() < 0.4:
        (root / "src" / ".gitignore").write_text(rng.choice(IGNORES[:6]) + "\n")
    if rng.random() < 0.3:
        (root / ".git" / "info").mkdir(exist_ok=True)
        (root / ".git" / "info" / "exclude").write_text(rng.choice(IGNORES) + "\n")
    if rng.random() < 0.3:
        os.symlink(root / "docs", root / "src" / "linked-dir")
        os.symlink(root / ".gitignore", root / "src" / "linked-file")
        os.symlink(root / "missing", root / "src" / "dangling")
    if rng.random() < 0.2:
        git(root, "add", "-A")
        git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "x")
    return root


@pytest.mark.parametrize("seed", range(40))
def test_the_plain_listing_and_subject_are_the_full_paths(tmp_path: Path, seed: int,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    root = _project(tmp_path, seed)
    repo = gitio.open_repo(root)
    full = globs.worktree_files(repo, root)
    plain = plain_subject.worktree_files(root, root / ".git", root / ".git")
    lines = (root / ".gitignore").read_text().splitlines()
    if plain is None:
        assert any(line in UNSURE for line in lines), lines
        return
    assert plain == full
    for patterns in PATTERNS:
        assert plain_subject.subject(root, plain, patterns) == artifacts.snapshot(
            repo, root, patterns, full).subject


def test_a_config_naming_other_ignore_sources_is_not_read(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    root = _project(tmp_path, 1)
    (root / ".gitignore").write_text("*.log\n")
    assert plain_subject.worktree_files(root, root / ".git", root / ".git") is not None
    git(root, "config", "core.excludesFile", str(tmp_path / "elsewhere"))
    assert plain_subject.worktree_files(root, root / ".git", root / ".git") is None
    git(root, "config", "--unset", "core.excludesFile")
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / ".gitconfig").write_text("[core]\n\tignoreCase = true\n")
    assert plain_subject.worktree_files(root, root / ".git", root / ".git") is None


def test_a_global_ignore_file_is_not_guessed(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """Where libgit2 finds the global ignore file depends on the search path it fixed when
    loaded: one that exists makes the plain listing unsure (the full path decides)."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    root = _project(tmp_path, 2)
    (root / ".gitignore").write_text("")
    assert plain_subject.worktree_files(root, root / ".git", root / ".git") is not None
    (tmp_path / "xdg" / "git").mkdir(parents=True)
    (tmp_path / "xdg" / "git" / "ignore").write_text("*.env\n")
    assert plain_subject.worktree_files(root, root / ".git", root / ".git") is None


def test_the_copied_constants_are_their_sources() -> None:
    from meridian.config import CONFIG_PATH
    from meridian.idindex import line_id

    assert status_passes.CONFIG_FILE == CONFIG_PATH.as_posix()
    _same_times_as_the_full_path()
    assert status_passes.SKEW_SECONDS == evidence.SKEW_SECONDS
    assert status_passes.SNAPSHOT_VERSION == snapshot.SNAPSHOT_VERSION
    assert status_passes.FOLD_DEFAULTS == dataclasses.asdict(GateFold())
    assert list(status_passes.FOLD_DEFAULTS) == snapshot.FOLD_FIELDS
    cached = {"tip": "a" * 40, "last_ts": "t", "fields": ["x"], "folds": {"g": {"a": 1}},
              "aux": {"floors": {"g": 7.0}, "claims": {}, "harness": None, "exact": True,
                      "ids": "d", "ids_tail": [3]}}
    assert status_passes._snapshot_checksums(cached) == (
        snapshot._checksum(cached["tip"], cached["last_ts"], cached["fields"], cached["folds"]),
        snapshot._aux_checksum(cached["tip"], cached["aux"]))
    for line in (b'{"id":"' + b"a" * 32 + b'","ts":"t"}', b'{"ts":"t","id":"x"}',
                 b'{"id":"' + b"a" * 32 + b'","id":"b"}', b"not json", b'["id"]',
                 json.dumps({"id": 3}).encode()):
        assert status_passes._line_id(line) == line_id(line)


# Times as a forger may write them: every form ``fromisoformat`` reads, and what it refuses.
TIMES = ["2026-01-01T00:00:00.000000Z", "2026-01-01T00:00:00+02:00", "2026-01-01",
         "2026-01-01T00:00:00", "2026-01-01 00:00:00", "2026-01-01T00:00:00.5Z",
         "2026-01-01T00:00:00,123Z", "20260101T000000Z", "2026-W01-1", "2026-001",
         "2026-01-01T24:00:00Z", "2026-02-30T00:00:00Z", "2026-01-01T00:00:00+25:00",
         "9999-12-31T23:59:59.999999+00:00", "0001-01-01T00:00:00-23:59", "2026-01-01T00:00Z",
         "2026-01-01T00Z", "+2026-01-01", "2026-1-1", " 2026-01-01", "2026-01-01T00:00:00Zjunk",
         "", "now", "2026-01-01T00:00:00.0000000Z", "２０２６-01-01", "2026-01-01T00:00:00\x00"]


def _outcome(parse: object, ts: str) -> tuple[str, object]:
    try:
        value = parse(ts)  # type: ignore[operator]
    except Exception as exc:  # noqa: BLE001 - the outcome is what is compared
        return "raises", type(exc)
    try:
        stamp: object = value.timestamp()
    except (ValueError, OverflowError, OSError) as exc:
        stamp = type(exc)
    return "reads", (value, value.utcoffset(), stamp)


def _same_times_as_the_full_path() -> None:
    """``status_passes`` reads a pass's time with ``datetime.fromisoformat`` (without
    ``meridian.records``, which loads hashlib): for every time a forger may write, it
    reads what ``records.parse_ts`` (the full path's, ``evidence.check_pass``) reads,
    or refuses it the same way, down to the timestamp the skew rule compares."""
    from datetime import datetime

    from meridian.records import parse_ts

    rng = random.Random(7)
    fuzzed = ["".join(rng.choice("0123456789-:T.Z+ ") for _ in range(rng.randint(8, 32)))
              for _ in range(300)]
    for ts in TIMES + fuzzed + [t[:n] for t in TIMES[:6] for n in range(len(t))]:
        assert _outcome(parse_ts, ts) == _outcome(datetime.fromisoformat, ts), ts


def test_no_home_is_not_guessed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With HOME unset, libgit2 reads ~/.gitconfig (an excludesFile) and the global
    ignore file from the passwd entry's home: the plain listing does not answer."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    root = _project(tmp_path, 1)
    (root / ".gitignore").write_text("*.log\n")
    assert plain_subject.worktree_files(root, root / ".git", root / ".git") is not None
    monkeypatch.delenv("HOME")
    assert plain_subject.worktree_files(root, root / ".git", root / ".git") is None
    monkeypatch.setenv("HOME", "")
    assert plain_subject.worktree_files(root, root / ".git", root / ".git") is None
