"""Replaying development conversations in sessions, with the fold models that never saw them.

Training replays whole conversations twice over: to choose the gate's thresholds (each pair
judged where it acts, earlier rewrites feeding later ones: ``_train._calibrate``) and, with
``own_histories``, to read every conversation as the resolver itself rewrote it
(:func:`own_history_items`). Both need the same fold of a conversation (:func:`fold_of`) and
the same fold resolver (:func:`fold_resolver`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from turnscope.resolver._embedcache import CachedEmbedder
from turnscope.resolver._features import FEATURES
from turnscope.resolver._neural import NeuralTagger
from turnscope.resolver._ranker import GATE_EXTRA

__all__ = ["conversation_of", "fold_of", "fold_resolver", "own_history_items", "with_rewrites"]


def fold_of(conversation: str, folds: int) -> int:
    """The fold of a conversation (by its id)."""
    # a hash, not Python's salted hash(): the same conversation lands in the same fold on every run
    return int(hashlib.md5(conversation.encode()).hexdigest(), 16) % folds


def conversation_of(item: Mapping[str, Any]) -> str:
    return str(item.get("conversation", item["id"]))


def fold_resolver(ranker: Any, gate: Any, pair: tuple[float, float], max_carried: int,
                  embedder: CachedEmbedder, nn_rewrites: bool, tagger: NeuralTagger | None) -> Any:
    """A resolver of one fold's ranker and gate at the thresholds ``pair`` (slot, other)."""
    from turnscope.resolver._ranker import Resolver

    slot, other = pair
    meta = {"features": list(FEATURES), "gate_extra": list(GATE_EXTRA), "nn_reads_rewrites": nn_rewrites,
            "threshold": other, "slot_threshold": slot, "max_carried": max_carried}
    return Resolver(ranker, gate, meta, embedder, tagger)


def with_rewrites(items: Sequence[dict[str, Any]], queries: Sequence[str]) -> list[dict[str, Any]]:
    """``items`` (whole conversations, in turn order) again, each item's earlier user turns
    read as ``queries`` (one per item, the rewrite a session gave its follow-up) instead of
    the human rewrites. Everything else, the labels' human rewrite included, is kept.

    >>> a = {"id": "c_1", "conversation": "c", "prefix_rewrites": []}
    >>> b = {"id": "c_2", "conversation": "c", "prefix_rewrites": ["What is lobular carcinoma?"]}
    >>> [x["prefix_rewrites"] for x in with_rewrites([a, b], ["What is it?", "How is it treated?"])]
    [[], ['What is it?']]
    """
    if len(items) != len(queries):
        raise ValueError(f"{len(items)} items but {len(queries)} rewrites")
    by_conv: dict[str, list[str]] = {}
    for item, query in zip(items, queries, strict=True):
        by_conv.setdefault(conversation_of(item), []).append(query)
    out = []
    for item in items:
        earlier = len(item.get("prefix_rewrites") or [])
        own = by_conv[conversation_of(item)]
        if earlier > len(own):
            raise ValueError(f"item {item['id']}: {earlier} earlier rewrites but its conversation "
                             f"has {len(own)} items")
        out.append({**item, "prefix_rewrites": own[:earlier]})
    return out


def own_history_items(loaded: Mapping[str, Sequence[dict[str, Any]]], rankers: Mapping[int, Any],
                      gates: Mapping[int, Any], folds: int, max_carried: int, embedder: CachedEmbedder,
                      nn_rewrites: bool, pair: tuple[float, float],
                      fold_taggers: Mapping[int, NeuralTagger] | None = None,
                      advance: Callable[[int], None] | None = None) -> dict[str, list[dict[str, Any]]]:
    """Every item of ``loaded`` with its earlier user turns read as a session rewrote them:
    each conversation replayed in a session by the fold models that never saw it (thresholds
    ``pair``), as :func:`_calibrate` replays them. A fold without models keeps its items'
    human rewrites."""
    from turnscope._items import replay_conversations
    from turnscope._session import Session

    out: dict[str, list[dict[str, Any]]] = {}
    for name, its in loaded.items():
        new: list[dict[str, Any]] = []
        for k in range(folds):
            part = [it for it in its if fold_of(conversation_of(it), folds) == k]
            if not part:
                continue
            if k not in rankers or k not in gates:
                new.extend(part)
                continue
            resolver = fold_resolver(rankers[k], gates[k], pair, max_carried, embedder, nn_rewrites,
                                      fold_taggers[k] if fold_taggers is not None else None)
            def session(r: Any = resolver) -> Any:
                return Session(resolver=r)

            results = replay_conversations(part, session, advance)
            new.extend(with_rewrites(part, [res.query for res in results]))
        out[name] = new
    return out
