"""The scope record every policy returns, and the policy protocol."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from turnscope.conversation import ConversationState, Screen
from turnscope.entities import Enumeration, Mention, Slot
from turnscope.references import Classification

__all__ = ["Message", "Scope", "ScopePolicy"]


@dataclass(frozen=True, slots=True)
class Message:
    """The latest user message, analysed but not yet rewritten."""

    index: int  # the turn index this message will have
    text: str
    lang: str
    mentions: tuple[Mention, ...]
    classification: Classification
    screen: Screen | None = None


@dataclass(frozen=True, slots=True)
class Scope:
    """What a policy decided the rewriter may see.

    ``guarded`` is the liveness instruction: an entity in scope may be used only
    if the latest message refers to it. Turn-based policies (full, window,
    segment) are unguarded: like a "condense the question" prompt, they hand over
    history and let recency and frequency decide.
    """

    policy: str
    turns: tuple[int, ...]
    slots: tuple[Slot, ...] = ()
    #: stale (not terminal) slots: hidden from the evidence, consulted only when a
    #: reference finds nothing live (going stale is reversible, docs/architecture.md)
    stale: tuple[Slot, ...] = ()
    enumerations: tuple[Enumeration, ...] = ()
    screen: Screen | None = None
    guarded: bool = False
    recalled: tuple[int, ...] = ()  # exchanges found by topic key (relevant policy)
    topic_shift: bool = False  # the segment detector's (or flag's) verdict for this turn
    note: str = ""

    def slot_keys(self) -> list[str]:
        return [s.key for s in self.slots]

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {"policy": self.policy, "turns": list(self.turns),
                                  "slots": self.slot_keys()}
        if self.recalled:
            out["recalled"] = list(self.recalled)
        if self.screen is not None:
            out["screen"] = {"page_title": self.screen.page_title,
                             "page_url": self.screen.page_url, "site": self.screen.site}
        if self.note:
            out["note"] = self.note
        return out


class ScopePolicy(Protocol):
    """Decides, for one message, which turns and slots are in scope."""

    @property
    def name(self) -> str: ...

    def run(self, state: ConversationState, message: Message) -> Scope: ...
