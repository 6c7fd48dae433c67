"""Every command's --help: a description and an example that parses; the README names
only commands and pages that exist; usage errors carry one `meridian:` prefix."""

from __future__ import annotations

import argparse
import re
import shlex
from pathlib import Path

import pytest

from meridian import cli
from meridian.errors import MeridianError
from meridian.help_examples import EXAMPLES

ROOT = Path(__file__).resolve().parents[1]


def _commands() -> list[tuple[str, argparse.ArgumentParser, bool]]:
    """(path, parser, is_leaf) for every command and verb, parsers built as main builds them."""
    found = []

    def walk(parser: argparse.ArgumentParser, path: str) -> None:
        subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        found.append((path, parser, not subs))
        for action in subs:
            for verb, child in action.choices.items():
                walk(child, f"{path} {verb}")

    for name in cli.COMMANDS:
        root = cli.build_parser(name)
        action = next(a for a in root._actions if isinstance(a, argparse._SubParsersAction))
        walk(action.choices[name], name)
    return found


COMMANDS = _commands()
# commands that do something without a verb as well as with one
RUNNABLE_WITHOUT_VERB = {"rules"}


@pytest.mark.parametrize("path", [p for p, _, leaf in COMMANDS if leaf or p in RUNNABLE_WITHOUT_VERB])
def test_help_has_a_description_and_an_example(path: str,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main([*path.split(), "--help"]) == 0
    out = capsys.readouterr().out
    usage, _, rest = out.partition("\n\n")
    assert usage.startswith(f"usage: meridian {path}")
    description = rest.split("\n\n", 1)[0]
    assert description.strip() and not description.startswith(("positional", "options")), out
    assert re.search(r"^example[^\n]*:\n  meridian ", out, re.MULTILINE), out


def test_the_example_table_names_only_commands_that_exist() -> None:
    paths = {p for p, _, _ in COMMANDS}
    assert set(EXAMPLES) <= paths


def _argv(example: str) -> list[str]:
    """The arguments of an example line, without comments, redirections and pipelines."""
    words = shlex.split(example, comments=True)
    for stop in (">", "<", "&&", "|"):
        if stop in words:
            words = words[:words.index(stop)]
    assert words[0] == "meridian"
    return words[1:]


@pytest.mark.parametrize("path", sorted(EXAMPLES))
def test_every_example_parses(path: str) -> None:
    argv = _argv(EXAMPLES[path])
    assert " ".join(argv).startswith(path)
    cli.build_parser(argv[0]).parse_args(argv)  # a usage error raises MeridianError


def test_a_usage_error_has_one_prefix(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["gate", "frobnicate"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("meridian: gate: argument VERB: invalid choice: 'frobnicate'")
    assert "meridian: meridian" not in err
    assert err.rstrip().endswith("(see 'meridian gate --help')")
    assert cli.main(["eval", "run"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("meridian: eval run: the following arguments are required")
    with pytest.raises(MeridianError) as info:
        cli.build_parser(None).parse_args(["nope"])
    assert str(info.value).startswith("argument COMMAND: invalid choice: 'nope'")


README = (ROOT / "README.md").read_text()


def test_every_command_the_readme_names_exists() -> None:
    paths = {p for p, _, _ in COMMANDS}
    named = set()
    for match in re.finditer(r"`meridian ([a-z][a-z-]*(?:[ \\|][a-z][a-z-|\\]*)*)", README):
        words = match.group(1).replace("\\|", "|").split()
        command = words[0]
        assert command in cli.COMMANDS, match.group(0)
        if len(words) > 1 and any(f"{command} {v}" in paths for v in words[1].split("|")):
            for verb in words[1].split("|"):
                named.add(f"{command} {verb}")
        named.add(command)
    # every line of a code block that runs meridian names a real command and verb
    for line in re.findall(r"^    meridian ([^\n#]+)", README, re.MULTILINE):
        words = line.split()
        named.add(words[0])
        if f"{words[0]} {words[1] if len(words) > 1 else ''}" in paths:
            named.add(f"{words[0]} {words[1]}")
        elif any(p.startswith(f"{words[0]} ") for p in paths):
            raise AssertionError(f"README runs `meridian {line.strip()}`: no such verb")
    missing = sorted(n for n in named if n not in paths)
    assert missing == []


def test_every_page_the_readme_links_exists() -> None:
    links = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", README)
    local = [link for link in links if not link.startswith(("http://", "https://"))]
    assert local, "the README links no page"
    for link in local:
        assert (ROOT / link).is_file(), link
    for page in ("docs/gates.md", "docs/claude-code.md", "docs/ci.md", "docs/evals.md"):
        assert page in local, f"the README does not link {page}"


USER_PAGES = ["README.md", "docs/gates.md", "docs/claude-code.md", "docs/ci.md", "docs/evals.md"]


@pytest.mark.parametrize("page", USER_PAGES)
def test_every_command_a_user_page_runs_parses(page: str) -> None:
    """Each `meridian ...` line of a code block in a user page is a real command line."""
    text = (ROOT / page).read_text()
    lines = re.findall(r"^ {4}(meridian [^\n]+)", text, re.MULTILINE)
    assert lines, f"{page} shows no command"
    for line in lines:
        argv = _argv(line.replace("\\", ""))
        try:
            cli.build_parser(argv[0]).parse_args(argv)
        except MeridianError as exc:
            raise AssertionError(f"{page}: `{line.strip()}`: {exc}") from None


@pytest.mark.parametrize("page", USER_PAGES[1:])
def test_every_page_a_user_page_links_exists(page: str) -> None:
    for link in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", (ROOT / page).read_text()):
        if not link.startswith(("http://", "https://")):
            assert (ROOT / page).parent.joinpath(link).is_file(), f"{page}: {link}"


def test_log_with_an_unknown_kind_lists_the_kinds(repo_with_commit: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["init", "--no-hooks"]) == 0
    capsys.readouterr()
    assert cli.main(["log", "--kind", "gate.pased"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("meridian: --kind gate.pased: no such event kind (kinds: ")
    assert "gate.passed" in err and "meridian.init" in err and err.count("\n") == 1
    # a known kind, a prefix, and a kind without a model all filter
    for kind in ("gate.passed", "gate", "meridian.init", "memory"):
        assert cli.main(["log", "--kind", kind, "--json"]) == 0, kind
    assert '"kind":"meridian.init"' in capsys.readouterr().out


def test_memory_verify_takes_the_kind_the_readme_names(repo_with_commit: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    assert "`meridian memory add\\|list\\|export\\|verify KIND`" in README
    assert cli.main(["init", "--no-hooks"]) == 0
    assert cli.main(["memory", "add", "semantic", "--json",
                     '{"text": "run the migrations first", "confidence": 0.8}']) == 0
    capsys.readouterr()
    for kind in ("semantic", "episodes", "corrections", None):
        assert cli.main(["memory", "verify", *([kind] if kind else [])]) == 0, kind
        assert capsys.readouterr().out.endswith(": intact\n")
    assert cli.main(["memory", "verify", "dreams"]) == 2
    assert "unknown memory kind 'dreams'" in capsys.readouterr().err


def _options(path: str) -> set[str]:
    """The options of command ``path`` (its own and its parents')."""
    by_path = {p: parser for p, parser, _ in COMMANDS}
    words = path.split()
    found: set[str] = {"-h", "--help"}
    for end in range(1, len(words) + 1):
        parser = by_path.get(" ".join(words[:end]))
        if parser is not None:
            found |= {o for a in parser._actions for o in a.option_strings}
    return found


def _inline_commands(text: str) -> list[tuple[str, list[str]]]:
    """(command path, --options) of every inline `meridian ...` span of a page that is a
    command line (not an alternation like `hooks install|uninstall` or a check name)."""
    leaf_paths = {p for p, _, _ in COMMANDS}
    out = []
    for span in re.findall(r"`(meridian [^`\n]+)`", text):
        words = span.replace("\\|", "|").split()
        if len(words) < 2 or not re.fullmatch(r"[a-z][a-z-]*", words[1]):
            continue
        path = words[1]
        if (len(words) > 2 and re.fullmatch(r"[a-z][a-z-]*", words[2])
                and f"{path} {words[2]}" in leaf_paths):
            path = f"{path} {words[2]}"
        options = [w.split("=", 1)[0] for w in words[2:] if re.fullmatch(r"--[a-z][a-z0-9-]*(=.*)?", w)]
        out.append((path, options))
    return out


@pytest.mark.parametrize("page", USER_PAGES)
def test_every_command_and_option_a_user_page_names_inline_exists(page: str) -> None:
    """Inline spans (`meridian gate submit --force`) name real commands and real options
    of those commands, not only the indented command blocks."""
    spans = _inline_commands((ROOT / page).read_text())
    assert spans, f"{page} names no command inline"
    wrong = [f"`meridian {path}`" for path, _ in spans if path.split()[0] not in cli.COMMANDS]
    wrong += [f"`meridian {path} {option}`" for path, options in spans
              if path.split()[0] in cli.COMMANDS for option in options
              if option not in _options(path)]
    assert wrong == [], f"{page}: no such command or option: {wrong}"


def test_the_inline_check_sees_a_wrong_option_and_command() -> None:
    spans = _inline_commands("`meridian gate submit --no-such` and `meridian frobnicate`")
    assert ("gate submit", ["--no-such"]) in spans and ("frobnicate", []) in spans
    assert "--no-such" not in _options("gate submit") and "--json" in _options("status")
