"""YAML errors are one line naming the file, the line and the field."""

from __future__ import annotations

import pytest

from meridian import yamlio
from meridian.errors import ConfigError


@pytest.mark.parametrize(("text", "message"), [
    ("a: [1\n", "f.yaml:2: invalid YAML: expected ',' or ']', but got '<stream end>'"),
    ("a:\n  review: 2020-13-01\n", "f.yaml:2: a.review: invalid value '2020-13-01': month must be in 1..12"),
    ("? [a, b]\n: 1\n", "f.yaml:1: key: keys must be plain strings or numbers"),
    ("a: 1\na: 2\n", "f.yaml:2: a: duplicate key"),
    ("gates: &x [*x]\n", "f.yaml:1: gates[0]: an alias refers to itself"),
    ("branch: !foo bar\n",
     "f.yaml:1: branch: invalid value 'bar': could not determine a constructor for the tag '!foo'"),
    ("a: \x00\n", "f.yaml: invalid YAML: unacceptable character #x0000: special characters are not allowed"),
])
def test_bad_yaml_is_located(text: str, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        yamlio.parse(text, "f.yaml")
    assert str(caught.value) == message


def test_lines_of_nested_values() -> None:
    located = yamlio.parse("a: 1\nb:\n  - x: 2\n    y: [1, 2]\n", "f.yaml")
    assert located.data == {"a": 1, "b": [{"x": 2, "y": [1, 2]}]}
    assert located.line(("b", 0, "y", 1)) == 4
    assert located.where(("b", 0, "x")) == "f.yaml:3"
    assert located.where(("b", 0, "x", "deeper")) == "f.yaml:3"


def test_merge_keys_and_shared_anchors() -> None:
    located = yamlio.parse("base: &b {x: 1, y: 1}\nc:\n  <<: *b\n  y: 2\nd: [*b, *b]\n", "f.yaml")
    assert located.data["c"] == {"x": 1, "y": 2}
    assert located.data["d"] == [{"x": 1, "y": 1}, {"x": 1, "y": 1}]


def test_keys_yaml_would_read_as_bools_or_floats_keep_their_text() -> None:
    assert yamlio.parse("on:\n  push: 1\n1.5: x\nnull: y\n", "f.yaml").data == {
        "on": {"push": 1}, "1.5": "x", "null": "y"}
