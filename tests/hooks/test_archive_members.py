"""``archive_members``: an archive's members, listed before a Bash command extracts it,
within bounds (a FIFO is never read, a bomb stops early), and ``bash_writes`` judging an
extraction by them."""

from __future__ import annotations

import gzip
import io
import json
import os
import tarfile
import threading
import time
import zipfile
from pathlib import Path

import pytest

from meridian.hooks import archive_members
from meridian.hooks.archive_members import Member, Unlisted, members
from meridian.hooks.bash_writes import UNLISTED_MARK, read_unlisted_mark, written_files


def _tar(path: Path, entries: dict[str, bytes | str], mode: str = "w") -> Path:
    with tarfile.open(str(path), mode) as archive:  # type: ignore[call-overload]
        for name, data in entries.items():
            info = tarfile.TarInfo(name)
            if isinstance(data, str):
                info.type, info.linkname = tarfile.SYMTYPE, data
                archive.addfile(info)
            else:
                info.size = len(data)
                archive.addfile(info, io.BytesIO(data))
    return path


@pytest.mark.parametrize("mode", ["w", "w:gz", "w:bz2", "w:xz", "w|gz"])
def test_tar_members_in_every_compression(tmp_path: Path, mode: str) -> None:
    path = _tar(tmp_path / "x.tar", {"./docs/a.md": b"a", "hk": ".git/hooks"}, mode)
    assert members(path) == [Member("./docs/a.md"), Member("hk", ".git/hooks")]


def test_zip_members_and_a_symlink_member(tmp_path: Path) -> None:
    path = tmp_path / "x.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("api/", "")
        archive.writestr("api/app.py", "x = 1\n")
        link = zipfile.ZipInfo("hk")
        link.external_attr = 0o120777 << 16  # what `zip -y` stores for a symlink
        archive.writestr(link, ".git/hooks")
    assert members(path) == [Member("api/", folder=True), Member("api/app.py"),
                             Member("hk", ".git/hooks")]


def test_what_cannot_be_listed_says_why(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("not an archive\n")
    (tmp_path / "z.tar.zst").write_bytes(b"\x28\xb5\x2f\xfd" + bytes(600))
    for name, why in (("missing.tar", "does not exist"), ("notes.txt", "not a tar or zip"),
                      ("z.tar.zst", "zstd"), (".", "not a regular file")):
        with pytest.raises(Unlisted, match=why):
            members(tmp_path / name)


def test_a_fifo_is_never_read(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "x.tar")
    outcome: list[str] = []
    worker = threading.Thread(target=lambda: outcome.append(_why(tmp_path / "x.tar")),
                              daemon=True)
    worker.start()
    worker.join(10)
    assert outcome == ["it is not a regular file"]


def _why(path: Path) -> str:
    try:
        members(path)
    except Unlisted as exc:
        return str(exc)
    return "listed"


def test_a_bomb_stops_at_the_read_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(archive_members, "READ_LIMIT", 4 * 1024 * 1024)
    path = tmp_path / "bomb.tgz"
    with gzip.open(path, "wb", compresslevel=1) as raw, \
            tarfile.open(fileobj=raw, mode="w|") as archive:
        big = tarfile.TarInfo("zeros")
        big.size = 16 * 1024 * 1024
        archive.addfile(big, io.BytesIO(bytes(big.size)))
        last = tarfile.TarInfo(".meridian/gates.yaml")
        archive.addfile(last, io.BytesIO(b""))
    started = time.monotonic()
    assert "unpacks to more than 4 MiB" in _why(path)
    assert time.monotonic() - started < 5


def test_too_many_members(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(archive_members, "MEMBER_LIMIT", 3)
    path = tmp_path / "x.zip"
    with zipfile.ZipFile(path, "w") as archive:
        for n in range(4):
            archive.writestr(f"f{n}", "x")
    assert "more than 3 members" in _why(path)
    assert "more than 3 members" in _why(_tar(tmp_path / "x.tar", {f"f{n}": b"" for n in range(4)}))


@pytest.mark.parametrize(("command", "expected"), [
    ("tar -xf x.tar", ["api/app.py", "docs/a.md", "hk", ".git/hooks"]),
    ("tar xf x.tar", ["api/app.py", "docs/a.md", "hk", ".git/hooks"]),
    ("tar -x -v -f x.tar -C out", ["out/api/app.py", "out/docs/a.md", "out/hk", "out/.git/hooks"]),
    ("tar --extract --file=x.tar --directory out --strip-components=1", ["out/app.py",
                                                                       "out/a.md"]),
    ("tar -xf x.tar -C a -C b", ["a/api/app.py", "a/docs/a.md", "a/hk", "a/.git/hooks",
                                 "b/api/app.py", "b/docs/a.md", "b/hk", "b/.git/hooks"]),
    ("cd sub && tar -xf ../x.tar", ["sub/api/app.py", "sub/docs/a.md", "sub/hk", "sub/.git/hooks"]),
    ("unzip -o y.zip", ["api/app.py"]), ("unzip -j y.zip -d flat", ["flat/app.py"]),
    ("python3 -m zipfile -e y.zip out", ["out/api/app.py"]),
    ("7z x y.zip -oout", ["out/api/app.py"]), ("7z e y.zip", ["app.py"]),
    ("tar -tf x.tar", []), ("unzip -l y.zip", []), ("tar -czf z.tgz docs", ["z.tgz"]),
    ("tar -rf x.tar more", ["x.tar"]),
])
def test_extractions_are_judged_by_their_members(tmp_path: Path, command: str,
                                                 expected: list[str]) -> None:
    _tar(tmp_path / "x.tar", {"api/app.py": b"x", "./docs/a.md": b"a", "hk": ".git/hooks"})
    with zipfile.ZipFile(tmp_path / "y.zip", "w") as archive:
        archive.writestr("api/", "")
        archive.writestr("api/app.py", "x")
    (tmp_path / "sub").mkdir()
    assert written_files(command, tmp_path) == expected


@pytest.mark.parametrize(("command", "folder", "why"), [
    ("tar -xf missing.tar", ".", "does not exist yet"),
    ("curl -sL URL | tar -xz -C vendor", "vendor", "standard input"),
    ("tar -xf x.tar --transform s,a,b,", ".", "rewritten"),
    ("cp other.tar x.tar && tar -xf x.tar", ".", "an earlier part"),
    ("python3 pack.py x.tar; tar -xf x.tar", ".", "an earlier part"),
    ("tar -xf $A", ".", "expansion"),
    ("cd sub && unzip ../none.zip", "sub", "does not exist yet"),
])
def test_an_extraction_that_cannot_be_listed_is_a_mark(tmp_path: Path, command: str,
                                                       folder: str, why: str) -> None:
    _tar(tmp_path / "x.tar", {"docs/a.md": b"a"})
    (tmp_path / "sub").mkdir()
    found = written_files(command, tmp_path, unresolved=[])
    marks = [read_unlisted_mark(f) for f in found if f.startswith(UNLISTED_MARK)]
    assert [(m[0], why in m[1], m[2]) for m in marks] == [(folder, True, command)], found
    assert folder in [os.path.normpath(f) for f in found if not f.startswith("\0")], found


def test_commands_that_only_read_the_archive_leave_it_listed(tmp_path: Path) -> None:
    _tar(tmp_path / "x.tar", {"docs/a.md": b"a"})
    assert written_files("ls -la x.tar && du -h x.tar; tar -xf x.tar", tmp_path) == ["docs/a.md"]
    assert not any(json.dumps(f).startswith('"\\u0000') for f in
                   written_files("tar -tf x.tar && tar -xf x.tar", tmp_path))
