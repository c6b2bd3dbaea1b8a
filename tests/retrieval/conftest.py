"""Shared fixtures: a small bilingual corpus and encoders that need no model."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np
import pytest

from turnscope.retrieval import Corpus, Passage, tokenize

PASSAGES = [
    Passage("docs/api/billing-export#pagination", "The billing export API uses cursor-based "
            "pagination: pass next_page_token to fetch the next page.", "Billing export API"),
    Passage("docs/regions/dublin#sla", "Dublin (eu-west-1) is covered by the 99.95% monthly "
            "uptime SLA.", "Dublin region"),
    Passage("docs/regions/frankfurt#keys", "Frankfurt supports customer-managed encryption keys "
            "for data at rest.", "Frankfurt region"),
    Passage("docs/compute/ec2#pricing", "EC2 instances are billed per second of running time.",
            "EC2 pricing"),
    Passage("site/avatar#price", "アバター案内の料金は月額制です。初期費用は不要です。",
            "アバター案内", lang="ja"),
    Passage("site/kiosk#install", "受付端末の設置には専門スタッフが伺います。", "受付端末", lang="ja"),
]


@pytest.fixture
def corpus() -> Corpus:
    return Corpus(PASSAGES, name="test")


class HashEncoder:
    """Bag-of-tokens hashed into 64 dimensions: cosine behaves like term overlap."""

    name = "test-hash-encoder"
    dim = 64

    def _embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for tok in tokenize(text):
                h = int.from_bytes(hashlib.md5(tok.encode()).digest()[:4], "big")
                out[row, h % self.dim] += 1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        unit: np.ndarray = out / norms
        return unit

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._embed(texts)

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        return self._embed(texts)


class CountingEncoder:
    """Wraps an encoder and counts calls, to tell a cache hit from a rebuild."""

    def __init__(self, inner: HashEncoder) -> None:
        self.inner = inner
        self.name = inner.name
        self.passage_calls = 0
        self.query_calls = 0

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        self.query_calls += 1
        return self.inner.embed_queries(texts)

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        self.passage_calls += 1
        return self.inner.embed_passages(texts)


@pytest.fixture
def hash_encoder() -> HashEncoder:
    return HashEncoder()


@pytest.fixture
def counting_encoder() -> CountingEncoder:
    return CountingEncoder(HashEncoder())


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    # never touch the developer's real ~/.cache/turnscope from these tests
    monkeypatch.setenv("TURNSCOPE_CACHE", str(tmp_path_factory.mktemp("ts-cache")))
