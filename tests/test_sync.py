"""Two clones that both appended converge on `meridian sync`, whoever merges."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from meridian.cli import main
from meridian.ledger import Ledger
from meridian.verify import verify
from tests.conftest import git


@pytest.fixture
def remote(tmp_path: Path) -> Path:
    bare = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    seed = tmp_path / "seed"
    git(tmp_path, "clone", "-q", str(bare), str(seed))
    (seed / "app.py").write_text("print('hi')\n")
    git(seed, "add", "app.py")
    git(seed, "commit", "-q", "-m", "app")
    git(seed, "push", "-q", "origin", "HEAD:main")
    return bare


def clone(remote: Path, path: Path, monkeypatch: pytest.MonkeyPatch, *extra: str) -> Path:
    # --depth is ignored for plain local paths, so shallow clones use a file:// URL
    source = f"file://{remote}" if extra else str(remote)
    git(remote.parent, "clone", "-q", *extra, source, str(path))
    monkeypatch.chdir(path)
    assert main(["init", "--no-hooks"]) == 0
    return path


def records(path: Path) -> list[str]:
    return [r.line() for r in Ledger.open(path).records()]


def sync(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(path)
    assert main(["sync"]) == 0


def test_two_clones_converge_and_a_third_sees_everything(
        remote: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    a = clone(remote, tmp_path / "a", monkeypatch)
    sync(a, monkeypatch)
    b = clone(remote, tmp_path / "b", monkeypatch)
    # b adopted a's history instead of starting a second one
    assert Ledger.open(b).tip() == Ledger.open(a).tip()
    for n in range(3):
        Ledger.open(a).emit("test.append", {"clone": "a", "n": n})
        Ledger.open(b).emit("test.append", {"clone": "b", "n": n})
    sync(a, monkeypatch)
    sync(b, monkeypatch)  # diverged: b merges by record id and pushes
    sync(a, monkeypatch)  # fast-forward
    assert records(a) == records(b)
    kinds = [json.loads(line)["data"].get("clone") for line in records(a)]
    assert sorted(k for k in kinds if k) == ["a"] * 3 + ["b"] * 3
    head = git(b, "log", "-1", "--format=%P", "meridian/state").split()
    assert len(head) == 2, "the merge commit has both parents"
    assert verify(Ledger.open(b), full=True).ok
    c = clone(remote, tmp_path / "c", monkeypatch)
    assert records(c) == records(a)


def test_merge_result_is_the_same_whichever_clone_merges(
        remote: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    a = clone(remote, tmp_path / "a", monkeypatch)
    sync(a, monkeypatch)
    b = clone(remote, tmp_path / "b", monkeypatch)
    Ledger.open(a).emit("test.append", {"clone": "a"})
    Ledger.open(b).emit("test.append", {"clone": "b"})
    a_tip, b_tip = Ledger.open(a).tip(), Ledger.open(b).tip()
    # each clone merges the other's tip on its own
    git(a, "fetch", "-q", str(b), "meridian/state:refs/other")
    git(b, "fetch", "-q", str(a), "meridian/state:refs/other")
    Ledger.open(a).integrate(Ledger.open(a).repo.references["refs/other"].target, summary="m")
    Ledger.open(b).integrate(Ledger.open(b).repo.references["refs/other"].target, summary="m")
    assert a_tip != b_tip
    assert git(a, "rev-parse", "meridian/state^{tree}") == git(b, "rev-parse", "meridian/state^{tree}")


def test_concurrent_push_during_sync_is_retried_not_lost(
        remote: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    a = clone(remote, tmp_path / "a", monkeypatch)
    sync(a, monkeypatch)
    b = clone(remote, tmp_path / "b", monkeypatch)
    Ledger.open(b).emit("test.append", {"clone": "b", "racing": True})
    # b's commit reaches the remote under a side ref; the remote's pre-receive hook moves
    # the state branch to it at the moment a pushes, exactly as a racing push would.
    git(b, "push", "-q", "--no-verify", "origin", "meridian/state:refs/heads/racer")
    hook = remote / "hooks" / "pre-receive"
    marker = tmp_path / "raced"
    hook.write_text(
        "#!/bin/sh\n"
        "unset GIT_QUARANTINE_PATH GIT_OBJECT_DIRECTORY GIT_ALTERNATE_OBJECT_DIRECTORIES\n"
        f"if [ ! -e {marker} ]; then touch {marker}; "
        "git update-ref refs/heads/meridian/state refs/heads/racer; fi\n"
        "exit 0\n")
    os.chmod(hook, 0o755)
    Ledger.open(a).emit("test.append", {"clone": "a"})
    monkeypatch.chdir(a)
    capsys.readouterr()
    assert main(["sync", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert marker.exists() and result["attempts"] == 2 and result["pushed"]
    clones = [r for r in records(a) if '"clone"' in r]
    assert {json.loads(r)["data"]["clone"] for r in clones} == {"a", "b"}
    remote_log = git(remote, "log", "--format=%H", "meridian/state")
    assert git(a, "rev-parse", "meridian/state").strip() in remote_log.split()


def test_baseline_tags_travel(remote: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    a = clone(remote, tmp_path / "a", monkeypatch)
    ledger = Ledger.open(a)
    ledger.emit("test.append", {"n": 1})
    git(a, "tag", "meridian/baseline/main", "meridian/state")
    sync(a, monkeypatch)
    b = clone(remote, tmp_path / "b", monkeypatch)
    sync(b, monkeypatch)
    assert git(b, "rev-parse", "meridian/baseline/main") == git(a, "rev-parse", "meridian/baseline/main")


def test_shallow_clone_gets_the_state_branch_in_full(
        remote: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    a = clone(remote, tmp_path / "a", monkeypatch)
    for n in range(5):
        Ledger.open(a).emit("test.append", {"n": n})
    sync(a, monkeypatch)
    shallow = clone(remote, tmp_path / "shallow", monkeypatch, "--depth", "1")
    assert Ledger.open(shallow).tip() == Ledger.open(a).tip()
    assert git(shallow, "rev-list", "--count", "meridian/state").strip() == "6"
    assert verify(Ledger.open(shallow), full=True).ok


def test_sync_with_unknown_remote(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["init", "--no-hooks"]) == 0
    assert main(["sync", "upstream"]) == 2
    assert capsys.readouterr().err == "meridian: no git remote named 'upstream' (see `git remote -v`)\n"


def test_the_same_memory_written_in_two_clones_merges_cleanly(
        remote: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    a = clone(remote, tmp_path / "a", monkeypatch)
    sync(a, monkeypatch)
    b = clone(remote, tmp_path / "b", monkeypatch)
    note = '{"text": "tests first", "context": "core", "confidence": 0.5}'
    for path in (a, b):
        monkeypatch.chdir(path)
        assert main(["memory", "add", "semantic", "--json", note]) == 0
    sync(a, monkeypatch)
    sync(b, monkeypatch)
    sync(a, monkeypatch)
    assert records(a) == records(b)
    semantic = list(Ledger.open(a).records("memory/semantic"))
    assert len(semantic) == 1
    for path in (a, b):
        assert verify(Ledger.open(path), full=True).ok


def _pin(path: Path, name: str, n: int) -> str:
    """Store a run-like commit and pin it the way `meridian baseline pin` records it."""
    ledger = Ledger.open(path)
    ledger.emit("test.append", {"n": n})
    commit = str(ledger.tip())
    ledger.pin_tag(f"meridian/baseline/{name}", ledger.tip())  # type: ignore[arg-type]
    ledger.emit("baseline.pinned", {"name": name, "run_id": f"run{n}", "commit": commit})
    return commit


def test_a_re_pinned_baseline_reaches_other_clones(
        remote: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    a = clone(remote, tmp_path / "a", monkeypatch)
    first = _pin(a, "main", 1)
    sync(a, monkeypatch)
    b = clone(remote, tmp_path / "b", monkeypatch)
    sync(b, monkeypatch)
    assert git(b, "rev-parse", "meridian/baseline/main").strip() == first
    second = _pin(a, "main", 2)  # re-pin after the old pin was pushed
    sync(a, monkeypatch)
    sync(b, monkeypatch)
    assert git(b, "rev-parse", "meridian/baseline/main").strip() == second
    assert git(remote, "rev-parse", "meridian/baseline/main").strip() == second


def test_init_with_an_unreachable_remote_starts_locally_and_says_so(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    git(repo, "remote", "add", "origin", str(repo.parent / "does-not-exist.git"))
    assert main(["init", "--no-hooks"]) == 0
    out = capsys.readouterr().out
    assert "created branch meridian/state" in out
    assert "warning: could not fetch meridian/state from origin" in out
    assert Ledger.open(repo).exists()


def test_a_remote_that_refuses_the_push_is_an_error_not_a_retry_loop(
        remote: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    a = clone(remote, tmp_path / "a", monkeypatch)
    hook = remote / "hooks" / "pre-receive"
    hook.write_text("#!/bin/sh\necho 'state pushes are frozen' >&2\nexit 1\n")
    os.chmod(hook, 0o755)
    monkeypatch.chdir(a)
    capsys.readouterr()
    assert main(["sync"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("meridian: git push origin meridian/state was refused:")
    assert "pre-receive hook declined" in err and err.count("\n") == 1


def test_verify_refuses_to_vouch_for_a_shallow_state_branch(
        remote: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    a = clone(remote, tmp_path / "a", monkeypatch)
    for n in range(4):
        Ledger.open(a).emit("test.append", {"n": n})
    sync(a, monkeypatch)
    shallow = tmp_path / "shallow"
    git(tmp_path, "clone", "-q", "--depth", "2", "--no-single-branch", f"file://{remote}", str(shallow))
    git(shallow, "branch", "meridian/state", "origin/meridian/state")
    monkeypatch.chdir(shallow)
    capsys.readouterr()
    assert main(["verify", "--full"]) == 1
    assert "history incomplete: this is a shallow clone" in capsys.readouterr().out
    sync(shallow, monkeypatch)  # fetches the state branch in full
    assert main(["verify", "--full"]) == 0


def test_a_refused_branch_push_leaves_the_remote_tags_alone(
        remote: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from meridian import gitio

    a = clone(remote, tmp_path / "a", monkeypatch)
    sync(a, monkeypatch)
    b = clone(remote, tmp_path / "b", monkeypatch)
    Ledger.open(b).emit("test.append", {"clone": "b"})
    sync(b, monkeypatch)  # the remote moved; a has not fetched it
    stale = Ledger.open(a).tip()
    _pin(a, "main", 1)
    ledger = Ledger.open(a)
    with pytest.raises(gitio.PushRejected):
        gitio.push_branch(ledger.repo, "origin", ledger.branch, expected_remote=stale,
                          tag_prefix="meridian/baseline/")
    assert "meridian/baseline/main" not in git(remote, "tag", "--list")
    sync(a, monkeypatch)  # the retry merges, then branch and tag go together
    tag = git(remote, "rev-parse", "meridian/baseline/main").strip()
    assert git(remote, "merge-base", "--is-ancestor", tag, "meridian/state") == ""


@pytest.mark.parametrize("commit", ["not-a-sha", "0123456789" * 4])
def test_a_pin_event_naming_no_commit_of_the_branch_does_not_break_sync(
        remote: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, commit: str) -> None:
    a = clone(remote, tmp_path / "a", monkeypatch)
    first = _pin(a, "main", 1)
    Ledger.open(a).emit("baseline.pinned", {"name": "main", "run_id": "x", "commit": commit})
    sync(a, monkeypatch)
    assert git(remote, "rev-parse", "meridian/baseline/main").strip() == first


def test_a_relative_remote_url_syncs_like_plain_git_from_the_top_and_a_subdirectory(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`git remote add origin ../e1.git` is resolved from the work tree's top by git; sync
    ran its fetch and push inside `.git`, where `../e1.git` names a path beside `.git`."""
    bare = tmp_path / "e1.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    project = tmp_path / "e1"
    project.mkdir()
    git(project, "init", "-q", "-b", "main")
    git(project, "commit", "-q", "--allow-empty", "-m", "i")
    git(project, "remote", "add", "origin", "../e1.git")
    monkeypatch.chdir(project)
    assert main(["init", "--no-hooks"]) == 0
    Ledger.open(project).emit("test.append", {"n": 1})
    assert main(["sync"]) == 0
    tip = git(bare, "rev-parse", "refs/heads/meridian/state").strip()
    assert tip == str(Ledger.open(project).tip())
    # a second clone with the same relative URL, syncing from a subdirectory, fetches it
    other = tmp_path / "other"
    other.mkdir()
    git(other, "init", "-q", "-b", "main")
    git(other, "commit", "-q", "--allow-empty", "-m", "i")
    git(other, "remote", "add", "origin", "../e1.git")
    (other / "sub").mkdir()
    monkeypatch.chdir(other / "sub")
    assert main(["sync"]) == 0
    assert str(Ledger.open(other).tip()) == tip
    Ledger.open(other).emit("test.append", {"n": 2})
    assert main(["sync"]) == 0
    assert git(bare, "rev-parse", "refs/heads/meridian/state").strip() == str(
        Ledger.open(other).tip())
