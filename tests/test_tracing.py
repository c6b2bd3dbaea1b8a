"""OpenTelemetry spans of a turn (turnscope._tracing), recorded with the SDK's in-memory
exporter, and the package with tracing unavailable."""

from __future__ import annotations

import importlib
import json
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import httpx
import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import NoOpTracer, StatusCode

from turnscope import Session, TurnResult, _tracing
from turnscope.entities import bundled_vocabulary
from turnscope.rewriters import LLMRewriter, RewriteRequest, RewriteResult

#: an open-domain conversation of our own: the last turn needs a phrase of the answer
SOLAR = [
    ("user", "How do solar panels generate electricity?"),
    ("assistant", "Solar panels use photovoltaic cells that turn sunlight into direct current."),
    ("user", "How long do they last?"),
]
MODEL = "m"


@pytest.fixture
def exporter(monkeypatch: pytest.MonkeyPatch) -> Iterator[InMemorySpanExporter]:
    """Spans of this test only: a private provider, not the process-wide one (which
    OpenTelemetry lets a process set once)."""
    provider = TracerProvider()
    memory = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    monkeypatch.setattr(_tracing, "_tracer", provider.get_tracer(_tracing.TRACER_NAME))
    yield memory
    provider.shutdown()


def named(spans: Sequence[ReadableSpan], name: str) -> list[ReadableSpan]:
    return [s for s in spans if s.name == name]


def attrs(span: ReadableSpan) -> dict[str, Any]:
    return dict(span.attributes or {})


def parent_of(span: ReadableSpan, spans: Sequence[ReadableSpan]) -> ReadableSpan | None:
    if span.parent is None:
        return None
    found = [s for s in spans if s.context is not None and s.context.span_id == span.parent.span_id]
    return found[0] if found else None


def talk(session: Session, turns: Sequence[tuple[str, str]]) -> list[TurnResult]:
    """Feed ``turns``; the user turns' results."""
    out = [session.add(role, text) for role, text in turns]
    return [r for r in out if r is not None]


def llm(handler: httpx.MockTransport) -> LLMRewriter:
    return LLMRewriter(base_url="http://llm.test/v1", model=MODEL, api_key_env=None,
                       transport=handler, max_retries=0, backoff_base=0.001)


# -- a turn's spans ---------------------------------------------------------------------

def test_each_user_turn_is_a_turn_span_with_scope_and_rewrite_nested(
        exporter: InMemorySpanExporter) -> None:
    results = talk(Session(), SOLAR)
    spans = exporter.get_finished_spans()
    turns = named(spans, "turnscope.turn")
    assert len(turns) == len(results) == 2
    assert all(t.parent is None for t in turns)  # a turn is the root: nothing was open
    for turn in turns:
        children = [s for s in spans if parent_of(s, spans) is turn]
        assert sorted(c.name for c in children) == ["turnscope.rewrite", "turnscope.scope"]
        assert all(c.context.trace_id == turn.context.trace_id for c in children)
    # the scope is decided before the rewriter runs
    last = turns[-1]
    scope, rewrite = (next(s for s in spans if s.name == n and parent_of(s, spans) is last)
                      for n in ("turnscope.scope", "turnscope.rewrite"))
    assert scope.end_time is not None and rewrite.start_time is not None
    assert scope.end_time <= rewrite.start_time
    assert not named(spans, "turnscope.fallback")


def test_the_spans_carry_the_reference_class_the_carried_phrases_and_the_path(
        exporter: InMemorySpanExporter) -> None:
    r = talk(Session(), SOLAR)[-1]
    assert r.carried, "the follow-up needs a phrase of the answer"
    rules = r.trace["rules"]
    assert isinstance(rules, list) and "learned-resolver" in rules
    spans = exporter.get_finished_spans()
    turn = named(spans, "turnscope.turn")[-1]
    rewrite = next(s for s in named(spans, "turnscope.rewrite") if parent_of(s, spans) is turn)
    scope = next(s for s in named(spans, "turnscope.scope") if parent_of(s, spans) is turn)
    for sp in (turn, rewrite):
        a = attrs(sp)
        assert list(a["turnscope.carried"]) == list(r.carried)
        assert a["turnscope.reference_class"] == r.reference_class
        assert a["turnscope.topic_shift"] is r.topic_shift
        assert a["turnscope.backend"] == r.backend == "embedded"
        assert a["turnscope.rewriter"] == "embedded"
        assert a["turnscope.fallback"] is False
        assert "turnscope.fallback.reason" not in a  # None is left out, not sent
        assert a["turnscope.decided_by"] == "resolver"
    t = attrs(turn)
    assert t["turnscope.turn.index"] == r.turn
    assert t["turnscope.policy"] == r.scope.policy == "default"
    s = attrs(scope)
    assert s["turnscope.policy"] == "default"
    assert s["turnscope.scope.turns"] == len(r.scope.turns)
    assert list(s["turnscope.scope.slots"]) == r.scope.slot_keys()
    assert s["turnscope.scope.topic_shift"] is r.scope.topic_shift
    assert s["turnscope.scope.guarded"] is r.scope.guarded
    assert isinstance(s["turnscope.reference_class"], str)
    assert all(isinstance(c, str) for c in s["turnscope.cues"])


def test_a_declared_vocabulary_that_decides_is_named_as_the_path(
        exporter: InMemorySpanExporter) -> None:
    s = Session(vocabulary=bundled_vocabulary("cloud"))
    s.user("Which EU regions support customer-managed encryption keys?")
    s.assistant("Frankfurt and Dublin both support CMK for data at rest.")
    r = s.user("What's the uptime SLA on the second one?")
    assert r.trace.get("domain") == "vocabulary"
    turn = named(exporter.get_finished_spans(), "turnscope.turn")[-1]
    assert attrs(turn)["turnscope.decided_by"] == "vocabulary"


# -- falling back -----------------------------------------------------------------------

def _timeout(request: httpx.Request) -> httpx.Response:
    raise httpx.ReadTimeout("no answer in time", request=request)


def _garbage(request: httpx.Request) -> httpx.Response:
    content = '{"query": "half an answer", "topic_shift":'  # not JSON: cut mid-object
    return httpx.Response(200, json={"choices": [{"message": {"content": content},
                                                  "finish_reason": "stop"}]})


@pytest.mark.parametrize(("handler", "reason"), [(_timeout, "timeout"), (_garbage, "invalid json")])
def test_a_failing_llm_backend_leaves_a_fallback_span_under_the_rewrite(
        exporter: InMemorySpanExporter, handler: Callable[[httpx.Request], httpx.Response],
        reason: str) -> None:
    s = Session(rewriter=llm(httpx.MockTransport(handler)))
    r = talk(s, SOLAR)[-1]
    assert (r.fallback, r.fallback_reason, r.backend) == (True, reason, "embedded")
    # the result's trace says it fell back, from what and why
    assert r.trace["attempted"] == f"llm:{MODEL}" and r.trace["fallback_reason"] == reason
    spans = exporter.get_finished_spans()
    turn = named(spans, "turnscope.turn")[-1]
    rewrite = next(x for x in named(spans, "turnscope.rewrite") if parent_of(x, spans) is turn)
    fallbacks = [x for x in named(spans, "turnscope.fallback") if parent_of(x, spans) is rewrite]
    assert len(fallbacks) == 1
    f = attrs(fallbacks[0])
    assert (f["turnscope.fallback.from"], f["turnscope.fallback.to"],
            f["turnscope.fallback.reason"]) == (f"llm:{MODEL}", "embedded", reason)
    for sp in (turn, rewrite):
        a = attrs(sp)
        assert a["turnscope.rewriter"] == f"llm:{MODEL}"
        assert a["turnscope.backend"] == "embedded"
        assert a["turnscope.fallback"] is True
        assert a["turnscope.fallback.reason"] == reason
        # the embedded rewrite answered, and what it carried is the answer's
        assert list(a["turnscope.carried"]) == list(r.carried)
        assert a["turnscope.decided_by"] != "llm"


def test_a_good_llm_answer_is_decided_by_the_backend(exporter: InMemorySpanExporter) -> None:
    def answer(request: httpx.Request) -> httpx.Response:
        body = {"query": "How long do solar panels last?", "topic_shift": False,
                "reference_class": "textual_immediate",
                "entities": [{"type": "thing", "name": "solar panels"}]}
        return httpx.Response(200, json={"choices": [{"message": {"content": json.dumps(body)},
                                                      "finish_reason": "stop"}]})

    r = talk(Session(rewriter=llm(httpx.MockTransport(answer))), SOLAR)[-1]
    assert (r.backend, r.fallback) == (f"llm:{MODEL}", False)
    spans = exporter.get_finished_spans()
    assert not named(spans, "turnscope.fallback")
    a = attrs(named(spans, "turnscope.rewrite")[-1])
    assert (a["turnscope.decided_by"], a["turnscope.fallback"]) == ("llm", False)
    assert a["turnscope.backend"] == f"llm:{MODEL}"


def test_a_rewriter_that_raises_falls_back_in_the_session_with_a_span(
        exporter: InMemorySpanExporter) -> None:
    class Broken:
        name = "broken"

        def run(self, request: RewriteRequest) -> RewriteResult:
            raise RuntimeError("backend exploded")

    r = Session(rewriter=Broken()).user("How do solar panels generate electricity?")
    reason = "RuntimeError: backend exploded"
    assert (r.fallback, r.fallback_reason) == (True, reason)
    assert r.trace["attempted"] == "broken" and r.trace["fallback_reason"] == reason
    spans = exporter.get_finished_spans()
    (fallback,) = named(spans, "turnscope.fallback")
    parent = parent_of(fallback, spans)
    assert parent is not None and parent.name == "turnscope.rewrite"
    assert attrs(fallback)["turnscope.fallback.reason"] == reason
    assert attrs(fallback)["turnscope.fallback.from"] == "broken"


def test_a_failing_turn_records_the_error_on_its_span(exporter: InMemorySpanExporter) -> None:
    from turnscope import InputError

    with pytest.raises(InputError):
        Session().user("   ")
    (turn,) = named(exporter.get_finished_spans(), "turnscope.turn")
    assert turn.status.status_code is StatusCode.ERROR
    assert [e.name for e in turn.events] == ["exception"]


def test_attribute_values_are_types_opentelemetry_accepts(exporter: InMemorySpanExporter) -> None:
    talk(Session(), SOLAR)
    for sp in exporter.get_finished_spans():
        for value in attrs(sp).values():
            if isinstance(value, (str, bool, int, float)):
                continue
            assert isinstance(value, tuple) and len({type(v) for v in value}) <= 1


# -- tracing unavailable ----------------------------------------------------------------

def _queries(session: Session) -> list[tuple[str, tuple[str, ...], bool]]:
    return [(r.query, r.carried, r.topic_shift) for r in talk(session, SOLAR)]


def test_without_a_tracer_the_session_works_and_records_nothing(
        exporter: InMemorySpanExporter, monkeypatch: pytest.MonkeyPatch) -> None:
    traced = _queries(Session())
    exporter.clear()
    monkeypatch.setattr(_tracing, "_tracer", None)
    assert _tracing.span("turnscope.turn") is _tracing.span("turnscope.scope")  # one shared no-op
    assert _queries(Session()) == traced
    assert exporter.get_finished_spans() == ()


def test_a_non_recording_tracer_yields_no_span_to_fill(monkeypatch: pytest.MonkeyPatch) -> None:
    # opentelemetry-api without an SDK configured: its spans record nothing
    monkeypatch.setattr(_tracing, "_tracer", NoOpTracer())
    with _tracing.span("turnscope.turn") as sp:
        assert sp is None
    assert _queries(Session())


@pytest.fixture
def without_opentelemetry(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The helper imported as if opentelemetry-api were not installed."""
    monkeypatch.setitem(sys.modules, "opentelemetry", None)  # makes the import fail
    importlib.reload(_tracing)
    try:
        yield
    finally:
        monkeypatch.undo()
        importlib.reload(_tracing)  # the real tracer back for the tests after this one


def test_without_opentelemetry_installed_the_tracer_is_none(without_opentelemetry: None) -> None:
    assert _tracing._tracer is None
    with _tracing.fallback_span("llm:m", "timeout") as sp:
        assert sp is None
    r = talk(Session(), SOLAR)[-1]
    assert r.query and r.fallback is False
