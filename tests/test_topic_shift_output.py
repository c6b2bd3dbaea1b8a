"""The ``topic_shift`` a session outputs is the learned detector's decision (issue 21),
or an explicit pivot cue, whatever the rewriter and the scope policy."""

from __future__ import annotations

import pytest

from turnscope import RewriteRequest, RewriteResult, Session
from turnscope.conversation import ConversationState, Role, Turn
from turnscope.resolver._shift import ShiftDetector

# (role, text); written before it was run: a subject, a continuation, a drift into the
# answer, an explicit change of subject, and a continuation of the new subject
CONVERSATION = (
    ("user", "How do bees make honey?"),
    ("assistant", "Worker bees collect nectar, break its sugars down with enzymes and "
                  "evaporate the water by fanning their wings inside the hive."),
    ("user", "How long does that take?"),
    ("assistant", "A few days for the nectar to ripen; a hive makes several kilograms in a "
                  "good summer."),
    ("user", "Do they eat it in winter?"),
    ("assistant", "Yes, the colony lives on stored honey through the winter cluster."),
    ("user", "ok different question: who designed the Eiffel Tower?"),
    ("assistant", "Gustave Eiffel's company built it; Maurice Koechlin and Emile Nouguier "
                  "drew the first design."),
    ("user", "When was it finished?"),
)


def detector_decisions() -> list[bool]:
    """The detector alone over a bare conversation state fed the same turns: its
    thresholded decision for every user turn."""
    det = ShiftDetector()
    state = ConversationState()

    class Msg:
        def __init__(self, index: int, text: str) -> None:
            self.index, self.text = index, text

    out = []
    for role, text in CONVERSATION:
        idx = state.last_index + 1
        if role == "user":
            out.append(det.is_shift(state, Msg(idx, text)))
        state.turns.append(Turn(idx, Role(role), text))
    return out


class AlwaysShift:
    """A backend whose own flag says every turn changes the subject."""

    name = "always-shift"

    def run(self, request: RewriteRequest) -> RewriteResult:
        return RewriteResult(request.message.text, "standalone", True, (), None,
                             backend=self.name)


def outputs(**kwargs: object) -> list[tuple[bool, dict[str, object]]]:
    s = Session(**kwargs)  # type: ignore[arg-type]
    out = []
    for role, text in CONVERSATION:
        if role == "user":
            r = s.user(text)
            out.append((r.topic_shift, dict(r.trace)))
        else:
            s.assistant(text)
    return out


@pytest.mark.parametrize("kwargs", [{}, {"policy": "full"}, {"resolver": None},
                                    {"rewriter": AlwaysShift()}],
                         ids=["default", "full-policy", "rules-only", "other-backend"])
def test_the_output_field_is_the_detectors_decision(kwargs: dict[str, object]) -> None:
    expected = detector_decisions()
    # the conversation exercises both answers: the pivot cue is decisive, the opening
    # question has nothing to shift from
    assert expected[0] is False and expected[3] is True
    got = outputs(**kwargs)
    # a follow-up whose reference the rewriter resolved against the previous exchange
    # ("When was it finished?" -> the Eiffel Tower) continues its subject whatever the
    # detector scores (issue 31); every other turn is the detector's decision
    resolved = [trace["shift_decided_by"] == "resolved-reference" for _, trace in got]
    assert [shift for shift, _ in got] == [e and not r for e, r in zip(expected, resolved, strict=True)]
    for (shift, trace), was_resolved in zip(got, resolved, strict=True):
        p, t = trace["shift_probability"], trace["shift_threshold"]
        assert isinstance(p, float) and isinstance(t, float)
        if was_resolved:
            assert p >= t and shift is False  # only a detector's shift is overridden
        else:
            assert trace["shift_decided_by"] == "detector"
            assert shift == (p >= t)


def test_the_rewriters_own_flag_stays_in_the_trace() -> None:
    got = outputs(rewriter=AlwaysShift())
    assert all(trace["rewriter_topic_shift"] is True for _, trace in got)
    assert [shift for shift, _ in got] == detector_decisions()
    assert all(trace["decided_by"] == "rewriter" for _, trace in got)


def _bundled_conversations() -> list[list[tuple[str, str, dict[str, str | None] | None]]]:
    """Every bundled item as a conversation (role, text, screen) ending with its follow-up."""
    from turnscope.evaluation import bundled_items

    return [[*((t.role, t.content, t.screen.model_dump() if t.screen else None)
               for t in item.prefix),
             ("user", item.follow_up, item.screen.model_dump() if item.screen else None)]
            for item in bundled_items()]


def test_the_state_keeps_the_outputs_decision_on_every_bundled_turn() -> None:
    # one decision per turn: what the output says is what later turns read back from the
    # conversation's records (issue 38)
    from turnscope.evaluation import bundled_session_vocabulary

    vocabulary = bundled_session_vocabulary()
    turns = shifts = 0
    differ = []
    for conv in _bundled_conversations():
        s = Session(vocabulary=vocabulary)
        for role, text, screen in conv:
            if role != "user":
                s.assistant(text, screen=screen)
                continue
            r = s.user(text, screen=screen)
            turns += 1
            shifts += r.topic_shift
            if s.state.resolved[r.turn].topic_shift != r.topic_shift:
                differ.append((r.turn, text))
    assert differ == []
    # the set holds both answers, so the comparison means something
    assert turns >= 100 and 0 < shifts < turns, (turns, shifts)
