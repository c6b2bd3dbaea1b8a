"""Build a rewriter from a kind name and options (used by the command line and configs).

The LLM backend's option defaults live in ``_llm_options``, not in ``_llm``, so that this
module (and ``import turnscope``) stays cheap and works without the optional
``httpx``: the backend itself is imported only when an ``llm`` rewriter is built.
"""

from __future__ import annotations

from pathlib import Path

from turnscope._exceptions import ConfigError
from turnscope.entities import EntityExtractor
from turnscope.rewriters._base import Rewriter
from turnscope.rewriters._embedded import EmbeddedRewriter

# the option defaults live in a leaf module that the backend reads too
from turnscope.rewriters._llm_options import (
    DEFAULT_API_KEY_ENV,
    DEFAULT_MAX_TOKENS,
    DEFAULT_TIMEOUT,
    REWRITER_KINDS,
    SLOT_MODES,
    SlotMode,
    SystemRole,
)

__all__ = ["make_rewriter"]

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
