"""Rewriters: the embedded (offline) one and backends for LLM servers."""

from turnscope.rewriters._base import EMBEDDED, Rewriter, RewriteRequest, RewriteResult
from turnscope.rewriters._embedded import EmbeddedRewriter
from turnscope.rewriters._factory import REWRITER_KINDS, make_rewriter
from turnscope.rewriters._guard import LeakReport, find_leaks
from turnscope.rewriters._llm import LLMRewriter, ResponseCache
from turnscope.rewriters._prompts import build_messages, prompt_size

__all__ = [
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
]
