"""Conversation state: turns, screen state and language detection."""

from turnscope.conversation._lang import detect_language
from turnscope.conversation._model import Role, Screen, Turn

__all__ = ["Role", "Screen", "Turn", "detect_language"]

from turnscope.conversation._state import (  # noqa: E402
    CentroidMemory,
    ConversationState,
    Referents,
    ResolvedTurn,
    RuleMemory,
    char_bigrams,
)

__all__ += ["ConversationState", "ResolvedTurn", "char_bigrams", "Referents", "RuleMemory", "CentroidMemory"]
