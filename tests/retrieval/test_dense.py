from __future__ import annotations

import numpy as np
import pytest

from turnscope._exceptions import TurnscopeError
from turnscope.retrieval import Corpus, DenseRetriever, Passage

from .conftest import CountingEncoder, HashEncoder


def test_fake_encoder_ranking_and_matrix(corpus: Corpus, hash_encoder: HashEncoder) -> None:
    r = DenseRetriever(corpus, hash_encoder)
    assert r.matrix.shape == (len(corpus), hash_encoder.dim)
    assert np.allclose(np.linalg.norm(r.matrix, axis=1), 1.0, atol=1e-5)
    hits = r.run("Dublin uptime SLA", k=3)
    assert hits[0].id == "docs/regions/dublin#sla"
    assert len(hits) == 3 and [h.rank for h in hits] == [1, 2, 3]


def test_run_many_embeds_queries_in_one_call(
    corpus: Corpus, counting_encoder: CountingEncoder
) -> None:
    r = DenseRetriever(corpus, counting_encoder)
    assert counting_encoder.passage_calls == 1
    results = r.run_many(["Dublin SLA", "", "encryption keys Frankfurt"], k=2)
    assert counting_encoder.query_calls == 1
    assert results[1] == []
    assert results[0][0].id == "docs/regions/dublin#sla"
    assert results[2][0].id == "docs/regions/frankfurt#keys"
    assert results == [r.run(q, k=2) for q in ["Dublin SLA", "", "encryption keys Frankfurt"]]


def test_unnormalised_encoder_output_is_normalised(corpus: Corpus) -> None:
    class Loud(HashEncoder):
        def embed_passages(self, texts):  # type: ignore[no-untyped-def]
            return super().embed_passages(texts) * 7.0

    r = DenseRetriever(corpus, Loud())
    assert np.allclose(np.linalg.norm(r.matrix, axis=1), 1.0, atol=1e-5)
    assert r.run("Dublin SLA", k=1)[0].score <= 1.0 + 1e-6


def test_encoder_returning_wrong_shape_is_reported(corpus: Corpus) -> None:
    class Broken(HashEncoder):
        def embed_passages(self, texts):  # type: ignore[no-untyped-def]
            return np.zeros((1, 4), dtype=np.float32)

    with pytest.raises(TurnscopeError, match="returned shape"):
        DenseRetriever(corpus, Broken())


def test_real_e5_ranks_a_paraphrase_first() -> None:
    corpus = Corpus([
        Passage("billing", "Invoices can be downloaded as CSV files from the billing console."),
        Passage("sla", "Dublin is covered by the 99.95% monthly uptime service level agreement."),
        Passage("keys", "Frankfurt supports customer-managed encryption keys for data at rest."),
        Passage("ja", "受付端末の設置には専門スタッフが伺います。"),
    ])
    r = DenseRetriever(corpus)  # the bundled multilingual E5
    assert r.run("how do I get my bills as a spreadsheet?", k=1)[0].id == "billing"
    assert r.run("what availability guarantee does the Irish region have?", k=1)[0].id == "sla"
    assert r.run("受付の機械を取り付けてくれる人は来ますか", k=1)[0].id == "ja"
