"""``meridian hooks install|uninstall``: polite, idempotent, chained, reversible."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from meridian import gitio
from meridian.hooks import install
from tests.conftest import git
from tests.hooks.conftest import PYTHON, STUB_MODULE, Proc, head, run_git, write

USER_HOOK = "#!/bin/sh\necho user-hook-ran >> \"$(git rev-parse --git-dir)/user-hook.log\"\nexit 0\n"


def _hook(root: Path, name: str) -> Path:
    return root / ".git" / "hooks" / name


def test_install_writes_marked_executable_stubs_with_this_python(
        project: Path, cli: Callable[..., Proc]) -> None:
    result = cli("hooks", "install")
    assert result.code == 0
    assert result.out.splitlines() == [f"installed {_hook(project, 'pre-commit')}",
                                       f"installed {_hook(project, 'pre-push')}"]
    for name in ("pre-commit", "pre-push"):
        text = _hook(project, name).read_text()
        assert text.startswith("#!/bin/sh\n# meridian-hook-stub v3: " + name)
        assert f"MERIDIAN_PYTHON={PYTHON}\n" in text
        assert "\"$MERIDIAN_PYTHON\" -I -m meridian hook " + name in text
        assert _hook(project, name).stat().st_mode & stat.S_IXUSR


def test_install_is_idempotent(project: Path, cli: Callable[..., Proc]) -> None:
    cli("hooks", "install")
    before = {n: _hook(project, n).read_bytes() for n in ("pre-commit", "pre-push")}
    result = cli("hooks", "install", "--json")
    assert result.code == 0
    changes = json.loads(result.out)["changes"]
    assert [(c["hook"], c["action"], c["chained"]) for c in changes] == [
        ("pre-commit", "unchanged", None), ("pre-push", "unchanged", None)]
    assert {n: _hook(project, n).read_bytes() for n in before} == before
    assert sorted(p.name for p in (project / ".git" / "hooks").iterdir()
                  if not p.name.endswith(".sample")) == ["pre-commit", "pre-push"]


def test_an_outdated_stub_is_upgraded(project: Path, cli: Callable[..., Proc]) -> None:
    cli("hooks", "install")
    path = _hook(project, "pre-commit")
    path.write_text(path.read_text().replace(PYTHON, "/old/venv/bin/python"))
    result = cli("hooks", "install")
    assert result.out.splitlines()[0] == f"upgraded {path}"
    assert f"MERIDIAN_PYTHON={PYTHON}\n" in path.read_text()


def test_existing_hook_is_kept_chained_and_restored(project: Path, cli: Callable[..., Proc]) -> None:
    original = _hook(project, "pre-commit")
    original.write_text(USER_HOOK)
    original.chmod(0o755)
    result = cli("hooks", "install")
    assert result.out.splitlines()[0] == (
        f"installed {original} (the existing hook runs first: pre-commit.meridian-chained)")
    chained = _hook(project, "pre-commit.meridian-chained")
    assert chained.read_text() == USER_HOOK

    # A real commit runs the user's hook, then Meridian's: here Meridian refuses a stub.
    write(project, "schema/shapes.py", STUB_MODULE)
    git(project, "add", "schema/shapes.py")
    refused = run_git(project, "commit", "-q", "-m", "stub")
    assert refused.code == 1 and "meridian pre-commit: commit refused" in refused.err
    git(project, "rm", "-q", "--cached", "schema/shapes.py")
    write(project, "notes.txt", "plain file\n")
    git(project, "add", "notes.txt")
    assert run_git(project, "commit", "-q", "-m", "notes").code == 0
    assert (project / ".git" / "user-hook.log").read_text() == "user-hook-ran\n" * 2

    # Installing again keeps the chain as it is.
    again = cli("hooks", "install", "--json")
    assert json.loads(again.out)["changes"][0]["action"] == "unchanged"

    result = cli("hooks", "uninstall")
    assert result.out.splitlines() == [
        "removed Meridian's pre-commit and restored the hook that was there",
        f"removed {_hook(project, 'pre-push')}"]
    assert original.read_text() == USER_HOOK and os.access(original, os.X_OK)
    assert not chained.exists() and not _hook(project, "pre-push").exists()
    assert cli("hooks", "uninstall").out.splitlines() == [
        f"{original} is not Meridian's; left untouched",
        f"{_hook(project, 'pre-push')}: no Meridian hook installed"]


def test_a_failing_chained_hook_refuses_the_commit(project: Path, cli: Callable[..., Proc]) -> None:
    original = _hook(project, "pre-commit")
    original.write_text("#!/bin/sh\necho 'user hook says no' >&2\nexit 7\n")
    original.chmod(0o755)
    cli("hooks", "install")
    before = head(project)
    write(project, "notes.txt", "plain file\n")
    git(project, "add", "notes.txt")
    result = run_git(project, "commit", "-q", "-m", "notes")
    assert result.code == 1
    assert "user hook says no" in result.err
    assert "meridian pre-commit" not in result.err  # the chain stops at the first failure
    assert head(project) == before


def test_chained_pre_push_hook_reads_the_same_refs(project: Path, cli: Callable[..., Proc],
                                                   tmp_path: Path) -> None:
    original = _hook(project, "pre-push")
    log = tmp_path / "pre-push.stdin"
    original.write_text(f"#!/bin/sh\necho \"args: $1 $2\" > {log}\ncat >> {log}\n")
    original.chmod(0o755)
    cli("hooks", "install")
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    git(project, "remote", "add", "origin", str(remote))
    result = run_git(project, "push", "-q", "origin", "main")
    assert result.code == 0, result
    sha = head(project)
    assert log.read_text() == (f"args: origin {remote}\n"
                               f"refs/heads/main {sha} refs/heads/main {'0' * 40}\n")


def test_core_hooks_path_is_refused_with_the_framework_route(
        project: Path, cli: Callable[..., Proc]) -> None:
    git(project, "config", "core.hooksPath", ".githooks")
    result = cli("hooks", "install")
    assert result.code == 2
    assert result.err == (
        "meridian: core.hooksPath is set (.githooks), so git ignores .git/hooks and a hook "
        "installed there would never run; not installing. Run Meridian through your hook "
        "manager instead: with the pre-commit framework, add the hook ids meridian-pre-commit "
        "and meridian-pre-push (`meridian hooks snippet` prints the .pre-commit-config.yaml "
        "entries, `repo: local`); or call `meridian hook pre-commit` and `meridian hook "
        "pre-push` from the hooks in that directory\n")
    assert not _hook(project, "pre-commit").exists()
    snippet = cli("hooks", "snippet").out
    assert "- id: meridian-pre-commit" in snippet and "- id: meridian-pre-push" in snippet
    assert "repo: local" in snippet


def test_init_installs_the_hooks_once(repo_with_commit: Path,
                                                         cli: Callable[..., Proc]) -> None:
    result = cli("init")
    assert "created .git/hooks/pre-commit (installed)" in result.out.splitlines()
    assert install.is_meridian_stub(_hook(repo_with_commit, "pre-push"))
    assert "  kept .git/hooks/pre-commit" in cli("init").out.splitlines()


def test_init_with_core_hooks_path_succeeds_without_hooks(repo_with_commit: Path,
                                                          cli: Callable[..., Proc]) -> None:
    git(repo_with_commit, "config", "core.hooksPath", "hooks-dir")
    result = cli("init")
    assert result.code == 0
    assert ("kept core.hooksPath (hooks-dir): git hooks not installed; run Meridian from your "
            "hook manager (`meridian hooks snippet`)") in result.out
    assert not _hook(repo_with_commit, "pre-commit").exists()


def test_a_linked_worktree_installs_into_the_common_hooks_dir(project: Path, tmp_path: Path,
                                                              cli: Callable[..., Proc],
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    linked = tmp_path / "linked"
    git(project, "worktree", "add", "-q", str(linked), "-b", "side")
    monkeypatch.chdir(linked)
    assert cli("hooks", "install").code == 0
    assert install.is_meridian_stub(_hook(project, "pre-commit"))
    assert gitio.hooks_dir(gitio.open_repo(linked)) == project / ".git" / "hooks"


def test_stub_falls_back_to_meridian_on_path(project: Path, tmp_path: Path) -> None:
    repo = gitio.open_repo(project)
    install.install(repo, python="/nonexistent/python3")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "meridian"
    fake.write_text(f"#!/bin/sh\necho \"fallback $*\" > {tmp_path / 'fallback.log'}\nexit 0\n")
    fake.chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"}
    write(project, "notes.txt", "x\n")
    git(project, "add", "notes.txt")
    proc = subprocess.run(["git", "commit", "-q", "-m", "n"], cwd=project, env=env,
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "fallback.log").read_text() == "fallback hook pre-commit\n"


def test_stub_without_any_meridian_refuses_with_a_hint(project: Path, tmp_path: Path) -> None:
    install.install(gitio.open_repo(project), python="/nonexistent/python3")
    write(project, "notes.txt", "x\n")
    git(project, "add", "notes.txt")
    git_path = shutil.which("git")
    assert git_path is not None
    # git, sh and coreutils, but no directory holding a `meridian` executable.
    path = [os.path.dirname(git_path), "/usr/bin", "/bin"]
    env = {**os.environ, "PATH": ":".join(p for p in path if not (Path(p) / "meridian").exists())}
    proc = subprocess.run(["git", "commit", "-q", "-m", "n"], cwd=project, env=env,
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 1
    assert ("meridian: cannot run the pre-commit hook: /nonexistent/python3 is gone, "
            "`meridian` is not on PATH and python3 has no meridian; reinstall with "
            "`meridian hooks install`") in proc.stderr


def test_a_foreign_hook_over_a_chain_is_not_clobbered(project: Path) -> None:
    repo = gitio.open_repo(project)
    hooks = gitio.hooks_dir(repo)
    hooks.mkdir(parents=True, exist_ok=True)
    (hooks / "pre-commit").write_text("#!/bin/sh\nexit 0\n")
    (hooks / "pre-commit.meridian-chained").write_text("#!/bin/sh\nexit 0\n")
    with pytest.raises(Exception) as info:
        install.install(repo)
    assert str(info.value) == (
        f"{hooks / 'pre-commit'} is not Meridian's and pre-commit.meridian-chained already "
        "exists beside it; merge them by hand (or remove one), then run `meridian hooks "
        "install` again")
    assert (hooks / "pre-commit").read_text() == "#!/bin/sh\nexit 0\n"


def test_the_stubs_are_the_top_level_hooks() -> None:
    # (the wheel carries the same files: tests/packaging/test_wheel.py)
    root = Path(__file__).resolve().parents[2]
    assert install.stub_dir() == root / "hooks"
    for name in ("pre-commit", "pre-push"):
        assert install.MARKER in (root / "hooks" / name).read_text()


def test_a_failing_chained_pre_push_hook_refuses_the_push(project: Path, tmp_path: Path,
                                                          cli: Callable[..., Proc]) -> None:
    original = _hook(project, "pre-push")
    # It reads its stdin to the end, as a real pre-push hook does, then refuses.
    original.write_text("#!/bin/sh\ncat > /dev/null\necho 'user pre-push says no' >&2\nexit 5\n")
    original.chmod(0o755)
    cli("hooks", "install")
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    git(project, "remote", "add", "origin", str(remote))
    result = run_git(project, "push", "-q", "origin", "main")
    assert result.code == 1
    assert "user pre-push says no" in result.err
    assert "meridian pre-push" not in result.err
    assert git(remote, "for-each-ref", "refs/heads").strip() == ""
