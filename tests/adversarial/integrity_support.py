"""Forgeries for the integrity attacks, written the way an agent with a shell would:
git plumbing only (no Meridian code writes the state branch here)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from meridian import gitio
from meridian.gates import artifacts
from meridian.gates.definition import spec_hash
from meridian.gates.graph import load_graph
from meridian.records import Record, now_ts, record_id

STATE = "meridian/state"
SCORES = {d: 9.5 for d in ("completeness", "correctness", "robustness", "spec_adherence")}


def plumb_commit(root: Path, files: dict[str, bytes], message: str, *,
                 env: dict[str, str] | None = None, branch: str = STATE) -> str:
    """One commit on ``branch`` adding ``files`` with git plumbing. A file already on the
    branch is appended to (event shards grow; that is what a real append looks like)."""
    index = root / ".git" / "forger-index"
    base = {**os.environ, "GIT_INDEX_FILE": str(index), **(env or {})}

    def run(*args: str, data: bytes | None = None, check: bool = True) -> bytes:
        return subprocess.run(["git", *args], cwd=root, env=base, input=data,
                              capture_output=True, check=check).stdout

    parent = run("rev-parse", f"refs/heads/{branch}").decode().strip()
    run("read-tree", parent)
    for path, data in files.items():
        before = run("cat-file", "blob", f"{parent}:{path}", check=False)
        blob = run("hash-object", "-w", "--stdin", data=before + data).decode().strip()
        run("update-index", "--add", "--cacheinfo", f"100644,{blob},{path}")
    tree = run("write-tree").decode().strip()
    commit = run("commit-tree", tree, "-p", parent, "-m", message).decode().strip()
    run("update-ref", f"refs/heads/{branch}", commit, parent)
    index.unlink()
    return commit


def event_line(kind: str, data: dict[str, object], ts: str | None = None,
               writer: str = "agent <agent@example.invalid>") -> tuple[str, str]:
    """(record id, JSONL line) of a well-formed record."""
    ts = ts or now_ts()
    rid = record_id(kind, ts, writer, data)
    return rid, Record(id=rid, ts=ts, kind=kind, writer=writer, data=data).line()


def shard_of(ts: str) -> str:
    return f"events/{ts[:7]}/0000.jsonl"


def forge_pass(root: Path, gate: str, *, subject: str | None = None,
               ts: str | None = None, env: dict[str, str] | None = None,
               name: str = "forged", branch: str = STATE) -> str:
    """A pass consistent in every way the local derivation checks (one commit adds the
    event and its made-up passing verdict: same gate, subject and definition hash), by
    plumbing. ``subject`` defaults to the gate's artifacts in the work tree."""
    graph = load_graph(root)
    repo = gitio.open_repo(root)
    if subject is None:
        subject = artifacts.snapshot(repo, root, graph.gate(gate).artifacts).subject
    digest = spec_hash(graph, gate)
    ts = ts or now_ts()
    path = f"verdicts/{gate}/{ts[:19].replace('-', '').replace(':', '')}-{name}.json"
    verdict = {"gate": gate, "evaluator": "heuristic", "subject": subject, "scores": SCORES,
               "overall": 9.5, "threshold": 7.0, "passed": True, "issues": [],
               "spec_hash": digest}
    _, started = event_line("gate.started", {"gate": gate,
                                             "base_commit": gitio.head_commit(repo)}, ts)
    _, passed = event_line("gate.passed", {
        "gate": gate, "verdict": path, "overall": 9.5, "threshold": 7.0,
        "evaluator": "heuristic", "subject": subject, "scores": SCORES,
        "spec_hash": digest}, ts)
    return plumb_commit(root, {shard_of(ts): (started + "\n" + passed + "\n").encode(),
                               path: json.dumps(verdict).encode()},
                        f"gate.passed {gate}", env=env, branch=branch)
