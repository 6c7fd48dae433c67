"""``.meridian/rules.yaml``: loading, switches, review dates, retire/activate edits."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from meridian import rules
from meridian.cli import main
from meridian.errors import ConfigError

TEMPLATE_RULES = Path(__file__).resolve().parents[1] / ".meridian-template" / "rules.yaml"
def _heuristic_check_ids() -> tuple[str, ...]:
    from meridian.evaluators.heuristic import CHECK_IDS

    return CHECK_IDS


@pytest.fixture
def project(repo: Path) -> Path:
    assert rules.write_default_rules(repo) == repo / ".meridian" / "rules.yaml"
    return repo


def test_template_rules_file_is_the_default_text() -> None:
    assert TEMPLATE_RULES.read_text(encoding="utf-8") == rules.DEFAULT_RULES_TEXT


def test_defaults_cover_every_mechanism_with_failure_mode_and_review_trigger(project: Path) -> None:
    loaded = rules.load_rules(project)
    assert {r.mechanism for r in loaded} == set(rules.MECHANISMS)
    # Every check of the heuristic evaluator can be switched by a rule.
    assert {f"heuristic:{check}" for check in _heuristic_check_ids()} <= set(rules.MECHANISMS)
    for rule in loaded:
        assert rule.status == "active"
        assert rule.failure_mode and rule.rule
        assert rule.review.date is not None or rule.review.condition is not None
    assert rules.disabled_mechanisms(project) == frozenset()


def test_write_default_rules_keeps_an_existing_file(project: Path) -> None:
    path = project / ".meridian" / "rules.yaml"
    path.write_text("version: 1\nrules: []\n")
    assert rules.write_default_rules(project) is None
    assert path.read_text() == "version: 1\nrules: []\n"


def test_retiring_the_stub_rule_switches_its_mechanism_off(project: Path) -> None:
    assert rules.is_active(project, "heuristic:stub_code")
    edited = rules.retire_rule(project, "no-stub-code", "flags our protocol classes",
                               today=dt.date(2026, 11, 30))
    assert edited.changed and edited.comments_kept
    assert rules.disabled_mechanisms(project) == frozenset({"heuristic:stub_code"})
    assert not rules.is_active(project, "heuristic:stub_code")
    assert rules.is_active(project, "heuristic:hollow_test")
    rules.activate_rule(project, "no-stub-code")
    assert rules.disabled_mechanisms(project) == frozenset()


def test_retire_then_activate_restores_the_file_byte_for_byte(project: Path) -> None:
    path = project / ".meridian" / "rules.yaml"
    before = path.read_text()
    rules.retire_rule(project, "no-stub-code", 'too "noisy": flags protocols',
                      today=dt.date(2026, 11, 30))
    retired = path.read_text()
    assert "#" in retired.splitlines()[0]  # comments kept
    diff = [line for line in retired.splitlines() if line not in before.splitlines()]
    assert diff == ["    status: retired", '    retired_reason: "too \\"noisy\\": flags protocols"',
                    "    retired_on: 2026-11-30"]
    [rule] = [r for r in rules.load_rules(project) if r.id == "no-stub-code"]
    assert rule.retired_reason == 'too "noisy": flags protocols'
    rules.activate_rule(project, "no-stub-code")
    assert path.read_text() == before


def test_mechanism_stays_on_while_another_active_rule_needs_it(repo: Path) -> None:
    (repo / ".meridian").mkdir()
    (repo / ".meridian" / "rules.yaml").write_text("""\
version: 1
rules:
  - id: old-stub-rule
    rule: r
    failure_mode: f
    mechanism: heuristic:stub_code
    review: {condition: never}
    status: retired
    retired_reason: superseded
  - id: new-stub-rule
    rule: r
    failure_mode: f
    mechanism: heuristic:stub_code
    review: {date: 2030-01-01}
""")
    assert rules.is_active(repo, "heuristic:stub_code")
    assert rules.disabled_mechanisms(repo) == frozenset()


def test_no_rules_file_means_every_mechanism_is_on(repo: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    assert rules.load_rules(repo) == []
    assert rules.disabled_mechanisms(repo) == frozenset()
    assert main(["rules"]) == 0
    assert capsys.readouterr().out == (".meridian/rules.yaml not found: every mechanism is on "
                                       "(`meridian init` writes the default rules)\n")


def test_flow_style_rule_is_rewritten_and_the_user_told(repo: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    (repo / ".meridian").mkdir()
    path = repo / ".meridian" / "rules.yaml"
    path.write_text("# my notes\nversion: 1\nrules:\n  - {id: stubs, rule: r, failure_mode: f, "
                    "mechanism: 'heuristic:stub_code', review: {condition: c}}\n")
    assert main(["rules", "retire", "stubs", "--reason", "noisy"]) == 0
    out = capsys.readouterr().out
    assert "note: .meridian/rules.yaml was rewritten; its comments and layout were not kept" in out
    assert rules.disabled_mechanisms(repo) == frozenset({"heuristic:stub_code"})


RULE_HEAD = "version: 1\nrules:\n  - id: x\n    rule: r\n    failure_mode: f\n"


@pytest.mark.parametrize(("text", "message"), [
    (RULE_HEAD + "    mechanism: heuristic:vibes\n    review: {date: 2027-01-01}\n",
     (".meridian/rules.yaml:6: rules[0].mechanism: unknown mechanism "
      "'heuristic:vibes'; rules are switches")),
    (RULE_HEAD + "    mechanism: heuristic:stub_code\n    review: {}\n",
     (".meridian/rules.yaml:7: rules[0].review: give a review date, a condition, "
      "or both")),
    (RULE_HEAD + "    mechanism: heuristic:stub_code\n    review: {date: 2027-01-01}\n"
                 "    status: retired\n",
     ".meridian/rules.yaml:3: rules[0]: a retired rule needs retired_reason"),
    (RULE_HEAD + "    mechanism: heuristic:stub_code\n    review: {date: 2027-01-01}\n"
                 "    owner: me\n",
     ".meridian/rules.yaml:8: rules[0].owner: unknown key"),
])
def test_malformed_rules_file_names_file_line_and_field(repo: Path, text: str,
                                                        message: str) -> None:
    (repo / ".meridian").mkdir()
    (repo / ".meridian" / "rules.yaml").write_text(text)
    with pytest.raises(ConfigError) as raised:
        rules.load_rules(repo)
    assert str(raised.value).lower().startswith(message.lower())


def test_duplicate_rule_ids_are_refused(project: Path) -> None:
    path = project / ".meridian" / "rules.yaml"
    text = path.read_text().replace("id: checks-pass", "id: artifacts-exist")
    path.write_text(text)
    line = [n for n, t in enumerate(text.splitlines(), 1) if t == "  - id: artifacts-exist"][1]
    with pytest.raises(ConfigError, match=rf"rules.yaml:{line}: rules\[1\].id: duplicate rule "
                                          r"id 'artifacts-exist' \(also rules\[0\]\)"):
        rules.load_rules(project)


def test_memory_validation_rule_cannot_be_retired(project: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    before = (project / ".meridian" / "rules.yaml").read_text()
    assert main(["rules", "retire", "memory-validated-on-write", "--reason", "slow"]) == 2
    assert "memory:validate_on_write cannot be switched off" in capsys.readouterr().err
    assert (project / ".meridian" / "rules.yaml").read_text() == before


@pytest.mark.parametrize(("rule_id", "mechanism"), [
    ("independent-evaluator", "gate:independent_evaluator"),
    ("human-approval", "gate:approval_requires_tty"),
    # The gate lifecycle never passes failing_check on as disabled
    # (lifecycle.ALWAYS_ON_CHECKS), so "switched off" would be untrue.
    ("checks-pass", "heuristic:failing_check"),
])
def test_rules_whose_mechanism_has_no_off_switch_cannot_be_retired(
        project: Path, capsys: pytest.CaptureFixture[str], rule_id: str, mechanism: str) -> None:
    # Nothing in the gate lifecycle reads these rules: "switched off" would be untrue.
    path = project / ".meridian" / "rules.yaml"
    before = path.read_text()
    assert main(["rules", "retire", rule_id, "--reason", "in the way"]) == 2
    assert f"{mechanism} cannot be switched off (" in capsys.readouterr().err
    assert path.read_text() == before
    assert rules.disabled_mechanisms(project) == frozenset()


def test_cli_retire_and_activate(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rules", "retire", "no-stub-code", "--reason", "noisy"]) == 0
    assert capsys.readouterr().out.startswith(
        "rule no-stub-code is now retired: heuristic:stub_code is switched off")
    assert main(["rules", "retire", "no-stub-code", "--reason", "noisy"]) == 0
    assert capsys.readouterr().out == ("rule no-stub-code is already retired; "
                                       ".meridian/rules.yaml unchanged\n")
    assert main(["rules", "--json"]) == 0
    listed = {r["id"]: r for r in json.loads(capsys.readouterr().out)}
    assert listed["no-stub-code"]["status"] == "retired"
    assert listed["no-stub-code"]["retired_reason"] == "noisy"
    assert main(["rules", "activate", "no-stub-code"]) == 0
    assert "heuristic:stub_code is switched on" in capsys.readouterr().out
    assert main(["rules", "retire", "no-such-rule", "--reason", "x"]) == 2
    assert "no rule with id 'no-such-rule'" in capsys.readouterr().err
    assert main(["rules", "retire", "no-stub-code"]) == 2
    assert "the following arguments are required: --reason" in capsys.readouterr().err


def test_due_lists_active_rules_whose_review_date_has_come(project: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    assert rules.due_rules(project, today=dt.date(2027, 5, 30)) == []
    due = rules.due_rules(project, today=dt.date(2027, 5, 31))
    assert "no-stub-code" in {r.id for r in due}
    assert "independent-evaluator" not in {r.id for r in due}  # reviewed 2027-11-30
    rules.retire_rule(project, "no-stub-code", "noisy")
    assert "no-stub-code" not in {r.id for r in rules.due_rules(project, dt.date(2027, 6, 1))}
    # Today (the test's real date) the defaults are not yet due.
    if dt.date.today() < dt.date(2027, 5, 31):
        assert main(["rules", "--due"]) == 0
        assert capsys.readouterr().out == "no rule is due for review\n"


def test_due_in_the_cli_with_a_past_review_date(project: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    path = project / ".meridian" / "rules.yaml"
    path.write_text(path.read_text().replace("date: 2027-11-30", "date: 2020-01-01", 1))
    assert main(["rules", "--due", "--json"]) == 0
    assert [r["id"] for r in json.loads(capsys.readouterr().out)] == ["independent-evaluator"]
    assert main(["rules", "--due"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("independent-evaluator  [active]  gate:independent_evaluator\n")
    assert "review:         on 2020-01-01 (due)" in out
