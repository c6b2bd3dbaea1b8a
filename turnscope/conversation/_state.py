"""A conversation as turnscope holds it: the records of its turns, the language of each
message, and what turnscope remembers about it between turns.

In reading order: the records (:class:`Role`, :class:`Screen`, :class:`Turn`), per-message
language detection (:func:`detect_language`), and the state (:class:`ConversationState`
and the records it keeps).
"""

from __future__ import annotations

import copy as _copy
import re
from collections import defaultdict
from dataclasses import dataclass, field, fields
from enum import StrEnum
from typing import TYPE_CHECKING, Any

import numpy as np

from turnscope.entities import Enumeration, Mention, SlotTable

if TYPE_CHECKING:  # the resolver package imports this one: its types are named for mypy only
    from turnscope.resolver import ScoredCandidate, ShiftMemo

__all__ = ["Role", "Screen", "Turn", "detect_language", "has_cjk", "DEFAULT_JA_SHARE", "ResolvedTurn",
           "ConversationState", "char_bigrams", "Referents", "RuleMemory", "CentroidMemory"]

# Records -------------------------------------------------------------------------------
# The records of a conversation: roles, turns and screen state.

class Role(StrEnum):
    USER = "user"
    ASSISTANT = "assistant"


@dataclass(frozen=True, slots=True)
class Screen:
    """What the user is looking at (voice-and-screen assistants, doc-site widgets)."""

    page_title: str | None = None
    page_url: str | None = None
    site: str | None = None

    def is_empty(self) -> bool:
        return not (self.page_title or self.page_url or self.site)


@dataclass(frozen=True, slots=True)
class Turn:
    """One message. ``index`` is 1-based and counts user and assistant turns alike."""

    index: int
    role: Role
    content: str
    lang: str = "en"
    screen: Screen | None = None


# Language ------------------------------------------------------------------------------
# Per-message language detection (English / Japanese).
#
# A message is Japanese when kana or CJK ideographs make up a noticeable share
# of its letters; a single katakana product name inside an English sentence
# should not flip it, hence a share rather than "any".

#: share of CJK letters among all letters above which a message is Japanese
DEFAULT_JA_SHARE = 0.3

_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uff66-\uff9f々〆ヵヶ]")
_LATIN = re.compile(r"[A-Za-z]")
_HIRAGANA = re.compile(r"[\u3040-\u309f]")


def has_cjk(text: str) -> bool:
    return _CJK.search(text) is not None


def detect_language(text: str, *, ja_share: float = DEFAULT_JA_SHARE) -> str:
    """Return ``"ja"`` or ``"en"``.

    >>> detect_language("このページは何？")
    'ja'
    >>> detect_language("What's the SLA for Dublin?")
    'en'
    """
    cjk = len(_CJK.findall(text))
    latin = len(_LATIN.findall(text))
    if cjk == 0:
        return "en"
    # hiragana is Japanese grammar (particles, endings), even in a Latin-heavy message;
    # katakana alone is often just a product name inside an English sentence
    if _HIRAGANA.search(text):
        return "ja"
    return "ja" if cjk / max(1, cjk + latin) >= ja_share else "en"


# State ---------------------------------------------------------------------------------
# What turnscope remembers about one conversation between turns.
#
# Everything here is updated incrementally so that the cost of a turn does not
# grow with the length of the conversation: slots age only while non-terminal,
# enumerations and user-turn records are appended, and the bigram index used by
# the ``relevant`` policy is built once per exchange.

def char_bigrams(text: str) -> set[str]:
    """Character 2-grams of the case-folded text without spaces (works for Japanese too)."""
    t = "".join(text.casefold().split())
    if len(t) < 2:
        return {t} if t else set()
    return {t[i : i + 2] for i in range(len(t) - 1)}


@dataclass(frozen=True, slots=True)
class ResolvedTurn:
    """What a user turn turned into: its standalone query and what it was about."""

    turn: int
    query: str
    entities: tuple[Mention, ...]
    focus: Mention | None
    #: the turn's one topic-shift decision, the output's ``topic_shift``
    topic_shift: bool
    #: the conversation topic in force after this turn: the subject a later question with
    #: no subject of its own is about ("what are the main themes?")
    topic: Mention | None = None


@dataclass
class Referents:
    """Who the user's pronouns stood for (case-folded names): a "he"/"she" is a person and
    not the other gender later, an "it" is not a person, a "they" over one name a group."""

    persons: set[str] = field(default_factory=set)
    male: set[str] = field(default_factory=set)
    female: set[str] = field(default_factory=set)
    groups: set[str] = field(default_factory=set)


@dataclass
class RuleMemory:
    """What the embedded rewriter's rules remember between turns."""

    referents: Referents = field(default_factory=Referents)
    #: the place the conversation is set in (the locative frame), until a change of subject
    place: str | None = None
    #: whether the user has named a thing of the declared vocabulary, and how many turns
    #: have been read for it (incremental: each turn is read once)
    domain_named: bool = False
    domain_read: int = 0


@dataclass
class CentroidMemory:
    """The ``segment:centroid`` detector's running segment: the sum and count of its user
    turns' vectors, and the decision taken at each message (asked once per turn)."""

    total: np.ndarray | None = None
    count: int = 0
    decided: dict[int, bool] = field(default_factory=dict)


@dataclass
class ConversationState:
    turns: list[Turn] = field(default_factory=list)
    mentions: dict[int, tuple[Mention, ...]] = field(default_factory=dict)
    enumerations: list[Enumeration] = field(default_factory=list)
    #: last turn at which each enumeration (by its turn) was used or shown
    enumeration_use: dict[int, int] = field(default_factory=dict)
    resolved: dict[int, ResolvedTurn] = field(default_factory=dict)
    slots: SlotTable = field(default_factory=SlotTable)
    #: bigram -> exchange start turns (user turn index) containing it
    bigram_index: dict[str, set[int]] = field(default_factory=lambda: defaultdict(set))
    #: the embedded rewriter's rules' memory (referents, the place frame, the domain)
    rules: RuleMemory = field(default_factory=RuleMemory)
    #: where the current segment starts, per segment detector name (``segment`` policy;
    #: the session records the rewriter's flag under ``"flag"``)
    segment_start: dict[str, int] = field(default_factory=dict)
    #: the ``segment:centroid`` detector's running state
    centroid: CentroidMemory = field(default_factory=CentroidMemory)
    #: the learned shift detector's state, per model and encoder (its fingerprint)
    shift: dict[str, ShiftMemo] = field(default_factory=dict)
    #: the learned resolver's scored candidates for the current message (by its index)
    ranked: dict[int, list[ScoredCandidate]] = field(default_factory=dict)

    @property
    def last_index(self) -> int:
        return self.turns[-1].index if self.turns else 0

    def copy(self) -> ConversationState:
        """An independent state that has seen the same turns (what ``Session.fork`` copies).

        Turns, mentions, enumerations, resolved turns and slots are frozen records: they
        are shared, and only the containers holding them are new, so a copy costs a few
        list and dict copies rather than a deep copy of every record. The rules' memory and
        each policy's and detector's own mutable state (centroids, trackers, sets of names)
        are deep-copied, as is a field added later that is not named here, so a copy is
        never shared by mistake.

        >>> s = ConversationState()
        >>> s.rules.referents.persons.add("ada")
        >>> c = s.copy()
        >>> c.rules.referents.persons.add("bob")
        >>> sorted(s.rules.referents.persons), sorted(c.rules.referents.persons)
        (['ada'], ['ada', 'bob'])
        """
        shallow = {"turns": list, "mentions": dict, "enumerations": list,
                   "enumeration_use": dict, "resolved": dict}
        values: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name in shallow:
                values[f.name] = shallow[f.name](value)
            elif f.name == "slots":
                values[f.name] = self.slots.copy()
            elif f.name == "bigram_index":
                values[f.name] = defaultdict(set, {k: set(v) for k, v in value.items()})
            else:
                values[f.name] = _copy.deepcopy(value)
        return ConversationState(**values)

    def turn(self, index: int) -> Turn:
        return self.turns[index - 1]

    def user_turns_before(self, index: int, limit: int | None = None) -> list[Turn]:
        out: list[Turn] = []
        i = index - 1
        while i >= 1 and (limit is None or len(out) < limit):
            t = self.turns[i - 1]
            if t.role is Role.USER:
                out.append(t)
            i -= 1
        return out

    def latest_screen(self) -> Screen | None:
        # scan back a bounded distance: screen state is situational, not historical
        for t in reversed(self.turns[-6:]):
            if t.screen is not None and not t.screen.is_empty():
                return t.screen
        return None

    def exchange_of(self, user_turn: int) -> tuple[int, ...]:
        """The user turn and the assistant answer after it (if any)."""
        nxt = user_turn + 1
        if nxt <= len(self.turns) and self.turns[nxt - 1].role is Role.ASSISTANT:
            return (user_turn, nxt)
        return (user_turn,)

    def index_exchange_text(self, user_turn: int, text: str) -> None:
        for bg in char_bigrams(text):
            self.bigram_index[bg].add(user_turn)
