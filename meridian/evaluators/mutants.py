"""Mutants for the mutation smoke check: which changed functions, and their hollow twins.

``changed_functions(path, source, ranges)`` maps a change's line ranges (the new-side
ranges of ``meridian.evaluators.changes``) to the Python functions and methods they
touch through the AST: for each changed line, the innermost function holding it (a
lambda bound to a name, ``price = lambda amount: ...``, is a function too: its mutant's
body is an expression that raises). A
function is skipped when removing its body could not tell anything: abstract methods,
overloads, Protocol members, bodies that are already empty or only raise (the scan
judges those), and functions in test files (a test mutated to raise fails by itself).

``mutant(source, target)`` is the source with that function's body replaced by one
that raises, everything else byte for byte as it was: the signature, decorators and
docstring stay, a generator stays a generator (an unreachable ``yield`` after the
raise) and an ``async def`` stays a coroutine. The text is parsed again before it is
used, so a mutant that would not compile is an error, never a result.

Standard library only: nothing here imports Meridian's heavier modules.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

MUTANT_ERROR = "MeridianMutant"
EXEMPT_DECORATORS = frozenset({"abstractmethod", "abstractproperty", "abstractclassmethod",
                               "abstractstaticmethod", "overload"})
EXEMPT_BASES = frozenset({"Protocol"})  # an ABC's concrete methods are real code


@dataclass(frozen=True)
class Target:
    """A changed function: ``qualname`` (``Class.method``), its ``def`` line and span."""

    file: str
    qualname: str
    line: int  # the ``def`` line
    first: int  # first line, decorators included
    last: int
    body_line: int  # first statement after the docstring
    body_col: int
    end_line: int  # last statement's end
    end_col: int
    generator: bool
    is_async: bool
    expression: bool = False  # a lambda bound to a name: its body is an expression

    def where(self) -> str:
        return f"{self.file}:{self.line}"


_FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda
_DefNode = ast.FunctionDef | ast.AsyncFunctionDef  # a function with statements


def _name(node: ast.expr) -> str:
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Call):
        return _name(node.func)
    if isinstance(node, ast.Subscript):
        return _name(node.value)
    return ""


def _own_nodes(fn: _DefNode) -> Iterator[ast.AST]:
    """The nodes of ``fn``'s body, not descending into nested functions, classes, lambdas."""
    stack: list[ast.AST] = list(fn.body)
    while stack:
        node = stack.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef,
                                      ast.Lambda)):
                stack.append(child)


def _is_generator(fn: _DefNode) -> bool:
    return any(isinstance(n, (ast.Yield, ast.YieldFrom)) for n in _own_nodes(fn))


def _body(fn: _DefNode) -> list[ast.stmt]:
    """The statements after the docstring."""
    body = list(fn.body)
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        body = body[1:]
    return body


def _hollow(body: Sequence[ast.stmt]) -> bool:
    """Already nothing to remove: ``pass``, ``...``, a lone raise or a bare return."""
    if not body:
        return True
    if len(body) > 1:
        return False
    only = body[0]
    if isinstance(only, (ast.Pass, ast.Raise)):
        return True
    if isinstance(only, ast.Expr) and isinstance(only.value, ast.Constant):
        return True
    return isinstance(only, ast.Return) and (
        only.value is None or (isinstance(only.value, ast.Constant)
                               and only.value.value in (None, NotImplemented)))


def _functions(tree: ast.Module) -> Iterator[tuple[_FunctionNode, str, bool]]:
    """(node, qualname, exempt) for every function, outermost first."""

    def walk(nodes: Sequence[ast.stmt], prefix: str, exempt_scope: bool) -> Iterator[
            tuple[_FunctionNode, str, bool]]:
        for node in nodes:
            if isinstance(node, ast.ClassDef):
                protocol = exempt_scope or any(_name(b) in EXEMPT_BASES for b in node.bases)
                yield from walk(node.body, f"{prefix}{node.name}.", protocol)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                decorated = any(_name(d) in EXEMPT_DECORATORS for d in node.decorator_list)
                yield node, prefix + node.name, exempt_scope or decorated
                yield from walk(node.body, f"{prefix}{node.name}.<locals>.", False)
            elif isinstance(node, (ast.Assign, ast.AnnAssign)) and isinstance(
                    node.value, ast.Lambda):
                # `price = lambda amount: ...`: a function by another spelling.
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                if len(targets) == 1 and isinstance(targets[0], ast.Name):
                    yield node.value, prefix + targets[0].id, exempt_scope
            else:
                # Functions defined under if/try/with at module or class level.
                for field in ("body", "orelse", "finalbody", "handlers"):
                    children = getattr(node, field, None)
                    if isinstance(children, list):
                        stmts = [c for c in children if isinstance(c, ast.stmt)]
                        handlers = [c for c in children if isinstance(c, ast.ExceptHandler)]
                        yield from walk(stmts, prefix, exempt_scope)
                        for handler in handlers:
                            yield from walk(handler.body, prefix, exempt_scope)

    yield from walk(tree.body, "", False)


def _decorators(node: _FunctionNode) -> list[ast.expr]:
    return [] if isinstance(node, ast.Lambda) else node.decorator_list


def _touches(ranges: Sequence[tuple[int, int]], first: int, last: int) -> bool:
    return any(start <= last and first <= end for start, end in ranges)


def changed_functions(path: str, source: str,
                      ranges: Sequence[tuple[int, int]] | None) -> list[Target]:
    """The functions of ``source`` that ``ranges`` touch (None: the whole file is new),
    the innermost one for each changed line, in line order. A file that does not parse
    has none (the scan reports its syntax error)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    lines = source.splitlines()
    every = list(_functions(tree))
    wanted: dict[int, tuple[_FunctionNode, str, bool]] = {}
    spans = []
    for node, qualname, exempt in every:
        first = min([node.lineno, *(d.lineno for d in _decorators(node))])
        spans.append((first, node.end_lineno or node.lineno, node, qualname, exempt))
    changed = [(1, len(lines) or 1)] if ranges is None else list(ranges)
    for start, end in changed:
        for number in range(start, end + 1):
            holding = [s for s in spans if s[0] <= number <= s[1]]
            if not holding:
                continue
            _, _, node, qualname, exempt = max(holding, key=lambda s: s[0])
            wanted.setdefault(id(node), (node, qualname, exempt))
    candidates = [(node, qualname) for node, qualname, exempt in wanted.values()
                  if not exempt and (isinstance(node, ast.Lambda) or not _hollow(_body(node)))]
    names = {qualname for _, qualname in candidates}
    targets = []
    for node, qualname in candidates:
        if "<locals>" in qualname and qualname.rsplit(".<locals>.", 1)[0] in names:
            continue  # its enclosing function is mutated whole, this one with it
        if isinstance(node, ast.Lambda):
            if isinstance(node.body, ast.Constant) and node.body.value is None:
                continue  # `lambda: None`: nothing to remove
            targets.append(Target(
                file=path, qualname=qualname, line=node.lineno, first=node.lineno,
                last=node.end_lineno or node.lineno, body_line=node.body.lineno,
                body_col=node.body.col_offset, end_line=node.body.end_lineno or node.lineno,
                end_col=node.body.end_col_offset or 0, generator=False, is_async=False,
                expression=True))
            continue
        body = _body(node)
        first_stmt, last_stmt = body[0], body[-1]
        targets.append(Target(
            file=path, qualname=qualname, line=node.lineno,
            first=min([node.lineno, *(d.lineno for d in node.decorator_list)]),
            last=node.end_lineno or node.lineno,
            body_line=first_stmt.lineno, body_col=first_stmt.col_offset,
            end_line=last_stmt.end_lineno or last_stmt.lineno,
            end_col=last_stmt.end_col_offset or 0,
            generator=_is_generator(node), is_async=isinstance(node, ast.AsyncFunctionDef)))
    return sorted(targets, key=lambda t: t.line)


def _char_offset(line: str, col: int) -> int:
    """ast columns are UTF-8 byte offsets; the index of that byte in the str."""
    return len(line.encode("utf-8")[:col].decode("utf-8", "replace"))


def _raise_statement(target: Target) -> str:
    message = f"meridian mutation smoke check: the body of {target.qualname} was removed"
    return f"raise RuntimeError({message!r})"


def neutral(source: str, target: Target) -> str | None:
    """The control: ``source`` with the same raise as ``target``'s mutant put before
    its body under a condition that never holds, the body kept; what the code does is
    unchanged, the file is not. None when the body shares the ``def``'s line."""
    lines = source.splitlines(keepends=True)
    start = lines[target.body_line - 1]
    head = start[:_char_offset(start, target.body_col)]
    if head.strip() or target.expression:
        return None
    guard = f"{head}if __name__ is None: {_raise_statement(target)}\n"
    text = "".join(lines[:target.body_line - 1]) + guard + "".join(lines[target.body_line - 1:])
    try:
        ast.parse(text)
    except SyntaxError:
        return None
    return text


def mutant(source: str, target: Target) -> str:
    """``source`` with ``target``'s body replaced by one that raises (ValueError when the
    result would not compile: the caller records an error, never a result)."""
    lines = source.splitlines(keepends=True)
    start = lines[target.body_line - 1]
    end = lines[target.end_line - 1]
    head = start[:_char_offset(start, target.body_col)]
    tail = end[_char_offset(end, target.end_col):]
    raise_stmt = _raise_statement(target)
    if target.expression:  # a lambda's body: an expression that raises
        message = f"meridian mutation smoke check: the body of {target.qualname} was removed"
        body = f"(_ for _ in ()).throw(RuntimeError({message!r}))"
    elif head.strip():  # `def f(): return 1`: the body shares the def's line
        body = raise_stmt + ("; yield" if target.generator else "")
    else:
        indent = head
        body = raise_stmt + (f"\n{indent}yield  # keeps it a generator"
                             if target.generator else "")
    text = "".join(lines[:target.body_line - 1]) + head + body + tail + "".join(
        lines[target.end_line:])
    try:
        ast.parse(text)
    except SyntaxError as exc:
        raise ValueError(f"the mutant of {target.qualname} does not compile: {exc.msg} "
                         f"(line {exc.lineno})") from None
    return text
