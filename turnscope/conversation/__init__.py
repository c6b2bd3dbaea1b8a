"""Conversation state: turns, screen state and language detection."""

from turnscope.conversation._state import (
    CentroidMemory,
    ConversationState,
    Referents,
    ResolvedTurn,
    Role,
    RuleMemory,
    Screen,
    Turn,
    char_bigrams,
    detect_language,
)

__all__ = ["Role", "Screen", "Turn", "detect_language", "ConversationState", "ResolvedTurn", "char_bigrams",
           "Referents", "RuleMemory", "CentroidMemory"]
