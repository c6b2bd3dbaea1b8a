"""The rewriter stage: its protocol, its input and its result."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from turnscope.conversation import ConversationState
from turnscope.entities import Mention
from turnscope.scope import Message, Scope

__all__ = ["RewriteRequest", "RewriteResult", "Rewriter", "EMBEDDED"]

EMBEDDED = "embedded"


@dataclass(frozen=True, slots=True)
class RewriteRequest:
    """Everything a rewriter may use: the message, the scope a policy chose, and the
    conversation state (read only; a rewriter must not look outside ``scope``)."""

    message: Message
    scope: Scope
    state: ConversationState


@dataclass(frozen=True, slots=True)
class RewriteResult:
    query: str
    reference_class: str
    topic_shift: bool
    entities: tuple[Mention, ...] = ()
    focus: Mention | None = None
    backend: str = EMBEDDED
    fallback: bool = False
    fallback_reason: str | None = None
    #: entities in the query that the scope excluded (a leak); empty for embedded
    leaks: tuple[str, ...] = ()
    trace: dict[str, object] = field(default_factory=dict)
    #: what the rewrite brought in from earlier turns or the screen, in query order (docs/output.md)
    carried: tuple[str, ...] = ()
    #: the rewrite resolved a pronoun, an ordinal or an ellipsis against the previous
    #: exchange: the message continues the topic (the output's ``topic_shift`` is false)
    continues: bool = False


class Rewriter(Protocol):
    """Turns the latest message plus its scope into a standalone query."""

    name: str

    def run(self, request: RewriteRequest) -> RewriteResult: ...
