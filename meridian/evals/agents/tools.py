"""The reference agent's tools: a safe calculator, a tiny knowledge base, string ops.

Deterministic and offline. ``lookup`` stands in for a remote service: it has a few
"unstable" entries whose first request in a run times out, so an agent's recovery
from a failed call can be measured.
"""

from __future__ import annotations

import ast
import math
import operator
import re
from collections.abc import Callable
from typing import Any


class ToolError(Exception):
    """A tool refused its input; the message says why, as a real tool's error would."""


# ---------------------------------------------------------------- calculator

_BINARY: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_UNARY: dict[type[ast.unaryop], Callable[[Any], Any]] = {ast.UAdd: operator.pos, ast.USub: operator.neg}
_MAX_EXPONENT = 1000  # 2 ** 10**9 would hang the "calculator"


def calculate(expression: str) -> float:
    """Evaluate arithmetic by walking its AST: numbers and + - * / // % ** only."""
    source = expression.replace("^", "**").replace("\u00d7", "*").strip()
    try:
        tree = ast.parse(source, mode="eval")
    except SyntaxError:
        raise ToolError(f"cannot parse {expression!r} as arithmetic") from None
    try:
        result = _evaluate(tree.body)
    except ZeroDivisionError:
        raise ToolError("division by zero") from None
    except OverflowError:
        raise ToolError("result too large") from None
    if not math.isfinite(result):
        raise ToolError("result is not finite")
    return float(result)


def _evaluate(node: ast.expr) -> Any:
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return node.value
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _evaluate(node.left), _evaluate(node.right)
        if isinstance(node.op, ast.Pow) and abs(right) > _MAX_EXPONENT:
            raise ToolError(f"exponent {right} is too large")
        return _BINARY[type(node.op)](left, right)
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_evaluate(node.operand))
    raise ToolError(f"unsupported element {ast.unparse(node)!r}: only numbers and + - * / // % **")


# ---------------------------------------------------------------- lookup

KNOWLEDGE: dict[str, str | float] = {
    "capital of australia": "Canberra",
    "capital of brazil": "Brasilia",
    "capital of canada": "Ottawa",
    "capital of egypt": "Cairo",
    "capital of france": "Paris",
    "capital of germany": "Berlin",
    "capital of italy": "Rome",
    "capital of japan": "Tokyo",
    "capital of kenya": "Nairobi",
    "capital of peru": "Lima",
    "capital of the netherlands": "Amsterdam",
    "speed of light": 299792458,
    "speed of light in m/s": 299792458,
    "number of planets in the solar system": 8,
    "boiling point of water": 100,
    "boiling point of water in celsius": 100,
    "number of days in a leap year": 366,
    "number of bones in the adult human body": 206,
    "pi": math.pi,
    "avogadro constant": 6.02214076e23,
    "chemical symbol of gold": "Au",
    "largest planet": "Jupiter",
    "author of hamlet": "William Shakespeare",
}

# Entries whose first request in a session times out (a flaky upstream service).
UNSTABLE = frozenset({"capital of kenya", "boiling point of water"})


def knowledge_key(subject: str) -> str:
    key = re.sub(r"[?.!]+$", "", subject.strip().lower())
    key = re.sub(r"^(?:what is |what's )", "", key)
    key = re.sub(r"^the ", "", key)
    return " ".join(key.split())


class KnowledgeBase:
    """One agent run's view of the knowledge base (tracks which flaky keys were hit)."""

    def __init__(self) -> None:
        self._attempted: set[str] = set()

    def lookup(self, query: str, *, normalise: bool = True) -> str | float:
        key = knowledge_key(query) if normalise else query
        if key in UNSTABLE and key not in self._attempted:
            self._attempted.add(key)
            raise ToolError(f"knowledge base timed out looking up {key!r}")
        if key not in KNOWLEDGE:
            raise ToolError(f"no entry for {key!r}")
        return KNOWLEDGE[key]


# ---------------------------------------------------------------- string_op


def _vowels(text: str) -> int:
    return sum(1 for char in text.lower() if char in "aeiou")


STRING_OPS: dict[str, Callable[[str], str | int]] = {
    "reverse": lambda text: text[::-1],
    "upper": str.upper,
    "lower": str.lower,
    "title": str.title,
    "length": len,
    "word_count": lambda text: len(text.split()),
    "vowel_count": _vowels,
}


def string_op(op: str, text: str) -> str | int:
    try:
        function = STRING_OPS[op]
    except KeyError:
        raise ToolError(f"unknown string operation {op!r} (known: {', '.join(sorted(STRING_OPS))})") from None
    return function(text)


def format_number(value: float) -> str:
    """Integral values without a decimal point, others to ten significant digits."""
    if float(value).is_integer() and abs(value) < 1e15:
        return str(int(value))
    return f"{value:.10g}"
