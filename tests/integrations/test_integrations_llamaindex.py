"""TurnscopeChatEngine against llama-index-core's own objects: a keyword-table index,
its retriever query engine, chat memory, MockLLM and instrumentation events."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
from llama_index.core import Document, PromptTemplate, SimpleKeywordTableIndex
from llama_index.core.base.base_query_engine import BaseQueryEngine
from llama_index.core.instrumentation import get_dispatcher  # type: ignore[attr-defined]
from llama_index.core.instrumentation.event_handlers import BaseEventHandler
from llama_index.core.instrumentation.events import BaseEvent
from llama_index.core.instrumentation.events.retrieval import RetrievalStartEvent
from llama_index.core.llms import ChatMessage, MockLLM
from llama_index.core.schema import QueryBundle

from turnscope import InputError
from turnscope.integrations.llamaindex import (
    TurnscopeChatEngine,
    TurnscopeRewriteEvent,
    messages_to_turns,
)

from ._conversation import ANSWER, ASK, CAPITAL, FOLLOW_UP, LEFT, PASSAGES, SUBJECT, TREATMENT

HISTORY = [ChatMessage(role="user", content=ASK), ChatMessage(role="assistant", content=ANSWER)]


class Events(BaseEventHandler):
    """Records the queries retrievals start with and turnscope's rewrite events."""

    retrievals: list[str] = []
    rewrites: list[TurnscopeRewriteEvent] = []

    def handle(self, event: BaseEvent, **kwargs: Any) -> None:
        if isinstance(event, RetrievalStartEvent):
            q = event.str_or_query_bundle
            self.retrievals.append(q.query_str if isinstance(q, QueryBundle) else str(q))
        elif isinstance(event, TurnscopeRewriteEvent):
            self.rewrites.append(event)


@pytest.fixture
def events() -> Iterator[Events]:
    handler = Events(retrievals=[], rewrites=[])
    root = get_dispatcher()
    root.add_event_handler(handler)
    try:
        yield handler
    finally:
        root.event_handlers.remove(handler)


def query_engine(streaming: bool = False) -> BaseQueryEngine:
    """A keyword-table index (no embedding model) answered by MockLLM, which echoes its
    prompt: with the prompt ``{context_str}`` the answer is the best passage."""
    llm = MockLLM()
    index = SimpleKeywordTableIndex.from_documents([Document(text=p) for p in PASSAGES], llm=llm)
    engine: BaseQueryEngine = index.as_query_engine(
        llm=llm, text_qa_template=PromptTemplate("{context_str}"), num_chunks_per_query=1,
        streaming=streaming)
    return engine


def test_query_engine_receives_the_standalone_query(events: Events) -> None:
    engine = TurnscopeChatEngine.from_defaults(query_engine(), chat_history=HISTORY)
    response = engine.chat(FOLLOW_UP)
    (received,) = events.retrievals
    assert SUBJECT in received.lower()
    assert received != FOLLOW_UP
    assert response.response == TREATMENT
    assert response.sources[0].raw_input["query"] == received


def test_trace_in_metadata_sources_and_instrumentation(events: Events) -> None:
    response = TurnscopeChatEngine.from_defaults(query_engine()).chat(FOLLOW_UP, chat_history=HISTORY)
    trace = (response.metadata or {})["turnscope"]
    assert trace["message"] == FOLLOW_UP
    assert trace["query"] == events.retrievals[0]
    assert SUBJECT in [c.lower() for c in trace["carried"]]
    assert response.sources[0].raw_input["turnscope"] == trace
    (event,) = events.rewrites
    assert (event.message, event.query, event.trace) == (FOLLOW_UP, trace["query"], trace)


def test_memory_carries_the_conversation_and_a_left_subject_is_dropped(events: Events) -> None:
    engine = TurnscopeChatEngine.from_defaults(query_engine())
    first = engine.chat(ASK)
    assert (first.metadata or {})["turnscope"]["query"] == ASK  # empty history: passed through
    assert SUBJECT in engine.chat(FOLLOW_UP).response.lower()
    left = engine.chat(LEFT)
    assert SUBJECT not in events.retrievals[-1].lower()
    assert (left.metadata or {})["turnscope"]["carried"] == []
    assert left.response == CAPITAL
    assert [m.role.value for m in engine.chat_history] == ["user", "assistant"] * 3
    engine.reset()
    assert engine.chat(FOLLOW_UP).sources[0].raw_input["query"] == FOLLOW_UP


def test_async_chat(events: Events) -> None:
    engine = TurnscopeChatEngine.from_defaults(query_engine())
    response = asyncio.run(engine.achat(FOLLOW_UP, chat_history=HISTORY))
    assert SUBJECT in events.retrievals[0].lower()
    assert response.response == TREATMENT
    assert SUBJECT in (response.metadata or {})["turnscope"]["query"].lower()


def test_streaming_chat_records_the_trace_beside_the_condensed_query(events: Events) -> None:
    engine = TurnscopeChatEngine.from_defaults(query_engine(streaming=True))
    response = engine.stream_chat(FOLLOW_UP, chat_history=HISTORY)
    text = "".join(response.response_gen)
    # llama-index writes the answer to the engine's memory on a thread of its own; wait for it,
    # or its store calls back into an event loop the test has already closed
    writer = response.write_response_to_history_thread
    if writer is not None:
        writer.join(timeout=30)
        assert not writer.is_alive()
    assert text == TREATMENT
    raw = response.sources[0].raw_input
    assert raw["turnscope"]["query"] == raw["query"] == events.retrievals[0]


def test_messages_map_to_turns() -> None:
    turns = messages_to_turns([
        ChatMessage(role="system", content="You answer questions about oncology."),
        *HISTORY,
        ChatMessage(role="tool", content="raw payload"),
        ChatMessage(role="assistant", content=""),
    ])
    assert [(t.role.value, t.content) for t in turns] == [("user", ASK), ("assistant", ANSWER)]
    with pytest.raises(InputError, match=r"chat_history\[0\]"):
        messages_to_turns([("user", ASK)])  # type: ignore[list-item]


def test_a_condense_prompt_is_refused() -> None:
    with pytest.raises(InputError, match="condense_question_prompt"):
        TurnscopeChatEngine.from_defaults(query_engine(), condense_question_prompt=PromptTemplate("{question}"))
    with pytest.raises(InputError, match="unknown"):
        TurnscopeChatEngine.from_defaults(query_engine(), system_prompt="Be brief.")
