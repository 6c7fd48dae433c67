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


@pytest.mark.parametrize(("command", "expected"), [
    # the shell's own reading: exports carried across statements, braces, aliases,
    # `env -S`, code fed to a shell, '#' inside a word, a quoted "<<"
    ("export GIT_WORK_TREE=api; git checkout HEAD -- app.py", ["api/app.py"]),
    ("GIT_WORK_TREE=api; export GIT_WORK_TREE; git restore app.py", ["api/app.py"]),
    ("(export GIT_WORK_TREE=api); git checkout HEAD -- app.py", ["app.py"]),
    ("touch {api,docs}/x.py", ["api/x.py", "docs/x.py"]),
    ("alias c=cp\nc /tmp/x api/x.py", ["api/x.py"]),
    ("env -S 'cp /tmp/x api/x.py'", ["api/x.py"]),
    ("echo 'echo x > api/x.py' | bash", ["api/x.py"]),
    ("bash <<<'touch api/y'", ["api/y"]),
    ("sh <<'EOF'\ntouch api/z\nEOF", ["api/z"]),
    ("echo x#> api/h", ["api/h"]),
    ('echo "<<EOF"\ntouch after', ["after"]),
    ("(( n = 1 << 2 ))\ntouch after", ["after"]),
    ("git commit -m \"$(cat <<'EOF'\nit's (done)\nEOF\n)\" && touch after", ["after"]),
    ("echo `touch inner` > outer", ["inner", "outer"]),
    ("cd api && echo $(touch x) > y", ["api/x", "api/y"]),
    ("git clone https://example.com/x/lib.git vendor/lib", ["vendor/lib", "vendor/lib/"]),
    ("git update-index --skip-worktree a.py", ["a.py"]),
    ("git update-index --refresh", []),
    ("sort -o out.txt in.txt", ["out.txt"]),
    ("black src tests/x.py", ["src/", "tests/x.py"]),
    ("black --check src", []),
])
def test_written_files_as_the_shell_reads_them(command: str, expected: list[str],
                                               tmp_path: Path) -> None:
    assert written_files(command, tmp_path) == expected


@pytest.mark.parametrize(("command", "pattern"), [
    ("cp x $(echo api)/x.py", "\x02/x.py"),
    ("cp x `echo api`/y", "\x02/y"),
    ("cd $(echo api) && touch x.py", "\x02/x.py"),
    ("d=docs; d=$(echo api); touch $d/x", "\x02/x"),
    ("for f in $(ls api); do cat api/$f > build/$f; done", "build/\x02"),
    ("cp x $(mktemp -d)/y", None),  # the temporary folder: outside any project
])
def test_targets_built_by_expansions_are_reported_as_patterns(
        command: str, pattern: str | None, tmp_path: Path) -> None:
    from meridian.hooks.bash_writes import EXPANSION_MARK, read_expansion_mark

    unresolved: list[str] = []
    assert written_files(command, tmp_path, unresolved=unresolved) == []
    marks = [read_expansion_mark(u) for u in unresolved if u.startswith(EXPANSION_MARK)]
    if pattern is None:
        assert all(not p.startswith("\x02") and p.startswith("/") for p, _ in marks), marks
    else:
        assert marks == [(pattern, command)]


def test_a_glob_is_expanded_against_the_files_there_now(tmp_path: Path) -> None:
    (tmp_path / "api").mkdir()
    (tmp_path / "api" / "app.py").write_text("x")
    assert written_files("echo x > ap?/app.py", tmp_path) == ["api/app.py"]
    assert written_files("cp /tmp/x ap?/", tmp_path) == ["api/x"]
    assert written_files("mkdir docs && touch do?s/new.md", tmp_path) == ["docs/new.md"]
    assert written_files("touch zz?/x", tmp_path) == []  # matches nothing: as written


@pytest.mark.parametrize(("command", "named"), [
    # a file only read by cat/head/tail/git show REV:PATH is no name given to the code
    ("cat api/app.py | python3 -c 'import sys; print(sys.stdin.read())'", False),
    ("head -n 5 api/app.py | node -e 'x'", False),
    ("git show HEAD:api/app.py | python3 -c 'x'", False),
    ("sudo cat api/app.py | python3 -c 'x'", False),
    ("git diff api/ && python3 -c 'x'", False),  # the diff goes to the terminal
    # the code's own words, a name passed on by a pipe, a file or a variable: named
    ("cat api/app.py | python3 -c \"open('api/app.py', 'w')\"", True),
    ("cat x | python3 -c 'CODE' api/app.py", True),
    ("python3 -c 'CODE' < api/app.py", True),  # /proc/self/fd/0 names the file
    ("echo api/app.py | python3 -c 'CODE'", True),
    ("head api/app.py b.py | python3 -c 'CODE'", True),  # head prints each name
    ("git diff --name-only api/ | python3 -c 'CODE'", True),
    ("git diff api/ > /tmp/d; python3 -c 'CODE'", True),
    ("GIT_EXTERNAL_DIFF=x git diff api/; python3 -c 'CODE'", True),
    ("export F=api/app.py; cat x | python3 -c 'CODE'", True),
    ("cat api/app.py | python3 - <<'PY'\nopen('api/app.py', 'w')\nPY", True),
    ("cat $F api/app.py | python3 -c 'CODE'", True),  # an expansion: not read
])
def test_inline_code_is_judged_by_the_words_it_may_be_given(command: str, named: bool,
                                                              tmp_path: Path) -> None:
    unresolved: list[str] = []
    written_files(command, tmp_path, unresolved=unresolved)
    texts = [u for u in unresolved if not u.startswith("\0")]
    assert texts, unresolved
    assert any("api/app.py" in t or "api/" in t for t in texts) is named, texts


@pytest.mark.parametrize(("command", "expected"), [
    # output options of ordinary tools
    ("pytest --basetemp=out/tmp -q", ["out/tmp"]), ("pytest --junitxml=out/r.xml", ["out/r.xml"]),
    ("pytest --cov=x --cov-report=html:out/cov --cov-report=term", ["out/cov"]),
    ("pytest -o cache_dir=out/cache", ["out/cache"]),
    ("python -m pytest --basetemp out/t", ["out/t"]),
    ("coverage html -d out/htmlcov", ["out/htmlcov"]), ("coverage xml -o out/c.xml", ["out/c.xml"]),
    ("pip wheel -w out .", ["out/"]), ("pip install --report out/r.json x", ["out/r.json"]),
    ("uv pip install --target out requests", ["out"]), ("uv export -o out/req.txt", ["out/req.txt"]),
    ("docker build -o out .", ["out"]), ("docker build --output type=local,dest=out .", ["out"]),
    ("docker build --output type=registry .", []), ("docker run --workdir /app img", []),
    ("docker run --rm -v ./out:/x img", ["./out/"]), ("docker run -v data:/x img", []),
    ("docker run -v ./out:/x:ro img", []),
    ("docker run --mount type=bind,source=./out,target=/x img", ["./out/"]),
    ("docker run --mount type=bind,source=./out,target=/x,readonly img", []),
    ("git diff --output=out/d.patch", ["out/d.patch"]), ("git archive -o out/x.tar HEAD", ["out/x.tar"]),
    ("git log --oneline -5", []), ("kubectl get pods -o yaml", []), ("mypy --html-report out/r x", ["out/r"]),
    # formatters
    ("python3 -m black out", ["out/"]), ("autopep8 --in-place out/a.py", ["out/a.py"]),
    ("yapf --in-place out/a.py", ["out/a.py"]), ("biome format --write out", ["out/"]),
    ("biome format out", []), ("terraform fmt out", ["out/"]), ("terraform fmt -check out", []),
    ("ruff --fix out", ["out/"]), ("stylelint --fix out/a.css", ["out/a.css"]), ("stylelint out/a.css", []),
    # sed and awk writing files of their own
    ("sed -n 'W out/a' in.txt", ["out/a"]), ("sed 's|a|b|w out/b' in.txt", ["out/b"]),
    ("sed -n '/wait/p' in.txt", []), ("gawk -i inplace '{print}' out/a.txt", ["out/a.txt"]),
    # command lines planted for later: package scripts, git settings that run a command
    ("npm pkg set 'scripts.x=echo > out/a' && npm run x", ["out/a"]),
    ("git config core.pager 'sh -c \"echo x > out/a\"'", ["out/a"]),
    ("git config user.name 'A B'", []),
])
def test_tools_output_options_and_planted_commands(command: str, expected: list[str],
                                                   tmp_path: Path) -> None:
    assert written_files(command, tmp_path) == expected


@pytest.mark.parametrize(("command", "unreadable"), [
    ("echo 'echo x > out/a' > /tmp/e.sh && bash /tmp/e.sh", True),
    ("printf 'open(\"out/a\", \"w\")' > s.py; python3 s.py", True),
    ("cat > m.mk <<'EOF'\nall:\n\techo x > out/a\nEOF\nmake -f m.mk", True),
    ("bash missing.sh", True), ("./missing.sh", True),
    ("make -f - <<'EOF'\nall:\n\techo x > out/a\nEOF", True),
    ("make --eval='all: ; echo x > out/a'", True),
    ("sed 'e echo x > out/a' in.txt", True), ("awk -f /dev/stdin <<< 'BEGIN{print 1 > \"out/a\"}'", True),
    ("bash run.sh", False), ("chmod +x run.sh && ./run.sh", False), ("ls run.sh && bash run.sh", False),
    ("python3 gen.py run.sh && bash run.sh", True),  # (gen.py may write run.sh)
])
def test_code_the_command_writes_or_feeds_then_runs_cannot_be_read(
        command: str, unreadable: bool, tmp_path: Path) -> None:
    (tmp_path / "run.sh").write_text("echo hi\n")
    unresolved: list[str] = []
    written_files(command, tmp_path, unresolved=unresolved)
    texts = [u for u in unresolved if not u.startswith("\0")]
    assert any("out/a" in t or "run.sh" in t or "missing" in t for t in texts) is unreadable, \
        unresolved


@pytest.mark.parametrize(("command", "expected"), [
    ("PIP_TARGET=out pip install x", ["out/"]), ("export PIP_TARGET=out; pip install x", ["out/"]),
    ("PYTEST_ADDOPTS='--basetemp=out' pytest", ["out"]), ("make DESTDIR=out install", ["out/"]),
    ("COVERAGE_FILE=out/.cov coverage run -m pytest", ["out/.cov"]),
    ("python -m coverage html -d out/cov", ["out/cov"]), ("FOO=out make", []),
    ("git restore --staged out/a", []), ("git restore -SW out/a", ["out/a"]),
])
def test_variables_that_move_a_tools_output(command: str, expected: list[str],
                                            tmp_path: Path) -> None:
    assert written_files(command, tmp_path) == expected


def test_find_acts_on_the_files_its_filters_match_at_any_depth(tmp_path: Path) -> None:
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "a" / "b" / "deep.py").write_text("x")
    (tmp_path / "a" / "top.md").write_text("x")
    assert "a/b/deep.py" in written_files("find . -name 'deep.py' -delete", tmp_path,
                                          removals=True)
    assert "a/b/deep.py" in written_files("find a -iname '*.PY' -exec sed -i s/x/y/ {} +",
                                          tmp_path)
    assert "a/b/deep.py" in written_files("find . -regex '.*/b/.*' -delete", tmp_path,
                                          removals=True)
    assert "a/b/deep.py" not in written_files("find . -name '*.md' -delete", tmp_path,
                                              removals=True)
    # a negated filter matches what the others do not: the start, members unknown
    assert "./" in written_files("find . ! -name '*.md' -delete", tmp_path, removals=True)


def test_a_script_written_in_the_line_is_judged_by_its_writers(tmp_path: Path) -> None:
    unresolved: list[str] = []
    written_files("python -m venv .venv && source .venv/bin/activate && pytest out/a",
                  tmp_path, unresolved=unresolved)
    assert not any("out/a" in u for u in unresolved), unresolved  # (the venv's own script)
    unresolved = []
    written_files("echo 'rm out/a' > x.sh; pytest -q; bash x.sh", tmp_path, unresolved=unresolved)
    assert any("rm out/a" in u for u in unresolved), unresolved
