"""Python findings for the heuristic evaluator, through ``ast`` and ``tokenize``.

Reports stub code, tests that cannot fail, skipped tests and unfinished-work markers,
each at the 1-based line a reader would jump to. Comments are found with ``tokenize``
(so a ``#`` inside a string is not a comment); structure with ``ast``.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from dataclasses import dataclass, field, replace

from meridian.evaluators.findings import Finding, Severity

MARKER = re.compile(r"\b(TODO|FIXME|XXX|TBD)\b")
ADMISSION = re.compile(r"\b(not\s+(?:yet\s+)?implemented|unimplemented|placeholder)\b", re.IGNORECASE)
COMMENTED_TEST = re.compile(r"^#+\s*(?:async\s+)?def\s+test_\w*")
# Callee names that make a test able to fail: assert helpers, expected-exception checks.
ASSERT_HELPER = re.compile(r"^_*(assert|check|verify|expect|ensure|require|must|should)",
                           re.IGNORECASE)
FAILING_CALLS = frozenset({"raises", "warns", "deprecated_call", "fail", "assertRaises"})
SKIP_MARKS = frozenset({"skip", "skipif", "xfail"})
UNITTEST_SKIPS = frozenset({"skip", "skipIf", "skipUnless", "expectedFailure"})
SKIP_CALLS = frozenset({"pytest.skip", "pytest.xfail", "self.skipTest"})
EXEMPT_DECORATORS = frozenset({"abstractmethod", "abstractproperty", "abstractclassmethod",
                               "abstractstaticmethod", "overload"})


def _dotted(node: ast.AST) -> str:
    """``pytest.mark.skip(...)`` -> ``pytest.mark.skip``; '' for anything not a name chain."""
    if isinstance(node, ast.Call):
        node = node.func
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return ""


def _is_placeholder_value(node: ast.expr | None) -> bool:
    if node is None:
        return True
    if isinstance(node, ast.Constant):
        # 0 == False == 0.0, so this also covers `return False` and `return 0.0`.
        return node.value is None or node.value == 0 or node.value in ("", b"")
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)) and not node.elts:
        return True
    if isinstance(node, ast.Dict) and not node.keys:
        return True
    if isinstance(node, ast.Call) and not node.args and not node.keywords:
        return _dotted(node.func) in {"list", "dict", "set", "tuple", "str"}
    return False


def _empty_body_kind(body: list[ast.stmt]) -> str | None:
    """How a body that does nothing is spelled (`pass`, `...`, a docstring), else None."""
    kinds: list[str] = []
    for stmt in body:
        if isinstance(stmt, ast.Pass):
            kinds.append("`pass`")
        elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) \
                and stmt.value.value is Ellipsis:
            kinds.append("`...`")
        elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) \
                and isinstance(stmt.value.value, str):
            kinds.append("a docstring")
        else:
            return None
    return " and ".join(dict.fromkeys(kinds))


def _admits_unfinished(node: ast.expr | None) -> bool:
    """A literal string (or the first argument of an exception) saying "not implemented"
    or holding a TODO/FIXME marker (``raise RuntimeError("TODO")``)."""
    if isinstance(node, ast.Call) and node.args:
        node = node.args[0]
    if isinstance(node, ast.JoinedStr):
        text = "".join(v.value for v in node.values if isinstance(v, ast.Constant)
                       and isinstance(v.value, str))
    elif isinstance(node, ast.Constant) and isinstance(node.value, str):
        text = node.value
    else:
        return False
    return bool(ADMISSION.search(text) or MARKER.search(text))


_NO_VALUE = object()
_HOLDS_WHEN_EQUAL = (ast.Eq, ast.Is, ast.LtE, ast.GtE)
_HOLDS_WHEN_DIFFERENT = (ast.NotEq, ast.IsNot)


def _literal(node: ast.expr) -> object:
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return _NO_VALUE


def _always_holds(node: ast.expr) -> bool:
    """``True``, ``"ok"``, ``1 == 1``: literals only, and true whatever the code does."""
    if isinstance(node, ast.Compare) and len(node.ops) == 1:
        left, right = _literal(node.left), _literal(node.comparators[0])
        if left is _NO_VALUE or right is _NO_VALUE:
            return False
        if isinstance(node.ops[0], _HOLDS_WHEN_EQUAL):
            return bool(left == right)
        return isinstance(node.ops[0], _HOLDS_WHEN_DIFFERENT) and bool(left != right)
    value = _literal(node)
    return value is not _NO_VALUE and bool(value)


def _trivial_assert_call(node: ast.Call) -> bool:
    """``self.assertTrue(True)`` and ``self.assertEqual(1, 1)``: `assert True` as a method."""
    name = _dotted(node.func).split(".")[-1]
    if name in ("assertTrue", "assert_") and node.args:
        return _always_holds(node.args[0])
    if name in ("assertEqual", "assertEquals", "assertIs") and len(node.args) >= 2:
        left, right = _literal(node.args[0]), _literal(node.args[1])
        return left is not _NO_VALUE and left == right
    return False


@dataclass
class _Function:
    node: ast.FunctionDef | ast.AsyncFunctionDef
    exempt: bool  # abstract, overload or a Protocol member: an empty body is the point
    marker_start: int  # first line that counts as "this function's" (comments just above)
    stub_findings: list[int] = field(default_factory=list)  # indexes into the issue list

    @property
    def start(self) -> int:
        return self.node.lineno

    @property
    def end(self) -> int:
        return self.node.end_lineno or self.node.lineno


class _Scanner:
    def __init__(self, path: str, source: str, *, is_test_file: bool) -> None:
        self.path = path
        self.source = source
        self.lines = source.splitlines()
        self.is_test_file = is_test_file
        self.is_stub_file = path.endswith(".pyi")
        self.issues: list[Finding] = []
        self.functions: list[_Function] = []

    # -- helpers ---------------------------------------------------------------------

    def add(self, check: str, severity: Severity, line: int, message: str) -> int:
        self.issues.append(Finding(severity=severity, file=self.path, line=line,
                                   message=message, check=check))
        return len(self.issues) - 1

    def innermost(self, line: int, *, use_marker_range: bool = False) -> _Function | None:
        best: _Function | None = None
        for fn in self.functions:
            start = fn.marker_start if use_marker_range else fn.start
            if start <= line <= fn.end and (best is None or fn.start > best.start):
                best = fn
        return best

    def comments(self) -> list[tuple[int, str]]:
        found: list[tuple[int, str]] = []
        try:
            for tok in tokenize.generate_tokens(io.StringIO(self.source).readline):
                if tok.type == tokenize.COMMENT:
                    found.append((tok.start[0], tok.string))
        except (tokenize.TokenError, IndentationError, SyntaxError):
            # A truncated or broken file: fall back to lines whose first token is a comment.
            found = [(n, line.strip()) for n, line in enumerate(self.lines, 1)
                     if line.lstrip().startswith("#")]
        return found

    def _marker_start(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
        """The def (or first decorator) line, extended up over a comment block right above."""
        first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
        while first > 1 and self.lines[first - 2].lstrip().startswith("#"):
            first -= 1
        return first

    # -- passes ----------------------------------------------------------------------

    def collect_functions(self, tree: ast.Module) -> None:
        def visit(node: ast.AST, in_protocol: bool) -> None:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.ClassDef):
                    bases = {_dotted(b.value if isinstance(b, ast.Subscript) else b)
                             for b in child.bases}
                    protocol = any(b.split(".")[-1] == "Protocol" for b in bases)
                    visit(child, protocol)
                elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    decorators = {_dotted(d).split(".")[-1] for d in child.decorator_list}
                    exempt = in_protocol or bool(decorators & EXEMPT_DECORATORS)
                    self.functions.append(_Function(child, exempt, self._marker_start(child)))
                    visit(child, False)
                else:
                    visit(child, in_protocol)

        visit(tree, False)

    def stubs(self, tree: ast.Module, comment_lines: list[tuple[int, str]]) -> None:
        marked_lines = [n for n, text in comment_lines if MARKER.search(text)]
        for fn in self.functions:
            name = fn.node.name
            if fn.exempt or self.is_stub_file or self._is_test(fn):
                continue
            body = _empty_body_kind(fn.node.body)
            if body is not None:
                fn.stub_findings.append(self.add(
                    "stub_code", "high", fn.start,
                    f"function `{name}` is a stub: its body is only {body}"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Raise) and node.exc is not None:
                owner = self.innermost(node.lineno)
                if owner is not None and (owner.exempt or self._is_test(owner)):
                    continue
                where = f"`{owner.node.name}`" if owner else "code outside any function"
                # `raise NotImplemented` (the constant, a common slip) is a stub too.
                if _dotted(node.exc) in ("NotImplementedError", "builtins.NotImplementedError",
                                         "NotImplemented"):
                    index = self.add("stub_code", "high", node.lineno,
                                     f"{where} raises NotImplementedError: not implemented")
                elif _admits_unfinished(node.exc):
                    index = self.add("stub_code", "high", node.lineno,
                                     f"{where} raises an error saying it is not implemented")
                else:
                    continue
                if owner is not None:
                    owner.stub_findings.append(index)
            elif isinstance(node, ast.Return):
                owner = self.innermost(node.lineno)
                if owner is None or owner.exempt:
                    continue
                if _admits_unfinished(node.value):
                    owner.stub_findings.append(self.add(
                        "stub_code", "high", node.lineno,
                        f"`{owner.node.name}` returns a placeholder string"))
                elif _is_placeholder_value(node.value) and self._marked_placeholder(
                        owner, node, marked_lines):
                    shown = ast.unparse(node)
                    owner.stub_findings.append(self.add(
                        "stub_code", "high", node.lineno,
                        f"`{owner.node.name}` has a placeholder `{shown}` next to a TODO/FIXME "
                        "marker"))

    @staticmethod
    def _marked_placeholder(owner: _Function, node: ast.Return, marked_lines: list[int]) -> bool:
        """A placeholder return that a TODO marker is about: the marker is on its line or
        the line above, or the function does nothing but return it (marker anywhere in
        the function or the comments just above it). A guard clause's `return None` in a
        real function that also carries a TODO elsewhere is not a stub."""
        if any(node.lineno - 1 <= n <= (node.end_lineno or node.lineno) for n in marked_lines):
            return True
        body = [stmt for stmt in owner.node.body
                if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)
                        and isinstance(stmt.value.value, str))]
        return body == [node] and any(owner.marker_start <= n <= owner.end for n in marked_lines)

    def markers(self, comment_lines: list[tuple[int, str]]) -> None:
        finding_lines = {i.line for i in self.issues if i.check == "stub_code"}
        for line, text in comment_lines:
            marker = MARKER.search(text)
            admission = ADMISSION.search(text)
            if marker is None and admission is None:
                continue
            if line in finding_lines:
                continue  # the marked return on this line is one finding, already reported
            fn = self.innermost(line, use_marker_range=True)
            if fn is not None and fn.stub_findings:
                # A marker inside an unfinished function is part of that stub's story.
                first = self.issues[fn.stub_findings[0]]
                self.issues[fn.stub_findings[0]] = replace(
                    first, message=f"{first.message} (marked at line {line}: {text.strip()[:80]})")
                continue
            if marker is not None:
                self.add("stub_code", "low", line,
                         f"{marker.group(1)} marker left in a comment: {text.strip()[:120]}")
            else:
                self.add("stub_code", "medium", line,
                         f"comment admits unfinished work: {text.strip()[:120]}")

    def _is_test(self, fn: _Function) -> bool:
        """A function pytest or unittest would run as a test (a fixture is not one)."""
        decorators = {_dotted(d).split(".")[-1] for d in fn.node.decorator_list}
        return self.is_test_file and fn.node.name.startswith("test_") \
            and "fixture" not in decorators

    def hollow_tests(self) -> None:
        for fn in self.functions:
            if not self._is_test(fn) or fn.exempt:
                continue
            if _can_fail(fn.node):
                continue
            if any(isinstance(node, ast.Assert)
                   or (isinstance(node, ast.Call) and _trivial_assert_call(node))
                   for node in ast.walk(fn.node)):
                why = "its only assertions always hold (e.g. `assert True`, `assert 1 == 1`)"
            else:
                why = "no assert, no expected-exception check, no assert helper"
            self.add("hollow_test", "high", fn.start, f"test `{fn.node.name}` cannot fail: {why}")

    def skipped_tests(self, tree: ast.Module, comment_lines: list[tuple[int, str]]) -> None:
        seen: set[int] = set()

        def flag(line: int, message: str) -> None:
            if line not in seen:
                seen.add(line)
                self.add("skipped_test", "medium", line, message)

        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute):
                dotted = _dotted(node)
                parts = dotted.split(".")
                if len(parts) >= 2 and parts[-2] == "mark" and parts[-1] in SKIP_MARKS:
                    flag(node.lineno, f"test skipped or expected to fail: `{dotted}`")
                elif dotted in {f"unittest.{name}" for name in UNITTEST_SKIPS}:
                    flag(node.lineno, f"test skipped: `{dotted}`")
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) \
                    and self.is_test_file:
                for decorator in node.decorator_list:
                    if _dotted(decorator) in UNITTEST_SKIPS:
                        flag(decorator.lineno, f"test skipped: `@{_dotted(decorator)}`")
            if isinstance(node, ast.Call) and _dotted(node.func) in SKIP_CALLS:
                flag(node.lineno, f"test skips itself: `{_dotted(node.func)}(...)`")
        for line, text in comment_lines:
            if COMMENTED_TEST.match(text.strip()):
                flag(line, f"commented-out test: {text.strip()[:120]}")


def _reachable(body: list[ast.stmt]) -> list[ast.stmt]:
    """The statements before the first top-level `return`: `return` then asserts is a
    test switched off, not a test."""
    for index, stmt in enumerate(body):
        if isinstance(stmt, ast.Return):
            return body[:index + 1]
    return body


def _can_fail(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    for node in (n for stmt in _reachable(fn.body) for n in ast.walk(stmt)):
        if isinstance(node, ast.Assert):
            if not _always_holds(node.test):
                return True
        elif isinstance(node, ast.Raise) and node.exc is not None:
            if _dotted(node.exc) != "NotImplementedError":
                return True
        elif isinstance(node, ast.Call):
            name = _dotted(node.func).split(".")[-1]
            if name in FAILING_CALLS or (ASSERT_HELPER.match(name)
                                         and not _trivial_assert_call(node)):
                return True
    return False


def scan_python(path: str, source: str, *, is_test_file: bool, truncated: bool = False
                ) -> list[Finding]:
    scanner = _Scanner(path, source, is_test_file=is_test_file)
    comment_lines = scanner.comments()
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError) as err:
        if not truncated:
            line = max(getattr(err, "lineno", None) or 1, 1)
            reason = getattr(err, "msg", str(err))
            # High: a file ast cannot read hides its stubs and hollow tests from every
            # other check, so it must not pass on the strength of what was not seen.
            scanner.add("syntax_error", "high", line, f"file does not parse as Python: {reason}")
        scanner.markers(comment_lines)
        for line, text in comment_lines:
            if COMMENTED_TEST.match(text.strip()):
                scanner.add("skipped_test", "medium", line,
                            f"commented-out test: {text.strip()[:120]}")
        return scanner.issues
    scanner.collect_functions(tree)
    scanner.stubs(tree, comment_lines)
    scanner.markers(comment_lines)
    scanner.hollow_tests()
    scanner.skipped_tests(tree, comment_lines)
    return scanner.issues
