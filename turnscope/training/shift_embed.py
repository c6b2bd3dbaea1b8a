"""The topic-shift detector's training inputs: conversations with their user turns embedded
(e5, once per text, cached on disk by content), for :mod:`turnscope.training.shift`.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from turnscope._encoder import Encoder
from turnscope._paths import replace_atomically
from turnscope.datasets import TopicTurn

__all__ = ["EmbeddedConversation", "embed_conversations"]

logger = logging.getLogger("turnscope.training.shift")

_CACHE_FORMAT = "shift-embeddings/2"


@dataclass(frozen=True)
class EmbeddedConversation:
    """A conversation with its user turns embedded (the tracker's input; answers are
    read for their words only).

    A turn whose question is blank is left out, as the evaluation harness never feeds
    it to a session.
    """

    source: str
    turns: tuple[TopicTurn, ...]
    questions: np.ndarray  # (n, dim)
    has_answer: np.ndarray  # (n,) bool

    @property
    def labels(self) -> np.ndarray:
        return np.asarray([t.is_switch for t in self.turns], dtype=bool)


# ------------------------------------------------------------------ embedding


def _progress(console: Console | None, enabled: bool) -> Progress:
    return Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                    TimeRemainingColumn(), console=console, disable=not enabled)


def _texts(conv: Sequence[TopicTurn]) -> list[str]:
    """The texts of one conversation that are embedded, in order: its questions."""
    return [t.question for t in conv if t.question.strip()]


class _EmbeddingCache:
    """Content-addressed ``.npy`` matrices of embedded texts, one per text list."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def path(self, encoder_name: str, texts: Sequence[str]) -> Path:
        digest = hashlib.sha256()
        for part in (_CACHE_FORMAT, encoder_name, *texts):
            digest.update(part.encode("utf-8"))
            digest.update(b"\0")
        return self.root / "shift" / f"{digest.hexdigest()[:32]}.npy"

    def load(self, encoder_name: str, texts: Sequence[str]) -> np.ndarray | None:
        path = self.path(encoder_name, texts)
        if not path.exists():
            return None
        try:
            matrix: np.ndarray = np.load(path, allow_pickle=False)
        except Exception as exc:  # an unreadable entry is rebuilt, whatever broke it
            logger.warning("re-embedding: unreadable shift embedding cache %s: %s", path, exc)
            return None
        if matrix.ndim != 2 or matrix.shape[0] != len(texts) or not np.isfinite(matrix).all():
            logger.warning("re-embedding: shift embedding cache %s has shape %s for %d texts",
                           path, matrix.shape, len(texts))
            return None
        return matrix

    def save(self, encoder_name: str, texts: Sequence[str], matrix: np.ndarray) -> None:
        path = self.path(encoder_name, texts)
        try:
            replace_atomically(path, lambda tmp: np.save(tmp, matrix.astype(np.float32), allow_pickle=False))
        except OSError as exc:  # a cache that cannot be written only costs the saving
            logger.warning("could not write shift embedding cache %s: %s", path, exc)


def embed_conversations(
    conversations: Sequence[Sequence[TopicTurn]],
    source: str,
    encoder: Encoder,
    *,
    cache_dir: Path | None = None,
    progress: bool = True,
    console: Console | None = None,
) -> tuple[list[EmbeddedConversation], int, int]:
    """Embed every question once; (conversations, texts embedded, cache hits).

    With ``cache_dir`` the whole batch is looked up (and stored) as one entry keyed
    by the encoder and the exact texts.
    """
    per_conv = [_texts(c) for c in conversations]
    flat = [t for texts in per_conv for t in texts]
    cache = _EmbeddingCache(cache_dir) if cache_dir is not None else None
    matrix = cache.load(encoder.name, flat) if cache is not None else None
    hits = len(flat) if matrix is not None else 0
    if matrix is None:
        rows: list[np.ndarray] = []
        with _progress(console, progress) as bar:
            task = bar.add_task(f"embedding {source}", total=len(flat))
            # batches of one conversation: the bar moves, and the encoder's per-call
            # cost is paid per conversation, not per text
            for texts in per_conv:
                if texts:
                    rows.append(encoder.embed_queries(texts))
                bar.advance(task, len(texts))
        dim = rows[0].shape[1] if rows else 0
        matrix = np.concatenate(rows).astype(np.float32) if rows else np.zeros((0, dim), np.float32)
        if cache is not None:
            cache.save(encoder.name, flat, matrix)
    out: list[EmbeddedConversation] = []
    pos = 0
    for conv in conversations:
        turns = [t for t in conv if t.question.strip()]
        dim = matrix.shape[1]
        q = matrix[pos: pos + len(turns)].astype(np.float32).reshape(len(turns), dim)
        pos += len(turns)
        has = np.asarray([bool(t.answer.strip()) for t in turns], dtype=bool)
        out.append(EmbeddedConversation(source, tuple(turns), q, has))
    return out, len(flat) - hits, hits


# --------------------------------------------------------------------- replay

#: scores a batch of feature rows (n, len(FEATURE_NAMES)) -> probabilities (n,)
Scorer = Callable[[np.ndarray], np.ndarray]
