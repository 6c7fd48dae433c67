"""An agent whose change made tasks fail (its run regresses against the pinned baseline,
so the push is refused) plants a newer run of the suite on the state branch that no
reader accepts (a summary edited, a document cut short) or that names another suite
in its document than in its index record. The pre-push baseline check read the newest
run first, stopped at the error and only warned ("baselines not compared"): the push
went through with the regression. A run the check cannot read is now a failure of
that baseline's check (the push is refused, naming the run and the error line), as
``meridian ci`` reports it too."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from meridian.evals import run as runfile
from meridian.evals import store
from meridian.evals.baselines import check_baselines
from meridian.ledger import Ledger, Write
from tests.adversarial.conftest import Proc
from tests.conftest import git
from tests.hooks.conftest import run_git

SUITE = str(Path(__file__).resolve().parents[2] / "suites" / "reference.yaml")
FORGED = "f" * 12


def _eval(cli: Callable[..., Proc], agent: str) -> None:
    result = cli("eval", "run", SUITE, "--agent", agent, "--offline", "--limit", "5",
                 "--no-isolation")
    assert result.code == 0, result


def plant(ledger: Ledger, like: str, edit: Callable[[dict[str, Any]], None]) -> None:
    """A newer run, copied from run ``like`` and edited, with its index record, through
    the ledger's own API (what an agent's python script can call)."""
    run = store.load_run(ledger, like).model_copy(update={"run_id": FORGED})
    document = json.loads(runfile.dumps(run))
    edit(document)
    data = json.dumps(document).encode()
    record = ledger.record("eval.run", store.index_data(run, store.blob_id(data)))
    ledger.commit(Write(summary=f"eval run {FORGED}", blobs={store.run_path(FORGED): data})
                  .add(store.INDEX_STREAM, record))


def _summary_edited(doc: dict[str, Any]) -> None:
    doc["summary"]["passed"] += 1


def _cut_short(doc: dict[str, Any]) -> None:
    doc.clear()


def _other_suite(doc: dict[str, Any]) -> None:
    doc["suite"]["name"] = "elsewhere"


@pytest.mark.parametrize("edit", [_summary_edited, _cut_short, _other_suite])
def test_an_unreadable_newer_run_does_not_let_a_regression_through(
        project: Path, remote: Path, cli: Callable[..., Proc],
        edit: Callable[[dict[str, Any]], None]) -> None:
    assert cli("hooks", "install").code == 0
    _eval(cli, "reference-v2")
    assert cli("baseline", "pin", "main").code == 0
    _eval(cli, "reference-v1")  # three tasks pass there and fail now
    assert run_git(project, "push", "-q", "origin", "main").code == 1
    ledger = Ledger.open(project)
    latest = store.index(ledger)[-1].run_id
    plant(ledger, latest, edit)
    assert store.index(ledger)[-1].run_id == FORGED

    result = run_git(project, "push", "-q", "origin", "main")
    assert result.code == 1, result
    assert f"run {FORGED} cannot be" in result.err, result.err
    assert not git(remote, "for-each-ref", "refs/heads/main").strip()
    [check] = check_baselines(ledger)
    assert not check.ok and check.latest_run == FORGED

