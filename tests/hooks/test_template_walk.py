"""Each shipped template, walked through every gate of a realistic project.

`meridian init --template NAME` (hooks installed), then for each gate in order: start
it, write its files, commit them with real `git commit` through the installed
pre-commit hook, and submit it: the template's own checks run (pytest, npm, a shell
script) and the offline evaluator judges the artifacts. Along the way:

- a commit of the gate in progress is never refused and never warns about another
  gate going stale (each file belongs to one gate: ``meridian owners`` says which);
- a file that only a locked gate owns is refused, naming that gate;
- project-wide files (README, pyproject, licence, CI) belong to no gate and can be
  committed before the first gate is even started, and at every step after.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.hooks.conftest import Proc, run_git, write

TOPLEVEL = {
    "README.md": "# {name}\n\nSee docs/ for how to use it.\n",
    "LICENSE": "MIT License\n\nCopyright (c) 2026 The Authors\n",
    ".gitignore": "__pycache__/\n.pytest_cache/\nnode_modules/\n*.egg-info/\n",
    ".github/workflows/ci.yml": (
        "name: ci\non: [push]\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n"
        "      - uses: actions/checkout@v4\n      - run: python -m pytest -q\n"),
}


def pyproject(name: str, pythonpath: str) -> str:
    return (f'[project]\nname = "{name}"\nversion = "0.1.0"\nrequires-python = ">=3.10"\n\n'
            f'[tool.pytest.ini_options]\npythonpath = ["{pythonpath}"]\n')


# --- cli: design -> core -> interface -> docs -> release ---------------------------------

CLI_STEPS: dict[str, dict[str, str]] = {
    "design": {"DESIGN.md": """\
        # tally

        `tally words FILE` prints the number of words in FILE on stdout.
        `tally lines FILE` prints the number of lines.

        Exit codes: 0 ok, 1 the file cannot be read, 2 usage error (message on stderr).

        Example: `tally words notes.txt` prints `42`.
        """},
    "core": {
        "src/tally/core/__init__.py": "",
        "src/tally/core/counting.py": '''\
            """Counting words and lines in text."""


            def count_words(text: str) -> int:
                """Number of whitespace-separated words in ``text``."""
                return len(text.split())


            def count_lines(text: str) -> int:
                """Number of lines in ``text`` (a last line without a newline counts)."""
                if not text:
                    return 0
                return text.count("\\n") + (0 if text.endswith("\\n") else 1)
            ''',
        "tests/unit/test_counting.py": '''\
            from tally.core.counting import count_lines, count_words


            def test_words_are_split_on_any_whitespace():
                assert count_words("a b\\tc\\n d") == 4
                assert count_words("") == 0


            def test_last_line_without_newline_counts():
                assert count_lines("a\\nb") == 2
                assert count_lines("a\\nb\\n") == 2
                assert count_lines("") == 0
            ''',
    },
    "interface": {
        "src/tally/cli/__init__.py": "",
        "src/tally/cli/main.py": '''\
            """The command line: argument parsing, output and exit codes."""

            import argparse
            import sys

            from tally.core.counting import count_lines, count_words

            COUNTERS = {"words": count_words, "lines": count_lines}


            def main(argv=None) -> int:
                parser = argparse.ArgumentParser(prog="tally")
                parser.add_argument("what", choices=sorted(COUNTERS))
                parser.add_argument("file")
                args = parser.parse_args(argv)
                try:
                    with open(args.file, encoding="utf-8") as handle:
                        text = handle.read()
                except OSError as exc:
                    print(f"tally: {args.file}: {exc.strerror}", file=sys.stderr)
                    return 1
                print(COUNTERS[args.what](text))
                return 0
            ''',
        "src/tally/__main__.py": '''\
            import sys

            from tally.cli.main import main

            sys.exit(main())
            ''',
        "tests/cli/test_main.py": '''\
            from tally.cli.main import main


            def test_words_of_a_file(tmp_path, capsys):
                path = tmp_path / "notes.txt"
                path.write_text("one two three\\n")
                assert main(["words", str(path)]) == 0
                assert capsys.readouterr().out == "3\\n"


            def test_missing_file_exits_1_with_one_line(tmp_path, capsys):
                assert main(["lines", str(tmp_path / "nope.txt")]) == 1
                assert capsys.readouterr().err.startswith("tally: ")
            ''',
    },
    "docs": {"docs/usage.md": """\
        # Using tally

        Install: `pip install tally`.

        `tally words notes.txt` prints the word count, `tally lines notes.txt` the line count.
        A file that cannot be read exits 1 with one line on stderr; bad usage exits 2.
        """},
    "release": {"CHANGELOG.md": "# Changelog\n\n## 0.1.0\n\n- `tally words` and `tally lines`.\n"},
}

# --- library: api -> implementation -> hardening -> docs -> release ------------------------

SPANS_CORE = '''\
    """Closed integer spans and their overlap."""


    def overlap(a: tuple[int, int], b: tuple[int, int]) -> int:
        """Number of integers both spans contain (spans are inclusive, start <= end)."""
        for start, end in (a, b):
            if start > end:
                raise ValueError(f"span ({start}, {end}) ends before it starts")
        return max(0, min(a[1], b[1]) - max(a[0], b[0]) + 1)
    '''

LIBRARY_STEPS: dict[str, dict[str, str]] = {
    "api": {"API.md": """\
        # spans API

        `overlap(a, b) -> int`: the number of integers two inclusive spans share.
        Raises `ValueError` when a span ends before it starts.

        Example: `overlap((1, 5), (4, 9)) == 2`.
        """},
    "implementation": {
        "src/spans/__init__.py": "from spans.core import overlap\n\n__all__ = [\"overlap\"]\n",
        "src/spans/core.py": SPANS_CORE,
        "tests/unit/test_core.py": '''\
            import pytest

            from spans import overlap


            def test_overlapping_spans():
                assert overlap((1, 5), (4, 9)) == 2


            def test_backwards_span_is_refused():
                with pytest.raises(ValueError, match="ends before it starts"):
                    overlap((5, 1), (1, 2))
            ''',
    },
    "hardening": {"tests/edge/test_edges.py": '''\
        from spans import overlap


        def test_disjoint_and_touching_spans():
            assert overlap((1, 2), (3, 4)) == 0
            assert overlap((1, 3), (3, 4)) == 1


        def test_single_point_and_huge_spans():
            assert overlap((7, 7), (7, 7)) == 1
            assert overlap((0, 10**18), (10**18, 10**18 + 5)) == 1
        '''},
    "docs": {"docs/index.md": """\
        # spans

        Install with `pip install spans`, then:

            from spans import overlap
            overlap((1, 5), (4, 9))  # 2

        Reference: `overlap(a, b)` counts the integers both inclusive spans contain and
        raises `ValueError` for a span that ends before it starts.
        """},
    "release": {"CHANGELOG.md": "# Changelog\n\n## 0.1.0\n\n- `overlap` of two inclusive spans.\n"},
}

# --- ml-research: data_contract -> data -> baseline -> experiments -> report ---------------

ML_STEPS: dict[str, dict[str, str]] = {
    "data_contract": {"DATA_CONTRACT.md": """\
        # Data contract

        ## Target metric

        Accuracy of predicting the parity of an integer on the held-out split.

        ## Evaluation thresholds

        Success: accuracy >= 0.99 on the evaluation split.

        ## Baseline

        Always predicting "even": accuracy 0.5 on the same split.

        ## Approach constraints

        CPU only, under one second of training, no evaluation data in training.
        """},
    "data": {
        "data/prepare.py": '''\
            """Deterministic train/evaluation split of the integers 0-999."""

            import random


            def split(seed: int = 7) -> tuple[list[int], list[int]]:
                numbers = list(range(1000))
                random.Random(seed).shuffle(numbers)
                return sorted(numbers[:800]), sorted(numbers[800:])
            ''',
        "data/DATA_CARD.md": "# Data card\n\nIntegers 0-999, generated; 800 train, 200 eval, seed 7.\n",
        "tests/data/test_split.py": '''\
            from data.prepare import split


            def test_split_is_disjoint_and_deterministic():
                train, evaluation = split()
                assert not set(train) & set(evaluation)
                assert len(train) == 800 and len(evaluation) == 200
                assert split() == (train, evaluation)
            ''',
    },
    "baseline": {
        "baseline/run.py": '''\
            """The contract's baseline: always predict even."""

            from data.prepare import split


            def accuracy() -> float:
                _, evaluation = split()
                return sum(1 for n in evaluation if n % 2 == 0) / len(evaluation)
            ''',
        "results/baseline.json": '{"metric": "accuracy", "score": 0.5}\n',
    },
    "experiments": {
        "experiments/parity.py": '''\
            """Predict parity from the last binary digit."""

            from data.prepare import split


            def accuracy() -> float:
                _, evaluation = split()
                return sum(1 for n in evaluation if (n & 1 == 0) == (n % 2 == 0)) / len(evaluation)
            ''',
        "experiments/parity.yaml": "seed: 7\nfeature: last_binary_digit\n",
        "results/experiments/parity.json": '{"metric": "accuracy", "score": 1.0, "seeds": [7]}\n',
    },
    "report": {"REPORT.md": """\
        # Report

        The last-binary-digit rule reaches accuracy 1.0 against the baseline's 0.5 on the
        evaluation split, meeting the 0.99 threshold. One seed; the rule is exact, so
        variance is nil. A learned model was not needed.
        """},
}

# --- web-app: scope -> backend -> frontend -> integrated -> deployed -----------------------

TOKEN = "correct horse battery staple"

WEB_STEPS: dict[str, dict[str, str]] = {
    "scope": {"SCOPE.md": """\
        # Scope

        Users: a household keeping a shared shopping list.
        Journey: add an item and see it listed (acceptance: the added item is shown).
        Data: item names. Out of scope: accounts, prices.
        """},
    "backend": {
        "backend/__init__.py": "",
        "backend/store.py": '''\
            """The one module that holds the data."""


            class Store:
                def __init__(self) -> None:
                    self._items: list[str] = []

                def add(self, name: str) -> dict:
                    name = name.strip()
                    if not name:
                        return {"error": "an item needs a name"}
                    self._items.append(name)
                    return {"items": list(self._items)}
            ''',
        "tests/backend/test_store.py": '''\
            from backend.store import Store


            def test_add_lists_the_item():
                assert Store().add("milk") == {"items": ["milk"]}


            def test_blank_name_is_a_structured_error():
                assert Store().add("  ") == {"error": "an item needs a name"}
            ''',
    },
    "frontend": {
        "frontend/package.json": '{"name": "frontend", "private": true, '
                                 '"scripts": {"test": "node --test"}}\n',
        "frontend/src/format.js": '''\
            function formatItems(items) {
              if (items.length === 0) {
                return "Nothing on the list yet";
              }
              return items.map((item) => "- " + item).join("\\n");
            }

            module.exports = { formatItems };
            ''',
        "frontend/test/format.test.js": '''\
            const assert = require("node:assert");
            const test = require("node:test");
            const { formatItems } = require("../src/format.js");

            test("lists items", () => {
              assert.strictEqual(formatItems(["milk", "eggs"]), "- milk\\n- eggs");
            });

            test("empty state", () => {
              assert.strictEqual(formatItems([]), "Nothing on the list yet");
            });
            ''',
    },
    "integrated": {
        "e2e/run.sh": "#!/bin/sh\nexec python -m pytest -q e2e\n",
        "e2e/test_journey.py": '''\
            from backend.store import Store


            def test_add_an_item_and_see_it_listed():
                store = Store()
                store.add("milk")
                assert store.add("eggs")["items"] == ["milk", "eggs"]
            ''',
    },
    "deployed": {
        "DEPLOY.md": "# Deploy\n\n`systemctl restart shopping`; roll back with the previous "
                     "release directory. Health: GET /health returns 200.\n",
        "deploy/shopping.service": "[Service]\nExecStart=/usr/bin/python3 -m backend\n",
    },
}

TEMPLATES = {
    "cli": ("tally", "src", CLI_STEPS),
    "library": ("spans", "src", LIBRARY_STEPS),
    "ml-research": ("parity", ".", ML_STEPS),
    "web-app": ("shopping", ".", WEB_STEPS),
}


@pytest.fixture
def tools(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`python` on PATH is this interpreter (the checks run `python -m pytest`); npm keeps
    its cache and logs in the test's directory, not $HOME."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "python").symlink_to(sys.executable)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("npm_config_cache", str(tmp_path / "npm-cache"))
    monkeypatch.setenv("npm_config_update_notifier", "false")
    monkeypatch.delenv("PYTEST_ADDOPTS", raising=False)


def _commit(root: Path, files: dict[str, str], message: str) -> Proc:
    for relative, text in files.items():
        path = write(root, relative, text)
        if relative.endswith(".sh"):
            path.chmod(0o755)
    added = run_git(root, "add", "--", *files)
    assert added.code == 0, added
    return run_git(root, "commit", "-q", "-m", message)


def _owners(cli: Callable[..., Proc], *paths: str) -> dict[str, list[str]]:
    result = cli("owners", "--json", *paths)
    return {d["path"]: [o["gate"] for o in d["owners"]] for d in json.loads(result.out)["paths"]}


@pytest.mark.parametrize("template", sorted(TEMPLATES))
def test_every_gate_of_the_template_walks_through_with_real_commits(
        repo: Path, cli: Callable[..., Proc], tools: None, template: str) -> None:
    name, pythonpath, steps = TEMPLATES[template]
    assert cli("init", "--template", template).code == 0  # hooks installed
    gates = [g["gate"] for g in json.loads(cli("status", "--json").out)["gates"]]
    assert gates == list(steps)

    # Project-wide files belong to no gate: the very first commit carries them.
    toplevel = {path: text.format(name=name) for path, text in TOPLEVEL.items()}
    toplevel["pyproject.toml"] = pyproject(name, pythonpath)
    assert all(owners == [] for owners in _owners(cli, *toplevel).values())
    for relative, text in toplevel.items():
        write(repo, relative, text)
    assert run_git(repo, "add", "-A").code == 0  # with what `meridian init` wrote
    first = run_git(repo, "commit", "-q", "-m", "project skeleton and meridian setup")
    assert first.code == 0, first

    for index, (gate, files) in enumerate(steps.items()):
        later = list(steps)[index + 1:]
        if later:
            # A file only a locked gate owns is refused, naming the gate.
            probe_gate = later[0]
            probe = next(iter(steps[probe_gate]))
            refused = _commit(repo, {probe: steps[probe_gate][probe]}, "too early")
            assert refused.code != 0, refused
            assert f"belong to gate {probe_gate}, which is locked" in refused.err, refused
            assert run_git(repo, "rm", "-q", "--cached", "--", probe).code == 0
            (repo / probe).unlink()

        assert cli("gate", "start", gate).code == 0
        # Each file of the gate belongs to it alone.
        assert _owners(cli, *files) == {path: [gate] for path in files}
        if gate == "deployed":
            # The human's step the template asks for: their token's hash, not the zeros.
            gates_yaml = repo / ".meridian" / "gates.yaml"
            digest = hashlib.sha256(TOKEN.encode()).hexdigest()
            gates_yaml.write_text(gates_yaml.read_text().replace("0" * 64, digest))
            assert run_git(repo, "add", ".meridian/gates.yaml").code == 0
        done = _commit(repo, files, f"{gate}: the work")
        assert done.code == 0, done
        assert "warning" not in done.err, done  # no other gate goes stale
        # Project-wide files stay writable at every step.
        bumped = _commit(repo, {"README.md": (repo / "README.md").read_text() + f"\n{gate} done.\n"},
                         f"readme after {gate}")
        assert bumped.code == 0 and "warning" not in bumped.err, bumped

        submitted = cli("gate", "submit", gate)
        assert submitted.code == 0, submitted
        if gate == "deployed":
            from meridian.gates.lifecycle import approve_gate, open_project

            approve_gate(open_project(repo), gate, TOKEN, interactive=True)

    status = json.loads(cli("status", "--json").out)
    assert {g["gate"]: g["state"] for g in status["gates"]} == {g: "passed" for g in steps}


def test_library_a_fix_hardening_finds_in_src_warns_and_resubmits_implementation(
        repo: Path, cli: Callable[..., Proc], tools: None) -> None:
    """The flow the library template documents: hardening's bug fix lands in src/, which
    is implementation's; the commit names implementation as going stale, hardening waits
    for it, and implementation is submitted again first."""
    assert cli("init", "--template", "library").code == 0
    for relative, text in {**TOPLEVEL, "pyproject.toml": pyproject("spans", "src")}.items():
        write(repo, relative, text.format(name="spans"))
    assert run_git(repo, "add", "-A").code == 0
    assert run_git(repo, "commit", "-q", "-m", "skeleton").code == 0
    for gate in ("api", "implementation"):
        assert cli("gate", "start", gate).code == 0
        assert _commit(repo, LIBRARY_STEPS[gate], gate).code == 0
        assert cli("gate", "submit", gate).code == 0
    assert cli("gate", "start", "hardening").code == 0
    assert _commit(repo, LIBRARY_STEPS["hardening"], "edge tests").code == 0

    fixed = SPANS_CORE.replace('    """Number of integers', '    """The number of integers')
    result = _commit(repo, {"src/spans/core.py": fixed}, "fix found by hardening")
    assert result.code == 0, result
    assert ("meridian pre-commit: warning: src/spans/core.py belongs to gate implementation, "
            "which passed: this change makes implementation stale until it is submitted "
            "again (meridian gate submit implementation)") in result.err
    waiting = cli("gate", "submit", "hardening")
    assert waiting.code == 2
    assert "implementation (stale)" in waiting.err
    assert cli("gate", "submit", "implementation").code == 0
    assert cli("gate", "submit", "hardening").code == 0
    states = {g["gate"]: g["state"] for g in json.loads(cli("status", "--json").out)["gates"]}
    assert states == {"api": "passed", "implementation": "passed", "hardening": "passed",
                      "docs": "open", "release": "locked"}
