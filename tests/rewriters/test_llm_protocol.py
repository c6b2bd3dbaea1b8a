"""What a real OpenAI-compatible server taught the LLM backend (issue 9), on the fake server.

llama-cpp-python's server refuses ``response_format: json_schema`` with a 500, lets a
small model run on for thousands of tokens, and serves chat templates without a system
role; a small model copies the prompt's example object. Each case must end in a valid
result with the right ``fallback_reason``, and replaying an item's prefix must not call
the model for the earlier turns. ``test_llama_server.py`` runs the same paths against
the real server.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import httpx
import pytest

from turnscope import ConfigError, Session
from turnscope._items import FollowUpItem, replay_conversations, rewrite_item
from turnscope.cli._llm_opts import rewriter_from_options
from turnscope.rewriters import DEFAULT_MAX_TOKENS, EmbeddedRewriter, LLMRewriter, RewriteRequest, make_rewriter
from turnscope.rewriters._llm import LLMConfig
from turnscope.rewriters._prompts import PROMPT_PLACEHOLDERS

try:
    from .fake_openai import (
        SPEC_CONVERSATION,
        FakeOpenAI,
        Reply,
        capture_requests,
        cloud_vocab,
        fake_openai,
        good,
        pivot_request,
    )
except ImportError:  # tests/rewriters is not a package: pytest put it on sys.path
    from fake_openai import (  # type: ignore[no-redef,unused-ignore]  # noqa: F401
        SPEC_CONVERSATION,
        FakeOpenAI,
        Reply,
        capture_requests,
        cloud_vocab,
        fake_openai,
        good,
        pivot_request,
    )

MODEL = "test-model"
PIVOT_QUERY = "Is the billing export API paginated?"
SYSTEM_REFUSAL = json.dumps({"error": {"message": "System role not supported",
                                       "type": "internal_server_error"}})


def make(server: FakeOpenAI, **kw: Any) -> LLMRewriter:
    opts: dict[str, Any] = {"base_url": server.base_url, "model": MODEL, "api_key_env": None,
                            "timeout": 2.0, "backoff_base": 0.001, "retry_after_cap": 0.05}
    opts.update(kw)
    return LLMRewriter(**opts)



def roles(body: dict[str, Any]) -> list[str]:
    return [m["role"] for m in body["messages"]]


# -- max_tokens ---------------------------------------------------------------------------

def test_max_tokens_is_sent_on_every_rung(fake_openai: FakeOpenAI,
                                          pivot_request: RewriteRequest) -> None:
    assert LLMConfig.DEFAULT_MAX_TOKENS == DEFAULT_MAX_TOKENS == 256
    fake_openai.script(good(PIVOT_QUERY))
    make(fake_openai).run(pivot_request)
    assert fake_openai.bodies[0]["max_tokens"] == DEFAULT_MAX_TOKENS
    refusal = json.dumps({"error": {"message": "json_schema not supported"}})
    fake_openai.script(Reply(status=400, body=refusal), good(PIVOT_QUERY))
    make(fake_openai, max_tokens=40).run(pivot_request)
    assert [b["max_tokens"] for b in fake_openai.bodies[1:]] == [40, 40]


def test_answer_cut_at_max_tokens_falls_back(fake_openai: FakeOpenAI,
                                             pivot_request: RewriteRequest) -> None:
    # cut inside the entity list: a complete inner object is there, but it is not the answer
    cut = '{"query": "Is the billing export API paginated?", "entities": [{"type": "s", "na'
    inner = '{"query": "billing", "entities": [{"type": "service", "name": "x"}, {"ty'
    fake_openai.script(Reply(content=cut, finish_reason="length"),
                       Reply(content=inner, finish_reason="length"))
    llm = make(fake_openai, max_tokens=16, breaker_threshold=1)
    for _ in range(2):
        r = llm.run(pivot_request)
        assert (r.fallback, r.backend, r.fallback_reason) == (
            True, "embedded", "truncated at max_tokens=16")
        assert r.trace["finish_reason"] == "length"
        assert r.query == EmbeddedRewriter().run(pivot_request).query
    # a cut answer is the model's doing, not the server's: the breaker stays closed
    assert llm.breaker.state == "closed"


# -- placeholders and invented entities ---------------------------------------------------

def test_the_prompt_example_uses_these_placeholders() -> None:
    assert PROMPT_PLACEHOLDERS == {"<standalone query>", "<type>", "<name>"}


def test_answer_copying_the_example_object_is_rejected(fake_openai: FakeOpenAI,
                                                       pivot_request: RewriteRequest) -> None:
    fake_openai.script(good("<standalone query>", entities=[("<type>", "<name>")]))
    r = make(fake_openai).run(pivot_request)
    assert (r.fallback, r.fallback_reason) == (
        True, "placeholder echo: <standalone query>, <type>, <name>")
    assert r.trace["rejected_query"] == "<standalone query>"
    assert "<" not in r.query


def test_placeholder_entity_never_becomes_a_slot(fake_openai: FakeOpenAI) -> None:
    fake_openai.script(good(PIVOT_QUERY, entities=[("service", "billing export API"),
                                                   ("product", "<name>")]))
    s = Session(rewriter=make(fake_openai), vocabulary=cloud_vocab(), resolver=None)
    r = s.user("Is the billing export API paginated?")
    assert (r.fallback, r.fallback_reason) == (True, "placeholder echo: <name>")
    names = [row["name"] for row in s.slot_rows(include_terminal=True)]
    assert "<name>" not in names and "billing export API" in names


def test_angle_brackets_the_user_wrote_are_not_placeholders(fake_openai: FakeOpenAI) -> None:
    fake_openai.script(good("What does the <details> tag do?"))
    s = Session(rewriter=make(fake_openai), resolver=None)
    r = s.user("what does the <details> tag do")
    assert (r.fallback, r.query) == (False, "What does the <details> tag do?")


def test_variant_placeholder_is_rejected_too(fake_openai: FakeOpenAI,
                                             pivot_request: RewriteRequest) -> None:
    fake_openai.script(good("<rewritten query>"))
    assert make(fake_openai).run(pivot_request).fallback_reason == \
        "placeholder echo: <rewritten query>"


def test_rejected_answers_are_not_cached(fake_openai: FakeOpenAI, tmp_path: Path,
                                         pivot_request: RewriteRequest) -> None:
    fake_openai.script(good("<standalone query>"), good(PIVOT_QUERY))
    llm = make(fake_openai, cache_path=tmp_path / "c.sqlite")
    assert llm.run(pivot_request).fallback is True
    r = llm.run(pivot_request)  # asked again, not replayed from the cache
    assert (r.fallback, r.query, len(fake_openai.requests)) == (False, PIVOT_QUERY, 2)


# -- the system role ----------------------------------------------------------------------

def test_auto_merges_the_system_text_after_a_system_role_refusal(
        fake_openai: FakeOpenAI, pivot_request: RewriteRequest) -> None:
    fake_openai.script(Reply(status=500, body=SYSTEM_REFUSAL), good(PIVOT_QUERY),
                       good(PIVOT_QUERY))
    llm = make(fake_openai, breaker_threshold=1)
    r = llm.run(pivot_request)
    assert (r.fallback, r.query, r.trace["attempts"]) == (False, PIVOT_QUERY, 2)
    first, second = fake_openai.bodies[:2]
    assert roles(first) == ["system", "user"] and roles(second) == ["user"]
    merged = second["messages"][0]["content"]
    assert merged.startswith(first["messages"][0]["content"])  # instructions first
    assert merged.endswith(first["messages"][1]["content"])
    assert llm.breaker.state == "closed"
    llm.run(pivot_request)  # remembered: no second refusal
    assert roles(fake_openai.bodies[2]) == ["user"] and len(fake_openai.requests) == 3


def test_roles_must_alternate_refusal_counts_as_a_system_role_refusal(
        fake_openai: FakeOpenAI, pivot_request: RewriteRequest) -> None:
    alternate = json.dumps({"error": {"message": "Conversation roles must alternate "
                                                 "user/assistant/user/assistant/..."}})
    fake_openai.script(Reply(status=400, body=alternate), good(PIVOT_QUERY))
    r = make(fake_openai).run(pivot_request)
    assert r.fallback is False and roles(fake_openai.bodies[1]) == ["user"]


def test_system_role_false_always_merges(fake_openai: FakeOpenAI,
                                         pivot_request: RewriteRequest) -> None:
    # a template that drops the system message silently gives no error to react to
    fake_openai.script(good(PIVOT_QUERY), good(PIVOT_QUERY, entities=[("service", "<name>")]))
    llm = make(fake_openai, system_role=False)
    assert llm.run(pivot_request).fallback is False
    body = fake_openai.bodies[0]
    assert roles(body) == ["user"]
    assert "Reply with JSON only" in body["messages"][0]["content"]
    assert "LATEST MESSAGE:" in body["messages"][0]["content"]
    # the instructions' example travels in the user message now, yet it is still not
    # evidence: copying its placeholder is rejected
    assert llm.run(pivot_request).fallback_reason == "placeholder echo: <name>"


def test_system_role_true_never_merges(fake_openai: FakeOpenAI,
                                       pivot_request: RewriteRequest) -> None:
    fake_openai.script(Reply(status=400, body=SYSTEM_REFUSAL))
    r = make(fake_openai, system_role=True).run(pivot_request)
    assert (r.fallback, r.fallback_reason, len(fake_openai.requests)) == (True, "http 400", 1)


def test_system_role_and_schema_refusals_in_one_call(fake_openai: FakeOpenAI,
                                                     pivot_request: RewriteRequest) -> None:
    schema_500 = json.dumps({"error": {"message": "response_format: Input should be 'text' "
                                                  "or 'json_object'"}})
    fake_openai.script(Reply(status=500, body=SYSTEM_REFUSAL), Reply(status=500, body=schema_500),
                       good(PIVOT_QUERY))
    llm = make(fake_openai, breaker_threshold=1)
    r = llm.run(pivot_request)
    assert (r.fallback, r.trace["output_mode"], r.trace["attempts"]) == (
        False, "json_object_schema", 3)
    assert (llm.merge_system, llm.mode, llm.breaker.state) == (True, "json_object_schema",
                                                               "closed")


# -- configuration --------------------------------------------------------------------------

@pytest.mark.parametrize("timeout", [0, -1.0, math.inf, math.nan])
def test_timeout_must_be_finite_and_positive(timeout: float) -> None:
    with pytest.raises(ConfigError, match=r"timeout must be a finite number > 0 seconds"):
        LLMRewriter(base_url="http://x/v1", model="m", timeout=timeout)


@pytest.mark.parametrize("max_tokens", [0, -3, 1.5, True])
def test_max_tokens_must_be_a_positive_integer(max_tokens: Any) -> None:
    with pytest.raises(ConfigError, match=r"max_tokens must be an integer >= 1"):
        LLMRewriter(base_url="http://x/v1", model="m", max_tokens=max_tokens)


@pytest.mark.parametrize(("field", "value"), [("backoff_cap", math.inf),
                                              ("retry_after_cap", -1.0),
                                              ("breaker_cooldown", math.nan),
                                              ("max_retries", 1.5)])
def test_other_numbers_are_validated(field: str, value: float) -> None:
    opts: dict[str, Any] = {field: value}
    with pytest.raises(ConfigError, match=field):
        LLMRewriter(base_url="http://x/v1", model="m", **opts)


def test_system_role_values() -> None:
    with pytest.raises(ConfigError, match="system_role must be True, False or 'auto'"):
        LLMRewriter(base_url="http://x/v1", model="m", system_role="yes")  # type: ignore[arg-type]
    assert LLMRewriter(base_url="http://x/v1", model="m").merge_system is False
    assert LLMRewriter(base_url="http://x/v1", model="m", system_role=False).merge_system


def test_factory_and_cli_helper_pass_max_tokens_and_system_role() -> None:
    rw = make_rewriter("llm", base_url="http://x/v1", model="m", max_tokens=64,
                       system_role=False)
    assert isinstance(rw, LLMRewriter)
    assert (rw.config.max_tokens, rw.config.system_role) == (64, False)
    rw = rewriter_from_options("llm", "http://x/v1", "m", None, max_tokens=32,
                               system_role="auto")
    assert isinstance(rw, LLMRewriter) and rw.config.max_tokens == 32
    default = rewriter_from_options("llm", "http://x/v1", "m", None)
    assert isinstance(default, LLMRewriter)
    assert default.config.max_tokens == DEFAULT_MAX_TOKENS
    with pytest.raises(ConfigError, match="max_tokens"):
        rewriter_from_options("llm", "http://x/v1", "m", None, max_tokens=0)


# -- one model call per rewritten turn ----------------------------------------------------

class CountingTransport(httpx.BaseTransport):
    """Counts chat-completion requests on their way to the real transport."""

    def __init__(self) -> None:
        self.inner = httpx.HTTPTransport()
        self.calls = 0

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/chat/completions"):
            self.calls += 1
        return self.inner.handle_request(request)

    def close(self) -> None:
        self.inner.close()


@pytest.fixture
def counted(fake_openai: FakeOpenAI) -> Iterator[tuple[LLMRewriter, CountingTransport]]:
    def echo(body: dict[str, Any]) -> Reply:
        # a faithful model: the latest message, as written, is already standalone
        text = "\n".join(m["content"] for m in body["messages"])
        return good(text.split("LATEST MESSAGE: ", 1)[1].split("\n", 1)[0])

    fake_openai.responder = echo
    transport = CountingTransport()
    llm = make(fake_openai, transport=transport)
    yield llm, transport
    llm.close()


def long_prefix(n_exchanges: int) -> list[Mapping[str, Any]]:
    turns: list[Mapping[str, Any]] = []
    for i in range(n_exchanges):
        turns.append({"role": "user", "content": f"What is the quota for project {i}?"})
        turns.append({"role": "assistant", "content": f"Project {i} has a quota of {i} units."})
    return turns


def test_a_thousand_turn_prefix_costs_one_call(
        counted: tuple[LLMRewriter, CountingTransport]) -> None:
    llm, transport = counted
    prefix = long_prefix(500)
    # window:4 keeps the prompt off the learned resolver's ranking, which encodes every
    # earlier phrase (minutes for 2,000 new texts on this machine): this test counts calls
    s = Session.replay(prefix, rewriter=llm, resolver=None, policy="window:4")
    assert transport.calls == 0
    # the embedded rewriter throughout
    reference = Session.replay(prefix, resolver=None, policy="window:4")
    # the replayed state is the embedded rewriter's: same slots, same resolved turns
    assert s.slot_rows(include_terminal=True) == reference.slot_rows(include_terminal=True)
    assert [s.state.resolved[i].query for i in sorted(s.state.resolved)] == \
        [reference.state.resolved[i].query for i in sorted(reference.state.resolved)]
    r = s.user("is the billing export API paginated?")
    assert (transport.calls, r.backend, r.fallback) == (1, f"llm:{MODEL}", False)


def test_rewrite_item_calls_the_model_once(
        counted: tuple[LLMRewriter, CountingTransport]) -> None:
    llm, transport = counted
    item = FollowUpItem.model_validate({"id": "x", "prefix": long_prefix(500),
                                        "follow_up": "is the billing export API paginated?"})
    r = rewrite_item(item, lambda: Session(rewriter=llm, resolver=None, policy="window:4"))
    assert (transport.calls, r.turn, r.backend) == (1, 1001, f"llm:{MODEL}")


def test_replay_conversations_calls_the_model_once_per_item(
        counted: tuple[LLMRewriter, CountingTransport]) -> None:
    llm, transport = counted
    turns = long_prefix(3)
    items = [{"id": f"i{k}", "conversation": "c", "prefix": turns[: 2 * k],
              "follow_up": turns[2 * k]["content"]} for k in range(3)]
    items.append({"id": "solo", "prefix": turns, "follow_up": "is the billing export API paginated?"})
    results = replay_conversations(items, lambda: Session(rewriter=llm, resolver=None))
    assert len(results) == 4
    assert [r.fallback for r in results] == [False] * 4
    assert transport.calls == 4  # one per item: the solo item's 3 earlier user turns are free


def test_eval_command_sends_max_tokens_and_system_role(fake_openai: FakeOpenAI,
                                                       tmp_path: Path) -> None:
    import typer
    from typer.testing import CliRunner

    from turnscope.cli._eval import register

    app = typer.Typer()

    @app.callback()
    def main() -> None:
        """Keeps ``eval`` a subcommand."""

    register(app)
    items = tmp_path / "items.jsonl"
    items.write_text(json.dumps({"id": "a", "prefix": [], "follow_up": PIVOT_QUERY,
                                 "gold": ["p1"], "reference_type": "standalone"}) + "\n",
                     encoding="utf-8")
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(json.dumps({"id": "p1", "title": "Billing export API",
                                  "text": "The billing export API is paginated."}) + "\n",
                      encoding="utf-8")
    fake_openai.responder = lambda body: good(PIVOT_QUERY)
    res = CliRunner().invoke(app, ["eval", "--dataset", str(items), "--corpus", str(corpus),
                                   "--retriever", "bm25", "--resamples", "10",
                                   "--rewriter", "llm", "--base-url", fake_openai.base_url,
                                   "--model", MODEL, "--max-tokens", "33",
                                   "--system-role", "no"])
    assert res.exit_code == 0, res.output
    assert fake_openai.bodies and all(b["max_tokens"] == 33 for b in fake_openai.bodies)
    assert all(roles(b) == ["user"] for b in fake_openai.bodies)
    bad = CliRunner().invoke(app, ["eval", "--dataset", str(items), "--rewriter", "llm",
                                   "--base-url", fake_openai.base_url, "--model", MODEL,
                                   "--max-tokens", "0"])
    assert bad.exit_code == 2 and "--max-tokens" in bad.output


def test_arun_steps_down_and_merges_like_run(fake_openai: FakeOpenAI,
                                             pivot_request: RewriteRequest) -> None:
    import asyncio

    schema_500 = json.dumps({"error": {"message": "response_format: Input should be 'text' "
                                                  "or 'json_object'"}})
    fake_openai.script(Reply(status=500, body=SYSTEM_REFUSAL), Reply(status=500, body=schema_500),
                       good(PIVOT_QUERY, entities=[("service", "<name>")]))
    llm = make(fake_openai, breaker_threshold=1)

    async def go() -> Any:
        try:
            return await llm.arun(pivot_request)
        finally:
            await llm.aclose()

    r = asyncio.run(go())
    assert (r.fallback, r.fallback_reason, r.trace["attempts"]) == (
        True, "placeholder echo: <name>", 3)
    assert roles(fake_openai.bodies[2]) == ["user"]
    assert fake_openai.bodies[2]["response_format"]["type"] == "json_object"
    assert all(b["max_tokens"] == DEFAULT_MAX_TOKENS for b in fake_openai.bodies)
    assert llm.breaker.state == "closed"


def test_rewrite_command_sends_max_tokens_and_system_role(fake_openai: FakeOpenAI,
                                                          tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from turnscope.cli import app

    items = tmp_path / "items.jsonl"
    items.write_text(json.dumps({"id": "a", "prefix": [], "follow_up": PIVOT_QUERY,
                                 "gold": [], "reference_type": "standalone"}) + "\n",
                     encoding="utf-8")
    fake_openai.responder = lambda body: good(PIVOT_QUERY)
    res = CliRunner().invoke(app, ["rewrite", "--input", str(items), "--rewriter", "llm",
                                   "--base-url", fake_openai.base_url, "--model", MODEL,
                                   "--max-tokens", "21", "--system-role", "no"])
    assert res.exit_code == 0, res.output
    assert fake_openai.bodies and all(b["max_tokens"] == 21 for b in fake_openai.bodies)
    assert all(roles(b) == ["user"] for b in fake_openai.bodies)
    bad = CliRunner().invoke(app, ["rewrite", "--input", str(items), "--rewriter", "llm",
                                   "--base-url", fake_openai.base_url, "--model", MODEL,
                                   "--system-role", "maybe"])
    assert bad.exit_code == 2 and "--system-role" in bad.output
