"""Build a rewriter from a kind name and options (used by the command line and configs).

The LLM backend's option defaults live here, not in ``_llm``, so that this
module (and ``import turnscope``) stays cheap and works without the optional
``httpx``: the backend itself is imported only when an ``llm`` rewriter is built.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal, TypeAlias

from turnscope._exceptions import ConfigError
from turnscope.entities import EntityExtractor
from turnscope.rewriters._base import Rewriter
from turnscope.rewriters._embedded import EmbeddedRewriter

__all__ = [
    "DEFAULT_API_KEY_ENV",
    "DEFAULT_MAX_TOKENS",
    "DEFAULT_TIMEOUT",
    "REWRITER_KINDS",
    "SLOT_MODES",
    "SYSTEM_ROLE_MODES",
    "SlotMode",
    "SystemRole",
    "make_rewriter",
]

#: the kinds ``make_rewriter`` accepts
REWRITER_KINDS = ("embedded", "llm")
#: Seconds per HTTP attempt. A rewrite sits on the request path of a user turn, so a
#: backend slower than this is treated as down for this turn (the embedded rewrite answers).
DEFAULT_TIMEOUT = 10.0
#: Tokens the model may generate per answer (sent as ``max_tokens`` on every request). The
#: answer is one small JSON object: a query of a few dozen tokens plus at most a dozen
#: entities fits in about 200. Without a bound, one runaway answer (a small model that
#: never closes its JSON) keeps a single-slot local server busy for minutes and times out
#: the calls queued behind it.
DEFAULT_MAX_TOKENS = 256
#: Environment variable holding the API key; read only when a request is made, and
#: optional (local servers need none).
DEFAULT_API_KEY_ENV = "OPENAI_API_KEY"
#: ``same-call``: the model's entities fill the slots; ``extract``: the embedded extractor
#: runs on the model's query.
SLOT_MODES = ("same-call", "extract")
SlotMode = Literal["same-call", "extract"]
#: Where the instructions go. ``True``: a ``system`` message; ``False``: merged into the
#: first user message (for chat templates that have no system role and would drop it
#: silently); ``"auto"``: a system message until the server rejects the system role, then
#: merged for the rest of the rewriter's life.
SYSTEM_ROLE_MODES: tuple[bool | str, ...] = (True, False, "auto")
SystemRole: TypeAlias = bool | Literal["auto"]


def make_rewriter(
    kind: str = "embedded",
    *,
    base_url: str | None = None,
    model: str | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    api_key_env: str | None = DEFAULT_API_KEY_ENV,
    cache_path: str | Path | None = None,
    strict: bool = False,
    counterweight: bool = True,
    slots: str = "same-call",
    max_tokens: int = DEFAULT_MAX_TOKENS,
    system_role: SystemRole = "auto",
    extractor: EntityExtractor | None = None,
) -> Rewriter:
    """A rewriter by kind: ``embedded`` (no model) or ``llm`` (an OpenAI-compatible server).

    ``llm`` needs ``base_url`` and ``model``; the other options are described in
    :class:`~turnscope.rewriters.LLMRewriter`. Options that only apply to ``llm`` are
    ignored for ``embedded``.

    >>> make_rewriter("llm", base_url="http://localhost:11434/v1", model="qwen2.5:7b").name
    'llm:qwen2.5:7b'
    >>> make_rewriter("gpt")
    Traceback (most recent call last):
    ...
    turnscope._exceptions.ConfigError: unknown rewriter 'gpt'; valid: embedded, llm
    """
    name = kind.strip().lower() if isinstance(kind, str) else kind
    if name not in REWRITER_KINDS:
        raise ConfigError(f"unknown rewriter {kind!r}; valid: {', '.join(REWRITER_KINDS)}")
    if name == "embedded":
        return EmbeddedRewriter(extractor)
    if not base_url or not model:
        missing = [opt for opt, value in (("base_url", base_url), ("model", model)) if not value]
        flags = " and ".join(f"--{m.replace('_', '-')}" for m in missing)
        raise ConfigError(f"the llm rewriter needs {' and '.join(missing)} ({flags})")
    if slots not in SLOT_MODES:
        raise ConfigError(f"unknown slots mode {slots!r}; valid: {', '.join(SLOT_MODES)}")
    slot_mode: SlotMode = "extract" if slots == "extract" else "same-call"
    from turnscope.rewriters._llm import LLMRewriter  # needs httpx: imported on demand

    return LLMRewriter(base_url=base_url, model=model, timeout=timeout, api_key_env=api_key_env,
                       cache_path=cache_path, strict=strict, counterweight=counterweight,
                       slots=slot_mode, max_tokens=max_tokens, system_role=system_role,
                       extractor=extractor)
