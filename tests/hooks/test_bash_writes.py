"""``bash_writes.written_files``: which files a shell command writes, where it can be told."""

from __future__ import annotations

from pathlib import Path

import pytest

from meridian.hooks.bash_writes import written_files


@pytest.mark.parametrize(("command", "expected"), [
    ("echo hi > a.txt", ["a.txt"]),
    ("echo hi >>b.txt 2>&1", ["b.txt"]),
    ("make 2> err.log >| out.log", ["err.log", "out.log"]),
    ("cmd &> all.log", ["all.log"]),
    ("cat <<EOF > c.py\nx > not-a-file\nEOF\ntouch after.txt", ["c.py", "after.txt"]),
    ("cat <<'END' | tee -a d.txt e.txt\nbody\nEND", ["d.txt", "e.txt"]),
    ("cp src.py dst.py", ["dst.py"]),
    ("cp -r a b dir/", ["dir/a", "dir/b"]),
    ("mv -t target one.py two.py", ["target/one.py", "target/two.py"]),
    ("mv --target-directory=t x.py", ["t/x.py"]),
    ("sed -i.bak 's/a/b/' f1 f2", ["f1", "f2"]),
    ("sed -e 's/x/y/' -i g1", ["g1"]),
    ("sed -Ei 's/x/y/' h1", ["h1"]),
    ("touch -d 2020-01-01 stamp.txt", ["stamp.txt"]),
    ("a && touch g | h; true || touch k", ["g", "k"]),
    ("X=1 sudo env Y=2 tee /etc/conf > /dev/null", ["/etc/conf"]),
    ("dd if=in.bin of=out.bin bs=1k", ["out.bin"]),
    ("echo one \\\n  > continued.txt", ["continued.txt"]),
    # cd moves the later relative targets (not the cd's own redirection), until its
    # subshell closes; a directory that cannot be told hides them
    ("cd api && echo x > app.py", ["api/app.py"]),
    ("cd api/ && pushd sub && touch z; cd ../.. && touch top", ["api/sub/z", "top"]),
    ("cd x > log.txt", ["log.txt"]),
    ("(cd docs && touch x); touch api/a.py", ["docs/x", "api/a.py"]),
    ("(cd docs; touch x)&&touch y", ["docs/x", "y"]),
    ("cd $DIR && touch c /abs/d", ["/abs/d"]),
    ("popd; touch q", []),
    # a shell's inline command, and more writers
    ("bash -c 'echo hi > api/x.py'", ["api/x.py"]),
    ('sh -lc "cd api && tee y"', ["api/y"]),
    ("perl -pi -e 's/a/b/' p1", ["p1"]),
    ("perl -i.bak -pe 's/a/b/' p2 p3", ["p2", "p3"]),
    ("truncate -s 0 t1", ["t1"]),
    ("install -m 644 build/a bin/a", ["bin/a"]),
    ("ln -sf ../x link", ["link"]),
    ("git mv old.py new.py", ["new.py"]),
])
def test_written_files(command: str, expected: list[str], tmp_path: Path) -> None:
    assert written_files(command, tmp_path) == expected


@pytest.mark.parametrize("command", [
    "ls -la", "cat a.txt", "sed 's/a/b/' f1", "echo x >&2", "echo x > /dev/null",
    "echo $HOME > $OUT", "touch src/*.py", "echo `date` > `name`", "echo 'unterminated",
    "git status  # > commented.txt", "python -c 'open(\"x\", \"w\")'",
    "perl -e 'print 1' f", "bash script.sh arg", "cd && touch home.txt",
])
def test_commands_whose_writes_cannot_be_told(command: str, tmp_path: Path) -> None:
    assert written_files(command, tmp_path) == []


def test_copy_into_an_existing_directory(tmp_path: Path) -> None:
    (tmp_path / "dest").mkdir()
    assert written_files("cp a.py dest", tmp_path) == ["dest/a.py"]


@pytest.mark.parametrize(("command", "expected"), [
    ("rm -f .meridian/rules.yaml", [".meridian/rules.yaml"]),
    ("rm -rf -- .meridian", [".meridian"]),
    ("unlink a; rmdir b", ["a", "b"]),
    ("mv .meridian/gates.yaml /tmp/gates.yaml", ["/tmp/gates.yaml", ".meridian/gates.yaml"]),
    ("mv -t /tmp one two", ["/tmp/one", "/tmp/two", "one", "two"]),
    ("git mv old.py new.py", ["new.py", "old.py"]),
    ("git rm -q --cached c.yaml", ["c.yaml"]),
    ("cd .meridian && rm config.yaml", [".meridian/config.yaml"]),
    ("bash -c 'shred -u key'", ["key"]),
])
def test_removals_count_when_asked(command: str, expected: list[str], tmp_path: Path) -> None:
    assert written_files(command, tmp_path, removals=True) == expected


def test_removals_are_not_writes_by_default(tmp_path: Path) -> None:
    # The locked-gate check asks for writes only, as it always did.
    assert written_files("rm -f api/app.py; mv a.py b.py", tmp_path) == ["b.py"]


@pytest.mark.parametrize(("command", "expected"), [
    ("meridian rules retire no-stub-code --reason 'in the way'", [".meridian/rules.yaml"]),
    ("/work/venv/bin/python -m meridian rules activate x", [".meridian/rules.yaml"]),
    ("meridian -C sub rules retire x --reason y", ["sub/.meridian/rules.yaml"]),
    ("meridian init --no-hooks --claude", [".meridian/config.yaml", ".claude/settings.json"]),
    ("meridian rules --due; meridian init --list-templates; meridian status", []),
])
def test_meridian_commands_that_edit_the_harness(command: str, expected: list[str],
                                                 tmp_path: Path) -> None:
    assert written_files(command, tmp_path) == expected
