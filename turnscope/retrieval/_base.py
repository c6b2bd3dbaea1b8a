"""The retrieval stage's record and protocol."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from turnscope._exceptions import InputError

__all__ = ["DEFAULT_K", "Hit", "Retriever"]

#: Hits returned per query unless asked otherwise.
DEFAULT_K = 10


@dataclass(frozen=True)
class Hit:
    """One retrieved passage: its id, the retriever's score and its 1-based rank."""

    id: str
    score: float
    rank: int


class Retriever(Protocol):
    """Ranks a corpus's passages for a query.

    ``run`` returns at most ``k`` hits, best first, ranks 1..n. A blank query returns
    no hits. ``run_many`` is ``[run(q, k) for q in queries]``, batched where that is
    cheaper (dense retrieval embeds all queries in one call).
    """

    name: str

    def run(self, query: str, k: int = DEFAULT_K) -> list[Hit]: ...

    def run_many(self, queries: Sequence[str], k: int = DEFAULT_K) -> list[list[Hit]]: ...


def check_k(k: int) -> None:
    # bool is an int subclass; True as k is almost certainly a mistake
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise InputError(f"k must be a positive integer, got {k!r}")


def check_queries(queries: Sequence[str]) -> None:
    # a bare string is a Sequence[str] too; iterating it would search character by character
    if isinstance(queries, str):
        raise InputError("run_many expects a sequence of queries, not a single string")
    for i, q in enumerate(queries):
        if not isinstance(q, str):
            raise InputError(f"query {i} must be a string, got {type(q).__name__}")


def top_hits(scores: np.ndarray, ids: Sequence[str], k: int, *, positive: bool) -> list[Hit]:
    """The ``k`` best-scoring passages; ties keep corpus order so results are reproducible.

    With ``positive`` only scores above zero count (a BM25 score of 0 means no query
    term occurs in the passage, which is not a match).
    """
    order = np.argsort(-scores, kind="stable")[:k]
    hits: list[Hit] = []
    for i in order:
        score = float(scores[i])
        if positive and score <= 0.0:
            break
        hits.append(Hit(id=ids[int(i)], score=score, rank=len(hits) + 1))
    return hits
