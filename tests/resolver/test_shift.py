"""The learned topic-shift detector: features, the shipped model, caching per turn, and the
``segment:learned`` policy (training it: tests/training/test_shift.py)."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from turnscope import Session
from turnscope._exceptions import ConfigError
from turnscope.conversation import ConversationState, Role, Turn
from turnscope.datasets import TopicTurn
from turnscope.evaluation import detect_switches
from turnscope.resolver._shift import (
    CUE_FLOOR,
    FEATURE_NAMES,
    MODEL_FORMAT,
    ShiftDetector,
    ShiftModel,
    ShiftTracker,
    history_shift_probability,
    shift_probability,
    shipped_model,
    shipped_model_path,
)
from turnscope.scope import SegmentPolicy, get_policy

from .counting import CountingEncoder

TAX = [
    ("user", "How do I file a tax return as a freelancer?"),
    ("assistant", "Freelancers file a Schedule C with their Form 1040 and pay "
                  "self-employment tax."),
    ("user", "Which expenses can I deduct?"),
    ("assistant", "Home office costs, equipment and business travel are deductible."),
]


class Msg:
    def __init__(self, index: int, text: str) -> None:
        self.index = index
        self.text = text


def state_of(turns: Sequence[tuple[str, str]]) -> ConversationState:
    """A state holding just the turns (what the detector reads of it)."""
    state = ConversationState()
    for i, (role, text) in enumerate(turns, start=1):
        state.turns.append(Turn(i, Role(role), text))
    return state


# -- features ------------------------------------------------------------------------

def unit(*xs: float) -> np.ndarray:
    v = np.asarray(xs, dtype=np.float32)
    return v / np.linalg.norm(v)


def test_tracker_features_by_hand() -> None:
    tr = ShiftTracker()
    tr.add_user("Who directed Alien?", unit(1, 0, 0), False)
    tr.add_assistant("Ridley Scott directed Alien in 1979.")
    f = tr.features("When was Ridley Scott born?", unit(0, 1, 0))
    assert f.cos_prev_question == pytest.approx(0.0, abs=1e-6)
    # {ridley, scott, born} against {ridley, scott, directed, alien, 1979}
    assert f.answer_cosine == pytest.approx(2 / (3 * 5) ** 0.5)
    # answers are not embedded: the recent turns are the user's
    assert f.cos_recent_max == pytest.approx(0.0, abs=1e-6)
    assert f.cos_segment == pytest.approx(0.0, abs=1e-6)
    # content words: ridley, scott, born -> "born" is new; all but "born" are in the answer
    assert f.new_word_share == pytest.approx(1 / 3)
    assert f.answer_overlap == pytest.approx(2 / 3)
    assert f.question_overlap == 0.0
    assert f.answer_gap == pytest.approx(2 / 3)  # leans to the answer
    assert f.new_name_share == 0.0  # Ridley and Scott were both named before
    assert f.starts_wh == 1.0 and f.third_person == 0.0 and f.change_cue == 0.0
    assert f.turn_position == 2.0 and f.segment_turns == 1.0
    assert f.length_words == 5.0


def test_tracker_cues_and_missing_values() -> None:
    tr = ShiftTracker()
    first = tr.features("hello there", unit(1, 0))
    # nothing to compare with: missing, not zero (the model treats them as unknown)
    assert math.isnan(first.cos_prev_question) and math.isnan(first.cos_segment)
    assert math.isnan(first.answer_cosine) and math.isnan(first.answer_overlap)
    tr.add_user("hello there", unit(1, 0), False)
    f = tr.features("ok different question: is it raining in Paris?", unit(0, 1))
    assert f.change_cue == 1.0 and f.third_person == 1.0 and f.new_name_share == 1.0
    assert math.isnan(f.answer_cosine) and math.isnan(f.answer_gap)  # no answer after the last question
    g = tr.features("what about that one?", unit(0, 1))
    assert g.contrast_cue == 1.0 and g.demonstrative == 1.0 and g.change_cue == 0.0


def test_segment_follows_the_decisions() -> None:
    tr = ShiftTracker()
    tr.add_user("a", unit(1, 0), False)
    tr.add_user("b", unit(1, 0), False)
    assert tr.features("c", unit(0, 1)).segment_turns == 2.0
    tr.add_user("c", unit(0, 1), True)  # a shift: the segment restarts at c
    f = tr.features("d", unit(0, 1))
    assert f.segment_turns == 1.0 and f.cos_segment == pytest.approx(1.0)
    # the conversation centroid still remembers a and b
    assert f.cos_conversation == pytest.approx(1 / math.sqrt(5))


def test_model_file_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="shift model file not found"):
        ShiftModel.load(tmp_path / "none.txt")
    bad = tmp_path / "bad.txt"
    bad.write_text("tree\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=f"not a {re.escape(MODEL_FORMAT)} file"):
        ShiftModel.load(bad)
    with pytest.raises(ConfigError, match="trained on features"):
        ShiftModel(shipped_model().booster, 0.5, FEATURE_NAMES[:-1])


# -- the shipped model ---------------------------------------------------------------

def test_shipped_model_file() -> None:
    path = shipped_model_path()
    assert path.name == "shift.txt" and path.stat().st_size < 2_000_000
    model = shipped_model()
    assert model is shipped_model()  # parsed once per process
    assert 0.0 < model.threshold < 1.0
    assert model.feature_names == FEATURE_NAMES
    data = model.header["training_data"]
    assert set(data) == {"topiocqa-train", "tiage-train"}
    assert data["topiocqa-train"]["file"] == "topiocqa/topiocqa_train_part.json"
    assert "dev" not in model.header["threshold_chosen_on"]
    assert isinstance(model.header["seed"], int)


def test_shipped_model_prefers_an_explicit_change_of_subject() -> None:
    shift = shift_probability(state_of(TAX), Msg(5, "ok different question: how do volcanoes form?"))
    cont = shift_probability(state_of(TAX), Msg(5, "and how long does it take?"))
    assert shift > cont
    assert shift >= CUE_FLOOR  # the explicit cue is decisive
    assert cont < shipped_model().threshold


def test_shipped_model_without_a_cue() -> None:
    # no cue word: only the similarities and the new-name signals can tell
    shift = shift_probability(state_of(TAX), Msg(5, "what is the boiling point of nitrogen?"))
    cont = shift_probability(state_of(TAX), Msg(5, "can I deduct my laptop?"))
    assert shift > cont


def test_first_turn_has_probability_zero() -> None:
    assert shift_probability(ConversationState(), Msg(1, "How do volcanoes form?")) == 0.0


# -- caching and consistency ---------------------------------------------------------

def test_each_text_is_embedded_once_per_conversation() -> None:
    enc = CountingEncoder()
    det = ShiftDetector(encoder=enc)
    s = Session(policy=SegmentPolicy(det))
    texts = [TAX[0][1], TAX[1][1], TAX[2][1], TAX[3][1], "and how long does a refund take?"]
    s.user(texts[0])
    s.assistant(texts[1])
    s.user(texts[2])
    # the ranker and the rewriter asking again in the same turn cost nothing
    before = len(enc.calls)
    msg = Msg(3, texts[2])
    assert det.probability(s.state, msg) == next(iter(s.state.shift.values())).probabilities[3]
    assert len(enc.calls) == before
    s.assistant(texts[3])
    s.user(texts[4])
    # every user text exactly once, in order; answers are read for their words, never embedded
    assert enc.calls == [texts[0], texts[2], texts[4]]


def test_catching_up_gives_what_scoring_every_turn_gives() -> None:
    turns = [("user", "Who directed the film Alien?"), ("assistant", "Ridley Scott."),
             ("user", "When was he born?"), ("assistant", "30 November 1937."),
             ("user", "What is the capital of Peru?"), ("assistant", "Lima."),
             ("user", "How big is it?"), ("assistant", "About 10 million people.")]
    message = "what language do they speak there?"
    # scored turn by turn by segment:learned ...
    s = Session(policy="segment:learned")
    for role, text in turns:
        s.add(role, text)
    live = shift_probability(s.state, Msg(9, message))
    # ... and caught up in one go on a state built by another policy
    cold = shift_probability(state_of(turns), Msg(9, message))
    assert live == pytest.approx(cold, abs=1e-9)
    assert history_shift_probability(turns, message) == pytest.approx(live, abs=1e-9)


# -- segment:learned -----------------------------------------------------------------

def test_segment_learned_policy_opens_a_segment_at_a_pivot() -> None:
    policy = get_policy("segment:learned")
    assert policy.name == "segment"
    s = Session(policy=policy)
    for role, text in TAX:
        s.add(role, text)
    r = s.user("ok different question: how do volcanoes form?")
    assert r.scope.topic_shift is True and r.scope.turns == ()
    assert "detector=learned" in r.scope.note
    r2 = s.user("and why do they erupt?")
    assert r2.scope.topic_shift is False and r2.scope.turns == (5,)
    assert get_policy("segment-learned").run.__self__.detector.name == "learned"  # type: ignore[attr-defined]


def test_unknown_detector_names_the_valid_ones() -> None:
    with pytest.raises(ConfigError, match="valid: segment:centroid, segment:flag, segment:learned"):
        get_policy("segment:magic")


def test_topic_eval_runs_the_learned_detector() -> None:
    c = [TopicTurn(1, i, q, a, "", s) for i, (q, a, s) in enumerate([
        ("How do I file a tax return as a freelancer?", "Use Schedule C.", False),
        ("Which expenses can I deduct?", "Home office costs.", False),
        ("ok different question: how do volcanoes form?", "Magma rises.", True)], start=1)]
    preds = detect_switches(c, "learned")
    assert preds[0] is False and preds[2] is True


def test_cli_topic_eval_accepts_segment_learned(tmp_path: Path) -> None:
    import typer

    from turnscope.cli._eval import register

    app = typer.Typer()

    @app.callback()
    def main() -> None:
        """Keeps eval a subcommand."""

    register(app)
    runner = CliRunner()
    res = runner.invoke(app, ["eval", "--dataset", "tiage", "--limit", "2", "--resamples", "50",
                              "--policies", "segment:learned,segment:centroid"])
    assert res.exit_code == 0, res.output
    assert "learned" in res.output and "centroid" in res.output and "flag" not in res.output
    bad = runner.invoke(app, ["eval", "--dataset", "tiage", "--policies", "window:2"])
    assert bad.exit_code != 0
    assert "segment:learned" in bad.output


class AlwaysShift:
    """A detector that cuts at every turn after the first."""

    name = "always-test"

    def __init__(self, bridges: bool) -> None:
        self.bridges = bridges

    def is_shift(self, state: ConversationState, message: object) -> bool:
        return bool(state.turns)


@pytest.mark.parametrize(("bridges", "expected"), [(True, (1, 2)), (False, ())])
def test_a_drift_shift_keeps_the_exchange_that_introduced_the_new_subject(
        bridges: bool, expected: tuple[int, ...]) -> None:
    s = Session(policy=SegmentPolicy(AlwaysShift(bridges)))  # type: ignore[arg-type]
    s.user("Which EU regions support customer-managed encryption keys?")
    s.assistant("Frankfurt and Dublin both support CMK for data at rest.")
    # needs context ("the second one"): a bridging detector keeps turns 1-2 in scope
    r = s.user("What's the uptime SLA on the second one?")
    assert r.scope.topic_shift is True and r.scope.turns == expected
    s.assistant("Dublin is covered by the 99.95% uptime SLA.")
    # a standalone message opens an empty segment either way
    r = s.user("ok different question — is the billing export API paginated?")
    assert r.scope.turns == ()
