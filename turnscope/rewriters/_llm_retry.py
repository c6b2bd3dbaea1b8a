"""How the LLM backend reads a server's failures: which statuses are retried, which
error texts mean an unsupported option (not a refusal), and the record of one attempt
(:class:`_Step`) and of a whole call (:class:`_Outcome`)."""

from __future__ import annotations

import email.utils
import time
from dataclasses import dataclass
from typing import Any, Literal

from turnscope.rewriters._llm_config import (
    OutputMode,
)

__all__: list[str] = []

_RETRYABLE = frozenset({429, 500, 502, 503, 504})
#: an error whose body mentions one of these is about response_format, not the prompt
_UNSUPPORTED_HINTS = ("response_format", "response format", "json_schema", "json_object",
                      "structured output", "grammar", "schema")
#: errors that say nothing about the request's content, whatever their body says
_NOT_A_REFUSAL = frozenset({401, 403, 404, 408, 429})
#: an error whose body mentions one of these rejects the system role (chat templates such
#: as Gemma's raise "System role not supported"; Mistral's "roles must alternate")
_SYSTEM_ROLE_HINTS = ("system role", "system message", "role 'system'", 'role "system"',
                      "roles must alternate", "system prompt is not supported")


# -- the boundary: what the server and the model send back -------------------------------

@dataclass(frozen=True, slots=True)
class _Step:
    kind: Literal["done", "fail", "retry", "downgrade", "merge_system"]
    content: str | None = None
    reason: str | None = None
    delay: float = 0.0
    usage: dict[str, Any] | None = None
    finish_reason: str | None = None
    #: a backend fault (counts toward the circuit breaker), as opposed to a bad answer
    backend_fault: bool = True


@dataclass
class _Outcome:
    content: str | None = None
    reason: str | None = None
    backend_fault: bool = False
    attempts: int = 0
    mode: str = ""
    usage: dict[str, Any] | None = None
    finish_reason: str | None = None


def _retry_after(value: str | None) -> float | None:
    """``Retry-After`` as seconds: delta-seconds or an HTTP date."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _after(what: str, retries: int) -> str:
    return f"{what} after {retries} retries" if retries else what


_LADDER: tuple[OutputMode, ...] = ("json_schema", "json_object_schema", "json_object", "text")


def _outcome(step: _Step, attempts: int, mode: str) -> _Outcome:
    if step.kind == "done":
        return _Outcome(content=step.content, attempts=attempts, mode=mode, usage=step.usage,
                        finish_reason=step.finish_reason)
    return _Outcome(reason=step.reason, backend_fault=step.backend_fault, attempts=attempts,
                    mode=mode)
