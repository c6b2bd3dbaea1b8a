"""Four classes of follow-up that structure alone settles (issue 21, point 7).

Each class is tested on the default session (no declared vocabulary, learned resolver on)
and on the rules alone (``resolver=None``): the answer must not depend on a model's mood.
The conversations are our own; none comes from a benchmark.
"""

from __future__ import annotations

import re

import pytest

from turnscope import Session

PATHS = [pytest.param("default", id="resolver"), pytest.param(None, id="rules")]


def rewrite(conversation: list[tuple[str, str]], message: str, resolver: str | None) -> str:
    s = Session(resolver=resolver)
    for role, text in conversation:
        s.add(role, text)
    return s.user(message).query


def has(text: str, term: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(term)}(?![\w-])", text, re.I) is not None


DISHWASHER = [("user", "My dishwasher leaves white spots on the glasses."),
              ("assistant", "Use a rinse aid and run a hotter cycle; hard water leaves limescale.")]


# -- 4. an opener dropped: no dangling conjunction, a capital where the question starts

@pytest.mark.parametrize("resolver", PATHS)
@pytest.mark.parametrize(("message", "expected"), [
    ("Totally different topic, but how do volcanoes form?", "How do volcanoes form?"),
    ("Unrelated: and what is the tallest tree on Earth?", "What is the tallest tree on Earth?"),
    ("Changing the subject, so why is the sky blue?", "Why is the sky blue?"),
    ("By the way, but who wrote Moby-Dick?", "Who wrote Moby-Dick?"),
])
def test_dropped_opener_leaves_the_question_as_a_sentence(resolver: str | None, message: str,
                                                          expected: str) -> None:
    assert rewrite(DISHWASHER, message, resolver) == expected


@pytest.mark.parametrize("resolver", PATHS)
@pytest.mark.parametrize(("message", "expected"), [
    ("Different question, but iOS or Android, which is more secure?",
     "iOS or Android, which is more secure?"),
    ("Something different: eBay fees for sellers?", "eBay fees for sellers?"),
])
def test_a_name_spelt_with_a_small_first_letter_keeps_it(resolver: str | None, message: str,
                                                         expected: str) -> None:
    # capitalising "iOS" or "eBay" would misspell a name; the sentence may start with it
    assert rewrite(DISHWASHER, message, resolver) == expected
