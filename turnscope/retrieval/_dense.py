"""Dense retrieval: cosine similarity between query and passage embeddings."""

from __future__ import annotations

import logging
from collections.abc import Sequence

import numpy as np

from turnscope._encoder import Encoder
from turnscope._exceptions import TurnscopeError
from turnscope.retrieval._base import DEFAULT_K, Hit, check_k, check_queries, top_hits
from turnscope.retrieval._cache import IndexCache
from turnscope.retrieval._corpus import Corpus, Passage, as_corpus

__all__ = ["DenseRetriever"]

logger = logging.getLogger(__name__)

# Part of the cache key: bump if what gets embedded per passage changes.
_PASSAGE_TEXT_VERSION = "indexed_text/v1"


def _normalise(matrix: np.ndarray) -> np.ndarray:
    # The Encoder protocol promises unit vectors; normalising again is cheap and
    # keeps "dot product == cosine" true for an encoder that forgets to.
    matrix = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    unit: np.ndarray = (matrix / norms).astype(np.float32)
    return unit


class DenseRetriever:
    """Ranks passages by cosine similarity of :class:`Encoder` embeddings.

    Passages (title and text) are embedded once, when the retriever is built, or
    loaded from ``cache``. ``encoder`` defaults to the bundled multilingual E5.

    >>> retriever = DenseRetriever(bundled_corpus("cloud_docs"))      # doctest: +SKIP
    >>> retriever.run("how do I download my invoices as a spreadsheet?", k=3)  # doctest: +SKIP
    [Hit(id='...', score=0.87, rank=1), ...]
    """

    name = "dense"

    def __init__(
        self,
        corpus: Corpus | Sequence[Passage],
        encoder: Encoder | None = None,
        *,
        cache: IndexCache | None = None,
    ) -> None:
        self.corpus = as_corpus(corpus)
        if encoder is None:
            from turnscope._encoder import default_encoder

            encoder = default_encoder()
        self.encoder: Encoder = encoder
        self._ids = self.corpus.ids
        if cache is None:
            self._matrix = self._embed_corpus()
        else:
            component = f"{encoder.name}|{_PASSAGE_TEXT_VERSION}"
            self._matrix = cache.dense_matrix(self.corpus, component, self._embed_corpus)

    def _embed_corpus(self) -> np.ndarray:
        logger.debug("embedding %d passages with %s", len(self.corpus), self.encoder.name)
        matrix = self.encoder.embed_passages([p.indexed_text for p in self.corpus])
        if matrix.ndim != 2 or matrix.shape[0] != len(self.corpus):
            raise TurnscopeError(
                f"encoder {self.encoder.name!r} returned shape {matrix.shape} "
                f"for {len(self.corpus)} passages"
            )
        return _normalise(matrix)

    @property
    def matrix(self) -> np.ndarray:
        """The (n_passages, dim) unit-length passage matrix, in corpus order."""
        return self._matrix

    def run(self, query: str, k: int = DEFAULT_K) -> list[Hit]:
        """The ``k`` passages most similar to ``query``."""
        return self.run_many([query], k)[0]

    def run_many(self, queries: Sequence[str], k: int = DEFAULT_K) -> list[list[Hit]]:
        """Like :meth:`run` per query, with all queries embedded in one encoder call."""
        check_k(k)
        check_queries(queries)
        results: list[list[Hit]] = [[] for _ in queries]
        todo = [i for i, q in enumerate(queries) if q.strip()]
        if not todo:
            return results
        q_matrix = self.encoder.embed_queries([queries[i] for i in todo])
        if q_matrix.ndim != 2 or q_matrix.shape != (len(todo), self._matrix.shape[1]):
            raise TurnscopeError(
                f"encoder {self.encoder.name!r} returned shape {q_matrix.shape} "
                f"for {len(todo)} queries; passages have dimension {self._matrix.shape[1]}"
            )
        scores = _normalise(q_matrix) @ self._matrix.T
        for row, i in enumerate(todo):
            results[i] = top_hits(scores[row], self._ids, k, positive=False)
        return results

    def __repr__(self) -> str:
        return f"DenseRetriever(passages={len(self.corpus)}, encoder={self.encoder.name!r})"
