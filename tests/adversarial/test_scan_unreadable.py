"""Attack: hide a stub from the offline scan by making its checked-out file unreadable
as UTF-8. A committed ``.gitattributes`` line ``src/x.py working-tree-encoding=UTF-16LE-BOM``
keeps the committed blob UTF-8 (the reviewer sees a plain stub) while the work tree, the
file the scan reads in ``gate submit`` and in ``meridian ci``'s checkout, is UTF-16, which
a scan that only reads UTF-8 skipped as binary.

Layers: the offline scan (``gate submit``, ``meridian ci``'s re-check) decodes what git's
``working-tree-encoding`` writes (UTF-16/32 with a byte-order mark, the encoding the
attribute names), and fails closed on a source file it still cannot read: a high
``syntax_error`` naming the file, in the gate and in the pre-commit hook. Binary files
with other suffixes (an image) are not judged.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from tests.adversarial.conftest import CLEAN_MODULE, Proc, commit_all, pass_gate, run_git, write
from tests.adversarial.integrity_support import forge_pass
from tests.conftest import git

STUB = 'def multiply(a: int, b: int) -> int:\n    """Multiply."""\n    raise NotImplementedError\n'
# A PNG header and some bytes with NULs: a real binary artifact.
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x02\x00\x00\x00"


def _impl_started(project: Path, cli: Callable[..., Proc]) -> None:
    pass_gate(cli, project, "spec", "spec/spec.md", "# Spec\nArea of a rectangle, documented.\n")
    assert cli("gate", "start", "impl").code == 0
    write(project, "src/area.py", CLEAN_MODULE)


def _attributes(project: Path, line: str) -> None:
    write(project, ".gitattributes", line + "\n")
    commit_all(project, "attrs")


def _submit(cli: Callable[..., Proc]) -> Proc:
    return cli("gate", "submit", "impl", "--json")


def test_a_stub_checked_out_as_utf16_with_a_bom_is_scanned(
        project: Path, cli: Callable[..., Proc]) -> None:
    _impl_started(project, cli)
    _attributes(project, "src/extra.py working-tree-encoding=UTF-16LE-BOM")
    (project / "src" / "extra.py").write_bytes(b"\xff\xfe" + STUB.encode("utf-16-le"))
    git(project, "add", "-A")
    git(project, "commit", "-q", "--no-verify", "-m", "multiply")
    # What the reviewer sees in git is a plain UTF-8 stub; the work tree is UTF-16.
    assert git(project, "show", "HEAD:src/extra.py") == STUB
    result = _submit(cli)
    assert result.code != 0, result
    verdict = json.loads(result.out)
    stubs = [i for i in verdict["verdict"]["issues"] if i["file"] == "src/extra.py"]
    assert any(i["check"] == "stub_code" and i["severity"] == "high" and i["line"] == 3
               for i in stubs), stubs


def test_the_encoding_gitattributes_names_is_decoded(
        project: Path, cli: Callable[..., Proc]) -> None:
    """UTF-16 without a byte-order mark: only the attribute says how to read it."""
    _impl_started(project, cli)
    _attributes(project, "src/extra.py working-tree-encoding=UTF-16LE")
    (project / "src" / "extra.py").write_bytes(STUB.encode("utf-16-le"))
    git(project, "add", "-A")
    git(project, "commit", "-q", "--no-verify", "-m", "multiply")
    assert git(project, "show", "HEAD:src/extra.py") == STUB
    result = _submit(cli)
    assert result.code != 0, result
    issues = json.loads(result.out)["verdict"]["issues"]
    assert any(i["file"] == "src/extra.py" and i["check"] == "stub_code" and i["line"] == 3
               for i in issues), issues


def test_a_source_file_no_reader_can_decode_blocks_and_a_binary_image_does_not(
        project: Path, cli: Callable[..., Proc]) -> None:
    """Fail closed: UTF-16 with no mark and no attribute is not text the scan can read.
    The same gate with only an image as its binary file passes."""
    _impl_started(project, cli)
    (project / "src" / "logo.png").write_bytes(PNG)
    commit_all(project, "area and logo")
    clean = _submit(cli)
    assert clean.code == 0, clean
    assert cli("gate", "reopen", "impl", "--reason", "one more module").code == 0
    for name in ("extra.py", "extra.ts", "extra.go"):
        (project / "src" / name).write_bytes(STUB.encode("utf-16-le"))
    git(project, "add", "-A")
    git(project, "commit", "-q", "--no-verify", "-m", "more")
    result = _submit(cli)
    assert result.code != 0, result
    issues = json.loads(result.out)["verdict"]["issues"]
    unreadable = {i["file"] for i in issues if i["severity"] == "high"
                  and i["check"] == "syntax_error" and "cannot be read as text" in i["message"]}
    assert unreadable == {"src/extra.py", "src/extra.ts", "src/extra.go"}, issues
    assert not [i for i in issues if i["file"] == "src/logo.png"], issues


def test_ci_rescans_a_pass_on_a_utf16_stub(project: Path, cli: Callable[..., Proc]) -> None:
    """A pass on the UTF-16 stub written past the local scan (here forged by plumbing):
    CI's checkout holds the UTF-16 file too, and its re-run scan must read it."""
    _impl_started(project, cli)
    _attributes(project, "src/extra.py working-tree-encoding=UTF-16LE-BOM")
    (project / "src" / "extra.py").write_bytes(b"\xff\xfe" + STUB.encode("utf-16-le"))
    git(project, "add", "-A")
    git(project, "commit", "-q", "--no-verify", "-m", "multiply")
    forge_pass(project, "impl")
    result = cli("ci")
    assert result.code == 1, result
    assert "src/extra.py" in result.out, result.out


def test_the_precommit_hook_refuses_an_unreadable_source_file(
        project: Path, cli: Callable[..., Proc]) -> None:
    """The spec gate (no dependency) owns ``spec/**``: only the scan can refuse."""
    assert cli("hooks", "install").code == 0
    (project / "spec").mkdir(exist_ok=True)
    (project / "spec" / "extra.py").write_bytes(STUB.encode("utf-16-le"))
    (project / "spec" / "logo.png").write_bytes(PNG)
    git(project, "add", "spec/extra.py")
    refused = run_git(project, "commit", "-q", "-m", "multiply")
    assert refused.code != 0, refused
    assert "spec/extra.py" in refused.out + refused.err
    assert "cannot be read as text" in refused.out + refused.err
    git(project, "reset", "-q")
    git(project, "add", "spec/logo.png")
    accepted = run_git(project, "commit", "-q", "-m", "logo")
    assert accepted.code == 0, accepted
