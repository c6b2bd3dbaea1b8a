"""What every framework drop-in shares: history to turns, the session, the trace.

Frameworks hand a rewrite step the whole chat history on every call (LangChain's
``chat_history``, LlamaIndex's memory, a Haystack pipeline input). Replaying it into a
fresh :class:`~turnscope.Session` each time would embed every earlier turn again, so
:class:`ConversationRewriter` keeps the session of the previous call and, when the new
history starts with what that session has already seen (the usual case: the same
conversation, one exchange longer), feeds it only the new turns.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from turnscope._exceptions import InputError
from turnscope._session import Session, TurnResult
from turnscope.conversation import Role

__all__ = [
    "ConversationRewriter",
    "HistoryTurn",
    "SessionFactory",
    "TRACE_KEY",
    "history_turn",
    "missing_extra",
    "role_of",
    "trace_of",
]

#: the key under which the trace goes into a framework's metadata mapping
TRACE_KEY = "turnscope"

SessionFactory = Callable[[], Session]

# Role names as the frameworks spell them (LangChain message types, LlamaIndex
# MessageRole values, Haystack ChatRole values, OpenAI-style dicts).
_USER_ROLES = frozenset({"user", "human"})
_ASSISTANT_ROLES = frozenset({"assistant", "ai", "chatbot", "model"})
# System prompts and tool traffic are not turns of the conversation the user refers to:
# a system prompt names no subject the user asked about, and a tool result's raw
# payload would put its field names among the carried candidates.
_SKIPPED_ROLES = frozenset({"system", "developer", "tool", "function"})


@dataclass(frozen=True, slots=True)
class HistoryTurn:
    """One earlier message, in turnscope's two roles."""

    role: Role
    content: str


def missing_extra(module: str, package: str, extra: str) -> ImportError:
    """The error an integration raises when its framework is not installed."""
    return ImportError(
        f"turnscope.integrations.{module} needs {package}, which is not installed: "
        f"pip install 'turnscope[{extra}]'")


def role_of(name: str) -> Role | None:
    """turnscope's role for a framework's role name; ``None`` for a message to skip
    (system, tool); an unknown name is an :class:`~turnscope.InputError`."""
    key = name.strip().lower()
    if key in _USER_ROLES:
        return Role.USER
    if key in _ASSISTANT_ROLES:
        return Role.ASSISTANT
    if key in _SKIPPED_ROLES:
        return None
    raise InputError(f"chat history message has role {name!r}: expected one of "
                     f"{sorted(_USER_ROLES | _ASSISTANT_ROLES | _SKIPPED_ROLES)}")


def history_turn(role: str, content: str | None) -> HistoryTurn | None:
    """A :class:`HistoryTurn`, or ``None`` for a message turnscope does not read: a
    system or tool message, or one without text (an assistant message that only
    calls a tool)."""
    r = role_of(role)
    if r is None or content is None or not content.strip():
        return None
    return HistoryTurn(r, content)


def _json_safe(value: object) -> Any:
    """A copy of ``value`` made of dicts, lists, strings, numbers, booleans and None, so
    that a framework may serialise the trace (LangSmith, Haystack's tracer, JSON logs)."""
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    if isinstance(value, Mapping):
        return {str(k): _json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [_json_safe(v) for v in value]
    to_json = getattr(value, "to_json", None)
    if callable(to_json):
        return _json_safe(to_json())
    return str(value)


def trace_of(message: str, result: TurnResult) -> dict[str, Any]:
    """The trace an integration attaches: the rewrite-output object of docs/output.md (query,
    reference class, topic shift, entities, scope, backend, fallback, carried), the
    message as the user wrote it, the turn index and the rewriter's own evidence."""
    out: dict[str, Any] = {"message": message, "turn": result.turn}
    out.update(_json_safe(result.to_output()))
    out["details"] = _json_safe(result.trace)
    return out


class ConversationRewriter:
    """Rewrites a message against a history, reusing the sessions of earlier calls.

    ``history`` given: the rewrite reads exactly those turns (the framework module
    has left out system and tool messages and empty ones). The sessions of the last
    ``cache_size`` conversations are kept: one whose turns start the new history is
    fed only the rest, so a conversation one exchange longer than at the previous
    call costs two turns, not all of them again.

    ``history=None``: the rewriter's own conversation, which :meth:`rewrite` extends
    with each message and :meth:`add_answer` with each answer.

    >>> from turnscope.conversation import Role
    >>> rw = ConversationRewriter()
    >>> rw.rewrite("Tell me about lobular carcinoma", []).query
    'Tell me about lobular carcinoma'
    >>> history = [HistoryTurn(Role.USER, "Tell me about lobular carcinoma"),
    ...            HistoryTurn(Role.ASSISTANT, "Lobular carcinoma is a breast cancer "
    ...                        "that begins in the lobules.")]
    >>> rw.rewrite("How is it treated?", history).query
    'How is lobular carcinoma treated?'
    """

    def __init__(self, session_factory: SessionFactory | None = None, *, cache_size: int = 4) -> None:
        if session_factory is not None and not callable(session_factory):
            raise InputError("session_factory must be a callable returning a turnscope "
                             f"Session, or None for Session(), got {session_factory!r}")
        if isinstance(cache_size, bool) or not isinstance(cache_size, int) or cache_size < 0:
            raise InputError(f"cache_size must be an integer >= 0, got {cache_size!r}")
        self._factory: SessionFactory = session_factory or Session
        self._cache_size = cache_size
        # one lock for everything: a session takes one turn at a time anyway, and a
        # cached session is taken out of the cache while it is fed
        self._lock = threading.Lock()
        # (session, the turns it has taken), most recently used first
        self._cache: list[tuple[Session, list[HistoryTurn]]] = []
        self._own: tuple[Session, list[HistoryTurn]] | None = None

    def _new_session(self) -> Session:
        s = self._factory()
        if not isinstance(s, Session):
            raise InputError(f"session_factory returned {type(s).__name__}, not a turnscope Session")
        return s

    def _take_cached(self, history: Sequence[HistoryTurn]) -> tuple[Session, list[HistoryTurn]]:
        """The cached session whose turns start ``history`` (the longest such), taken
        out of the cache, or a new one. A session is put back only after its rewrite
        succeeded: one refused half-way holds part of a history and must not be reused
        as if it held none of it."""
        best = -1
        for i, (_, seen) in enumerate(self._cache):
            n = len(seen)
            if n <= len(history) and (best < 0 or n > len(self._cache[best][1])) \
                    and list(history[:n]) == seen:
                best = i
        if best >= 0:
            return self._cache.pop(best)
        return self._new_session(), []

    @staticmethod
    def _feed(session: Session, seen: list[HistoryTurn], turns: Sequence[HistoryTurn]) -> None:
        for turn in turns:
            if turn.role is Role.USER:
                # an earlier user turn is history, not an answer anyone reads: the
                # embedded rewriter takes it, as Session.replay does, so a configured
                # LLM rewriter is called once per rewrite, not once per earlier turn
                session.user(turn.content, rewriter=session.embedded)
            else:
                session.assistant(turn.content)
            seen.append(turn)

    def rewrite(self, message: str, history: Iterable[HistoryTurn] | None = None) -> TurnResult:
        """The standalone query for ``message`` after ``history`` (``None``: this
        rewriter's own conversation)."""
        if not isinstance(message, str):
            raise InputError(f"the message to rewrite must be a string, got {type(message).__name__}")
        with self._lock:
            if history is None:
                session, seen = self._own if self._own is not None else (self._new_session(), [])
                result = session.user(message)
                seen.append(HistoryTurn(Role.USER, message))
                self._own = (session, seen)
                return result
            turns = list(history)
            for i, t in enumerate(turns):
                if not isinstance(t, HistoryTurn):
                    raise InputError(f"history[{i}] must be a HistoryTurn, got {t!r}")
            session, seen = self._take_cached(turns)
            self._feed(session, seen, turns[len(seen):])
            result = session.user(message)
            seen.append(HistoryTurn(Role.USER, message))
            if self._cache_size:
                self._cache.insert(0, (session, seen))
                del self._cache[self._cache_size:]
            return result

    def add_answer(self, content: str) -> None:
        """Record the assistant's answer in this rewriter's own conversation (the one
        :meth:`rewrite` continues when given no history). An empty answer is ignored."""
        if not isinstance(content, str):
            raise InputError(f"an answer must be a string, got {type(content).__name__}")
        if not content.strip():
            return
        with self._lock:
            session, seen = self._own if self._own is not None else (self._new_session(), [])
            session.assistant(content)
            seen.append(HistoryTurn(Role.ASSISTANT, content))
            self._own = (session, seen)

    def reset(self) -> None:
        """Forget every conversation: the own one and the cached sessions."""
        with self._lock:
            self._own = None
            self._cache = []

    @property
    def history(self) -> tuple[HistoryTurn, ...]:
        """The turns of this rewriter's own conversation."""
        with self._lock:
            return tuple(self._own[1]) if self._own is not None else ()
