"""Attack: hide a made-up pass from CI by making it look earlier than the pushed range.

Layer: CI (``meridian ci --base REV``). Which passes are in the range is decided from
the code commits (the gate's artifact tree and definition at the base), never from a
date or a record field, which the forger chose: a pass written by a state commit dated
in 2001 is re-checked like any other. A pass is left out only when it judged exactly what
the base held and nothing re-checked in the range needs it, and the summary says so;
``--all`` re-checks everything; with no base, every pass is re-checked.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path

from tests.adversarial.conftest import Proc, commit_all, pass_gate, write
from tests.adversarial.integrity_support import forge_pass
from tests.adversarial.test_integrity_fake_verdict import FAILING_CHECK, states, with_check
from tests.conftest import git

SPEC = '"""Spec."""\nSIDES = 2\n'


def _marking_check(tmp_path: Path, gate: str) -> tuple[str, Path]:
    """A passing check that leaves a mark each time it runs (outside the repository)."""
    mark = tmp_path / f"ran-{gate}"
    return f'{sys.executable} -c "open({str(mark)!r}, \'a\').write(\'x\')"', mark


def _report(cli: Callable[..., Proc], *args: str) -> tuple[int, dict]:
    result = cli("ci", "--no-fetch", "--json", *args)
    return result.code, json.loads(result.out)


def test_an_earlier_pass_is_listed_not_rechecked_and_all_rechecks_it(
        project: Path, cli: Callable[..., Proc], tmp_path: Path) -> None:
    check, mark = _marking_check(tmp_path, "spec")
    with_check(project, '"spec/**"', check)
    pass_gate(cli, project, "spec", "spec/spec.py", SPEC)
    mark.unlink()  # the submit ran it
    base = git(project, "rev-parse", "HEAD").strip()
    write(project, "README.md", "# docs only\n")
    commit_all(project, "docs")
    code, report = _report(cli, "--base", base)
    assert code == 0, report
    assert report["gates"] == [] and not mark.exists()
    [line] = report["not_rechecked"]
    assert line.startswith("`spec`:") and f"base {base[:12]}" in line and "--all" in line
    assert "### Earlier passes, not re-checked" in cli("ci", "--no-fetch", "--base", base).out
    mark.unlink(missing_ok=True)
    code, report = _report(cli, "--base", base, "--all")
    assert code == 0 and [g["gate"] for g in report["gates"]] == ["spec"] and mark.exists()
    mark.unlink()
    code, report = _report(cli)  # no base: the whole history
    assert code == 0 and [g["gate"] for g in report["gates"]] == ["spec"] and mark.exists()
    assert report["not_rechecked"] == []


def test_a_pass_in_the_range_rechecks_the_earlier_passes_it_rests_on(
        project: Path, cli: Callable[..., Proc], tmp_path: Path) -> None:
    check, mark = _marking_check(tmp_path, "spec")
    with_check(project, '"spec/**"', check)
    pass_gate(cli, project, "spec", "spec/spec.py", SPEC)
    base = git(project, "rev-parse", "HEAD").strip()
    mark.unlink()
    pass_gate(cli, project, "impl", "src/area.py")
    code, report = _report(cli, "--base", base)
    assert code == 0, report
    assert [g["gate"] for g in report["gates"]] == ["spec", "impl"] and mark.exists()
    assert report["not_rechecked"] == []


def test_a_fake_pass_in_the_range_fails_even_from_a_state_commit_dated_2001(
        project: Path, cli: Callable[..., Proc]) -> None:
    """The forger dates the state commit (and the record) in the past, hoping a range
    read from dates calls it earlier than the base."""
    pass_gate(cli, project, "spec", "spec/spec.py", SPEC)
    with_check(project, '"src/**"', FAILING_CHECK)
    base = git(project, "rev-parse", "HEAD").strip()
    write(project, "src/area.py", '"""Area."""\n\ndef area(w, h):\n    return w * h\n')
    commit_all(project, "impl")
    old = {"GIT_COMMITTER_DATE": "978307200 +0000", "GIT_AUTHOR_DATE": "978307200 +0000"}
    forge_pass(project, "impl", ts="2001-01-01T00:00:00.000000Z", env=old)
    assert git(project, "log", "-1", "--format=%cI", "meridian/state").startswith("2001-01-01")
    assert states(cli)["impl"] == "passed"
    code, report = _report(cli, "--base", base)
    assert code == 1, report
    impl = next(g for g in report["gates"] if g["gate"] == "impl")
    assert not impl["ok"] and any("checks do not reproduce" in r for r in impl["reasons"])
    assert all("`impl`" not in line for line in report["not_rechecked"])


def test_a_fake_pass_over_what_the_base_held_is_listed_for_the_reviewer(
        project: Path, cli: Callable[..., Proc]) -> None:
    """The limit of a range, shown rather than hidden: a pass made up later for files
    the base already held, with nothing in the range resting on it, is not re-checked by
    a `--base` run; the summary names it, and `--all` (run it on main) fails it."""
    with_check(project, '"spec/**"', FAILING_CHECK)
    write(project, "spec/spec.py", SPEC)
    commit_all(project, "spec")
    assert cli("gate", "start", "spec").code == 0
    base = git(project, "rev-parse", "HEAD").strip()
    forge_pass(project, "spec")
    code, report = _report(cli, "--base", base)
    assert code == 0 and any(line.startswith("`spec`:") for line in report["not_rechecked"])
    code, report = _report(cli, "--base", base, "--all")
    assert code == 1


def test_the_workflow_rechecks_every_pass_on_a_push_to_main(
        project: Path, cli: Callable[..., Proc]) -> None:
    """The limit above is closed where the docs say: the GitHub Actions template's
    `meridian ci` step, run as on a push to main (its own script, its own env), fails a
    made-up pass over files the previous tip already held; as on a pull request it
    lists it for the reviewer."""
    import os
    import subprocess

    import yaml

    from meridian.templates import template_root

    flow = yaml.safe_load((template_root() / "ci" / "github-actions.yml").read_text())
    [step] = [s for s in flow["jobs"]["gates"]["steps"]
              if s.get("name", "").startswith("Re-derive every gate")]
    with_check(project, '"spec/**"', FAILING_CHECK)
    write(project, "spec/spec.py", SPEC)
    commit_all(project, "spec")
    assert cli("gate", "start", "spec").code == 0
    base = git(project, "rev-parse", "HEAD").strip()
    forge_pass(project, "spec")
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"

    def run(event: str) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "PATH": path, "RANGE_BASE": base, "EVENT_NAME": event}
        return subprocess.run(["bash", "-eo", "pipefail", "-c", step["run"]], cwd=project,
                              env=env, capture_output=True, text=True, timeout=300,
                              check=False)

    on_pr = run("pull_request")
    assert on_pr.returncode == 0 and "Earlier passes, not re-checked" in on_pr.stdout, on_pr
    on_main = run("push")
    assert on_main.returncode == 1, on_main
    assert "gate spec: its pass does not reproduce" in on_main.stdout
