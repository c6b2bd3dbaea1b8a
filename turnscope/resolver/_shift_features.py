"""What the topic-shift detector reads off one user message (``_shift``'s features).

The word patterns, the message protocol and :class:`ShiftFeatures`, whose field order is
the model's column order; the detector, its running state and the model live in
``turnscope.resolver._shift``, which re-exports these names.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, fields
from functools import lru_cache
from typing import Protocol

import numpy as np

from turnscope._lexicon import content_words

# one list of change-of-subject cues for the whole project: the classifier's pivot
# patterns are what the reference classes of docs/output.md calls an explicit cue, so the detector reads the same
from turnscope.references import PIVOT_EN, PIVOT_JA

__all__ = ["FEATURE_NAMES", "SEGMENT_COLUMNS", "ShiftFeatures", "ShiftMessage"]


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
