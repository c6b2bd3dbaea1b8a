"""A test encoder: the real bundled e5, recording every text it is asked to embed."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from turnscope._encoder import default_encoder


class CountingEncoder:
    """The real encoder, counting what it is asked to embed."""

    def __init__(self) -> None:
        self.inner = default_encoder()
        self.name = self.inner.name
        self.calls: list[str] = []

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        self.calls.extend(texts)
        return self.inner.embed_queries(texts)

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        self.calls.extend(texts)
        return self.inner.embed_passages(texts)
