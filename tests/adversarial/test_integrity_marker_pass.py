"""Attack: a forged pass the incremental verify never walks (the verified-tip marker moved
past it by hand, the index of ids keyed to the tip).

The incremental ``meridian verify`` checks a pass's evidence once, when its walk meets
the commit adding it; a marker moved past that commit is the same power as any other
cache rewrite. Layer: state derivation (``status`` checks the evidence of the pass it
counts, from the commits, whatever the caches say) and ``verify --full`` (reads no cache,
keeps the tamper evidence that every later run reports).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from meridian import gitio
from meridian.gates import artifacts
from meridian.ledger import Ledger
from meridian.verify import cache_path
from tests.adversarial.conftest import CLEAN_MODULE, Proc, commit_all, write

FORGED = "forged or inconsistent"


def test_a_forged_pass_behind_a_moved_marker_is_still_forged(project: Path,
                                                            cli: Callable[..., Proc]) -> None:
    write(project, "spec/notes.py", CLEAN_MODULE)
    commit_all(project)
    assert cli("verify").code == 0
    ledger = Ledger.open(project)
    ledger.emit("gate.started", {"gate": "spec"})
    subject = artifacts.snapshot(gitio.open_repo(project), project, ["spec/**"]).subject
    ledger.emit("gate.passed", {
        "gate": "spec", "verdict": "verdicts/spec/made-up.json", "overall": 10.0,
        "threshold": 7.0, "evaluator": "heuristic", "subject": subject,
        "scores": {"completeness": 10.0, "correctness": 10.0, "robustness": 10.0,
                   "spec_adherence": 10.0}})
    ledger.emit("test.append", {"after": "the pass"})
    cache_path(ledger).write_text(str(ledger.tip()) + "\n")  # the agent moves the marker
    states = json.loads(cli("status", "--json").out)["gates"]
    assert {g["gate"]: g["state"] for g in states}["spec"] == "forged"
    full = cli("verify", "--full")
    assert full.code == 1 and FORGED in full.out
    # found once, kept: the incremental run (whose walk is empty) reports it too
    again = cli("verify")
    assert again.code == 1 and FORGED in again.out
