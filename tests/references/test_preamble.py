"""Preambles, question subjects and elaboration queries (turnscope.references._grammar)."""

from __future__ import annotations

import pytest

from turnscope.references._grammar import attach_topic, elaboration_query, question_subject, split_preamble


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("coming back to Portugal, do I need an international driving permit?",
         ("Do I need an international driving permit?", "Portugal")),
        ("ok back to the lasagne, can I freeze it before baking?", ("Can I freeze it before baking?", "the lasagne")),
        ("thanks! one more thing: how do I undo a git commit?", ("How do I undo a git commit?", None)),
        ("ok, totally unrelated — what's a good beginner telescope?", ("What's a good beginner telescope?", None)),
        ("going back to what you said about Lisbon, is it safe at night?", ("Is it safe at night?", "Lisbon")),
        ("great, thanks. so how much does iCloud+ cost?", ("How much does iCloud+ cost?", None)),
    ],
)
def test_split_preamble(text: str, expected: tuple[str, str | None]) -> None:
    assert split_preamble(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "How do I undo a git commit?",  # nothing to drop
        "thanks!",  # nothing left after the preamble: keep the message as it is
        "back to square one",  # no question after the back-reference
        "and the penalty, how is it calculated?",  # "and" carries the ellipsis, not a preamble
        "ところで、返品はできますか？",
    ],
)
def test_split_preamble_keeps_text(text: str) -> None:
    assert split_preamble(text) == (text, None)


def test_attach_topic() -> None:
    assert attach_topic("Can I freeze it before baking?", "the lasagne") == "Can I freeze the lasagne before baking?"
    assert attach_topic("Do I need an international driving permit?", "Portugal") == \
        "Do I need an international driving permit in Portugal?"
    # neither a pronoun to stand in for nor a place: an appended phrase would change the question
    assert attach_topic("How do I see which queries are slowest?", "the database") is None
    # two pronouns: which one is the topic is not decided here
    assert attach_topic("Is it cheaper than it was?", "the pass") is None


@pytest.mark.parametrize(
    ("question", "subject"),
    [
        ("What is a Roth IRA?", "a Roth IRA"),
        ("Why is Casablanca still so popular?", "Casablanca"),
        ("how does the london congestion charge work?", "the london congestion charge"),
        ("What's the difference between TCP and UDP?", "the difference between TCP and UDP"),
        ("Who painted the ceiling of the Sistine Chapel?", "the ceiling of the Sistine Chapel"),
        ("ok new question: how do solar panels work?", "solar panels"),
        ("Is Duolingo worth paying for?", "Duolingo"),
    ],
)
def test_question_subject(question: str, subject: str) -> None:
    assert question_subject(question) == subject


@pytest.mark.parametrize(
    "question",
    [
        "How do I reset my router?",  # the subject is the asker
        "Is it safe?",  # a pronoun subject names nothing
        "Which one is cheaper?",  # the predicate is not a subject
        "How long should my plan be?",  # leans on context
        "ルーターの再起動方法は？",
    ],
)
def test_question_subject_abstains(question: str) -> None:
    assert question_subject(question) is None


def test_elaboration_query_names_the_subject_not_the_question() -> None:
    previous = "Why is Casablanca still so popular with film critics today?"
    query = elaboration_query("could you go into more detail on that?", previous)
    assert query == "Tell me more about Casablanca"
    assert previous.rstrip("?") not in (query or "")


def test_elaboration_query_keeps_the_setting() -> None:
    assert elaboration_query("please elaborate", "what does the GIL actually do in CPython?") == \
        "Tell me more about the GIL in CPython"


@pytest.mark.parametrize(
    ("message", "previous"),
    [
        ("tell me more about the Model Y", "how fast is the Model 3?"),  # names its own topic
        ("can you go into more detail on that?", "How do I reset my router?"),  # no subject to name
        ("is it free?", "What is Notion?"),  # not an elaboration request
        ("もう少し詳しく教えて", "What is Notion?"),
    ],
)
def test_elaboration_query_abstains(message: str, previous: str) -> None:
    assert elaboration_query(message, previous) is None
