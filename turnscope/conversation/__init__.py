"""Conversation state: turns, screen state and language detection."""

from turnscope.conversation._lang import detect_language
from turnscope.conversation._model import Role, Screen, Turn

__all__ = ["Role", "Screen", "Turn", "detect_language"]

from turnscope.conversation._state import ConversationState, ResolvedTurn, char_bigrams  # noqa: E402

__all__ += ["ConversationState", "ResolvedTurn", "char_bigrams"]
