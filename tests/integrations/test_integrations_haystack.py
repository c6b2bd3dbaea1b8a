"""TurnscopeRewriter against haystack-ai's own objects: a Pipeline with an
InMemoryDocumentStore and InMemoryBM25Retriever, its tracer and serialisation."""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import Iterator
from typing import Any

import pytest
from haystack import Document, Pipeline
from haystack.components.retrievers.in_memory import InMemoryBM25Retriever
from haystack.dataclasses import ChatMessage
from haystack.document_stores.in_memory import InMemoryDocumentStore
from haystack.tracing.tracer import Span, Tracer, disable_tracing, enable_tracing
from haystack.tracing.tracer import tracer as proxy_tracer

from turnscope import InputError, Session
from turnscope.integrations.haystack import TurnscopeRewriter, messages_to_turns

from ._conversation import ANSWER, ASK, CAPITAL, FOLLOW_UP, LEFT, PASSAGES, SUBJECT, TREATMENT

HISTORY = [ChatMessage.from_user(ASK), ChatMessage.from_assistant(ANSWER)]


def make_session() -> Session:
    """A module-level session factory: serialisable by its import path."""
    return Session(policy="full")


class RecordingSpan(Span):
    def __init__(self, name: str, tags: dict[str, Any]) -> None:
        self.name = name
        self.tags = dict(tags)

    def set_tag(self, key: str, value: Any) -> None:
        self.tags[key] = value


class RecordingTracer(Tracer):
    """Keeps every span Haystack opens, with its tags."""

    def __init__(self) -> None:
        self.spans: list[RecordingSpan] = []
        self._stack: list[RecordingSpan] = []

    @contextlib.contextmanager
    def trace(self, operation_name: str, tags: dict[str, Any] | None = None,
              parent_span: Span | None = None) -> Iterator[Span]:
        span = RecordingSpan(operation_name, tags or {})
        self.spans.append(span)
        self._stack.append(span)
        try:
            yield span
        finally:
            self._stack.pop()

    def current_span(self) -> Span | None:
        return self._stack[-1] if self._stack else None

    def component_span(self, name: str) -> RecordingSpan:
        (span,) = [s for s in self.spans if s.tags.get("haystack.component.name") == name]
        return span


@pytest.fixture
def recording() -> Iterator[RecordingTracer]:
    rec = RecordingTracer()
    content = proxy_tracer.is_content_tracing_enabled
    proxy_tracer.is_content_tracing_enabled = True
    enable_tracing(rec)
    try:
        yield rec
    finally:
        disable_tracing()
        proxy_tracer.is_content_tracing_enabled = content


def pipeline(rewriter: TurnscopeRewriter | None = None) -> Pipeline:
    store = InMemoryDocumentStore()
    store.write_documents([Document(content=p) for p in PASSAGES])
    p = Pipeline()
    p.add_component("rewriter", rewriter or TurnscopeRewriter())
    p.add_component("retriever", InMemoryBM25Retriever(document_store=store, top_k=2))
    p.connect("rewriter.query", "retriever.query")
    return p


def run(p: Pipeline, query: str, history: list[ChatMessage] | None) -> dict[str, Any]:
    inputs: dict[str, Any] = {"query": query}
    if history is not None:
        inputs["history"] = history
    out: dict[str, Any] = p.run({"rewriter": inputs}, include_outputs_from={"rewriter"})
    return out


def test_retriever_receives_the_standalone_query(recording: RecordingTracer) -> None:
    out = run(pipeline(), FOLLOW_UP, HISTORY)
    received = recording.component_span("retriever").tags["haystack.component.input"]["query"]
    assert SUBJECT in received.lower()
    assert received == out["rewriter"]["query"] != FOLLOW_UP
    assert out["retriever"]["documents"][0].content == TREATMENT


def test_trace_is_an_output_and_on_the_component_span(recording: RecordingTracer) -> None:
    out = run(pipeline(), FOLLOW_UP, HISTORY)
    trace = out["rewriter"]["trace"]
    assert trace["message"] == FOLLOW_UP
    assert trace["query"] == out["rewriter"]["query"]
    assert SUBJECT in [c.lower() for c in trace["carried"]]
    tags = recording.component_span("rewriter").tags
    assert tags["turnscope.reference_class"] == trace["reference_class"]
    assert tags["turnscope.fallback"] is False
    assert tags["turnscope.query"] == trace["query"]
    assert tags["turnscope.trace"] == trace


def test_no_or_empty_history_passes_the_query_through() -> None:
    p = pipeline()
    no_history: tuple[list[ChatMessage] | None, ...] = (None, [])
    for history in no_history:
        out = run(p, FOLLOW_UP, history)
        assert out["rewriter"]["query"] == FOLLOW_UP
        assert out["rewriter"]["trace"]["carried"] == []


def test_a_subject_the_user_left_is_not_carried() -> None:
    p = pipeline()
    history = HISTORY + [ChatMessage.from_user(FOLLOW_UP), ChatMessage.from_assistant(TREATMENT)]
    out = run(p, LEFT, history)
    assert SUBJECT not in out["rewriter"]["query"].lower()
    assert out["rewriter"]["trace"]["carried"] == []
    assert out["retriever"]["documents"][0].content == CAPITAL


def test_messages_map_to_turns() -> None:
    turns = messages_to_turns([ChatMessage.from_system("You answer questions about oncology."), *HISTORY,
                               ChatMessage.from_assistant("")])
    assert [(t.role.value, t.content) for t in turns] == [("user", ASK), ("assistant", ANSWER)]
    with pytest.raises(InputError, match=r"history\[0\]"):
        messages_to_turns(["hello"])  # type: ignore[list-item]


def test_pipeline_round_trips_through_yaml_with_its_session_factory() -> None:
    p = pipeline(TurnscopeRewriter(session_factory=make_session, cache_size=2))
    # Haystack 3 loads only modules on an allowlist; Haystack 2 has no such argument
    allow: dict[str, Any] = {"allowed_modules": ["turnscope.*", make_session.__module__]} \
        if "allowed_modules" in inspect.signature(Pipeline.loads).parameters else {}
    loaded = Pipeline.loads(p.dumps(), **allow)
    rewriter = loaded.get_component("rewriter")
    assert isinstance(rewriter, TurnscopeRewriter)
    assert rewriter.session_factory is make_session
    assert rewriter.cache_size == 2
    out = loaded.run({"rewriter": {"query": FOLLOW_UP, "history": HISTORY}}, include_outputs_from={"rewriter"})
    assert out["rewriter"]["trace"]["scope"]["policy"] == "full"
    assert SUBJECT in out["rewriter"]["query"].lower()
