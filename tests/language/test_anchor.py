"""The topic anchor: the segment's opening subject, carried only where the message has none."""

from __future__ import annotations

import pytest

from turnscope.language import load_parser, topic_anchor

SEGMENT = [("user", "can herbs grow on a shady balcony?"),
           ("assistant", "Mint, parsley and chives cope with partial shade; keep the herbs in pots that drain.")]


@pytest.fixture(scope="module")
def nlp():  # type: ignore[no-untyped-def]
    return load_parser()


def test_a_follow_up_without_a_subject_takes_the_one_that_comes_back(nlp) -> None:  # type: ignore[no-untyped-def]
    anchor, reason = topic_anchor("how often should i water", "how often should i water", SEGMENT, nlp)
    assert anchor is not None and reason == "carried"
    assert anchor.phrase == "herbs"
    # every word typed stays, in order, before the carried subject
    assert anchor.query == "how often should i water (herbs)"


@pytest.mark.parametrize(("message", "reason"), [
    ("what about tomatoes in Lisbon", "names its own subject"),
    ("and the basil?", "substitutes a subject"),
    ("what about watering", "substitutes a subject"),
    ("does she sell them", "points at a person"),
    ("how about the other one", "substitutes a subject"),
    ("is the cheaper one fine", "contrasts or picks"),
    ("going back to the soil thing, how deep", "returns to an earlier thread"),
])
def test_a_message_with_its_own_subject_keeps_it(nlp, message: str, reason: str) -> None:  # type: ignore[no-untyped-def]
    anchor, why = topic_anchor(message, message, SEGMENT, nlp)
    assert anchor is None
    assert why == reason


def test_a_name_the_rules_put_in_counts_as_the_messages_own(nlp) -> None:  # type: ignore[no-untyped-def]
    anchor, why = topic_anchor("how tall does it get", "how tall does Parsley Giant get", SEGMENT, nlp)
    assert anchor is None and why == "names its own subject"


def test_an_opening_that_compares_gives_no_anchor(nlp) -> None:  # type: ignore[no-untyped-def]
    segment = [("user", "is the Vitamix or the Ninja blender better?"),
               ("assistant", "The blender from Vitamix lasts longer.")]
    anchor, why = topic_anchor("how loud is it", "how loud is it", segment, nlp)
    assert anchor is None and why == "the opening compares several things"


def test_a_word_that_never_comes_back_is_not_the_subject(nlp) -> None:  # type: ignore[no-untyped-def]
    segment = [("user", "different topic: my landlord kept the deposit"),
               ("assistant", "You can claim it back through the scheme.")]
    anchor, why = topic_anchor("how long does that take", "how long does that take", segment, nlp)
    assert anchor is None and why == "no subject comes back"


def test_no_anchor_when_the_query_already_names_it(nlp) -> None:  # type: ignore[no-untyped-def]
    anchor, why = topic_anchor("how often should i water herbs", "how often should i water herbs", SEGMENT, nlp)
    assert anchor is None and why == "the query names it"


def test_without_a_cue_a_noun_of_its_own_keeps_the_message_as_typed(nlp) -> None:  # type: ignore[no-untyped-def]
    message = "how long do guinea pigs live"
    anchor, why = topic_anchor(message, message, SEGMENT, nlp, cue=False)
    assert anchor is None and why == "a noun of its own"
    # the same message with only the segment's own nouns takes the anchor
    anchor, _ = topic_anchor("are the pots fine", "are the pots fine", SEGMENT, nlp, cue=False)
    assert anchor is not None and anchor.phrase == "herbs"


def test_a_previous_question_that_moved_the_subject_keeps_the_opening_out(nlp) -> None:  # type: ignore[no-untyped-def]
    segment = [("user", "what are the symptoms of throat cancer?"),
               ("assistant", "Throat cancer often starts with a sore throat that lasts."),
               ("user", "tell me about lung cancer"),
               ("assistant", "It is the leading cause of cancer deaths.")]
    anchor, why = topic_anchor("how is it treated", "how is it treated", segment, nlp)
    assert anchor is None and why == "the previous question moved the subject"
