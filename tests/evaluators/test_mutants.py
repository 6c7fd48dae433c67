"""Building mutants: which changed functions, and bodies that raise in valid Python."""

from __future__ import annotations

import asyncio
import inspect
import textwrap
import types

import pytest

from meridian.evaluators.mutants import changed_functions, mutant, neutral

SOURCE = textwrap.dedent('''
    import abc
    import functools
    from typing import Protocol, overload


    class Shape(abc.ABC):
        @abc.abstractmethod
        def area(self): ...

        def describe(self, unit="m"):
            """Say how big it is."""
            size = self.area()
            return f"{size} {unit}2"


    class Sized(Protocol):
        def size(self) -> int:
            return 0


    @overload
    def parse(text: str) -> int: ...
    @overload
    def parse(text: bytes) -> int: ...
    @functools.lru_cache(maxsize=None)
    def parse(text):
        return int(text)


    def counter(limit):
        n = 0
        while n < limit:
            yield n
            n += 1


    async def fetch(value):
        await asyncio.sleep(0)
        return value * 2


    async def stream(values):
        for value in values:
            yield value


    def one_liner(x): return x + 1


    def outer(x):
        def inner(y):
            return y * 2
        return inner(x)


    def todo():
        raise NotImplementedError
''').lstrip()


def _load(text: str) -> types.ModuleType:
    module = types.ModuleType("mutated")
    module.__dict__["asyncio"] = asyncio
    exec(compile(text, "mutated.py", "exec"), module.__dict__)  # noqa: S102 -- the mutant under test  # noqa: S102
    return module


def test_the_whole_file_yields_every_real_function_and_skips_what_has_no_body() -> None:
    names = [t.qualname for t in changed_functions("shapes.py", SOURCE, None)]
    assert names == ["Shape.describe", "parse", "counter", "fetch", "stream", "one_liner",
                     "outer"]


def test_a_changed_line_maps_to_the_innermost_function_holding_it() -> None:
    line = SOURCE.splitlines().index("        return y * 2") + 1
    [target] = changed_functions("shapes.py", SOURCE, [(line, line)])
    assert (target.qualname, target.line) == ("outer.<locals>.inner", line - 1)
    assert changed_functions("shapes.py", SOURCE, [(1, 2)]) == []  # imports only


@pytest.mark.parametrize("name", ["Shape.describe", "parse", "counter", "fetch", "stream",
                                  "one_liner", "outer"])
def test_each_mutant_compiles_keeps_its_shape_and_raises(name: str) -> None:
    [target] = [t for t in changed_functions("shapes.py", SOURCE, None) if t.qualname == name]
    module = _load(mutant(SOURCE, target))
    original = _load(SOURCE)
    holder, attr = (module.Shape, "describe") if "." in name else (module, name)
    fn = getattr(holder, attr)
    before = getattr(original.Shape if "." in name else original, attr)
    assert inspect.isgeneratorfunction(fn) == inspect.isgeneratorfunction(before)
    assert inspect.iscoroutinefunction(fn) == inspect.iscoroutinefunction(before)
    assert inspect.isasyncgenfunction(fn) == inspect.isasyncgenfunction(before)
    assert inspect.signature(fn) == inspect.signature(before)
    assert fn.__doc__ == before.__doc__
    with pytest.raises(RuntimeError, match=f"the body of {name} was removed"):
        if name == "Shape.describe":
            fn(object())
        elif name == "counter":
            list(fn(3))
        elif name == "fetch":
            asyncio.run(fn(1))
        elif name == "stream":
            async def drain() -> None:
                async for _ in fn([1]):
                    pass
            asyncio.run(drain())
        else:
            fn("1")
    if name == "parse":
        assert hasattr(fn, "cache_info")  # the decorator stays


def test_a_file_that_does_not_parse_has_no_functions() -> None:
    assert changed_functions("broken.py", "def f(:\n", None) == []


def test_the_control_rewrites_the_file_with_the_mutants_raise_and_changes_nothing_it_does(
        ) -> None:
    source = textwrap.dedent('''
        def total(items):
            """Sum."""
            result = 0
            for item in items:
                result += item
            return result


        def gen(n):
            yield from range(n)


        def short(x): return x
        ''')
    targets = {t.qualname: t for t in changed_functions("m.py", source, None)}
    text = neutral(source, targets["total"])
    assert text is not None and text != source
    # The same raise as the mutant's, so a check that greps for it cannot tell them apart.
    raised = [ln.strip() for ln in mutant(source, targets["total"]).splitlines()
              if "raise RuntimeError" in ln]
    assert len(raised) == 1 and raised[0] in text
    namespace: dict[str, object] = {"__name__": "m"}
    exec(compile(text, "m.py", "exec"), namespace)  # noqa: S102
    assert namespace["total"]([1, 2, 3]) == 6  # type: ignore[operator]
    generator = neutral(source, targets["gen"])
    assert generator is not None
    exec(compile(generator, "m.py", "exec"), namespace)  # noqa: S102
    assert list(namespace["gen"](3)) == [0, 1, 2]  # type: ignore[operator]
    assert neutral(source, targets["short"]) is None  # the body shares the def's line


def test_a_lambda_bound_to_a_name_is_a_function_and_its_mutant_raises() -> None:
    source = textwrap.dedent('''
        double = lambda x: x * 2  # noqa: E731
        nothing = lambda: None


        class Prices:
            rate: object = lambda self, amount: (
                amount * 1.2)

            def keep(self):
                return 1
        ''')
    targets = {t.qualname: t for t in changed_functions("m.py", source, None)}
    assert set(targets) == {"double", "Prices.rate", "Prices.keep"}
    assert targets["double"].expression and neutral(source, targets["double"]) is None
    namespace: dict[str, object] = {}
    exec(compile(mutant(source, targets["double"]), "m.py", "exec"), namespace)  # noqa: S102
    with pytest.raises(RuntimeError, match="the body of double was removed"):
        namespace["double"](2)  # type: ignore[operator]
    exec(compile(mutant(source, targets["Prices.rate"]), "m.py", "exec"), namespace)  # noqa: S102
    with pytest.raises(RuntimeError, match="Prices.rate"):
        namespace["Prices"]().rate(10)  # type: ignore[operator]
    # Only the changed line's lambda.
    line = source.splitlines().index("double = lambda x: x * 2  # noqa: E731") + 1
    assert [t.qualname for t in changed_functions("m.py", source, [(line, line)])] == ["double"]
