"""Attack: damage the git index after a pass so the fast status listing (which reads the
index itself, ``gates/plain_subject.index_paths``) reads what libgit2 refuses: a wrong
trailing checksum, a corrupt cache-tree (TREE) extension with the checksum recomputed,
an entry path with a ``.git`` or ``..`` part. The full path then stops with "git cannot
read this repository" (exit 2) while the fast one showed the gate passed (rv-status F1,
F2, F4). Layer: state derivation (the status view's pass check must agree with the full
path). Each damaged index here is unsure for the fast reader, where libgit2 refuses it;
an intact one, cache tree included, is read the same by both.
"""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

import pygit2
import pytest

from meridian.gates import plain_subject


def _repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    env_git = ["git", "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
    for name in ("README.md", "src/a.py", "src/deep/b.py", "spec/s.md"):
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(name + "\n")
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    subprocess.run([*env_git, "commit", "-q", "-m", "x"], cwd=root, check=True)
    subprocess.run(["git", "status", "-s"], cwd=root, check=True, capture_output=True)
    return root


def _libgit2_paths(root: Path) -> list[str] | None:
    try:
        index = pygit2.Repository(str(root)).index
        index.read()
        return [entry.path for entry in index]
    except (pygit2.GitError, ValueError, OSError):
        return None


def _rehash(data: bytes) -> bytes:
    return data[:-20] + hashlib.sha1(data[:-20]).digest()


def _damage(kind: str, data: bytes) -> bytes:
    if kind == "checksum":
        return data[:-1] + bytes([data[-1] ^ 0xFF])
    if kind == "tree-count":
        at = data.index(b"TREE")
        body = at + 8
        line = data.index(b"\n", body)
        space = data.index(b" ", data.index(b"\0", body))
        return _rehash(data[:space + 1] + b"x" + data[space + 2:line] + data[line:])
    if kind == "dotgit":
        return _rehash(data.replace(b"spec/s.md", b".git/s.md", 1))
    if kind == "dotdot":
        return _rehash(data.replace(b"spec/s.md", b"../xs.md", 1))
    raise AssertionError(kind)


def test_an_intact_index_with_its_cache_tree_is_read_as_libgit2_reads_it(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    data = (root / ".git" / "index").read_bytes()
    assert b"TREE" in data  # git wrote the cache tree
    assert plain_subject.index_paths(root / ".git" / "index") == _libgit2_paths(root)


@pytest.mark.parametrize("kind", ["checksum", "tree-count", "dotgit", "dotdot"])
def test_an_index_libgit2_refuses_is_unsure_for_the_fast_reader(tmp_path: Path, kind: str) -> None:
    root = _repo(tmp_path)
    index = root / ".git" / "index"
    index.write_bytes(_damage(kind, index.read_bytes()))
    assert _libgit2_paths(root) is None, "libgit2 reads it: not a refused index"
    with pytest.raises(plain_subject._Unsure):
        plain_subject.index_paths(index)
