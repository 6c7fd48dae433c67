"""The passes a status view shows, checked again on every run without pygit2 or the verdict models.

A status view (``status_view``) is a cache an agent can rewrite, so a view that shows a
gate passed is used only once everything the full path would check about that pass
holds now, read from the branch, the work tree and the files (never from the view):

1. **The fold is the snapshot's.** The gate snapshot (``gates/snapshot.py``, the file
   the full path folds from) is read and checked as its reader does (``_read_cache``:
   UTF-8, the same checksums and field checks); its tip must be the
   state tip now, and every gate the view shows must carry the snapshot fold's fields
   (verdict, figures, subject, spec hash, identity, counts, times). A gate shown passed
   must be ``passed`` there with no approval involved, its needs shown passed with none
   taken back after it passed (``state._taken_back_need``), and every gate of the graph
   with a counted pass (``floors``) must be one of them; a pass or an approval the fold
   counts for a gate outside the graph is derived in full (``vouch`` checks those too).
   So a view rolled back to an earlier
   pass is refused unless the snapshot is rolled back too, when the full path shows
   the same (docs/security.md: what a local read cannot see).
2. **The pass is on the branch and backed by its verdict** (``snapshot.vouch`` and
   ``evidence.check_pass``, read with ``git cat-file --batch`` and ``git merge-base
   --is-ancestor``; a commit with headers out of git's layout or twice, a tree with
   duplicate or unsorted entries, which libgit2 may read otherwise, are refused): the
   commit the snapshot names is
   the tip or an ancestor of it, it only appended to event shards and added the event,
   the event is a ``gate.passed`` of the gate whose figures are the fold's, stamped no
   later than its commit's time plus the skew, naming a verdict document the same
   commit added, which Meridian's rule accepts (``gates/pass_rule.py``: plain Python,
   held to the pydantic models by a differential test; not sure is not accepted).
3. **The definition is the one the verdict was decided under, now.** The config and
   the gate graph are read from the files, never taken from the view or the branch:
   without pydantic by ``gates/plain_definition.py`` (the full path's YAML code,
   ``yamlparse``; the models' rules and ``parse_graph``'s checks mirrored, held to
   them by a differential test; anything the models might coerce or decide otherwise
   is "unsure"), else with the full path's own loaders (as ``status`` derives them; a
   file they refuse is derived in full, which prints the error): the view's facts (the
   state branch above all) must be what the config gives, the gate's definition now
   (``gates/definition.py``) must hash to the verdict's ``spec_hash``, every counted
   pass must be at or above its gate's threshold now (``snapshot._below_floor``), the
   artifact globs and the graph (order and needs) are the graph's. ``gate submit``
   also records, in the pass's evidence document (on the branch, added with the
   verdict), the sha256 of the config, gate graph and features files (and of the files
   a command evaluator runs, its ``programs``) and Meridian's version
   (``definition_files``): they must be byte for byte the files now, and a
   pass recorded without them (older Meridian) is derived in full.
4. **The artifacts are the ones judged**: the work tree listed and the gate's files
   hashed into a tree id as the full path does, without pygit2
   (``gates/plain_subject.py``: ignore rules it cannot read exactly are not guessed),
   equal to the verdict's subject.

Anything not shown to hold (a stale gate, an approval, a merge on the branch, a git
that cannot run, an ignore rule with a negation...) returns False: derive in full.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from meridian.plainread import (
    CONFIG_FILE,
    SNAPSHOT_VERSION,
    canonical_json,
    line_id,
    snapshot_aux_checksum,
    snapshot_checksum,
)
from meridian.viewfile import sha256

SKEW_SECONDS = 300  # gates.evidence.SKEW_SECONDS
PASSED = "gate.passed"
RECORD_FIELDS = frozenset({"id", "ts", "kind", "writer", "data"})
_SAFE = re.compile(r"[A-Za-z0-9._-]+")
HEX = re.compile(r"[0-9a-f]{40}")
# A signature line's tail as git writes it: "Name <email> 1234567890 +0000".
_SIGNATURE = re.compile(r"[^<>\n]*<[^<>\n]*> ([0-9]{1,12}) [+-][0-9]{4}")
# What a gate's status shows from its fold (``state._base_status``), compared one by one.
SHOWN_FROM_FOLD = ("verdict", "verdict_passed", "overall", "threshold", "evaluator", "scope",
                   "subject", "spec_hash", "identity", "submissions", "blocks", "updated_at",
                   "started_at", "base_commit")
# A fold's defaults (``state.GateFold()``), for a gate with no event yet.
FOLD_DEFAULTS: dict[str, Any] = {
    "phase": "open", "phase_before_submit": "open", "started_at": None, "base_commit": None,
    "estimate_hours": None, "verdict": None, "verdict_passed": None, "overall": None,
    "threshold": None, "evaluator": None, "scope": None, "subject": None, "spec_hash": None,
    "identity": None, "high_issues": 0, "approved_verdict": None, "approver": None,
    "submitted_at": None, "submissions": 0, "blocks": 0, "updated_at": None,
    "forged_reason": None, "last_pos": -1, "passed_pos": None, "taken_back_pos": None,
    "taken_back": None}
_TAKEN_BACK = ("in_progress", "submitted", "failed", "forged", "stale")


class _No(Exception):
    """Something the fast path cannot show holds: derive in full."""


def _snapshot_checksums(cached: dict[str, Any]) -> tuple[str, str]:
    """(checksum, aux_checksum) as ``gates.snapshot`` computes them (the same functions,
    ``plainread``)."""
    return (snapshot_checksum(cached["tip"], cached["last_ts"], cached["fields"],
                              cached["folds"]),
            snapshot_aux_checksum(cached["tip"], cached["aux"]))


def snapshot_path(common: Path, branch: str) -> Path:
    return common / "meridian" / f"gate-snapshot-{branch.replace('/', '__')}.json"


def _snapshot(common: Path, branch: str, tips: tuple[str, str | None]) -> dict[str, Any]:
    """The snapshot as ``gates.snapshot._read_cache`` reads it (UTF-8 text, the same field
    checks: a file it refuses is folded from the root by the full path)."""
    try:
        cached = json.loads(snapshot_path(common, branch).read_text(encoding="utf-8"))
        if not isinstance(cached, dict) or cached.get("version") != SNAPSHOT_VERSION:
            raise _No("the snapshot is not of this Meridian")
        aux = cached["aux"]
        if (cached.get("checksum"), cached.get("aux_checksum")) != _snapshot_checksums(cached):
            raise _No("the snapshot's checksums do not match")
        if not (isinstance(cached["tip"], str) and isinstance(cached["folds"], dict)
                and all(isinstance(f, dict) for f in cached["folds"].values())
                and isinstance(cached["fields"], list) and isinstance(aux["floors"], dict)
                and isinstance(aux["claims"], dict) and isinstance(aux["exact"], bool)
                and isinstance(aux["ids"], str)
                and isinstance(aux.get("ids_tail", []), list)
                and all(type(h) is int for h in aux.get("ids_tail", []))
                and (aux["harness"] is None or isinstance(aux["harness"], list))):
            raise _No("the snapshot's fields are not what the full path reads")
        if cached["tip"] not in tips:
            raise _No("the snapshot is not of this tip")
        if cached["fields"] != list(FOLD_DEFAULTS) \
                or not all(set(f) == set(FOLD_DEFAULTS) for f in cached["folds"].values()):
            raise _No("the snapshot's folds are not of this Meridian")
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        raise _No("no snapshot") from None
    return cached


def _fold(snapshot: dict[str, Any], gate: str) -> dict[str, Any]:
    return snapshot["folds"].get(gate) or dict(FOLD_DEFAULTS)


def _check_folds(document: dict[str, Any], snapshot: dict[str, Any],
                 counted: bool = False) -> list[str]:
    """The gates shown passed, once every gate shown carries its snapshot fold's fields
    (``counted``: but the block counts and times, which a catch-up moved on)."""
    compared = [k for k in SHOWN_FROM_FOLD if not counted or k not in ("blocks", "updated_at")]
    gates = {g["gate"]: g for g in document["gates"]}
    # Folds of gates the graph no longer has (or never had) show nowhere: not compared.
    if len(gates) != len(document["gates"]):
        raise _No("a gate shown twice")
    passed = []
    for name, shown in gates.items():
        fold = _fold(snapshot, name)
        if any(shown.get(key) != fold[key] for key in compared):
            raise _No(f"{name}: the view is not the snapshot's fold")
        if shown["state"] == "passed":
            if fold["phase"] != "passed" or fold["approved_verdict"] is not None \
                    or shown.get("approver") is not None or shown.get("awaiting_approval") \
                    or shown.get("unmet_needs") or shown.get("stale_needs") is not None \
                    or shown.get("forged_reason") is not None:
                raise _No(f"{name}: not a plain pass")
            if shown["detail"] != _passed_detail(fold):
                raise _No(f"{name}: not the detail of its pass")
            passed.append(name)
        elif fold["phase"] == "passed":
            raise _No(f"{name}: a pass the view does not show as one")
    # ``snapshot.vouch`` checks every pass and approval the fold counts, of a gate the
    # graph has or not (one that does not hold: folded from the root); those of gates
    # outside the graph are checked nowhere here, so they are derived in full.
    for name, fold in snapshot["folds"].items():
        if name not in gates and (fold["phase"] == "passed"
                                  or fold["approved_verdict"] is not None):
            raise _No(f"{name}: a pass or an approval of a gate not shown")
    floors = snapshot["aux"]["floors"]
    if not isinstance(floors, dict) or (set(floors) & set(gates)) - set(passed):
        raise _No("a gate with a counted pass that is not shown passed")
    return passed


def _check_graph(document: dict[str, Any], snapshot: dict[str, Any],
                 graph: list[list[Any]], passed: list[str]) -> None:
    """With the gate graph now (``_Definition.order``): the gates in its order with its
    needs, each
    state what ``state.derive_states`` gives for its fold, and no passed gate with a
    need taken back after it passed (``state._taken_back_need``)."""
    needs = {name: list(its) for name, its in graph}
    if [g["gate"] for g in document["gates"]] != [name for name, _ in graph] \
            or any(g["needs"] != needs[g["gate"]] for g in document["gates"]):
        raise _No("the view's gates are not the graph's")
    states = {g["gate"]: g["state"] for g in document["gates"]}
    for shown in document["gates"]:
        name, state = shown["gate"], shown["state"]
        phase = _fold(snapshot, name)["phase"]
        unmet = [n for n in needs[name] if states[n] != "passed"]
        if phase == "open":
            expected = "locked" if unmet else "open"
        elif phase in ("in_progress", "submitted", "failed", "forged", "passed"):
            expected = phase
        else:
            raise _No(f"{name}: a phase not known here")
        if state != expected or (shown.get("unmet_needs") or []) != unmet or shown.get(
                "forged_reason") != (_fold(snapshot, name)["forged_reason"]
                                     if phase == "forged" else None):
            raise _No(f"{name}: not the state its fold and needs give")
    for name in passed:
        fold = _fold(snapshot, name)
        if any(states[n] != "passed" for n in needs[name]):
            raise _No(f"{name}: a need not passed")
        pending, seen = list(needs[name]), set()
        while pending:
            need = pending.pop(0)
            if need in seen:
                continue
            seen.add(need)
            upstream = _fold(snapshot, need)
            if upstream["taken_back_pos"] is not None and (
                    fold["passed_pos"] is None or upstream["taken_back_pos"] > fold["passed_pos"]):
                raise _No(f"{name}: a need taken back since it passed")
            pending.extend(needs[need])


def _passed_detail(fold: dict[str, Any]) -> str:
    """``state._detail`` for a passed gate without an approver."""
    judged = f"{fold['evaluator']}, scope: {fold['scope']}" if fold["scope"] \
        else str(fold["evaluator"])
    return f"overall {fold['overall']} >= {fold['threshold']} ({judged})"


# --- git ------------------------------------------------------------------------------


class _Batch:
    """One ``git cat-file --batch`` process, asked one object at a time (it answers each
    before reading the next line), so trees can be walked as they are read; the same
    repository, environment and switches as ``state_catchup._git``."""

    def __init__(self, common: Path) -> None:
        import subprocess

        self.common = common
        env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
        env.update(GIT_NO_REPLACE_OBJECTS="1", GIT_OPTIONAL_LOCKS="0", GIT_TERMINAL_PROMPT="0")
        try:
            self.proc = subprocess.Popen(
                ["git", f"--git-dir={common}", "--no-replace-objects", "--no-pager",
                 "cat-file", "--batch"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL, env=env, cwd=common)
        except OSError as exc:
            raise _No(f"git: {exc}") from None
        self.cache: dict[str, tuple[str, bytes] | None] = {}

    def get(self, name: str) -> tuple[str, bytes] | None:
        """(type, content) of the object ``name`` names, None when it is missing."""
        if name in self.cache:
            return self.cache[name]
        if "\n" in name or not name:
            raise _No("a name git cannot be asked for")
        stdin, stdout = self.proc.stdin, self.proc.stdout
        assert stdin is not None and stdout is not None
        try:
            stdin.write(name.encode("utf-8", "surrogateescape") + b"\n")
            stdin.flush()
            header = stdout.readline().rstrip(b"\n").split(b" ")
            if header[-1] == b"missing" or header[-1] == b"ambiguous":
                found = None
            elif len(header) == 3 and HEX.fullmatch(header[0].decode()):
                size = int(header[2])
                content = stdout.read(size + 1)
                if len(content) != size + 1:
                    raise _No("git stopped answering")
                found = (header[1].decode(), content[:size])
            else:
                raise _No(f"{name}: an unexpected answer")
        except (OSError, ValueError):
            raise _No("git stopped answering") from None
        self.cache[name] = found
        return found

    def close(self) -> None:
        import subprocess

        try:
            if self.proc.stdin is not None:
                self.proc.stdin.close()
            self.proc.wait(timeout=10)
        except (OSError, subprocess.SubprocessError):
            self.proc.kill()
        if self.proc.stdout is not None:
            self.proc.stdout.close()

    def commit(self, oid: str) -> dict[str, Any]:
        """{"tree", "parents", "time"} of commit ``oid`` (the committer's time, as libgit2
        reads it)."""
        found = self.get(oid)
        if found is None or found[0] != "commit":
            raise _No(f"{oid}: not a commit")
        head = found[1].split(b"\n\n", 1)[0].decode("utf-8", "surrogateescape").split("\n")
        # Read only as libgit2 reads it for sure: ``tree``, then the ``parent`` lines,
        # then one ``author`` and one ``committer`` line (libgit2 takes the first of two,
        # a reader of the last would differ), then headers it does not read
        # (``encoding``, ``gpgsig``, ``mergetag`` and their continuation lines); a commit
        # laid out otherwise is refused.
        tree, parents, time = None, [], None
        at = 0
        if head and head[0].startswith("tree "):
            tree, at = head[0][5:], 1
        while at < len(head) and head[at].startswith("parent "):
            parents.append(head[at][7:])
            at += 1
        if at + 1 < len(head) and head[at].startswith("author ") \
                and head[at + 1].startswith("committer "):
            match = _SIGNATURE.fullmatch(head[at + 1][10:])
            time = None if match is None else int(match.group(1))
            at += 2
        for line in head[at:]:
            if line.startswith(("tree ", "parent ", "author ", "committer ")):
                raise _No(f"{oid}: a commit header libgit2 may read otherwise")
        if tree is None or time is None or not HEX.fullmatch(tree) \
                or not all(HEX.fullmatch(p) for p in parents):
            raise _No(f"{oid}: an unexpected commit")
        return {"tree": tree, "parents": parents, "time": time}

    def tree(self, oid: str | None) -> dict[str, tuple[str, str]]:
        """name -> (mode, id) of tree ``oid`` ({} for None)."""
        if oid is None:
            return {}
        found = self.get(oid)
        if found is None or found[0] != "tree":
            raise _No(f"{oid}: not a tree")
        data, out, at = found[1], {}, 0
        last: bytes | None = None
        while at < len(data):
            space = data.index(b" ", at)
            nul = data.index(b"\0", space)
            raw, mode = data[space + 1:nul], data[at:space].decode()
            if len(data) < nul + 21 or not raw or b"/" in raw:
                raise _No(f"{oid}: a malformed tree")
            # git's order (a tree sorts as if its name ended in '/'): libgit2 looks names
            # up by binary search, so a tree listing a name twice or out of order is read
            # one way there and another here: refused
            ordered = raw + b"/" if mode == "40000" else raw
            if last is not None and ordered <= last:
                raise _No(f"{oid}: a tree with duplicate or unsorted entries")
            last = ordered
            name = raw.decode("utf-8", "surrogateescape")
            if name in out:
                raise _No(f"{oid}: a tree with duplicate entries")
            out[name] = (mode, data[nul + 1:nul + 21].hex())
            at = nul + 21
        return out

    def entry(self, tree: str | None, path: str) -> tuple[str, str] | None:
        """(mode, id) at ``path`` in ``tree``, or None."""
        mode, oid = "40000", tree
        for part in path.split("/"):
            if oid is None or mode != "40000":
                return None
            found = self.tree(oid).get(part)
            if found is None:
                return None
            mode, oid = found
        return None if oid is None else (mode, oid)

    def appended(self, old: str | None, new: str | None, prefix: str = "events/"
                 ) -> list[tuple[str, bytes]]:
        """(shard path, line) of the lines tree ``new`` appends to tree ``old``: every change
        under them an append to a ``.jsonl`` blob (``snapshot._appended``)."""
        before, after = self.tree(old), self.tree(new)
        out: list[tuple[str, bytes]] = []
        for name in sorted(set(before) | set(after)):
            o, n = before.get(name), after.get(name)
            if o is not None and n is not None and o[1] == n[1]:
                continue
            path = prefix + name
            if n is None:
                raise _No(f"{path}: removed")
            if n[0] == "40000" and (o is None or o[0] == "40000"):
                out += self.appended(None if o is None else o[1], n[1], path + "/")
                continue
            if n[0] != "100644" or (o is not None and o[0] != "100644") \
                    or not path.endswith(".jsonl"):
                raise _No(f"{path}: not an append to a shard")
            new_data = self.get(n[1])
            old_data = ("blob", b"") if o is None else self.get(o[1])
            if new_data is None or old_data is None or not new_data[1].startswith(old_data[1]):
                raise _No(f"{path}: not an append")
            out += [(path, line) for line in new_data[1][len(old_data[1]):].splitlines()
                    if line.strip()]
        return out

    def is_ancestor(self, commit: str, tip: str, steps: int = 32) -> bool:
        """Whether ``commit`` is ``tip`` or an ancestor of it: the first parents walked a
        few steps, then ``git merge-base --is-ancestor``."""
        at = tip
        for _ in range(steps):
            if at == commit:
                return True
            parents = self.commit(at)["parents"]
            if len(parents) != 1:
                break
            at = parents[0]
        from meridian.state_catchup import _git, _NotCaughtUp

        try:
            _git(self.common, ["merge-base", "--is-ancestor", commit, tip])
        except _NotCaughtUp:
            return False  # exit 1 (not an ancestor) and every failure alike
        return True


_line_id = line_id  # idindex.line_id (the same function, ``plainread``)


# --- the checks -----------------------------------------------------------------------


def _claims(snapshot: dict[str, Any], passed: list[str]) -> dict[str, tuple[str, str]]:
    out = {}
    for gate in passed:
        claim = (snapshot["aux"]["claims"].get(gate) or {}).get("pass")
        if not (isinstance(claim, list) and len(claim) == 2
                and all(isinstance(part, str) for part in claim) and HEX.fullmatch(claim[1])):
            raise _No(f"{gate}: no claim")
        out[gate] = (claim[0], claim[1])
    return out


def _appended_record(batch: _Batch, commit: dict[str, Any], rid: str) -> dict[str, Any]:
    """The record with id ``rid`` that ``commit`` appended to the event shards, when it
    did nothing under ``events/`` but append (``snapshot._added_record``)."""
    parent = commit["parents"][0] if commit["parents"] else None
    old = None if parent is None else batch.entry(batch.commit(parent)["tree"], "events")
    new = batch.entry(commit["tree"], "events")
    if new is None or new[0] != "40000" or (old is not None and old[0] != "40000"):
        raise _No("no event shards")
    found = [line for _, line in batch.appended(None if old is None else old[1], new[1])
             if _line_id(line) == rid]
    if len(found) != 1:
        raise _No("the claimed event is not one line its commit added")
    try:
        raw = json.loads(found[0])
    except ValueError:
        raise _No("a corrupt line") from None
    if raw.__class__ is not dict or not RECORD_FIELDS <= raw.keys() \
            or raw["data"].__class__ is not dict or raw["kind"].__class__ is not str \
            or raw["id"] != rid:
        raise _No("a corrupt line")
    return raw


def _digest(path: Path) -> str | None:
    try:
        return sha256(path.read_bytes()).hexdigest()
    except FileNotFoundError:
        return None
    except OSError:
        raise _No(f"{path}: unreadable") from None


def definition_files(root: Path, paths: list[str]) -> dict[str, Any]:
    """What ``gate submit`` records in a pass's evidence (``lifecycle``): Meridian's
    version and the sha256 of each file the definition was loaded from (None: absent);
    it adds ``gates``, the graph those files give ([[gate, [needs...]], ...] in
    dependency order)."""
    from meridian import __version__

    return {"meridian": __version__, "files": {p: _digest(root / p) for p in sorted(set(paths))}}


def recheck(root: Path, gitdir: Path, common: Path, body: dict[str, Any],
            since: str | None = None) -> bool:
    """Whether every pass ``body``'s document shows holds now, as the full path would
    decide it (see the module's docstring); False: derive in full. ``since``: the tip
    ``body`` was caught up from (``state_catchup``: the commits after it append no
    state event, only counts), which the snapshot must be at."""
    try:
        _recheck(root, gitdir, common, body, since)
    except _No:
        return False
    except (KeyError, TypeError, ValueError, AttributeError, IndexError, OSError):
        return False
    return True


def _recheck(root: Path, gitdir: Path, common: Path, body: dict[str, Any],
             since: str | None) -> None:
    key, facts, document = body["key"], body["facts"], body["document"]
    if any(os.path.lexists(common / name) for name in ("shallow", "info/grafts")):
        raise _No("grafts")
    snapshot = _snapshot(common, facts["branch"], (key["tip"], since))
    # At the tip now: every field compared; at the tip the view was caught up from (a
    # full derivation has not moved it since): but the counts the catch-up moved on.
    passed = _check_folds(document, snapshot, counted=snapshot["tip"] != key["tip"])
    if not passed:
        raise _No("no pass to check")
    claims = _claims(snapshot, passed)
    defined = _Definition(root, facts)
    # ``gates.snapshot._below_floor``: a counted pass below its gate's threshold now makes
    # the full path fold from the root again.
    for gate, low in snapshot["aux"]["floors"].items():
        threshold = defined.threshold(gate) if gate in defined else None
        if threshold is not None and not (isinstance(low, int | float) and low >= threshold):
            raise _No(f"{gate}: a pass below the gate's threshold")
    listing = _Listing(root, gitdir, common)
    batch = _Batch(common)
    try:
        for gate, (rid, commit) in claims.items():
            if not _SAFE.fullmatch(gate):
                raise _No(f"{gate}: a name not asked for")
            if not batch.is_ancestor(commit, key["tip"]):
                raise _No(f"{gate}: its pass is not on the branch")
            _check_pass(root, facts, document, snapshot, gate, rid, commit, batch, listing,
                        defined)
    finally:
        batch.close()
    _check_graph(document, snapshot, defined.order(), passed)


class _Definition:
    """The config, gate graph and definitions now, read from the files: nothing about
    them is taken from the view or from the branch (a forged pass's evidence can record
    any definition, and a view any branch). Read first without pydantic
    (``gates.plain_definition``: the same YAML code, the models' rules mirrored, unsure
    of anything not plainly valid), else with the full path's own loaders
    (``config.load_config``, ``gates.graph.load_graph``, ``gates.definition``). A
    config or graph the full path refuses raises: derive in full (it prints the
    error)."""

    def __init__(self, root: Path, facts: dict[str, Any]) -> None:
        from meridian.gates.plain_definition import PlainDefinition, Unsure

        self.plain: PlainDefinition | None = None
        self.graph: Any = None
        try:
            self.plain = PlainDefinition(root)
            derived = self.plain.facts
        except Unsure:
            derived = self._full(root)
        # What status.run derives its facts from (the branch above all: a view naming
        # another branch would show that branch's passes).
        if derived != facts:
            raise _No("the view's facts are not what the config gives")

    def _full(self, root: Path) -> dict[str, Any]:
        from meridian.config import load_config
        from meridian.gates.graph import load_graph

        try:
            config = load_config(root)
            self.graph = load_graph(root, config)
        except Exception:  # noqa: BLE001 - ConfigError and the like: the full path says it
            raise _No("the config or the gate graph does not load") from None
        return {"branch": config.branch, "remote": config.remote,
                "gates_path": config.paths.gates, "rules_path": config.paths.rules,
                "features_path": config.paths.features}

    def __contains__(self, gate: object) -> bool:
        return gate in (self.plain.definitions if self.plain is not None
                        else self.graph.specs)

    def definition(self, gate: str) -> dict[str, Any]:
        if self.plain is not None:
            return self.plain.definition(gate)
        from meridian.gates.definition import definition

        result: dict[str, Any] = definition(self.graph, gate)
        return result

    def threshold(self, gate: str) -> float | None:
        """``evidence._current_threshold``."""
        threshold = self.definition(gate)["evaluator"]["threshold"]
        return float(threshold) if isinstance(threshold, int | float) else None

    def order(self) -> list[list[Any]]:
        if self.plain is not None:
            return self.plain.order()
        return [[spec.id, list(spec.needs)] for spec in self.graph.ordered()]


class _Listing:
    """The work tree's files, listed once (``plain_subject.worktree_files``)."""

    def __init__(self, root: Path, gitdir: Path, common: Path) -> None:
        self.where = (root, gitdir, common)
        self.files: list[str] | None = None

    def get(self) -> list[str]:
        from meridian.gates import plain_subject

        if self.files is None:
            self.files = plain_subject.worktree_files(*self.where)
            if self.files is None:
                raise _No("the work tree cannot be listed exactly here")
        return self.files


def _check_pass(root: Path, facts: dict[str, Any], document: dict[str, Any],
                snapshot: dict[str, Any], gate: str, rid: str, commit: str, batch: _Batch,
                listing: _Listing, defined: _Definition) -> None:
    """Raises ``_No`` unless ``gate``'s pass holds now."""
    from datetime import datetime

    from meridian.gates import pass_rule, plain_subject

    parse_ts = datetime.fromisoformat  # records.parse_ts, without its module (hashlib)

    fold = _fold(snapshot, gate)
    info = batch.commit(commit)
    if len(info["parents"]) > 1:
        raise _No(f"{commit}: a merge")
    record = _appended_record(batch, info, rid)
    data = record["data"]
    if record["kind"] != PASSED or data.get("gate") != gate:
        raise _No(f"{gate}: the claim is not its pass")
    # snapshot.vouch: the pass the fold counts; the status shows these from it too
    if any(data.get(key) != fold[key] for key in ("verdict", "subject", "spec_hash", "overall",
                                                  "threshold", "evaluator", "scope",
                                                  "identity")):
        raise _No(f"{gate}: the pass is not the fold's")
    if not isinstance(record["ts"], str):
        raise _No("a time that is not a string")
    try:
        stamped = parse_ts(record["ts"]).timestamp()
    except (ValueError, OverflowError, OSError):
        raise _No("a time that is not a timestamp") from None
    if stamped > info["time"] + SKEW_SECONDS:
        raise _No("stamped after its commit")
    verdict = data["verdict"]
    if not (isinstance(verdict, str) and verdict.startswith(f"verdicts/{gate}/")
            and _SAFE.fullmatch(verdict.removeprefix(f"verdicts/{gate}/"))
            and verdict.endswith(".json")):
        raise _No(f"{gate}: a verdict path not asked for")
    found = batch.entry(info["tree"], verdict)
    blob = None if found is None or found[0] != "100644" else batch.get(found[1])
    if blob is None or blob[0] != "blob":
        raise _No("its verdict is not on the branch")
    if info["parents"] and batch.entry(batch.commit(info["parents"][0])["tree"],
                                       verdict) is not None:
        raise _No("its verdict was written by an earlier commit")
    try:
        verdict_document = json.loads(blob[1])
    except ValueError:
        raise _No("its verdict is not JSON") from None
    if pass_rule.judge(verdict_document, data) != pass_rule.ACCEPT:
        raise _No("the plain rule does not accept its verdict")
    found = batch.entry(info["tree"], "evidence/" + verdict.removeprefix("verdicts/"))
    evidence_blob = None if found is None else batch.get(found[1])
    if evidence_blob is None or evidence_blob[0] != "blob":
        raise _No("no evidence")
    evidence = json.loads(evidence_blob[1])
    # The files a command evaluator runs (the recorded definition's ``programs``) are
    # definition files too; the definition hashed now below names them again.
    recorded = evidence.get("definition") if isinstance(evidence, dict) else None
    programs = recorded.get("programs") if isinstance(recorded, dict) else None
    paths = [CONFIG_FILE, facts["gates_path"], facts["features_path"],
             *(programs if isinstance(programs, dict) else ())]
    bound = evidence.get("definition_files")
    if not isinstance(bound, dict) or {k: v for k, v in bound.items() if k != "gates"} \
            != definition_files(root, paths):
        raise _No(f"{gate}: its definition files changed since the verdict (or not recorded)")
    # The definition now, from the files (``state._mark_stale``): another hash than the
    # verdict's is stale in the full path, whatever the evidence recorded.
    now = defined.definition(gate)
    spec_hash = data.get("spec_hash")
    if not isinstance(spec_hash, str) or sha256(
            canonical_json(now).encode("utf-8")).hexdigest() != spec_hash:
        raise _No(f"{gate}: its definition now is not the one it was decided under")
    if now["gate"]["approval"] is not None:
        raise _No(f"{gate}: an approval")
    patterns = now["gate"]["artifacts"]
    if not (isinstance(patterns, list) and all(isinstance(p, str) for p in patterns)):
        raise _No("artifact globs")
    current = plain_subject.subject(root, listing.get(), patterns)
    shown = next(g for g in document["gates"] if g["gate"] == gate)
    if current is None or current != fold["subject"] or shown.get("current_subject") != current \
            or shown.get("current_spec_hash") != spec_hash or shown.get("changed_files") \
            is not None or shown.get("changed_definition") is not None:
        raise _No(f"{gate}: its artifacts are not the ones judged")
