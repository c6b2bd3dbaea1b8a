from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from turnscope._exceptions import InputError
from turnscope.retrieval import (
    DEFAULT_RRF_K,
    BM25Retriever,
    Corpus,
    DenseRetriever,
    Hit,
    HybridRetriever,
    reciprocal_rank_fusion,
)

from .conftest import HashEncoder


def _ranking(*ids: str) -> list[Hit]:
    return [Hit(pid, 100.0 - n, n) for n, pid in enumerate(ids, start=1)]


def test_rrf_math_on_hand_made_rankings() -> None:
    a = _ranking("x", "y", "z")
    b = _ranking("y", "w")
    fused = reciprocal_rank_fusion([a, b])
    assert DEFAULT_RRF_K == 60
    expected = {
        "y": 1 / 62 + 1 / 61,
        "x": 1 / 61,
        "w": 1 / 62,
        "z": 1 / 63,
    }
    assert [h.id for h in fused] == ["y", "x", "w", "z"]
    assert [h.rank for h in fused] == [1, 2, 3, 4]
    for h in fused:
        assert h.score == pytest.approx(expected[h.id])


def test_rrf_ignores_raw_scores_and_honours_k_weights_limit() -> None:
    a = [Hit("x", 1e9, 1), Hit("y", -5.0, 2)]
    b = [Hit("y", 0.001, 1), Hit("x", 0.0, 2)]
    # symmetric ranks: tie on score, broken by order of first appearance
    assert [h.id for h in reciprocal_rank_fusion([a, b])] == ["x", "y"]
    fused = reciprocal_rank_fusion([a, b], k=0, weights=[1.0, 3.0], limit=1)
    assert [h.id for h in fused] == ["y"]
    assert fused[0].score == pytest.approx(1 / 2 + 3 / 1)
    with pytest.raises(InputError):
        reciprocal_rank_fusion([a, b], weights=[1.0])


def test_rrf_tie_prefers_better_best_rank() -> None:
    # with k=0, p scores 1/1 and q scores 1/2 + 1/2: a tie, although q is seen first
    a = [Hit("q", 0.0, 2), Hit("p", 0.0, 1)]
    b = [Hit("q", 0.0, 2)]
    fused = reciprocal_rank_fusion([a, b], k=0)
    assert fused[0].score == fused[1].score == 1.0
    assert [h.id for h in fused] == ["p", "q"]


@given(st.lists(st.lists(st.sampled_from("abcdefgh"), unique=True), max_size=4))
def test_rrf_output_is_a_proper_ranking(lists: list[list[str]]) -> None:
    fused = reciprocal_rank_fusion([_ranking(*ids) for ids in lists])
    assert sorted(h.id for h in fused) == sorted({i for ids in lists for i in ids})
    assert [h.rank for h in fused] == list(range(1, len(fused) + 1))
    assert all(a.score >= b.score for a, b in itertools.pairwise(fused))


def test_hybrid_fuses_bm25_and_dense(corpus: Corpus, hash_encoder: HashEncoder) -> None:
    bm25 = BM25Retriever(corpus)
    dense = DenseRetriever(corpus, hash_encoder)
    hybrid = HybridRetriever([bm25, dense])
    assert hybrid.name == "hybrid(bm25+dense)"
    query = "Dublin uptime SLA"
    hits = hybrid.run(query, k=3)
    assert hits[0].id == "docs/regions/dublin#sla"
    expected = reciprocal_rank_fusion([bm25.run(query, 100), dense.run(query, 100)], limit=3)
    assert hits == expected
    assert hybrid.run_many([query, "料金"], k=3) == [hybrid.run(query, 3), hybrid.run("料金", 3)]


def test_hybrid_rejects_bad_configuration(corpus: Corpus) -> None:
    with pytest.raises(InputError):
        HybridRetriever([])
    with pytest.raises(InputError):
        HybridRetriever([BM25Retriever(corpus)], weights=[1.0, 2.0])
