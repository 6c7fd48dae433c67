"""``meridian memory``: add, list, export and verify schema-validated memory."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from datetime import datetime

    from meridian.ledger import Ledger

KIND_HELP = "semantic, episodic or corrections (singular or plural)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    verbs = parser.add_subparsers(dest="verb", required=True, metavar="VERB")

    add = verbs.add_parser(
        "add", help="validate one record and append it",
        description="Validate one record (a JSON object) against the kind's schema and append "
                    "it. Identical records are stored once; a known semantic pattern gets its "
                    "validation count raised instead. A correction without actual_hours amends "
                    "the latest correction of its gate.")
    add.add_argument("kind", metavar="KIND", help=KIND_HELP)
    source = add.add_mutually_exclusive_group()
    source.add_argument("--json", dest="json_text", metavar="JSON", help="the record as JSON")
    source.add_argument("--file", metavar="FILE", help="read the record from FILE ('-': stdin)")
    add.add_argument("--session", metavar="ID", help="session id to store when the record has none")

    listing = verbs.add_parser("list", help="stored records of one kind, oldest first")
    listing.add_argument("kind", metavar="KIND", help=KIND_HELP)
    listing.add_argument("--gate", metavar="GATE", help="only records about GATE")
    listing.add_argument("--since", metavar="DATE",
                         help="only records written at or after DATE (YYYY-MM-DD or ISO 8601, UTC)")
    listing.add_argument("--json", action="store_true", help="one JSON record per line")

    export = verbs.add_parser("export", help="stream the stored JSONL of one kind to stdout")
    export.add_argument("kind", metavar="KIND", help=KIND_HELP)

    check = verbs.add_parser(
        "verify", help="check every stored line against its schema",
        description="Check every stored memory line (of one kind, or of all three) against its "
                    "JSON Schema and the cross-line rules; exit 1 when any line is bad.")
    check.add_argument("kind", metavar="KIND", nargs="?",
                       help=KIND_HELP + "; default: all three")
    check.add_argument("--json", action="store_true", help="print the report as JSON")


def run(args: argparse.Namespace) -> int:
    from meridian.ledger import Ledger

    ledger = Ledger.open(".")
    if args.verb == "verify":
        return _verify(ledger, args)
    kind = _kind(args.kind)
    if args.verb == "add":
        return _add(ledger, kind, args)
    _require_branch(ledger)
    if args.verb == "export":
        return _export(ledger, kind)
    return _list(ledger, kind, args)


def _kind(name: str) -> Any:
    from meridian.errors import MeridianError
    from meridian.memory.kinds import UnknownKind, memory_kind

    try:
        return memory_kind(name)
    except UnknownKind as exc:
        raise MeridianError(str(exc)) from None


def _require_branch(ledger: Ledger) -> None:
    from meridian.errors import MeridianError

    if not ledger.exists():
        raise MeridianError(f"no state branch {ledger.branch}: run `meridian init` first")


def _read_input(args: argparse.Namespace) -> Any:
    import json
    import sys

    from meridian.errors import MeridianError

    if args.json_text is not None:
        text, origin = args.json_text, "--json"
    elif args.file not in (None, "-"):
        try:
            with open(args.file, encoding="utf-8") as handle:
                text = handle.read()
        except OSError as exc:
            raise MeridianError(f"{args.file}: cannot read: {exc.strerror or exc}") from None
        origin = args.file
    else:
        if args.file is None and sys.stdin.isatty():
            raise MeridianError("memory add: give the record with --json '{...}', --file FILE, "
                                "or pipe it on stdin")
        text, origin = sys.stdin.read(), "stdin"
    if not text.strip():
        raise MeridianError(f"{origin}: empty; expected one record as a JSON object")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise MeridianError(f"{origin}: not valid JSON: {exc.msg} "
                            f"(line {exc.lineno} column {exc.colno})") from None


def _add(ledger: Ledger, kind: Any, args: argparse.Namespace) -> int:
    from meridian.memory import store

    _require_branch(ledger)
    data = _read_input(args)
    added = store.add(ledger, kind, data, session=args.session)
    print(added.describe())
    return 0


def _since(value: str | None) -> datetime | None:
    if value is None:
        return None
    from datetime import UTC, datetime

    from meridian.errors import MeridianError

    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        raise MeridianError(f"--since: expected a date like 2026-11-30 or an ISO 8601 time, "
                            f"got {value!r}") from None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _list(ledger: Ledger, kind: Any, args: argparse.Namespace) -> int:
    import json
    import sys

    from meridian.memory import store

    since = _since(args.since)
    counts = store.validation_counts(ledger) if kind.label == "semantic" else None
    selected = store.iter_records(ledger, kind, gate=args.gate, since=since)
    if args.json:
        for record in selected:
            row: dict[str, Any] = {"id": record.id, "ts": record.ts, "kind": record.kind,
                                   "writer": record.writer, "data": record.data}
            if counts is not None:
                row["validations"] = counts[record.id]
            sys.stdout.write(json.dumps(row, ensure_ascii=False) + "\n")
        return 0

    from rich.table import Table

    from meridian.console import make_console

    columns = {
        "semantic": ("id", "validations", "confidence", "text", "context", "gates"),
        "episodic": ("time (UTC)", "session", "event", "gate", "outcome", "notes"),
        "corrections": ("date", "id", "gate", "predicted", "actual", "ratio",
                        "root cause", "next action", "amends"),
    }[kind.label]
    table = Table(box=None, pad_edge=False)
    # Short fixed-width columns never wrap ("2026-11-3" / "0"); the prose ones fold.
    prose = {"text", "context", "gates", "outcome", "notes", "root cause", "next action"}
    for column in columns:
        table.add_column(column, overflow="fold", no_wrap=column not in prose)
    rows = 0
    for record in selected:
        rows += 1
        table.add_row(*_cells(kind.label, record, counts))
    if rows == 0:
        print(f"no {kind.label} memory" + (" matches" if args.gate or args.since else " yet"))
        return 0
    make_console().print(table)
    return 0


def _cells(label: str, record: Any, counts: Any) -> list[str]:
    data = record.data

    def text(key: str) -> str:
        value = data.get(key)
        return "-" if value is None else str(value)

    when = record.ts[:10]
    if label == "semantic":
        return [record.id[:12], str(counts[record.id]), text("confidence"), text("text"),
                text("context"), ", ".join(data.get("source_gates") or []) or "-"]
    if label == "episodic":
        return [data.get("at", record.ts)[:19].replace("T", " "), text("session"),
                text("event"), text("gate"), text("outcome"), text("notes")]
    amends = data.get("amends")
    from meridian.durations import human_hours

    return [when, record.id[:8], text("gate"), human_hours(data.get("predicted_hours")),
            human_hours(data.get("actual_hours")),
            text("ratio"), text("root_cause"), text("next_action"),
            amends[:8] if amends else "-"]


def _export(ledger: Ledger, kind: Any) -> int:
    import sys

    from meridian.memory import store

    # Bytes exactly as stored: a hand-corrupted line (even invalid UTF-8) is passed
    # through for inspection rather than crashing the export; `memory verify` reports it.
    sys.stdout.flush()
    out = sys.stdout.buffer
    for line in store.export_lines(ledger, kind):
        out.write(line + b"\n")
    out.flush()
    return 0


def _verify(ledger: Ledger, args: argparse.Namespace) -> int:
    import json

    from meridian.memory.verify import check_memory

    kind = _kind(args.kind) if args.kind else None
    problems = check_memory(ledger, kind)
    if args.json:
        print(json.dumps({"ok": not problems, "branch": ledger.branch, "problems": problems},
                         indent=2))
    else:
        for problem in problems:
            print(problem)
        if problems:
            print(f"memory on {ledger.branch}: CORRUPT ({len(problems)} bad line(s))")
        else:
            state = "intact" if ledger.exists() else "empty (no state branch yet)"
            print(f"memory on {ledger.branch}: {state}")
    return 1 if problems else 0
