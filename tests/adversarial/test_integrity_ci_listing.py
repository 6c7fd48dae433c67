"""Attack: make ``meridian ci`` look elsewhere or list less than the range did.

Layer: CI (``meridian ci``), with the local catch-up of harness changes (local
guardrails) for the cap. Three routes of the red-team report rt1:

- one line of pushed config (``branch: meridian/state-v2``) points CI at a state branch
  that does not exist, which used to read as "no gate has passed, nothing to re-check"
  (F4): with ``--base`` the base's state branch is re-derived and the change fails,
  named; without a base, a configured branch that is missing while one the config named
  earlier exists fails too;
- a weakening hidden behind more cosmetic harness commits than the listing looked at
  (F8): CI lists every one of the range, marked; the local catch-up says it was cut;
- an inline ``# meridian: allow KIND -- reason`` added in the range silences a scan
  finding with nothing in CI's summary (F13): each one is listed, file:line, kinds and
  reason, marked for review.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.adversarial.conftest import Proc, commit_all, pass_gate, write
from tests.conftest import git

SPEC = '"""Spec."""\nSIDES = 2\n'
CONFIG = ".meridian/config.yaml"


def _report(cli: Callable[..., Proc], *args: str) -> tuple[int, dict]:
    result = cli("ci", "--no-fetch", "--json", *args)
    return result.code, json.loads(result.out)


def _rename_state_branch_in_config(project: Path) -> None:
    text = (project / CONFIG).read_text()
    assert "branch: meridian/state\n" in text
    write(project, CONFIG, text.replace("branch: meridian/state\n",
                                        "branch: meridian/state-v2\n"))
    commit_all(project, "config: state branch per release")


def test_a_state_branch_renamed_in_the_range_is_checked_as_the_base_named_it(
        project: Path, cli: Callable[..., Proc]) -> None:
    pass_gate(cli, project, "spec", "spec/spec.py", SPEC)
    base = git(project, "rev-parse", "HEAD").strip()
    write(project, "spec/spec.py", SPEC + "# changed after the verdict\n")
    commit_all(project, "spec: refactor")
    code, report = _report(cli, "--base", base)
    assert code == 1 and report["stale"], report  # the honest outcome before the rename
    _rename_state_branch_in_config(project)
    code, report = _report(cli, "--base", base)
    assert code == 1, report
    assert report["branch"] == "meridian/state"  # the base's branch was re-derived
    assert any(s.startswith("`spec`:") for s in report["stale"]), report
    [problem] = report["problems"]
    assert "branch: changed in the range (meridian/state -> meridian/state-v2)" in problem
    assert not any("no gate has passed" in n for n in report["notes"]), report
    text = cli("ci", "--no-fetch", "--base", base).out
    assert "branch: meridian/state -> meridian/state-v2 **(weakens enforcement)**" in text


def test_a_configured_state_branch_that_is_missing_is_not_no_gate_passed(
        project: Path, cli: Callable[..., Proc]) -> None:
    """No base (a first push): the history is the range. The config names a branch that
    does not exist while the one it named before does."""
    pass_gate(cli, project, "spec", "spec/spec.py", SPEC)
    _rename_state_branch_in_config(project)
    code, report = _report(cli)
    assert code == 1, report
    [problem] = report["problems"]
    assert "meridian/state-v2, does not exist, but meridian/state" in problem, problem
    assert not any("no gate has passed" in n for n in report["notes"]), report


def test_a_project_without_a_state_branch_still_reads_as_nothing_passed(
        project: Path, cli: Callable[..., Proc]) -> None:
    """The honest case stays green: no state branch was ever there."""
    git(project, "branch", "-D", "meridian/state")
    code, report = _report(cli)
    assert code == 0 and report["problems"] == [], report
    assert any("no gate has passed" in n for n in report["notes"]), report


def _commits(project: Path, count: int) -> None:
    for number in range(count):
        with open(project / CONFIG, "a", encoding="utf-8") as handle:
            handle.write(f"# note {number}\n")
        subprocess.run(["git", "commit", "-q", "-a", "-m", f"docs {number}"], cwd=project,
                       check=True, capture_output=True)


def test_a_weakening_behind_more_than_the_catch_up_limit_is_listed_and_marked(
        project: Path, cli: Callable[..., Proc]) -> None:
    from meridian import harness

    assert cli("gate", "start", "spec").code == 0  # the state branch exists
    base = git(project, "rev-parse", "HEAD").strip()
    text = (project / CONFIG).read_text()
    assert "allow_non_interactive: false" in text
    write(project, CONFIG, text.replace("allow_non_interactive: false",
                                        "allow_non_interactive: true"))
    commit_all(project, "tidy config")
    weakening = git(project, "rev-parse", "HEAD").strip()
    _commits(project, harness.CATCH_UP_LIMIT + 1)
    code, report = _report(cli, "--base", base)
    assert code == 0, report  # listed for review; no pass to fail
    listed = report["harness_changes"]
    assert len(listed) == harness.CATCH_UP_LIMIT + 2, len(listed)  # every one, no cap
    [line] = [c for c in listed if c.startswith(f"`{weakening[:10]}`")]
    assert "allow_non_interactive: False -> True" in line, line
    assert line.endswith("**(weakens enforcement)**") and report["harness_weakening"]
    # The local catch-up reads the newest CATCH_UP_LIMIT only, and says so.
    result = cli("gate", "reopen", "spec", "--reason", "more")
    assert "catch-up cut: only the newest 200 harness commits" in result.err, result
    log = cli("log", "--kind", "harness.changed", "-n", "500", "--json")
    assert "catch-up cut" in log.out and "meridian ci --base REV" in log.out


SILENCED = '''\
def multiply(a: int, b: int) -> int:
    """Multiply."""
    # meridian: allow stub_code -- the multiply backend lands with the plugin release
    raise NotImplementedError
'''


def test_an_inline_suppression_added_in_the_range_is_listed_for_the_reviewer(
        project: Path, cli: Callable[..., Proc]) -> None:
    pass_gate(cli, project, "spec", "spec/spec.py", SPEC)
    write(project, "src/old.py", "X = 1  # meridian: allow magic_number -- the base had it\n")
    commit_all(project, "an old suppression")
    base = git(project, "rev-parse", "HEAD").strip()
    write(project, "src/extra.py", SILENCED)
    write(project, "src/more.py", "# meridian: allow stub_code, todo -- x\nY = 2\n")
    commit_all(project, "extra")
    _, report = _report(cli, "--base", base)
    added = {(s["file"], s["line"]): s for s in report["suppressions_added"]}
    assert set(added) == {("src/extra.py", 3), ("src/more.py", 1)}, added  # not old.py
    extra = added[("src/extra.py", 3)]
    assert extra["kinds"] == ["stub_code"] and extra["substantive"]
    assert extra["reason"] == "the multiply backend lands with the plugin release"
    assert added[("src/more.py", 1)]["kinds"] == ["stub_code", "todo"]
    assert not added[("src/more.py", 1)]["substantive"]
    text = cli("ci", "--no-fetch", "--base", base).out
    assert "### Inline suppressions added in the range" in text
    assert ("- `src/extra.py:3` allows `stub_code` -- the multiply backend lands with the "
            "plugin release **(a finding silenced in the range: review it)**") in text
    assert "its reason says nothing checkable" in text
    # No base: every marker the commit holds is the range's.
    _, report = _report(cli)
    assert {(s["file"], s["line"]) for s in report["suppressions_added"]} == {
        ("src/extra.py", 3), ("src/more.py", 1), ("src/old.py", 1)}


def test_a_suppression_is_listed_whatever_its_line_or_path_looks_like(
        project: Path, cli: Callable[..., Proc]) -> None:
    """An added line whose text starts ``++ `` (``+++ ...`` in the diff, the shape of a
    file header), a path holding ``:`` (``git grep``'s separator), one git quotes (a
    tab, a quote) and a repository whose config drops the diff's ``b/`` prefix: every
    marker is listed, at its own file and line, with and without a base."""
    pass_gate(cli, project, "spec", "spec/spec.py", SPEC)
    base = git(project, "rev-parse", "HEAD").strip()
    write(project, "src/plus.txt", "first\n++ x  # meridian: allow todo -- after a plus line\n"
          "Y = 1  # meridian: allow magic_number -- the line after it\n")
    write(project, "src/c:d.py", "Z = 3  # meridian: allow magic_number -- colon path\n")
    write(project, 'src/t\tq"x.py', "W = 4  # meridian: allow magic_number -- quoted path\n")
    commit_all(project, "odd lines and paths")
    git(project, "config", "diff.noprefix", "true")
    git(project, "config", "diff.mnemonicPrefix", "true")
    expected = {("src/plus.txt", 2): "after a plus line", ("src/plus.txt", 3): "the line after it",
                ("src/c:d.py", 1): "colon path", ('src/t\tq"x.py', 1): "quoted path"}
    for args in (("--base", base), ()):
        _, report = _report(cli, *args)
        listed = {(s["file"], s["line"]): s["reason"] for s in report["suppressions_added"]}
        assert listed == expected, (args, listed)


def test_one_ci_run_reads_the_config_history_and_the_gates_bases_once(
        project: Path, cli: Callable[..., Proc], monkeypatch: pytest.MonkeyPatch) -> None:
    """Two passes re-checked (``--all``) against a base: the state branches the config
    named and the bases the gates' events recorded are each read once per run, not once
    per pass or per phase (each read walks the config's history or every event)."""
    from meridian import ci

    pass_gate(cli, project, "spec", "spec/spec.py", SPEC)
    pass_gate(cli, project, "impl", "src/area.py")
    base = git(project, "rev-parse", "HEAD").strip()
    write(project, "README.md", "# docs\n")
    commit_all(project, "docs")
    calls = {"branches": 0, "bases": 0}
    real_branches, real_bases = ci._other_state_branches, ci._recorded_bases

    def branches(*args, **kwargs):
        calls["branches"] += 1
        return real_branches(*args, **kwargs)

    def bases(*args, **kwargs):
        calls["bases"] += 1
        return real_bases(*args, **kwargs)

    monkeypatch.setattr(ci, "_other_state_branches", branches)
    monkeypatch.setattr(ci, "_recorded_bases", bases)
    git(project, "remote", "add", "origin", str(project))  # a remote to fetch from
    report = ci.run_ci(str(project), base=base, recheck_all=True, fetch=True)
    assert [g.gate for g in report.gates] == ["spec", "impl"], report.to_json()
    assert calls == {"branches": 1, "bases": 1}, calls
