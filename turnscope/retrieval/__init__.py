"""Retrieval over a passage corpus, used to score rewritten queries (recall@k).

>>> from turnscope.retrieval import bundled_corpus, build_retriever
>>> retriever = build_retriever("hybrid", bundled_corpus("cloud_docs"))   # doctest: +SKIP
>>> [h.id for h in retriever.run("Is the billing export API paginated?", k=3)]  # doctest: +SKIP

BM25 needs the ``retrieval`` extra (``bm25s``); it is imported only when a BM25
index is built, so corpora and dense retrieval work without it.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Literal, get_args

from turnscope._encoder import Encoder
from turnscope._exceptions import InputError
from turnscope.retrieval._base import DEFAULT_K, Hit, Retriever
from turnscope.retrieval._bm25 import DEFAULT_B, DEFAULT_K1, BM25Retriever
from turnscope.retrieval._cache import DEFAULT_CACHE_DIR, IndexCache, default_cache_dir
from turnscope.retrieval._corpus import (
    Corpus,
    Passage,
    bundled_corpus,
    bundled_corpus_names,
    load_corpus,
)
from turnscope.retrieval._dense import DenseRetriever
from turnscope.retrieval._hybrid import (
    DEFAULT_RRF_DEPTH,
    DEFAULT_RRF_K,
    HybridRetriever,
    reciprocal_rank_fusion,
)
from turnscope.retrieval._tokenize import TextTokenizer, Tokenizer, tokenize

__all__ = [
    "DEFAULT_B",
    "DEFAULT_CACHE_DIR",
    "DEFAULT_K",
    "DEFAULT_K1",
    "DEFAULT_RRF_DEPTH",
    "DEFAULT_RRF_K",
    "RETRIEVER_KINDS",
    "BM25Retriever",
    "Corpus",
    "DenseRetriever",
    "Hit",
    "HybridRetriever",
    "IndexCache",
    "Passage",
    "Retriever",
    "RetrieverKind",
    "TextTokenizer",
    "Tokenizer",
    "build_retriever",
    "bundled_corpus",
    "bundled_corpus_names",
    "default_cache_dir",
    "load_corpus",
    "reciprocal_rank_fusion",
    "tokenize",
]

RetrieverKind = Literal["bm25", "dense", "hybrid"]
RETRIEVER_KINDS: tuple[str, ...] = get_args(RetrieverKind)


def build_retriever(
    kind: RetrieverKind | str,
    corpus: Corpus | Sequence[Passage],
    *,
    encoder: Encoder | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
    use_cache: bool = True,
) -> Retriever:
    """Build a retriever by name, with its index cached on disk.

    ``kind`` is ``"bm25"``, ``"dense"`` or ``"hybrid"`` (RRF of the two). ``encoder``
    defaults to the bundled multilingual E5; ``cache_dir`` to :data:`DEFAULT_CACHE_DIR`
    (``$TURNSCOPE_CACHE`` or ``~/.cache/turnscope``); ``use_cache=False`` keeps
    everything in memory.

    >>> retriever = build_retriever("bm25", load_corpus("docs/"))   # doctest: +SKIP
    >>> retriever.run("billing export pagination", k=5)             # doctest: +SKIP
    """
    if kind not in RETRIEVER_KINDS:
        raise InputError(
            f"unknown retriever kind {kind!r}; valid kinds: {', '.join(RETRIEVER_KINDS)}"
        )
    cache = IndexCache(cache_dir) if use_cache else None
    if kind == "bm25":
        return BM25Retriever(corpus, cache=cache)
    if kind == "dense":
        return DenseRetriever(corpus, encoder, cache=cache)
    return HybridRetriever(
        [BM25Retriever(corpus, cache=cache), DenseRetriever(corpus, encoder, cache=cache)]
    )
