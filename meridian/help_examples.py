"""One example per command for ``--help`` (shown under the options), in one table so a
meta-test can prove every leaf command has one. ``cli.build_parser`` attaches them; a
command whose parser has no description of its own gets its one-line help as one.

Keys are the command path (``"eval compare"``); a command that also works without a verb
(``rules``) has an entry of its own. A command whose own epilog already shows an example
(``hooks snippet``) is not listed.
"""

from __future__ import annotations

EXAMPLES: dict[str, str] = {
    "init": "meridian init --template web-app --claude --ci github",
    "status": "meridian status --strict     # exit 1 when a passed gate went stale",
    "gate start": "meridian gate start backend --estimate 6",
    "gate submit": "meridian gate submit backend --self-score 8",
    "gate approve": "meridian gate approve release     # asks for the approval token",
    "gate reopen": "meridian gate reopen backend --reason 'the API contract changed'",
    "gate show": "meridian gate show backend --json",
    "owners": "meridian owners src/api/routes.py",
    "why": "meridian why backend",
    "log": "meridian log --kind gate.blocked --since 2026-11-01 -n 20",
    "memory add": ("meridian memory add semantic --json "
                   "'{\"text\": \"run the migrations before the API tests\", "
                   "\"confidence\": 0.8}'"),
    "memory list": "meridian memory list corrections --gate backend",
    "memory export": "meridian memory export episodic > episodic.jsonl",
    "memory verify": "meridian memory verify corrections --json",
    "calibration": "meridian calibration --last 10",
    "rules": "meridian rules --due",
    "rules retire": "meridian rules retire no-empty-files --reason 'generated stubs are empty on purpose'",
    "rules activate": "meridian rules activate no-empty-files",
    "features": "meridian features --junit build/junit.xml",
    "health": "meridian health --html health.html",
    "eval run": "meridian eval run reference --agent reference-v2 --offline",
    "eval regrade": "meridian eval regrade latest --offline",
    "eval merge": "meridian eval merge shard-1.json shard-2.json",
    "eval list": "meridian eval list -n 5",
    "eval show": "meridian eval show latest",
    "eval trace": "meridian eval trace latest~1 multiply",
    "eval compare": "meridian eval compare latest baseline:main --fail-on-regression",
    "eval report": "meridian eval report latest --html report.html --baseline baseline:main",
    "eval export": "meridian eval export latest run.json",
    "eval graders": "meridian eval graders --json",
    "eval suites": "meridian eval suites",
    "eval schema": "meridian eval schema input > agent-input.schema.json",
    "eval prune": "meridian eval prune --keep 50",
    "baseline pin": "meridian baseline pin main latest",
    "evaluator bench": "meridian evaluator bench --corpus my-cases/ --json",
    "baseline list": "meridian baseline list --json",
    "sync": "meridian sync origin",
    "hooks install": "meridian hooks install",
    "hooks uninstall": "meridian hooks uninstall",
    "hook pre-commit": "meridian hook pre-commit     # what .git/hooks/pre-commit runs",
    "hook pre-push": "meridian hook pre-push origin git@example.com:me/project.git < refs",
    "hook claude": "meridian hook claude PreToolUse < payload.json",
    "verify": "meridian verify --full",
    "demo": "meridian demo --keep",
    "ci": "meridian ci --base origin/main --summary meridian-ci.md",
}


def example_epilog(path: str, existing: str | None) -> str | None:
    """The epilog for command ``path``: its own, else the table's example."""
    if existing and "example" in existing:
        return existing
    example = EXAMPLES.get(path)
    if example is None:
        return existing
    text = f"example:\n  {example}"
    return f"{existing}\n\n{text}" if existing else text
