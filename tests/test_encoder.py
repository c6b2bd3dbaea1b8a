"""The bundled e5 encoder: normalised vectors, and a bounded cache that answers repeats exactly."""

from __future__ import annotations

import numpy as np

from turnscope._encoder import DEFAULT_MAX_QUERY_CHARS, E5Encoder


def test_query_vectors_are_normalised_and_repeats_are_exact() -> None:
    enc = E5Encoder(query_cache=2)
    a = enc.embed_queries(["uptime SLA Dublin", "refund policy"])
    assert a.shape == (2, 384)
    assert np.allclose(np.linalg.norm(a, axis=1), 1.0, atol=1e-5)
    again = enc.embed_queries(["refund policy", "uptime SLA Dublin"])
    assert np.array_equal(again[::-1], a)


def test_the_query_cache_is_bounded_and_keeps_the_recent() -> None:
    enc = E5Encoder(query_cache=2)
    enc.embed_queries(["one"])
    enc.embed_queries(["two"])
    enc.embed_queries(["one"])  # "one" is now the most recent
    enc.embed_queries(["three"])
    assert list(enc._queries) == ["one", "three"]


def test_a_long_query_is_embedded_from_its_first_characters() -> None:
    enc = E5Encoder(query_cache=4)
    head = "Does the Dublin region support customer-managed keys? " * 40
    assert len(head) >= DEFAULT_MAX_QUERY_CHARS
    long, short = enc.embed_queries([head + "tail " * 5000, head[:DEFAULT_MAX_QUERY_CHARS]])
    assert np.array_equal(long, short)
    # below the limit every character counts
    a, b = enc.embed_queries(["refund policy for shoes", "refund policy for hats"])
    assert not np.array_equal(a, b)
