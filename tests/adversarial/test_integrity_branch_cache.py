"""The branch cache of ``Ledger.open`` (``.git/meridian/config-branch.json``) is a cache,
not trust: an agent with a shell can rewrite it (it knows the sha256 of the config's
bytes), so what it says must never pick a branch other than the one the config names,
and a FIFO in its place must never hang a command."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from meridian import __version__
from meridian import ledger as ledger_module
from meridian.ledger import Ledger
from tests.adversarial.integrity_support import plumb_commit
from tests.conftest import git

CONFIGS = [
    "branch: meridian/state\n",
    "version: 1\n# The branch that holds state.\nbranch: meridian/state\nremote: origin\n",
    "remote: origin\n",  # no branch: the default
    "remote: 'origin'\nbranch: meridian/state\n",  # not provable from the bytes: validated
]


def _meridian(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "meridian", *args], cwd=root, check=False,
                          capture_output=True, text=True, timeout=60)


def _poison(root: Path, branch: str) -> None:
    cache = root / ".git" / "meridian" / ledger_module.BRANCH_CACHE
    cached = json.loads(cache.read_text())
    cache.write_text(json.dumps({"key": cached["key"], "branch": branch}))


@pytest.mark.parametrize("config", CONFIGS)
def test_a_rewritten_branch_cache_never_picks_another_branch(repo_with_commit: Path,
                                                             config: str) -> None:
    root = repo_with_commit
    (root / ".meridian").mkdir()
    (root / ".meridian" / "config.yaml").write_text(config)
    assert Ledger.open(root).branch == "meridian/state"  # validated; the cache is written
    _poison(root, "agent/clean")
    assert Ledger.open(root).branch == "meridian/state"
    _poison(root, "meridian/state")  # the truth stays accepted (and fast)
    assert Ledger.open(root).branch == "meridian/state"


TRICKY = [
    "branch: meridian/state\n\"bra\\x6ech\": agent/clean\n",  # an escape spells the key
    "branch: meridian/state\n# c\u2028branch: agent/clean\n",  # a YAML line break
    "remote: \"o\nbranch: agent/clean\"\n",  # inside a quoted scalar
    "branch: agent/clean#x\n",  # no comment: part of the value
    "branch:agent/clean\n",  # a plain scalar, not a key
]


@pytest.mark.parametrize("config", TRICKY)
@pytest.mark.parametrize("forged", ["agent/clean", "meridian/state", "agent/clean#x"])
def test_a_forged_cache_of_a_tricky_config_gives_what_load_config_gives(
        repo_with_commit: Path, config: str, forged: str) -> None:
    from meridian.config import load_config
    from meridian.errors import MeridianError

    root = repo_with_commit
    (root / ".meridian").mkdir()
    (root / ".meridian" / "config.yaml").write_text(config, encoding="utf-8")
    try:
        truth: str | None = load_config(root).branch
    except MeridianError:
        truth = None
    cache = root / ".git" / "meridian" / ledger_module.BRANCH_CACHE
    cache.parent.mkdir(parents=True, exist_ok=True)
    key = f"{__version__} {hashlib.sha256(config.encode()).hexdigest()}"
    cache.write_text(json.dumps({"key": key, "branch": forged}))
    if truth is None:
        with pytest.raises(MeridianError):
            Ledger.open(root)
    else:
        assert Ledger.open(root).branch == truth


def test_verify_checks_the_configured_branch_whatever_the_cache_says(
        repo_with_commit: Path) -> None:
    root = repo_with_commit
    (root / ".meridian").mkdir()
    (root / ".meridian" / "config.yaml").write_text("branch: meridian/state\n")
    assert _meridian(root, "init").returncode == 0
    assert _meridian(root, "memory", "add", "semantic", "--json",
                     '{"text": "a", "confidence": 0.8}').returncode == 0
    git(root, "branch", "agent/clean", "meridian/state")  # a branch that verifies
    bad = {"id": "0" * 32, "ts": "2026-12-01T00:00:00.000000Z", "kind": "memory.semantic",
           "writer": "a <a@x>", "data": {"text": "", "confidence": 7}}
    shard = git(root, "ls-tree", "-r", "--name-only", "meridian/state", "memory/semantic")
    plumb_commit(root, {shard.split()[0]: (json.dumps(bad) + "\n").encode()}, "forged")
    assert _meridian(root, "verify").returncode == 1
    _poison(root, "agent/clean")
    result = _meridian(root, "verify")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "meridian/state" in result.stdout + result.stderr


def test_a_fifo_in_place_of_the_cache_does_not_hang(repo_with_commit: Path) -> None:
    import os

    root = repo_with_commit
    (root / ".meridian").mkdir()
    (root / ".meridian" / "config.yaml").write_text("branch: team/state\n")
    cache = root / ".git" / "meridian" / ledger_module.BRANCH_CACHE
    cache.parent.mkdir(parents=True)
    os.mkfifo(cache)
    result = _meridian(root, "memory", "list", "semantic")  # timeout=60: a hang fails
    assert "team/state" in result.stdout + result.stderr
    assert Ledger.open(root).branch == "team/state"
