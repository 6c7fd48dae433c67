"""The run file: round trip, byte determinism, versioning, portable form, shard merge."""

from __future__ import annotations

import difflib
import json

import pytest

from meridian.errors import MeridianError
from meridian.evals import run as runfile
from tests.evals.runs_support import make_run


def test_round_trip_is_lossless_and_byte_identical() -> None:
    run = make_run({"a": "pass", "b": "fail", "c": "infra_error"})
    data = runfile.dumps(run)
    again = runfile.loads(data, "x.json")
    assert again == run
    assert runfile.dumps(again) == data


def test_version_comes_first_and_every_other_key_is_sorted() -> None:
    document = json.loads(runfile.dumps(make_run({"a": "pass"})))
    keys = list(document)
    assert keys[0] == "version"
    assert keys[1:] == sorted(keys[1:])

    def check(value: object) -> None:
        if isinstance(value, dict):
            assert list(value) == sorted(value)
            for item in value.values():
                check(item)
        elif isinstance(value, list):
            for item in value:
                check(item)

    for key in keys[1:]:
        check(document[key])


def test_results_keep_suite_order_and_epoch_order() -> None:
    run = make_run({"z": ["pass", "fail"], "a": ["fail", "pass"]}, order=["z", "a"])
    document = json.loads(runfile.dumps(run))
    assert [entry["task"]["id"] for entry in document["results"]] == ["z", "a"]
    assert [t["epoch"] for t in document["results"][0]["trials"]] == [0, 1]


def test_a_newer_version_is_refused_with_one_line() -> None:
    document = json.loads(runfile.dumps(make_run({"a": "pass"})))
    document["version"] = runfile.RUN_VERSION + 1
    with pytest.raises(runfile.RunFileError) as info:
        runfile.loads(json.dumps(document), "runs/x.json")
    assert str(info.value) == (
        f"runs/x.json: run-file version {runfile.RUN_VERSION + 1} is newer than this Meridian "
        f"reads ({runfile.RUN_VERSION}); upgrade Meridian"
    )


@pytest.mark.parametrize(("text", "message"), [
    ("{not json", "x.json: not valid JSON"),
    ("[1, 2]", "x.json: not a Meridian run file (no 'results')"),
    ('{"results": []}', "x.json: version: missing"),
    ('{"version": "1", "results": []}', "x.json: version: expected a run-file version >= 1, got '1'"),
])
def test_unreadable_files_are_named_with_the_problem(text: str, message: str) -> None:
    with pytest.raises(runfile.RunFileError) as info:
        runfile.loads(text, "x.json")
    assert str(info.value).startswith(message)


def test_unknown_fields_are_refused() -> None:
    document = json.loads(runfile.dumps(make_run({"a": "pass"})))
    document["surprise"] = 1
    with pytest.raises(runfile.RunFileError, match="surprise"):
        runfile.loads(json.dumps(document), "x.json")


def test_portable_form_drops_every_wall_clock_field() -> None:
    run = make_run({"a": "pass", "b": "fail"})
    slower = run.model_copy(update={
        "run_id": "f" * 12, "created_at": "2027-01-01T00:00:00Z", "duration_s": 99.0,
        "git": runfile.GitInfo(commit="d" * 40, dirty=True),
        "results": [
            entry.model_copy(update={"trials": [
                t.model_copy(update={"trajectory": t.trajectory.model_copy(update={
                    "latency_s": 7.0,
                    "steps": [s.model_copy(update={"latency_s": 3.0, "started_at": 1.0})
                              for s in t.trajectory.steps]})})
                for t in entry.trials]})
            for entry in run.results],
    })
    assert runfile.dumps(slower) != runfile.dumps(run)
    assert runfile.export_bytes(slower) == runfile.export_bytes(run)
    exported = json.loads(runfile.export_bytes(run))
    assert exported["timings"] is False
    assert exported["run_id"] is None and exported["git"] is None
    assert exported["summary"]["p95_latency_s"] is None
    step = exported["results"][0]["trials"][0]["trajectory"]["steps"][0]
    assert "latency_s" not in step and "started_at" not in step
    # The portable file is itself a valid run file.
    assert runfile.loads(runfile.export_bytes(run), "p.json").timings is False


def test_a_changed_task_changes_only_its_own_block_and_the_summary() -> None:
    ids = [f"t{i}" for i in range(6)]
    before = make_run({task_id: "pass" for task_id in ids})
    after = make_run({task_id: ("fail" if task_id == "t3" else "pass") for task_id in ids})
    old_lines = runfile.export_bytes(before).decode().splitlines()
    new_lines = runfile.export_bytes(after).decode().splitlines()
    changed = [
        (tag, i1, i2) for tag, i1, i2, _, _ in
        difflib.SequenceMatcher(a=old_lines, b=new_lines, autojunk=False).get_opcodes()
        if tag != "equal"
    ]
    # Each task is one line of "results" (its definition and trials), in suite order.
    results_at = old_lines.index('  "results": [')
    task_line = results_at + 1 + 3  # t3's line
    assert json.loads(old_lines[task_line].rstrip(","))["task"]["id"] == "t3"
    summary_start = old_lines.index('  "summary": {')
    for _, i1, i2 in changed:
        in_block = (i1, i2) == (task_line, task_line + 1)
        in_summary = summary_start <= i1
        assert in_block or in_summary, old_lines[i1:i2]
    assert changed


def shard(run: runfile.Run, index: int, count: int, run_id: str) -> runfile.Run:
    entries = [e for e in run.results if e.index % count == index - 1]
    settings = run.settings.model_copy(update={"shard": runfile.ShardInfo(index=index, count=count)})
    return run.model_copy(update={"run_id": run_id, "settings": settings, "results": entries,
                                  "summary": runfile.summarize(entries, settings.epochs)})


def test_merging_all_shards_gives_the_unsharded_run() -> None:
    whole = make_run({f"t{i}": ("pass" if i % 3 else "fail") for i in range(7)})
    parts = [shard(whole, i, 3, f"{i:012d}") for i in (2, 3, 1)]
    merged = runfile.merge(parts)
    assert merged.merged_from == ["000000000001", "000000000002", "000000000003"]
    assert merged.settings.shard is None
    assert runfile.export_bytes(merged) == runfile.export_bytes(whole)


def test_merge_refuses_missing_overlapping_and_foreign_shards() -> None:
    whole = make_run({f"t{i}": "pass" for i in range(4)})
    one, two = shard(whole, 1, 2, "1" * 12), shard(whole, 2, 2, "2" * 12)
    with pytest.raises(MeridianError, match=r"missing shard\(s\) 2/2"):
        runfile.merge([one])
    with pytest.raises(MeridianError, match="shard 1/2 given twice"):
        runfile.merge([one, one.model_copy(update={"run_id": "3" * 12}), two])
    with pytest.raises(MeridianError, match=f"run {'9' * 12} is not a shard"):
        runfile.merge([one, whole.model_copy(update={"run_id": "9" * 12})])
    other_suite = two.model_copy(update={"suite": two.suite.model_copy(update={"hash": "b" * 64})})
    with pytest.raises(MeridianError, match="differs from run 111111111111 in suite hash"):
        runfile.merge([one, other_suite])
    overlapping = two.model_copy(update={"results": two.results + one.results[:1]})
    with pytest.raises(MeridianError, match="shards overlap"):
        runfile.merge([one, overlapping])


def test_summary_figures() -> None:
    run = make_run({"a": ["pass", "pass", "fail"], "b": ["fail", "fail", "fail"],
                    "c": ["infra_error", "pass", "pass"]},
                   a={"steps": 4, "tool_errors": 1}, b={"steps": 2})
    s = run.summary
    assert (s.tasks, s.trials, s.passed, s.failed, s.infra_errors) == (3, 9, 4, 4, 1)
    assert s.pass_rate == 0.5
    # pass@1 is the mean per-task pass rate, an infra error a try that did not pass:
    # (2/3 + 0 + 2/3) / 3
    assert s.pass_at_k["1"] == pytest.approx((2 / 3 + 0 + 2 / 3) / 3, abs=1e-6)
    # every task counts at every k (c's infra error no longer drops it from pass^3)
    assert s.pass_hat_k["3"] == 0.0
    assert s.pass_at_k["3"] == pytest.approx(2 / 3)
    assert list(s.pass_hat_k.values()) == sorted(s.pass_hat_k.values(), reverse=True)
    assert s.median_steps == 2.0
    assert s.tool_error_rate == pytest.approx(3 / 22, abs=1e-6)  # 12 + 6 + 4 tool steps
    assert [e.status for e in run.results] == ["flaky", "fail", "pass"]


@pytest.mark.parametrize("outcomes", [
    {"a": ["pass", "infra_error"], "b": ["pass", "pass"]},
    {"a": ["pass", "pass", "infra_error"], "b": ["pass", "fail", "pass"], "c": ["pass"]},
    {"a": ["infra_error", "pass", "pass", "pass", "infra_error"], "b": ["fail"] * 5},
])
def test_pass_hat_k_never_rises_with_k_over_infra_errors(outcomes: dict[str, list[str]]) -> None:
    hat = make_run(outcomes).summary.pass_hat_k
    values = [hat[str(k)] for k in range(1, len(hat) + 1)]
    assert values == sorted(values, reverse=True), hat


def test_portable_form_keeps_only_the_verdict_of_wall_clock_graders() -> None:
    from meridian.evals.types import Score

    def with_latency_score(run: runfile.Run, detail: str, value: float, passed: bool) -> runfile.Run:
        entry = run.results[0]
        score = Score(name="latency_budget", value=value, passed=passed, detail=detail)
        trial = entry.trials[0].model_copy(update={"scores": [*entry.trials[0].scores, score]})
        return run.model_copy(update={"results": [entry.model_copy(update={"trials": [trial]})]})

    base = make_run({"a": "pass"})
    fast = with_latency_score(base, "0.004s of 2.000s budget", 1.0, True)
    slower = with_latency_score(base, "0.005s of 2.000s budget", 1.0, True)
    assert runfile.dumps(fast) != runfile.dumps(slower)  # the stored run keeps the figure
    assert runfile.export_bytes(fast) == runfile.export_bytes(slower)
    over = with_latency_score(base, "3.000s of 2.000s budget (over)", 2 / 3, False)
    assert runfile.export_bytes(over) != runfile.export_bytes(fast)  # the verdict stays
    [_, latency] = json.loads(runfile.export_bytes(over))["results"][0]["trials"][0]["scores"]
    assert (latency["passed"], latency["value"], latency["detail"]) == (False, 0.0, "")


def test_trials_that_reported_no_usage_are_counted_and_flagged() -> None:
    from meridian.evals import compare as cmp
    from meridian.evals.graders import run_grader
    from meridian.evals.types import Task

    run = make_run({"a": "pass", "b": "pass"}, b={"cost": 0.0})
    assert run.summary.usage_unreported == 1
    assert "note: 1 trial(s) of A reported no usage" in cmp.render_text(cmp.compare(run, run))
    trajectory = run.results[1].trials[0].trajectory
    assert trajectory is not None and not trajectory.usage_reported
    score = run_grader("cost_budget", {}, Task(id="b", input="q", cost_budget_usd=0.01),
                       trajectory, offline=True)
    assert score.passed and score.detail.endswith("[no usage reported: cost unknown, counted as $0]")
    assert score.metadata["usage_reported"] is False


def test_the_layout_is_indented_json_with_one_line_per_task_and_old_files_still_read() -> None:
    run = make_run({"a": "pass", "b": "fail"})
    data = runfile.dumps(run)
    text = data.decode()
    lines = text.splitlines()
    assert lines[0] == "{" and lines[1].startswith('  "version": ')
    start = lines.index('  "results": [')
    assert [json.loads(line.rstrip(","))["task"]["id"] for line in lines[start + 1:start + 3]] \
        == ["a", "b"]
    assert lines[start + 3] == "  ],"
    # The same document as the fully indented layout of older Meridians, key for key.
    old_layout = json.dumps(runfile.to_document(run), indent=2, ensure_ascii=False) + "\n"
    assert json.loads(data) == json.loads(old_layout)
    assert list(json.loads(data)) == list(json.loads(old_layout))  # version first, sorted
    assert runfile.loads(old_layout.encode(), "old.json") == run
    assert runfile.loads(data, "new.json") == run
