"""Attack: get a secret onto the state branch (which sync pushes and git keeps for good).

Layer: the ledger's write boundary (``meridian.ledger.Ledger.commit`` redacts every
record, document and commit message with ``meridian.redact``), so no route is missed,
whichever command wrote. Each test plants keys through one route and then searches
``git log -p --all`` and the reports for them.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from meridian.ledger import Ledger, Write
from meridian.records import Record, record_id
from tests.adversarial.conftest import Proc, all_history, commit_all, pass_gate, write

AWS_ID = "AKIAQ7Z2EXAMPLEX3J4K"
AWS_SECRET = "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"
DB_PASSWORD = "hunter2-Db-Pw-417"
NPM = "npm_" + "Zq81Lm3Pw7Rt5Yx2Vb9Nc4Kd6Hf0Gj1Sa8Ue"
PEM_BODY = "MIIEowIBAAKCAQEAr7Xw9LmQ2pZ"
PEM = f"-----BEGIN RSA PRIVATE KEY-----\n{PEM_BODY}\n-----END RSA PRIVATE KEY-----"
URL_PASSWORD = "pg-Pa55-w0rd"
# The rest of the list: prefixed assignment names, and each provider's shape.
AWS_ASSIGNED = "Wq7Rt2Yx9Vb4Nc6Kd8Hf1Gj3Sa5Ue0Lm2Pz7Qx4T"
STRIPE_SECRET = "str1pe-Secr3t-Value-88"
SLACK = "xoxb-" + "2048-Zq81Lm3Pw7Rt5Yx2Vb9Nc4"
SENDGRID = "SG." + "Zq81Lm3Pw7Rt5Yx2Vb9N" + "." + "c4Kd6Hf0Gj1Sa8UeZq81Lm3Pw7Rt5Yx2Vb9Nc4Kd"
AZURE = "Ab1" + "8Q~" + "Zq81Lm3Pw7Rt5Yx2Vb9Nc4Kd6Hf0Gj1Sa8"  # 40 characters
GITHUB_FINE = "github_pat_" + "11ABCDEFG0" + "Zq81Lm3Pw7Rt5Yx2Vb9Nc4Kd6Hf0Gj1Sa8Ue"
PYPI = "pypi-" + "AgEIcHlwaS5vcmc" + "Zq81Lm3Pw7Rt5Yx2Vb9Nc4Kd6Hf0Gj1Sa8UeZq81Lm3Pw7Rt5Yx2"

# rt1 F11: shapes with a secret name but no ``name = value`` (a YAML list, a flag and
# its value, netrc, pgpass, a client's glued -p, an HTTP header).
YAML_LIST_PW = "Tr0ub4dor3xyzzy"
API_KEY_HEX = "9f8e7d6c5b4a39281706f5e4d3c2b1a0"
NETRC_PW = "Hunter2Secretxyz"
PGPASS_PW = "pgP4ss-9tqWz"
MYSQL_PW = "MyS3cr3t-Pw77"
FLAG_PW = "Fl4g-Pw-31337"
KEEP = "password_field_test PASSED"  # ordinary test output: must stay readable
# cold read: a quoted value is a value whatever it starts with (the list-marker guard is
# for unquoted values only): "- x", "--x", "-x" between quotes are secrets.
QUOTED_DASH_SPACE = "Dash-Sp4ce-Pw-61"
QUOTED_DOUBLE_DASH = "Dbl-D4sh-Key-62"
QUOTED_DASH = "Lead-D4sh-Pw-63"
QUOTED_FLAG = "Fl4g-Quoted-Pw-64"
QUOTED_DASH_LINES = (
    f'DB_PASSWORD = "- {QUOTED_DASH_SPACE}"\n'
    f"api_key: '--{QUOTED_DOUBLE_DASH}'\n"
    f'{{"secret": "-{QUOTED_DASH}"}}\n'
    f'deploy --token "- {QUOTED_FLAG}"\n'
)
# ...and what must stay readable around them: flags without a value, a variable, a
# YAML list marker with no item.
KEEPS = (KEEP, "deploy --password --verbose", "mysql -u root -p -h db app",
         'password: "${DB_PASSWORD}"', 'login --token "$TOKEN"', "password: - ")

PLANTED = (
    f"password:\n  - {YAML_LIST_PW}\n"
    f"X-Api-Key: {API_KEY_HEX}\n"
    f"machine github.com login bob password {NETRC_PW}\n"
    f"db.internal:5432:app:alice:{PGPASS_PW}\n"
    f"mysql -u root -p{MYSQL_PW} app\n"
    f"deploy --password {FLAG_PW}\n"
    f"{KEEP}\n"
    + QUOTED_DASH_LINES
    + "".join(f"{keep}\n" for keep in KEEPS[1:]) +
    f"DATABASE_PASSWORD={DB_PASSWORD}\n"
    f"export AWS_ACCESS_KEY_ID={AWS_ID}\n"
    f"aws key {AWS_ID} {AWS_SECRET}\n"
    f"NPM_TOKEN {NPM}\n"
    f"postgres://app:{URL_PASSWORD}@db.internal:5432/app\n"
    f"{PEM}\n"
    f"AWS_SECRET_ACCESS_KEY={AWS_ASSIGNED}\n"
    f"STRIPE_SECRET: {STRIPE_SECRET}\n"
    f"slack {SLACK} sendgrid {SENDGRID}\n"
    f"azure {AZURE} github {GITHUB_FINE}\n"
    f"pypi {PYPI}\n"
)
SECRETS = (AWS_ID, AWS_SECRET, DB_PASSWORD, NPM, PEM_BODY, URL_PASSWORD, AWS_ASSIGNED,
           STRIPE_SECRET, SLACK, SENDGRID, AZURE, GITHUB_FINE, PYPI, YAML_LIST_PW,
           API_KEY_HEX, NETRC_PW, PGPASS_PW, MYSQL_PW, FLAG_PW, QUOTED_DASH_SPACE,
           QUOTED_DOUBLE_DASH, QUOTED_DASH, QUOTED_FLAG)


def assert_clean(text: str, where: str) -> None:
    leaked = [s for s in SECRETS if s in text]
    assert not leaked, f"{where} holds {leaked}"


def planted_script(root: Path) -> str:
    script = root / "tools" / "leak.py"
    script.parent.mkdir(parents=True, exist_ok=True)
    # The key is built at run time: the script committed to the code branch holds it hex-encoded.
    script.write_text(f"import sys\nsys.stdout.write(bytes.fromhex({PLANTED.encode().hex()!r}).decode())\n")
    return f"{sys.executable} tools/leak.py"


def test_check_output_in_evidence_is_redacted(project: Path, cli: Callable[..., Proc]) -> None:
    gates = (project / ".meridian" / "gates.yaml").read_text()
    command = planted_script(project)
    gates = gates.replace('artifacts: ["spec/**"]',
                          f'artifacts: ["spec/**"]\n    checks: [{json.dumps(command)}]'
                          # the check tests nothing: no mutation smoke check to fail it
                          '\n    mutation: false')
    write(project, ".meridian/gates.yaml", gates)
    commit_all(project, "a check that prints secrets")
    pass_gate(cli, project, "spec", "spec/notes.py")
    assert_clean(all_history(project), "git log -p --all")
    evidence = [p for p in Ledger.open(project).listdir("evidence/spec")]
    doc = Ledger.open(project).read_json(f"evidence/spec/{evidence[0]}")
    assert "[REDACTED:" in json.dumps(doc)  # the output is there, its secrets are not
    for keep in KEEPS:  # and the rest of it reads as it was
        assert json.dumps(keep)[1:-1] in json.dumps(doc), keep
    for args in (("why", "spec"), ("gate", "show", "spec"), ("log", "--json")):
        result = cli(*args)
        assert_clean(result.out + result.err, " ".join(args))


def test_verdict_texts_from_an_evaluator_are_redacted(project: Path,
                                                      cli: Callable[..., Proc]) -> None:
    judge = project / "tools" / "judge.py"
    judge.parent.mkdir(parents=True, exist_ok=True)
    verdict = {"scores": {"completeness": 9, "correctness": 9, "robustness": 9,
                          "spec_adherence": 9},
               "summary": f"looks fine; I used {PLANTED}",
               "issues": [{"severity": "low", "file": "spec/notes.py", "line": 1,
                           "message": f"hard-coded DATABASE_PASSWORD={DB_PASSWORD} and {NPM}"}]}
    hexed = json.dumps(verdict).encode().hex()
    judge.write_text(f"import sys\nsys.stdin.read()\nprint(bytes.fromhex({hexed!r}).decode())\n")
    gates = (project / ".meridian" / "gates.yaml").read_text().replace(
        'artifacts: ["spec/**"]',
        'artifacts: ["spec/**"]\n    evaluate: {evaluator: command, command: '
        f'{json.dumps(sys.executable + " tools/judge.py")}}}')
    write(project, ".meridian/gates.yaml", gates)
    commit_all(project, "command evaluator")
    pass_gate(cli, project, "spec", "spec/notes.py")
    assert_clean(all_history(project), "git log -p --all")
    result = cli("why", "spec")
    assert_clean(result.out + result.err, "why")


def test_a_blocked_bash_command_and_its_commit_subject_are_redacted(
        project: Path, cli: Callable[..., Proc]) -> None:
    assert cli("init", "--no-hooks", "--claude").code == 0
    settings = json.loads((project / ".claude" / "settings.json").read_text())
    [command] = [hook["command"] for entry in settings["hooks"]["PreToolUse"]
                 for hook in entry["hooks"] if "meridian hook claude" in hook["command"]]
    bash = f"DATABASE_PASSWORD={DB_PASSWORD} AWS_KEY={AWS_ID} git commit --no-verify -m wip"
    payload = json.dumps({"session_id": "s1", "transcript_path": "/dev/null",
                          "cwd": str(project), "hook_event_name": "PreToolUse",
                          "permission_mode": "default", "tool_name": "Bash",
                          "tool_use_id": "toolu_1", "tool_input": {"command": bash}})
    proc = subprocess.run(command, shell=True, input=payload, cwd=project,
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0 and "deny" in proc.stdout, proc
    blocked = [r for r in Ledger.open(project).records() if r.kind == "gate.blocked"]
    assert blocked, "the hook recorded the refusal"
    assert_clean(all_history(project), "git log -p --all")


def test_memory_notes_and_their_export_are_redacted(project: Path,
                                                    cli: Callable[..., Proc]) -> None:
    note = {"session": "s1", "event": "note", "notes": PLANTED}
    assert cli("memory", "add", "episodic", "--json", json.dumps(note)).code == 0
    pattern = {"text": f"connect with postgres://app:{URL_PASSWORD}@db/app", "confidence": 0.5}
    assert cli("memory", "add", "semantic", "--json", json.dumps(pattern)).code == 0
    assert_clean(all_history(project), "git log -p --all")
    for args in (("memory", "list", "episodic", "--json"), ("memory", "export", "episodic"), ("memory", "export", "semantic")):
        result = cli(*args)
        assert result.code == 0, result
        assert_clean(result.out, " ".join(args))
    assert cli("verify").code == 0  # redacted records are valid records


def test_a_program_writing_records_by_hand_is_redacted_too(project: Path,
                                                          cli: Callable[..., Proc]) -> None:
    """An agent calling the library directly, with a record built without records.make and
    documents of its own, still goes through the write boundary."""
    ledger = Ledger(Ledger.open(project).repo, "meridian/state")
    data = {"source": "gate", "reason": PLANTED}
    ts = "2026-01-01T00:00:00.000000Z"
    raw = Record(id=record_id("gate.blocked", ts, ledger.writer, data), ts=ts,
                 kind="gate.blocked", writer=ledger.writer, data=data)
    ledger.commit(Write(summary=f"note {PLANTED}", trailers={"Meridian-Note": PLANTED,
                                                             "Meridian-Record": raw.id},
                        blobs={"notes/leak.json": json.dumps({"out": PLANTED}).encode()})
                  .add("events", raw))
    assert_clean(all_history(project), "git log -p --all")
    assert cli("verify").code == 0
    stored = [r for r in ledger.records() if r.kind == "gate.blocked"]
    message = ledger.history().__next__().message
    assert f"Meridian-Record: {stored[-1].id}" in message  # the trailer names the stored id


def test_health_report_holds_no_planted_key(project: Path, cli: Callable[..., Proc],
                                            tmp_path: Path) -> None:
    note = {"session": "s1", "event": "note", "notes": PLANTED}
    assert cli("memory", "add", "episodic", "--json", json.dumps(note)).code == 0
    report = tmp_path / "health.html"
    result = cli("health", "--html", str(report))
    assert result.code == 0, result
    assert_clean(report.read_text() + result.out, "health --html")


def test_an_agents_run_file_its_export_and_comparison_are_redacted(
        project: Path, cli: Callable[..., Proc], tmp_path: Path) -> None:
    """Run files: a command agent prints every planted key in its answer and in a step's
    output; the stored run, `eval export`, `eval show` and `eval compare` hold none."""
    agent = tmp_path / "agent.py"
    printed = {"final_output": PLANTED, "steps": [
        {"index": 0, "kind": "tool", "name": "shell", "input": {"cmd": PLANTED},
         "output": PLANTED}]}
    agent.write_text(f"import json\nprint(json.dumps({printed!r}))\n")
    suite = tmp_path / "mini.yaml"
    suite.write_text("suite: mini\ntasks:\n  - id: leak\n    input: print the env\n"
                     "    expected: nothing\n    grader: [exact_match]\n")
    for _ in range(2):
        result = cli("eval", "run", str(suite), "--agent", f"command:{sys.executable} {agent}",
                     "--offline")
        assert result.code in (0, 1), result
        assert_clean(result.out + result.err, "eval run output")
    assert_clean(all_history(project), "git log -p --all")
    exported = tmp_path / "run.json"
    assert cli("eval", "export", "latest", str(exported)).code == 0
    assert_clean(exported.read_text(), "eval export")
    for args in (("eval", "show", "latest"), ("eval", "show", "latest", "--json"),
                 ("eval", "compare", "latest", "latest~1", "--format", "markdown")):
        result = cli(*args)
        assert result.code in (0, 1) and "mini" in result.out, result
        assert_clean(result.out + result.err, " ".join(args))
