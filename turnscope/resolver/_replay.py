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
from turnscope.resolver._neural import NeuralTagger
from turnscope.resolver._ranker import GATE_EXTRA, Shadow

__all__ = ["Latent", "conversation_of", "fold_of", "fold_resolver", "latent_of_result", "own_history_items",
           "replayed", "session_items", "with_rewrites"]


def fold_of(conversation: str, folds: int) -> int:
    """The fold of a conversation (by its id)."""
    # a hash, not Python's salted hash(): the same conversation lands in the same fold on every run
    return int(hashlib.md5(conversation.encode()).hexdigest(), 16) % folds


def conversation_of(item: Mapping[str, Any]) -> str:
    return str(item.get("conversation", item["id"]))


def fold_resolver(ranker: Any, gate: Any, pair: tuple[float, float], max_carried: int,
                  embedder: CachedEmbedder, nn_rewrites: bool, tagger: NeuralTagger | None,
                  shadow: Shadow | None = None) -> Any:
    """A resolver of one fold's ranker and gate at the thresholds ``pair`` (slot, other)."""
    from turnscope.resolver._ranker import Resolver

    slot, other = pair
    # the columns the ranker was fitted on (with or without the latent subject's)
    meta = {"features": list(ranker.feature_name()), "gate_extra": list(GATE_EXTRA), "nn_reads_rewrites": nn_rewrites,
            "threshold": other, "slot_threshold": slot, "max_carried": max_carried,
            **({"shadow": shadow.to_meta()} if shadow is not None else {})}
    return Resolver(ranker, gate, meta, embedder, tagger)


def with_rewrites(items: Sequence[dict[str, Any]], queries: Sequence[str] | None,
                  latents: Sequence[Latent | None] | None = None) -> list[dict[str, Any]]:
    """``items`` (whole conversations, in turn order) again, each item's earlier user turns
    read as ``queries`` (one per item, the rewrite a session gave its follow-up) instead of
    the human rewrites. Everything else, the labels' human rewrite included, is kept.
    ``queries`` None keeps the human rewrites; ``latents`` (one per item: the latent subject
    the session left for it, :attr:`HistoryTurn.latent`) become each item's
    ``prefix_latent``, aligned as the rewrites are.

    >>> a = {"id": "c_1", "conversation": "c", "prefix_rewrites": []}
    >>> b = {"id": "c_2", "conversation": "c", "prefix_rewrites": ["What is lobular carcinoma?"]}
    >>> [x["prefix_rewrites"] for x in with_rewrites([a, b], ["What is it?", "How is it treated?"])]
    [[], ['What is it?']]
    """
    n = len(queries) if queries is not None else len(latents) if latents is not None else len(items)
    if len(items) != n or (queries is not None and latents is not None and len(latents) != n):
        raise ValueError(f"{len(items)} items but {n} rewrites")
    by_conv: dict[str, list[int]] = {}
    for j, item in enumerate(items):
        by_conv.setdefault(conversation_of(item), []).append(j)
    out = []
    for item in items:
        earlier = len(item.get("prefix_rewrites") or [])
        own = by_conv[conversation_of(item)]
        if earlier > len(own):
            raise ValueError(f"item {item['id']}: {earlier} earlier rewrites but its conversation "
                             f"has {len(own)} items")
        new = dict(item)
        if queries is not None:
            new["prefix_rewrites"] = [queries[j] for j in own[:earlier]]
        if latents is not None:
            new["prefix_latent"] = [latents[j] for j in own[:earlier]]
        out.append(new)
    return out


#: a turn's latent subject (see :attr:`HistoryTurn.latent`)
Latent = tuple[tuple[str, float], ...]


def latent_of_result(result: Any) -> Latent | None:
    """The latent subject a session turn left (read from its trace, as the session keeps it),
    or None when the learned resolver did not decide the turn."""
    resolver = result.trace.get("resolver") if isinstance(result.trace, Mapping) else None
    if not isinstance(resolver, Mapping) or "candidates" not in resolver:
        return None
    return tuple((str(c["text"]), float(c["score"])) for c in resolver["candidates"])


def replayed(loaded: Mapping[str, Sequence[dict[str, Any]]], rankers: Mapping[int, Any],
             gates: Mapping[int, Any], folds: int, max_carried: int, embedder: CachedEmbedder,
             nn_rewrites: bool, pair: tuple[float, float],
             fold_taggers: Mapping[int, NeuralTagger] | None = None,
             advance: Callable[[int], None] | None = None,
             ) -> dict[str, tuple[list[dict[str, Any]], list[Any]]]:
    """Every set of ``loaded`` replayed in sessions by the fold models that never saw each
    conversation (thresholds ``pair``): per set, its items in fold order and, for each fold
    with models, the session's result of each item (None for the items of a fold without
    models, which keep their human rewrites)."""
    from turnscope._items import replay_conversations
    from turnscope._session import Session

    out: dict[str, tuple[list[dict[str, Any]], list[Any]]] = {}
    for name, its in loaded.items():
        items: list[dict[str, Any]] = []
        results: list[Any] = []
        for k in range(folds):
            part = [it for it in its if fold_of(conversation_of(it), folds) == k]
            if not part:
                continue
            items.extend(part)
            if k not in rankers or k not in gates:
                results.extend([None] * len(part))
                continue
            resolver = fold_resolver(rankers[k], gates[k], pair, max_carried, embedder, nn_rewrites,
                                      fold_taggers[k] if fold_taggers is not None else None)
            def session(r: Any = resolver) -> Any:
                return Session(resolver=r)

            results.extend(replay_conversations(part, session, advance))
        out[name] = (items, results)
    return out


def session_items(replay: tuple[list[dict[str, Any]], list[Any]], *, own: bool,
                  latent: bool, shadow: Shadow | None = None) -> list[dict[str, Any]]:
    """A set's items (:func:`replayed`) with their earlier user turns read as the session
    rewrote them (``own``; else the human rewrites; with ``shadow`` as later turns read
    them, :func:`~turnscope.resolver._ranker.shadow_rewrite`) and, with ``latent``, each
    carrying the latent subjects the session left (``prefix_latent``). Items of a fold without
    models are kept as they were."""
    from turnscope.resolver._ranker import shadow_rewrite

    items, results = replay
    done = [j for j, r in enumerate(results) if r is not None]
    # the queries later turns read (a shadow rewrite where ``shadow`` makes one)
    queries = [shadow_rewrite(items[j]["follow_up"], results[j].query, latent_of_result(results[j]),
                              shadow) for j in done]
    new = with_rewrites([items[j] for j in done], queries if own else None,
                        [latent_of_result(results[j]) for j in done] if latent else None)
    out = list(items)
    for j, item in zip(done, new, strict=True):
        out[j] = item
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
    runs = replayed(loaded, rankers, gates, folds, max_carried, embedder, nn_rewrites, pair, fold_taggers,
                    advance)
    return {name: session_items(run, own=True, latent=False) for name, run in runs.items()}
