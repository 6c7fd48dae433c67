"""``meridian log``: events on the state branch, newest first."""

from __future__ import annotations

import argparse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--kind", action="append", metavar="KIND",
                        help="only events of this kind; a prefix like 'gate' matches gate.*"
                        " (repeatable)")
    parser.add_argument("--gate", metavar="GATE", help="only events about this gate")
    parser.add_argument("--since", metavar="DATE",
                        help="only events at or after DATE (YYYY-MM-DD or ISO 8601, UTC)")
    parser.add_argument("-n", type=int, metavar="N", dest="limit", help="at most N events")
    parser.add_argument("--json", action="store_true", help="one JSON record per line")


def parse_since(value: str) -> str:
    """A UTC timestamp string comparable with record ``ts`` values."""
    from datetime import UTC, datetime

    from meridian.errors import MeridianError

    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        raise MeridianError(f"--since: expected a date like 2026-11-30 or an ISO 8601 time, "
                            f"got {value!r}") from None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def matches_kind(kind: str, wanted: list[str]) -> bool:
    return any(kind == w or kind.startswith(w.rstrip(".") + ".") for w in wanted)


def _check_kinds(ledger: object, wanted: list[str]) -> None:
    """An unknown --kind is an error listing the kinds (a typo would print nothing)."""
    from meridian import records
    from meridian.errors import MeridianError

    known = set(records.registered_kinds()) | set(records.KINDS_WITHOUT_MODEL)
    unknown = [w for w in wanted if not any(matches_kind(k, [w]) for k in known)]
    if unknown:  # a kind without a data model counts once it is on the branch
        known |= {record.kind for record in ledger.records()}  # type: ignore[attr-defined]
        unknown = [w for w in unknown if not any(matches_kind(k, [w]) for k in known)]
    if unknown:
        raise MeridianError(
            f"--kind {unknown[0]}: no such event kind (kinds: {', '.join(sorted(known))}; "
            "a prefix like 'gate' matches every gate.* kind)")


def run(args: argparse.Namespace) -> int:
    import sys

    from meridian.errors import MeridianError
    from meridian.ledger import Ledger

    if args.limit is not None and args.limit < 0:
        raise MeridianError("-n: expected a number >= 0")
    ledger = Ledger.open(".")
    if not ledger.exists():
        raise MeridianError(f"no state branch {ledger.branch}: run `meridian init` first")
    since = parse_since(args.since) if args.since else None
    if args.kind:
        _check_kinds(ledger, args.kind)

    def selected():  # type: ignore[no-untyped-def]
        count = 0
        for record in ledger.records(newest_first=True):
            if args.limit is not None and count >= args.limit:
                return
            if since and record.ts < since:
                continue
            if args.kind and not matches_kind(record.kind, args.kind):
                continue
            if args.gate and record.data.get("gate") != args.gate:
                continue
            count += 1
            yield record

    if args.json:
        out = sys.stdout
        for record in selected():
            out.write(record.line() + "\n")
        return 0

    from rich.markup import escape
    from rich.table import Table

    from meridian.console import make_console

    table = Table(box=None, pad_edge=False)
    for column in ("time (UTC)", "kind", "gate", "writer", "detail"):
        table.add_column(column, overflow="fold")
    rows = 0
    for record in selected():
        rows += 1
        detail = _detail(record.data)
        cells = (record.ts[:19].replace("T", " "), record.kind, record.gate or "",
                 record.writer.split(" <")[0], detail)
        table.add_row(*(escape(str(cell)) for cell in cells))
    if rows == 0:
        print("no events match")
        return 0
    make_console().print(table)
    return 0


def _detail(data: dict) -> str:  # type: ignore[type-arg]
    parts = []
    for key in ("reason", "overall", "source", "evaluator", "run_id", "name", "branch"):
        if key in data:
            parts.append(f"{key}={data[key]}")
    return " ".join(parts)
