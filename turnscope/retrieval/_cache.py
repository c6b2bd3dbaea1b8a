"""On-disk cache of retrieval indexes, so that a corpus is embedded once, not per run.

Entries are content-addressed: the key hashes the corpus fingerprint with the name
of whatever produced the index (encoder, tokeniser and parameters). A changed corpus
or encoder therefore gets a new key and a fresh build; nothing is ever served stale.
Old entries are not pruned; deleting the cache directory is always safe.

A cache entry that cannot be read (truncated, corrupted, wrong shape) is rebuilt
with a warning. A cache directory that cannot be written only costs the saving.
"""

from __future__ import annotations

import hashlib
import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from turnscope._paths import default_cache_dir, replace_atomically
from turnscope.retrieval._corpus import Corpus

__all__ = ["DEFAULT_CACHE_DIR", "IndexCache", "default_cache_dir"]

logger = logging.getLogger(__name__)

# Part of every key: bump when the layout or meaning of a cached file changes.
_CACHE_FORMAT = "1"


#: Where indexes are cached unless told otherwise (resolved when this module is
#: imported; :class:`IndexCache` re-reads the environment when it is created).
DEFAULT_CACHE_DIR: Path = default_cache_dir()


def _key(kind: str, corpus: Corpus, component: str) -> str:
    raw = "\0".join((_CACHE_FORMAT, kind, corpus.fingerprint, component))
    return hashlib.sha256(raw.encode("utf-8")).hexdigest()[:32]


class IndexCache:
    """Loads a cached index or builds and saves it.

    >>> cache = IndexCache("/tmp/ts-cache")
    >>> matrix = cache.dense_matrix(corpus, "my-encoder", lambda: embed(corpus))  # doctest: +SKIP
    """

    def __init__(self, root: str | os.PathLike[str] | None = None) -> None:
        self.root = Path(root).expanduser() if root is not None else default_cache_dir()

    def __repr__(self) -> str:
        return f"IndexCache({str(self.root)!r})"

    # ------------------------------------------------------------------ dense

    def dense_path(self, corpus: Corpus, encoder_name: str) -> Path:
        return self.root / "dense" / f"{_key('dense', corpus, encoder_name)}.npy"

    def dense_matrix(
        self, corpus: Corpus, encoder_name: str, build: Callable[[], np.ndarray]
    ) -> np.ndarray:
        """The (n_passages, dim) passage matrix for ``corpus`` under ``encoder_name``."""
        path = self.dense_path(corpus, encoder_name)
        if path.exists():
            try:
                matrix: np.ndarray = np.load(path, allow_pickle=False)
                _check_matrix(matrix, len(corpus))
                logger.debug("dense index cache hit: %s", path)
                return matrix
            except Exception as exc:  # any unreadable entry is rebuilt, whatever broke it
                logger.warning("rebuilding unreadable dense index cache %s: %s", path, exc)
        built = build()
        self._save(path, lambda tmp: np.save(tmp, built, allow_pickle=False), is_dir=False)
        return built

    # ------------------------------------------------------------------- bm25

    def bm25_path(self, corpus: Corpus, component: str) -> Path:
        return self.root / "bm25" / _key("bm25", corpus, component)

    def bm25_index(self, corpus: Corpus, component: str, build: Callable[[], Any]) -> Any:
        """A ``bm25s.BM25`` index for ``corpus``; ``component`` names tokeniser and parameters."""
        import bm25s

        path = self.bm25_path(corpus, component)
        if path.is_dir():
            try:
                index = bm25s.BM25.load(str(path), load_vocab=True, show_progress=False)
                _check_bm25(index, len(corpus))
                logger.debug("bm25 index cache hit: %s", path)
                return index
            except Exception as exc:  # any unreadable entry is rebuilt, whatever broke it
                logger.warning("rebuilding unreadable BM25 index cache %s: %s", path, exc)
        index = build()
        self._save(path, lambda tmp: index.save(str(tmp), show_progress=False), is_dir=True)
        return index

    # ---------------------------------------------------------------- helpers

    def _save(self, path: Path, write: Callable[[Path], object], *, is_dir: bool) -> None:
        try:
            replace_atomically(path, write, is_dir=is_dir)
        except Exception as exc:  # a cache that cannot be written must not break retrieval
            logger.warning("could not write index cache %s: %s", path, exc)


def _check_matrix(matrix: np.ndarray, n_passages: int) -> None:
    if matrix.ndim != 2 or matrix.shape[0] != n_passages:
        raise ValueError(f"shape {matrix.shape} does not fit {n_passages} passages")
    if matrix.dtype != np.float32:
        raise ValueError(f"dtype {matrix.dtype}, expected float32")
    if not np.isfinite(matrix).all():
        raise ValueError("non-finite values")


def _check_bm25(index: Any, n_passages: int) -> None:
    scores = index.scores
    if int(scores["num_docs"]) != n_passages:
        raise ValueError(f"index has {scores['num_docs']} documents, corpus has {n_passages}")
    n_terms = len(scores["indptr"]) - 1
    ids = [i for token, i in index.vocab_dict.items() if token != ""]
    if ids and max(ids) >= n_terms:
        raise ValueError("vocabulary does not match the score matrix")
