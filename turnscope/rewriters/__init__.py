"""Rewriters: the embedded (offline) one and backends for LLM servers."""

from turnscope.rewriters._base import EMBEDDED, RewriteRequest, RewriteResult, Rewriter
from turnscope.rewriters._embedded import EmbeddedRewriter

__all__ = ["EMBEDDED", "RewriteRequest", "RewriteResult", "Rewriter", "EmbeddedRewriter"]
