"""OpenTelemetry spans for a turn, when ``opentelemetry-api`` is installed (the ``otel`` extra).

Four spans, nested as a turn runs (docs/tracing.md lists their attributes)::

    turnscope.turn            one user turn (Session.user)
    ├── turnscope.scope       the scope policy's decision
    └── turnscope.rewrite     the rewriter (its name, what it carried, which path decided)
        └── turnscope.fallback   a backend failed; the embedded rewriter answered

Without ``opentelemetry-api`` the tracer is ``None`` and :func:`span` hands back one
shared no-op context manager: a turn pays one attribute read and one comparison per span.
With the API but no SDK configured the spans are OpenTelemetry's non-recording ones, and
:func:`span` yields ``None`` so that the caller skips building attributes too.

>>> from turnscope import _tracing
>>> with _tracing.span("turnscope.example") as sp:
...     if sp is not None:
...         sp.set_attribute("turnscope.policy", "default")

Attribute values are the types OpenTelemetry accepts (str, bool, int, float and
sequences of one of them); ``None`` is left out rather than sent.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from turnscope.scope import Message, Scope

__all__ = ["TRACER_NAME", "Outcome", "fallback_span", "set_rewrite", "set_scope", "set_turn", "span"]

#: the instrumentation scope name spans are recorded under
TRACER_NAME = "turnscope"

try:
    from opentelemetry import trace as _otel_trace
except ImportError:  # the optional "otel" extra: tracing is off, nothing else changes
    _tracer: Any = None
else:
    # a ProxyTracer: it follows whichever TracerProvider the application sets later, so
    # importing turnscope before configuring OpenTelemetry still traces
    _tracer = _otel_trace.get_tracer(TRACER_NAME)



class Outcome(Protocol):
    """What a span reads of a rewrite: a RewriteResult or a session's TurnResult."""

    @property
    def reference_class(self) -> str: ...
    @property
    def topic_shift(self) -> bool: ...
    @property
    def backend(self) -> str: ...
    @property
    def fallback(self) -> bool: ...
    @property
    def fallback_reason(self) -> str | None: ...
    @property
    def leaks(self) -> tuple[str, ...]: ...
    @property
    def trace(self) -> Mapping[str, object]: ...
    @property
    def carried(self) -> tuple[str, ...]: ...


# one instance serves every call: nullcontext holds no state between uses
_OFF: contextlib.nullcontext[None] = contextlib.nullcontext(None)


def span(name: str) -> contextlib.AbstractContextManager[Any]:
    """A context manager for the span ``name``, child of the current span; it yields the
    span when it records, else ``None`` (no tracer, or a non-recording one)."""
    tracer = _tracer
    if tracer is None:
        return _OFF
    return _recording(tracer, name)


@contextlib.contextmanager
def _recording(tracer: Any, name: str) -> Iterator[Any]:
    # start_as_current_span records an escaping exception on the span and sets its status
    with tracer.start_as_current_span(name) as sp:
        yield sp if sp.is_recording() else None


def _put(sp: Any, key: str, value: object) -> None:
    """Set one attribute, leaving out None and turning a tuple of strings into a list."""
    if value is None:
        return
    if isinstance(value, (str, bool, int, float)):
        sp.set_attribute(key, value)
    elif isinstance(value, Sequence):
        sp.set_attribute(key, [str(v) for v in value])
    else:
        sp.set_attribute(key, str(value))


def set_scope(sp: Any, scope: Scope, message: Message) -> None:
    """Attributes of ``turnscope.scope``: the policy, what it put in scope, its topic-shift
    verdict and the classifier's reference class and cues for the message."""
    c = message.classification
    _put(sp, "turnscope.policy", scope.policy)
    _put(sp, "turnscope.reference_class", c.spec_class)
    _put(sp, "turnscope.cues", [cue.value for cue in c.cues])
    _put(sp, "turnscope.pivot", c.pivot)
    _put(sp, "turnscope.scope.turns", len(scope.turns))
    _put(sp, "turnscope.scope.slots", scope.slot_keys())
    _put(sp, "turnscope.scope.guarded", scope.guarded)
    _put(sp, "turnscope.scope.topic_shift", scope.topic_shift)
    _put(sp, "turnscope.scope.note", scope.note or None)


def set_rewrite(sp: Any, rewriter: str, result: Outcome, decided_by: str) -> None:
    """Attributes of ``turnscope.rewrite`` (and, with the turn's, of ``turnscope.turn``);
    ``decided_by`` is the output's own field (``turnscope._session``), so a span and the
    result it traces never name the path differently."""
    _put(sp, "turnscope.rewriter", rewriter)
    _put(sp, "turnscope.backend", result.backend)
    _put(sp, "turnscope.reference_class", result.reference_class)
    _put(sp, "turnscope.topic_shift", result.topic_shift)
    _put(sp, "turnscope.carried", list(result.carried))
    _put(sp, "turnscope.decided_by", decided_by)
    _put(sp, "turnscope.fallback", result.fallback)
    _put(sp, "turnscope.fallback.reason", result.fallback_reason)
    if result.leaks:
        _put(sp, "turnscope.leaks", list(result.leaks))
    rules = result.trace.get("rules")
    if isinstance(rules, list):
        _put(sp, "turnscope.rules", [str(r) for r in rules])


def set_turn(sp: Any, index: int, policy: str, rewriter: str, result: Outcome, decided_by: str) -> None:
    """Attributes of ``turnscope.turn``: the turn, the policy and the rewrite's outcome."""
    _put(sp, "turnscope.turn.index", index)
    _put(sp, "turnscope.policy", policy)
    set_rewrite(sp, rewriter, result, decided_by)


def fallback_span(origin: str, reason: str) -> contextlib.AbstractContextManager[Any]:
    """The ``turnscope.fallback`` span around the embedded rewrite that replaces a failed
    backend's; ``origin`` is the backend that failed, ``reason`` why."""
    cm = span("turnscope.fallback")
    if cm is _OFF:
        return cm
    return _fallback(cm, origin, reason)


@contextlib.contextmanager
def _fallback(cm: contextlib.AbstractContextManager[Any], origin: str, reason: str) -> Iterator[Any]:
    with cm as sp:
        if sp is not None:
            _put(sp, "turnscope.fallback.from", origin)
            _put(sp, "turnscope.fallback.to", "embedded")
            _put(sp, "turnscope.fallback.reason", reason)
        yield sp
