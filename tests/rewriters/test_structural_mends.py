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


# -- 1. a locative "there" names the place the conversation named -------------------

LISBON = [("user", "We're spending a week in Lisbon in June."),
          ("assistant", "Lisbon is warm then; pack light clothes and good walking shoes.")]
YELLOWSTONE = [("user", "I'm driving to Yellowstone National Park tomorrow."),
               ("assistant", "Check the road closures before you leave; some roads open late.")]
VAN_GOGH = [("user", "Where can I see paintings by Vincent van Gogh?"),
            ("assistant", "The Van Gogh Museum in Amsterdam holds over 200 of his paintings.")]


@pytest.mark.parametrize("resolver", PATHS)
def test_locative_there_names_the_city_the_user_is_visiting(resolver: str | None) -> None:
    q = rewrite(LISBON, "Are the trams there easy to use?", resolver)
    assert has(q, "Lisbon")
    assert not has(q, "there")
    assert not has(q, "June")  # a month after "in" is a time, not a place


@pytest.mark.parametrize("resolver", PATHS)
def test_there_after_a_verb_of_motion_is_a_destination(resolver: str | None) -> None:
    q = rewrite(YELLOWSTONE, "How long does it take to get there from Denver?", resolver)
    assert has(q, "to Yellowstone National Park")


@pytest.mark.parametrize("resolver", PATHS)
def test_there_names_a_building_the_answer_named(resolver: str | None) -> None:
    q = rewrite(VAN_GOGH, "What are the opening hours there?", resolver)
    assert has(q, "Van Gogh Museum")
    assert not has(q, "there")


@pytest.mark.parametrize("resolver", PATHS)
@pytest.mark.parametrize("message", ["Is there a night bus from the airport?",
                                     "What's there to do after dark?",
                                     "Are there any cheap hostels?"])
def test_existential_there_is_left_alone(resolver: str | None, message: str) -> None:
    q = rewrite(LISBON, message, resolver)
    # the dummy subject stays where it was (carrying the city elsewhere would be right)
    assert q.split()[:2] == message.split()[:2]


@pytest.mark.parametrize("resolver", PATHS)
def test_there_after_two_places_is_left_to_the_other_rules(resolver: str | None) -> None:
    # which of two places "there" is, structure does not say (found reading development
    # rewrites: "… in Dublin are sent to Frankfurt instead — why does it go there?")
    s = Session(resolver=resolver)
    s.add("user", "Which city is the better base for temples and day trips?")
    s.add("assistant", "Most visitors stay in Kyoto or in Osaka; both have good rail links.")
    rules = s.user("What's the weather like there in May?").trace["rules"]
    assert isinstance(rules, list)
    assert not any(str(rule).startswith("there->") for rule in rules)


# -- 2. a possessive "mine" / "ours" is the user's own thing named earlier -----------

ROUTER = [("user", "Our router drops the connection every evening."),
          ("assistant", "Check for a firmware update and move it away from the microwave.")]


@pytest.mark.parametrize("resolver", PATHS)
def test_mine_is_the_thing_the_user_called_my(resolver: str | None) -> None:
    q = rewrite(DISHWASHER, "How often should I descale mine?", resolver)
    assert has(q, "my dishwasher")
    assert not has(q, "mine")


@pytest.mark.parametrize("resolver", PATHS)
def test_ours_at_the_start_keeps_the_sentence_capital(resolver: str | None) -> None:
    q = rewrite(ROUTER, "Ours is five years old, should we replace it?", resolver)
    assert q.startswith("Our router is five years old")


@pytest.mark.parametrize("resolver", PATHS)
@pytest.mark.parametrize("message", ["Can a friend of mine borrow the manual?",
                                     "When did the old copper mine close?",
                                     "Do mine shafts flood often?"])
def test_mine_that_points_at_nothing_said_stays(resolver: str | None, message: str) -> None:
    q = rewrite(DISHWASHER, message, resolver)
    assert has(q, "mine") and not has(q, "my dishwasher")


# -- 3. a list item keeps its whole name, model numbers included ---------------------

CAMERAS = [("user", "Which mirrorless cameras should I look at for travel?"),
           ("assistant", "Look at the Sony Alpha 7 IV, the Canon EOS R6 Mark II and the "
                         "Nikon Z6 III; all three are weather sealed.")]
TABLETS = [("user", "Which tablets are good for drawing?"),
           ("assistant", "Artists like the Apple iPad Pro 13, the Samsung Galaxy Tab S9 Ultra "
                         "and the Microsoft Surface Pro 9.")]


@pytest.mark.parametrize("resolver", PATHS)
@pytest.mark.parametrize(("message", "item"), [
    ("How much does the second one weigh?", "Canon EOS R6 Mark II"),
    ("Does the last one have a flip screen?", "Nikon Z6 III"),
    ("Is the first one full frame?", "Sony Alpha 7 IV"),
])
def test_ordinal_takes_the_whole_model_name(resolver: str | None, message: str, item: str) -> None:
    assert has(rewrite(CAMERAS, message, resolver), item)


@pytest.mark.parametrize("resolver", PATHS)
def test_ordinal_takes_a_model_name_with_a_camel_case_word(resolver: str | None) -> None:
    q = rewrite(TABLETS, "What does the second one cost?", resolver)
    assert has(q, "Samsung Galaxy Tab S9 Ultra")
    q = rewrite(TABLETS, "Does the first one support a pen?", resolver)
    assert has(q, "Apple iPad Pro 13")


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
