"""``meridian evaluator bench --evaluator anthropic|claude-code``: the corpus through a model.

Every case goes through the real gate path (init, start, submit in a throwaway
repository), judged by the real anthropic SDK against a local HTTP server, or by a fake
`claude` on PATH. The fakes answer by case: they find which corpus case the evidence
holds and answer a high issue for a defect and a clean verdict for a clean idiom (the
plumbing works end to end), or pass everything (the bench must say 0% recall).
"""

from __future__ import annotations

import json
import os
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from meridian import cli
from meridian.evaluators import bench
from tests.adversarial.evaluator_support import GOOD, RawAPI, message

# A few cases of each kind and language: enough to prove the plumbing, cheap to run.
PICK = ("py-stub-pass-body", "js-stub-throw", "go-stub-panic-not-implemented",
        "py-clean-todo-status", "py-clean-null-object")
CASES = {c.id: c for c in bench.load_corpus(bench.CORPUS_DIR)}


def which_case(evidence: str) -> bench.Case | None:
    """The picked case whose changed files' lines are all in ``evidence`` (most lines wins)."""
    best: tuple[int, bench.Case | None] = (0, None)
    for case_id in PICK:
        case = CASES[case_id]
        lines = [ln.strip() for text in case.files.values() for ln in text.splitlines()
                 if ln.strip()]
        if lines and all(ln in evidence for ln in lines) and len(lines) > best[0]:
            best = (len(lines), case)
    return best[1]


def scripted_verdict(case: bench.Case | None) -> dict[str, Any]:
    if case is None:
        raise AssertionError("the evidence held none of the picked cases")
    if case.expect == "pass":
        return GOOD
    path = min(case.files)
    return {"scores": {"completeness": 3, "correctness": 3, "robustness": 5,
                       "spec_adherence": 3},
            "issues": [{"severity": "high", "file": path, "line": 1,
                        "message": f"{case.cls}: the change does not do its work"}],
            "summary": "Not done."}


def config_file(tmp_path: Path, api: RawAPI, model: str = "claude-haiku-4-5") -> Path:
    path = tmp_path / "bench-config.yaml"
    path.write_text(textwrap.dedent(f"""\
        evaluator:
          anthropic: {{model: {model}, base_url: "{api.url}", timeout_s: 20, max_retries: 0}}
        """))
    return path


def run_cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, Any]]:
    code = cli.main(["evaluator", "bench", *args, "--json",
                     *(a for c in PICK for a in ("--case", c))])
    out = capsys.readouterr().out
    return code, json.loads(out)


@pytest.fixture
def api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-bench")
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)


def test_a_scripted_model_is_measured_case_by_case_with_its_cost(
        tmp_path: Path, api_key: None, capsys: pytest.CaptureFixture[str]) -> None:
    def answer(body: bytes) -> tuple[int, dict[str, str], bytes]:
        text = "".join(b.get("text", "") for b in json.loads(body)["messages"][0]["content"])
        return 200, {"content-type": "application/json"}, message(
            scripted_verdict(which_case(text)), input_tokens=2000, output_tokens=300)

    api = RawAPI(answer)
    try:
        code, report = run_cli(["--evaluator", "anthropic",
                                "--config", str(config_file(tmp_path, api))], capsys)
    finally:
        api.close()
    assert len(api.bodies) == len(PICK)  # every case reached the configured endpoint
    assert report["evaluator"] == "anthropic" and report["cases"] == len(PICK)
    assert report["total"]["recall"] == 1.0 and report["total"]["false_blocks"] == 0
    assert report["unavailable"] == [] and code == 0
    outcomes = {c["id"]: c["outcome"] for c in report["per_case"]}
    assert outcomes == {i: ("pass" if CASES[i].expect == "pass" else "caught") for i in PICK}
    # claude-haiku-4-5: $1 input, $5 output per million tokens.
    assert {c["cost_usd"] for c in report["per_case"]} == {round((2000 + 300 * 5) / 1e6, 8)}
    assert report["cost_usd"] == pytest.approx(len(PICK) * 0.0035)


def test_a_model_that_passes_everything_has_no_recall(
        tmp_path: Path, api_key: None, capsys: pytest.CaptureFixture[str]) -> None:
    api = RawAPI(lambda body: (200, {"content-type": "application/json"}, message(GOOD)))
    try:
        code, report = run_cli(["--evaluator", "anthropic",
                                "--config", str(config_file(tmp_path, api))], capsys)
    finally:
        api.close()
    # The offline scan blocks these defects in the verdict; the model caught none of them.
    assert report["total"]["defects"] == 3 and report["total"]["caught"] == 0
    assert report["total"]["recall"] == 0.0 and code == 1
    assert {m["id"] for m in report["misses"]} == {i for i in PICK if CASES[i].expect != "pass"}


def test_an_unavailable_model_and_an_unknown_price_are_said_as_such(
        tmp_path: Path, api_key: None, capsys: pytest.CaptureFixture[str]) -> None:
    def answer(body: bytes) -> tuple[int, dict[str, str], bytes]:
        text = "".join(b.get("text", "") for b in json.loads(body)["messages"][0]["content"])
        case = which_case(text)
        if case is not None and case.id == "js-stub-throw":
            return 200, {"content-type": "text/html"}, b"<html>gateway</html>"
        return 200, {"content-type": "application/json"}, message(
            scripted_verdict(case), model="claude-unpriced-9")

    api = RawAPI(answer)
    try:
        code, report = run_cli(["--evaluator", "anthropic", "--config",
                                str(config_file(tmp_path, api, "claude-unpriced-9"))], capsys)
    finally:
        api.close()
    assert [u["id"] for u in report["unavailable"]] == ["js-stub-throw"]
    assert report["total"]["defects"] == 2 and report["total"]["recall"] == 1.0
    assert "js-stub-throw" not in {m["id"] for m in report["misses"]}
    assert code == 1  # an incomplete measurement is not a success
    judged = [c for c in report["per_case"] if c["outcome"] != "unavailable"]
    assert judged and all(c["cost_usd"] is None and not c["cost_known"] for c in judged)
    assert report["cost_unknown_cases"] >= len(judged)

    shown = bench.BenchReport(evaluator="anthropic", corpus="", seconds=0.0, results=[
        bench.CaseResult(**report["unavailable"][0]),
        bench.CaseResult(id="priced-nowhere", cls="stub_code", lang="python", expect="block",
                         ok=True, passed=False, cost_usd=None)])
    lines = list(bench.iter_lines(shown))
    row = next(ln for ln in lines if ln.strip().startswith("priced-nowhere"))
    assert "caught" in row and "unknown" in row and "$" not in row
    assert next(ln for ln in lines if ln.startswith("cost:")).endswith("of unknown cost")
    assert any(ln.startswith("unavailable (1") for ln in lines)


CLAUDE = textwrap.dedent('''\
    #!{python}
    import json, sys
    sys.path[:0] = {paths!r}
    if sys.argv[1:] == ["--version"]:
        print("2.1.7 (Claude Code)")
        sys.exit(0)
    from tests.evaluators.test_model_bench import scripted_verdict, which_case
    from tests.adversarial.evaluator_support import GOOD
    stdin = sys.stdin.read()
    verdict = GOOD if {mode!r} == "pass-all" else scripted_verdict(which_case(stdin))
    text = "I read the files.\\n\\n```json\\n" + json.dumps(verdict) + "\\n```\\n"
    print(json.dumps({{"type": "result", "subtype": "success", "is_error": False,
                       "result": text, "session_id": "5f0c2b1e-1111-4222-8333-944445555666",
                       "num_turns": 2, "total_cost_usd": 0.0125,
                       "usage": {{"input_tokens": 900, "output_tokens": 200}},
                       "modelUsage": {{"claude-sonnet-4-6": {{"inputTokens": 900,
                                                              "outputTokens": 200}}}}}}))
''')


@pytest.mark.parametrize("mode", ["scripted", "pass-all"])
def test_the_claude_code_kind_through_a_fake_cli_on_path(
        mode: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "fakebin"
    folder.mkdir()
    script = folder / "claude"
    root = str(Path(__file__).resolve().parents[2])
    script.write_text(CLAUDE.format(python=sys.executable, paths=[root], mode=mode))
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    monkeypatch.chdir(tmp_path)  # no project here: default settings, the CLI on PATH
    code, report = run_cli(["--evaluator", "claude-code"], capsys)
    assert report["evaluator"] == "claude-code" and report["unavailable"] == []
    assert {c["cost_usd"] for c in report["per_case"]} == {0.0125}
    if mode == "scripted":
        assert report["total"]["recall"] == 1.0 and report["total"]["false_blocks"] == 0
        assert code == 0
    else:
        assert report["total"]["recall"] == 0.0 and code == 1


def test_a_missing_config_file_and_an_unmatched_case_are_one_line_errors(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["evaluator", "bench", "--evaluator", "anthropic",
                     "--config", str(tmp_path / "nope.yaml")]) == 2
    assert capsys.readouterr().err.strip().endswith("nope.yaml: no such file")
    assert cli.main(["evaluator", "bench", "--case", "no-such-*"]) == 2
    assert "no case id matches no-such-*" in capsys.readouterr().err


REAL_KEY = os.environ.get("ANTHROPIC_API_KEY")


@pytest.mark.real_api
@pytest.mark.skipif(os.environ.get("MERIDIAN_REAL_API") != "1" or not REAL_KEY,
                    reason="talks to the real Anthropic API: set MERIDIAN_REAL_API=1 and "
                           "ANTHROPIC_API_KEY")
def test_real_api_bench_on_a_few_cases(tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    model = os.environ.get("MERIDIAN_REAL_API_MODEL", "claude-haiku-4-5")
    config = tmp_path / "real.yaml"
    config.write_text(f"evaluator:\n  anthropic: {{model: {model}}}\n")
    code = cli.main(["evaluator", "bench", "--evaluator", "anthropic", "--config", str(config),
                     "--case", "py-stub-pass-body", "--case", "py-clean-todo-status"])
    out = capsys.readouterr().out
    print(out)  # the figures: recall, false-block rate and cost per case
    assert "per case:" in out and "py-stub-pass-body" in out and "cost: $" in out
    assert "unavailable (" not in out, out
    assert code in (0, 1)
