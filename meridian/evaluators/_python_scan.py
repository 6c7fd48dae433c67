"""Python findings for the heuristic evaluator, through ``ast`` and ``tokenize``.

Reports stub code, tests that cannot fail, tests switched off, swallowed errors and
unfinished-work markers, each at the 1-based line a reader would jump to, with the
span it is about (``end_line``) and the function holding it (``scope_line``). Comments
are found with ``tokenize`` (a ``#`` inside a string is not a comment); structure with
``ast``. Text inside string literals is data, never an admission: only comments, the
message of a raised error and a function that returns nothing but an admission are read.
The rules and their reasons are documented in docs/gates.md ("Offline evaluator rules").
"""

from __future__ import annotations

import ast
import io
import re
import sys
import tokenize
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace

from meridian.evaluators.findings import Finding, Severity

MARKER = re.compile(r"\b(TODO|FIXME|XXX|TBD)\b")
ADMISSION = re.compile(r"\b(not\s+(?:yet\s+)?implemented|unimplemented|placeholder)\b", re.IGNORECASE)
# A returned string that is nothing but an admission ("not implemented yet", "TODO:
# implement"); "TODO" alone is data (a to-do app's status), so is a sentence using a word.
PURE_ADMISSION = re.compile(
    r"^\W*(?:not\s+(?:yet\s+)?implemented|unimplemented|(?:todo|fixme)\b[\s:,-]*implement\w*"
    r"|implement\s+me)\b[\w\s.!:-]{0,40}$", re.IGNORECASE)
COMMENTED_TEST = re.compile(r"^#+\s*(?:async\s+)?def\s+test_\w*")
# Callee names that make a test able to fail: assert helpers, expected-exception checks.
ASSERT_HELPER = re.compile(r"^_*(assert|check|verify|expect|ensure|require|must|should|validate)",
                           re.IGNORECASE)
FAILING_CALLS = frozenset({"raises", "warns", "deprecated_call", "fail", "assertRaises",
                           "assertRaisesRegex", "assertWarns", "assertWarnsRegex", "assertLogs"})
SKIP_CALLS = frozenset({"pytest.skip", "pytest.xfail", "self.skipTest", "unittest.skip"})
EXEMPT_DECORATORS = frozenset({"abstractmethod", "abstractproperty", "abstractclassmethod",
                               "abstractstaticmethod", "overload"})
# Names that say "this does nothing on purpose".
NOOP_NAME = re.compile(r"(?:^|_)(?:noop|no_op|nop|do_nothing|dummy|ignore|ignored|null|"
                       r"passthrough|pass_through)(?:_|$)|^_?noop", re.IGNORECASE)
# Classes whose empty methods are the point: null objects, bases, mixins, interfaces.
NULL_CLASS = re.compile(r"^_*(?:Null|Noop|NoOp|Nop|Dummy|Fake|Stub|Mock|Default|Base|Abstract|"
                        r"Empty|Silent|Nothing|Ignored|Ignoring|Inert|Discarding)|"
                        r"(?:Base|Mixin|Interface|Protocol|ABC|Null|Noop|Dummy)$")
# Classes named for a role whose methods a subclass or a caller fills in: empty methods
# are their defaults when the class says so (a docstring), has bases, or is derived from.
ROLE_CLASS = re.compile(r"(?:Handler|Hooks?|Visitor|Listener|Observer|Callbacks?)$")
# Names of null objects that raising NotImplementedError contradicts less than a
# `Default...` implementation does (a default is expected to work).
RAISE_BASE_CLASS = re.compile(r"^_*(?:Null|Noop|NoOp|Nop|Dummy|Fake|Stub|Mock|Base|Abstract|"
                              r"Empty|Silent|Nothing)|(?:Base|Mixin|Interface|Protocol|ABC)$")
# Set-up and tear-down hooks a framework calls and a subclass overrides (empty by default).
HOOK_METHOD = re.compile(r"^(?:setUp|tearDown|asyncSetUp|asyncTearDown)(?:Class|Module)?$|"
                         r"^(?:setup|teardown)(?:_method|_class|_module|_function)?$")
# A comment or class docstring saying an empty body is on purpose.
NOOP_SAID = re.compile(r"\bno[- ]?ops?\b|\bdoes\s+nothing\b|\bdo\s+nothing\b|\bnothing\s+to\s+do\b|"
                       r"\bintentionally\b|\bon\s+purpose\b|\bdeliberately\b|\bnull\s+object\b|"
                       r"\bonly\s+exists?\b|\bexists?\s+only\b|\bbackwards?[- ]compat\w*|"
                       r"\bnothing\s+(?:here|needed)\b", re.IGNORECASE)
# Words of unfinished work: a comment or message with one of them excuses nothing.
UNFINISHED_SAID = re.compile(r"\b(?:todo|fixme|xxx|tbd|yet|later|implement\w*|fill\s+in|"
                             r"finish\w*|stub\w*|placeholder|soon|wip|temporar\w*|for\s+now)\b",
                             re.IGNORECASE)
# A NotImplementedError message saying the refusal is the behaviour, not missing work
# (as Java's UnsupportedOperationException("immutable") is).
DELIBERATE_REFUSAL = re.compile(r"\b(?:does\s+not|doesn't|do\s+not|don't|"
                                r"not\s+supported|unsupported|no\s+longer|deprecated|removed|"
                                r"by\s+design|intentionally|deliberately|read[- ]only|immutable|"
                                r"not\s+available|not\s+applicable|not\s+allowed|always)\b",
                                re.IGNORECASE)
EXCEPTION_BASE = re.compile(r"(?:Error|Exception|Warning|Exit|Interrupt)$")
# A test whose whole point is that nothing raises, said so: in its name
# (`test_close_twice_does_not_raise`, `test_smoke_...`), or in its docstring or a comment
# with the words (`# smoke: must not raise`, "does not crash", "no exception is raised").
NOT_RAISE = re.compile(r"(?:^|_)(?:does_?not_?raise|doesnt_?raise|not_?raises?|no_?raise|"
                       r"should_?not_?raise|must_?not_?raise|no_?errors?|no_?exceptions?|"
                       r"does_?not_?fail|doesnt_?fail|does_?not_?crash|doesnt_?crash|no_?crash|"
                       r"smoke|without_?(?:error|exception|raising|crash\w*)|"
                       r"hashable|picklable|pickleable|importable|imports?)(?:_|$)",
                       re.IGNORECASE)
NOT_RAISE_SAID = re.compile(
    r"\b(?:does\s*n[o']t|do\s*n[o']t|must\s+not|should\s+not|shouldn't|won't|will\s+not|"
    r"never|not)\s+(?:raise|raising|rais\w*|crash\w*|throw\w*)\b"
    r"|\bno\s+(?:exception|crash)s?\s+(?:is\s+|are\s+)?(?:raised|thrown)\b|\bsmoke\b",
    re.IGNORECASE)
# Context managers that say "the block must not raise" (pytest's documented idiom).
NOT_RAISE_CONTEXT = frozenset({"does_not_raise", "not_raises", "no_raise", "nullcontext"})
# Decorators and fixtures of tests that measure, or check that nothing raises on many inputs.
BENCHMARK_MARKS = frozenset({"benchmark"})
MANY_INPUTS = frozenset({"parametrize", "given"})
BROAD_EXCEPTIONS = frozenset({"Exception", "BaseException", "AssertionError"})
MOCK_CALLS = frozenset({"patch", "patch.object", "mock.patch", "mock.patch.object",
                        "unittest.mock.patch", "unittest.mock.patch.object",
                        "mocker.patch", "mocker.patch.object", "monkeypatch.setattr"})


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


def _is_docstring(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) \
        and isinstance(stmt.value.value, str)


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


def _returns_nothing_computed(node: ast.expr, *, logged: bool) -> bool:
    """``None``, an empty display or constructor, ``""`` (and, after logging, any literal:
    ``log.info(...); return True``)."""
    if isinstance(node, ast.Constant) and node.value is None:
        return True
    if isinstance(node, ast.Constant) and node.value in ("", b"") and not isinstance(
            node.value, bool):
        return True
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)) and not node.elts:
        return True
    if isinstance(node, ast.Dict) and not node.keys:
        return True
    if isinstance(node, ast.Call) and not node.args and not node.keywords \
            and _dotted(node.func) in {"list", "dict", "set", "tuple", "str"}:
        return True
    return logged and _literal(node) is not _NO_VALUE


LOG_CALL = re.compile(r"^(?:log|logger|logging|_log|_logger|LOG|LOGGER|print)$")


def _is_log_call(stmt: ast.stmt) -> bool:
    """``log.info(...)``, ``logger.debug(...)``, ``print(...)``: a statement that only
    reports."""
    if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)):
        return False
    name = _dotted(stmt.value.func)
    root = name.split(".")[0]
    return bool(name) and (LOG_CALL.match(root) is not None and (
        name == "print" or len(name.split(".")) == 2))


def _optional_annotation(node: ast.expr) -> bool:
    """``-> None``, ``-> Optional[X]``, ``-> X | None``, ``-> Any``: the annotation admits
    nothing returned."""
    text = ast.unparse(node)
    return text in ("None", "Any", "typing.Any", "object", "NoReturn") \
        or "Optional" in text or bool(re.search(r"\bNone\b", text))


# A docstring saying the function returns nothing on purpose.
RESULT_EMPTY_SAID = re.compile(r"\b(?:return(?:s|ing)?\s+(?:none|nothing|an?\s+empty|empty|"
                               r"no\s+\w+)|always\s+(?:returns?\s+)?(?:none|empty|nothing)|"
                               r"no[- ]?op|does\s+nothing|default\s+implementation|hook|"
                               r"overrid\w*|subclass\w*|placeholder\s+for\s+subclass\w*)\b",
                               re.IGNORECASE)


def _says_result_is_empty(doc: str) -> bool:
    return bool(RESULT_EMPTY_SAID.search(doc)) and not UNFINISHED_SAID.search(doc)


def _empty_body_kind(body: list[ast.stmt]) -> str | None:
    """How a body that does nothing is spelled (`pass`, `...`), else None. A docstring
    alone is a documented no-op, reported by the caller only where that is not an idiom."""
    kinds: list[str] = []
    for stmt in body:
        if isinstance(stmt, ast.Pass):
            kinds.append("`pass`")
        elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) \
                and stmt.value.value is Ellipsis:
            kinds.append("`...`")
        elif _is_docstring(stmt):
            kinds.append("a docstring")
        else:
            return None
    return " and ".join(dict.fromkeys(kinds))


def _message_text(node: ast.expr | None) -> str | None:
    if isinstance(node, ast.Call) and node.args:
        node = node.args[0]
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value for v in node.values if isinstance(v, ast.Constant)
                       and isinstance(v.value, str))
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


def _deliberate_refusal(node: ast.expr | None) -> bool:
    """A NotImplementedError whose message says the refusal is deliberate and final
    ("does not", "not supported", "read-only", ...) and says nothing of unfinished work."""
    text = _message_text(node)
    return text is not None and bool(DELIBERATE_REFUSAL.search(text)) \
        and not UNFINISHED_SAID.search(text) and not ADMISSION.search(text) \
        and not MARKER.search(text)


def _implemented_methods(cls: ast.ClassDef) -> set[str]:
    """``Class.method`` for each method of ``cls`` with a real body (not empty, not a
    bare ``raise NotImplementedError``)."""
    found = set()
    for stmt in cls.body:
        if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        body = [s for s in stmt.body if not _is_docstring(s)]
        if not body or _empty_body_kind(body) is not None:
            continue
        if len(body) == 1 and isinstance(body[0], ast.Raise) and body[0].exc is not None \
                and _dotted(body[0].exc).split(".")[-1] in ("NotImplementedError",
                                                            "NotImplemented"):
            continue
        found.add(f"{cls.name}.{stmt.name}")
    return found


def _raise_admits_unfinished(node: ast.expr | None) -> bool:
    """The message of a raised error says "not implemented" or holds a TODO marker
    (``raise RuntimeError("TODO")``): code refusing to run because it is unwritten."""
    text = _message_text(node)
    return text is not None and bool(ADMISSION.search(text) or MARKER.search(text))


_NO_VALUE = object()
_HOLDS_WHEN_EQUAL = (ast.Eq, ast.Is, ast.LtE, ast.GtE)
_HOLDS_WHEN_DIFFERENT = (ast.NotEq, ast.IsNot)


def _literal(node: ast.expr, constants: dict[str, object] | None = None) -> object:
    if constants and isinstance(node, ast.Name) and node.id in constants:
        return constants[node.id]
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return _NO_VALUE


def _unwrap_identity(node: ast.expr, identities: frozenset[str]) -> ast.expr:
    """``snapshot(out)`` -> ``out`` when ``snapshot`` is a function of this file that
    returns its argument unchanged."""
    while isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
            and node.func.id in identities and len(node.args) == 1 and not node.keywords:
        node = node.args[0]
    return node


def _same_expression(left: ast.expr, right: ast.expr,
                     identities: frozenset[str] = frozenset()) -> bool:
    """``r == r``: the same name or attribute chain on both sides (no call: ``f() == f()``
    may legitimately compare two results; ``out == snapshot(out)`` with a local
    ``snapshot`` returning its argument is ``out == out``)."""
    left, right = _unwrap_identity(left, identities), _unwrap_identity(right, identities)
    if not isinstance(left, (ast.Name, ast.Attribute, ast.Subscript)):
        return False
    if any(isinstance(n, ast.Call) for n in ast.walk(left)):
        return False
    return ast.dump(left) == ast.dump(right)


def _empty_value(value: object) -> bool:
    return isinstance(value, (list, tuple, dict, set, frozenset, str, bytes)) and not value


def _empty_iterable(node: ast.expr, constants: dict[str, object] | None = None) -> bool:
    """``[]``, ``()``, ``{}``, ``""``, ``range(0)`` or a name bound only to one of them."""
    if isinstance(node, ast.Call) and _dotted(node.func) in ("range", "list", "tuple", "set",
                                                             "dict", "frozenset", "iter") \
            and not node.keywords:
        if not node.args:
            return _dotted(node.func) != "range"
        if _dotted(node.func) == "range":
            values = [_literal(a, constants) for a in node.args]
            if any(not isinstance(v, int) or isinstance(v, bool) for v in values):
                return False
            ints = [int(v) for v in values]  # type: ignore[call-overload]
            return len(range(*ints)) == 0 if len(ints) <= 3 and (len(ints) < 3 or ints[2]) \
                else False
        return len(node.args) == 1 and _empty_iterable(node.args[0], constants)
    return _empty_value(_literal(node, constants))


_NON_NEGATIVE = frozenset({"len", "abs"})


def _never_negative_compare(node: ast.Compare, constants: dict[str, object] | None) -> bool:
    """``len(x) >= 0``, ``0 <= len(x)``, ``len(x) > -1``: a length is never negative."""
    if len(node.ops) != 1:
        return False
    left, op, right = node.left, node.ops[0], node.comparators[0]
    if isinstance(op, (ast.LtE, ast.Lt)):
        left, right = right, left
        op = ast.GtE() if isinstance(op, ast.LtE) else ast.Gt()
    if not (isinstance(left, ast.Call) and _dotted(left.func) in _NON_NEGATIVE):
        return False
    bound = _literal(right, constants)
    if not isinstance(bound, (int, float)) or isinstance(bound, bool):
        return False
    return (isinstance(op, ast.GtE) and bound <= 0) or (isinstance(op, ast.Gt) and bound < 0)


def _always_holds(node: ast.expr, constants: dict[str, object] | None = None,
                  identities: frozenset[str] = frozenset()) -> bool:
    """``True``, ``"ok"``, ``1 == 1``, ``r == r``, ``x or True``, ``len(r) >= 0``,
    ``x or not x``, ``all(... for v in [])``: true whatever the code does."""
    if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.Or):
        if any(_always_holds(v, constants, identities) for v in node.values):
            return True
        dumps = {ast.dump(v) for v in node.values}
        # `x or not x`, `r is None or r is not None`: one side is the other's negation.
        return any(_negation(v) in dumps for v in node.values)
    if isinstance(node, (ast.Tuple, ast.List, ast.Set, ast.Dict)):
        # `assert (r == 6, "msg")`: a non-empty display is true whatever it holds.
        return bool(node.keys if isinstance(node, ast.Dict) else node.elts)
    if isinstance(node, ast.Call) and _dotted(node.func) == "all" and len(node.args) == 1 \
            and isinstance(node.args[0], (ast.GeneratorExp, ast.ListComp)) \
            and _empty_iterable(node.args[0].generators[0].iter, constants):
        return True  # all() of nothing is True
    if isinstance(node, ast.Call) and _dotted(node.func) == "isinstance" \
            and len(node.args) == 2 and _dotted(node.args[1]) in ("object", "builtins.object"):
        return True
    if isinstance(node, ast.Compare) and _never_negative_compare(node, constants):
        return True
    if isinstance(node, ast.Compare) and len(node.ops) == 1:
        op, right_node = node.ops[0], node.comparators[0]
        if _same_expression(node.left, right_node, identities) and (
                isinstance(node.left, ast.Name) or not isinstance(op, ast.Is)):
            # `x.attr is x.attr` may test caching (a property could build a new object).
            return isinstance(op, _HOLDS_WHEN_EQUAL)
        left, right = _literal(node.left, constants), _literal(right_node, constants)
        if left is _NO_VALUE or right is _NO_VALUE:
            return False
        if isinstance(op, _HOLDS_WHEN_EQUAL):
            return bool(left == right)
        return isinstance(op, _HOLDS_WHEN_DIFFERENT) and bool(left != right)
    value = _literal(node, constants)
    return value is not _NO_VALUE and bool(value)


def _negation(node: ast.expr) -> str:
    """The ``ast.dump`` of ``node``'s plain negation: ``not x`` -> ``x``, ``x`` -> ``not
    x``, ``a is None`` -> ``a is not None`` (and ``==``/``!=``, ``in``/``not in``)."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return ast.dump(node.operand)
    flipped = {ast.Is: ast.IsNot, ast.IsNot: ast.Is, ast.Eq: ast.NotEq, ast.NotEq: ast.Eq,
               ast.In: ast.NotIn, ast.NotIn: ast.In}
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in flipped:
        return ast.dump(ast.Compare(left=node.left, ops=[flipped[type(node.ops[0])]()],
                                    comparators=node.comparators))
    return ast.dump(ast.UnaryOp(op=ast.Not(), operand=node))


def _trivial_assert_call(node: ast.Call, constants: dict[str, object] | None = None,
                         identities: frozenset[str] = frozenset()) -> bool:
    """``self.assertTrue(True)``, ``self.assertEqual(1, 1)``, ``assertEqual(x, x)``,
    ``assertGreaterEqual(len(x), 0)``."""
    name = _dotted(node.func).split(".")[-1]
    if name in ("assertTrue", "assert_") and node.args:
        return _always_holds(node.args[0], constants, identities)
    if name in ("assertGreaterEqual", "assertGreater", "assertLessEqual", "assertLess") \
            and len(node.args) >= 2:
        ops = {"assertGreaterEqual": ast.GtE, "assertGreater": ast.Gt,
               "assertLessEqual": ast.LtE, "assertLess": ast.Lt}
        return _never_negative_compare(ast.Compare(
            left=node.args[0], ops=[ops[name]()], comparators=[node.args[1]]), constants)
    if name == "assertIsInstance" and len(node.args) >= 2:
        return _dotted(node.args[1]) in ("object", "builtins.object")
    if name in ("assertEqual", "assertEquals", "assertIs", "assertDictEqual",
                "assertListEqual") and len(node.args) >= 2:
        if _same_expression(node.args[0], node.args[1], identities):
            return True
        left, right = _literal(node.args[0], constants), _literal(node.args[1], constants)
        return left is not _NO_VALUE and left == right
    return False


def _catches_assertions(handler: ast.ExceptHandler) -> bool:
    """A handler that would catch a failed assertion and does not raise again."""
    caught = handler.type
    names: list[str] = []
    if caught is None:
        names = ["BaseException"]
    elif isinstance(caught, ast.Tuple):
        names = [_dotted(e).split(".")[-1] for e in caught.elts]
    else:
        names = [_dotted(caught).split(".")[-1]]
    if not BROAD_EXCEPTIONS & set(names):
        return False
    return not any(isinstance(n, ast.Raise) or (isinstance(n, ast.Call) and (
        _dotted(n.func).split(".")[-1] in ("fail", "exit") or ASSERT_HELPER.match(
            _dotted(n.func).split(".")[-1]))) for stmt in handler.body for n in ast.walk(stmt))


def _ends(body: list[ast.stmt]) -> bool:
    """Whether running ``body`` always leaves the function: a `return`, an unconditional
    skip, or an `if` on a constant whose taken branch does."""
    for stmt in body:
        if isinstance(stmt, ast.Return):
            return True
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) \
                and _dotted(stmt.value.func) in SKIP_CALLS:
            return True
        if isinstance(stmt, ast.If):
            value = _constant_value(stmt.test, text=False)
            if value is not _NO_VALUE and value is not _VERSION \
                    and _ends(stmt.body if value else stmt.orelse):
                return True
    return False


def _reachable(body: list[ast.stmt]) -> list[ast.stmt]:
    """The statements up to the first top-level `return`, unconditional skip, or `if
    True: return`: asserts after them never run."""
    for index, stmt in enumerate(body):
        if _ends([stmt]):
            return body[:index + 1]
    return body


def _dead_nodes(root: ast.AST, constants: dict[str, object] | None = None) -> set[int]:
    """ids of the nodes under ``root`` that never run: the body of a loop over an empty
    collection (``for x in []``, a name bound only to ``[]``, ``range(0)``), of
    ``while False``, the branch an ``if`` on a constant does not take, and what follows
    an unconditional ``return`` in a nested block."""
    dead: set[int] = set()

    def kill(stmts: Iterable[ast.AST]) -> None:
        for stmt in stmts:
            dead.update(id(n) for n in ast.walk(stmt))

    for node in ast.walk(root):
        if id(node) in dead:
            continue
        if isinstance(node, (ast.For, ast.AsyncFor)) and _empty_iterable(node.iter, constants):
            kill(node.body)
        elif isinstance(node, ast.While):
            value = _constant_value(node.test, text=False)
            if value is not _NO_VALUE and value is not _VERSION and not value:
                kill(node.body)
        elif isinstance(node, ast.If):
            value = _constant_value(node.test, text=False)
            if value is not _NO_VALUE and value is not _VERSION:
                kill(node.orelse if value else node.body)
        elif isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)) \
                and _empty_iterable(node.generators[0].iter, constants):
            kill([node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt])
        for field_name in ("body", "orelse", "finalbody"):
            block = getattr(node, field_name, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt) \
                    and node is not root:
                kept = _reachable(block)
                kill(block[len(kept):])
    return dead


def _module_constants(tree: ast.Module) -> dict[str, object]:
    """Module-level names bound exactly once, to a literal, and never changed in place
    anywhere in the file (no method call or subscript on them, no ``+=``, not passed to
    a call, no ``global``): ``CASES = []`` that nothing fills stays empty."""
    values: dict[str, object] = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 \
                and isinstance(stmt.targets[0], ast.Name):
            value = _literal(stmt.value)
            if value is not _NO_VALUE:
                values[stmt.targets[0].id] = value
        elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None \
                and isinstance(stmt.target, ast.Name):
            value = _literal(stmt.value)
            if value is not _NO_VALUE:
                values[stmt.target.id] = value
    if not values:
        return {}
    stores: dict[str, int] = {}
    changed: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            stores[node.id] = stores.get(node.id, 0) + 1
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            changed.update(node.names)
        elif isinstance(node, (ast.Attribute, ast.Subscript)) and isinstance(node.value, ast.Name):
            changed.add(node.value.id)
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
            changed.add(node.target.id)
        elif isinstance(node, ast.Call) and _dotted(node.func).split(".")[-1] != "parametrize":
            changed.update(a.id for a in node.args if isinstance(a, ast.Name))
            changed.update(k.value.id for k in node.keywords if isinstance(k.value, ast.Name))
    return {name: value for name, value in values.items()
            if stores.get(name) == 1 and (name not in changed or not _mutable(value))}


def _mutable(value: object) -> bool:
    return isinstance(value, (list, dict, set))


def _changed_in_place(root: ast.AST) -> set[str]:
    """Names under ``root`` a method call, subscript store, ``+=`` or a call taking them
    may change in place."""
    changed: set[str] = set()
    for node in ast.walk(root):
        if isinstance(node, (ast.Attribute, ast.Subscript)) and isinstance(node.value, ast.Name):
            changed.add(node.value.id)
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
            changed.add(node.target.id)
        elif isinstance(node, ast.Call):
            changed.update(a.id for a in node.args if isinstance(a, ast.Name))
            changed.update(k.value.id for k in node.keywords if isinstance(k.value, ast.Name))
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            changed.update(node.names)
    return changed


def _local_constants(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, object]:
    """Names a test binds exactly once, by ``name = <literal>``: ``expected = 5`` then
    ``assert expected == 5`` compares two literals."""
    bindings: dict[str, int] = {}
    literal_values: dict[str, object] = {}
    for node in ast.walk(fn):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            bindings[node.id] = bindings.get(node.id, 0) + 1
        if isinstance(node, ast.Assign) and len(node.targets) == 1 \
                and isinstance(node.targets[0], ast.Name):
            value = _literal(node.value)
            if value is not _NO_VALUE:
                literal_values[node.targets[0].id] = value
    changed = _changed_in_place(fn)
    return {name: value for name, value in literal_values.items() if bindings.get(name) == 1
            and (name not in changed or not _mutable(value))}


@dataclass
class _Function:
    node: ast.FunctionDef | ast.AsyncFunctionDef
    exempt: bool  # abstract, overload or a Protocol member: an empty body is the point
    marker_start: int  # first line that counts as "this function's" (comments just above)
    cls: ast.ClassDef | None = None  # the class it is a method of
    nested: bool = False  # defined inside another function
    dead: str | None = None  # defined under a condition that never holds (`if False:`)
    stub_findings: list[int] = field(default_factory=list)  # indexes into the issue list

    @property
    def start(self) -> int:
        return self.node.lineno

    @property
    def end(self) -> int:
        return self.node.end_lineno or self.node.lineno

    @property
    def scope(self) -> int:
        return min([self.node.lineno, *(d.lineno for d in self.node.decorator_list)])


class _Scanner:
    def __init__(self, path: str, source: str, *, is_test_file: bool,
                 facts: TreeFacts | None = None) -> None:
        self.path = path
        self.facts = facts or TreeFacts()
        self.source = source
        self.lines = source.splitlines()
        self.is_test_file = is_test_file
        self.is_stub_file = path.endswith(".pyi")
        self.issues: list[Finding] = []
        self.functions: list[_Function] = []
        self.subclassed: set[str] = set(self.facts.subclassed)  # class names derived from
        self.implemented: set[str] = set(self.facts.implemented)  # "Class.method" with a body
        self.asserting_helpers: set[str] = set()  # non-test functions that can fail
        # `eq = self.assertEqual`, `roundtrip = check_roundtrip`: name -> what it names.
        self.alias_of: dict[str, str] = {}
        self.imported: dict[str, str] = {}  # local name -> module it was imported from
        self.module_constants: dict[str, object] = {}  # `CASES = []` nothing changes
        self.identities: frozenset[str] = frozenset()  # functions returning their argument

    def collect_constants(self, tree: ast.Module) -> None:
        self.module_constants = _module_constants(tree)
        self.identities = frozenset(
            stmt.name for stmt in tree.body
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef))
            and (args := [*stmt.args.posonlyargs, *stmt.args.args]) and len(args) == 1
            and (body := [b for b in stmt.body if not _is_docstring(b)])
            and len(body) == 1 and isinstance(body[0], ast.Return)
            and isinstance(body[0].value, ast.Name) and body[0].value.id == args[0].arg)

    def constants_for(self, fn: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, object]:
        """The literal a name in ``fn`` certainly holds: bound once to it in ``fn``, or at
        module level and neither a parameter of ``fn`` nor bound in it."""
        local = {a.arg for a in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs)}
        local |= {n.id for n in ast.walk(fn) if isinstance(n, ast.Name)
                  and isinstance(n.ctx, (ast.Store, ast.Del))}
        constants = {k: v for k, v in self.module_constants.items() if k not in local}
        constants.update(_local_constants(fn))
        return constants

    @property
    def aliases(self) -> set[str]:
        return set(self.alias_of)

    def collect_aliases(self, tree: ast.Module) -> None:
        """Names bound to another callable (``eq = self.assertEqual``), and where each
        imported name comes from."""
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and isinstance(node.value, (ast.Name, ast.Attribute)):
                source = _dotted(node.value).split(".")[-1]
                for target in node.targets:
                    name = target.id if isinstance(target, ast.Name) else (
                        target.attr if isinstance(target, ast.Attribute) else None)
                    if name and source and name != source:
                        self.alias_of[name] = source
            elif isinstance(node, ast.ImportFrom):
                module = "." * node.level + (node.module or "")
                for alias in node.names:
                    self.imported[alias.asname or alias.name] = module
                    if alias.asname and alias.asname != alias.name:
                        self.alias_of[alias.asname] = alias.name
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    self.imported[alias.asname or alias.name.split(".")[0]] = alias.name

    # -- helpers ---------------------------------------------------------------------

    def add(self, check: str, severity: Severity, line: int, message: str, *,
            end: int | None = None, scope: int | None = None) -> int:
        self.issues.append(Finding(severity=severity, file=self.path, line=line,
                                   message=message, check=check, end_line=end,
                                   scope_line=scope))
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

    def _pragma_no_cover(self, *lines: int) -> bool:
        return any(0 < n <= len(self.lines) and "pragma: no cover" in self.lines[n - 1]
                   for n in lines)

    # -- passes ----------------------------------------------------------------------

    def collect_functions(self, tree: ast.Module) -> None:
        dead_under: dict[int, str] = {}  # id of a statement -> the condition that never holds
        for node in ast.walk(tree):
            if isinstance(node, (ast.If, ast.While)):
                value = _constant_value(node.test, text=False)
                if value is _NO_VALUE or value is _VERSION:
                    continue
                spelled = f"{'if' if isinstance(node, ast.If) else 'while'} " \
                          f"{ast.unparse(node.test)[:40]}"
                branch = node.body if not value else (
                    node.orelse if isinstance(node, ast.If) else [])
                for stmt in branch:
                    for inner in ast.walk(stmt):
                        dead_under.setdefault(id(inner), spelled if not value
                                              else f"the `else` of `{spelled}`")

        def visit(node: ast.AST, cls: ast.ClassDef | None, in_protocol: bool,
                  in_function: bool) -> None:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.ClassDef):
                    bases = {_dotted(b.value if isinstance(b, ast.Subscript) else b)
                             for b in child.bases}
                    self.implemented |= _implemented_methods(child)
                    self.subclassed |= {b.split(".")[-1] for b in bases}
                    protocol = in_protocol or any(
                        b.split(".")[-1] in ("Protocol", "ABC") for b in bases) \
                        or any(isinstance(k.value, ast.Name) and k.value.id == "ABCMeta"
                               for k in child.keywords)
                    visit(child, child, protocol, in_function)
                elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    decorators = {_dotted(d).split(".")[-1] for d in child.decorator_list}
                    exempt = in_protocol or bool(decorators & EXEMPT_DECORATORS)
                    self.functions.append(_Function(child, exempt, self._marker_start(child),
                                                    cls=cls, nested=in_function,
                                                    dead=dead_under.get(id(child))))
                    visit(child, None, False, True)
                elif isinstance(child, ast.If) and _dotted(child.test).split(".")[-1] \
                        == "TYPE_CHECKING":
                    # Declarations for the type checker only: a `...` body is the point.
                    visit(ast.Module(body=child.body, type_ignores=[]), cls, True, in_function)
                    visit(ast.Module(body=child.orelse, type_ignores=[]), cls, in_protocol,
                          in_function)
                else:
                    visit(child, cls, in_protocol, in_function)

        visit(tree, None, False, False)

    def _idiomatic_no_op(self, fn: _Function, body: str) -> bool:
        """Empty on purpose: a documented method, a dunder (``__exit__``), a method of a
        null object, base, mixin or exception class, a function named as a no-op, a local
        callback, a fixture or helper in a test file."""
        name = fn.node.name
        if fn.nested or self.is_test_file or NOOP_NAME.search(name):
            return True
        if name.startswith("__") and name.endswith("__"):
            return True
        if fn.cls is not None and HOOK_METHOD.match(name):
            return True  # a framework's default hook (unittest's asyncSetUp), overridden
        if self._comment_says_no_op(fn):
            return True
        if fn.cls is None:
            # `# pragma: no cover` marks a base class's contract, not a module function
            # (appending it to a stub must not make the stub clean).
            return False
        if self._pragma_no_cover(fn.start, *(s.lineno for s in fn.node.body)) \
                and not self._plain_class(fn.cls):
            return True
        if "docstring" in body and not self._concrete_docstring_only(fn):
            return True  # a default hook that says what it is for
        cls = fn.cls
        bases = {_dotted(b.value if isinstance(b, ast.Subscript) else b).split(".")[-1]
                 for b in cls.bases}
        if NULL_CLASS.search(cls.name) or cls.name in self.subclassed:
            return True
        if ROLE_CLASS.search(cls.name) and (bases or ast.get_docstring(cls) is not None):
            return True
        if any(EXCEPTION_BASE.search(b) or NULL_CLASS.search(b) or ROLE_CLASS.search(b)
               for b in bases):
            return True
        said = ast.get_docstring(cls) or ""
        if NOOP_SAID.search(said) and not UNFINISHED_SAID.search(said):
            return True  # "All operations are no-op": a null object that says so
        aliases = self.alias_of
        if any(f"{aliases.get(b, b)}.{name}" in self.implemented for b in bases):
            return True  # overrides a base method that does something, to do nothing
        methods = [s for s in cls.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))]
        # Every method empty in a class that documents itself: a null object or an
        # interface, not one forgotten method. Undocumented, it is a class of stubs (an
        # agent's `class PaymentService:` with every method `pass`), not an idiom.
        return len(methods) > 1 and ast.get_docstring(cls) is not None and all(
            _empty_body_kind(m.body) is not None for m in methods)

    def _plain_class(self, cls: ast.ClassDef) -> bool:
        """A class that is no base of anything: no bases of its own, no docstring, not
        derived from in the scanned tree, not named as a null object or a role."""
        bases = [b for b in cls.bases if _dotted(b) not in ("object", "")]
        return not bases and not cls.keywords and cls.name not in self.subclassed \
            and ast.get_docstring(cls) is None and not NULL_CLASS.search(cls.name) \
            and not ROLE_CLASS.search(cls.name)

    def _concrete_docstring_only(self, fn: _Function) -> bool:
        """A method that is only a docstring saying what it does, in a plain class whose
        other methods do work (``Cart.checkout`` documented, never written): a stub,
        not a documented default hook."""
        cls = fn.cls
        if cls is None or not self._plain_class(cls):
            return False
        name = fn.node.name
        if name.startswith("__") or NOOP_NAME.search(name) or HOOK_METHOD.match(name):
            return False
        doc = ast.get_docstring(fn.node) or ""
        if RESULT_EMPTY_SAID.search(doc) or NOOP_SAID.search(doc) \
                or re.search(r"\b(?:called|invoked|override|overridden|by\s+default|"
                             r"subclass\w*|hook)\b", doc, re.IGNORECASE):
            return False
        return any(f"{cls.name}.{m.name}" in self.implemented for m in cls.body
                   if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))
                   and m.name != name and not m.name.startswith("__"))

    def _comment_says_no_op(self, fn: _Function) -> bool:
        """A comment in the function, or right above it, saying the empty body is on
        purpose (``pass  # no-op when os.register_at_fork does not exist``); one that
        also speaks of unfinished work excuses nothing."""
        for line in range(fn.marker_start, fn.end + 1):
            text = self.lines[line - 1] if 0 < line <= len(self.lines) else ""
            if "#" not in text:
                continue
            comment = text.split("#", 1)[1]
            if NOOP_SAID.search(comment) and not UNFINISHED_SAID.search(comment) \
                    and not ADMISSION.search(comment):
                return True
        return False

    def _base_raise(self, owner: _Function | None, node: ast.Raise) -> bool:
        """``raise NotImplementedError`` that is a contract, not a stub: in a base class
        (its name, its bases, or a class here derives from it), under ``# pragma: no
        cover``, or in a ``__dunder__`` / no-op-named method; or a ``singledispatch``
        fallback with implementations registered."""
        if owner is not None and owner.cls is None and self._dispatch_base(owner):
            return True
        if owner is None or owner.cls is None:
            return False  # a module function's raise is a stub, pragma or not
        if self._pragma_no_cover(node.lineno, owner.start) \
                and not self._plain_class(owner.cls):
            return True  # a base's contract; in a plain class the pragma hides a stub
        cls = owner.cls
        bases = {_dotted(b.value if isinstance(b, ast.Subscript) else b).split(".")[-1]
                 for b in cls.bases}
        name = owner.node.name
        return bool(RAISE_BASE_CLASS.search(cls.name) or cls.name in self.subclassed
                    or (ROLE_CLASS.search(cls.name) and not self._plain_class(cls))
                    or bases & {"ABC", "Protocol"}
                    or any(NULL_CLASS.search(b) or ROLE_CLASS.search(b) for b in bases)
                    or (name.startswith("__") and name.endswith("__")))

    def _dispatch_base(self, owner: _Function) -> bool:
        """The fallback of a ``functools.singledispatch`` function that this file gives
        implementations (``@name.register``): raising for unknown types is its contract.
        With no implementation registered, it is a stub like any other."""
        decorators = {_dotted(d).split(".")[-1] for d in owner.node.decorator_list}
        if "singledispatch" not in decorators:
            return False
        return re.search(rf"\b{re.escape(owner.node.name)}\.register\b", self.source) is not None

    @staticmethod
    def _whole_body(owner: _Function, node: ast.stmt) -> bool:
        body = [s for s in owner.node.body if not _is_docstring(s)]
        return body == [node]

    def stubs(self, tree: ast.Module, comment_lines: list[tuple[int, str]]) -> None:
        marked_lines = [n for n, text in comment_lines if MARKER.search(text)]
        for fn in self.functions:
            name = fn.node.name
            if fn.exempt or self.is_stub_file or self._is_test(fn):
                continue
            body = _empty_body_kind(fn.node.body)
            if body is None:
                self.empty_result(fn)
                continue
            if body == "a docstring" and fn.cls is not None \
                    and not self._concrete_docstring_only(fn):
                continue
            if self._idiomatic_no_op(fn, body):
                continue
            fn.stub_findings.append(self.add(
                "stub_code", "high", fn.start,
                f"function `{name}` is a stub: its body is only {body}",
                end=fn.end, scope=fn.scope))
        for node in ast.walk(tree):
            if isinstance(node, ast.Raise) and node.exc is not None:
                owner = self.innermost(node.lineno)
                if owner is not None and (owner.exempt or self._is_test(owner)
                                          or self.is_stub_file):
                    continue
                where = f"`{owner.node.name}`" if owner else "code outside any function"
                # `raise NotImplemented` (the constant, a common slip) is a stub too.
                not_implemented = _dotted(node.exc) in (
                    "NotImplementedError", "builtins.NotImplementedError", "NotImplemented")
                if not not_implemented and not _raise_admits_unfinished(node.exc):
                    continue
                if not_implemented and _deliberate_refusal(node.exc):
                    continue  # "IDNA 2008 does not utilise nameprep": the behaviour
                if self._base_raise(owner, node):
                    continue
                scope = owner.scope if owner else None
                if owner is not None and not self._whole_body(owner, node):
                    # One branch refuses (an unsupported mode, a platform): partial, and
                    # stated, so reported without blocking.
                    self.add("stub_code", "medium", node.lineno,
                             f"{where} raises {'NotImplementedError' if not_implemented else 'a not-implemented error'} "
                             "on one of its paths", scope=scope)
                    continue
                index = self.add("stub_code", "high", node.lineno,
                                 f"{where} raises NotImplementedError: not implemented"
                                 if not_implemented else
                                 f"{where} raises an error saying it is not implemented",
                                 scope=scope)
                if owner is not None:
                    owner.stub_findings.append(index)
            elif isinstance(node, ast.Return):
                owner = self.innermost(node.lineno)
                if owner is None or owner.exempt or self.is_stub_file:
                    continue
                text = _message_text(node.value) if isinstance(node.value, ast.Constant) else None
                if text is not None and PURE_ADMISSION.match(text.strip()):
                    owner.stub_findings.append(self.add(
                        "stub_code", "high", node.lineno,
                        f"`{owner.node.name}` returns a placeholder string: {text.strip()[:60]!r}",
                        scope=owner.scope))
                elif _is_placeholder_value(node.value) and self._marked_placeholder(
                        owner, node, marked_lines):
                    shown = ast.unparse(node)
                    owner.stub_findings.append(self.add(
                        "stub_code", "high", node.lineno,
                        f"`{owner.node.name}` has a placeholder `{shown}` next to a TODO/FIXME "
                        "marker", scope=owner.scope))

    def empty_result(self, fn: _Function) -> None:
        """A function that promises work (a docstring saying what it does, or a return
        type) and takes arguments, whose whole body returns nothing computed: ``None``,
        ``{}``, ``[]``, ``""``, or only logs its arguments first. Its arguments are
        ignored, so no caller gets what it was promised."""
        node = fn.node
        if fn.nested or self.is_test_file or fn.dead is not None:
            return
        params = [a.arg for a in (*node.args.posonlyargs, *node.args.args,
                                  *node.args.kwonlyargs)][1 if fn.cls is not None else 0:]
        if not params or node.args.vararg or node.args.kwarg:
            return
        body = [s for s in node.body if not _is_docstring(s)]
        if not body or not isinstance(body[-1], ast.Return):
            return
        value = body[-1].value
        logs_only = bool(body[:-1]) and all(_is_log_call(s) for s in body[:-1])
        if body[:-1] and not logs_only:
            return
        if not (value is None or _returns_nothing_computed(value, logged=logs_only)):
            return
        used = {n.id for s in body[:-1] for n in ast.walk(s) if isinstance(n, ast.Name)}
        if value is not None:
            used |= {n.id for n in ast.walk(value) if isinstance(n, ast.Name)}
        if used & set(params) and not logs_only:
            return
        doc = ast.get_docstring(node) or ""
        # Logging the arguments and answering a literal pretends to have done the work;
        # otherwise the promise is a docstring saying what it does, or a return type.
        promised = logs_only or bool(doc.strip()) or (
            node.returns is not None and not _optional_annotation(node.returns))
        if not promised or _says_result_is_empty(doc) or self._comment_says_no_op(fn):
            return
        if fn.cls is not None and not self._plain_class(fn.cls):
            return  # a method of a base, a subclass or a documented class: its contract
        if self._idiomatic_no_op(fn, "a return"):
            return
        shown = ast.unparse(body[-1])
        how = "only logs its arguments and then" if logs_only else "ignores its arguments and"
        promise = "it reports work it does not do" if logs_only else (
            f"its {'docstring' if doc.strip() else 'return type'} promises work it does not do")
        fn.stub_findings.append(self.add(
            "stub_code", "high", body[-1].lineno,
            f"`{node.name}` {how} returns `{shown[7:] or 'None'}`: {promise}",
            end=fn.end, scope=fn.scope))

    @staticmethod
    def _marked_placeholder(owner: _Function, node: ast.Return, marked_lines: list[int]) -> bool:
        """A placeholder return that a TODO marker is about: the marker is on its line or
        the line above, or the function does nothing but return it (marker anywhere in
        the function or the comments just above it). A guard clause's `return None` in a
        real function that also carries a TODO elsewhere is not a stub."""
        if any(node.lineno - 1 <= n <= (node.end_lineno or node.lineno) for n in marked_lines):
            return True
        body = [stmt for stmt in owner.node.body if not _is_docstring(stmt)]
        return body == [node] and any(owner.marker_start <= n <= owner.end for n in marked_lines)

    def markers(self, comment_lines: list[tuple[int, str]]) -> None:
        finding_lines = {i.line for i in self.issues if i.check == "stub_code"}
        for line, text in comment_lines:
            marker = MARKER.search(text)
            admission = ADMISSION.search(text)
            if marker is None and admission is None:
                continue
            if line in finding_lines or "meridian:" in text:
                continue  # the marked return on this line is one finding, already reported
            fn = self.innermost(line, use_marker_range=True)
            if fn is not None and fn.stub_findings:
                # A marker inside an unfinished function is part of that stub's story.
                first = self.issues[fn.stub_findings[0]]
                self.issues[fn.stub_findings[0]] = replace(
                    first, message=f"{first.message} (marked at line {line}: {text.strip()[:80]})")
                continue
            scope = fn.scope if fn else None
            if marker is not None:
                self.add("stub_code", "low", line,
                         f"{marker.group(1)} marker left in a comment: {text.strip()[:120]}",
                         scope=scope)
            else:
                self.add("stub_code", "medium", line,
                         f"comment admits unfinished work: {text.strip()[:120]}", scope=scope)

    def _is_test(self, fn: _Function) -> bool:
        """A function pytest or unittest would run as a test (a fixture is not one)."""
        decorators = {_dotted(d).split(".")[-1] for d in fn.node.decorator_list}
        return self.is_test_file and fn.node.name.startswith("test") \
            and not fn.nested and "fixture" not in decorators \
            and (fn.node.name.startswith("test_") or fn.cls is not None)

    # -- tests that cannot fail ------------------------------------------------------

    def collect_helpers(self) -> None:
        """Functions that are not tests and can make a caller fail (a local helper, a
        fixture, a unittest helper method that asserts): calling one counts. Two rounds,
        so a helper calling an asserting helper counts too."""
        others = [fn for fn in self.functions if not self._is_test(fn)]
        self.asserting_helpers |= self.facts.helpers
        for _ in range(3):
            for name, source in self.alias_of.items():
                if source in self.asserting_helpers or source in FAILING_CALLS \
                        or ASSERT_HELPER.match(source):
                    self.asserting_helpers.add(name)
            for fn in others:
                if fn.node.name not in self.asserting_helpers and self._can_fail(fn.node):
                    self.asserting_helpers.add(fn.node.name)

    def _calls_helper(self, node: ast.Call) -> bool:
        name = _dotted(node.func)
        last = name.split(".")[-1]
        root = name.split(".")[0]
        # `helper(...)`, `self.helper(...)`, `helpers.helper(...)` (a module imported).
        return last in self.asserting_helpers and (name == last or root in ("self", "cls")
                                                   or root in self.imported)

    def _unresolved_call(self, fn: _Function) -> str | None:
        """A call in test ``fn`` the scan cannot follow that could assert: a name imported
        from a test or helper module outside the scanned files, a ``self.method`` inherited
        from a base class outside them, a fixture it requests and calls."""
        params = {a.arg for a in fn.node.args.args} - {"self", "cls"}
        local = {f.node.name for f in self.functions} | self.asserting_helpers
        defined = self.facts.defined
        in_class: set[str] = set()
        foreign_base = False
        if fn.cls is not None:
            in_class = {s.name for s in fn.cls.body
                        if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))}
            foreign_base = any(
                _dotted(b).split(".")[-1] not in TESTCASE_BASES for b in fn.cls.bases)
        for node in ast.walk(fn.node):
            if not isinstance(node, ast.Call):
                continue
            name = _dotted(node.func)
            if not name:
                continue
            root, *rest = name.split(".")
            last = name.split(".")[-1]
            if root in ("self", "cls") and len(rest) == 1:
                if foreign_base and last not in in_class and last not in local \
                        and last not in defined:
                    return name
                continue
            if root in params and not rest and root not in defined:
                return name  # a fixture outside the scan, called as a helper
            module = self.imported.get(root)
            if not rest:
                last = self.alias_of.get(root, root)
            if module is None or last in defined:
                continue
            if not rest:
                if TEST_MODULE.search(module.lstrip(".")) or (
                        module.startswith(".") and self.is_test_file):
                    return name
            elif TEST_MODULE.search(f"{module}.{'.'.join(rest[:-1])}".strip(".")) \
                    or TEST_MODULE.search(root):
                return name
        return None

    def _can_fail(self, fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
        constants = self.constants_for(fn)
        swallowed = _swallowed_nodes(fn) | _dead_nodes(fn, constants)
        fixture_args = {a.arg for a in fn.args.args} & self.asserting_helpers
        if fixture_args:
            return True  # a fixture that asserts runs for the test that requests it
        for node in (n for stmt in _reachable(fn.body) for n in ast.walk(stmt)):
            if id(node) in swallowed:
                continue
            if isinstance(node, ast.Assert):
                if not _always_holds(node.test, constants, self.identities):
                    return True
            elif isinstance(node, ast.Raise) and node.exc is not None:
                if _dotted(node.exc) != "NotImplementedError":
                    return True
            elif isinstance(node, ast.Call):
                name = _dotted(node.func).split(".")[-1] or (
                    node.func.attr if isinstance(node.func, ast.Attribute) else "")
                if name in FAILING_CALLS or self._calls_helper(node) or (
                        ASSERT_HELPER.match(name)
                        and not _trivial_assert_call(node, constants, self.identities)):
                    return True
        return False

    def _why_hollow(self, fn: _Function) -> str:
        node = fn.node
        swallowed = _swallowed_nodes(node)
        asserts = [n for n in ast.walk(node) if isinstance(n, ast.Assert)
                   or (isinstance(n, ast.Call) and ASSERT_HELPER.match(
                       _dotted(n.func).split(".")[-1]))]
        if asserts and all(id(n) in swallowed for n in asserts):
            return "its assertions are inside a `try` whose `except` swallows the failure"
        reachable = {id(n) for stmt in _reachable(node.body) for n in ast.walk(stmt)}
        if asserts and not any(id(n) in reachable for n in asserts):
            return "its assertions come after an unconditional `return` or skip, so they never run"
        dead = _dead_nodes(node, self.constants_for(node))
        if asserts and all(id(n) in dead or id(n) in swallowed for n in asserts):
            return ("its assertions never run (in a loop over an empty collection, or a "
                    "branch or block that is never reached)")
        if asserts:
            return ("its only assertions always hold (a literal, `x == x`, literals compared "
                    "with literals, `len(x) >= 0`, `x or not x`)")
        return "no assert, no expected-exception check, no assert helper"

    def _benchmark_file(self, tree: ast.Module) -> bool:
        """``pytestmark = pytest.mark.benchmark(...)``: every test here measures speed."""
        for node in tree.body:
            if isinstance(node, ast.Assign) and any(
                    isinstance(t, ast.Name) and t.id == "pytestmark" for t in node.targets):
                values = node.value.elts if isinstance(node.value, (ast.List, ast.Tuple)) \
                    else [node.value]
                if any(_dotted(v).split(".")[-1] in BENCHMARK_MARKS for v in values):
                    return True
        return False

    def hollow_tests(self, tree: ast.Module | None = None) -> None:
        benchmarks = tree is not None and self._benchmark_file(tree)
        for fn in self.functions:
            if not self._is_test(fn) or fn.exempt:
                continue
            wrapped = self._assert_in_broad_raises(fn.node)
            if wrapped is not None:
                expected, line = wrapped
                self.add("hollow_test", "high", line,
                         f"test `{fn.node.name}` asserts inside `{expected}`: a failing "
                         "assertion raises AssertionError, which is the expected exception, "
                         "so the assertion's failure passes the test", end=fn.end, scope=fn.scope)
                continue
            if self._can_fail(fn.node):
                self.mocked_subject(fn)
                self._broad_raises(fn)
                continue
            decorators = {_dotted(d).split(".")[-1] for d in fn.node.decorator_list}
            params = {a.arg for a in fn.node.args.args}
            if benchmarks or decorators & BENCHMARK_MARKS or "benchmark" in params:
                continue  # a benchmark measures time; it does not assert behaviour
            why = self._why_hollow(fn)
            severity: Severity = "high"
            unresolved = self._unresolved_call(fn) if why.startswith("no assert") else None
            if unresolved is not None:
                # Its helper is defined outside the scanned files: it may well assert.
                severity = "medium"
                why = (f"no assertion the scan can see; it calls `{unresolved}`, defined "
                       "outside the scanned files, which may assert")
            elif why.startswith("no assert") and self._says_nothing_raises(fn, decorators):
                # "does not raise" is the assertion: said in its name, docstring or
                # comments, or checked over many inputs (parametrize, hypothesis).
                severity = "medium"
                why = ("it only checks that nothing raises (as its name, docstring, comments "
                       "or parameters say)")
            self.add("hollow_test", severity, fn.start,
                     f"test `{fn.node.name}` cannot fail: {why}", end=fn.end, scope=fn.scope)

    @staticmethod
    def _broad_expectations(fn: ast.FunctionDef | ast.AsyncFunctionDef
                            ) -> list[tuple[ast.With | ast.AsyncWith, ast.Call]]:
        """``with pytest.raises(Exception):`` / ``self.assertRaises(BaseException)`` blocks
        without a ``match=``: any error at all is the expected one."""
        found = []
        for node in ast.walk(fn):
            if not isinstance(node, (ast.With, ast.AsyncWith)):
                continue
            for item in node.items:
                call = item.context_expr
                if isinstance(call, ast.Call) and _dotted(call.func).split(".")[-1] in (
                        "raises", "assertRaises") and call.args \
                        and _dotted(call.args[0]).split(".")[-1] in BROAD_EXCEPTIONS \
                        and not any(k.arg == "match" for k in call.keywords):
                    found.append((node, call))
        return found

    def _assert_in_broad_raises(self, fn: ast.FunctionDef | ast.AsyncFunctionDef
                                ) -> tuple[str, int] | None:
        """An ``assert`` statement directly in a block expecting any exception (or
        AssertionError itself): its failure is what the block expects."""
        for block, call in self._broad_expectations(fn):
            for stmt in block.body:
                for node in ast.walk(stmt):
                    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                        break
                    if isinstance(node, ast.Assert):
                        return f"{_dotted(call.func)}({ast.unparse(call.args[0])})", node.lineno
        return None

    def _unbindable_call(self, block: ast.With | ast.AsyncWith) -> str | None:
        """A call in ``block`` to a function of the scanned tree that its arguments cannot
        bind to (a keyword it has no parameter for, too many or too few positional
        arguments): it raises TypeError whatever the function does."""
        for stmt in block.body:
            for node in ast.walk(stmt):
                if not isinstance(node, ast.Call) or any(
                        isinstance(a, ast.Starred) for a in node.args) or any(
                        k.arg is None for k in node.keywords):
                    continue
                name = _dotted(node.func)
                root, *rest = name.split(".") if name else [""]
                if not root or root not in self.imported or len(rest) > 1:
                    continue
                last = rest[0] if rest else self.alias_of.get(root, root)
                signature = self.facts.signatures.get(last)
                if signature is None:
                    continue
                problem = signature.refuses(len(node.args), [k.arg for k in node.keywords
                                                              if k.arg])
                if problem is not None:
                    return f"`{ast.unparse(node)[:60]}`: {last}() {problem}"
        return None

    def _broad_raises(self, fn: _Function) -> None:
        """``pytest.raises(Exception)`` around the code: a TypeError from a wrong call, a
        NameError or an AttributeError passes it as well as the intended error (medium:
        a reader judges whether the code's error type is really unknown; high when a call
        in the block cannot bind to the function it calls, so it raises TypeError)."""
        for block, call in self._broad_expectations(fn.node):
            if _dotted(call.args[0]).split(".")[-1] == "AssertionError":
                continue
            unbindable = self._unbindable_call(block)
            if unbindable is not None:
                self.add("hollow_test", "high", call.lineno,
                         f"test `{fn.node.name}` expects any exception "
                         f"(`{_dotted(call.func)}({ast.unparse(call.args[0])})`) around a call "
                         f"that cannot bind, {unbindable}: the TypeError passes the test "
                         "whatever the code does", end=fn.end, scope=fn.scope)
                continue
            self.add("hollow_test", "medium", call.lineno,
                     f"test `{fn.node.name}` expects any exception "
                     f"(`{_dotted(call.func)}({ast.unparse(call.args[0])})` without `match=`): "
                     "a TypeError from a wrong call or an AttributeError passes it too",
                     scope=fn.scope)

    def _says_nothing_raises(self, fn: _Function, decorators: set[str]) -> bool:
        """Only a test that visibly checks that nothing raises: said in its name, docstring
        or comments with the words, a ``with does_not_raise():`` block, or many inputs
        (parametrize, hypothesis). A name like ``test_checkout_success`` says nothing of
        the kind: without an assertion it is hollow."""
        if NOT_RAISE.search(fn.node.name) or decorators & MANY_INPUTS:
            return True
        for node in ast.walk(fn.node):
            if isinstance(node, (ast.With, ast.AsyncWith)) and any(
                    _dotted(item.context_expr).split(".")[-1] in NOT_RAISE_CONTEXT
                    for item in node.items):
                return True
        doc = ast.get_docstring(fn.node) or ""
        comments = [line.split("#", 1)[1] for line in self.lines[fn.marker_start - 1:fn.end]
                    if "#" in line]
        said = " ".join([doc, *comments])
        if MARKER.search(said) or UNFINISHED_SAID.search(said):
            return False  # "TODO: assert something" is not a reason
        return bool(NOT_RAISE_SAID.search(said))

    def mocked_subject(self, fn: _Function) -> None:
        """The unit a test is named after replaced by a mock in that test. A standard
        library function of the same name (``mock.patch("os.write")`` in ``test_write``
        of ``Pipe.write``) is a dependency of the unit, not the unit."""
        subject = fn.node.name.removeprefix("test_")
        if len(subject) < 3:
            return
        for node in ast.walk(fn.node):
            for patched, line in _patched_targets(node):
                target = patched.split(".")[-1]
                if target and subject == target and not _stdlib_target(patched):
                    self.add("hollow_test", "high", line,
                             f"test `{fn.node.name}` replaces the unit it tests, `{target}`, "
                             "with a mock: it checks the mock, not the code",
                             end=fn.end, scope=fn.scope)
                    return
        for decorator in fn.node.decorator_list:
            for patched, line in _patched_targets(decorator):
                target = patched.split(".")[-1]
                if subject == target and not _stdlib_target(patched):
                    self.add("hollow_test", "high", line,
                             f"test `{fn.node.name}` replaces the unit it tests, `{target}`, "
                             "with a mock: it checks the mock, not the code",
                             end=fn.end, scope=fn.scope)
                    return

    # -- tests switched off ------------------------------------------------------------

    def skipped_tests(self, tree: ast.Module, comment_lines: list[tuple[int, str]]) -> None:
        seen: set[int] = set()

        def flag(line: int, severity: Severity, message: str, scope: int | None = None,
                 end: int | None = None) -> None:
            if line not in seen:
                seen.add(line)
                self.add("skipped_test", severity, line, message, scope=scope, end=end)

        decorated: dict[int, _Function] = {}
        for fn in self.functions:
            for decorator in fn.node.decorator_list:
                decorated[id(decorator)] = fn
        classes = [n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)]
        targets: list[tuple[ast.expr, int | None]] = []
        for fn in self.functions:
            targets += [(d, fn.scope) for d in fn.node.decorator_list]
        for cls in classes:
            targets += [(d, None) for d in cls.decorator_list]
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and any(
                    isinstance(t, ast.Name) and t.id == "pytestmark" for t in node.targets):
                values = node.value.elts if isinstance(node.value, (ast.List, ast.Tuple)) \
                    else [node.value]
                targets += [(v, None) for v in values]
        aliases = _skip_aliases(tree)
        for decorator, scope in targets:
            severity, message = _skip_decorator(_resolve_skip(decorator, aliases))
            if severity is not None and isinstance(decorator, ast.Name):
                message = f"{message} (through `@{decorator.id}`)"
            if severity is not None and (self.is_test_file or "mark" in _dotted(decorator)):
                flag(decorator.lineno, severity, message, scope=scope)
        for fn in self.functions:
            if not self._is_test(fn):
                continue
            for index, stmt in enumerate(fn.node.body):
                call = stmt.value if isinstance(stmt, ast.Expr) else None
                if isinstance(call, ast.Call) and _dotted(call.func) in SKIP_CALLS:
                    flag(stmt.lineno, "high",
                         f"test `{fn.node.name}` skips itself unconditionally: "
                         f"`{_dotted(call.func)}(...)`", scope=fn.scope)
            for node in ast.walk(fn.node):
                if isinstance(node, ast.Call) and _dotted(node.func) in SKIP_CALLS \
                        and node.lineno not in seen:
                    flag(node.lineno, "medium",
                         f"test `{fn.node.name}` skips itself when a condition holds: "
                         f"`{_dotted(node.func)}(...)`", scope=fn.scope)
        if self.is_test_file:
            for stmt in tree.body:
                # `pytest.skip(..., allow_module_level=True)` / `raise SkipTest` at the top.
                found = _raises_skip([stmt])
                if found is not None:
                    flag(found.lineno, "high", "every test of the module is skipped "
                         f"unconditionally: `{ast.unparse(found)[:80]}`")
                elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) \
                        and stmt.name == "setUpModule":
                    found = _raises_skip(stmt.body)
                    if found is not None:
                        flag(found.lineno, "high", "every test of the module is skipped "
                             f"unconditionally in setUpModule: `{ast.unparse(found)[:80]}`")
            for cls in classes:
                for stmt in cls.body:
                    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name in (
                            "setUpClass", "setUp", "setup_class", "setup_method", "asyncSetUp"):
                        found = _raises_skip(stmt.body)
                        if found is not None:
                            flag(found.lineno, "high", f"every test of `{cls.name}` is skipped "
                                 f"unconditionally in {stmt.name}: `{ast.unparse(found)[:80]}`")
            for line, text in comment_lines:
                if COMMENTED_TEST.match(text.strip()):
                    flag(line, "high", f"commented-out test: {text.strip()[:120]}")
            self.tests_never_run(tree, flag)

    def tests_never_run(self, tree: ast.Module,
                        flag: Callable[..., None]) -> None:
        """Tests the runner never runs, though nothing says skip: parametrized over no
        cases, defined under ``if False:``, replaced by a later test of the same name,
        or asserting in a function it never collects (not named ``test*``) that nothing
        calls."""
        for fn in self.functions:
            if not self._is_test(fn):
                continue
            for decorator in fn.node.decorator_list:
                if not isinstance(decorator, ast.Call) \
                        or _dotted(decorator).split(".")[-1] != "parametrize":
                    continue
                values = decorator.args[1] if len(decorator.args) > 1 else next(
                    (k.value for k in decorator.keywords if k.arg == "argvalues"), None)
                if values is not None and _empty_iterable(values, self.module_constants):
                    flag(decorator.lineno, "high",
                         f"test `{fn.node.name}` is parametrized over no cases "
                         f"(`{ast.unparse(values)[:40]}` is empty): it never runs",
                         scope=fn.scope, end=fn.end)
            if fn.dead is not None:
                flag(fn.start, "high", f"test `{fn.node.name}` is defined under `{fn.dead}`, "
                     "which never holds: it is never collected", scope=fn.scope, end=fn.end)
        scopes: list[list[ast.stmt]] = [tree.body] + [
            n.body for n in ast.walk(tree) if isinstance(n, ast.ClassDef)]
        by_node = {id(fn.node): fn for fn in self.functions}
        for body in scopes:
            last: dict[str, ast.stmt] = {}
            for stmt in body:
                if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    last[stmt.name] = stmt
            for stmt in body:
                found = by_node.get(id(stmt))
                if found is None or not self._is_test(found):
                    continue
                name = found.node.name
                if last[name] is stmt or {_dotted(d).split(".")[-1] for d in
                                          found.node.decorator_list} & OVERLOAD_DECORATORS:
                    continue
                flag(found.start, "high",
                     f"test `{name}` is replaced by another `{name}` at line "
                     f"{last[name].lineno}: this one never runs", scope=found.scope,
                     end=found.end)
        if not TEST_FILE_NAME.search(self.path.rsplit("/", 1)[-1]):
            return
        referenced = self.facts.referenced | _referenced_names(tree)
        for fn in self.functions:
            node = fn.node
            params = [a.arg for a in (*node.args.posonlyargs, *node.args.args,
                                      *node.args.kwonlyargs)]
            in_test_class = fn.cls is not None and _is_test_class(fn.cls)
            if fn.nested or node.decorator_list or node.name.startswith(("test", "_")) \
                    or node.name in referenced or fn.dead is not None \
                    or HOOK_NAME.match(node.name):
                continue
            if fn.cls is None and params or fn.cls is not None and (
                    not in_test_class or params != ["self"]):
                continue  # a helper that takes arguments is called, not collected
            if node.args.vararg or node.args.kwarg or not self._can_fail(node):
                continue
            flag(fn.start, "high",
                 f"`{node.name}` asserts like a test but is never run: the runner only "
                 "collects names starting with `test`, and nothing calls it",
                 scope=fn.scope, end=fn.end)

    # -- swallowed errors ----------------------------------------------------------------

    def swallowed_errors(self, tree: ast.Module) -> None:
        """``except Exception: pass`` in shipped code hides failures (medium: sometimes the
        right call, so a reader decides; in a test it is part of a hollow test)."""
        if self.is_test_file:
            return
        for node in ast.walk(tree):
            if isinstance(node, (ast.With, ast.AsyncWith)):
                for item in node.items:
                    call = item.context_expr
                    if isinstance(call, ast.Call) \
                            and _dotted(call.func).split(".")[-1] == "suppress" and any(
                                _dotted(a).split(".")[-1] in ("Exception", "BaseException")
                                for a in call.args):
                        owner = self.innermost(node.lineno)
                        self.add("swallowed_error", "medium", node.lineno,
                                 f"`with {ast.unparse(call)}:` does nothing with the error: "
                                 "every failure in the block is hidden", end=node.end_lineno,
                                 scope=owner.scope if owner else None)
            if not isinstance(node, ast.ExceptHandler):
                continue
            caught = node.type
            names = ["bare"] if caught is None else (
                [_dotted(e).split(".")[-1] for e in caught.elts]
                if isinstance(caught, ast.Tuple) else [_dotted(caught).split(".")[-1]])
            if not ({"bare", "Exception", "BaseException"} & set(names)):
                continue
            if _empty_body_kind(node.body) is None and not all(
                    isinstance(s, ast.Continue) for s in node.body):
                continue
            owner = self.innermost(node.lineno)
            spelled = "except:" if caught is None else f"except {ast.unparse(caught)}:"
            self.add("swallowed_error", "medium", node.lineno,
                     f"`{spelled}` does nothing with the error: every failure here is hidden",
                     end=node.end_lineno, scope=owner.scope if owner else None)


_VERSION = object()  # `sys.version_info`: only its major version is known (3)
_COMPARE = {ast.Eq: lambda a, b: a == b, ast.NotEq: lambda a, b: a != b,
            ast.Lt: lambda a, b: a < b, ast.LtE: lambda a, b: a <= b,
            ast.Gt: lambda a, b: a > b, ast.GtE: lambda a, b: a >= b,
            ast.Is: lambda a, b: a is b, ast.IsNot: lambda a, b: a is not b,
            ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b}


def _constant_value(node: ast.expr, *, text: bool = True) -> object:
    """The value of a condition made only of literals, ``True``/``False``/``None``,
    ``not``/``and``/``or``, comparisons, ``bool()``/``int()``/``len()`` of those, and
    ``sys.version_info`` compared on its major version (``>= (3,)``, ``[0] == 3``); a
    string is the expression pytest evaluates. ``_NO_VALUE`` when it depends on more."""
    if isinstance(node, ast.Constant):
        if isinstance(node.value, str) and text:
            try:
                parsed = ast.parse(node.value.strip(), mode="eval").body
            except SyntaxError:
                return _NO_VALUE
            return _constant_value(parsed, text=False)
        return node.value
    if isinstance(node, (ast.Tuple, ast.List)):
        values = [_constant_value(e, text=False) for e in node.elts]
        return _NO_VALUE if any(v is _NO_VALUE for v in values) else tuple(values)
    dotted = _dotted(node)
    if dotted in ("sys.version_info", "version_info"):
        return _VERSION
    if isinstance(node, ast.Subscript) and _dotted(node.value) in ("sys.version_info",
                                                                    "version_info") \
            and isinstance(node.slice, ast.Constant) and node.slice.value == 0:
        return 3
    if dotted in ("sys.version_info.major", "version_info.major"):
        return 3
    if isinstance(node, ast.UnaryOp):
        operand = _constant_value(node.operand, text=False)
        if operand is _NO_VALUE or operand is _VERSION:
            return _NO_VALUE
        try:
            if isinstance(node.op, ast.Not):
                return not operand
            if isinstance(node.op, ast.USub):
                return -operand  # type: ignore[operator]
        except TypeError:
            return _NO_VALUE
        return _NO_VALUE
    if isinstance(node, ast.BoolOp):
        unknown = False
        value: object = None
        for operand in node.values:
            value = _constant_value(operand, text=False)
            if value is _NO_VALUE or value is _VERSION:
                unknown = True
                continue
            if isinstance(node.op, ast.Or) and value:
                return value  # `True or anything` holds whatever the rest is
            if isinstance(node.op, ast.And) and not value:
                return value
        return _NO_VALUE if unknown else value
    if isinstance(node, ast.Compare):
        left = _constant_value(node.left, text=False)
        for op, right_node in zip(node.ops, node.comparators, strict=True):
            right = _constant_value(right_node, text=False)
            if left is _NO_VALUE or right is _NO_VALUE or type(op) not in _COMPARE:
                return _NO_VALUE
            if left is _VERSION or right is _VERSION:
                other = right if left is _VERSION else left
                if not (isinstance(other, tuple) and len(other) == 1
                        and isinstance(other[0], int)):
                    return _NO_VALUE  # (3, 8): depends on the interpreter
                # Every Python 3 compares with a 1-tuple as (3, 0, 0) does.
                left, right = ((3, 0, 0), other) if left is _VERSION else (other, (3, 0, 0))
            try:
                if not _COMPARE[type(op)](left, right):
                    return False
            except TypeError:
                return _NO_VALUE
            left = right
        return True
    if isinstance(node, ast.Call) and dotted in ("bool", "int", "len", "str") \
            and len(node.args) == 1 and not node.keywords:
        argument = _constant_value(node.args[0], text=False)
        if argument is _NO_VALUE or argument is _VERSION:
            return _NO_VALUE
        try:
            return {"bool": bool, "int": int, "len": len, "str": str}[dotted](argument)  # type: ignore[operator]
        except (TypeError, ValueError):
            return _NO_VALUE
    return _NO_VALUE


def _skip_aliases(tree: ast.Module) -> dict[str, ast.expr]:
    """Module-level names bound to a skip or xfail marker (``later = pytest.mark.skip(...)``,
    ``py2_only = unittest.skipIf(...)``): ``@later`` switches a test off as the marker does."""
    aliases: dict[str, ast.expr] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 \
                and isinstance(node.targets[0], ast.Name) and node.targets[0].id != "pytestmark" \
                and _skip_decorator(node.value)[0] is not None:
            aliases[node.targets[0].id] = node.value
    return aliases


def _resolve_skip(node: ast.expr, aliases: dict[str, ast.expr]) -> ast.expr:
    if isinstance(node, ast.Name) and node.id in aliases:
        return aliases[node.id]
    return node


def _raises_skip(body: list[ast.stmt]) -> ast.stmt | None:
    """An unconditional skip in a setup body (``raise unittest.SkipTest(...)``,
    ``self.skipTest(...)``, ``pytest.skip(...)``), reached whatever happens."""
    for stmt in _reachable(body):
        if isinstance(stmt, ast.Raise) and stmt.exc is not None \
                and _dotted(stmt.exc).split(".")[-1] == "SkipTest":
            return stmt
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) \
                and _dotted(stmt.value.func) in SKIP_CALLS:
            return stmt
    return None


def _skip_decorator(node: ast.expr) -> tuple[Severity | None, str]:
    """How a decorator switches a test off: unconditional skip or non-strict xfail is
    high, a skip on a real condition with a reason is medium, a strict xfail is low."""
    dotted = _dotted(node)
    parts = dotted.split(".")
    last = parts[-1] if parts else ""
    call = node if isinstance(node, ast.Call) else None
    keywords = {k.arg: k.value for k in call.keywords} if call else {}
    if len(parts) >= 2 and parts[-2] == "mark" or last in ("skip", "skipIf", "skipUnless",
                                                            "expectedFailure"):
        if last == "skip":
            return "high", f"test skipped unconditionally: `@{dotted}`"
        if last == "expectedFailure":
            return "high", f"test expected to fail (it can never turn red): `@{dotted}`"
        if last == "xfail":
            strict = keywords.get("strict")
            if isinstance(strict, ast.Constant) and strict.value is True:
                return "low", f"test expected to fail, strictly: `@{dotted}(strict=True)`"
            if call is not None and call.args and not _always_holds(call.args[0]):
                return "medium", f"test expected to fail when a condition holds: `@{dotted}`"
            return "high", (f"test marked xfail without strict=True: it passes whether or not "
                            f"the code works: `@{dotted}`")
        if last in ("skipif", "skipIf", "skipUnless"):
            condition = call.args[0] if call is not None and call.args else keywords.get("condition")
            reason = keywords.get("reason") or (call.args[1] if call and len(call.args) > 1
                                                else None)
            if condition is None:
                return "high", f"test skipped unconditionally: `@{dotted}`"
            value = _constant_value(condition)
            if value is not _NO_VALUE and value is not _VERSION:
                skips = bool(value) if last != "skipUnless" else not value
                if not skips:
                    return None, ""
                return "high", f"test skipped unconditionally (a constant condition): `@{dotted}`"
            if reason is None:
                return "high", f"test skipped on a condition with no reason given: `@{dotted}`"
            return "medium", f"test skipped when a condition holds: `@{dotted}`"
    return None, ""


def _swallowed_nodes(fn: ast.AST) -> set[int]:
    """ids of the nodes inside a ``try`` body whose handler swallows assertion failures."""
    out: set[int] = set()
    for node in ast.walk(fn):
        swallowing = (isinstance(node, ast.Try) and any(
            _catches_assertions(h) for h in node.handlers)) or (
            isinstance(node, (ast.With, ast.AsyncWith)) and any(
                _suppresses_assertions(item.context_expr) for item in node.items))
        if swallowing:
            for stmt in node.body:  # type: ignore[attr-defined]
                out |= {id(n) for n in ast.walk(stmt)}
    return out


def _suppresses_assertions(expr: ast.expr) -> bool:
    """``contextlib.suppress(AssertionError)`` (or Exception): a ``try/except: pass``."""
    if not (isinstance(expr, ast.Call) and _dotted(expr.func).split(".")[-1] == "suppress"):
        return False
    return any(_dotted(a).split(".")[-1] in BROAD_EXCEPTIONS for a in expr.args)


def _stdlib_target(patched: str) -> bool:
    """``os.write``, ``time.sleep``, ``builtins.open``: the standard library's."""
    parts = patched.split(".")
    return len(parts) > 1 and parts[0] in sys.stdlib_module_names


def _patched_targets(node: ast.AST) -> list[tuple[str, int]]:
    """What ``patch("pkg.mod.name")``, ``patch.object(mod, "name")``, ``mocker.patch(...)``
    and ``monkeypatch.setattr(mod, "name", ...)`` replace, as dotted text."""
    if not isinstance(node, ast.Call):
        return []
    name = _dotted(node.func)
    if name not in MOCK_CALLS and not name.endswith((".patch", ".patch.object")):
        return []
    args = node.args
    if name.endswith(("object", "setattr")):
        if len(args) >= 2 and isinstance(args[1], ast.Constant) and isinstance(args[1].value, str):
            owner = _dotted(args[0])
            return [(f"{owner}.{args[1].value}" if owner else args[1].value, node.lineno)]
        if name.endswith("setattr") and args and isinstance(args[0], ast.Constant) \
                and isinstance(args[0].value, str):
            return [(args[0].value, node.lineno)]
        return []
    if args and isinstance(args[0], ast.Constant) and isinstance(args[0].value, str):
        return [(args[0].value, node.lineno)]
    return []


# -- the hard-coded answer: a function returning the literal its test expects ----------


@dataclass(frozen=True)
class ConstantReturn:
    """A function that ignores its arguments and returns one literal."""

    file: str
    name: str
    line: int
    value: object
    scope: int
    end: int


def constant_returns(path: str, source: str) -> list[ConstantReturn]:
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        params = [a.arg for a in (*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs)
                  if a.arg not in ("self", "cls")]
        if not params:
            continue
        body = [s for s in node.body if not _is_docstring(s)]
        if len(body) != 1 or not isinstance(body[0], ast.Return) or body[0].value is None:
            continue
        value = _literal(body[0].value)
        if value is _NO_VALUE or value is None or isinstance(value, bool):
            continue
        used = {n.id for n in ast.walk(body[0]) if isinstance(n, ast.Name)}
        if used & set(params) or _documented_constant(ast.get_docstring(node) or "", params):
            continue
        scope = min([node.lineno, *(d.lineno for d in node.decorator_list)])
        found.append(ConstantReturn(path, node.name, body[0].lineno, value, scope,
                                    node.end_lineno or node.lineno))
    return found


# A docstring saying why the arguments do not matter ("conn is accepted for API
# symmetry", "`value` is ignored"): a documented constant, not a hard-coded answer.
DELIBERATE_CONSTANT = re.compile(r"\b(?:ignored|unused|not\s+used|accepted\s+(?:for|only\s+for)|"
                                 r"kept\s+for|for\s+(?:api\s+)?(?:symmetry|compatibility|"
                                 r"compat))\b", re.IGNORECASE)


def _documented_constant(doc: str, params: list[str]) -> bool:
    """The docstring names a parameter and says it is ignored on purpose."""
    if not doc or UNFINISHED_SAID.search(doc) or MARKER.search(doc):
        return False
    return bool(DELIBERATE_CONSTANT.search(doc)) and any(
        re.search(rf"\b{re.escape(p)}\b", doc) for p in params)


def expected_literals(source: str) -> dict[str, list[object]]:
    """function name -> literals a test compares its result with (``assert f(x) == 5``,
    ``assertEqual(f(x), 5)``, ``result = f(x)`` then ``assert result == 5``)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return {}
    out: dict[str, list[object]] = {}

    def called(node: ast.expr, results: dict[str, str]) -> str | None:
        if isinstance(node, ast.Call):
            # `vat(...)`, `tax.vat(...)`, `Tax().vat(...)`: the function or method called.
            name = node.func.attr if isinstance(node.func, ast.Attribute) else _dotted(node.func)
            return name or None
        if isinstance(node, ast.Name):
            return results.get(node.id)
        return None

    for fn in ast.walk(tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        results: dict[str, str] = {}
        for node in ast.walk(fn):
            if isinstance(node, ast.Assign) and len(node.targets) == 1 \
                    and isinstance(node.targets[0], ast.Name) and isinstance(node.value, ast.Call):
                func = node.value.func
                results[node.targets[0].id] = func.attr if isinstance(func, ast.Attribute) \
                    else _dotted(func)
        for node in ast.walk(fn):
            pairs: list[tuple[ast.expr, ast.expr]] = []
            if isinstance(node, ast.Assert) and isinstance(node.test, ast.Compare) \
                    and len(node.test.ops) == 1 and isinstance(node.test.ops[0], ast.Eq):
                pairs.append((node.test.left, node.test.comparators[0]))
            elif isinstance(node, ast.Call) and _dotted(node.func).split(".")[-1] in (
                    "assertEqual", "assertEquals") and len(node.args) >= 2:
                pairs.append((node.args[0], node.args[1]))
            for left, right in pairs:
                for call_side, literal_side in ((left, right), (right, left)):
                    name = called(call_side, results)
                    value = _literal(literal_side)
                    if name and value is not _NO_VALUE:
                        out.setdefault(name, []).append(value)
    return out


def scan_python(path: str, source: str, *, is_test_file: bool, truncated: bool = False,
                facts: TreeFacts | None = None) -> list[Finding]:
    scanner = _Scanner(path, source, is_test_file=is_test_file, facts=facts)
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
        if is_test_file:
            for line, text in comment_lines:
                if COMMENTED_TEST.match(text.strip()):
                    scanner.add("skipped_test", "high", line,
                                f"commented-out test: {text.strip()[:120]}")
        return scanner.issues
    scanner.collect_constants(tree)
    scanner.collect_functions(tree)
    scanner.collect_aliases(tree)
    scanner.collect_helpers()
    scanner.stubs(tree, comment_lines)
    scanner.markers(comment_lines)
    scanner.hollow_tests(tree)
    scanner.skipped_tests(tree, comment_lines)
    scanner.swallowed_errors(tree)
    return scanner.issues


@dataclass(frozen=True)
class FileTests:
    """A test file's test functions, which of them are switched off, and what it imports."""

    imports: frozenset[str]  # dotted module names, ``from a.b import c`` giving a.b and a.b.c
    tests: tuple[str, ...]  # qualified test names (``TestX.test_y``)
    off: dict[str, tuple[int, str]]  # test -> (line, how it is switched off)


def tests_of_file(source: str) -> FileTests | None:
    """The tests of a Python test file and which of them can never run (an unconditional
    skip or a non-strict xfail on the test, its class or the module's ``pytestmark``, or
    an unconditional skip call first thing in its body); None when it does not parse."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    imports: set[str] = set()
    bound: dict[str, str] = {}  # a local name -> the module (or its member) it is
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imports.update(alias.name for alias in node.names)
            for alias in node.names:
                local = alias.asname or alias.name.split(".")[0]
                bound[local] = alias.name if alias.asname else local
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            imports.add(node.module)
            imports.update(f"{node.module}.{alias.name}" for alias in node.names)
            for alias in node.names:
                bound[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    # `import pkg` then `pkg.mod.f()`: the test reaches pkg.mod through attributes.
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
            root, *rest = _dotted(node).split(".")
            if root in bound and rest:
                chain = bound[root]
                for part in rest:
                    chain = f"{chain}.{part}"
                    imports.add(chain)

    skip_aliases = _skip_aliases(tree)

    def switched_off(decorators: Iterable[ast.expr]) -> tuple[int, str] | None:
        for decorator in decorators:
            severity, message = _skip_decorator(_resolve_skip(decorator, skip_aliases))
            if severity == "high":
                return decorator.lineno, message
        return None

    def skips_first(body: list[ast.stmt]) -> tuple[int, str] | None:
        """An unconditional skip call as the first statement (after a docstring)."""
        statements = [n for n in body if not (isinstance(n, ast.Expr) and isinstance(
            n.value, ast.Constant) and isinstance(n.value.value, str))]
        first = statements[0] if statements else None
        call = first.value if isinstance(first, ast.Expr) else None
        if first is not None and isinstance(call, ast.Call) and _dotted(call.func) in SKIP_CALLS:
            return first.lineno, f"the test skips itself: `{_dotted(call.func)}(...)`"
        return None

    module_off = None
    for node in tree.body:
        value: ast.expr | None = None
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        if value is not None and any(isinstance(t, ast.Name) and t.id == "pytestmark"
                                     for t in targets):
            values = value.elts if isinstance(value, (ast.List, ast.Tuple)) else [value]
            module_off = module_off or switched_off(values)
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) \
                and _dotted(node.value.func) == "pytest.skip":
            # `pytest.skip(..., allow_module_level=True)` at the top, under no condition.
            module_off = module_off or (node.lineno, "the module skips itself: `pytest.skip(...)`")
    tests: list[str] = []
    off: dict[str, tuple[int, str]] = {}

    def visit(body: list[ast.stmt], prefix: str, inherited: tuple[int, str] | None) -> None:
        for node in body:
            if isinstance(node, ast.ClassDef) and (
                    node.name.startswith("Test") or node.name.endswith(("Test", "Tests"))
                    or any(_dotted(b).endswith("TestCase") for b in node.bases)):
                setup = next((n for n in node.body if isinstance(
                    n, (ast.FunctionDef, ast.AsyncFunctionDef))
                    and n.name in ("setUp", "setUpClass", "setup_method", "setup_class")), None)
                raised = _raises_skip(setup.body) if setup is not None else None
                visit(node.body, f"{prefix}{node.name}.",
                      inherited or switched_off(node.decorator_list)
                      or (skips_first(setup.body) if setup is not None else None)
                      or ((raised.lineno, f"the class skips itself: `{ast.unparse(raised)[:60]}`")
                          if raised is not None else None))
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) \
                    and node.name.startswith("test"):
                name = prefix + node.name
                tests.append(name)
                reason = inherited or switched_off(node.decorator_list)
                first = node.body[0] if node.body else None
                call = first.value if isinstance(first, ast.Expr) else None
                if reason is None and first is not None and isinstance(call, ast.Call) \
                        and _dotted(call.func) in SKIP_CALLS:
                    reason = (first.lineno, f"the test skips itself: `{_dotted(call.func)}(...)`")
                if reason is not None:
                    off[name] = reason

    visit(tree.body, "", module_off)
    return FileTests(imports=frozenset(imports), tests=tuple(tests), off=off)


# -- what the scan knows across files ----------------------------------------------------

# A file pytest and unittest discovery collect tests from (conftest and helpers are not).
TEST_FILE_NAME = re.compile(r"^(?:test_.*|.*_test)\.py$")
# Functions a framework calls by name (set-up, tear-down, pytest hooks, load_tests).
HOOK_NAME = re.compile(r"^(?:setUp|tearDown|setup|teardown|pytest_|load_tests$|runTest$|"
                       r"asyncSetUp|asyncTearDown)")
OVERLOAD_DECORATORS = frozenset({"overload", "setter", "getter", "deleter", "register"})


def _is_test_class(cls: ast.ClassDef) -> bool:
    return cls.name.startswith("Test") or cls.name.endswith(("Test", "Tests")) or any(
        _dotted(b).split(".")[-1].endswith("TestCase") for b in cls.bases)


def _referenced_names(tree: ast.AST) -> set[str]:
    """Every name a file uses (loaded names, attribute names, names in ``__all__`` and
    other strings that are identifiers): what may call a function defined elsewhere."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            found.add(node.id)
        elif isinstance(node, ast.Attribute):
            found.add(node.attr)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) \
                and node.value.isidentifier():
            found.add(node.value)
        elif isinstance(node, ast.alias):
            found.add(node.name.split(".")[-1])
    return found

# A module a test imports its helpers from: a test package, a support or helper module.
TEST_MODULE = re.compile(r"(?:^|\.)(?:[a-z0-9]+_)*(?:tests?|testing|conftest|support|helpers?|"
                         r"utils?|fixtures?|testlib|testutils?)(?:_[a-z0-9]+)*(?:\.|$)",
                         re.IGNORECASE)
# unittest bases whose methods the scan knows (a self.method of theirs is not a helper).
TESTCASE_BASES = frozenset({"TestCase", "IsolatedAsyncioTestCase", "object", "SimpleTestCase",
                            "TransactionTestCase", "AsyncTestCase"})


@dataclass(frozen=True)
class Signature:
    """What arguments a module-level function accepts."""

    positional: tuple[str, ...]  # positional-or-keyword (and positional-only) names
    required: int  # how many of them have no default
    keyword_only: frozenset[str]
    required_keyword: frozenset[str]
    star_args: bool
    star_kwargs: bool

    @classmethod
    def of(cls, node: ast.FunctionDef | ast.AsyncFunctionDef) -> Signature:
        args = node.args
        positional = [a.arg for a in (*args.posonlyargs, *args.args)]
        return cls(positional=tuple(positional),
                   required=len(positional) - len(args.defaults),
                   keyword_only=frozenset(a.arg for a in args.kwonlyargs),
                   required_keyword=frozenset(a.arg for a, d in zip(
                       args.kwonlyargs, args.kw_defaults, strict=True) if d is None),
                   star_args=args.vararg is not None, star_kwargs=args.kwarg is not None)

    def refuses(self, given: int, keywords: list[str]) -> str | None:
        """Why a call with ``given`` positional arguments and ``keywords`` fails to bind."""
        if given > len(self.positional) and not self.star_args:
            return f"takes {len(self.positional)} positional argument(s), given {given}"
        names = set(self.positional[:given])
        for keyword in keywords:
            if keyword in names:
                return f"gets `{keyword}` twice"
            if keyword not in self.positional and keyword not in self.keyword_only \
                    and not self.star_kwargs:
                return f"has no parameter `{keyword}`"
            names.add(keyword)
        missing = [p for p in self.positional[:self.required] if p not in names]
        missing += sorted(self.required_keyword - names)
        if missing:
            return f"is not given `{missing[0]}`"
        return None


@dataclass(frozen=True)
class TreeFacts:
    """What a file's scan needs to know about the other Python files scanned with it.

    ``subclassed``: class names some class in the tree derives from (``import X as Y``
    and ``module.X`` resolved to ``X``): a base's ``raise NotImplementedError`` or
    empty method is its contract when a subclass anywhere in the tree implements it.
    ``helpers``: functions and methods defined in the tree's test files (conftest,
    helper modules, base TestCases) that can make a caller fail; ``defined``: every
    function and method defined there (a call to one that is not a helper is resolved:
    it cannot fail). ``modules``: the dotted names the tree's Python files import as.
    """

    subclassed: frozenset[str] = frozenset()
    helpers: frozenset[str] = frozenset()
    defined: frozenset[str] = frozenset()
    modules: frozenset[str] = frozenset()
    implemented: frozenset[str] = frozenset()  # "Class.method" with a real body
    referenced: frozenset[str] = frozenset()  # every name some file of the tree uses
    # Module-level functions of the tree's code files defined once, by name.
    signatures: dict[str, Signature] = field(default_factory=dict)


def _import_aliases(tree: ast.Module) -> dict[str, str]:
    """Local name -> the name it was imported as (``from m import X as Y``: Y -> X)."""
    aliases: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                if alias.asname:
                    aliases[alias.asname] = alias.name
    return aliases


def _module_names(path: str) -> set[str]:
    parts = path[:-3].split("/") if path.endswith(".py") else path.split("/")
    if parts and parts[-1] == "__init__":
        parts = parts[:-1]
    return {".".join(parts[i:]) for i in range(len(parts))}


def tree_facts(files: dict[str, str] | Iterable[tuple[str, str]],
               is_test_file: Callable[[str], bool]) -> TreeFacts:
    """``TreeFacts`` of the Python files among ``files`` (path -> text)."""
    items = list(files.items()) if isinstance(files, dict) else list(files)
    subclassed: set[str] = set()
    implemented: set[str] = set()
    modules: set[str] = set()
    referenced: set[str] = set()
    signatures: dict[str, Signature | None] = {}
    scanners: list[_Scanner] = []
    for path, text in items:
        if not path.endswith((".py", ".pyi")):
            continue
        modules |= _module_names(path)
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError):
            continue
        aliases = _import_aliases(tree)
        referenced |= _referenced_names(tree)
        if not is_test_file(path):
            for stmt in tree.body:
                if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) \
                        and not stmt.decorator_list:
                    # Two definitions of a name: which one a test calls is not known.
                    signatures[stmt.name] = Signature.of(stmt) \
                        if stmt.name not in signatures else None
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                implemented |= _implemented_methods(node)
                for base in node.bases:
                    name = _dotted(base.value if isinstance(base, ast.Subscript) else base)
                    last = name.split(".")[-1]
                    if last:
                        subclassed.add(aliases.get(last, last))
        if is_test_file(path):
            scanner = _Scanner(path, text, is_test_file=True)
            scanner.collect_functions(tree)
            scanner.collect_aliases(tree)
            scanners.append(scanner)
    defined = {fn.node.name for s in scanners for fn in s.functions if not fn.nested}
    helpers: set[str] = set()
    for _ in range(3):
        before = len(helpers)
        for scanner in scanners:
            scanner.asserting_helpers |= helpers
            scanner.collect_helpers()
            helpers |= {fn.node.name for fn in scanner.functions
                        if not fn.nested and fn.node.name in scanner.asserting_helpers}
            helpers |= scanner.aliases & scanner.asserting_helpers
        if len(helpers) == before:
            break
    return TreeFacts(subclassed=frozenset(subclassed), helpers=frozenset(helpers),
                     defined=frozenset(defined | helpers), modules=frozenset(modules),
                     implemented=frozenset(implemented), referenced=frozenset(referenced),
                     signatures={k: v for k, v in signatures.items() if v is not None})
