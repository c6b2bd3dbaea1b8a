"""Topic-shift detection scored against labelled turns, beside trivial baselines."""

from __future__ import annotations

import pytest
from rich.console import Console

from turnscope._exceptions import ConfigError, InputError
from turnscope.datasets import TopicTurn
from turnscope.evaluation import (
    detect_switches,
    print_detection,
    score_detection,
    topic_shift_eval,
)


def conv(n: int, rows: list[tuple[str, str, bool]]) -> list[TopicTurn]:
    return [TopicTurn(n, i, q, ans, "", s) for i, (q, ans, s) in enumerate(rows, start=1)]


PIVOT = conv(1, [
    ("Which EU regions support customer-managed encryption keys?",
     "Frankfurt and Dublin both support CMK for data at rest.", False),
    ("What's the uptime SLA on the second one?",
     "Dublin (eu-west-1) is covered by the 99.95% monthly uptime SLA.", False),
    ("ok different question — is the billing export API paginated?",
     "Yes, it uses cursor-based pagination.", True),
    ("and how long is a page token valid?", "One hour.", False),
])


def test_counts_skip_the_first_turn() -> None:
    c = conv(1, [("a", "", False), ("b", "", True), ("c", "", False), ("d", "", True)])
    s = score_detection("x", [c], [[True, True, True, False]])
    # turn 1 is never scored, even when a detector (wrongly) fires there
    assert (s.tp, s.fp, s.fn, s.tn) == (1, 1, 1, 0)
    assert s.precision == 0.5 and s.recall == 0.5 and s.f1 == 0.5


def test_trivial_baselines() -> None:
    never = score_detection("never", [PIVOT], [detect_switches(PIVOT, "never")])
    always = score_detection("always", [PIVOT], [detect_switches(PIVOT, "always")])
    assert (never.precision, never.recall, never.f1) == (0.0, 0.0, 0.0)
    assert always.recall == 1.0
    assert always.precision == pytest.approx(1 / 3)  # one switch among turns 2..4
    assert always.predicted == 3 and always.actual == 1


def test_flag_detector_catches_an_explicit_pivot() -> None:
    preds = detect_switches(PIVOT, "flag")
    assert len(preds) == 4 and preds[0] is False
    assert preds[2] is True


def test_centroid_detector_runs_through_a_session() -> None:
    preds = detect_switches(PIVOT, "centroid")
    assert len(preds) == 4 and preds[0] is False
    assert all(isinstance(p, bool) for p in preds)


def test_topic_shift_eval_adds_baselines_and_intervals() -> None:
    other = conv(2, [("Who wrote Dune?", "Frank Herbert.", False),
                     ("When was it published?", "1965.", False),
                     ("ok new topic: how hot is the sun's surface?", "About 5,500 C.", True)])
    scores = topic_shift_eval([PIVOT, other], detectors=("flag",), progress=False,
                              resamples=200)
    assert [s.detector for s in scores] == ["flag", "never", "always"]
    for s in scores:
        assert 0.0 <= s.f1_low <= s.f1_high <= 1.0
    console = Console(record=True, width=120)
    print_detection(scores, "tiny", console)
    out = console.export_text()
    assert "topic-shift detection · tiny · 5 scored turns" in out
    assert "never" in out and "always" in out


def test_errors() -> None:
    with pytest.raises(ConfigError, match="unknown detector 'embedding'; valid: centroid, flag"):
        detect_switches(PIVOT, "embedding")
    with pytest.raises(InputError, match="one prediction list per conversation"):
        score_detection("x", [PIVOT], [])
    with pytest.raises(InputError, match="4 turns but 2 predictions"):
        score_detection("x", [PIVOT], [[False, True]])
    with pytest.raises(InputError, match="no conversations"):
        topic_shift_eval([], progress=False)
