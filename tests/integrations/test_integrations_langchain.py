"""LangChain drop-ins against langchain-core's own objects: an InMemoryVectorStore
retriever, runnables, callbacks."""

from __future__ import annotations

import asyncio
import math
import re
from collections import Counter
from typing import Any
from uuid import UUID

import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.retrievers import BaseRetriever
from langchain_core.vectorstores import InMemoryVectorStore

from turnscope import InputError
from turnscope.integrations.langchain import (
    TRACE_EVENT,
    TurnscopeRetriever,
    create_turnscope_history_aware_retriever,
    messages_to_turns,
    turnscope_condense,
)

from ._conversation import ANSWER, ASK, CAPITAL, FOLLOW_UP, LEFT, PASSAGES, SUBJECT, TREATMENT

HISTORY = [HumanMessage(ASK), AIMessage(ANSWER)]


class BagOfWords(Embeddings):
    """Hashed word counts: passages rank by the words they share with the query."""

    dim = 256

    def _vector(self, text: str) -> list[float]:
        v = [0.0] * self.dim
        for word, n in Counter(re.findall(r"[a-z]+", text.lower())).items():
            if len(word) > 3:  # drops "how", "is", "it", "the"
                v[sum(ord(c) * 31 ** i for i, c in enumerate(word)) % self.dim] += n
        norm = math.sqrt(sum(x * x for x in v)) or 1.0
        return [x / norm for x in v]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self._vector(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._vector(text)


class Recorder(BaseCallbackHandler):
    """Records what LangChain reports: each retriever run's query and custom events."""

    def __init__(self) -> None:
        self.retriever_queries: list[tuple[str, UUID | None]] = []
        self.events: list[tuple[str, Any]] = []

    def on_retriever_start(self, serialized: dict[str, Any] | None, query: str, *, run_id: UUID,
                           parent_run_id: UUID | None = None, **kwargs: Any) -> None:
        self.retriever_queries.append((query, parent_run_id))

    def on_custom_event(self, name: str, data: Any, *, run_id: UUID, **kwargs: Any) -> None:
        self.events.append((name, data))


@pytest.fixture
def store() -> InMemoryVectorStore:
    s = InMemoryVectorStore(BagOfWords())
    s.add_documents([Document(page_content=p) for p in PASSAGES])
    return s


@pytest.fixture
def base(store: InMemoryVectorStore) -> BaseRetriever:
    return store.as_retriever(search_kwargs={"k": 2})


def inner_queries(recorder: Recorder) -> list[str]:
    """The queries of the wrapped retriever's runs (those with a parent run)."""
    return [q for q, parent in recorder.retriever_queries if parent is not None]


def test_wrapped_retriever_receives_the_standalone_query(base: BaseRetriever) -> None:
    rec = Recorder()
    docs = TurnscopeRetriever(retriever=base).invoke(
        FOLLOW_UP, config={"callbacks": [rec]}, chat_history=HISTORY)
    (received,) = inner_queries(rec)
    assert SUBJECT in received.lower()
    assert received != FOLLOW_UP
    assert docs[0].page_content == TREATMENT
    # the raw follow-up alone finds a different passage first: the rewrite is what helps
    assert base.invoke(FOLLOW_UP)[0].page_content != TREATMENT


def test_trace_is_in_each_document_and_dispatched_as_an_event(
        base: BaseRetriever, store: InMemoryVectorStore) -> None:
    rec = Recorder()
    docs = TurnscopeRetriever(retriever=base).invoke(
        FOLLOW_UP, config={"callbacks": [rec]}, chat_history=HISTORY)
    (received,) = inner_queries(rec)
    assert docs
    for d in docs:
        trace = d.metadata["turnscope"]
        assert trace["message"] == FOLLOW_UP
        assert trace["query"] == received
        assert SUBJECT in [c.lower() for c in trace["carried"]]
        assert trace["reference_class"] != "standalone"
    assert [name for name, _ in rec.events] == [TRACE_EVENT]
    assert rec.events[0][1]["query"] == received
    # the store's own documents are not written into
    assert all("turnscope" not in d.metadata for d in store.similarity_search(TREATMENT, k=5))


def test_empty_history_passes_the_query_through(base: BaseRetriever) -> None:
    rec = Recorder()
    wrapper = TurnscopeRetriever(retriever=base)
    wrapper.invoke(FOLLOW_UP, config={"callbacks": [rec]}, chat_history=[])
    wrapper.reset()
    wrapper.invoke(ASK, config={"callbacks": [rec]})  # first turn of a kept conversation
    assert inner_queries(rec) == [FOLLOW_UP, ASK]


def test_a_subject_the_user_left_is_not_carried(base: BaseRetriever) -> None:
    rec = Recorder()
    history = HISTORY + [HumanMessage(FOLLOW_UP), AIMessage(TREATMENT)]
    docs = TurnscopeRetriever(retriever=base).invoke(LEFT, config={"callbacks": [rec]}, chat_history=history)
    (received,) = inner_queries(rec)
    assert SUBJECT not in received.lower()
    assert docs[0].page_content == CAPITAL
    assert docs[0].metadata["turnscope"]["carried"] == []


def test_kept_conversation_with_add_answer(base: BaseRetriever) -> None:
    rec = Recorder()
    wrapper = TurnscopeRetriever(retriever=base)
    wrapper.invoke(ASK, config={"callbacks": [rec]})
    wrapper.add_answer(AIMessage(ANSWER))
    docs = wrapper.invoke(FOLLOW_UP, config={"callbacks": [rec]})
    assert SUBJECT in inner_queries(rec)[-1].lower()
    assert docs[0].page_content == TREATMENT


def test_async_path_rewrites_too(base: BaseRetriever) -> None:
    rec = Recorder()
    docs = asyncio.run(TurnscopeRetriever(retriever=base).ainvoke(
        FOLLOW_UP, config={"callbacks": [rec]}, chat_history=HISTORY))
    assert SUBJECT in inner_queries(rec)[0].lower()
    assert docs[0].page_content == TREATMENT
    assert [name for name, _ in rec.events] == [TRACE_EVENT]


def test_message_types_map_to_turns() -> None:
    turns = messages_to_turns([
        SystemMessage("You answer questions about oncology."),
        ("human", ASK),
        AIMessage(content=[{"type": "text", "text": ANSWER}]),
        AIMessage(content="", tool_calls=[{"name": "search", "args": {}, "id": "1"}]),
        ToolMessage("raw search payload", tool_call_id="1"),
        {"role": "user", "content": FOLLOW_UP},
    ])
    assert [(t.role.value, t.content) for t in turns] == [
        ("user", ASK), ("assistant", ANSWER), ("user", FOLLOW_UP)]
    with pytest.raises(InputError, match="chat_history"):
        messages_to_turns("not a list")


def test_condense_runnable_takes_input_and_chat_history() -> None:
    condense = turnscope_condense()
    out = condense.invoke({"input": FOLLOW_UP, "chat_history": HISTORY})
    assert isinstance(out, str) and SUBJECT in out.lower()
    # tuples, as a MessagesPlaceholder takes them
    tuples = condense.invoke({"input": FOLLOW_UP, "chat_history": [("human", ASK), ("ai", ANSWER)]})
    assert tuples == out
    assert condense.invoke({"input": FOLLOW_UP, "chat_history": []}) == FOLLOW_UP
    assert condense.invoke({"input": FOLLOW_UP}) == FOLLOW_UP


def test_condense_runnable_trace_output_and_event() -> None:
    rec = Recorder()
    condense = turnscope_condense(include_trace=True, input_key="question", history_key="history")
    out = condense.invoke({"question": FOLLOW_UP, "history": HISTORY}, config={"callbacks": [rec]})
    assert set(out) == {"query", "trace"}
    assert out["trace"]["query"] == out["query"]
    assert [name for name, _ in rec.events] == [TRACE_EVENT]
    assert rec.events[0][1]["query"] == out["query"]


def test_condense_runnable_refuses_bad_input() -> None:
    condense = turnscope_condense()
    with pytest.raises(InputError, match="'input'"):
        condense.invoke({"question": FOLLOW_UP})
    with pytest.raises(InputError, match="dict"):
        condense.invoke(FOLLOW_UP)  # type: ignore[arg-type]


def test_condense_piped_into_the_retriever_replaces_the_llm_step(base: BaseRetriever) -> None:
    rec = Recorder()
    chain = create_turnscope_history_aware_retriever(base)
    docs = chain.invoke({"input": FOLLOW_UP, "chat_history": HISTORY}, config={"callbacks": [rec]})
    (received,) = inner_queries(rec)
    assert SUBJECT in received.lower()
    assert docs[0].page_content == TREATMENT
    async_docs = asyncio.run((turnscope_condense() | base).ainvoke({"input": FOLLOW_UP, "chat_history": HISTORY}))
    assert async_docs[0].page_content == TREATMENT
