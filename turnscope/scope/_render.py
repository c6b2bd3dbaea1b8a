"""The evidence a scope hands a rewriter, as plain text.

Used for *input* contamination and coverage (docs/benchmarks.md): the same term
checks as for the rewrite, applied to what a policy shows the rewriter, whatever
model then writes the query.
"""

from __future__ import annotations

from turnscope.conversation import ConversationState
from turnscope.scope._base import Message, Scope

__all__ = ["render_evidence"]


def render_evidence(scope: Scope, state: ConversationState, message: Message | None = None) -> str:
    """Live slots, turns in scope, screen, lists, and the latest message, one per line."""
    lines: list[str] = []
    if scope.slots:
        lines.append("LIVE ENTITIES: " + "; ".join(f"{s.type}: {s.name}" for s in scope.slots))
    for i in scope.turns:
        if 1 <= i <= len(state.turns):
            t = state.turns[i - 1]
            lines.append(f"{t.role.value}: {t.content}")
    if scope.screen is not None and not scope.screen.is_empty():
        s = scope.screen
        lines.append(f"SCREEN: {s.page_title or ''} {s.page_url or ''} {s.site or ''}".rstrip())
    # the lists a scope hands over ("Frankfurt, Dublin and London") are evidence too:
    # "the third one" is resolved from them when their turn is out of scope
    lines.extend(f"LIST (turn {e.turn}): " + "; ".join(m.name for m in e.items)
                 for e in scope.enumerations)
    if message is not None:
        lines.append(f"LATEST: {message.text}")
    return "\n".join(lines)
