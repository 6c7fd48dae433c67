"""``.meridian/rules.yaml``: the rules the harness enforces, each a real switch.

Every rule names the mechanism that enforces it (``heuristic:stub_code``,
``hook:locked_gate_artifacts``, ...). The code behind a mechanism asks
``is_active(root, mechanism)`` before it acts, so retiring a rule turns its check off
and activating it turns it back on. A mechanism no rule mentions stays on: a missing
or partial rules file never weakens enforcement.

The file is human-authored and reviewed like code. ``retire_rule`` and
``activate_rule`` edit it line by line so comments and layout survive; when the file's
shape defeats that (flow style, a multi-line reason), they rewrite it and say so.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator, model_validator
from pydantic_core import PydanticCustomError

from meridian import yamlio
from meridian.config import load_config
from meridian.errors import ConfigError, MeridianError

# mechanism -> what it does while its rule is active (what retiring switches off).
MECHANISMS: dict[str, str] = {
    "heuristic:missing_artifact": "the heuristic evaluator flags declared artifacts that are missing",
    "heuristic:failing_check": "the heuristic evaluator flags a gate whose checks fail",
    "heuristic:stub_code": "the heuristic evaluator flags stub code (pass-only bodies, "
                           "NotImplementedError, placeholder returns, TODO markers)",
    "heuristic:hollow_test": "the heuristic evaluator flags tests that assert nothing",
    "heuristic:skipped_test": "the heuristic evaluator flags skipped or disabled tests",
    "heuristic:empty_file": "the heuristic evaluator flags empty artifact files",
    "heuristic:syntax_error": "the heuristic evaluator flags Python artifacts that do not parse",
    "heuristic:swallowed_error": "the heuristic evaluator flags handlers that silence every error",
    "hook:locked_gate_artifacts": "pre-commit refuses staged files that belong to locked gates",
    "hook:staged_heuristics": "pre-commit runs the heuristic checks on staged files",
    "gate:independent_evaluator": "a gate is judged by an evaluator other than the agent",
    "gate:approval_requires_tty": "gate approval needs a human at a terminal",
    "claude:stop_on_failed_verdict": "Claude Code may not stop while its gate's last verdict failed",
    "claude:protect_harness": "Claude Code may not change the harness: .meridian/, the gate graph "
                              "and rules file, Meridian's git hooks, .claude/settings.json",
    "memory:validate_on_write": "every memory write is validated against its schema",
    "prepush:regression_gate": "pre-push refuses when the latest evaluation run regressed "
                               "against the baseline",
}
# Mechanisms with no off switch in the code, and why. Retiring their rule is refused:
# reporting "switched off" while enforcement goes on unchanged would make the rule prose.
ALWAYS_ON: dict[str, str] = {
    "memory:validate_on_write": "the ledger validates every memory write",
    "heuristic:failing_check": "the gate lifecycle fails a gate whose check fails, "
                               "whichever evaluator ran",
    "gate:independent_evaluator": "the gate lifecycle always judges with the configured "
                                  "evaluator, never the agent's own score",
    "gate:approval_requires_tty": "the gate lifecycle does not read this rule; "
                                  "approval.allow_non_interactive in .meridian/config.yaml "
                                  "is the setting",
}

RULE_ID = r"^[a-z0-9][a-z0-9-]*$"


def _invalid(message: str) -> PydanticCustomError:
    """A validation error whose message is shown as is (no "Value error," prefix)."""
    return PydanticCustomError("rule_invalid", message)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ReviewTrigger(_Strict):
    date: dt.date | None = None
    condition: str | None = Field(default=None, min_length=1)

    @model_validator(mode="after")
    def _date_or_condition(self) -> ReviewTrigger:
        if self.date is None and self.condition is None:
            raise _invalid("give a review date, a condition, or both")
        return self


class Rule(_Strict):
    id: str = Field(pattern=RULE_ID)
    rule: str = Field(min_length=1)
    failure_mode: str = Field(min_length=1)
    mechanism: str
    review: ReviewTrigger
    status: Literal["active", "retired"] = "active"
    retired_reason: str | None = Field(default=None, min_length=1)
    retired_on: dt.date | None = None

    @field_validator("mechanism")
    @classmethod
    def _known_mechanism(cls, value: str) -> str:
        if value not in MECHANISMS:
            raise _invalid(f"unknown mechanism {value!r}; rules are switches, so the "
                             f"mechanism must be one of: {', '.join(MECHANISMS)}")
        return value

    @field_validator("status")
    @classmethod
    def _switchable(cls, value: str, info: ValidationInfo) -> str:
        mechanism = info.data.get("mechanism")
        if value == "retired" and mechanism in ALWAYS_ON:
            raise _invalid(f"{mechanism} cannot be switched off ({ALWAYS_ON[mechanism]}); "
                           "keep this rule active")
        return value

    @model_validator(mode="after")
    def _retired_has_reason(self) -> Rule:
        if self.status == "retired" and self.retired_reason is None:
            raise _invalid("a retired rule needs retired_reason")
        return self

    @property
    def active(self) -> bool:
        return self.status == "active"

    def due(self, today: dt.date) -> bool:
        """Active and its review date has come."""
        return self.active and self.review.date is not None and self.review.date <= today

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json", exclude_none=True)


class RulesFile(_Strict):
    version: Literal[1] = 1
    rules: list[Rule] = Field(default_factory=list)


def rules_path(root: Path) -> Path:
    return root / load_config(root).paths.rules


def _load_file(path: Path) -> tuple[yamlio.Located, RulesFile]:
    located = yamlio.load(path)
    if located.data is None:
        return located, RulesFile()
    if not isinstance(located.data, dict):
        raise located.error((), "expected a mapping with `version` and `rules`")
    parsed = yamlio.validate(RulesFile, located)
    seen: dict[str, int] = {}
    for index, rule in enumerate(parsed.rules):
        if rule.id in seen:
            raise located.error(("rules", index, "id"),
                                f"duplicate rule id {rule.id!r} (also rules[{seen[rule.id]}])")
        seen[rule.id] = index
    return located, parsed


def load_rules(root: Path) -> list[Rule]:
    """The project's rules; [] when it has no rules file (every mechanism stays on)."""
    path = rules_path(root)
    if not yamlio.present(path):
        return []
    return _load_file(path)[1].rules


def disabled_mechanisms(root: Path) -> frozenset[str]:
    """Mechanisms switched off: those of retired rules, unless an active rule keeps them."""
    rules = load_rules(root)
    retired = {r.mechanism for r in rules if not r.active}
    return frozenset(retired - {r.mechanism for r in rules if r.active})


def is_active(root: Path, mechanism: str) -> bool:
    """Whether the code behind ``mechanism`` should act (True unless its rule is retired)."""
    return mechanism not in disabled_mechanisms(root)


def due_rules(root: Path, today: dt.date | None = None) -> list[Rule]:
    day = today or dt.date.today()
    return [rule for rule in load_rules(root) if rule.due(day)]


def write_default_rules(root: Path) -> Path | None:
    """Write the default rules file; None (and nothing written) when one exists."""
    path = rules_path(root)
    if path.exists():
        return None
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(DEFAULT_RULES_TEXT, encoding="utf-8")
    return path


# --- editing the file: retire / activate --------------------------------------------


@dataclass(frozen=True)
class Edited:
    rule: Rule
    path: Path
    changed: bool  # False: the rule already had that status
    comments_kept: bool  # False: the file was rewritten (comments and layout lost)


def retire_rule(root: Path, rule_id: str, reason: str, today: dt.date | None = None) -> Edited:
    """Set a rule's status to retired, recording why and when; its mechanism goes off."""
    reason = " ".join(reason.split())
    if not reason:
        raise MeridianError("--reason: say why the rule is retired (it is kept in the file)")
    return _set_status(root, rule_id, "retired", reason, today or dt.date.today())


def activate_rule(root: Path, rule_id: str) -> Edited:
    """Set a rule's status back to active and drop its retirement note."""
    return _set_status(root, rule_id, "active", None, None)


def _set_status(root: Path, rule_id: str, status: str, reason: str | None,
                day: dt.date | None) -> Edited:
    path = rules_path(root)
    shown = yamlio.display_path(path)
    if not path.is_file():
        raise ConfigError(f"{shown}: file not found (meridian init writes the default rules)")
    located, parsed = _load_file(path)
    index = next((i for i, r in enumerate(parsed.rules) if r.id == rule_id), None)
    if index is None:
        known = ", ".join(r.id for r in parsed.rules) or "none"
        raise MeridianError(f"{shown}: no rule with id {rule_id!r} (rules: {known})")
    current = parsed.rules[index]
    if status == "retired" and current.mechanism in ALWAYS_ON:
        raise MeridianError(f"{shown}: rule {rule_id!r}: {current.mechanism} cannot be switched "
                            f"off ({ALWAYS_ON[current.mechanism]}); keep it active")
    if current.status == status and (status == "active" or current.retired_reason == reason):
        return Edited(current, path, changed=False, comments_kept=True)

    changes: dict[str, Any] = {"status": status, "retired_reason": reason, "retired_on": day}
    wanted = {**current.model_dump(exclude_none=True),
              **{k: v for k, v in changes.items() if v is not None}}
    for key, value in changes.items():
        if value is None:
            wanted.pop(key, None)
    expected = Rule.model_validate(wanted)

    text = path.read_text(encoding="utf-8")
    edited = _edit_lines(text, located, index, changes)
    if edited is not None and _parses_to(edited, path, index, expected):
        path.write_text(edited, encoding="utf-8")
        return Edited(expected, path, changed=True, comments_kept=True)
    rules = [expected if i == index else r for i, r in enumerate(parsed.rules)]
    path.write_text(_render(rules), encoding="utf-8")
    return Edited(expected, path, changed=True, comments_kept=False)


def _parses_to(text: str, path: Path, index: int, expected: Rule) -> bool:
    try:
        located = yamlio.parse(text, path)
        parsed = yamlio.validate(RulesFile, located)
    except ConfigError:
        return False
    return len(parsed.rules) > index and parsed.rules[index] == expected


def _all_lines(located: yamlio.Located, value: Any, loc: tuple[Any, ...] = ()) -> set[int]:
    """Line numbers where some key or item of the document starts."""
    out: set[int] = set()
    line = located.line(loc)
    if line:
        out.add(line)
    if isinstance(value, dict):
        for key, sub in value.items():
            out |= _all_lines(located, sub, loc + (key,))
    elif isinstance(value, list):
        for number, sub in enumerate(value):
            out |= _all_lines(located, sub, loc + (number,))
    return out


def _key_pattern(key: str) -> re.Pattern[str]:
    return re.compile(rf"^(\s*(?:-\s+)?){re.escape(key)}\s*:")


def _edit_lines(text: str, located: yamlio.Located, index: int,
                changes: dict[str, Any]) -> str | None:
    """``text`` with the rule's status (and retirement note) changed, or None."""
    lines = text.splitlines(keepends=True)
    rule_data = located.data["rules"][index]
    starts = sorted(_all_lines(located, located.data))

    def extent(key: str) -> range:
        first = located.line(("rules", index, key))
        assert first is not None
        later = [n for n in starts if n > first]
        end = later[0] if later else len(lines) + 1
        # Blank lines and comments before the next key belong to what follows.
        while end - 1 > first and (not lines[end - 2].strip()
                                   or lines[end - 2].lstrip().startswith("#")):
            end -= 1
        return range(first, end)  # 1-based, end exclusive

    anchor = "status" if "status" in rule_data else "id"
    anchor_line = lines[located.line(("rules", index, anchor)) - 1]  # type: ignore[operator]
    match = _key_pattern(anchor).match(anchor_line)
    if match is None:
        return None
    indent = " " * len(match.group(1))

    drop: set[int] = set()
    for key in ("status", "retired_reason", "retired_on"):
        if key in rule_data:
            drop.update(extent(key))
    insert_after = max(extent(anchor))
    new_lines = [f"{indent}status: {changes['status']}\n"]
    if changes.get("retired_reason") is not None:
        new_lines.append(f"{indent}retired_reason: {json.dumps(changes['retired_reason'])}\n")
    if changes.get("retired_on") is not None:
        new_lines.append(f"{indent}retired_on: {changes['retired_on'].isoformat()}\n")
    if anchor == "status":
        # Keep the status line's own prefix ("- " when status is the item's first key)
        # and any trailing comment.
        comment = anchor_line.split("#", 1)[1].rstrip("\n") if "#" in anchor_line else ""
        new_lines[0] = (f"{match.group(1)}status: {changes['status']}"
                        f"{'  #' + comment if comment else ''}\n")

    out: list[str] = []
    for number, line in enumerate(lines, start=1):
        if number not in drop:
            out.append(line if line.endswith("\n") else line + "\n")
        if number == insert_after:
            out.extend(new_lines)
    return "".join(out)


def _render(rules: list[Rule]) -> str:
    body = yaml.safe_dump({"version": 1, "rules": [r.model_dump(mode="json", exclude_none=True)
                                                   for r in rules]},
                          sort_keys=False, allow_unicode=True, width=88)
    return _HEADER + body


_HEADER = """\
# Rules the Meridian harness enforces. Each rule is a switch: its mechanism runs only
# while the rule is active. Retire one with `meridian rules retire ID --reason "..."`,
# turn it back on with `meridian rules activate ID`; `meridian rules --due` lists the
# rules whose review date has come.
"""

DEFAULT_RULES_TEXT = _HEADER + """\
#
# Fields: id, rule (what must hold), failure_mode (what goes wrong without it),
# mechanism (the code that enforces it), review (a date and/or a condition that
# should make someone re-examine the rule), status (active | retired).
version: 1
rules:
  - id: artifacts-exist
    rule: Every artifact a gate declares exists when the gate is submitted.
    failure_mode: The agent reports a gate done while the files it promised were never written.
    mechanism: heuristic:missing_artifact
    review:
      date: 2027-05-31
      condition: a gate passes with a declared artifact missing
    status: active

  - id: checks-pass
    rule: A gate whose checks fail cannot pass, whatever the evaluator's scores.
    failure_mode: A persuasive summary hides a red test suite.
    mechanism: heuristic:failing_check
    review:
      date: 2027-05-31
    status: active

  - id: no-stub-code
    rule: Submitted code has no stubs (pass-only bodies, NotImplementedError, placeholder returns, TODO markers).
    failure_mode: Functions that only look implemented satisfy a skim and fail in use.
    mechanism: heuristic:stub_code
    review:
      date: 2027-05-31
      condition: the stub check flags legitimate code (abstract bases, protocols) more than once a month
    status: active

  - id: no-hollow-tests
    rule: Every test asserts something about the code it exercises.
    failure_mode: Tests that cannot fail make a green suite meaningless.
    mechanism: heuristic:hollow_test
    review:
      date: 2027-05-31
    status: active

  - id: no-skipped-tests
    rule: Tests are not skipped, marked xfail or commented out to get a gate through.
    failure_mode: The agent silences the failing test instead of fixing the code.
    mechanism: heuristic:skipped_test
    review:
      date: 2027-05-31
      condition: the project adopts platform-specific tests that must skip elsewhere
    status: active

  - id: no-empty-files
    rule: Artifact files are not empty.
    failure_mode: An empty file satisfies "the artifact exists" while containing no work.
    mechanism: heuristic:empty_file
    review:
      date: 2027-05-31
    status: active

  - id: python-parses
    rule: Python artifacts parse.
    failure_mode: A file that cannot even be imported is submitted as finished work.
    mechanism: heuristic:syntax_error
    review:
      date: 2027-05-31
    status: active

  - id: failures-are-not-swallowed
    rule: Shipped code does not silence every error (except Exception pass, empty catch).
    failure_mode: A broad handler that does nothing hides the failure a check would have shown.
    mechanism: heuristic:swallowed_error
    review:
      date: 2027-05-31
    status: active

  - id: locked-gates-stay-untouched
    rule: Files of a gate whose dependencies have not passed are not committed.
    failure_mode: The agent skips ahead and builds on foundations that were never judged.
    mechanism: hook:locked_gate_artifacts
    review:
      date: 2027-05-31
      condition: the gate graph is restructured
    status: active

  - id: staged-files-checked
    rule: Staged files pass the heuristic checks before they are committed.
    failure_mode: Stubs and hollow tests reach history and are found only at gate submission.
    mechanism: hook:staged_heuristics
    review:
      date: 2027-05-31
      condition: commits take noticeably longer because of the hook
    status: active

  - id: independent-evaluator
    rule: A gate is judged by an evaluator other than the agent that did the work.
    failure_mode: The agent grades its own work and finds it excellent.
    mechanism: gate:independent_evaluator
    review:
      date: 2027-11-30
    status: active

  - id: human-approval
    rule: Approving a gate needs a human at a terminal.
    failure_mode: The agent approves its own gate through a non-interactive shell.
    mechanism: gate:approval_requires_tty
    review:
      date: 2027-11-30
      condition: approvals move to a review tool with its own authentication
    status: active

  - id: stop-on-failed-verdict
    rule: Claude Code does not end its turn while its gate's latest verdict is a failure.
    failure_mode: The agent stops after a failed evaluation and reports success.
    mechanism: claude:stop_on_failed_verdict
    review:
      date: 2027-05-31
      condition: the retry cap is hit in more than one session a week
    status: active

  - id: harness-is-human-owned
    rule: The agent does not change the harness that checks it (.meridian/, the gate graph and rules file, Meridian's git hooks, the Claude Code settings); a human does.
    failure_mode: The agent lowers a threshold, drops a check, retires a rule or allows non-interactive approval, and its work then passes a bar it set for itself.
    mechanism: claude:protect_harness
    review:
      date: 2027-05-31
      condition: the agent is denied a harness change the user asked it for, more than once a month
    status: active

  - id: memory-validated-on-write
    rule: Every memory record is validated against its schema before it is written.
    failure_mode: A model quietly writes malformed memory that later sessions trust.
    mechanism: memory:validate_on_write
    review:
      date: 2027-11-30
    status: active

  - id: no-regression-on-push
    rule: A push is refused when the latest evaluation run regressed against the baseline.
    failure_mode: An agent change that makes the agent worse ships unnoticed.
    mechanism: prepush:regression_gate
    review:
      date: 2027-05-31
      condition: the baseline is older than three months
    status: active
"""
