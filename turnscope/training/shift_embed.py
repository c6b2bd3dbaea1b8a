"""The topic-shift detector's training inputs: conversations with their user turns embedded
(e5, once per text) and read by the neural tagger (once per turn), both cached on disk by
content, for :mod:`turnscope.training.shift`.
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
from turnscope.resolver._candidates import HistoryTurn, NeuralTagger, default_tagger
from turnscope.resolver._shift import NO_TAGGER, tagger_columns

__all__ = ["EmbeddedConversation", "embed_conversations"]

logger = logging.getLogger("turnscope.training.shift")

_CACHE_FORMAT = "shift-embeddings/2"
_TAGGER_FORMAT = "shift-tagger/1"


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
    #: (n, 5) the tagger's columns of each question read after the turns before it (the
    #: first row, with nothing before it, is nan)
    tagged: np.ndarray

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

    def __init__(self, root: Path, form: str = _CACHE_FORMAT) -> None:
        self.root = root
        self.form = form

    def path(self, encoder_name: str, texts: Sequence[str]) -> Path:
        digest = hashlib.sha256()
        for part in (self.form, encoder_name, *texts):
            digest.update(part.encode("utf-8"))
            digest.update(b"\0")
        prefix = "" if self.form == _CACHE_FORMAT else "tagger-"
        return self.root / "shift" / f"{prefix}{digest.hexdigest()[:32]}.npy"

    def load(self, encoder_name: str, texts: Sequence[str], *, finite: bool = True) -> np.ndarray | None:
        path = self.path(encoder_name, texts)
        if not path.exists():
            return None
        try:
            matrix: np.ndarray = np.load(path, allow_pickle=False)
        except Exception as exc:  # an unreadable entry is rebuilt, whatever broke it
            logger.warning("re-embedding: unreadable shift embedding cache %s: %s", path, exc)
            return None
        rows = len(texts) if finite else matrix.shape[0]  # a tagger batch: checked by its caller
        if matrix.ndim != 2 or matrix.shape[0] != rows or (finite and not np.isfinite(matrix).all()):
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


def _history(turns: Sequence[TopicTurn]) -> list[HistoryTurn]:
    """Turns as a session holds them: each question, then its answer if it has one."""
    out: list[HistoryTurn] = []
    for t in turns:
        out.append(HistoryTurn(len(out) + 1, "user", t.question))
        if t.answer.strip():
            out.append(HistoryTurn(len(out) + 1, "assistant", t.answer))
    return out


def tag_turns(turns: Sequence[TopicTurn], tagger: NeuralTagger) -> np.ndarray:
    """(n, 5): the tagger's columns of each question after the turns before it, as the
    detector reads them at run time (row 0 is nan: nothing before it)."""
    rows = [np.asarray(NO_TAGGER)]
    for k in range(1, len(turns)):
        history = _history(turns[:k])
        ev = tagger.evidence(turns[k].question, history)
        rows.append(np.asarray(tagger_columns(ev, history[-1].role == "assistant")))
    return np.stack(rows).astype(np.float64) if turns else np.zeros((0, len(NO_TAGGER)))


def _tag_all(conversations: Sequence[Sequence[TopicTurn]], source: str, tagger: NeuralTagger,
             cache: _EmbeddingCache | None, console: Console | None, progress: bool) -> np.ndarray:
    """The tagger's rows of every (non-blank) turn, one batch, cached like the embeddings
    (keyed by the tagger's graph and every question and answer)."""
    kept = [[t for t in conv if t.question.strip()] for conv in conversations]
    # each conversation's length, then its questions and answers: the key of the batch
    texts = [x for turns in kept for x in (str(len(turns)), *(y for t in turns for y in (t.question, t.answer)))]
    total = sum(len(turns) for turns in kept)
    matrix = cache.load(tagger.name, texts, finite=False) if cache else None
    if matrix is not None and matrix.shape[0] == total:
        return matrix
    rows: list[np.ndarray] = []
    with _progress(console, progress) as bar:
        task = bar.add_task(f"tagging {source}", total=total)
        for turns in kept:
            rows.append(tag_turns(turns, tagger))
            bar.advance(task, len(turns))
    matrix = np.concatenate(rows) if rows else np.zeros((0, len(NO_TAGGER)))
    if cache is not None:
        cache.save(tagger.name, texts, matrix)
    return matrix


def embed_conversations(
    conversations: Sequence[Sequence[TopicTurn]],
    source: str,
    encoder: Encoder,
    *,
    cache_dir: Path | None = None,
    progress: bool = True,
    console: Console | None = None,
    tagger: NeuralTagger | None = None,
) -> tuple[list[EmbeddedConversation], int, int]:
    """Embed every question once and read every turn with the tagger (``tagger``, else the
    shipped one); (conversations, texts embedded, cache hits).

    With ``cache_dir`` the whole batch is looked up (and stored) as one entry keyed
    by the encoder and the exact texts, and its tagger rows as another.
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
    tag_cache = _EmbeddingCache(cache_dir, _TAGGER_FORMAT) if cache_dir is not None else None
    tagged = _tag_all(conversations, source, tagger or default_tagger(), tag_cache, console, progress)
    out: list[EmbeddedConversation] = []
    pos = 0
    for conv in conversations:
        turns = [t for t in conv if t.question.strip()]
        dim = matrix.shape[1]
        q = matrix[pos: pos + len(turns)].astype(np.float32).reshape(len(turns), dim)
        has = np.asarray([bool(t.answer.strip()) for t in turns], dtype=bool)
        out.append(EmbeddedConversation(source, tuple(turns), q, has, tagged[pos: pos + len(turns)]))
        pos += len(turns)
    return out, len(flat) - hits, hits


# --------------------------------------------------------------------- replay

#: scores a batch of feature rows (n, len(FEATURE_NAMES)) -> probabilities (n,)
Scorer = Callable[[np.ndarray], np.ndarray]
