"""Fixtures for gate tests: a real git repository with Meridian's state branch."""

from __future__ import annotations

import json
import sys
import textwrap
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from meridian.cli import main
from meridian.ledger import Ledger
from tests.conftest import git


@pytest.fixture
def project(repo_with_commit: Path) -> Path:
    """A committed repository whose state branch is initialised (as `meridian init` does)."""
    Ledger.open(repo_with_commit).emit("meridian.init", {"branch": "meridian/state"})
    return repo_with_commit


@pytest.fixture
def write_gates(project: Path) -> Callable[[str], Path]:
    def write(text: str) -> Path:
        path = project / ".meridian" / "gates.yaml"
        path.parent.mkdir(exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"))
        return path

    return write


def write(root: Path, relative: str, text: str) -> Path:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip("\n"))
    return path


def commit_all(root: Path, message: str = "work") -> None:
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", message)


class Run:
    def __init__(self, code: int, out: str, err: str) -> None:
        self.code, self.out, self.err = code, out, err

    def __repr__(self) -> str:
        return f"Run(code={self.code}, out={self.out!r}, err={self.err!r})"


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]) -> Callable[..., Run]:
    """Run ``meridian ARGS`` in-process; returns exit code, stdout and stderr."""

    def run(*args: str) -> Run:
        capsys.readouterr()
        code = main(list(args))
        captured = capsys.readouterr()
        return Run(code, captured.out, captured.err)

    return run


@pytest.fixture
def events(project: Path) -> Callable[..., list]:
    """The events of the state branch, optionally of some kinds only."""

    def read(*kinds: str) -> list:
        found = list(Ledger.open(project).records("events"))
        return [r for r in found if not kinds or r.kind in kinds]

    return read


class _Terminal:
    """Stands in for a terminal on standard input (a human at a keyboard)."""

    def isatty(self) -> bool:
        return True

    def readline(self) -> str:
        raise AssertionError("the command should not read standard input in this test")


@pytest.fixture
def terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdin", _Terminal())


Reply = tuple[int, dict[str, str], dict[str, Any] | bytes] | None  # None: never answer


class FakeMessagesAPI:
    """A local HTTP server answering POST /v1/messages from a script of replies."""

    def __init__(self) -> None:
        self.replies: list[Reply] = []
        self.requests: list[dict[str, Any]] = []
        self.api_keys: list[str] = []
        self.hosts: list[str] = []
        self.release = threading.Event()  # lets a never-answering handler finish at teardown
        api = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", 0))
                api.requests.append(json.loads(self.rfile.read(length)))
                api.hosts.append(self.headers.get("host", ""))
                api.api_keys.append(self.headers.get("x-api-key")
                                    or self.headers.get("authorization", ""))
                reply = api.replies.pop(0) if len(api.replies) > 1 else api.replies[0]
                if callable(reply):  # a reviewer that reads the request
                    reply = reply(api.requests[-1])
                if reply is None:
                    api.release.wait()
                    return
                status, headers, body = reply
                data = body if isinstance(body, bytes) else json.dumps(body).encode()
                self.send_response(status)
                self.send_header("content-type", headers.get("content-type",
                                                             "application/json"))
                self.send_header("content-length", str(len(data)))
                for key, value in headers.items():
                    if key != "content-type":
                        self.send_header(key, value)
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                return

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def answer(self, *replies: Reply) -> None:
        """Reply with these in order; the last one repeats (retries see it again)."""
        self.replies = list(replies)


@pytest.fixture
def messages_api(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeMessagesAPI]:
    """The fake API; a test's config points at it (``evaluator.anthropic.base_url``: the
    endpoint comes only from the committed config, never the environment)."""
    api = FakeMessagesAPI()
    api.thread.start()
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-gate-test")
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    yield api
    api.release.set()
    api.server.shutdown()
    api.server.server_close()
