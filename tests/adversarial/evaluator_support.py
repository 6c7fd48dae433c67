"""Support for the evaluator attacks: a local Messages API server that keeps the raw
bytes it received, and a project whose gate is judged by the anthropic evaluator
through it (the endpoint in the committed config, the real SDK and its HTTP client)."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from meridian.ledger import Ledger
from tests.adversarial.conftest import commit_all, write

GOOD: dict[str, Any] = {
    "scores": {"completeness": 10, "correctness": 10, "robustness": 10, "spec_adherence": 10},
    "issues": [], "summary": "Flawless.",
}

# (status, headers, body bytes) or a callable of the request that returns one, or None
# (never answer).
Answer = tuple[int, dict[str, str], bytes]


def message(verdict: dict[str, Any] | None = None, *, model: str = "claude-haiku-4-5",
            **usage: int) -> bytes:
    """A Messages API reply holding one record_verdict call."""
    counts = {"input_tokens": 1000, "output_tokens": 100, **usage}
    return json.dumps({
        "id": "msg_01Fake", "type": "message", "role": "assistant", "model": model,
        "content": [{"type": "tool_use", "id": "toolu_1", "name": "record_verdict",
                     "input": verdict or GOOD}],
        "stop_reason": "tool_use", "stop_sequence": None, "usage": counts}).encode()


def ok(verdict: dict[str, Any] | None = None, **usage: int) -> Answer:
    return 200, {"content-type": "application/json", "request-id": "req_1"}, \
        message(verdict, **usage)


class RawAPI:
    """A real HTTP server on 127.0.0.1; keeps every request's raw body and headers."""

    def __init__(self, answer: Callable[[bytes], Answer | None] | Answer | None = None,
                 trickle: float = 0.0) -> None:
        self.answer = answer if answer is not None else ok()
        self.bodies: list[bytes] = []
        self.headers: list[dict[str, str]] = []
        self.release = threading.Event()
        api = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _any(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length)
                api.bodies.append(body)
                api.headers.append({k.lower(): v for k, v in self.headers.items()})
                reply = api.answer(body) if callable(api.answer) else api.answer
                if reply is None:
                    api.release.wait(30)
                    return
                status, headers, data = reply
                self.send_response(status)
                for key, value in headers.items():
                    self.send_header(key, value)
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                if trickle:  # one byte at a time: no read timeout ever fires
                    for byte in data:
                        if api.release.wait(trickle):
                            return
                        self.wfile.write(bytes([byte]))
                        self.wfile.flush()
                else:
                    self.wfile.write(data)

            do_POST = do_GET = _any

            def log_message(self, *args: Any) -> None:
                return

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def sent(self) -> bytes:
        return b"\n".join(self.bodies)

    def texts(self) -> list[str]:
        """The evidence text of each request (every user block)."""
        out = []
        for body in self.bodies:
            data = json.loads(body)
            out.append("".join(b["text"] for b in data["messages"][0]["content"]))
        return out

    def close(self) -> None:
        self.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()


def judged_project(root: Path, api: RawAPI, artifacts: str = "src/**", *,
                   model: str = "claude-haiku-4-5", extra: str = "",
                   checks: str = "[]") -> Path:
    """``root`` (an initialised project) with one gate, ``impl``, judged by the anthropic
    evaluator at ``api`` (the endpoint in the committed config), everything committed."""
    write(root, ".meridian/config.yaml", f"""\
        evaluator:
          kind: anthropic
          anthropic: {{model: {model}, base_url: "{api.url}", timeout_s: 20, max_retries: 0{extra}}}
        """)
    write(root, ".meridian/gates.yaml", f"""\
        version: 1
        gates:
          - id: impl
            description: The implementation.
            acceptance: Implements the spec.
            artifacts: ["{artifacts}"]
            checks: {checks}
        """)
    commit_all(root, "meridian setup")
    return root


def gate_state(root: Path) -> list[str]:
    return [r.kind for r in Ledger.open(root).records("events")]


def elapsed(fn: Callable[[], Any]) -> tuple[Any, float]:
    started = time.monotonic()
    result = fn()
    return result, time.monotonic() - started
