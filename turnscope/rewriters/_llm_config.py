"""The LLM backend's settings: literature and operational defaults (``DEFAULT_*``) and
:class:`LLMConfig`, the validated value class :class:`~turnscope.rewriters._llm.LLMRewriter`
is built from."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import ClassVar, Literal

from turnscope._exceptions import ConfigError
from turnscope.rewriters._llm_options import (
    DEFAULT_API_KEY_ENV,
    DEFAULT_MAX_TOKENS,
    DEFAULT_TIMEOUT,
    SLOT_MODES,
    SYSTEM_ROLE_MODES,
    SlotMode,
    SystemRole,
)

__all__ = [
    "DEFAULT_BACKOFF_BASE",
    "DEFAULT_BACKOFF_CAP",
    "DEFAULT_BREAKER_COOLDOWN",
    "DEFAULT_BREAKER_THRESHOLD",
    "DEFAULT_MAX_ENTITIES",
    "DEFAULT_MAX_RETRIES",
    "DEFAULT_RETRY_AFTER_CAP",
    "LLMConfig",
    "OUTPUT_MODES",
    "OutputMode",
]

# DEFAULT_TIMEOUT, DEFAULT_API_KEY_ENV and SLOT_MODES are documented in _factory, which
# must not import this module at import time.
#: Retries after the first attempt, on 429, 5xx and connection errors (not on timeouts:
#: a server that took longer than the timeout once will likely do so again, and the
#: user is waiting).
DEFAULT_MAX_RETRIES = 3
#: Backoff before retry n (0-based) is ``base * 2**n`` seconds, at most ``DEFAULT_BACKOFF_CAP``.
DEFAULT_BACKOFF_BASE = 0.5
DEFAULT_BACKOFF_CAP = 8.0
#: A server's ``Retry-After`` is honoured up to this many seconds.
DEFAULT_RETRY_AFTER_CAP = 10.0
#: Consecutive backend failures (after retries) that open the circuit …
DEFAULT_BREAKER_THRESHOLD = 5
#: … and seconds it stays open; afterwards one trial request decides (half-open).
DEFAULT_BREAKER_COOLDOWN = 30.0
#: Entities kept from one answer: a model that lists fifty would flood the slot table.
DEFAULT_MAX_ENTITIES = 12
#: The structured-output ladder, strongest first. ``json_object_schema`` is llama.cpp's
#: form, ``{"type": "json_object", "schema": …}``: its servers constrain the output to
#: the schema with a grammar but do not all accept OpenAI's ``json_schema`` type.
OUTPUT_MODES = ("json_schema", "json_object_schema", "json_object", "text")

OutputMode = Literal["json_schema", "json_object_schema", "json_object", "text"]



@dataclass(frozen=True, slots=True)
class LLMConfig:
    """Everything that decides what is sent and how faults are handled."""

    base_url: str
    model: str
    api_key_env: str | None = DEFAULT_API_KEY_ENV
    timeout: float = DEFAULT_TIMEOUT
    max_retries: int = DEFAULT_MAX_RETRIES
    backoff_base: float = DEFAULT_BACKOFF_BASE
    backoff_cap: float = DEFAULT_BACKOFF_CAP
    retry_after_cap: float = DEFAULT_RETRY_AFTER_CAP
    breaker_threshold: int = DEFAULT_BREAKER_THRESHOLD
    breaker_cooldown: float = DEFAULT_BREAKER_COOLDOWN
    #: 0 keeps rewrites reproducible (and the cache meaningful); None omits the field
    temperature: float | None = 0.0
    counterweight: bool = True
    strict: bool = False
    slots: SlotMode = "same-call"
    output_mode: OutputMode = "json_schema"
    max_entities: int = DEFAULT_MAX_ENTITIES
    #: tokens the model may generate per answer; always sent (see DEFAULT_MAX_TOKENS)
    max_tokens: int = DEFAULT_MAX_TOKENS
    system_role: SystemRole = "auto"
    extra_body: Mapping[str, object] = field(default_factory=dict)

    DEFAULT_MAX_TOKENS: ClassVar[int] = DEFAULT_MAX_TOKENS
    DEFAULT_TIMEOUT: ClassVar[float] = DEFAULT_TIMEOUT

    def __post_init__(self) -> None:
        if not self.base_url or not self.base_url.startswith(("http://", "https://")):
            raise ConfigError(f"base_url must be an http(s) URL, got {self.base_url!r}")
        if not self.model:
            raise ConfigError("model must be a non-empty model name")
        # inf or nan would make httpx wait forever (inf) or fail on every call (nan)
        _number("timeout", self.timeout, minimum=0.0, strict=True, unit=" seconds")
        _integer("max_tokens", self.max_tokens, minimum=1)
        _integer("max_retries", self.max_retries, minimum=0)
        _integer("max_entities", self.max_entities, minimum=0)
        for name in ("backoff_base", "backoff_cap", "retry_after_cap", "breaker_cooldown"):
            _number(name, getattr(self, name), minimum=0.0)
        _integer("breaker_threshold", self.breaker_threshold, minimum=1)
        if self.temperature is not None:
            _number("temperature", self.temperature, minimum=0.0)
        if self.system_role not in SYSTEM_ROLE_MODES or not isinstance(self.system_role,
                                                                      (bool, str)):
            raise ConfigError(f"system_role must be True, False or 'auto', got "
                              f"{self.system_role!r}")
        if self.slots not in SLOT_MODES:
            raise ConfigError(f"unknown slots mode {self.slots!r}; valid: {', '.join(SLOT_MODES)}")
        if self.output_mode not in OUTPUT_MODES:
            raise ConfigError(f"unknown output_mode {self.output_mode!r}; valid: "
                              f"{', '.join(OUTPUT_MODES)}")

    @property
    def url(self) -> str:
        return self.base_url.rstrip("/") + "/chat/completions"


def _number(name: str, value: object, *, minimum: float, strict: bool = False,
            unit: str = "") -> None:
    """A finite real number >= minimum (> minimum when ``strict``), else ConfigError."""
    op = ">" if strict else ">="
    if isinstance(value, bool) or not isinstance(value, (int, float)) \
            or not math.isfinite(value) or value < minimum or (strict and value == minimum):
        raise ConfigError(f"{name} must be a finite number {op} {minimum:g}{unit}, "
                          f"got {value!r}")


def _integer(name: str, value: object, *, minimum: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ConfigError(f"{name} must be an integer >= {minimum}, got {value!r}")


# -- one HTTP exchange, decided without I/O so sync and async share it -------------------
