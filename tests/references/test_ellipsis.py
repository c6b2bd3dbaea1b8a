"""Elliptical follow-ups parsed and substituted (turnscope.references._grammar)."""

from __future__ import annotations

import pytest

from turnscope.references._grammar import Fragment, parse_fragment, substitute, substitute_in_thread


@pytest.mark.parametrize(
    ("text", "phrase", "prep", "kind"),
    [
        ("and in Spain?", "Spain", "in", "place"),
        ("what about to new zealand?", "New Zealand", "to", "place"),
        ("And in 2019?", "2019", "in", "year"),
        ("how about in the summer?", "the summer", "in", "season"),
        ("and for toddlers?", "toddlers", "for", "age_group"),
        ("what about the Galaxy S24 Ultra?", "the Galaxy S24 Ultra", None, "product"),
        ("and the Model 3?", "the Model 3", None, "product"),
        ("does it differ in version 3.11?", "3.11", "in", "version"),
        ("and the producer?", "the producer", None, "other"),
        ("what about with a Canadian passport?", "a Canadian passport", "with", "other"),
    ],
)
def test_parse_fragment(text: str, phrase: str, prep: str | None, kind: str) -> None:
    frag = parse_fragment(text)
    assert frag is not None
    assert (frag.phrase, frag.preposition, frag.kind) == (phrase, prep, kind)


@pytest.mark.parametrize(
    "text",
    [
        "and if the package never arrives?",  # a clause, not a phrase
        "and the fee, when is it charged?",  # a phrase followed by a question of its own
        "what about it?",  # a pronoun: nothing to swap in
        "Is the Galaxy S24 waterproof?",  # a whole question
        "and what happens if I cancel the order after it ships tomorrow?",
        "で、冬は？",
    ],
)
def test_parse_fragment_rejects(text: str) -> None:
    assert parse_fragment(text) is None


def _sub(previous: str, follow_up: str) -> str | None:
    frag = parse_fragment(follow_up)
    assert frag is not None
    return substitute(previous, frag)


@pytest.mark.parametrize(
    ("previous", "follow_up", "expected"),
    [
        ("What is the VAT rate in Italy?", "and in Spain?", "What is the VAT rate in Spain?"),
        ("Who won the Tour de France in 2019?", "and in 2021?", "Who won the Tour de France in 2021?"),
        ("What is the recommended dose of vitamin D for adults?", "and for toddlers?",
         "What is the recommended dose of vitamin D for toddlers?"),
        ("Is the Galaxy S23 waterproof?", "what about the Galaxy S24 Ultra?", "Is the Galaxy S24 Ultra waterproof?"),
        ("How do I install pip in Python 3.8?", "does it differ in version 3.11?",
         "How do I install pip in Python 3.11?"),
        ("What's the warranty on refurbished laptops?", "and on new laptops?",
         "What's the warranty on new laptops?"),
        ("Can I enter Canada with a US passport?", "what about with a Mexican passport?",
         "Can I enter Canada with a Mexican passport?"),
        ("What is the best time to visit Iceland?", "and in the winter?",
         "What is the best time to visit Iceland in the winter?"),
        ("Who wrote the screenplay for Amadeus?", "and the producer?", "Who is the producer of Amadeus?"),
        ("What is the population of Peru?", "and the official languages?",
         "What are the official languages of Peru?"),
    ],
)
def test_substitute(previous: str, follow_up: str, expected: str) -> None:
    result = _sub(previous, follow_up)
    assert result == expected


def test_substitute_never_keeps_the_replaced_part() -> None:
    result = _sub("How much is a train ticket from Paris to Lyon in 2023?", "and in 2025?")
    assert result is not None and "2023" not in result and "2025" in result


@pytest.mark.parametrize(
    ("previous", "follow_up"),
    [
        ("Is Madrid warmer than Lisbon?", "and Rome?"),  # two places: which one goes is unknown
        ("What changed between 2019 and 2020?", "and in 2021?"),  # two years
        ("How do I get a refund?", "and for clothing?"),  # no phrase of that kind or preposition
        ("and for clothing?", "And sale items?"),  # the previous question is itself a fragment
        ("Who composed the music for it?", "and the producer?"),  # a topic that is a pronoun
        ("How do I install Redis?", "does it differ in version 7?") ,  # no version to replace
    ],
)
def test_substitute_abstains(previous: str, follow_up: str) -> None:
    assert _sub(previous, follow_up) is None


def test_substitute_in_thread_prefers_a_same_kind_part_in_an_earlier_question() -> None:
    frag = parse_fragment("and to Ireland?")
    assert frag is not None
    thread = ["How long does delivery to Germany take?", "Can I track the parcel?"]
    assert substitute_in_thread(thread, frag) == "How long does delivery to Ireland take?"


def test_substitute_in_thread_completes_the_latest_when_nothing_matches() -> None:
    frag = parse_fragment("and in winter?")
    assert frag is not None
    assert substitute_in_thread(["Is Reykjavik worth visiting?"], frag) == "Is Reykjavik worth visiting in winter?"


def test_fragment_is_frozen() -> None:
    frag = Fragment("Spain", "in", "place", "and")
    with pytest.raises(AttributeError):
        frag.phrase = "Italy"  # type: ignore[misc]


def test_japanese_previous_question() -> None:
    frag = parse_fragment("and in Spain?")
    assert frag is not None
    assert substitute("イタリアの消費税率は？", frag) is None


def test_which_of_pair() -> None:
    from turnscope.references import which_of_pair

    assert which_of_pair("Which one is faster?", "What's the difference between Django and Flask?") \
        == "Which one is faster, Django or Flask?"
    assert which_of_pair("which is cheaper?", "Tell me more about Vue or Svelte") \
        == "which is cheaper, Vue or Svelte?"
    assert which_of_pair("Which one is faster?", "What is Django?") is None
    assert which_of_pair("Which one is faster than Rails?", "Django and Flask?") is None


def test_a_fragment_keeps_the_wh_word_of_the_question() -> None:
    from turnscope.references import parse_fragment, substitute_in_thread

    frag = parse_fragment("What about environmental factors?")
    assert frag is not None
    assert substitute_in_thread(["What factors led to the collapse of trade?"], frag) \
        == "What environmental factors led to the collapse of trade?"


def test_completion_needs_a_short_phrase_and_a_real_topic() -> None:
    from turnscope.references import parse_fragment, substitute_in_thread

    frag = parse_fragment("What about the causes in North America?")
    assert frag is not None
    assert substitute_in_thread(["Besides, what were the causes in Europe?"], frag) != \
        "What is the causes in North America of Besides?"


def test_a_place_is_not_added_beside_a_name_the_places_list_does_not_know() -> None:
    from turnscope.references import parse_fragment, substitute_in_thread

    frag = parse_fragment("and in France?")
    assert frag is not None
    # "Bavaria" may be the very part swapped: writing France beside it would keep it
    assert substitute_in_thread(["What is the VAT rate in Ruritania?"], frag) is None
    assert substitute_in_thread(["What is the standard tax rate?"], frag) \
        == "What is the standard tax rate in France?"


def test_a_name_is_never_completed_with_the_previous_subject() -> None:
    from turnscope.references import parse_fragment, substitute_in_thread

    frag = parse_fragment("and the Galaxy Ultra?")
    assert frag is not None
    assert substitute_in_thread(["What is the battery life of the iPhone?"], frag) is None


def test_nothing_is_appended_beside_a_part_the_closed_lists_do_not_know() -> None:
    from turnscope.references import parse_fragment, substitute_in_thread

    winter = parse_fragment("and in winter?")
    assert winter is not None
    assert substitute_in_thread(["Is it busy in Kyoto in July?"], winter) is None
    teens = parse_fragment("and for teenagers?")
    assert teens is not None
    assert substitute_in_thread(["How much sleep does a 30-year-old need?"], teens) is None


def test_a_place_that_begins_a_longer_name_is_not_swapped() -> None:
    from turnscope.references import parse_fragment, substitute_in_thread

    frag = parse_fragment("and in Paris?")
    assert frag is not None
    assert substitute_in_thread(["How much is a monthly pass on the London Underground?"], frag) is None


def test_an_adverbial_is_not_completed() -> None:
    from turnscope.references import parse_fragment, substitute_in_thread

    frag = parse_fragment("and the year after?")
    assert frag is None or substitute_in_thread(["Which team won the league in 2016?"], frag) \
        != "What is the year after of the league?"


def test_a_possessive_subject_is_completed_with_its_owner() -> None:
    assert substitute("Who composed Parasite's music?", parse_fragment("and the cinematographer?")) \
        == "Who is the cinematographer of Parasite?"
    # what the name owns is more than one word: whose cinematographer is not known
    assert substitute("Is Bong Joon-ho's new film out?", parse_fragment("and the cinematographer?")) is None
