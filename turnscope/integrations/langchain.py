"""LangChain drop-ins: a retriever wrapper and a condense ``Runnable``.

``TurnscopeRetriever`` wraps any ``BaseRetriever``: each call rewrites the query into a
standalone one with a turnscope :class:`~turnscope.Session` and asks the wrapped
retriever with that. The history is the ``chat_history`` passed to the call or, when
none is passed, the conversation the wrapper keeps (each query, plus each answer given
to :meth:`TurnscopeRetriever.add_answer`).

``turnscope_condense()`` is the rewrite step alone: it takes
``{"input": ..., "chat_history": [...]}`` (what ``create_history_aware_retriever``
takes) and returns the standalone query, so ``turnscope_condense() | retriever``
replaces that function's ``prompt | llm | StrOutputParser() | retriever`` with no
model call.

The trace (the rewrite-output object of docs/output.md plus the rewriter's evidence) goes into each
returned ``Document.metadata["turnscope"]`` and is dispatched to callback handlers as
the custom event ``turnscope_rewrite`` (seen by ``on_custom_event``, by
``astream_events`` and by LangSmith).

Needs ``pip install 'turnscope[langchain]'``.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Sequence
from typing import Any, Literal, overload

from turnscope._exceptions import InputError
from turnscope.integrations._common import (
    TRACE_KEY,
    ConversationRewriter,
    HistoryTurn,
    SessionFactory,
    history_turn,
    missing_extra,
    trace_of,
)

try:
    from langchain_core.callbacks import (
        AsyncCallbackManagerForRetrieverRun,
        CallbackManagerForRetrieverRun,
        adispatch_custom_event,
        dispatch_custom_event,
    )
    from langchain_core.documents import Document
    from langchain_core.messages import BaseMessage, ChatMessage, convert_to_messages
    from langchain_core.retrievers import BaseRetriever
    from langchain_core.runnables import Runnable, RunnableConfig, RunnableLambda
    from langchain_core.runnables.config import run_in_executor
    from pydantic import ConfigDict, PrivateAttr
except ImportError as e:  # pragma: no cover - exercised only without the extra
    raise missing_extra("langchain", "langchain-core", "langchain") from e

__all__ = [
    "TRACE_EVENT",
    "TurnscopeRetriever",
    "create_turnscope_history_aware_retriever",
    "messages_to_turns",
    "turnscope_condense",
]

#: the name of the custom callback event that carries the trace
TRACE_EVENT = "turnscope_rewrite"


def _text(message: BaseMessage) -> str:
    # .text is a method in langchain-core 0.3 and a property in 1.x: read the content
    content = message.content
    if isinstance(content, str):
        return content
    parts = [b if isinstance(b, str) else b.get("text", "")
             for b in content if isinstance(b, str) or b.get("type") == "text"]
    return "".join(p for p in parts if isinstance(p, str))


def messages_to_turns(messages: Iterable[Any]) -> list[HistoryTurn]:
    """turnscope turns of LangChain messages (``BaseMessage``, ``("human", text)``
    tuples, role/content dicts or strings, as a ``MessagesPlaceholder`` takes them).

    Human messages are user turns and AI messages assistant turns; system and tool
    messages and messages with no text (an AI message that only calls a tool) are
    left out.

    >>> from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
    >>> [(t.role.value, t.content) for t in messages_to_turns(
    ...     [SystemMessage("Be brief."), HumanMessage("Hi"), AIMessage("Hello!")])]
    [('user', 'Hi'), ('assistant', 'Hello!')]
    """
    if isinstance(messages, (str, bytes)) or not isinstance(messages, Iterable):
        raise InputError(f"chat_history must be a list of messages, got {type(messages).__name__}")
    try:
        converted = convert_to_messages(list(messages))
    except (ValueError, TypeError, KeyError, NotImplementedError) as e:
        raise InputError(f"chat_history holds a message LangChain cannot read: {e}") from e
    turns = []
    for m in converted:
        # a ChatMessage carries its own role name; the others' type is their role
        role = m.role if isinstance(m, ChatMessage) else m.type
        t = history_turn(role, _text(m))
        if t is not None:
            turns.append(t)
    return turns


def _history(chat_history: Any) -> list[HistoryTurn] | None:
    return None if chat_history is None else messages_to_turns(chat_history)


def _with_trace(docs: Sequence[Document], trace: dict[str, Any]) -> list[Document]:
    # copies: the wrapped retriever may hand back documents it keeps (an in-memory
    # store does), and writing into their metadata would change the store
    return [d.model_copy(update={"metadata": {**d.metadata, TRACE_KEY: copy.deepcopy(trace)}})
            for d in docs]


class TurnscopeRetriever(BaseRetriever):
    """A retriever that rewrites each query with turnscope before asking ``retriever``.

    >>> from langchain_core.documents import Document
    >>> from langchain_core.retrievers import BaseRetriever
    >>> class Echo(BaseRetriever):
    ...     def _get_relevant_documents(self, query, *, run_manager):
    ...         return [Document(page_content=query)]
    >>> r = TurnscopeRetriever(retriever=Echo())
    >>> r.invoke("How is it treated?", chat_history=[
    ...     ("human", "Tell me about lobular carcinoma"),
    ...     ("ai", "Lobular carcinoma is a breast cancer that begins in the lobules.")],
    ... )[0].page_content
    'How is lobular carcinoma treated?'

    Without ``chat_history`` the wrapper keeps the conversation itself: each query is
    recorded, and :meth:`add_answer` records the answer the application gave.
    ``session_factory`` makes the :class:`~turnscope.Session` (``Session()`` by
    default; pass e.g. ``lambda: Session(vocabulary=my_vocabulary)``).
    """

    retriever: BaseRetriever
    session_factory: SessionFactory | None = None
    #: sessions of recent conversations kept to rewrite a longer history incrementally
    cache_size: int = 4

    model_config = ConfigDict(arbitrary_types_allowed=True)

    _rewriter: ConversationRewriter = PrivateAttr()

    def model_post_init(self, context: Any, /) -> None:
        self._rewriter = ConversationRewriter(self.session_factory, cache_size=self.cache_size)

    def _rewrite(self, query: str, chat_history: Any) -> tuple[str, dict[str, Any]]:
        result = self._rewriter.rewrite(query, _history(chat_history))
        return result.query, trace_of(query, result)

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun,
        chat_history: Sequence[Any] | None = None,
    ) -> list[Document]:
        standalone, trace = self._rewrite(query, chat_history)
        child = run_manager.get_child()
        child.on_custom_event(TRACE_EVENT, trace, run_id=run_manager.run_id)
        docs = self.retriever.invoke(standalone, config={"callbacks": child})
        return _with_trace(docs, trace)

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun,
        chat_history: Sequence[Any] | None = None,
    ) -> list[Document]:
        # the rewrite is CPU work under a lock: off the event loop
        standalone, trace = await run_in_executor(None, self._rewrite, query, chat_history)
        child = run_manager.get_child()
        await child.on_custom_event(TRACE_EVENT, trace, run_id=run_manager.run_id)
        docs = await self.retriever.ainvoke(standalone, config={"callbacks": child})
        return _with_trace(docs, trace)

    def add_answer(self, answer: str | BaseMessage) -> None:
        """Record the application's answer in the conversation the wrapper keeps (used
        by calls that pass no ``chat_history``)."""
        self._rewriter.add_answer(_text(answer) if isinstance(answer, BaseMessage) else answer)

    def reset(self) -> None:
        """Forget the kept conversation and the cached sessions."""
        self._rewriter.reset()


@overload
def turnscope_condense(session_factory: SessionFactory | None = ..., *, input_key: str = ...,
                       history_key: str = ..., include_trace: Literal[False] = ...,
                       cache_size: int = ...) -> Runnable[dict[str, Any], str]: ...
@overload
def turnscope_condense(session_factory: SessionFactory | None = ..., *, input_key: str = ...,
                       history_key: str = ..., include_trace: Literal[True],
                       cache_size: int = ...) -> Runnable[dict[str, Any], dict[str, Any]]: ...
def turnscope_condense(
    session_factory: SessionFactory | None = None, *, input_key: str = "input",
    history_key: str = "chat_history", include_trace: bool = False, cache_size: int = 4,
) -> Runnable[dict[str, Any], str] | Runnable[dict[str, Any], dict[str, Any]]:
    """The condense step as a ``Runnable``: ``{"input": ..., "chat_history": [...]}`` to
    the standalone query (a string), or with ``include_trace=True`` to
    ``{"query": ..., "trace": {...}}``. The trace is also dispatched as the custom
    callback event ``turnscope_rewrite``.

    A missing or empty ``chat_history`` passes the input through, as
    ``create_history_aware_retriever`` does.

    >>> condense = turnscope_condense()
    >>> condense.invoke({"input": "How is it treated?", "chat_history": [
    ...     ("human", "Tell me about lobular carcinoma"),
    ...     ("ai", "Lobular carcinoma is a breast cancer that begins in the lobules.")]})
    'How is lobular carcinoma treated?'
    """
    rewriter = ConversationRewriter(session_factory, cache_size=cache_size)

    def read(inputs: Any) -> tuple[str, list[HistoryTurn]]:
        if not isinstance(inputs, dict):
            raise InputError(f"turnscope_condense takes a dict with {input_key!r} and "
                             f"{history_key!r}, got {type(inputs).__name__}")
        if input_key not in inputs:
            raise InputError(f"turnscope_condense input has no {input_key!r} key "
                             f"(keys: {sorted(map(str, inputs))})")
        message = inputs[input_key]
        if not isinstance(message, str):
            raise InputError(f"turnscope_condense input {input_key!r} must be a string, "
                             f"got {type(message).__name__}")
        return message, messages_to_turns(inputs.get(history_key) or [])

    def run(inputs: dict[str, Any]) -> tuple[str | dict[str, Any], dict[str, Any]]:
        message, history = read(inputs)
        result = rewriter.rewrite(message, history)
        trace = trace_of(message, result)
        out: str | dict[str, Any] = {"query": result.query, "trace": trace} if include_trace \
            else result.query
        return out, trace

    def condense(inputs: dict[str, Any], config: RunnableConfig) -> Any:
        out, trace = run(inputs)
        dispatch_custom_event(TRACE_EVENT, trace, config=config)
        return out

    async def acondense(inputs: dict[str, Any], config: RunnableConfig) -> Any:
        out, trace = await run_in_executor(None, run, inputs)
        await adispatch_custom_event(TRACE_EVENT, trace, config=config)
        return out

    return RunnableLambda(condense, afunc=acondense, name="turnscope_condense")


def create_turnscope_history_aware_retriever(
    retriever: Runnable[str, list[Document]], session_factory: SessionFactory | None = None,
) -> Runnable[dict[str, Any], list[Document]]:
    """``create_history_aware_retriever(llm, retriever, prompt)`` with turnscope in place
    of the LLM: takes ``{"input": ..., "chat_history": [...]}``, returns documents.

    >>> from langchain_core.documents import Document
    >>> from langchain_core.runnables import RunnableLambda
    >>> echo = RunnableLambda(lambda q: [Document(page_content=q)])
    >>> chain = create_turnscope_history_aware_retriever(echo)
    >>> chain.invoke({"input": "What is BM25?", "chat_history": []})[0].page_content
    'What is BM25?'
    """
    chain: Runnable[dict[str, Any], list[Document]] = turnscope_condense(session_factory) | retriever
    return chain.with_config(run_name="chat_retriever_chain")
