"""Attack: get a stub past the offline scan by how its message or comment is worded.

Layer: the offline evaluator (``gate submit``, the pre-commit hook, ``meridian ci``'s
re-scan). A deliberate refusal or a documented no-op is legitimate, but a bare word
that any agent can type ("cannot", "never", "ignore", "unused", "disabled", "not
needed") must not excuse an unimplemented function."""

from __future__ import annotations

import pytest

from meridian.evaluators.heuristic import scan_files

STUBS = [
    'def compute_tax(order):\n    raise NotImplementedError("tax cannot be computed")\n',
    'def compute_tax(order):\n    raise NotImplementedError("this can\'t work")\n',
    'def compute_tax(order):\n    raise NotImplementedError("never")\n',
    "def refund(order):\n    pass  # ignore\n",
    "def refund(order):\n    pass  # unused\n",
    "def refund(order):\n    pass  # disabled\n",
    "def refund(order):\n    pass  # not needed\n",
]


@pytest.mark.parametrize("source", STUBS)
def test_an_excuse_word_does_not_hide_a_stub(source: str) -> None:
    issues = scan_files({"src/pay.py": source})
    assert any(i.severity == "high" for i in issues), issues
