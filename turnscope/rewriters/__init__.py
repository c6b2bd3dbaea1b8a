"""Rewriters: the embedded (offline) one and backends for LLM servers."""

from typing import TYPE_CHECKING

from turnscope.rewriters._base import EMBEDDED, Rewriter, RewriteRequest, RewriteResult
from turnscope.rewriters._cascade import CascadeRewriter
from turnscope.rewriters._embedded import EmbeddedRewriter
from turnscope.rewriters._factory import make_rewriter
from turnscope.rewriters._guard import LeakReport, find_leaks
from turnscope.rewriters._llm_options import DEFAULT_MAX_TOKENS, DEFAULT_TIMEOUT, REWRITER_KINDS, SystemRole
from turnscope.rewriters._prompts import build_messages, prompt_size

if TYPE_CHECKING:
    from turnscope.rewriters._llm import LLMRewriter, ResponseCache

__all__ = [
    "CascadeRewriter",
    "EMBEDDED",
    "REWRITER_KINDS",
    "EmbeddedRewriter",
    "LLMRewriter",
    "LeakReport",
    "ResponseCache",
    "RewriteRequest",
    "RewriteResult",
    "Rewriter",
    "build_messages",
    "find_leaks",
    "make_rewriter",
    "prompt_size",
    "DEFAULT_MAX_TOKENS",
    "DEFAULT_TIMEOUT",
    "SystemRole",
]


def __getattr__(name: str) -> object:
    # the LLM backend pulls in httpx (an optional extra) and costs import time that
    # sessions using the embedded rewriter should not pay: load it on first use
    if name in ("LLMRewriter", "ResponseCache"):
        from turnscope.rewriters import _llm

        return getattr(_llm, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
