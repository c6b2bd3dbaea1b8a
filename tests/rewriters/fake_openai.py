"""A real chat-completions server on loopback for the LLM rewriter tests.

``FakeOpenAI`` is an ``http.server.ThreadingHTTPServer`` bound to 127.0.0.1 on a
free port, answering ``POST /v1/chat/completions`` from a per-test script:

>>> server = FakeOpenAI().start()
>>> server.script(Reply(status=500), good("Is the billing export API paginated?"))
>>> server.base_url.startswith("http://127.0.0.1:")
True
>>> server.stop()

Replies are consumed in order; when the script is empty, ``responder`` (a
function of the request body) answers, else a 500 says the test ran out of
script. Every request body and its headers are recorded in ``requests``.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from turnscope import Session
from turnscope.entities import Vocabulary, bundled_vocabulary
from turnscope.rewriters import RewriteRequest, RewriteResult

__all__ = [
    "SPEC_CONVERSATION",
    "FakeOpenAI",
    "Reply",
    "capture_requests",
    "cloud_vocab",
    "completion",
    "fake_openai",
    "good",
    "pivot_request",
]


@dataclass
class Reply:
    """One scripted HTTP answer.

    ``content`` is the model's message text (wrapped into a chat completion);
    ``body`` replaces the whole HTTP body; ``delay`` holds the answer back.
    """

    status: int = 200
    content: str | None = None
    body: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    #: the completion's finish_reason ("length" = cut at max_tokens)
    finish_reason: str = "stop"


def completion(content: str | None, finish_reason: str = "stop") -> dict[str, Any]:
    """A minimal chat-completions response object around ``content``."""
    return {
        "id": "chatcmpl-test", "object": "chat.completion", "model": "test-model",
        "choices": [{"index": 0, "finish_reason": finish_reason,
                     "message": {"role": "assistant", "content": content}}],
        "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
    }


def good(query: str, *, topic_shift: bool = False, reference_class: str = "standalone",
         entities: Sequence[tuple[str, str]] = ()) -> Reply:
    """A well-formed model answer."""
    answer = {"query": query, "topic_shift": topic_shift, "reference_class": reference_class,
              "entities": [{"type": t, "name": n} for t, n in entities]}
    return Reply(content=json.dumps(answer, ensure_ascii=False))


@dataclass
class Recorded:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


class _Server(ThreadingHTTPServer):
    daemon_threads = True  # a handler still sleeping out a "slow" reply must not block exit
    fake: FakeOpenAI


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
        pass

    def do_POST(self) -> None:
        fake = self.server.fake
        length = int(self.headers.get("Content-Length", "0"))
        raw = self.rfile.read(length)
        if self.path != "/v1/chat/completions":
            self._send(Reply(status=404, body=json.dumps({"error": {"message": "not found"}})))
            return
        try:
            body = json.loads(raw)
        except json.JSONDecodeError:
            body = {"_raw": raw.decode("utf-8", "replace")}
        reply = fake._next(Recorded(self.path, dict(self.headers.items()), body))
        if reply.delay:
            fake._stopping.wait(reply.delay)
        self._send(reply)

    def _send(self, reply: Reply) -> None:
        if reply.body is not None:
            payload = reply.body.encode("utf-8")
        elif reply.status == 200:
            payload = json.dumps(completion(reply.content, reply.finish_reason),
                                 ensure_ascii=False).encode("utf-8")
        else:
            payload = json.dumps({"error": {"message": f"scripted {reply.status}"}}).encode()
        try:
            self.send_response(reply.status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            for k, v in reply.headers.items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(payload)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (timeout test): nothing to deliver


class FakeOpenAI:
    """A scriptable OpenAI-compatible server on 127.0.0.1 (port chosen by the OS)."""

    def __init__(self) -> None:
        self.requests: list[Recorded] = []
        self.responder: Callable[[dict[str, Any]], Reply] | None = None
        self._script: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle -------------------------------------------------------------------
    def start(self) -> FakeOpenAI:
        server = _Server(("127.0.0.1", 0), _Handler)
        server.fake = self
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05},
                                        daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("server not started")
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    # -- scripting -------------------------------------------------------------------
    def script(self, *replies: Reply) -> None:
        with self._lock:
            self._script.extend(replies)

    def _next(self, rec: Recorded) -> Reply:
        with self._lock:
            self.requests.append(rec)
            if self._script:
                return self._script.popleft()
        if self.responder is not None:
            return self.responder(rec.body)
        return Reply(status=500, body=json.dumps({"error": {"message": "script exhausted"}}))

    @property
    def bodies(self) -> list[dict[str, Any]]:
        return [r.body for r in self.requests]


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAI]:
    server = FakeOpenAI().start()
    try:
        yield server
    finally:
        server.stop()


# -- conversations and requests ------------------------------------------------------------

#: SPEC section 1
SPEC_CONVERSATION: list[tuple[str, str]] = [
    ("user", "Which EU regions support customer-managed encryption keys?"),
    ("assistant", "Frankfurt and Dublin both support CMK for data at rest."),
    ("user", "What's the uptime SLA on the second one?"),
    ("assistant", "Dublin (eu-west-1) is covered by the 99.95% monthly uptime SLA."),
    ("user", "And the RPO for Dublin?"),
    ("assistant", "The documented RPO for Dublin is 15 minutes."),
    ("user", "ok different question — is the billing export API paginated?"),
]


def cloud_vocab() -> Vocabulary:
    return bundled_vocabulary("cloud")


def capture_requests(turns: Sequence[tuple[str, str]], *, policy: str = "default",
                     vocabulary: Vocabulary | None = None) -> list[RewriteRequest]:
    """Replay ``turns`` through a Session (embedded rewrites) and return the request
    each user turn produced, so a test can hand the same request to another rewriter."""
    seen: list[RewriteRequest] = []

    class Capture:
        name = "capture"

        def run(self, request: RewriteRequest) -> RewriteResult:
            seen.append(request)
            return session.embedded.run(request)

    session = Session(policy=policy, rewriter=Capture(), vocabulary=vocabulary)
    for role, text in turns:
        session.add(role, text)
    return seen


@pytest.fixture(scope="module")
def pivot_request() -> RewriteRequest:
    """Turn 7 of the SPEC section 1 conversation, under the default policy."""
    return capture_requests(SPEC_CONVERSATION, vocabulary=cloud_vocab())[-1]
