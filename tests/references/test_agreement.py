"""Pronoun agreement and person names decided by grammar (turnscope.references._grammar)."""

from __future__ import annotations

import pytest

from turnscope.references._grammar import is_person, person_names, pronoun_agreement


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("When was she born?", "person"),
        ("what did he study at Oxford?", "person"),
        ("Is his latest book any good?", "person"),
        ("does it support transactions?", "thing"),
        ("what is its boiling point?", "thing"),
        ("when did they split up?", "plural"),
        ("where is their head office?", "plural"),
    ],
)
def test_pronoun_agreement_kinds(text: str, expected: str) -> None:
    assert pronoun_agreement(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "What is the boiling point of water?",  # no pronoun at all
        "how long does it take to boil an egg?",  # a dummy "it" says nothing about an antecedent
        "is it possible to freeze cooked rice?",
        "did he ever perform in it?",  # person and thing together: the evidence disagrees
        "Who handles IT support here?",  # the field, not the pronoun
        "彼は何歳ですか？",  # Japanese is out of scope
    ],
)
def test_pronoun_agreement_abstains(text: str) -> None:
    assert pronoun_agreement(text) is None


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("Vertigo (1958) was directed by Alfred Hitchcock and stars James Stewart.", ("Alfred Hitchcock",)),
        ("The novel was written by Chimamanda Ngozi Adichie in 2006.", ("Chimamanda Ngozi Adichie",)),
        ("Marie Curie was born in Warsaw in 1867.", ("Marie Curie",)),
        ("Satya Nadella, the CEO of Microsoft, announced the deal.", ("Satya Nadella",)),
        ("The board praised CEO Lisa Su for the turnaround.", ("Lisa Su",)),
        ("Ada Lovelace (born 1815) wrote the first published algorithm.", ("Ada Lovelace",)),
        ("The clinic is run by Dr Okafor and two nurses.", ("Okafor",)),
        ("Hayao Miyazaki is a Japanese animator and director.", ("Hayao Miyazaki",)),
        ("Serena Williams won the final. She beat her sister in straight sets.", ("Serena Williams",)),
        ("The bridge was built for the city. Its engineers, Emily Warren Roebling and Washington Roebling,"
         " finished it in 1883.", ("Emily Warren Roebling", "Washington Roebling")),
        ("Jacinda Ardern was named prime minister in 2017.", ("Jacinda Ardern",)),
    ],
)
def test_person_names_from_grammar(text: str, names: tuple[str, ...]) -> None:
    assert person_names(text) == names


@pytest.mark.parametrize(
    "text",
    [
        "The game was developed by Nintendo and released in 2017.",  # a company after a weak "by"
        "Spirited Away (2001) won the Academy Award for Best Animated Feature.",  # a dated work
        "The Golden Gate Bridge was designed by the firm of Joseph Strauss's office.",
        "Goldman Sachs Group reported higher profits.",  # an organisation suffix
        "It runs on Apache Kafka and ships with Confluent Cloud.",  # names with no person grammar
        "The model was designed by Tesla Motors engineers.",
        "Toy Story was made by Pixar Animation Studios.",
        "ミヤザキハヤオは監督です。",
    ],
)
def test_person_names_none_without_person_grammar(text: str) -> None:
    assert person_names(text) == ()


def test_possessive_does_not_make_the_owner_a_by_object() -> None:
    # "designed by X's company": the company designed it, the grammar says nothing about X
    assert person_names("The hall was designed by Frank Gehry's studio in Los Angeles.") == ()


def test_is_person_true_false_and_unknown() -> None:
    texts = ["Vertigo (1958) was directed by Alfred Hitchcock.", "Hitchcock later moved to Universal."]
    assert is_person("Alfred Hitchcock", texts) is True
    assert is_person("Hitchcock", texts) is True  # the surname of a name introduced as a person
    assert is_person("Vertigo", texts) is False
    assert is_person("Universal", texts) is None


def test_is_person_abstains_when_texts_disagree() -> None:
    texts = ["Jordan was born in Brooklyn.", "Jordan is a country in the Middle East."]
    assert is_person("Jordan", texts) is None


def test_is_person_false_for_a_made_thing() -> None:
    assert is_person("Django", ["Django was created by Adrian Holovaty and Simon Willison."]) is False


def test_thing_subject_goes_one_question_back_past_a_person() -> None:
    from turnscope.references import question_subject, thing_subject

    questions = [("How old is Hayao Miyazaki?", "Hayao Miyazaki was born in 1941."),
                 ("Who directed the film Spirited Away?",
                  "Spirited Away was directed by Hayao Miyazaki.")]
    assert thing_subject("who wrote the music for it?", questions, question_subject) == (
        "who wrote the music for the film Spirited Away?", "the film Spirited Away")


def test_thing_subject_abstains_on_a_rival_a_plural_or_two_its() -> None:
    from turnscope.references import question_subject, thing_subject

    q = [("does Redis support vector search?", "Yes, Redis supports vector search in Redis Stack.")]
    assert thing_subject("how do I enable it?", q, question_subject, rival="vector search") is None
    q = [("What are the best hiking boots?", "The best hiking boots are light and waterproof.")]
    assert thing_subject("are they waterproof?", q, question_subject) is None
    q = [("What is a heat pump?", "A heat pump moves heat from outside air into the house.")]
    assert thing_subject("is it better than its rival?", q, question_subject) is None
    assert thing_subject("it's loud, isn't it?", q, question_subject) is None


def test_person_names_cut_a_repeated_title() -> None:
    from turnscope.references import person_names

    assert person_names("Johnny Bench Johnny Lee Bench (born December 7, 1947) is an "
                        "American former baseball catcher.") == ("Johnny Bench",)


def test_an_organisation_by_its_roles_is_not_a_person() -> None:
    from turnscope.references import is_person

    assert is_person("Apple", ["Tim Cook has been Apple's chief executive since 2011."]) is False
    assert is_person("Apple", ["Tim Cook is the CEO of Apple."]) is False
