"""Lexical retrieval: Okapi BM25 over turnscope's own tokens, scored by ``bm25s``."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from contextlib import nullcontext
from typing import Any

import numpy as np

from turnscope.retrieval._base import DEFAULT_K, Hit, check_k, check_queries, top_hits
from turnscope.retrieval._cache import IndexCache
from turnscope.retrieval._corpus import Corpus, Passage, as_corpus
from turnscope.retrieval._tokenize import TextTokenizer, Tokenizer

__all__ = ["DEFAULT_B", "DEFAULT_K1", "BM25Retriever"]

logger = logging.getLogger(__name__)

#: Term-frequency saturation. 1.2-2.0 is the usual range (Robertson & Zaragoza 2009,
#: "The Probabilistic Relevance Framework: BM25 and Beyond"); 1.5 is bm25s' default.
DEFAULT_K1 = 1.5
#: Document-length normalisation, the standard value from the same source.
DEFAULT_B = 0.75
# bm25s' "lucene" variant: its idf, log(1 + (N - df + 0.5) / (df + 0.5)), is never
# negative, so a term found in most passages cannot push a match below a non-match.
_METHOD = "lucene"


class BM25Retriever:
    """BM25 over a :class:`Corpus`, using a :class:`Tokenizer` (CJK bigrams by default).

    Only passages sharing at least one term with the query are returned, so a query
    may get fewer than ``k`` hits.

    >>> corpus = Corpus([Passage("a", "Billing export API pagination"), Passage("b", "Dublin SLA")])
    >>> BM25Retriever(corpus).run("is the billing export paginated?", k=1)[0].id
    'a'
    """

    name = "bm25"

    def __init__(
        self,
        corpus: Corpus | Sequence[Passage],
        *,
        tokenizer: Tokenizer | None = None,
        k1: float = DEFAULT_K1,
        b: float = DEFAULT_B,
        cache: IndexCache | None = None,
    ) -> None:
        self.corpus = as_corpus(corpus)
        self.tokenizer: Tokenizer = tokenizer if tokenizer is not None else TextTokenizer()
        self.k1 = k1
        self.b = b
        self._ids = self.corpus.ids
        component = f"{self.tokenizer.name}|k1={k1}|b={b}|{_METHOD}"
        if cache is None:
            self._index = self._build()
        else:
            self._index = cache.bm25_index(self.corpus, component, self._build)
        self._vocab: dict[str, int] = {
            str(t): int(i) for t, i in self._index.vocab_dict.items() if t != ""
        }

    def _build(self) -> Any:
        import bm25s
        from bm25s.tokenization import Tokenized

        # Our own vocabulary, so bm25s never re-tokenises: ids are dense 0..V-1.
        vocab: dict[str, int] = {}
        doc_ids = [
            [vocab.setdefault(tok, len(vocab)) for tok in self.tokenizer.run(p.indexed_text)]
            for p in self.corpus
        ]
        empty = not vocab
        if empty:
            # bm25s cannot index an empty vocabulary; a placeholder term keeps every
            # passage at score 0 (no query will contain it after tokenisation)
            vocab[" "] = 0
        logger.debug("indexing %d passages, %d terms", len(doc_ids), len(vocab))
        index = bm25s.BM25(k1=self.k1, b=self.b, method=_METHOD)
        # an all-empty corpus has average length 0; the 0/0 only touches unused terms
        with np.errstate(invalid="ignore", divide="ignore") if empty else nullcontext():
            index.index(Tokenized(ids=doc_ids, vocab=vocab), show_progress=False)
        return index

    def _scores(self, query: str) -> np.ndarray | None:
        term_ids = [self._vocab[t] for t in self.tokenizer.run(query) if t in self._vocab]
        if not term_ids:
            return None
        return np.asarray(self._index.get_scores_from_ids(term_ids), dtype=np.float32)

    def run(self, query: str, k: int = DEFAULT_K) -> list[Hit]:
        """The ``k`` best passages for ``query`` by BM25 score."""
        check_k(k)
        check_queries([query])
        scores = self._scores(query)
        if scores is None:
            return []
        return top_hits(scores, self._ids, k, positive=True)

    def run_many(self, queries: Sequence[str], k: int = DEFAULT_K) -> list[list[Hit]]:
        check_k(k)
        check_queries(queries)
        return [self.run(q, k) for q in queries]

    def __repr__(self) -> str:
        return f"BM25Retriever(passages={len(self.corpus)}, tokenizer={self.tokenizer.name!r})"
