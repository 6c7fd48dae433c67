"""Attack: a run (or a baseline pin) stamped ahead of its commit takes `latest`.

The ledger and `meridian verify` accept a record stamped up to FUTURE_SKEW_SECONDS
after its commit's time (clocks differ). `latest` was the run with the greatest
record timestamp, so a good run stamped 295 s ahead stayed `latest` after a later,
regressing run was stored, and `eval compare latest ...` compared the wrong run (rt1
F1); a pin stamped ahead outlived a later re-pin the same way.

Layer: state derivation. Runs and pins are ordered by the ledger (the order their
records were appended to the branch), never by a record's own field. Each step runs
the real CLI in its own process; the clock is moved with a sitecustomize module that
patches ``meridian.records.now_ts``, as an agent with a shell can.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from meridian import ledger as ledger_module
from tests.conftest import git

SUITE = str(Path(__file__).resolve().parents[2] / "suites" / "reference.yaml")
AHEAD = 295
assert AHEAD < ledger_module.FUTURE_SKEW_SECONDS  # accepted by the ledger and verify


def meridian(project: Path, *argv: str, ahead: Path | None = None) -> str:
    env = {**os.environ}
    if ahead is not None:
        env["PYTHONPATH"] = str(ahead)
    proc = subprocess.run([sys.executable, "-m", "meridian", *argv], cwd=project, env=env,
                          capture_output=True, text=True, check=False, timeout=300)
    assert proc.returncode == 0, f"meridian {' '.join(argv)}: {proc.stdout}{proc.stderr}"
    return proc.stdout


def run(project: Path, agent: str, ahead: Path | None = None) -> str:
    out = meridian(project, "eval", "run", SUITE, "--agent", agent, "--offline", "--limit", "5",
                   "--no-isolation", "--json", ahead=ahead)
    return str(json.loads(out)["run_id"])


def clock_ahead(tmp_path: Path) -> Path:
    folder = tmp_path / "ahead"
    folder.mkdir()
    (folder / "sitecustomize.py").write_text(
        "import datetime\nfrom meridian import records\n"
        "records.now_ts = lambda: (datetime.datetime.now(datetime.UTC) + "
        f"datetime.timedelta(seconds={AHEAD})).strftime('%Y-%m-%dT%H:%M:%S.%fZ')\n")
    return folder


def test_latest_is_the_run_appended_last_not_the_one_stamped_last(
        repo_with_commit: Path, tmp_path: Path) -> None:
    project = repo_with_commit
    meridian(project, "init", "--no-hooks")
    ahead = clock_ahead(tmp_path)
    good = run(project, "reference-v2", ahead=ahead)
    meridian(project, "verify")  # the stamp is within the skew the ledger accepts
    worse = run(project, "reference-v1")
    listed = [json.loads(line)["run_id"]
              for line in meridian(project, "eval", "list", "--json").splitlines()]
    assert listed == [worse, good]  # newest first, in the order they were stored
    assert json.loads(meridian(project, "eval", "show", "latest", "--json"))["agent"]["spec"] \
        == "reference-v1"
    assert json.loads(meridian(project, "eval", "show", "latest~1", "--json"))["agent"]["spec"] \
        == "reference-v2"
    # the regression is seen when latest is compared with the good run
    proc = subprocess.run([sys.executable, "-m", "meridian", "eval", "compare", "latest", good,
                           "--fail-on-regression"], cwd=project, capture_output=True, text=True,
                          check=False, timeout=300)
    assert proc.returncode == 1, proc.stdout + proc.stderr


def test_a_pin_stamped_ahead_does_not_outlive_a_later_re_pin(
        repo_with_commit: Path, tmp_path: Path) -> None:
    project = repo_with_commit
    meridian(project, "init", "--no-hooks")
    ahead = clock_ahead(tmp_path)
    first = run(project, "reference-v2")
    second = run(project, "reference-v1")
    meridian(project, "baseline", "pin", "main", first, ahead=ahead)
    meridian(project, "baseline", "pin", "main", second)
    rows = [json.loads(line) for line in
            meridian(project, "baseline", "list", "--json").splitlines()]
    assert [(r["name"], r["run_id"], r["tag_differs"]) for r in rows] == [("main", second, None)]
    assert git(project, "rev-parse", "meridian/baseline/main").strip() == rows[0]["commit"]
