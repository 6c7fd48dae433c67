"""Files planted at the caches' temporary names never hang or redirect a command.

Every cache under ``.git/meridian`` is written to ``<file>.<pid>.tmp`` and renamed over
the file. Pids are few, so an agent can plant a FIFO at every such name: a writer that
opens what it finds there blocks forever (the git hooks and the Claude hook with it; a
hook past its timeout lets the tool call through), and a symlink there sends the write
into another file. Attack: after the caches exist, a FIFO (or a symlink to a file
outside) at the temporary name of every file and folder entry under ``.git/meridian``,
then the commands that rewrite them: each answers (no internal error), nothing
outside is written, and the branch verifies.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.adversarial.conftest import Proc, commit_all, pass_gate, write

READS = [("status",), ("why", "spec"), ("health", "--json"), ("verify",), ("log",)]


def _bounded(cli: Callable[..., Proc], args: tuple[str, ...], plants: list[Path]) -> Proc:
    result: list[Proc] = []
    worker = threading.Thread(target=lambda: result.append(cli(*args)), daemon=True)
    worker.start()
    worker.join(60)
    if worker.is_alive():  # let a blocked writer go before failing
        for plant in plants:
            if plant.exists() and not plant.is_symlink() and not plant.is_file():
                os.close(os.open(plant, os.O_RDONLY | os.O_NONBLOCK))
        worker.join(10)
        pytest.fail(f"meridian {' '.join(args)} blocked on a planted temporary file")
    return result[0]


def _plant(local: Path, kind: str, elsewhere: Path) -> list[Path]:
    plants = []
    for entry in sorted(local.rglob("*")):
        if entry.name.endswith(".tmp") or not (entry.is_file() or entry.is_dir()):
            continue
        temporary = entry.with_name(f"{entry.name}.{os.getpid()}.tmp")
        if temporary.exists() or temporary.is_symlink():
            continue
        if kind == "fifo":
            os.mkfifo(temporary)
        else:
            temporary.symlink_to(elsewhere)
        plants.append(temporary)
    return plants


@pytest.mark.parametrize("kind", ["fifo", "symlink"])
def test_planted_temporaries_never_hang_or_redirect_a_command(
        project: Path, cli: Callable[..., Proc], tmp_path: Path, kind: str) -> None:
    pass_gate(cli, project, "spec", "spec/spec.md", "# Spec\n\nThe code computes areas.\n")
    for args in READS:  # every cache comes to exist
        assert cli(*args).code == 0, args
    local = project / ".git" / "meridian"
    elsewhere = tmp_path / "elsewhere.txt"
    elsewhere.write_text("untouched\n")
    plants = _plant(local, kind, elsewhere)
    assert len(plants) >= 8, sorted(p.name for p in plants)
    # a reopen (the gate in progress again), new work and a pass move the state: every cache is rewritten
    steps: list[tuple[str, ...]] = [("gate", "reopen", "spec", "--reason", "again"), *READS]
    for args in steps:
        shown = _bounded(cli, args, plants)
        assert shown.code == 0 and "internal error" not in shown.err, (args, shown)
    write(project, "spec/spec.md", "# Spec\n\nThe code computes areas of rectangles.\n")
    commit_all(project, "spec again")
    for args in [("gate", "submit", "spec"), *READS, ("verify", "--full")]:
        shown = _bounded(cli, args, plants)
        assert shown.code == 0 and "internal error" not in shown.err, (args, shown)
    assert "passed" in _bounded(cli, ("status",), plants).out
    assert elsewhere.read_text() == "untouched\n"
