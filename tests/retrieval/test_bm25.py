from __future__ import annotations

import itertools

import pytest

from turnscope._exceptions import InputError
from turnscope.retrieval import BM25Retriever, Corpus, Passage, bundled_corpus


def test_exact_match_passage_ranks_first(corpus: Corpus) -> None:
    hits = BM25Retriever(corpus).run("uptime SLA Dublin", k=3)
    assert hits[0].id == "docs/regions/dublin#sla"
    assert [h.rank for h in hits] == list(range(1, len(hits) + 1))
    assert all(a.score >= b.score for a, b in itertools.pairwise(hits))


def test_only_matching_passages_are_returned(corpus: Corpus) -> None:
    hits = BM25Retriever(corpus).run("encryption keys", k=10)
    assert [h.id for h in hits] == ["docs/regions/frankfurt#keys"]
    assert hits[0].score > 0


def test_japanese_query_finds_japanese_passage(corpus: Corpus) -> None:
    hits = BM25Retriever(corpus).run("アバターの料金はいくら？", k=3)
    assert hits[0].id == "site/avatar#price"


def test_mixed_script_query(corpus: Corpus) -> None:
    assert BM25Retriever(corpus).run("EC2の料金", k=1)[0].id == "docs/compute/ec2#pricing"


def test_no_known_terms_and_blank_query_give_no_hits(corpus: Corpus) -> None:
    r = BM25Retriever(corpus)
    assert r.run("zzzz qqqq") == []
    assert r.run("   ") == []
    assert r.run("the of and") == []  # stop words only


def test_k_larger_than_corpus_and_invalid_k(corpus: Corpus) -> None:
    r = BM25Retriever(corpus)
    assert len(r.run("the billing export pagination region", k=1000)) <= len(corpus)
    for bad in (0, -1, True):
        with pytest.raises(InputError, match="k must be"):
            r.run("x", k=bad)


def test_run_many_matches_run(corpus: Corpus) -> None:
    r = BM25Retriever(corpus)
    queries = ["Dublin SLA", "料金", ""]
    assert r.run_many(queries, k=2) == [r.run(q, k=2) for q in queries]
    with pytest.raises(InputError, match="not a single string"):
        r.run_many("Dublin SLA")


def test_corpus_without_any_token_still_works() -> None:
    r = BM25Retriever(Corpus([Passage("a", "!!!"), Passage("b", "...")]))
    assert r.run("anything") == []


def test_plain_passage_list_accepted() -> None:
    r = BM25Retriever([Passage("a", "alpha"), Passage("b", "beta")])
    assert r.run("beta")[0].id == "b"


def test_bundled_japanese_site() -> None:
    ja = bundled_corpus("ja_site")
    hits = BM25Retriever(ja).run("アバター案内の料金プラン", k=5)
    assert hits and hits[0].id.startswith("site/")
    assert all(ja.by_id[h.id].lang == "ja" for h in hits)
