"""A rewriter backed by any OpenAI-compatible chat-completions server.

OpenAI, vLLM, Ollama, llama.cpp's server and most gateways speak the same
``POST {base_url}/chat/completions``. This rewriter sends the model only what
the scope policy put in scope (see :mod:`turnscope.rewriters._prompts`), gets
the query, the ``topic_shift`` flag, the reference class and the entities back
in **one call**, and never lets a backend fault break a conversation:

* **structured output ladder** — ask for a JSON schema (``response_format:
  json_schema``); if the server refuses that, ask in llama.cpp's form
  (``{"type": "json_object", "schema": …}``), then for JSON mode
  (``json_object``), then for plain text, and extract the first JSON object from
  it. A refusal is any 4xx/5xx answer whose body names the format
  (``response_format``, ``json_schema``, ``grammar``, ``schema``…): servers say
  it with 400, 422 or, like llama-cpp-python's, 500. A refusal is not retried at
  the same rung and does not count toward the circuit breaker; the rung that
  worked is remembered for later calls. Whatever the rung, the answer is
  validated with pydantic.
* **bounded answers** — every request carries ``max_tokens``
  (:data:`DEFAULT_MAX_TOKENS`): a runaway answer is cut by the server, not by the
  client's timeout, so it cannot stall a single-slot local server for the calls
  behind it. A cut answer (``finish_reason: length``) falls back with
  ``truncated at max_tokens=N``.
* **copied or invented answers** — an answer that echoes the prompt's example
  placeholders (``<standalone query>``, ``<name>``) falls back with
  ``placeholder echo: …``; one that names an entity the conversation never
  mentioned (in the query or in its entity list, which would become a live slot)
  falls back with ``invented entity: …``.
* **system role** — ``system_role="auto"`` (the default) sends the instructions
  as a system message until a server rejects that role, then merges them into the
  first user message; ``False`` always merges (for chat templates that drop a
  system message silently, which no answer reveals).
* **faults** — a timeout per attempt; retries with exponential backoff on 429
  and 5xx, honouring ``Retry-After`` (capped); a circuit breaker that, after
  ``breaker_threshold`` consecutive backend failures, skips the server for
  ``breaker_cooldown`` seconds. Every fault ends in the embedded rewrite with
  ``fallback=True`` and a short, stable ``fallback_reason`` (``timeout``,
  ``http 500 after 3 retries``, ``circuit open``, ``invalid json``,
  ``schema: missing query``…); no exception reaches the caller.
* **slots from the same call** — the entities the model emits become the
  result's entities (``Mention.source == "llm"``), which the session records as
  the turn's liveness slots. ``slots="extract"`` runs the embedded extractor on
  the query instead.
* **leak guard** — entities in the query that the scope excluded are reported
  in ``leaks``; with ``strict=True`` the embedded rewrite is used instead.
* **response cache** — SQLite, keyed by ``sha256(model + messages)``, so that
  re-running an evaluation costs nothing and gives the same answers.

>>> import httpx, json
>>> def server(request: httpx.Request) -> httpx.Response:
...     answer = {"query": "Is the billing export API paginated?", "topic_shift": True,
...               "reference_class": "standalone",
...               "entities": [{"type": "service", "name": "billing export API"}]}
...     return httpx.Response(200, json={"choices": [{"message": {"content": json.dumps(answer)}}]})
>>> from turnscope import Session
>>> llm = LLMRewriter(base_url="http://llm.test/v1", model="m", api_key_env=None,
...                   transport=httpx.MockTransport(server))
>>> r = Session(rewriter=llm).user("ok different question - is the billing export API paginated?")
>>> r.query, r.backend, r.fallback
('Is the billing export API paginated?', 'llm:m', False)
"""

from __future__ import annotations

import asyncio
import email.utils
import hashlib
import json
import logging
import math
import os
import sqlite3
import threading
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from turnscope import _tracing
from turnscope._exceptions import ConfigError

try:
    import httpx
except ImportError:  # pragma: no cover - httpx is the optional "llm" extra
    # importing turnscope must not need it; constructing an LLMRewriter does
    _HAVE_HTTPX = False
else:
    _HAVE_HTTPX = True
from turnscope.entities import EntityExtractor, Mention
from turnscope.rewriters._base import EMBEDDED, RewriteRequest, RewriteResult
from turnscope.rewriters._embedded import EmbeddedRewriter
from turnscope.rewriters._factory import (
    DEFAULT_API_KEY_ENV,
    DEFAULT_MAX_TOKENS,
    DEFAULT_TIMEOUT,
    SLOT_MODES,
    SYSTEM_ROLE_MODES,
    SlotMode,
    SystemRole,
)
from turnscope.rewriters._guard import find_leaks, invented_entities, placeholder_echoes
from turnscope.rewriters._prompts import (
    REFERENCE_CLASSES,
    REWRITE_JSON_SCHEMA,
    build_messages,
    merge_system,
    prompt_size,
    user_content,
)

__all__ = [
    "DEFAULT_API_KEY_ENV",
    "DEFAULT_BACKOFF_BASE",
    "DEFAULT_BACKOFF_CAP",
    "DEFAULT_BREAKER_COOLDOWN",
    "DEFAULT_BREAKER_THRESHOLD",
    "DEFAULT_MAX_ENTITIES",
    "DEFAULT_MAX_RETRIES",
    "DEFAULT_MAX_TOKENS",
    "DEFAULT_RETRY_AFTER_CAP",
    "DEFAULT_TIMEOUT",
    "OUTPUT_MODES",
    "SLOT_MODES",
    "SYSTEM_ROLE_MODES",
    "LLMConfig",
    "LLMRewriter",
    "ResponseCache",
    "cache_key",
    "extract_json_object",
]

logger = logging.getLogger("turnscope.rewriters.llm")

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

class _ChoiceMessage(BaseModel):
    model_config = ConfigDict(extra="ignore")
    content: str | None = None


class _Choice(BaseModel):
    model_config = ConfigDict(extra="ignore")
    message: _ChoiceMessage
    finish_reason: str | None = None


class _Completion(BaseModel):
    model_config = ConfigDict(extra="ignore")
    choices: list[_Choice] = Field(min_length=1)
    usage: dict[str, Any] | None = None


class _EntityOut(BaseModel):
    model_config = ConfigDict(extra="ignore", str_strip_whitespace=True)
    type: str = "name"
    name: str = Field(min_length=1)


class RewriteAnswer(BaseModel):
    """The JSON object the model must return (validated; extra keys ignored).

    Only ``query`` is required: a missing flag or class falls back to the
    classifier's decision, and malformed entities are dropped rather than failing
    the whole answer, since they only feed the slot table.
    """

    model_config = ConfigDict(extra="ignore", str_strip_whitespace=True)
    query: str = Field(min_length=1)
    topic_shift: bool | None = None
    reference_class: str | None = None
    entities: list[_EntityOut] = Field(default_factory=list)

    @field_validator("entities", mode="before")
    @classmethod
    def _lenient_entities(cls, value: object) -> object:
        if value is None:
            return []
        if not isinstance(value, list):
            return value
        out: list[object] = []
        for item in value:
            if isinstance(item, str) and item.strip():
                out.append({"type": "name", "name": item})
            elif isinstance(item, Mapping) and isinstance(item.get("name"), str) \
                    and item["name"].strip():
                typ = item.get("type")
                out.append({"type": typ if isinstance(typ, str) and typ.strip() else "name",
                            "name": item["name"]})
        return out


def extract_json_object(text: str) -> dict[str, Any] | None:
    """The first JSON object in ``text`` (models wrap JSON in prose or code fences).

    >>> extract_json_object('Sure! ```json\\n{"query": "x"}\\n``` done')
    {'query': 'x'}
    """
    decoder = json.JSONDecoder()
    start = text.find("{")
    while start != -1:
        try:
            obj, _ = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            obj = None
        if isinstance(obj, dict):
            return obj
        start = text.find("{", start + 1)
    return None


def _schema_reason(exc: ValidationError) -> str:
    err = exc.errors()[0]
    loc = ".".join(str(p) for p in err["loc"]) or "answer"
    kind = err["type"]
    if kind == "missing":
        return f"schema: missing {loc}"
    if kind == "string_too_short":
        return f"schema: empty {loc}"
    if kind == "model_type":
        return "schema: not an object"
    return f"schema: {loc}: {kind}"


def _parse_answer(content: str | None) -> RewriteAnswer | str:
    """The validated answer, or a short failure reason."""
    if content is None or not content.strip():
        return "invalid json"
    data: object
    try:
        data = json.loads(content)
    except json.JSONDecodeError:
        data = extract_json_object(content)
        if data is None:
            return "invalid json"
    try:
        return RewriteAnswer.model_validate(data)
    except ValidationError as exc:
        return _schema_reason(exc)


# -- the response cache ------------------------------------------------------------------

def cache_key(model: str, messages: Sequence[Mapping[str, str]]) -> str:
    """``sha256(model + messages JSON)``: the same prompt to the same model is one entry."""
    payload = model + "\n" + json.dumps(list(messages), ensure_ascii=False, sort_keys=True)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


class ResponseCache:
    """Model answers on disk (SQLite), keyed by :func:`cache_key`.

    Only answers that validated are stored, so a bad answer is asked again next time.

    >>> c = ResponseCache(":memory:")
    >>> c.put("k", "m", '{"query": "x"}'); c.get("k")
    '{"query": "x"}'
    """

    def __init__(self, path: str | Path) -> None:
        if str(path) != ":memory:":
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        # one connection shared by threads (sync and async callers); the lock serialises it
        self._conn = sqlite3.connect(str(path), check_same_thread=False)
        self._lock = threading.Lock()
        with self._lock, self._conn:
            self._conn.execute("CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, "
                               "model TEXT NOT NULL, content TEXT NOT NULL, created REAL NOT NULL)")

    def get(self, key: str) -> str | None:
        with self._lock:
            row = self._conn.execute("SELECT content FROM responses WHERE key = ?",
                                     (key,)).fetchone()
        return str(row[0]) if row is not None else None

    def put(self, key: str, model: str, content: str) -> None:
        with self._lock, self._conn:
            self._conn.execute("INSERT OR REPLACE INTO responses VALUES (?, ?, ?, ?)",
                               (key, model, content, time.time()))

    def __len__(self) -> int:
        with self._lock:
            row = self._conn.execute("SELECT COUNT(*) FROM responses").fetchone()
        return int(row[0])

    def close(self) -> None:
        with self._lock:
            self._conn.close()


# -- the circuit breaker -----------------------------------------------------------------

class _CircuitBreaker:
    """Closed → (threshold consecutive failures) → open → (cooldown) → half-open: one
    trial request; its success closes the circuit, its failure re-opens it."""

    def __init__(self, threshold: int, cooldown: float, clock: Callable[[], float]) -> None:
        self.threshold = threshold
        self.cooldown = cooldown
        self._clock = clock
        self._failures = 0
        self._opened_at: float | None = None
        self._trial = False
        self._lock = threading.Lock()

    @property
    def state(self) -> str:
        with self._lock:
            if self._opened_at is None:
                return "closed"
            if self._clock() - self._opened_at >= self.cooldown:
                return "half-open"
            return "open"

    def allow(self) -> bool:
        with self._lock:
            if self._opened_at is None:
                return True
            if self._clock() - self._opened_at < self.cooldown or self._trial:
                return False
            self._trial = True  # exactly one caller probes the server
            return True

    def success(self) -> None:
        with self._lock:
            self._failures = 0
            self._opened_at = None
            self._trial = False

    def failure(self) -> bool:
        """Record a failure; True when this one opened the circuit."""
        with self._lock:
            self._failures += 1
            if self._trial or self._failures >= self.threshold:
                self._opened_at = self._clock()
                self._trial = False
                return True
            return False


# -- configuration -----------------------------------------------------------------------

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


class LLMRewriter:
    """Rewriter for an OpenAI-compatible chat-completions server.

    ``base_url`` is the API root (``http://localhost:11434/v1`` for Ollama,
    ``http://localhost:8000/v1`` for vLLM, ``https://api.openai.com/v1``);
    the key is read from ``api_key_env`` when a request is made and sent only if
    set. ``transport`` / ``async_transport`` replace the network (tests:
    ``httpx.MockTransport``); ``sleep`` / ``async_sleep`` / ``clock`` replace time.
    ``extractor`` should be the session's (its vocabulary canonicalises entity
    names and feeds the fallback); without one the rewriter adopts the session's
    through :meth:`use_extractor`, or uses a plain one.

    >>> llm = LLMRewriter(base_url="http://localhost:11434/v1", model="qwen2.5:7b")
    >>> llm.name
    'llm:qwen2.5:7b'
    """

    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        api_key_env: str | None = DEFAULT_API_KEY_ENV,
        timeout: float = DEFAULT_TIMEOUT,
        max_retries: int = DEFAULT_MAX_RETRIES,
        backoff_base: float = DEFAULT_BACKOFF_BASE,
        backoff_cap: float = DEFAULT_BACKOFF_CAP,
        retry_after_cap: float = DEFAULT_RETRY_AFTER_CAP,
        breaker_threshold: int = DEFAULT_BREAKER_THRESHOLD,
        breaker_cooldown: float = DEFAULT_BREAKER_COOLDOWN,
        temperature: float | None = 0.0,
        counterweight: bool = True,
        strict: bool = False,
        slots: SlotMode = "same-call",
        output_mode: OutputMode = "json_schema",
        max_entities: int = DEFAULT_MAX_ENTITIES,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        system_role: SystemRole = "auto",
        extra_body: Mapping[str, object] | None = None,
        cache_path: str | Path | None = None,
        extractor: EntityExtractor | None = None,
        transport: httpx.BaseTransport | None = None,
        async_transport: httpx.AsyncBaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
        async_sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if not _HAVE_HTTPX:  # pragma: no cover - depends on the install
            raise ConfigError("the llm rewriter needs httpx: pip install 'turnscope[llm]'")
        self.config = LLMConfig(
            base_url=base_url, model=model, api_key_env=api_key_env, timeout=timeout,
            max_retries=max_retries, backoff_base=backoff_base, backoff_cap=backoff_cap,
            retry_after_cap=retry_after_cap, breaker_threshold=breaker_threshold,
            breaker_cooldown=breaker_cooldown, temperature=temperature,
            counterweight=counterweight, strict=strict, slots=slots, output_mode=output_mode,
            max_entities=max_entities, max_tokens=max_tokens, system_role=system_role,
            extra_body=dict(extra_body or {}))
        self.name = f"llm:{model}"
        self._own_extractor = extractor is not None
        self.extractor = extractor or EntityExtractor()
        self.embedded = EmbeddedRewriter(self.extractor)
        self.cache = ResponseCache(cache_path) if cache_path is not None else None
        self.breaker = _CircuitBreaker(breaker_threshold, breaker_cooldown, clock)
        # the ladder rung that last worked; shared by later calls (a server's abilities
        # do not change between turns)
        self.mode: OutputMode = output_mode
        # whether the instructions travel inside the first user message (see system_role);
        # "auto" starts with a system message and switches once a server rejects it
        self.merge_system = system_role is False
        self._transport = transport
        self._async_transport = async_transport
        self._sleep = sleep
        self._async_sleep = async_sleep
        self._client: httpx.Client | None = None
        self._aclient: httpx.AsyncClient | None = None
        self._aclient_loop: asyncio.AbstractEventLoop | None = None
        self._lock = threading.Lock()

    # -- lifecycle ---------------------------------------------------------------------
    def use_extractor(self, extractor: EntityExtractor) -> None:
        """Adopt a session's extractor unless one was given at construction."""
        if not self._own_extractor:
            self.extractor = extractor
            self.embedded = EmbeddedRewriter(extractor)

    def close(self) -> None:
        """Close the HTTP client and the cache (the rewriter can still fall back after)."""
        if self._client is not None:
            self._client.close()
            self._client = None
        if self.cache is not None:
            self.cache.close()
            self.cache = None

    async def aclose(self) -> None:
        if self._aclient is not None:
            await self._aclient.aclose()
            self._aclient = None
        self.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _sync_client(self) -> httpx.Client:
        with self._lock:
            if self._client is None:
                self._client = httpx.Client(transport=self._transport,
                                            timeout=self.config.timeout)
            return self._client

    def _async_client(self) -> httpx.AsyncClient:
        loop = asyncio.get_running_loop()
        # an AsyncClient's connections belong to the loop that opened them; a new loop
        # (another asyncio.run) needs a new client
        if self._aclient is None or self._aclient_loop is not loop:
            self._aclient = httpx.AsyncClient(transport=self._async_transport,
                                              timeout=self.config.timeout)
            self._aclient_loop = loop
        return self._aclient

    # -- the request --------------------------------------------------------------------
    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json"}
        env = self.config.api_key_env
        key = os.environ.get(env) if env else None
        if key:
            headers["Authorization"] = f"Bearer {key}"
        return headers

    def _body(self, messages: list[dict[str, str]], mode: OutputMode) -> dict[str, object]:
        sent = merge_system(messages) if self.merge_system else messages
        body: dict[str, object] = {"model": self.config.model, "messages": sent,
                                   "max_tokens": self.config.max_tokens}
        if self.config.temperature is not None:
            body["temperature"] = self.config.temperature
        if mode == "json_schema":
            body["response_format"] = {"type": "json_schema", "json_schema": {
                "name": "rewrite", "strict": True, "schema": REWRITE_JSON_SCHEMA}}
        elif mode == "json_object_schema":
            body["response_format"] = {"type": "json_object", "schema": REWRITE_JSON_SCHEMA}
        elif mode == "json_object":
            body["response_format"] = {"type": "json_object"}
        body.update(self.config.extra_body)
        return body

    def _backoff(self, retry: int) -> float:
        return float(min(self.config.backoff_cap, self.config.backoff_base * 2 ** retry))

    def _step(self, response: httpx.Response | None, error: Exception | None, retry: int,
              mode: OutputMode) -> _Step:
        """What to do after one attempt (``retry`` = retries already made)."""
        cfg = self.config
        if response is None:
            if isinstance(error, httpx.TimeoutException):
                return _Step("fail", reason="timeout")
            what = "connection error"
            if retry >= cfg.max_retries:
                return _Step("fail", reason=_after(what, retry))
            return _Step("retry", reason=what, delay=self._backoff(retry))
        status = response.status_code
        if status == 200:
            try:
                completion = _Completion.model_validate_json(response.content)
            except ValidationError:
                # a 200 that is not a chat completion: usually a wrong base_url
                return _Step("fail", reason="invalid response")
            choice = completion.choices[0]
            return _Step("done", content=choice.message.content, usage=completion.usage,
                         finish_reason=choice.finish_reason)
        if status >= 400 and status not in _NOT_A_REFUSAL:
            # a refusal of the request's form, not a fault: retrying the same request
            # would get the same answer, so change the request instead
            text = response.text.lower()
            if cfg.system_role == "auto" and not self.merge_system \
                    and any(h in text for h in _SYSTEM_ROLE_HINTS):
                return _Step("merge_system", reason="system role unsupported")
            if mode != "text" and any(h in text for h in _UNSUPPORTED_HINTS):
                return _Step("downgrade", reason=f"{mode} unsupported (http {status})")
        if status in _RETRYABLE:
            what = f"http {status}"
            if retry >= cfg.max_retries:
                return _Step("fail", reason=_after(what, retry))
            delay = self._backoff(retry)
            ra = _retry_after(response.headers.get("Retry-After"))
            if ra is not None:
                delay = min(ra, cfg.retry_after_cap)
            return _Step("retry", reason=what, delay=delay)
        return _Step("fail", reason=f"http {status}")

    def _next_mode(self, mode: OutputMode, reason: str | None) -> OutputMode:
        nxt: OutputMode = _LADDER[min(_LADDER.index(mode) + 1, len(_LADDER) - 1)]
        logger.info("%s: server refused response_format (%s); trying %s", self.name, reason,
                    nxt)
        self.mode = nxt
        return nxt

    def _use_merged_system(self) -> None:
        logger.info("%s: server rejected the system role; the instructions now open the "
                    "first user message", self.name)
        self.merge_system = True

    def _call(self, messages: list[dict[str, str]]) -> _Outcome:
        client = self._sync_client()
        mode, retry, attempts = self.mode, 0, 0
        while True:
            attempts += 1
            response: httpx.Response | None = None
            error: Exception | None = None
            try:
                response = client.post(self.config.url, json=self._body(messages, mode),
                                        headers=self._headers())
            except httpx.HTTPError as exc:
                error = exc
            step = self._step(response, error, retry, mode)
            if step.kind == "downgrade":
                mode = self._next_mode(mode, step.reason)
                continue
            if step.kind == "merge_system":
                self._use_merged_system()
                continue
            if step.kind == "retry":
                logger.info("%s: %s; retry %d in %.2fs", self.name, step.reason, retry + 1,
                            step.delay)
                self._sleep(step.delay)
                retry += 1
                continue
            return _outcome(step, attempts, mode)

    async def _acall(self, messages: list[dict[str, str]]) -> _Outcome:
        client = self._async_client()
        mode, retry, attempts = self.mode, 0, 0
        while True:
            attempts += 1
            response: httpx.Response | None = None
            error: Exception | None = None
            try:
                response = await client.post(self.config.url, json=self._body(messages, mode),
                                             headers=self._headers())
            except httpx.HTTPError as exc:
                error = exc
            step = self._step(response, error, retry, mode)
            if step.kind == "downgrade":
                mode = self._next_mode(mode, step.reason)
                continue
            if step.kind == "merge_system":
                self._use_merged_system()
                continue
            if step.kind == "retry":
                logger.info("%s: %s; retry %d in %.2fs", self.name, step.reason, retry + 1,
                            step.delay)
                await self._async_sleep(step.delay)
                retry += 1
                continue
            return _outcome(step, attempts, mode)

    # -- entry points -------------------------------------------------------------------
    def run(self, request: RewriteRequest) -> RewriteResult:
        """Rewrite one message; never raises (a fault returns the embedded rewrite).

        >>> import httpx
        >>> down = httpx.MockTransport(lambda r: httpx.Response(503))
        >>> llm = LLMRewriter(base_url="http://llm.test/v1", model="m", api_key_env=None,
        ...                   transport=down, max_retries=0)
        >>> from turnscope import Session
        >>> r = Session(rewriter=llm).user("Is the billing export API paginated?")
        >>> r.backend, r.fallback, r.fallback_reason
        ('embedded', True, 'http 503')
        """
        started = time.perf_counter()
        try:
            messages, key, cached = self._prepare(request)
            if cached is not None:
                return self._finish(request, messages, key, cached, started)
            if not self.breaker.allow():
                return self._fallback(request, "circuit open", {"breaker": "open"})
            outcome = self._call(messages)
            self._record(outcome)
            return self._finish(request, messages, key, outcome, started)
        except Exception as exc:  # last line of defence: a conversation must not break
            logger.exception("%s: unexpected error", self.name)
            return self._fallback(request, f"internal error: {type(exc).__name__}", {})

    async def arun(self, request: RewriteRequest) -> RewriteResult:
        """The asynchronous :meth:`run` (same semantics, ``httpx.AsyncClient``)."""
        started = time.perf_counter()
        try:
            messages, key, cached = self._prepare(request)
            if cached is not None:
                return self._finish(request, messages, key, cached, started)
            if not self.breaker.allow():
                return self._fallback(request, "circuit open", {"breaker": "open"})
            outcome = await self._acall(messages)
            self._record(outcome)
            return self._finish(request, messages, key, outcome, started)
        except Exception as exc:  # last line of defence: a conversation must not break
            logger.exception("%s: unexpected error", self.name)
            return self._fallback(request, f"internal error: {type(exc).__name__}", {})

    # -- shared by run / arun -----------------------------------------------------------
    def _prepare(self, request: RewriteRequest
                 ) -> tuple[list[dict[str, str]], str, _Outcome | None]:
        messages = build_messages(request, counterweight=self.config.counterweight)
        key = cache_key(self.config.model, messages)
        if self.cache is not None:
            content = self.cache.get(key)
            if content is not None and isinstance(_parse_answer(content), RewriteAnswer):
                logger.debug("%s: cache hit %s", self.name, key[:12])
                return messages, key, _Outcome(content=content, mode="cache")
        return messages, key, None

    def _record(self, outcome: _Outcome) -> None:
        if outcome.reason is None:
            self.breaker.success()
        elif outcome.backend_fault:
            if self.breaker.failure():
                logger.warning("%s: circuit open for %.0fs after %s", self.name,
                               self.config.breaker_cooldown, outcome.reason)
        else:
            # the server answered; only the answer was bad: the backend is healthy
            self.breaker.success()

    def _finish(self, request: RewriteRequest, messages: list[dict[str, str]], key: str,
                outcome: _Outcome, started: float) -> RewriteResult:
        chars, tokens = prompt_size(messages)
        if outcome.mode == "cache":
            cache_state = "hit"
        else:
            cache_state = "miss" if self.cache is not None else "off"
        trace: dict[str, object] = {
            "backend": self.name, "policy": request.scope.policy,
            "counterweight": self.config.counterweight, "slots": self.config.slots,
            "output_mode": outcome.mode, "attempts": outcome.attempts,
            "cache": cache_state,
            "prompt_chars": chars, "prompt_tokens_est": tokens,
        }
        if outcome.usage:
            trace["usage"] = outcome.usage
        if outcome.reason is not None:
            trace["latency_ms"] = round((time.perf_counter() - started) * 1000, 1)
            return self._fallback(request, outcome.reason, trace)
        if outcome.finish_reason is not None:
            trace["finish_reason"] = outcome.finish_reason
        if outcome.finish_reason == "length":
            # cut off mid-answer: even when a JSON object can be dug out of the text, it
            # is not the one the model was writing
            trace["raw"] = (outcome.content or "")[:500]
            trace["latency_ms"] = round((time.perf_counter() - started) * 1000, 1)
            return self._fallback(request, f"truncated at max_tokens={self.config.max_tokens}",
                                  trace)
        parsed = _parse_answer(outcome.content)
        if isinstance(parsed, str):
            trace["raw"] = (outcome.content or "")[:500]
            return self._fallback(request, parsed, trace)
        rejected = self._reject(request, parsed, messages)
        if rejected is not None:
            trace["raw"] = (outcome.content or "")[:500]
            trace["rejected_query"] = parsed.query
            return self._fallback(request, rejected, trace)
        if self.cache is not None and outcome.mode != "cache" and outcome.content is not None:
            self.cache.put(key, self.config.model, outcome.content)
        trace["latency_ms"] = round((time.perf_counter() - started) * 1000, 1)
        return self._result(request, parsed, messages, trace)

    def _reject(self, request: RewriteRequest, answer: RewriteAnswer,
                messages: list[dict[str, str]]) -> str | None:
        """Why a well-formed answer is still not a rewrite, or None.

        A small model copies the prompt's example object (``"<standalone query>"``,
        entities named ``<name>``) or makes names up; either would be taken as the query,
        and the entities would become live slots that later turns are offered.
        """
        evidence = user_content(messages)
        texts = [answer.query, *(t for e in answer.entities for t in (e.type, e.name))]
        echoed = placeholder_echoes(texts, evidence + "\n" + request.message.text)
        if echoed:
            return "placeholder echo: " + ", ".join(echoed)
        # declared entities count only where they become slots; with slots="extract" the
        # extractor reads the query instead, and the query itself is checked either way
        declared = [Mention(e.type or "name", e.name, e.name, -1, -1, "llm")
                    for e in answer.entities[: self.config.max_entities]
                    ] if self.config.slots == "same-call" else []
        invented = invented_entities(answer.query, request, evidence=evidence,
                                     entities=declared, extractor=self.extractor)
        if invented:
            return "invented entity: " + ", ".join(invented)
        return None

    def _result(self, request: RewriteRequest, answer: RewriteAnswer,
                messages: list[dict[str, str]], trace: dict[str, object]) -> RewriteResult:
        msg = request.message
        query = answer.query
        declared = self._entities(answer, request)
        if self.config.slots == "extract":
            entities = tuple(self.extractor.extract(query, msg.lang))
        else:
            entities = declared
        report = find_leaks(query, request, evidence=user_content(messages),
                            entities=declared, extractor=self.extractor)
        if report.leaks:
            trace["leak_reasons"] = dict(report.reasons)
            logger.warning("%s: query %r leaks %s", self.name, query,
                           ", ".join(f"{n} ({report.reasons[n]})" for n in report.leaks))
            if self.config.strict:
                # the leaks belong to the rejected query, not to the embedded one returned
                trace["rejected_query"] = query
                trace["rejected_leaks"] = list(report.leaks)
                return self._fallback(request, "leak: " + ", ".join(report.leaks), trace)
        cls = answer.reference_class
        if cls not in REFERENCE_CLASSES:
            if cls is not None:
                trace["model_reference_class"] = cls
            cls = msg.classification.spec_class
        topic_shift = answer.topic_shift
        if topic_shift is None:
            topic_shift = msg.classification.pivot
        named = [m for m in entities if not m.is_attribute]
        # the focus (what a later "it" continues) is an entity the query actually names
        written = [m for m in named if m.start >= 0]
        focus = (written or named)[0] if named else None
        return RewriteResult(query=query, reference_class=cls, topic_shift=topic_shift,
                             entities=entities, focus=focus, backend=self.name,
                             fallback=False, fallback_reason=None, leaks=report.leaks,
                             trace=trace)

    def _entities(self, answer: RewriteAnswer, request: RewriteRequest) -> tuple[Mention, ...]:
        """The model's entities as Mentions, canonicalised so that slots stay coherent:
        a vocabulary entity takes its vocabulary type and name, and a name that already
        has a current slot keeps that slot's type (one thing, one slot)."""
        out: list[Mention] = []
        seen: set[str] = set()
        query_low = answer.query.casefold()
        for e in answer.entities[: self.config.max_entities]:
            typ, name = e.type.strip().lower() or "name", e.name.strip()
            vocab = self.extractor.vocabulary.find(name)
            if len(vocab) == 1:
                typ, name = vocab[0].type, vocab[0].name
            else:
                slot = request.state.slots.find_name(name)
                if slot is not None and not slot.status.terminal:
                    typ, name = slot.type, slot.name
            if f"{typ}:{name}".casefold() in seen:
                continue
            seen.add(f"{typ}:{name}".casefold())
            # offsets point into the query when the name is written there; -1 otherwise
            pos = query_low.find(e.name.casefold())
            start, end = (pos, pos + len(e.name)) if pos >= 0 else (-1, -1)
            out.append(Mention(typ, name, e.name, start, end, "llm"))
        return tuple(out)

    def _fallback(self, request: RewriteRequest, reason: str,
                  trace: Mapping[str, object]) -> RewriteResult:
        # while the circuit is open every turn would say the same thing: log it once
        # (when it opens, in _record) and keep these at debug level
        level = logging.DEBUG if reason == "circuit open" else logging.WARNING
        logger.log(level, "%s failed (%s); using the embedded rewriter", self.name, reason)
        # a child of the session's turnscope.rewrite span when there is one
        with _tracing.fallback_span(self.name, reason):
            r = self.embedded.run(request)
        merged: dict[str, object] = dict(r.trace)
        merged.update(trace)
        merged["attempted"] = self.name
        merged["fallback_reason"] = reason
        # what the embedded rewrite carried is the answer's too (SPEC 4 "carried")
        return RewriteResult(r.query, r.reference_class, r.topic_shift, r.entities, r.focus,
                             backend=EMBEDDED, fallback=True, fallback_reason=reason,
                             trace=merged, carried=r.carried)


def _after(what: str, retries: int) -> str:
    return f"{what} after {retries} retries" if retries else what


_LADDER: tuple[OutputMode, ...] = ("json_schema", "json_object_schema", "json_object", "text")


def _outcome(step: _Step, attempts: int, mode: str) -> _Outcome:
    if step.kind == "done":
        return _Outcome(content=step.content, attempts=attempts, mode=mode, usage=step.usage,
                        finish_reason=step.finish_reason)
    return _Outcome(reason=step.reason, backend_fault=step.backend_fault, attempts=attempts,
                    mode=mode)
