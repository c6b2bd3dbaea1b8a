"""LlamaIndex drop-in: ``CondenseQuestionChatEngine`` with turnscope as its condense call.

``CondenseQuestionChatEngine`` asks an LLM to turn the chat history and the new
message into a standalone question, then queries its query engine with it.
:class:`TurnscopeChatEngine` is that engine with ``_condense_question`` (and its async
twin) answered by a turnscope :class:`~turnscope.Session` instead: no model call, and
the same memory, query engine, streaming and response objects as before.

The trace (the rewrite-output object of docs/output.md plus the rewriter's evidence) goes into the
response's ``metadata["turnscope"]`` (a streaming response has no metadata), into the
query-engine source's ``raw_input["turnscope"]`` beside the condensed ``query`` the
base class records there, and is dispatched through LlamaIndex instrumentation as a
:class:`TurnscopeRewriteEvent`.

Needs ``pip install 'turnscope[llamaindex]'``.
"""

from __future__ import annotations

import contextvars
from collections.abc import Iterable
from typing import Any

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
    from llama_index.core.base.base_query_engine import BaseQueryEngine
    from llama_index.core.base.llms.types import ChatMessage
    from llama_index.core.callbacks import CallbackManager
    from llama_index.core.chat_engine import CondenseQuestionChatEngine
    from llama_index.core.chat_engine.types import AgentChatResponse, StreamingAgentChatResponse
    from llama_index.core.instrumentation import get_dispatcher  # type: ignore[attr-defined]  # no __all__
    from llama_index.core.instrumentation.events import BaseEvent
    from llama_index.core.llms import LLM, MockLLM
    from llama_index.core.memory import BaseMemory, Memory
    from llama_index.core.prompts import BasePromptTemplate, PromptTemplate
    from llama_index.core.settings import Settings
except ImportError as e:  # pragma: no cover - exercised only without the extra
    raise missing_extra("llamaindex", "llama-index-core", "llamaindex") from e

__all__ = ["TurnscopeChatEngine", "TurnscopeRewriteEvent", "messages_to_turns"]

_dispatcher = get_dispatcher(__name__)

# the trace of the rewrite the current chat call made, from _condense_question to the
# chat method that returns the response; a context variable so that threads and
# asyncio tasks chatting at once each see their own
_last_trace: contextvars.ContextVar[dict[str, Any] | None] = contextvars.ContextVar(
    "turnscope_llamaindex_trace", default=None)

# CondenseQuestionChatEngine wants a prompt; turnscope uses none
_UNUSED_PROMPT = PromptTemplate("{chat_history}\n{question}")


class TurnscopeRewriteEvent(BaseEvent):
    """Dispatched for every rewrite: the message, the standalone query and the trace."""

    message: str
    query: str
    trace: dict[str, Any]

    @classmethod
    def class_name(cls) -> str:
        return "TurnscopeRewriteEvent"


def messages_to_turns(messages: Iterable[ChatMessage]) -> list[HistoryTurn]:
    """turnscope turns of LlamaIndex chat messages: user and assistant (or chatbot,
    model) messages with text; system, developer, tool and function messages and
    messages with no text (a tool call) are left out.

    >>> from llama_index.core.llms import ChatMessage
    >>> [(t.role.value, t.content) for t in messages_to_turns([
    ...     ChatMessage(role="system", content="Be brief."),
    ...     ChatMessage(role="user", content="Hi"),
    ...     ChatMessage(role="assistant", content="Hello!")])]
    [('user', 'Hi'), ('assistant', 'Hello!')]
    """
    turns = []
    for i, m in enumerate(messages):
        if not isinstance(m, ChatMessage):
            raise InputError(f"chat_history[{i}] must be a llama_index ChatMessage, got {type(m).__name__}")
        t = history_turn(m.role.value, m.content)
        if t is not None:
            turns.append(t)
    return turns


def _attach(response: AgentChatResponse | StreamingAgentChatResponse) -> None:
    """Put the trace of this call's rewrite on ``response``: into its ``metadata``
    (a streaming response has none) and into the raw input of the query-engine source,
    where the base class records the condensed question."""
    trace = _last_trace.get()
    if trace is None:
        return
    if isinstance(response, AgentChatResponse):
        response.metadata = {**(response.metadata or {}), TRACE_KEY: trace}
    for source in response.sources:
        if source.tool_name == "query_engine" and isinstance(source.raw_input, dict):
            source.raw_input[TRACE_KEY] = trace


class TurnscopeChatEngine(CondenseQuestionChatEngine):
    """A condense-question chat engine whose standalone question comes from turnscope.

    >>> from llama_index.core import Document, SimpleKeywordTableIndex
    >>> from llama_index.core.llms import ChatMessage, MockLLM
    >>> index = SimpleKeywordTableIndex.from_documents(
    ...     [Document(text="Lobular carcinoma is treated with surgery.")], llm=MockLLM())
    >>> engine = TurnscopeChatEngine.from_defaults(index.as_query_engine(llm=MockLLM()))
    >>> response = engine.chat("How is it treated?", chat_history=[
    ...     ChatMessage(role="user", content="Tell me about lobular carcinoma"),
    ...     ChatMessage(role="assistant", content="Lobular carcinoma is a breast cancer.")])
    >>> response.metadata["turnscope"]["query"]
    'How is lobular carcinoma treated?'

    ``session_factory`` makes the :class:`~turnscope.Session` (``Session()`` by default);
    ``llm`` is not called (the condense call it served is turnscope's) and may be left out.
    """

    def __init__(
        self,
        query_engine: BaseQueryEngine,
        memory: BaseMemory,
        *,
        session_factory: SessionFactory | None = None,
        llm: LLM | None = None,
        verbose: bool = False,
        callback_manager: CallbackManager | None = None,
        cache_size: int = 4,
    ) -> None:
        # the base class keeps an LLM only for the condense call replaced below: a
        # MockLLM stands in so that no default (OpenAI) LLM is resolved
        super().__init__(query_engine, _UNUSED_PROMPT, memory, llm or MockLLM(),
                         verbose=verbose, callback_manager=callback_manager)
        self._rewriter = ConversationRewriter(session_factory, cache_size=cache_size)

    @classmethod
    def from_defaults(  # type: ignore[override]  # the condense prompt and LLM are not used
        cls,
        query_engine: BaseQueryEngine,
        chat_history: list[ChatMessage] | None = None,
        memory: BaseMemory | None = None,
        verbose: bool = False,
        session_factory: SessionFactory | None = None,
        condense_question_prompt: BasePromptTemplate | None = None,
        llm: LLM | None = None,
        cache_size: int = 4,
        **kwargs: Any,
    ) -> TurnscopeChatEngine:
        """An engine over ``query_engine`` with a fresh :class:`Memory` holding
        ``chat_history`` (or the ``memory`` given). A condense prompt is refused: there
        is no LLM condense call for it to shape."""
        if condense_question_prompt is not None:
            raise InputError("TurnscopeChatEngine makes no LLM condense call, so "
                             "condense_question_prompt has nothing to shape; leave it out")
        if kwargs:
            # the base class's system_prompt / prefix_messages are not supported there
            # either; anything else is a typo that would otherwise be dropped silently
            raise InputError(f"TurnscopeChatEngine.from_defaults got unknown arguments {sorted(kwargs)}")
        if memory is None:
            memory = Memory.from_defaults(chat_history=chat_history or [])
        return cls(query_engine, memory, session_factory=session_factory, llm=llm, verbose=verbose,
                   callback_manager=Settings.callback_manager, cache_size=cache_size)

    def _rewrite(self, chat_history: list[ChatMessage], last_message: str) -> str:
        result = self._rewriter.rewrite(last_message, messages_to_turns(chat_history))
        trace = trace_of(last_message, result)
        _last_trace.set(trace)
        _dispatcher.event(TurnscopeRewriteEvent(message=last_message, query=result.query, trace=trace))
        return result.query

    def _condense_question(self, chat_history: list[ChatMessage], last_message: str) -> str:
        # an empty history is a session with no earlier turn: the message comes back
        # as it is (normalised), as the base class returns it
        return self._rewrite(chat_history, last_message)

    async def _acondense_question(self, chat_history: list[ChatMessage], last_message: str) -> str:
        return self._rewrite(chat_history, last_message)

    def chat(self, message: str, chat_history: list[ChatMessage] | None = None) -> AgentChatResponse:
        _last_trace.set(None)
        response: AgentChatResponse = super().chat(message, chat_history)
        _attach(response)
        return response

    def stream_chat(self, message: str,
                    chat_history: list[ChatMessage] | None = None) -> StreamingAgentChatResponse:
        _last_trace.set(None)
        response: StreamingAgentChatResponse = super().stream_chat(message, chat_history)
        _attach(response)
        return response

    async def achat(self, message: str, chat_history: list[ChatMessage] | None = None) -> AgentChatResponse:
        _last_trace.set(None)
        response: AgentChatResponse = await super().achat(message, chat_history)
        _attach(response)
        return response

    async def astream_chat(self, message: str,
                           chat_history: list[ChatMessage] | None = None) -> StreamingAgentChatResponse:
        _last_trace.set(None)
        response: StreamingAgentChatResponse = await super().astream_chat(message, chat_history)
        _attach(response)
        return response

    def reset(self) -> None:
        """Clear the chat memory and turnscope's cached sessions."""
        super().reset()
        self._rewriter.reset()
