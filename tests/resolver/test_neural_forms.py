"""Text helpers of the neural training data: dropping a follow-up's pointer."""

from __future__ import annotations

import pytest

from turnscope.resolver._neural_forms import drop_pointer


@pytest.mark.parametrize(("question", "form", "topic", "expected"), [
    ("what is its population?", "it", "Lyon", "what is the population?"),
    ("What were his other businesses?", "he", "Eli Lilly", "What were the other businesses?"),
    ("what were her famous films?", "she", "Vivien Leigh", "what were the famous films?"),
    ("what is the history of this city?", "description", "Lyon", "what is the history?"),
    ("what is this company's history?", "description", "Royal Mail", "what is the history?"),
    ("how is the climate there?", "there", "Kirzhach", "how is the climate?"),
    ("what are the main themes of it?", "it", "The Neverending Story", "what are the main themes?"),
])
def test_the_pointer_goes_and_the_question_still_reads(question: str, form: str, topic: str,
                                                       expected: str) -> None:
    assert drop_pointer(question, form, topic) == expected


@pytest.mark.parametrize(("question", "form", "topic"), [
    ("when was it released?", "it", "Jaws"),           # the grammatical subject: nothing reads without it
    ("who voiced her in the film?", "she", "Elsa"),    # an object mid-question
    ("is it big?", "it", "Saturn"),                    # too short once dropped
    ("did she marry him?", "he", "Pierre Curie"),      # an object that is the question's point
    ("tell me about it and its moons", "it", "Saturn"),  # two pointers: which one is a guess
])
def test_no_dropped_form_where_the_pointer_carries_the_question(question: str, form: str,
                                                                topic: str) -> None:
    assert drop_pointer(question, form, topic) is None
