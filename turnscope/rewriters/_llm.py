"""A rewriter backed by any OpenAI-compatible chat-completions server.

OpenAI, vLLM, Ollama, llama.cpp's server and most gateways speak the same
``POST {base_url}/chat/completions``. This rewriter sends the model only what
the scope policy put in scope (see :mod:`turnscope.rewriters._prompts`), gets
the query, the ``topic_shift`` flag, the reference class and the entities back
in **one call**, and never lets a backend fault break a conversation:

It never lets a backend fault break a conversation (docs/llm.md has each behaviour and
its measurements): a **structured output ladder** (JSON schema, llama.cpp's schema form,
JSON mode, plain text with JSON extraction; a refusal is not retried at the same rung, and
the rung that worked is remembered; ``_llm_retry``), **bounded answers** (``max_tokens`` on
every request; a cut answer falls back with ``truncated at max_tokens=N``), **copied or
invented answers** refused (``placeholder echo: ...``, ``invented entity: ...``), the
**system role** merged into the first user message once a server rejects it, **faults**
(a timeout per attempt, backoff on 429/5xx honouring ``Retry-After``, a circuit breaker;
``_llm_cache``) that end in the embedded rewrite with ``fallback=True`` and a stable
``fallback_reason``, **slots from the same call** (the model's entities become the turn's
liveness slots), a **leak guard** (``strict=True`` uses the embedded rewrite instead), and
a **response cache** (SQLite, keyed by ``sha256(model + messages)``). Settings and their
``DEFAULT_*`` values live in ``_llm_config``; the wire format in ``_llm_answer``.

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
import logging
import os
import threading
import time
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Self

from pydantic import ValidationError

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
from turnscope.rewriters._guard import find_leaks, invented_entities, placeholder_echoes
from turnscope.rewriters._llm_answer import (
    RewriteAnswer,
    _Completion,
    _parse_answer,
    extract_json_object,
    request_body,
)
from turnscope.rewriters._llm_cache import (
    ResponseCache,
    _CircuitBreaker,
    cache_key,
)
from turnscope.rewriters._llm_config import (
    DEFAULT_BACKOFF_BASE,
    DEFAULT_BACKOFF_CAP,
    DEFAULT_BREAKER_COOLDOWN,
    DEFAULT_BREAKER_THRESHOLD,
    DEFAULT_MAX_ENTITIES,
    DEFAULT_MAX_RETRIES,
    DEFAULT_RETRY_AFTER_CAP,
    OUTPUT_MODES,
    LLMConfig,
    OutputMode,
)
from turnscope.rewriters._llm_options import (
    DEFAULT_API_KEY_ENV,
    DEFAULT_MAX_TOKENS,
    DEFAULT_TIMEOUT,
    SLOT_MODES,
    SYSTEM_ROLE_MODES,
    SlotMode,
    SystemRole,
)
from turnscope.rewriters._llm_retry import (
    _LADDER,
    _NOT_A_REFUSAL,
    _RETRYABLE,
    _SYSTEM_ROLE_HINTS,
    _UNSUPPORTED_HINTS,
    _after,
    _Outcome,
    _outcome,
    _retry_after,
    _Step,
)
from turnscope.rewriters._prompts import (
    REFERENCE_CLASSES,
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
        return request_body(self.config, merge_system(messages) if self.merge_system else messages, mode)

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
        # what the embedded rewrite carried is the answer's too (docs/output.md "carried")
        return RewriteResult(r.query, r.reference_class, r.topic_shift, r.entities, r.focus,
                             backend=EMBEDDED, fallback=True, fallback_reason=reason,
                             trace=merged, carried=r.carried)
