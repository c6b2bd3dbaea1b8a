"""Haystack drop-in: a ``@component`` that rewrites a follow-up into a standalone query.

:class:`TurnscopeRewriter` takes ``query`` (the user's new message) and ``history``
(the earlier ``ChatMessage`` list; missing or empty for a first message) and returns
``{"query": <standalone query>, "trace": {...}}``. Put it in front of any retriever::

    pipeline.add_component("rewriter", TurnscopeRewriter())
    pipeline.add_component("retriever", InMemoryBM25Retriever(document_store=store))
    pipeline.connect("rewriter.query", "retriever.query")
    pipeline.run({"rewriter": {"query": "How is it treated?", "history": messages}})

The trace (the rewrite-output object of docs/output.md plus the rewriter's evidence) is the
``trace`` output, and goes onto the component's span when Haystack tracing is on: the
reference class, topic shift, backend and fallback as tags, the query and the whole
trace as content tags (recorded only with content tracing enabled, since they hold the
user's words).

Needs ``pip install 'turnscope[haystack]'``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, TypedDict

from turnscope._exceptions import InputError
from turnscope.integrations._common import (
    ConversationRewriter,
    HistoryTurn,
    SessionFactory,
    history_turn,
    missing_extra,
    trace_of,
)

try:
    from haystack import component, default_from_dict, default_to_dict
    from haystack.dataclasses import ChatMessage
    from haystack.tracing.tracer import tracer
    from haystack.utils import deserialize_callable, serialize_callable
except ImportError as e:  # pragma: no cover - exercised only without the extra
    raise missing_extra("haystack", "haystack-ai", "haystack") from e

__all__ = ["RewriterOutput", "TurnscopeRewriter", "messages_to_turns"]


class RewriterOutput(TypedDict):
    """What :meth:`TurnscopeRewriter.run` returns."""

    query: str
    trace: dict[str, Any]


def messages_to_turns(messages: Iterable[ChatMessage]) -> list[HistoryTurn]:
    """turnscope turns of Haystack chat messages: user and assistant messages with
    text; system and tool messages and messages with no text (a tool call) are left
    out.

    >>> from haystack.dataclasses import ChatMessage
    >>> [(t.role.value, t.content) for t in messages_to_turns([
    ...     ChatMessage.from_system("Be brief."), ChatMessage.from_user("Hi"),
    ...     ChatMessage.from_assistant("Hello!")])]
    [('user', 'Hi'), ('assistant', 'Hello!')]
    """
    turns = []
    for i, m in enumerate(messages):
        if not isinstance(m, ChatMessage):
            raise InputError(f"history[{i}] must be a haystack ChatMessage, got {type(m).__name__}")
        t = history_turn(m.role.value, "\n".join(m.texts))
        if t is not None:
            turns.append(t)
    return turns


@component
class TurnscopeRewriter:
    """Rewrites the user's message into a standalone query with turnscope.

    >>> from haystack.dataclasses import ChatMessage
    >>> rewriter = TurnscopeRewriter()
    >>> rewriter.run(query="How is it treated?", history=[
    ...     ChatMessage.from_user("Tell me about lobular carcinoma"),
    ...     ChatMessage.from_assistant("Lobular carcinoma is a breast cancer that "
    ...                                "begins in the lobules.")])["query"]
    'How is lobular carcinoma treated?'

    ``session_factory`` makes the :class:`~turnscope.Session` (``Session()`` by default);
    a module-level function or class serialises with the pipeline, a lambda does not.
    The sessions of the last ``cache_size`` conversations are kept, so that a history
    one exchange longer than at the previous run is fed two turns, not all of them.
    """

    def __init__(self, session_factory: SessionFactory | None = None, cache_size: int = 4) -> None:
        self.session_factory = session_factory
        self.cache_size = cache_size
        self._rewriter = ConversationRewriter(session_factory, cache_size=cache_size)

    @component.output_types(query=str, trace=dict[str, Any])
    def run(self, query: str, history: list[ChatMessage] | None = None) -> RewriterOutput:
        """The standalone query for ``query`` after ``history`` and the trace of the
        rewrite. No history (``None`` or empty) passes the query through."""
        result = self._rewriter.rewrite(query, messages_to_turns(history or []))
        trace = trace_of(query, result)
        span = tracer.current_span()
        if span is not None:
            span.set_tags({"turnscope.reference_class": result.reference_class,
                           "turnscope.topic_shift": result.topic_shift,
                           "turnscope.backend": result.backend,
                           "turnscope.fallback": result.fallback})
            span.set_content_tag("turnscope.query", result.query)
            span.set_content_tag("turnscope.trace", trace)
        return {"query": result.query, "trace": trace}

    def to_dict(self) -> dict[str, Any]:
        """The component's init parameters, for ``Pipeline.dumps``."""
        factory = serialize_callable(self.session_factory) if self.session_factory is not None else None
        out: dict[str, Any] = default_to_dict(self, session_factory=factory, cache_size=self.cache_size)
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TurnscopeRewriter:
        """The component ``to_dict`` described."""
        params = data.get("init_parameters", {})
        if params.get("session_factory") is not None:
            params["session_factory"] = deserialize_callable(params["session_factory"])
        out: TurnscopeRewriter = default_from_dict(cls, data)
        return out
