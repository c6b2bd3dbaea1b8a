"""Training the topic-shift detector (turnscope.training.shift): a model fitted on a tiny
fixture separates a change of subject from a continuation, fitting is seeded, and the fast
replay training uses is what the tracker and a session compute turn by turn."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from turnscope import Session
from turnscope._encoder import default_encoder
from turnscope.conversation import ConversationState, Role, Turn
from turnscope.datasets import TopicTurn
from turnscope.resolver._shift import FEATURE_NAMES, ShiftDetector, ShiftModel, ShiftTracker, shipped_model
from turnscope.scope import SegmentPolicy
from turnscope.training.shift import assign_folds, embed_conversations, fit_shift_model, replay

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


# -- training on a tiny fixture ------------------------------------------------------

def conv(n: int, rows: Sequence[tuple[str, str, bool]]) -> list[TopicTurn]:
    return [TopicTurn(n, i, q, a, "", s) for i, (q, a, s) in enumerate(rows, start=1)]


# the change of subject comes at the third user turn in odd conversations and at the
# fourth in even ones, so neither the turn's position nor the segment's length can
# stand in for the similarities
FIXTURE = [
    conv(1, [("How do I file a tax return as a freelancer?", "Use Schedule C with Form 1040.", False),
             ("Which expenses can I deduct?", "Home office and equipment.", False),
             ("How do volcanoes form?", "Magma rises through the crust.", True),
             ("Why do they erupt?", "Gas pressure builds up in the magma.", False)]),
    conv(2, [("What is the best way to cook rice?", "Rinse it and simmer it covered.", False),
             ("How much water should I use?", "About 1.5 cups per cup of rice.", False),
             ("How long should it simmer?", "About 18 minutes, then let it rest.", False),
             ("Who won the 2018 football World Cup?", "France won it.", True),
             ("Who was their captain?", "Hugo Lloris.", False)]),
    conv(3, [("How do I train a puppy to sit?", "Use treats and short sessions.", False),
             ("How long does that take?", "A week or two.", False),
             ("What causes the northern lights?", "Charged solar particles hit the air.", True),
             ("Where can I see them?", "In Norway, Iceland or Canada.", False)]),
    conv(4, [("What is a Roth IRA?", "A retirement account funded after tax.", False),
             ("What is the contribution limit?", "7,000 dollars a year.", False),
             ("Can I withdraw the contributions early?", "Yes, contributions come out tax-free.", False),
             ("How tall is Mount Everest?", "8,849 metres.", True),
             ("Who climbed it first?", "Hillary and Tenzing in 1953.", False)]),
    conv(5, [("How do I fix a flat bicycle tyre?", "Patch the inner tube or replace it.", False),
             ("What tools do I need?", "Tyre levers and a pump.", False),
             ("What is photosynthesis?", "Plants turning light into sugar.", True),
             ("Which part of the plant does it?", "The chloroplasts in the leaves.", False)]),
    conv(6, [("What is the capital of Japan?", "Tokyo.", False),
             ("How many people live there?", "About 14 million.", False),
             ("What is the best time to visit?", "Spring, for the cherry blossoms.", False),
             ("How do I reset my router?", "Hold the reset button for ten seconds.", True),
             ("Will that delete my settings?", "Yes, it restores the factory settings.", False)]),
    conv(7, [("Who painted the Mona Lisa?", "Leonardo da Vinci.", False),
             ("When did he paint it?", "Between 1503 and 1519.", False),
             ("How do I make sourdough starter?", "Mix flour and water and feed it daily.", True),
             ("How long until it is ready?", "About a week.", False)]),
    conv(8, [("How does a heat pump work?", "It moves heat with a refrigerant cycle.", False),
             ("Is it cheaper than a gas boiler?", "Usually, over its lifetime.", False),
             ("Does it work in very cold weather?", "Modern ones work down to -20 C.", False),
             ("Who wrote Pride and Prejudice?", "Jane Austen.", True),
             ("When was it published?", "In 1813.", False)]),
]

TINY_PARAMS = {"min_data_in_leaf": 2, "min_sum_hessian_in_leaf": 1e-3, "num_leaves": 4,
               "min_data_in_bin": 1, "bagging_fraction": 1.0, "feature_fraction": 1.0}


@pytest.fixture(scope="module")
def tiny_model() -> ShiftModel:
    embedded, _, _ = embed_conversations(FIXTURE, "fixture", default_encoder(), progress=False)
    return fit_shift_model(embedded, seed=1, rounds=40, params=TINY_PARAMS).model


def test_a_model_trained_on_a_tiny_fixture_separates_shift_from_continuation(
        tiny_model: ShiftModel) -> None:
    det = ShiftDetector(model=tiny_model)

    def p(text: str) -> float:
        return det.probability(state_of(TAX), Msg(5, text))

    # conversations it never saw; no cue words, so the similarities must do the work
    shifts = [p("What is the tallest mountain in Africa?"), p("Who invented the telephone?")]
    continuations = [p("And how long does it take to get a refund?"),
                     p("Can I deduct my laptop as an expense?")]
    assert min(shifts) > max(continuations) + 0.2, (shifts, continuations)


def test_fit_is_deterministic_and_round_trips(tiny_model: ShiftModel, tmp_path: Path) -> None:
    embedded, _, _ = embed_conversations(FIXTURE, "fixture", default_encoder(), progress=False)
    again = fit_shift_model(embedded, seed=1, rounds=40, params=TINY_PARAMS).model
    assert again.to_text() == tiny_model.to_text()
    path = tiny_model.save(tmp_path / "m.txt")
    loaded = ShiftModel.load(path)
    assert loaded.threshold == tiny_model.threshold
    assert loaded.feature_names == FEATURE_NAMES
    rows, _, _, _ = replay(embedded, None)
    assert np.allclose(loaded.probabilities(rows), tiny_model.probabilities(rows))


def test_folds_keep_conversations_whole_and_are_seeded() -> None:
    embedded, _, _ = embed_conversations(FIXTURE, "fixture", default_encoder(), progress=False)
    folds = assign_folds(embedded, seed=3, folds=3)
    assert len(folds) == len(FIXTURE) and set(folds) == {0, 1, 2}
    # dealt round-robin after a seeded shuffle: fold sizes differ by at most one
    sizes = [folds.count(k) for k in range(3)]
    assert max(sizes) - min(sizes) <= 1
    assert assign_folds(embedded, seed=3, folds=3) == folds
    assert assign_folds(embedded, seed=4, folds=3) != folds


def test_replay_with_static_rows_is_the_tracker_replayed() -> None:
    """The fast replay (static rows + segment columns) must equal a tracker fed turn by turn."""
    embedded, _, _ = embed_conversations(FIXTURE[:4], "fixture", default_encoder(),
                                         progress=False)
    model = shipped_model()
    rows, _, probs, owner = replay(embedded, model.probabilities, model.threshold)
    for i, c in enumerate(embedded):
        tracker = ShiftTracker()
        expected = []
        for k, turn in enumerate(c.turns):
            if k:
                f = tracker.features(turn.question, c.questions[k])
                expected.append(f.as_row())
                shift = model.probability(f) >= model.threshold
            else:
                shift = False
            tracker.add_user(turn.question, c.questions[k], shift)
            if c.has_answer[k]:
                tracker.add_assistant(turn.answer)
        assert np.allclose(rows[owner == i], np.stack(expected), equal_nan=True)


def test_replay_matches_the_session() -> None:
    """Training replays conversations outside a session: it must see what a session sees."""
    convs = FIXTURE[:3]
    embedded, _, _ = embed_conversations(convs, "fixture", default_encoder(), progress=False)
    model = shipped_model()
    _, _, probs, owner = replay(embedded, model.probabilities, model.threshold)
    for i, c in enumerate(convs):
        det = ShiftDetector()
        s = Session(policy=SegmentPolicy(det))
        got = []
        for t in c:
            r = s.user(t.question)
            got.append(det.probability(s.state, Msg(r.turn, t.question)))
            s.assistant(t.answer)
        assert np.allclose(got[1:], probs[owner == i], atol=1e-6), (got, probs[owner == i])
