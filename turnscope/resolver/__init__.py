"""The learned resolver: which earlier phrases does the latest message need?

Layout: ``_candidates`` (phrases of earlier turns, and the evidence read about them: the
neural tagger and the cached e5 embedder, each text embedded once), ``_ranker`` (the
features the ranker reads, inference with the shipped model, and the query realised from
what it carries), ``_shift`` (the topic-shift detector and its features). Training lives in
:mod:`turnscope.training` (``turnscope train``), which nothing here imports.

>>> from turnscope.resolver import HistoryTurn, default_resolver
>>> h = [HistoryTurn(1, "user", "What is lobular carcinoma?"),
...      HistoryTurn(2, "assistant", "Lobular carcinoma starts in the lobules.")]
>>> default_resolver().resolve("Is it dangerous?", h).query  # doctest: +SKIP
'Is lobular carcinoma dangerous?'
"""

from turnscope.resolver._candidates import CachedEmbedder, Candidate, HistoryTurn, candidates
from turnscope.resolver._ranker import (
    Resolution,
    Resolver,
    ScoredCandidate,
    default_resolver,
    history_of,
    ranked_for,
    realize,
    session_shift,
    shift_threshold,
)
from turnscope.resolver._shift import ShiftDetector, ShiftMemo, shift_probability, shipped_model

__all__ = [
    "CachedEmbedder",
    "Candidate",
    "HistoryTurn",
    "Resolution",
    "Resolver",
    "ScoredCandidate",
    "candidates",
    "default_resolver",
    "realize",
    "history_of",
    "ranked_for",
    "session_shift",
    "shift_threshold",
    "ShiftDetector",
    "ShiftMemo",
    "shift_probability",
    "shipped_model",
]
