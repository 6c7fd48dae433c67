"""Stand-ins that keep a hot path's start-up short (the Claude Code PreToolUse hook runs
before every tool call an agent makes, and most of its cost is Python starting up).

- ``NamedTuple``: ``class Reply(NamedTuple): ...`` as ``typing.NamedTuple`` builds it (a
  ``collections.namedtuple`` with the class body's methods and defaults), without
  importing ``typing`` (some 3 ms: it imports ``warnings`` and builds hundreds of
  objects). Type checkers see ``typing.NamedTuple`` itself. Modules on the hook's path
  write ``TYPE_CHECKING = False`` / ``if TYPE_CHECKING: from typing import ...`` for the
  same reason (mypy reads any ``TYPE_CHECKING`` as true).
- ``lazy_pattern``: a regular expression compiled the first time it is used, for module
  constants that most calls never use (compiling a large alternation costs about a
  millisecond; the Bash reader holds dozens).

- ``signal_module``: the interpreter's ``_signal`` (what ``signal`` wraps: the same
  ``signal`` and ``alarm``) instead of ``signal``, whose import builds three enums (~0.5 ms
  of every tool call).

The stand-ins mirror CPython internals (``typing.NamedTupleMeta`` of 3.11-3.13, the
``_signal`` module), so each is used only where they are as expected: another
implementation or version (3.14 evaluates annotations lazily: a class body holds no
``__annotations__``), or a ``_signal`` without what the hook calls, gets ``typing.NamedTuple``
and ``signal`` themselves (``lean_supported``).

``tests/hooks/test_lean.py`` holds each to what it stands in for, the fallbacks
included, and checks that the hook's allow path imports neither ``typing`` nor the Bash
reader for a file tool.
"""

from __future__ import annotations

import re
import sys
from collections import namedtuple

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import ModuleType

LEAN_VERSIONS = ((3, 11), (3, 13))  # the CPython versions whose NamedTupleMeta is mirrored


def lean_supported() -> bool:
    """Whether this interpreter is one whose internals the stand-ins mirror."""
    low, high = LEAN_VERSIONS
    return sys.implementation.name == "cpython" and low <= tuple(sys.version_info[:2]) <= high


def signal_module() -> ModuleType:
    """``_signal`` where it is CPython's and holds what the hook calls (``signal``,
    ``alarm``, ``SIGALRM``), else ``signal`` (the same functions, enums around them)."""
    if lean_supported():
        try:
            import _signal
        except ImportError:
            pass
        else:
            if all(hasattr(_signal, name) for name in ("signal", "alarm", "SIGALRM")):
                return _signal
    import signal

    return signal


if TYPE_CHECKING or not lean_supported():
    from typing import NamedTuple  # the real one: internals not as mirrored here
else:
    # what typing.NamedTupleMeta refuses or keeps for itself (CPython 3.11-3.13)
    _PROHIBITED = frozenset({"__new__", "__init__", "__slots__", "__getnewargs__", "_fields",
                             "_field_defaults", "_make", "_replace", "_asdict", "_source"})
    _SPECIAL = frozenset({"__module__", "__name__", "__annotations__"})

    class _NamedTupleMeta(type):
        def __new__(mcs, typename, bases, namespace):
            if namespace.get("_lean_root"):
                return super().__new__(mcs, typename, bases, namespace)
            if bases != (NamedTuple,):
                raise TypeError("can only inherit from a NamedTuple type")
            fields = dict(namespace.get("__annotations__", {}))
            defaults: list[str] = []
            for name in fields:
                if name in namespace:
                    defaults.append(name)
                elif defaults:
                    raise TypeError(f"Non-default namedtuple field {name} cannot follow "
                                    f"default field{'s' if len(defaults) > 1 else ''} "
                                    f"{', '.join(defaults)}")
            made = namedtuple(typename, list(fields),
                              defaults=[namespace[n] for n in defaults],
                              module=namespace["__module__"])
            made.__annotations__ = made.__new__.__annotations__ = fields
            for key, value in namespace.items():
                if key in _PROHIBITED:
                    raise AttributeError("Cannot overwrite NamedTuple attribute " + key)
                if key not in _SPECIAL and key not in made._fields:
                    setattr(made, key, value)
            return made

    class NamedTuple(metaclass=_NamedTupleMeta):
        _lean_root = True


class _LazyPattern:
    def __init__(self, pattern: str, flags: int) -> None:
        self._pattern, self._flags = pattern, flags

    def __getattr__(self, name: str) -> object:
        # Reached only for what the instance does not hold yet (search, match, pattern,
        # ...): compiled once, and the attribute kept, so the next use is a plain lookup.
        compiled = self.__dict__.get("_compiled")
        if compiled is None:
            compiled = self.__dict__["_compiled"] = re.compile(self._pattern, self._flags)
        value = getattr(compiled, name)
        self.__dict__[name] = value
        return value

    def __repr__(self) -> str:
        return f"lazy_pattern({self._pattern!r}, {self._flags!r})"


def lazy_pattern(pattern: str, flags: int = 0) -> re.Pattern[str]:
    """``re.compile(pattern, flags)``, done on the first attribute used (``search``,
    ``finditer``, ``pattern``, ...)."""
    return _LazyPattern(pattern, flags)  # type: ignore[return-value]
