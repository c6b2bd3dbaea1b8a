"""A learned topic-shift detector: did the user change subject with this message?

The evidence for "the user changed subject" used to be one hand-set cut on one
cosine (the ``centroid`` segmenter, docs/architecture.md). Here a small gradient-boosted
model (LightGBM) reads a handful of signals about the latest user message and
returns a probability:

- e5 similarities (the bundled encoder, :func:`turnscope._encoder.default_encoder`):
  the message against the centroid of the current segment's user turns, against
  the whole conversation's user turns, the previous question, the first question,
  and the best match among the last few user turns;
- the word overlap of the message with the previous answer (and whether it leans
  to the answer or to the previous question). Answers are not embedded: an answer
  of 64 words cost ~110 ms of e5 on this project's 2-core machines, seven times a
  message, and a long-answer conversation paid it on every exchange;
- new-name signals: the share of the message's content words (and of its
  capitalised words) never seen in the conversation, the share found in the
  previous answer (and only there) and in the previous question, how much the
  previous answer itself brought in;
- message cues: a third-person pronoun, a demonstrative, an ordinal, a pointer into
  an answer ("the latter", "the above mentioned"), the length, a leading wh-word,
  an explicit change-of-subject cue ("different question", "unrelated"), a contrast
  cue ("what about", "other than"), and the turn's position.

What "topic" means is what the training data says: mostly TopiOCQA, where a switch
is a change of Wikipedia article. Many of those are *drift*: "the second one",
"the latter", "where was he born?" move to something the last answer brought up.
So a message that points into the previous answer gets a high probability even
though it needs that answer to be understood; the ``segment`` policy keeps the
bridging exchange in scope for such messages (:attr:`ShiftDetector.bridges`), and a
caller that wants "closed the old subject" should read the probability beside the
message's reference class, not instead of it. An explicit pivot cue is decisive
(:data:`CUE_FLOOR`).

The model, its feature names and its decision threshold ship in one file,
``turnscope/data/models/shift.txt`` (trained by
:func:`turnscope.training.shift.train_shift`; the threshold was chosen on a
held-out part of the *training* data, never on a dev set). It is loaded lazily,
once per process.

API for other components (the candidate ranker, the embedded rewriter)
-----------------------------------------------------------------------

``shift_probability(state: ConversationState, message: ShiftMessage) -> float``
    The probability, in [0, 1], that ``message`` (the user turn being processed,
    not yet appended to ``state.turns``) opens a new topic. Call it at any point
    while the turn is processed, as often as you like: the value is cached in
    ``state.shift`` per turn index, so the message is embedded once per turn and
    every caller of the same turn sees the same number. Earlier turns that were
    never scored (a policy that did not ask) are embedded once, on the first call,
    to catch up. The first user turn of a conversation has probability 0.

``is_topic_shift(state, message) -> bool``
    ``shift_probability(...) >= threshold`` with the shipped threshold.

``history_shift_probability(history, message, *, encoder=None) -> float``
    The same probability for a caller that holds plain turns instead of a
    ``ConversationState``: ``history`` is a sequence of ``(role, text)`` pairs or of
    objects with ``.role`` and ``.text`` (the resolver's ``HistoryTurn``), oldest
    first; ``message`` is the latest user text. Nothing is cached between calls
    unless ``encoder`` caches (pass the resolver's ``CachedEmbedder``).

``message`` only needs ``.index`` (the turn number it will get: ``state.last_index +
1``) and ``.text``; :class:`turnscope.scope.Message` has both.

``ShiftDetector`` is the same thing as an object (choose a model, an encoder);
``segment:learned`` (:class:`turnscope.scope.SegmentPolicy`) uses it.

>>> from turnscope import Session
>>> s = Session(policy="segment:learned")
>>> _ = s.user("How do I file a tax return as a freelancer?")
>>> s.assistant("You file a Schedule C with your Form 1040.")
>>> s.user("ok different question: how do volcanoes form?").scope.topic_shift
True
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import threading
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from functools import cached_property, lru_cache
from importlib import resources
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from turnscope._encoder import Encoder, default_encoder
from turnscope._exceptions import ConfigError, InputError
from turnscope._lexicon import content_words
from turnscope.conversation import ConversationState, Role, Turn

# one list of change-of-subject cues for the whole project: the classifier's pivot
# patterns are what the reference classes of docs/output.md calls an explicit cue, so the detector reads the same
from turnscope.references import PIVOT_EN, PIVOT_JA
from turnscope.resolver._candidates import overlap

__all__ = [
    "FEATURE_NAMES",
    "SEGMENT_COLUMNS",
    "ShiftFeatures",
    "ShiftMessage",
    "CUE_FLOOR",
    "MODEL_FORMAT",
    "RECENT_TURNS",
    "SegmentCentroid",
    "ShiftDetector",
    "ShiftModel",
    "ShiftTracker",
    "history_shift_probability",
    "is_topic_shift",
    "shift_probability",
    "shipped_model",
    "shipped_model_path",
]

# Features ------------------------------------------------------------------------------
# What the topic-shift detector reads off one user message: the word patterns, the
# message protocol and :class:`ShiftFeatures`, whose field order is the model's column
# order. The detector, its running state and the model follow.

_WORD = re.compile(r"[^\W_][\w'’-]*", re.UNICODE)
_THIRD_PERSON = frozenset(
    "he him his himself she her hers herself it its itself they them their theirs themselves".split()
)
_DEMONSTRATIVE = frozenset("this that these those there such".split())
_WH = frozenset("what who whom whose when where why which how".split())
# "what about the RTO?" asks about a sibling of the current subject (often a
# continuation), "other than ..." / "besides ..." asks past it: neither is a pivot,
# both are worth a feature of their own
_CONTRAST = re.compile(
    r"\b(?:what|how)\s+about\b|\bother\s+than\b|\bbesides\b|\bapart\s+from\b|\bwhat\s+else\b|"
    r"\banything\s+else\b|\bany\s+other\b", re.IGNORECASE)
# "the latter", "the second one mentioned", "the aforesaid society": a pointer into
# what the assistant listed or named, which is how an information-seeking user moves
# on to one of the things an answer brought up
_ANSWER_POINTER = re.compile(
    r"\b(?:latter|former|aforesaid|aforementioned|above|mentioned|named|listed|cited)\b|"
    r"\byou\s+(?:just\s+)?(?:said|told|gave|named|described)\b|\bjust\s+(?:said|now)\b|"
    r"\b(?:first|second|third|last|final|other)\s+(?:one|ones|thing|person|place|name)\b",
    re.IGNORECASE)
_ORDINAL = frozenset("first second third fourth fifth last latter former final".split())


class ShiftMessage(Protocol):
    """What the detector reads of a message (:class:`turnscope.scope.Message` fits)."""

    @property
    def index(self) -> int: ...  # the turn number the message will have

    @property
    def text(self) -> str: ...


@dataclass(frozen=True, slots=True)
class _Text:
    index: int
    text: str


def _cos(a: np.ndarray, b: np.ndarray | None) -> float:
    if b is None:
        return math.nan
    norm = float(np.linalg.norm(b))
    # vectors are L2-normalised; a centroid is not, so divide by its norm
    return float(a @ b) / norm if norm else math.nan


@lru_cache(maxsize=4096)
def _words(text: str) -> tuple[str, ...]:
    """The content words (docs/benchmarks.md) of ``text`` (cached: a text is read as a message and again as
    history, and training replays each conversation many times)."""
    return tuple(content_words(text))


def _share(words: Sequence[str], pool: set[str]) -> float:
    if not words:
        return math.nan
    return sum(w in pool for w in words) / len(words)


def _names(text: str) -> list[str]:
    """Capitalised words that are not sentence-initial and not "I": the surface sign of a name."""
    out: list[str] = []
    start = True
    for m in _WORD.finditer(text):
        w = m.group()
        before = text[max(0, m.start() - 2) : m.start()]
        if any(c in before for c in ".?!:;—"):
            start = True
        if not start and w[:1].isupper() and w != "I":
            out.append(w.casefold())
        start = False
    return out


def _has_pivot(text: str) -> bool:
    return (PIVOT_EN.search(text) or PIVOT_JA.search(text)) is not None


@dataclass(frozen=True, slots=True)
class ShiftFeatures:
    """The detector's view of one user message (``nan`` = not available, e.g. no
    previous answer in a chit-chat dialogue). Field order is the model's column order."""

    cos_segment: float  # the current segment's centroid of user turns
    cos_conversation: float  # the centroid of every earlier user turn
    cos_prev_question: float
    answer_cosine: float  # word overlap with the previous answer: |m & a| / sqrt(|m| |a|)
    cos_first_question: float
    cos_recent_max: float  # best match among the last RECENT_TURNS user turns
    segment_turns: float  # user turns in the current segment so far
    new_word_share: float  # content words never seen in the conversation
    new_name_share: float  # capitalised words never seen in the conversation
    answer_overlap: float  # content words found in the previous answer
    answer_only_share: float  # ... in the previous answer but in no earlier question
    question_overlap: float  # content words found in the previous question
    answer_gap: float  # answer_overlap - question_overlap: leaning towards the answer
    answer_new_share: float  # share of the previous answer's content words new to it
    content_words: float
    third_person: float
    demonstrative: float
    length_words: float
    starts_wh: float
    change_cue: float  # explicit pivot ("different question", "unrelated", ...)
    contrast_cue: float  # "what about", "other than", "besides", ...
    answer_pointer: float  # "the latter", "the above mentioned", "the second one"
    ordinal: float  # "the second", "the last", "the former"
    prev_answer_words: float
    prev_answer_names: float  # share of capitalised words in the previous answer
    turn_position: float  # 1-based user-turn number

    def as_row(self) -> np.ndarray:
        # getattr, not dataclasses.astuple: astuple deep-copies and is 20x slower, and
        # training builds tens of thousands of rows
        return np.fromiter((getattr(self, n) for n in FEATURE_NAMES), dtype=np.float64,
                           count=len(FEATURE_NAMES))


#: the model's columns, in order
FEATURE_NAMES: tuple[str, ...] = tuple(f.name for f in fields(ShiftFeatures))
#: the columns that depend on the detector's earlier decisions (see SegmentCentroid)
SEGMENT_COLUMNS: tuple[int, int] = (FEATURE_NAMES.index("cos_segment"),
                                    FEATURE_NAMES.index("segment_turns"))
_CUE_COLUMN = FEATURE_NAMES.index("change_cue")


# Detector ------------------------------------------------------------------------------

#: first line of a model file; bump when the layout or the meaning of a feature changes
MODEL_FORMAT = "turnscope-shift-model/2"
#: how many of the latest user turns ``cos_recent_max`` looks at
RECENT_TURNS = 4
#: the probability an explicit change-of-subject cue guarantees. The cue is what the reference
#: classes call a pivot, but it is too rare in the training sets (5 in TIAGE train,
#: 2 in the TopiOCQA subsample) for a model to learn its weight, so it is a rule on top
CUE_FLOOR = 0.95

_MODEL_PATH = "data/models/shift.txt"


class SegmentCentroid:
    """The current segment's user turns as a running sum: the one part of the features
    that depends on the detector's own earlier decisions."""

    def __init__(self) -> None:
        self.total: np.ndarray | None = None
        self.count = 0

    def cos(self, vec: np.ndarray) -> float:
        return _cos(vec, self.total)

    def add(self, vec: np.ndarray, shift: bool) -> None:
        """Fold in a user turn; ``shift`` restarts the segment at it."""
        v = vec.astype(np.float64)
        if shift or self.total is None:
            self.total, self.count = v.copy(), 1
        else:
            self.total = self.total + v
            self.count += 1


class ShiftTracker:
    """The running summary of one conversation that features are computed from.

    Fed turn by turn, in order, exactly as a conversation unfolds: call
    :meth:`features` for a user message, then :meth:`add_user` with the detector's
    decision for it (the current segment depends on earlier decisions), then
    :meth:`add_assistant` for the answer, if any. Training replays data sets
    through this same class, so the features a model is trained on are the ones it
    sees at run time. Vectors are L2-normalised e5 embeddings of user turns (answers
    are read for their words only).
    """

    def __init__(self) -> None:
        self.user_turns = 0
        self.segment = SegmentCentroid()
        self._all_sum: np.ndarray | None = None
        self._first_q: np.ndarray | None = None
        self._prev_q: np.ndarray | None = None
        self._recent: deque[np.ndarray] = deque(maxlen=RECENT_TURNS)
        self._seen_words: set[str] = set()
        self._seen_tokens: set[str] = set()
        self._prev_q_words: set[str] = set()
        self._asked_words: set[str] = set()  # content words of every user turn so far
        self._prev_a_words: set[str] | None = None
        self._prev_a_new = math.nan
        self._prev_a_len = math.nan
        self._prev_a_names = math.nan

    def features(self, text: str, vec: np.ndarray) -> ShiftFeatures:
        """Features of the user message ``text`` (embedded as ``vec``) given what came before."""
        words = _words(text)
        names = _names(text)
        tokens = [m.group().casefold() for m in _WORD.finditer(text)]
        recent = [float(vec @ r) for r in self._recent]
        first = tokens[0] if tokens else ""
        cos_q = _cos(vec, self._prev_q)
        answer = _share(words, self._prev_a_words) if self._prev_a_words is not None else math.nan
        question = _share(words, self._prev_q_words) if self.user_turns else math.nan
        answer_only = (self._prev_a_words - self._asked_words) if self._prev_a_words is not None \
            else None
        return ShiftFeatures(
            cos_segment=self.segment.cos(vec),
            cos_conversation=_cos(vec, self._all_sum),
            cos_prev_question=cos_q,
            answer_cosine=overlap(set(words), self._prev_a_words)
            if self._prev_a_words and words else math.nan,
            cos_first_question=_cos(vec, self._first_q),
            cos_recent_max=max(recent) if recent else math.nan,
            segment_turns=float(self.segment.count),
            new_word_share=1.0 - _share(words, self._seen_words) if words else math.nan,
            new_name_share=1.0 - _share(names, self._seen_tokens) if names else math.nan,
            answer_overlap=answer,
            answer_only_share=_share(words, answer_only) if answer_only is not None else math.nan,
            question_overlap=question,
            answer_gap=answer - question,
            answer_new_share=self._prev_a_new,
            content_words=float(len(words)),
            third_person=float(any(t in _THIRD_PERSON for t in tokens)),
            demonstrative=float(any(t in _DEMONSTRATIVE for t in tokens)),
            length_words=float(len(tokens)),
            starts_wh=float(first in _WH),
            change_cue=float(_has_pivot(text)),
            contrast_cue=float(_CONTRAST.search(text) is not None),
            answer_pointer=float(_ANSWER_POINTER.search(text) is not None),
            ordinal=float(any(t in _ORDINAL for t in tokens)),
            prev_answer_words=self._prev_a_len,
            prev_answer_names=self._prev_a_names,
            turn_position=float(self.user_turns + 1),
        )

    def add_user(self, text: str, vec: np.ndarray, shift: bool) -> None:
        """Fold in a user turn; ``shift`` (the detector's decision) starts a new segment."""
        v = vec.astype(np.float64)
        self.segment.add(v, shift)
        self._all_sum = v.copy() if self._all_sum is None else self._all_sum + v
        if self._first_q is None:
            self._first_q = v
        self._prev_q = v
        # the previous answer belongs to the previous question: a new question has none yet
        self._prev_a_words = None
        self._prev_a_len = math.nan
        self._prev_a_names = math.nan
        self._prev_a_new = math.nan
        self._recent.append(v)
        words = _words(text)
        self._prev_q_words = set(words)
        self._asked_words.update(words)
        self._seen_words.update(words)
        self._seen_tokens.update(m.group().casefold() for m in _WORD.finditer(text))
        self.user_turns += 1

    def add_assistant(self, text: str) -> None:
        """Fold in an assistant turn (its words; answers are not embedded)."""
        words = _words(text)
        self._prev_a_words = set(words)
        self._prev_a_new = 1.0 - _share(words, self._seen_words) if words else math.nan
        self._seen_words.update(words)
        tokens = [m.group() for m in _WORD.finditer(text)]
        self._seen_tokens.update(t.casefold() for t in tokens)
        self._prev_a_len = float(len(tokens))
        self._prev_a_names = (sum(t[:1].isupper() for t in tokens) / len(tokens)) if tokens \
            else math.nan


@dataclass(frozen=True, eq=False)
class ShiftModel:
    """A trained booster with the threshold and provenance it ships with.

    ``header`` holds at least ``feature_names`` and ``threshold``; the trainer adds the
    training data, sizes, seed and held-out figures.
    """

    booster: Any  # lightgbm.Booster (imported lazily: importing lightgbm costs ~0.8 s)
    threshold: float
    feature_names: tuple[str, ...]
    header: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if tuple(self.feature_names) != FEATURE_NAMES:
            raise ConfigError(
                "shift model was trained on features "
                f"{list(self.feature_names)}, but this code computes {list(FEATURE_NAMES)}; "
                "retrain it (turnscope train --only shift)")
        if not 0.0 < self.threshold < 1.0:
            raise ConfigError(f"shift model threshold must lie in (0, 1), got {self.threshold}")

    @cached_property
    def fingerprint(self) -> str:
        """A short hash of the model text: tells two models apart in a shared memo
        (computed once: serialising the booster takes milliseconds)."""
        return hashlib.sha256(self.to_text().encode("utf-8")).hexdigest()[:12]

    def probabilities(self, rows: np.ndarray) -> np.ndarray:
        """Shift probability per row of a (n, len(FEATURE_NAMES)) feature matrix."""
        rows = np.atleast_2d(np.asarray(rows, dtype=np.float64))
        # one thread: rows come one turn at a time, where thread start-up costs more
        # than the trees
        p = np.asarray(self.booster.predict(rows, num_threads=1), dtype=np.float64)
        cue = rows[:, _CUE_COLUMN] > 0.5
        return np.where(cue, np.maximum(p, CUE_FLOOR), p)

    def probability(self, features: ShiftFeatures) -> float:
        return float(self.probabilities(features.as_row()[None, :])[0])

    def to_text(self) -> str:
        header = dict(self.header)
        header.update(format=MODEL_FORMAT, feature_names=list(self.feature_names),
                      threshold=self.threshold)
        return (f"{MODEL_FORMAT}\n{json.dumps(header, sort_keys=True)}\n"
                f"{self.booster.model_to_string()}")

    @classmethod
    def from_text(cls, text: str, source: str = "<text>") -> ShiftModel:
        """Parse what :meth:`to_text` wrote (raises :class:`ConfigError` naming ``source``)."""
        import lightgbm

        first, _, rest = text.partition("\n")
        if first.strip() != MODEL_FORMAT:
            raise ConfigError(f"{source}: not a {MODEL_FORMAT} file (first line {first[:60]!r})")
        line, _, body = rest.partition("\n")
        try:
            header = json.loads(line)
            threshold = float(header["threshold"])
            names = tuple(str(n) for n in header["feature_names"])
        except (ValueError, KeyError, TypeError) as exc:
            raise ConfigError(f"{source}: unreadable model header: {exc}") from None
        booster = lightgbm.Booster(model_str=body)
        return cls(booster, threshold, names, header)

    def save(self, path: str | Path) -> Path:
        out = Path(path)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(self.to_text(), encoding="utf-8")
        return out

    @classmethod
    def load(cls, path: str | Path) -> ShiftModel:
        p = Path(path)
        try:
            text = p.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise ConfigError(f"{p}: shift model file not found") from None
        return cls.from_text(text, str(p))


def shipped_model_path() -> Path:
    """Where the packaged model lives (``turnscope/data/models/shift.txt``)."""
    return Path(str(resources.files("turnscope").joinpath(_MODEL_PATH)))


@lru_cache(maxsize=1)
def shipped_model() -> ShiftModel:
    """The packaged model, parsed on first use and kept for the process."""
    return ShiftModel.load(shipped_model_path())


@dataclass
class ShiftMemo:
    """Per-conversation detector state, kept in ``state.shift``."""

    tracker: ShiftTracker = field(default_factory=ShiftTracker)
    synced: int = 0  # the last turn index of ``state.turns`` folded into the tracker
    # message index -> (text, vector, decision): a scored message waits here until the
    # session appends it as a turn, so it is not embedded twice
    pending: dict[int, tuple[str, np.ndarray, bool]] = field(default_factory=dict)
    probabilities: dict[int, float] = field(default_factory=dict)


class ShiftDetector:
    """The learned topic-shift detector over a conversation state.

    >>> from turnscope import Session
    >>> from turnscope.scope import SegmentPolicy
    >>> s = Session(policy=SegmentPolicy(ShiftDetector()))
    >>> _ = s.user("What is the capital of Australia?")
    >>> s.assistant("Canberra.")
    >>> s.user("and how many people live there?").scope.topic_shift
    False
    """

    name = "learned"
    #: ask the ``segment`` policy to keep the previous exchange when a shift message
    #: still needs context: the training data's switches are mostly drift into what the
    #: last answer introduced ("the second one", "the latter", "where was he born?")
    bridges = True

    def __init__(self, model: ShiftModel | None = None, encoder: Encoder | None = None) -> None:
        self._model = model
        self._encoder = encoder
        # one conversation state may be scored from two threads (a service); the memo
        # is not safe to update concurrently
        self._lock = threading.RLock()

    @property
    def model(self) -> ShiftModel:
        if self._model is None:
            self._model = shipped_model()
        return self._model

    @property
    def encoder(self) -> Encoder:
        if self._encoder is None:
            self._encoder = default_encoder()
        return self._encoder

    @property
    def threshold(self) -> float:
        return self.model.threshold

    def _memo(self, state: ConversationState) -> ShiftMemo:
        key = f"{self.model.fingerprint}:{self.encoder.name}"
        return state.shift.setdefault(key, ShiftMemo())

    def _embed(self, text: str) -> np.ndarray:
        return np.asarray(self.encoder.embed_queries([text])[0], dtype=np.float32)

    def _sync(self, memo: ShiftMemo, state: ConversationState, before: int) -> None:
        """Fold every turn of ``state`` before ``before`` into the tracker, once."""
        for turn in state.turns[memo.synced:]:
            if turn.index >= before:
                break
            if turn.role is Role.USER:
                held = memo.pending.pop(turn.index, None)
                if held is not None and held[0] == turn.content:
                    _, vec, shift = held
                else:
                    # a turn no one scored (another policy ran it): score it now, so the
                    # segment is the one this detector would have opened
                    vec = self._embed(turn.content)
                    p = self.model.probability(memo.tracker.features(turn.content, vec)) \
                        if memo.tracker.user_turns else 0.0
                    memo.probabilities[turn.index] = p
                    shift = p >= self.threshold
                memo.tracker.add_user(turn.content, vec, shift)
            else:
                memo.tracker.add_assistant(turn.content)
            memo.synced = turn.index

    def features(self, state: ConversationState, message: ShiftMessage) -> ShiftFeatures:
        """The features of ``message`` given ``state`` (embeds the message, uncached)."""
        with self._lock:
            memo = self._memo(state)
            self._sync(memo, state, message.index)
            held = memo.pending.get(message.index)
            vec = held[1] if held is not None and held[0] == message.text \
                else self._embed(message.text)
            return memo.tracker.features(message.text, vec)

    def probability(self, state: ConversationState, message: ShiftMessage) -> float:
        """Probability that ``message`` opens a new topic (cached per turn in ``state.shift``)."""
        with self._lock:
            memo = self._memo(state)
            cached = memo.probabilities.get(message.index)
            if cached is not None:
                return cached
            if message.index <= memo.synced:
                raise InputError(f"turn {message.index} is already in the conversation; "
                                 "score a message before it is appended")
            self._sync(memo, state, message.index)
            vec = self._embed(message.text)
            if memo.tracker.user_turns == 0:
                p = 0.0  # nothing to shift from
            else:
                p = self.model.probability(memo.tracker.features(message.text, vec))
            memo.pending[message.index] = (message.text, vec, p >= self.threshold)
            memo.probabilities[message.index] = p
            return p

    def is_shift(self, state: ConversationState, message: ShiftMessage) -> bool:
        """``probability(...) >= threshold`` (the threshold stored in the model file)."""
        return self.probability(state, message) >= self.threshold


@lru_cache(maxsize=1)
def _default_detector() -> ShiftDetector:
    return ShiftDetector()


def shift_probability(state: ConversationState, message: ShiftMessage) -> float:
    """Probability that ``message`` (the user turn being processed) changes the subject.

    Uses the shipped model and the bundled encoder; cached per turn in ``state.shift``,
    so calling it from the ranker, the rewriter and ``segment:learned`` in the same
    turn embeds the message once and returns one number.
    """
    return _default_detector().probability(state, message)


def is_topic_shift(state: ConversationState, message: ShiftMessage) -> bool:
    """Whether ``message`` changes the subject, by the shipped model and its threshold."""
    det = _default_detector()
    return det.probability(state, message) >= det.threshold


def history_shift_probability(
    history: Sequence[tuple[str, str] | Any],
    message: str,
    *,
    encoder: Encoder | None = None,
    model: ShiftModel | None = None,
) -> float:
    """:func:`shift_probability` for plain turns: ``(role, text)`` pairs or objects with
    ``.role`` and ``.text``, oldest first, then the latest user ``message``.

    Earlier user turns are replayed through the detector (their decisions shape the
    current segment), so each call embeds the whole history unless ``encoder`` caches.

    >>> history_shift_probability([("user", "How do I file a tax return?"),
    ...                            ("assistant", "Use Form 1040.")],
    ...                           "ok different question: how do volcanoes form?") > 0.5
    True
    """
    state = ConversationState()
    for i, h in enumerate(history, start=1):
        role, text = h if isinstance(h, tuple) else (h.role, h.text)
        try:
            r = Role(str(role))
        except ValueError:
            raise InputError(f"history turn {i}: role must be 'user' or 'assistant', "
                             f"got {role!r}") from None
        state.turns.append(Turn(i, r, str(text)))
    return ShiftDetector(model, encoder).probability(state, _Text(len(state.turns) + 1, message))
