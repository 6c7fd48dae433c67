"""The gate graph's rules beyond field types, on plain values (ids and their needs).

Shared by the models' loader (``gates.graph.parse_graph``) and the plain reader
(``gates.plain_definition``), so both order gates, find cycles and judge a JUnit path
with the very same code. No pydantic here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import PurePosixPath


def junit_problem(path: str) -> str | None:
    """Why ``path`` cannot be where a gate's JUnit report is written, or None."""
    if path.startswith("/") or "\\" in path or ".." in path.split("/"):
        return "expected a '/'-separated path inside the repository, relative to its root"
    if PurePosixPath(path).as_posix() != path or path.endswith("/"):
        return f"write it as {PurePosixPath(path).as_posix()!r} (a file, no './' or '//')"
    return None


def find_cycle(needs: Mapping[str, Sequence[str]]) -> list[str] | None:
    """The first cycle found (declaration order), as a closed path [a, b, ..., a]."""
    done: set[str] = set()

    def visit(node: str, path: list[str]) -> list[str] | None:
        if node in path:
            return path[path.index(node):] + [node]
        if node in done:
            return None
        path.append(node)
        for need in needs[node]:
            found = visit(need, path)
            if found:
                return found
        path.pop()
        done.add(node)
        return None

    for gate_id in needs:
        found = visit(gate_id, [])
        if found:
            # Print it in the direction work flows (a gate, then what needs it),
            # starting from the gate declared first.
            nodes = list(reversed(found))[:-1]
            declared = list(needs)
            start = min(range(len(nodes)), key=lambda i: declared.index(nodes[i]))
            nodes = nodes[start:] + nodes[:start]
            return nodes + [nodes[0]]
    return None


def dependency_order(needs: Mapping[str, Sequence[str]]) -> list[str]:
    """Every gate after all of its needs; among ready gates, declaration order."""
    placed: list[str] = []
    remaining = list(needs)
    while remaining:
        ready = next(g for g in remaining if all(n in placed for n in needs[g]))
        placed.append(ready)
        remaining.remove(ready)
    return placed
