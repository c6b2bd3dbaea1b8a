"""The tagger overlapping e5 (``Resolver.prefetch`` in the learned-resolver bridge) changes when
the work is done, never what a session answers."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from turnscope import Session
from turnscope.datasets import load_cast, resolve_data_root
from turnscope.resolver import CachedEmbedder, Resolver
from turnscope.resolver._candidates import NeuralTagger

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def conversations() -> list[list[str]]:
    env = os.environ.get("TURNSCOPE_DATA")
    items = load_cast(2019, resolve_data_root(Path(env) if env else REPO / "../shared/data"))
    by_topic: dict[str, list[str]] = {}
    for it in items:
        turns = by_topic.setdefault(it["conversation"], [t["content"] for t in it["prefix"] if t["role"] == "user"])
        turns.append(it["follow_up"])
    return list(by_topic.values())[:4]


def test_overlapping_the_tagger_with_e5_gives_the_same_rewrites(conversations: list[list[str]]) -> None:
    overlapped = NeuralTagger()
    counted: list[str] = []
    real = overlapped.prefetch

    def spy(message, history):  # type: ignore[no-untyped-def]
        counted.append(message)
        real(message, history)

    overlapped.prefetch = spy  # type: ignore[method-assign]
    sequential = NeuralTagger(overlap=False)
    seen = 0
    for turns in conversations:
        a = Session(resolver=Resolver.load(embedder=CachedEmbedder(), tagger=overlapped))
        b = Session(resolver=Resolver.load(embedder=CachedEmbedder(), tagger=sequential))
        for text in turns:
            ra, rb = a.user(text), b.user(text)
            assert (ra.query, ra.carried, ra.decided_by) == (rb.query, rb.carried, rb.decided_by), text
            seen += int(bool(ra.carried))
    assert counted, "the bridge never prefetched"
    assert seen, "no turn carried anything: the comparison would be empty"
