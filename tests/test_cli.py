"""The CLI edge: help everywhere, exact errors, exit codes."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from meridian import __version__, cli
from meridian.cli import main
from meridian.ledger import Ledger

ROOT = Path(__file__).resolve().parents[1]


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--version"]) == 0
    assert capsys.readouterr().out == f"meridian {__version__}\n"


@pytest.mark.parametrize("command", sorted(cli.COMMANDS))
def test_every_command_has_help_and_is_in_the_readme(command: str,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    assert main([command, "--help"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"usage: meridian {command}")
    assert cli.COMMANDS[command][1] in " ".join(out.split())
    readme = (ROOT / "README.md").read_text()
    assert re.search(rf"meridian {command}\b", readme), f"`meridian {command}` is not in README.md"


def test_top_level_help_lists_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    for command in cli.COMMANDS:
        assert re.search(rf"^\s+{command}\s", out, re.MULTILINE), command


def test_unknown_command_is_one_line_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["frobnicate"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "invalid choice: 'frobnicate'" in err


def test_outside_a_repository(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                              capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["init"]) == 2
    assert capsys.readouterr().err == (
        f"meridian: not a git repository (or any parent up to /): {tmp_path}\n")


def test_malformed_config_names_file_and_line(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (repo / ".meridian").mkdir()
    (repo / ".meridian" / "config.yaml").write_text("version: 1\nbranch: meridian/state\nevaluator:\n  kind: psychic\n")
    assert main(["init", "--no-hooks"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("meridian: .meridian/config.yaml:4: evaluator.kind: input should be ")
    assert err.count("\n") == 1


def test_config_with_broken_yaml_names_the_line(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (repo / ".meridian").mkdir()
    (repo / ".meridian" / "config.yaml").write_text("version: 1\nbranch: [unclosed\n")
    assert main(["log"]) == 2
    assert capsys.readouterr().err.startswith("meridian: .meridian/config.yaml:3: invalid YAML")


def test_config_unknown_key(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (repo / ".meridian").mkdir()
    (repo / ".meridian" / "config.yaml").write_text("version: 1\nbrnach: x\n")
    assert main(["log"]) == 2
    assert capsys.readouterr().err == "meridian: .meridian/config.yaml:2: brnach: unknown key\n"


def test_init_is_idempotent_and_says_so(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["init", "--no-hooks"]) == 0
    first = capsys.readouterr().out
    assert "created .meridian/config.yaml" in first and "created branch meridian/state" in first
    tip = Ledger.open(repo).tip()
    config = (repo / ".meridian" / "config.yaml").read_text()
    assert main(["init", "--no-hooks"]) == 0
    assert capsys.readouterr().out.startswith("Meridian is already set up here; nothing changed.")
    assert Ledger.open(repo).tip() == tip
    assert (repo / ".meridian" / "config.yaml").read_text() == config


def test_custom_branch_from_config(repo: Path) -> None:
    (repo / ".meridian").mkdir()
    (repo / ".meridian" / "config.yaml").write_text("branch: team/meridian\n")
    assert main(["init", "--no-hooks"]) == 0
    assert Ledger.open(repo).branch == "team/meridian"
    assert Ledger.open(repo).exists()


def test_internal_error_logs_traceback_and_exits_3(repo: Path, monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    from meridian.commands import log

    def explode(args: object) -> int:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(log, "run", explode)
    assert main(["log"]) == 3
    err = capsys.readouterr().err
    log_path = repo / ".git" / "meridian" / "error.log"
    assert err == f"meridian: internal error: RuntimeError: disk on fire (traceback in {log_path})\n"
    assert "Traceback (most recent call last)" in log_path.read_text()


def test_log_filters_and_json(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import json

    assert main(["init", "--no-hooks"]) == 0
    ledger = Ledger.open(repo)
    ledger.emit("gate.started", {"gate": "a"})
    ledger.emit("gate.blocked", {"gate": "a", "source": "gate", "reason": "needs unmet"})
    ledger.emit("gate.started", {"gate": "b"})
    capsys.readouterr()
    assert main(["log", "--json", "--kind", "gate", "-n", "2"]) == 0
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert [(x["kind"], x["data"]["gate"]) for x in lines] == [("gate.started", "b"), ("gate.blocked", "a")]
    assert main(["log", "--json", "--gate", "a", "--kind", "gate.blocked"]) == 0
    assert [json.loads(x)["kind"] for x in capsys.readouterr().out.splitlines()] == ["gate.blocked"]
    assert main(["log", "--json", "--since", "2999-01-01"]) == 0
    assert capsys.readouterr().out == ""
    assert main(["log", "--since", "yesterday"]) == 2
    assert "--since: expected a date like 2026-11-30" in capsys.readouterr().err
    assert main(["log"]) == 0
    table = capsys.readouterr().out
    assert "gate.blocked" in table and "meridian.init" in table


def test_console_script_runs(repo: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "meridian", "--version"], capture_output=True,
                          text=True, check=False)
    assert proc.returncode == 0 and proc.stdout.strip() == f"meridian {__version__}"


def test_missing_dash_c_directory_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["-C", "/nonexistent/dir", "log"]) == 2
    assert capsys.readouterr().err == "meridian: -C /nonexistent/dir: No such file or directory\n"


def test_log_shows_markup_like_text_literally(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["init", "--no-hooks"]) == 0
    Ledger.open(repo).emit("test.note", {"reason": "list[/int] and [bold]x[/bold]"})
    capsys.readouterr()
    assert main(["log"]) == 0
    assert "reason=list[/int] and [bold]x[/bold]" in " ".join(capsys.readouterr().out.split())


def test_since_includes_what_is_at_or_after(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import json

    assert main(["init", "--no-hooks"]) == 0
    capsys.readouterr()
    assert main(["log", "--json", "--since", "2000-01-01"]) == 0
    kinds = [json.loads(line)["kind"] for line in capsys.readouterr().out.splitlines()]
    assert kinds == ["meridian.init"]


def test_unknown_template_changes_nothing(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["init", "--template", "webapp", "--no-hooks"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("meridian: --template webapp: no such template (templates: ")
    assert "web-app" in err
    assert not (repo / ".meridian").exists() and not Ledger.open(repo).exists()
