"""LLMRewriter against a real chat-completions server on loopback (see fake_openai.py).

Every fault scenario must end in a valid RewriteResult with the right ``fallback``
flag and reason, and no exception may reach the caller.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from turnscope import ConfigError, Session
from turnscope.cli._llm_opts import rewriter_from_options
from turnscope.entities import EntityExtractor
from turnscope.rewriters import (
    EmbeddedRewriter,
    LLMRewriter,
    RewriteRequest,
    RewriteResult,
    make_rewriter,
)
from turnscope.rewriters._llm import extract_json_object
from turnscope.rewriters._prompts import COUNTERWEIGHT_CLAUSE, LIVENESS_INSTRUCTION

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


def make(server: FakeOpenAI, **kw: Any) -> LLMRewriter:
    """A rewriter tuned for fast tests: tiny backoff, short timeout, no key."""
    opts: dict[str, Any] = {"base_url": server.base_url, "model": MODEL, "api_key_env": None,
                                "timeout": 2.0, "backoff_base": 0.001, "retry_after_cap": 0.05,
                                "extractor": None}
    opts.update(kw)
    return LLMRewriter(**opts)



def embedded_query(request: RewriteRequest) -> str:
    return EmbeddedRewriter().run(request).query


def assert_fallback(result: RewriteResult, reason: str, request: RewriteRequest) -> None:
    assert isinstance(result, RewriteResult)
    assert result.fallback is True
    assert result.backend == "embedded"
    assert result.fallback_reason == reason
    assert result.query == embedded_query(request)
    assert result.trace["attempted"] == f"llm:{MODEL}"


# -- the scenarios of issue 4 -----------------------------------------------------------

def test_good_answer(fake_openai: FakeOpenAI, pivot_request: RewriteRequest) -> None:
    fake_openai.script(good(PIVOT_QUERY, topic_shift=True,
                            entities=[("service", "billing export API")]))
    r = make(fake_openai).run(pivot_request)
    assert (r.query, r.fallback, r.fallback_reason) == (PIVOT_QUERY, False, None)
    assert r.backend == f"llm:{MODEL}"
    assert r.topic_shift is True and r.reference_class == "standalone"
    assert [(m.type, m.name, m.source) for m in r.entities] == [
        ("service", "billing export API", "llm")]
    assert r.leaks == ()
    body = fake_openai.bodies[0]
    assert body["model"] == MODEL and body["temperature"] == 0
    assert body["response_format"]["type"] == "json_schema"
    assert body["response_format"]["json_schema"]["schema"]["required"] == [
        "query", "topic_shift", "reference_class", "entities"]
    assert [m["role"] for m in body["messages"]] == ["system", "user"]


def test_slow_answer_past_timeout(fake_openai: FakeOpenAI, pivot_request: RewriteRequest) -> None:
    fake_openai.script(Reply(delay=3.0, content="{}"))
    t0 = time.perf_counter()
    r = make(fake_openai, timeout=0.2).run(pivot_request)
    assert time.perf_counter() - t0 < 1.5  # not retried: the user is waiting
    assert_fallback(r, "timeout", pivot_request)
    assert len(fake_openai.requests) == 1


def test_500s_then_success(fake_openai: FakeOpenAI, pivot_request: RewriteRequest) -> None:
    fake_openai.script(Reply(status=500), Reply(status=503), good(PIVOT_QUERY))
    r = make(fake_openai, max_retries=3).run(pivot_request)
    assert (r.query, r.fallback) == (PIVOT_QUERY, False)
    assert r.trace["attempts"] == 3
    assert len(fake_openai.requests) == 3


def test_500s_until_retries_run_out(fake_openai: FakeOpenAI,
                                    pivot_request: RewriteRequest) -> None:
    fake_openai.script(*[Reply(status=500)] * 4)
    r = make(fake_openai, max_retries=3).run(pivot_request)
    assert_fallback(r, "http 500 after 3 retries", pivot_request)
    assert len(fake_openai.requests) == 4


def test_429_honours_retry_after(fake_openai: FakeOpenAI, pivot_request: RewriteRequest) -> None:
    slept: list[float] = []
    fake_openai.script(Reply(status=429, headers={"Retry-After": "2"}),
                       Reply(status=429, headers={"Retry-After": "120"}),
                       good(PIVOT_QUERY))
    r = make(fake_openai, retry_after_cap=10.0, sleep=slept.append).run(pivot_request)
    assert (r.query, r.fallback) == (PIVOT_QUERY, False)
    # the server's delay, not the backoff; a huge Retry-After is capped
    assert slept == [2.0, 10.0]


def test_429_real_sleep_is_capped(fake_openai: FakeOpenAI, pivot_request: RewriteRequest) -> None:
    fake_openai.script(Reply(status=429, headers={"Retry-After": "30"}), good(PIVOT_QUERY))
    t0 = time.perf_counter()
    r = make(fake_openai, retry_after_cap=0.05).run(pivot_request)
    assert r.fallback is False
    assert 0.04 < time.perf_counter() - t0 < 2.0


def test_429_exhausted(fake_openai: FakeOpenAI, pivot_request: RewriteRequest) -> None:
    fake_openai.script(*[Reply(status=429, headers={"Retry-After": "0"})] * 3)
    r = make(fake_openai, max_retries=2).run(pivot_request)
    assert_fallback(r, "http 429 after 2 retries", pivot_request)


def test_invalid_json(fake_openai: FakeOpenAI, pivot_request: RewriteRequest) -> None:
    fake_openai.script(Reply(content="Sure! The query is: billing export API pagination"))
    r = make(fake_openai).run(pivot_request)
    assert_fallback(r, "invalid json", pivot_request)
    assert "billing export API pagination" in str(r.trace["raw"])


def test_json_missing_query(fake_openai: FakeOpenAI, pivot_request: RewriteRequest) -> None:
    fake_openai.script(Reply(content=json.dumps({"topic_shift": True, "entities": []})))
    r = make(fake_openai).run(pivot_request)
    assert_fallback(r, "schema: missing query", pivot_request)


def test_json_empty_query(fake_openai: FakeOpenAI, pivot_request: RewriteRequest) -> None:
    fake_openai.script(Reply(content=json.dumps({"query": "   "})))
    r = make(fake_openai).run(pivot_request)
    assert_fallback(r, "schema: empty query", pivot_request)


@pytest.fixture(scope="module")
def window_request() -> RewriteRequest:
    """The pivot turn under ``window:2``: the prompt shows turns 5-6 only."""
    req: RewriteRequest = capture_requests(SPEC_CONVERSATION, policy="window:2",
                                           vocabulary=cloud_vocab())[-1]
    return req


def test_entity_out_of_scope_is_a_leak(fake_openai: FakeOpenAI,
                                      window_request: RewriteRequest) -> None:
    # the SLA is in the conversation (turns 3-4) but not in the window the model was shown:
    # a leak, reported; not an invention
    leaky = good("Is the billing export API paginated under the SLA?", topic_shift=True,
                 entities=[("service", "billing export API")])
    fake_openai.script(leaky)
    r = make(fake_openai, extractor=EntityExtractor(cloud_vocab())).run(window_request)
    assert r.fallback is False and r.backend == f"llm:{MODEL}"
    assert r.leaks == ("SLA",)
    assert r.trace["leak_reasons"] == {"SLA": "superseded"}


def test_entity_out_of_scope_strict(fake_openai: FakeOpenAI,
                                    window_request: RewriteRequest) -> None:
    fake_openai.script(good("Is the billing export API paginated under the SLA?"))
    r = make(fake_openai, strict=True,
             extractor=EntityExtractor(cloud_vocab())).run(window_request)
    assert_fallback(r, "leak: SLA", window_request)
    assert r.trace["rejected_query"] == "Is the billing export API paginated under the SLA?"
    assert r.leaks == ()  # the leak belonged to the rejected query


def test_entity_not_in_conversation_is_rejected(fake_openai: FakeOpenAI,
                                                pivot_request: RewriteRequest) -> None:
    # Tokyo occurs nowhere in the conversation: the model made it up; as a declared entity
    # it would also become a live slot
    fake_openai.script(good("Is the billing export API paginated in Tokyo?", topic_shift=True,
                            entities=[("service", "billing export API"), ("region", "Tokyo")]))
    llm = make(fake_openai)
    s = Session(rewriter=llm, vocabulary=cloud_vocab())
    for role, text in SPEC_CONVERSATION[:-1]:
        s.user(text, rewriter=s.embedded) if role == "user" else s.assistant(text)
    r = s.user(SPEC_CONVERSATION[-1][1])
    assert (r.fallback, r.backend, r.fallback_reason) == (True, "embedded", "invented entity: Tokyo")
    assert r.trace["rejected_query"] == "Is the billing export API paginated in Tokyo?"
    assert "Tokyo" not in r.query
    assert all(row["name"] != "Tokyo" for row in s.slot_rows(include_terminal=True))


def test_declared_entity_absent_from_query_and_conversation_is_rejected(
        fake_openai: FakeOpenAI, pivot_request: RewriteRequest) -> None:
    fake_openai.script(good(PIVOT_QUERY, entities=[("service", "billing export API"),
                                                   ("product", "Snowflake")]))
    r = make(fake_openai).run(pivot_request)
    assert_fallback(r, "invented entity: Snowflake", pivot_request)


def test_json_schema_unsupported_steps_down_to_llama_schema_form(
        fake_openai: FakeOpenAI, pivot_request: RewriteRequest) -> None:
    refusal = json.dumps({"error": {"message": "response_format type json_schema is not "
                                               "supported by this server"}})
    fake_openai.script(Reply(status=400, body=refusal), good(PIVOT_QUERY), good(PIVOT_QUERY))
    llm = make(fake_openai)
    r = llm.run(pivot_request)
    assert (r.query, r.fallback) == (PIVOT_QUERY, False)
    assert r.trace["output_mode"] == "json_object_schema"
    formats = [b.get("response_format", {}).get("type") for b in fake_openai.bodies]
    assert formats == ["json_schema", "json_object"]
    # llama.cpp's own form: JSON mode constrained by the same schema
    assert fake_openai.bodies[1]["response_format"]["schema"]["required"] == [
        "query", "topic_shift", "reference_class", "entities"]
    llm.run(pivot_request)  # the working rung is remembered
    assert fake_openai.bodies[-1]["response_format"]["type"] == "json_object"
    assert "schema" in fake_openai.bodies[-1]["response_format"]


#: what llama-cpp-python's server answers to ``response_format: json_schema`` (HTTP 500)
LLAMA_500 = json.dumps({"error": {"message": "1 validation error for ChatCompletionRequest"
                                             "ResponseFormat: Input should be 'text' or "
                                             "'json_object' [type=literal_error]; "
                                             "response_format.type", "type": "internal_server_error"}})


def test_500_refusing_response_format_steps_down_without_retry_or_breaker(
        fake_openai: FakeOpenAI, pivot_request: RewriteRequest) -> None:
    slept: list[float] = []
    fake_openai.script(Reply(status=500, body=LLAMA_500), good(PIVOT_QUERY))
    # one failure would open this breaker: the refusal must not count as one
    llm = make(fake_openai, max_retries=3, breaker_threshold=1, sleep=slept.append)
    r = llm.run(pivot_request)
    assert (r.query, r.fallback) == (PIVOT_QUERY, False)
    assert r.trace["output_mode"] == "json_object_schema"
    assert r.trace["attempts"] == 2 and slept == []  # no retry at the refused rung
    assert llm.breaker.state == "closed"
    assert [b["response_format"]["type"] for b in fake_openai.bodies] == [
        "json_schema", "json_object"]


def test_refusals_by_400_422_500_walk_the_whole_ladder(
        fake_openai: FakeOpenAI, pivot_request: RewriteRequest) -> None:
    fake_openai.script(
        Reply(status=500, body=LLAMA_500),
        Reply(status=422, body=json.dumps({"detail": [{"loc": ["body", "response_format",
                                                               "schema"],
                                                       "msg": "extra fields not permitted"}]})),
        Reply(status=400, body=json.dumps({"error": {"message": "grammar-constrained "
                                                                "sampling is disabled"}})),
        good(PIVOT_QUERY))
    llm = make(fake_openai, breaker_threshold=1)
    r = llm.run(pivot_request)
    assert (r.query, r.fallback, r.trace["output_mode"]) == (PIVOT_QUERY, False, "text")
    assert [b.get("response_format", {}).get("type") for b in fake_openai.bodies] == [
        "json_schema", "json_object", "json_object", None]
    assert "schema" in fake_openai.bodies[1]["response_format"]
    assert fake_openai.bodies[2]["response_format"] == {"type": "json_object"}
    assert llm.breaker.state == "closed" and llm.mode == "text"


def test_plain_500_is_still_retried_at_the_same_rung(
        fake_openai: FakeOpenAI, pivot_request: RewriteRequest) -> None:
    fake_openai.script(Reply(status=500, body='{"error": {"message": "out of memory"}}'),
                       good(PIVOT_QUERY))
    r = make(fake_openai).run(pivot_request)
    assert (r.fallback, r.trace["output_mode"], r.trace["attempts"]) == (False, "json_schema", 2)


def test_no_json_mode_at_all_extracts_json_from_text(
        fake_openai: FakeOpenAI, pivot_request: RewriteRequest) -> None:
    refusal = json.dumps({"error": {"message": "unknown field response_format"}})
    prose = ("Here you go:\n```json\n" + json.dumps({"query": PIVOT_QUERY, "topic_shift": True})
             + "\n```")
    fake_openai.script(*[Reply(status=400, body=refusal)] * 3, Reply(content=prose))
    r = make(fake_openai).run(pivot_request)
    assert (r.query, r.fallback, r.topic_shift) == (PIVOT_QUERY, False, True)
    assert r.trace["output_mode"] == "text"
    assert "response_format" not in fake_openai.bodies[-1]


def test_other_400_is_not_a_format_problem(fake_openai: FakeOpenAI,
                                           pivot_request: RewriteRequest) -> None:
    fake_openai.script(Reply(status=400, body=json.dumps({"error": {"message": "bad model"}})))
    r = make(fake_openai).run(pivot_request)
    assert_fallback(r, "http 400", pivot_request)
    assert len(fake_openai.requests) == 1


def test_401_is_not_retried(fake_openai: FakeOpenAI, pivot_request: RewriteRequest) -> None:
    fake_openai.script(Reply(status=401))
    r = make(fake_openai, max_retries=3).run(pivot_request)
    assert_fallback(r, "http 401", pivot_request)
    assert len(fake_openai.requests) == 1


def test_not_a_chat_completion(fake_openai: FakeOpenAI, pivot_request: RewriteRequest) -> None:
    fake_openai.script(Reply(body="<html>wrong base url</html>"))
    r = make(fake_openai).run(pivot_request)
    assert_fallback(r, "invalid response", pivot_request)


def test_connection_refused(pivot_request: RewriteRequest) -> None:
    server = FakeOpenAI().start()
    url = server.base_url
    server.stop()
    r = LLMRewriter(base_url=url, model=MODEL, api_key_env=None, max_retries=1,
                    backoff_base=0.001).run(pivot_request)
    assert_fallback(r, "connection error after 1 retries", pivot_request)


# -- cache, circuit breaker, key --------------------------------------------------------

def test_cache_hit_makes_no_second_request(fake_openai: FakeOpenAI, tmp_path: Path,
                                           pivot_request: RewriteRequest) -> None:
    fake_openai.script(good(PIVOT_QUERY, topic_shift=True))
    cache = tmp_path / "llm-cache.sqlite"
    first = make(fake_openai, cache_path=cache).run(pivot_request)
    # a new process re-running the evaluation: a new rewriter on the same cache file
    again = make(fake_openai, cache_path=cache)
    second = again.run(pivot_request)
    assert len(fake_openai.requests) == 1
    assert first.trace["cache"] == "miss" and second.trace["cache"] == "hit"
    assert (second.query, second.fallback, second.backend) == (PIVOT_QUERY, False, f"llm:{MODEL}")
    assert again.cache is not None and len(again.cache) == 1


def test_bad_answers_are_not_cached(fake_openai: FakeOpenAI, tmp_path: Path,
                                    pivot_request: RewriteRequest) -> None:
    fake_openai.script(Reply(content="not json"), good(PIVOT_QUERY))
    llm = make(fake_openai, cache_path=tmp_path / "c.sqlite")
    assert llm.run(pivot_request).fallback is True
    assert llm.run(pivot_request).fallback is False
    assert len(fake_openai.requests) == 2


def test_circuit_breaker_opens_and_recovers(fake_openai: FakeOpenAI,
                                            pivot_request: RewriteRequest) -> None:
    now = [1000.0]
    llm = make(fake_openai, max_retries=0, breaker_threshold=3, breaker_cooldown=30.0,
               clock=lambda: now[0])
    fake_openai.script(*[Reply(status=502)] * 3)
    reasons = [llm.run(pivot_request).fallback_reason for _ in range(3)]
    assert reasons == ["http 502"] * 3
    # open: no request reaches the server
    r = llm.run(pivot_request)
    assert_fallback(r, "circuit open", pivot_request)
    assert len(fake_openai.requests) == 3
    # after the cooldown one trial request goes through; its success closes the circuit
    now[0] += 31.0
    fake_openai.script(good(PIVOT_QUERY), good(PIVOT_QUERY))
    assert llm.run(pivot_request).fallback is False
    assert llm.run(pivot_request).fallback is False
    assert len(fake_openai.requests) == 5


def test_half_open_failure_reopens(fake_openai: FakeOpenAI,
                                   pivot_request: RewriteRequest) -> None:
    now = [0.0]
    llm = make(fake_openai, max_retries=0, breaker_threshold=1, breaker_cooldown=10.0,
               clock=lambda: now[0])
    fake_openai.script(Reply(status=500), Reply(status=500))
    assert llm.run(pivot_request).fallback_reason == "http 500"
    assert llm.run(pivot_request).fallback_reason == "circuit open"
    now[0] = 11.0
    assert llm.run(pivot_request).fallback_reason == "http 500"
    assert llm.run(pivot_request).fallback_reason == "circuit open"
    assert len(fake_openai.requests) == 2


def test_bad_answers_do_not_open_the_circuit(fake_openai: FakeOpenAI,
                                             pivot_request: RewriteRequest) -> None:
    llm = make(fake_openai, breaker_threshold=2)
    fake_openai.script(Reply(content="nope"), Reply(content="nope"), Reply(content="nope"))
    reasons = [llm.run(pivot_request).fallback_reason for _ in range(3)]
    assert reasons == ["invalid json"] * 3


def test_api_key_read_from_env_only_when_requesting(
        fake_openai: FakeOpenAI, pivot_request: RewriteRequest,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TURNSCOPE_TEST_KEY", raising=False)
    llm = make(fake_openai, api_key_env="TURNSCOPE_TEST_KEY")  # no key yet: fine
    fake_openai.script(good(PIVOT_QUERY), good(PIVOT_QUERY))
    llm.run(pivot_request)
    assert "authorization" not in {k.lower() for k in fake_openai.requests[0].headers}
    monkeypatch.setenv("TURNSCOPE_TEST_KEY", "sk-test")
    llm.run(pivot_request)
    headers = {k.lower(): v for k, v in fake_openai.requests[1].headers.items()}
    assert headers["authorization"] == "Bearer sk-test"


# -- async -------------------------------------------------------------------------------

def test_arun_good_and_timeout(fake_openai: FakeOpenAI, pivot_request: RewriteRequest) -> None:
    llm = make(fake_openai, timeout=0.2)
    fake_openai.script(good(PIVOT_QUERY, topic_shift=True), Reply(delay=3.0, content="{}"))

    async def both() -> tuple[RewriteResult, RewriteResult]:
        try:
            return await llm.arun(pivot_request), await llm.arun(pivot_request)
        finally:
            await llm.aclose()

    ok, slow = asyncio.run(both())
    assert (ok.query, ok.fallback) == (PIVOT_QUERY, False)
    assert_fallback(slow, "timeout", pivot_request)


def test_arun_retries_with_async_sleep(fake_openai: FakeOpenAI,
                                       pivot_request: RewriteRequest) -> None:
    slept: list[float] = []

    async def fake_sleep(seconds: float) -> None:
        slept.append(seconds)

    fake_openai.script(Reply(status=429, headers={"Retry-After": "1"}), good(PIVOT_QUERY))
    llm = make(fake_openai, async_sleep=fake_sleep)
    r = asyncio.run(llm.arun(pivot_request))
    assert (r.fallback, slept) == (False, [0.05])  # capped by retry_after_cap


# -- mock transport unit tests -----------------------------------------------------------

def test_mock_transport_and_extract_slots(pivot_request: RewriteRequest) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        content = json.dumps({"query": "Is the billing export API paginated?",
                              "topic_shift": True, "reference_class": "nonsense",
                              "entities": ["junk", {"name": ""}, 3]})
        return httpx.Response(200, json={"choices": [{"message": {"content": content}}]})

    llm = LLMRewriter(base_url="http://llm.test/v1", model=MODEL, api_key_env=None,
                      transport=httpx.MockTransport(handler), slots="extract",
                      extractor=Session(vocabulary=cloud_vocab()).extractor)
    r = llm.run(pivot_request)
    assert r.fallback is False
    # an unknown class falls back to the classifier's; entities come from the extractor
    assert r.reference_class == "standalone"
    assert r.trace["model_reference_class"] == "nonsense"
    assert [(m.type, m.name, m.source) for m in r.entities if not m.is_attribute] == [
        ("service", "billing export API", "vocab")]


def test_extract_json_object() -> None:
    assert extract_json_object('x {"a": 1} {"b": 2}') == {"a": 1}
    assert extract_json_object("[1, 2] {oops} {\"q\": {\"n\": 1}}") == {"q": {"n": 1}}
    assert extract_json_object("no json here") is None


# -- the session, the SPEC section 1 conversation ------------------------------------------

SCRIPTED = {
    "Which EU regions support customer-managed encryption keys?": good(
        "Which EU regions support customer-managed encryption keys?",
        entities=[("region_group", "EU"), ("feature", "customer-managed keys")]),
    "What's the uptime SLA on the second one?": good(
        "What is the uptime SLA of the Dublin region?", reference_class="textual_immediate",
        entities=[("region", "Dublin"), ("metric", "uptime SLA")]),
    "And the RPO for Dublin?": good(
        "What is the RPO for Dublin?", reference_class="textual_immediate",
        entities=[("region", "Dublin"), ("metric", "RPO")]),
    "ok different question — is the billing export API paginated?": good(
        PIVOT_QUERY, topic_shift=True, entities=[("service", "billing export API")]),
}


def scripted_model(body: dict[str, Any]) -> Reply:
    """A 'model' that answers by the latest message in the prompt."""
    prompt = body["messages"][-1]["content"]
    m = re.search(r"^LATEST MESSAGE: (.*)$", prompt, re.MULTILINE)
    if m is None or m.group(1) not in SCRIPTED:
        return Reply(status=500)
    return SCRIPTED[m.group(1)]


def test_spec_conversation_logs_slot_table_beside_rewrite(
        fake_openai: FakeOpenAI, caplog: pytest.LogCaptureFixture) -> None:
    fake_openai.responder = scripted_model
    llm = make(fake_openai, extractor=None)
    session = Session(policy="default", rewriter=llm, vocabulary=cloud_vocab())
    llm.use_extractor(session.extractor)
    results = []
    with caplog.at_level(logging.INFO, logger="turnscope.session"):
        for role, text in SPEC_CONVERSATION:
            out = session.add(role, text)
            if out is not None:
                results.append(out)
    assert [r.fallback for r in results] == [False] * 4
    assert [r.backend for r in results] == [f"llm:{MODEL}"] * 4
    assert results[-1].query == PIVOT_QUERY and "Dublin" not in results[-1].query
    assert results[-1].topic_shift is True

    # one log line per user turn, with the rewrite and the slot table side by side
    lines = [r.getMessage() for r in caplog.records if r.name == "turnscope.session"]
    assert len(lines) == 4
    for turn, line, res in zip((1, 3, 5, 7), lines, results, strict=True):
        assert line.startswith(f"turn {turn} ")
        assert repr(res.query) in line and "| slots: " in line
    # slots from the same call: the model's entities (canonicalised by the vocabulary)
    assert "region_group:Europe=live" in lines[0]
    assert "region:Dublin=live" in lines[1]
    assert "metric:SLA=live" in lines[1]
    assert "metric:RPO=live" in lines[2] and "metric:SLA" not in lines[2]  # superseded
    assert "service:billing export API=live" in lines[3]
    table7 = {f"{row['type']}:{row['name']}": row["status"] for row in results[-1].slot_table}
    assert table7["service:billing export API"] == "live"

    # the turn-7 prompt of this short conversation is the whole conversation with the
    # counterweight clause (SHORT_CONVERSATION_TURNS): no scoped sections to mislead the model
    prompt7 = fake_openai.bodies[-1]["messages"]
    assert COUNTERWEIGHT_CLAUSE in prompt7[0]["content"]
    user7 = prompt7[1]["content"]
    assert user7.startswith("CONVERSATION:")
    assert "LIVE ENTITIES:" not in user7 and LIVENESS_INSTRUCTION not in user7
    assert "customer-managed encryption keys?" in user7  # turn 1 is shown
    row = results[-1].to_output("fu_0211")
    assert (row["backend"], row["fallback"], row["fallback_reason"]) == (
        f"llm:{MODEL}", False, None)


def test_session_survives_a_dead_backend(fake_openai: FakeOpenAI) -> None:
    fake_openai.responder = lambda body: Reply(status=500)
    session = Session(rewriter=make(fake_openai, max_retries=1, breaker_threshold=2),
                      vocabulary=cloud_vocab())
    outs = [session.add(role, text) for role, text in SPEC_CONVERSATION]
    results = [o for o in outs if o is not None]
    assert [r.fallback_reason for r in results] == [
        "http 500 after 1 retries", "http 500 after 1 retries", "circuit open", "circuit open"]
    assert all(r.backend == "embedded" and r.fallback for r in results)
    assert results[1].query == "What's the uptime SLA on Dublin?"  # the embedded rewrite
    assert len(fake_openai.requests) == 4


def test_japanese_message_asks_for_a_japanese_query(fake_openai: FakeOpenAI) -> None:
    fake_openai.script(good("アバター案内の料金はいくらですか？",
                            entities=[("product", "アバター案内")]))
    session = Session(rewriter=make(fake_openai))
    r = session.user("アバター案内の料金はいくらですか？")
    assert r.fallback is False and r.query.startswith("アバター案内")
    assert "QUERY LANGUAGE: Japanese" in fake_openai.bodies[0]["messages"][1]["content"]


# -- factory and command-line helper ------------------------------------------------------

def test_make_rewriter() -> None:
    assert isinstance(make_rewriter(), EmbeddedRewriter)
    llm = make_rewriter("llm", base_url="http://localhost:11434/v1", model="qwen2.5:7b",
                        timeout=3.0, strict=True, counterweight=False, slots="extract")
    assert isinstance(llm, LLMRewriter)
    assert (llm.config.timeout, llm.config.strict, llm.config.counterweight,
            llm.config.slots) == (3.0, True, False, "extract")
    with pytest.raises(ConfigError, match="valid: embedded, llm"):
        make_rewriter("gpt4")
    with pytest.raises(ConfigError, match="base_url"):
        make_rewriter("llm", model="m")
    with pytest.raises(ConfigError, match="needs model"):
        make_rewriter("llm", base_url="http://x/v1")
    with pytest.raises(ConfigError, match="slots"):
        make_rewriter("llm", base_url="http://x/v1", model="m", slots="both")
    with pytest.raises(ConfigError, match="timeout"):
        make_rewriter("llm", base_url="http://x/v1", model="m", timeout=0)


def test_rewriter_from_options() -> None:
    assert isinstance(rewriter_from_options("embedded", None, None, None), EmbeddedRewriter)
    rw = rewriter_from_options("llm", "http://localhost:8000/v1", "m", None)
    assert isinstance(rw, LLMRewriter) and rw.config.timeout == 10.0
    with pytest.raises(ConfigError, match="--base-url"):
        rewriter_from_options("llm", None, "m", 5.0)
