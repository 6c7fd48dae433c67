"""Helpers for the evaluator tests: bundles, and Messages API replies for a fake transport.

The anthropic SDK runs for real; only its HTTP transport is replaced, and the replies
are Messages API JSON bodies as the API sends them. (A plain module rather than a
conftest so tests can import the builders; ``pythonpath`` makes ``tests`` importable.)
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import anthropic._base_client as _sdk_client

from meridian.evaluators import ArtifactFile, Bundle, CheckResult

# anthropic 2.x runs on httpx2 and refuses httpx objects; older releases ran on httpx.
# Use the one the installed SDK imported (both may be installed side by side).
http: Any = getattr(_sdk_client, "httpx2", None) or _sdk_client.httpx

REAL_CODE = '''\
"""Arithmetic used by the checkout."""


def total(prices: list[float], discount: float = 0.0) -> float:
    if not 0 <= discount < 1:
        raise ValueError("discount must be in [0, 1)")
    return round(sum(prices) * (1 - discount), 2)
'''

REAL_TEST = '''\
from shop.cart import total


def test_total_applies_discount():
    assert total([10.0, 5.0], discount=0.2) == 12.0


def test_total_rejects_bad_discount():
    with pytest.raises(ValueError):
        total([1.0], discount=1.5)
'''


def make_bundle(files: dict[str, str] | None = None, *, checks: list[CheckResult] | None = None,
                unmatched: list[str] | None = None, **fields: Any) -> Bundle:
    files = {"src/shop/cart.py": REAL_CODE, "tests/test_cart.py": REAL_TEST} if files is None \
        else files
    return Bundle(
        gate=fields.pop("gate", "backend"),
        acceptance=fields.pop("acceptance", "total() applies a discount and rejects bad ones"),
        artifact_globs=fields.pop("artifact_globs", ["src/**/*.py", "tests/*.py"]),
        unmatched_globs=unmatched or [],
        artifacts=[ArtifactFile(path=p, content=c) for p, c in files.items()],
        checks=checks if checks is not None else [
            CheckResult(command="pytest -q", exit_code=0, output="2 passed in 0.01s")],
        subject=fields.pop("subject", "4b825dc642cb6eb9a060e54bf8d69288fbee4904"),
        **fields,
    )


def tool_use_message(verdict: dict[str, Any], *, model: str = "claude-sonnet-4-6",
                     input_tokens: int = 2000, output_tokens: int = 400,
                     stop_reason: str = "tool_use", message_id: str = "msg_01XFDUDYJgAACzvnptvVoYEL",
                     **usage: int) -> dict[str, Any]:
    """A Messages API reply whose content is a record_verdict tool call."""
    return {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [{"type": "tool_use", "id": "toolu_01A09q90qw90lq917835lq9",
                     "name": "record_verdict", "input": verdict}],
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens, **usage},
    }


def error_body(kind: str, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": kind, "message": message}}


class FakeAPI:
    """Answers every request with ``reply(request)`` and keeps the request bodies."""

    def __init__(self, reply: Callable[[Any], Any]) -> None:
        self.reply = reply
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []

    def handler(self, request: Any) -> Any:
        self.requests.append(json.loads(request.content))
        self.headers.append(dict(request.headers))
        return self.reply(request)

    def client(self) -> Any:
        return http.Client(transport=http.MockTransport(self.handler))

    def texts(self, index: int = 0) -> str:
        """Everything a request sent as text: the system prompt and every user block."""
        body = self.requests[index]
        system = body["system"] if isinstance(body["system"], str) else \
            "".join(b["text"] for b in body["system"])
        content = body["messages"][0]["content"]
        user = content if isinstance(content, str) else "".join(b["text"] for b in content)
        return system + user


def cached_prefix(body: dict[str, Any]) -> str:
    """The request up to and including its last cache breakpoint, as the API caches it
    (tools, then system, then messages), or "" when the request has no breakpoint."""
    parts: list[Any] = [body.get("tools"), body.get("tool_choice"), body.get("thinking")]
    prefix = ""
    for block in body["system"] if isinstance(body["system"], list) else []:
        parts.append(block["text"])
        if "cache_control" in block:
            prefix = json.dumps(parts)
    for message in body["messages"]:
        for block in message["content"] if isinstance(message["content"], list) else []:
            parts.append(block["text"])
            if "cache_control" in block:
                prefix = json.dumps(parts)
    return prefix


class CachingAPI(FakeAPI):
    """Reports cache writes for a prefix it has not seen and cache reads for one it has
    (about four characters a token), as the Messages API does for a repeated prefix."""

    def __init__(self, verdict: dict[str, Any]) -> None:
        self.seen: set[str] = set()
        super().__init__(self._answer)
        self.verdict = verdict

    def _answer(self, request: Any) -> Any:
        body = json.loads(request.content)
        prefix = cached_prefix(body)
        tokens = len(prefix) // 4
        total = len(json.dumps(body)) // 4
        usage = ({"cache_read_input_tokens": tokens, "cache_creation_input_tokens": 0}
                 if prefix in self.seen else
                 {"cache_read_input_tokens": 0, "cache_creation_input_tokens": tokens})
        self.seen.add(prefix)
        return http.Response(200, json=tool_use_message(
            self.verdict, input_tokens=total - tokens, output_tokens=300, **usage))
