"""Templates: listing, installing without clobbering, and the ml-research data contract."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from meridian.errors import MeridianError
from meridian.gates import data_contract
from meridian.gates.graph import load_graph
from meridian.templates import install_template, list_templates
from tests.gates.conftest import write

FULL_CONTRACT = """
# Data contract

## Target metric

Macro-F1 over the 12 classes of the held-out test split.

## Evaluation thresholds

Success: macro-F1 >= 0.82. Abandon below 0.75 after three experiments.

## Baseline

TF-IDF + logistic regression: macro-F1 0.71 on the same split.

## Approach constraints

One 24 GB GPU; p95 inference latency under 50 ms; no test data in pre-training.
"""


def test_list_templates() -> None:
    assert list_templates() == ["cli", "library", "ml-research", "web-app"]


def test_install_copies_the_graph_and_extras_without_clobbering(project: Path) -> None:
    created = install_template("ml-research", project)
    assert created == [project / ".meridian" / "gates.yaml", project / "DATA_CONTRACT.md"]
    assert load_graph(project).order[0] == "data_contract"

    (project / "DATA_CONTRACT.md").write_text("mine\n")
    assert install_template("ml-research", project) == []
    assert (project / "DATA_CONTRACT.md").read_text() == "mine\n"
    assert install_template("web-app", project) == []  # gates.yaml exists: kept


def test_unknown_template_lists_the_known_ones(project: Path) -> None:
    with pytest.raises(MeridianError, match=r"unknown template 'django' \(templates: cli, "
                                            r"library, ml-research, web-app\)"):
        install_template("django", project)


@pytest.mark.parametrize("name", ["cli", "library", "ml-research", "web-app"])
def test_each_installed_template_gives_a_working_status(project: Path, cli, name: str) -> None:
    install_template(name, project)
    result = cli("status")
    assert result.code == 0, result
    rows = result.out.splitlines()[1:-1]
    assert len(rows) == 5
    assert rows[0].split()[2] == "open"
    assert all(row.split()[2] == "locked" for row in rows[1:])


def test_contract_missing_its_baseline_fails(tmp_path: Path) -> None:
    path = write(tmp_path, "DATA_CONTRACT.md", FULL_CONTRACT.replace(
        "## Baseline\n\nTF-IDF + logistic regression: macro-F1 0.71 on the same split.\n", ""))
    assert data_contract.problems(path) == [
        f"{path}: missing section 'baseline' (add a heading containing it)"]
    assert data_contract.main([str(path)]) == 1


def test_a_heading_that_mentions_the_baseline_is_not_the_baseline_section(tmp_path: Path
                                                                         ) -> None:
    text = FULL_CONTRACT.replace(
        "## Baseline\n\nTF-IDF + logistic regression: macro-F1 0.71 on the same split.\n", ""
    ).replace("## Evaluation thresholds", "## Evaluation thresholds relative to the baseline")
    path = write(tmp_path, "DATA_CONTRACT.md", text)
    assert data_contract.problems(path) == [
        f"{path}: missing section 'baseline' (add a heading containing it)"]


def test_contract_with_an_empty_or_placeholder_section_fails(tmp_path: Path) -> None:
    text = FULL_CONTRACT.replace("One 24 GB GPU; p95 inference latency under 50 ms; no test "
                                 "data in pre-training.", "<!-- fill me -->\nTODO")
    text = text.replace("Macro-F1 over the 12 classes of the held-out test split.", "")
    path = write(tmp_path, "DATA_CONTRACT.md", text)
    assert data_contract.problems(path) == [
        f"{path}:3: section 'target metric' is empty; fill it in",
        f"{path}:15: section 'approach constraints' is empty; fill it in",
    ]


def test_complete_contract_passes_and_headings_may_be_numbered(tmp_path: Path) -> None:
    text = FULL_CONTRACT.replace("## Target metric", "### 1. Target Metric").replace(
        "## Baseline", "## Baseline (to beat)")
    path = write(tmp_path, "DATA_CONTRACT.md", text)
    assert data_contract.problems(path) == []
    proc = subprocess.run([sys.executable, "-m", "meridian.gates.data_contract", str(path)],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0
    assert proc.stdout == f"{path}: all 4 sections present and filled in\n"


def test_missing_contract_and_usage(tmp_path: Path, capsys) -> None:
    assert data_contract.main([str(tmp_path / "DATA_CONTRACT.md")]) == 1
    assert "not found" in capsys.readouterr().out
    assert data_contract.main([]) == 2


def test_ml_research_data_contract_gate_end_to_end(project: Path, cli) -> None:
    install_template("ml-research", project)
    assert cli("gate", "start", "data_contract").code == 0
    # The template's contract has every section but only comments in them: it fails.
    failed = cli("gate", "submit", "data_contract")
    assert failed.code == 2
    assert "section 'target metric' is empty" in failed.out
    write(project, "DATA_CONTRACT.md", FULL_CONTRACT.replace("## Baseline\n", "## Notes\n"))
    failed = cli("gate", "submit", "data_contract")
    assert failed.code == 2
    assert "missing section 'baseline'" in failed.out

    write(project, "DATA_CONTRACT.md", FULL_CONTRACT)
    passed = cli("gate", "submit", "data_contract")
    assert passed.code == 0, passed
    assert cli("gate", "start", "data").code == 0
