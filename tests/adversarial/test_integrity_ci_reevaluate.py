"""Attack: a pass whose checks and offline scan pass, but that the configured model
evaluator would not have given (a made-up verdict for shallow work).

Layer: CI. ``meridian ci --reevaluate`` re-runs the configured evaluator on the verdict's
subject with CI's own credentials (here the real anthropic SDK and its HTTP client
against a local Messages API server named by the committed config): a re-evaluation
that scores low fails the run, one that agrees passes it, and without ``--reevaluate``
no request is made.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.adversarial.conftest import CLEAN_MODULE, Proc, commit_all, write
from tests.adversarial.evaluator_support import RawAPI, judged_project, ok

LOW = {"scores": {"completeness": 3, "correctness": 4, "robustness": 3, "spec_adherence": 4},
       "issues": [{"severity": "high", "file": "src/area.py", "line": 1,
                   "message": "does not implement the spec"}],
       "summary": "Shallow."}
CI_KEY = "sk-ant-the-ci-servers-key"


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch) -> Iterator[RawAPI]:
    server = RawAPI()
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-the-humans-key")
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    yield server
    server.close()


def _passed(cli: Callable[..., Proc], project: Path, api: RawAPI) -> None:
    judged_project(project, api)
    assert cli("gate", "start", "impl").code == 0
    write(project, "src/area.py", CLEAN_MODULE)
    commit_all(project, "the work")
    result = cli("gate", "submit", "impl")
    assert result.code == 0, result
    status = json.loads(cli("status", "--json").out)["gates"][0]
    assert status["state"] == "passed" and status["evaluator"].startswith("anthropic")


def test_a_reevaluation_that_scores_low_fails_ci(project: Path, api: RawAPI,
                                                 cli: Callable[..., Proc],
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    _passed(cli, project, api)
    monkeypatch.setenv("ANTHROPIC_API_KEY", CI_KEY)  # the CI server's own secret
    sent = len(api.bodies)
    assert cli("ci", "--no-fetch").code == 0
    assert len(api.bodies) == sent  # no --reevaluate: no request at all
    api.answer = ok(LOW)
    result = cli("ci", "--no-fetch", "--reevaluate", "--json")
    assert result.code == 1, result
    assert len(api.bodies) == sent + 1
    # CI's key (the SDK sends it as x-api-key or as a bearer token, by version).
    headers = api.headers[-1]
    assert CI_KEY in (headers.get("x-api-key") or headers.get("authorization", ""))
    [impl] = json.loads(result.out)["gates"]
    assert not impl["ok"]
    assert any(r.startswith("the evaluator fails it (overall") for r in impl["reasons"])
    assert any("does not implement the spec" in line for line in impl["details"])
    text = cli("ci", "--no-fetch", "--reevaluate").out
    assert "- gate impl: its pass does not reproduce: the evaluator fails it" in text


def test_a_reevaluation_that_agrees_passes_ci(project: Path, api: RawAPI,
                                              cli: Callable[..., Proc]) -> None:
    _passed(cli, project, api)
    sent = len(api.bodies)
    result = cli("ci", "--no-fetch", "--reevaluate", "--json")
    assert result.code == 0, result
    assert len(api.bodies) == sent + 1
    [impl] = json.loads(result.out)["gates"]
    assert impl["ok"] and any(line.startswith("evaluator (anthropic:") for line in
                              impl["details"])


def test_an_unreachable_evaluator_is_no_pass_in_ci(project: Path, api: RawAPI,
                                                   cli: Callable[..., Proc]) -> None:
    _passed(cli, project, api)
    api.answer = (529, {"content-type": "application/json"},
                  b'{"type":"error","error":{"type":"overloaded_error","message":"busy"}}')
    result = cli("ci", "--no-fetch", "--reevaluate", "--json")
    assert result.code == 1, result
    [impl] = json.loads(result.out)["gates"]
    assert any("gave no verdict" in r for r in impl["reasons"])
