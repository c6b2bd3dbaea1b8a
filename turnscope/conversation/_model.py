"""Internal records for a conversation: turns and screen state."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

__all__ = ["Role", "Screen", "Turn"]


class Role(StrEnum):
    USER = "user"
    ASSISTANT = "assistant"


@dataclass(frozen=True, slots=True)
class Screen:
    """What the user is looking at (voice-and-screen assistants, doc-site widgets)."""

    page_title: str | None = None
    page_url: str | None = None
    site: str | None = None

    def is_empty(self) -> bool:
        return not (self.page_title or self.page_url or self.site)


@dataclass(frozen=True, slots=True)
class Turn:
    """One message. ``index`` is 1-based and counts user and assistant turns alike."""

    index: int
    role: Role
    content: str
    lang: str = "en"
    screen: Screen | None = None
