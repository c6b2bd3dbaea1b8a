"""Hybrid retrieval: reciprocal rank fusion of any number of retrievers."""

from __future__ import annotations

from collections.abc import Sequence

from turnscope._exceptions import InputError
from turnscope.retrieval._base import DEFAULT_K, Hit, Retriever, check_k, check_queries

__all__ = ["DEFAULT_RRF_DEPTH", "DEFAULT_RRF_K", "HybridRetriever", "reciprocal_rank_fusion"]

#: RRF smoothing constant: score = sum of 1 / (k + rank). 60 is the value of
#: Cormack, Clarke & Büttcher (SIGIR 2009), "Reciprocal Rank Fusion outperforms
#: Condorcet and individual Rank Learning Methods"; it damps the weight of the
#: very top ranks so that one retriever's first place cannot decide alone.
DEFAULT_RRF_K = 60
#: How many hits are taken from each retriever before fusing (at least ``k``).
DEFAULT_RRF_DEPTH = 100


def reciprocal_rank_fusion(
    rankings: Sequence[Sequence[Hit]],
    *,
    k: int = DEFAULT_RRF_K,
    weights: Sequence[float] | None = None,
    limit: int | None = None,
) -> list[Hit]:
    """Fuse rankings: each passage scores ``sum(w_i / (k + rank_i))`` over the lists it is in.

    Ranks are the hits' own 1-based ``rank``. Ties go to the passage with the better
    best rank, then to the one seen first (rankings in order). Returns at most
    ``limit`` hits, re-ranked from 1.

    >>> a = [Hit("x", 9.0, 1), Hit("y", 5.0, 2)]
    >>> b = [Hit("y", 0.8, 1)]
    >>> [(h.id, round(h.score, 5)) for h in reciprocal_rank_fusion([a, b])]
    [('y', 0.03252), ('x', 0.01639)]
    """
    if k < 0:
        raise InputError(f"RRF k must be >= 0, got {k}")
    if weights is None:
        weights = [1.0] * len(rankings)
    elif len(weights) != len(rankings):
        raise InputError(f"{len(weights)} weights for {len(rankings)} rankings")
    score: dict[str, float] = {}
    best: dict[str, int] = {}
    for ranking, weight in zip(rankings, weights, strict=True):
        for hit in ranking:
            score[hit.id] = score.get(hit.id, 0.0) + weight / (k + hit.rank)
            best[hit.id] = min(best.get(hit.id, hit.rank), hit.rank)
    seen = {pid: n for n, pid in enumerate(score)}
    order = sorted(score, key=lambda pid: (-score[pid], best[pid], seen[pid]))
    if limit is not None:
        order = order[:limit]
    return [Hit(id=pid, score=score[pid], rank=n) for n, pid in enumerate(order, start=1)]


class HybridRetriever:
    """Fuses several retrievers' rankings by reciprocal rank fusion.

    >>> hybrid = HybridRetriever([BM25Retriever(corpus), DenseRetriever(corpus)])  # doctest: +SKIP
    >>> hybrid.run("uptime SLA Dublin", k=5)                                       # doctest: +SKIP
    """

    def __init__(
        self,
        retrievers: Sequence[Retriever],
        *,
        rrf_k: int = DEFAULT_RRF_K,
        depth: int = DEFAULT_RRF_DEPTH,
        weights: Sequence[float] | None = None,
    ) -> None:
        if not retrievers:
            raise InputError("HybridRetriever needs at least one retriever")
        if weights is not None and len(weights) != len(retrievers):
            raise InputError(f"{len(weights)} weights for {len(retrievers)} retrievers")
        check_k(depth)
        self.retrievers = tuple(retrievers)
        self.rrf_k = rrf_k
        self.depth = depth
        self.weights = tuple(weights) if weights is not None else None
        self.name = "hybrid(" + "+".join(r.name for r in self.retrievers) + ")"

    def run(self, query: str, k: int = DEFAULT_K) -> list[Hit]:
        """The ``k`` best passages by fused rank."""
        return self.run_many([query], k)[0]

    def run_many(self, queries: Sequence[str], k: int = DEFAULT_K) -> list[list[Hit]]:
        check_k(k)
        check_queries(queries)
        depth = max(self.depth, k)
        # one batched call per retriever (dense embeds all queries at once)
        per_retriever = [r.run_many(queries, depth) for r in self.retrievers]
        return [
            reciprocal_rank_fusion(
                [ranked[i] for ranked in per_retriever],
                k=self.rrf_k,
                weights=self.weights,
                limit=k,
            )
            for i in range(len(queries))
        ]

    def __repr__(self) -> str:
        return f"HybridRetriever({list(self.retrievers)!r}, rrf_k={self.rrf_k})"
