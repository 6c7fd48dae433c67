"""A YAML file an agent writes (suite, gates.yaml, config) is refused with one line naming
the file, never a traceback, whichever composer reads it: libyaml's (``CSafeLoader``,
when the probe in ``yamlio._c_loader`` accepts it) or the pure-Python one."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import yaml

from meridian import yamlio
from meridian.errors import ConfigError


@pytest.fixture(params=["libyaml", "python"])
def composer(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    yamlio._c_loader.cache_clear()
    if request.param == "libyaml":
        if yamlio._c_loader() is None:
            pytest.skip("libyaml not installed or unbounded")
    else:
        monkeypatch.delattr(yaml, "CSafeLoader", raising=False)
    yield request.param
    yamlio._c_loader.cache_clear()


@pytest.mark.parametrize("text", [
    'a: "\\UFFFFFFFF"\n',  # OverflowError in the scanner
    'a: "\\U00110000"\n',  # ValueError: beyond the last code point
])
def test_an_escape_naming_no_character_is_one_located_line(composer: str, text: str) -> None:
    with pytest.raises(ConfigError) as caught:
        yamlio.parse(text, "suite.yaml")
    message = str(caught.value)
    assert message.startswith("suite.yaml") and "\n" not in message


LAUGHS = "a: &a [1,1,1,1,1,1,1,1,1]\n" + "".join(
    f"{n}: &{n} [{', '.join(['*' + p] * 9)}]\n" for p, n in zip("abcde", "bcdef", strict=True))


@pytest.mark.parametrize(("text", "expected"), [
    (LAUGHS, "expands to more than"),
    ("[" * 900 + "]" * 900, "nested"),
    ("[" * 100_000, "invalid YAML"),
    ("a: !!python/name:os.system\n", "invalid value"),
    ("a: &x [*x]\n", "refers to itself"),
    ("a: 1\na: 2\n", "duplicate key"),
    ("a: *nowhere\n", "invalid YAML"),
    ("a: 1\n---\nb: 2\n", "invalid YAML"),
    ("a: [1]\nb:\n  <<: *a\n", "invalid YAML"),
])
def test_both_composers_refuse_alike(composer: str, text: str, expected: str) -> None:
    with pytest.raises(ConfigError) as caught:
        yamlio.parse(text, "gates.yaml")
    message = str(caught.value)
    assert message.startswith("gates.yaml") and "\n" not in message
    assert expected in message


@pytest.mark.parametrize(("text", "expected"), [
    ("\ufeffa: 1\n", {"a": 1}),
    ("b: &b {x: 1}\nc:\n  <<: *b\n  y: 2\n", {"b": {"x": 1}, "c": {"x": 1, "y": 2}}),
    ("a: 1\r\nb: 2\r\n", {"a": 1, "b": 2}),
    # a tag on a collection is not constructed (nothing runs): the plain list is read
    ("a: !!python/object/apply:os.system ['true']\n", {"a": ["true"]}),
])
def test_both_composers_read_alike(composer: str, text: str, expected: object) -> None:
    assert yamlio.parse(text, "config.yaml").data == expected
