"""SPEC section 7 content words."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from turnscope._lexicon import STOP_WORDS, content_words, is_content, stem, tokens


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        ("companies", "company"),
        ("ties", "ty"),
        ("classes", "class"),
        ("boxes", "box"),
        ("quizzes", "quizz"),
        ("churches", "church"),
        ("dishes", "dish"),
        ("sharks", "shark"),
        ("glass", "glass"),
        ("virus", "virus"),
        ("analysis", "analysis"),
        ("gases", "gase"),
        ("cancer", "cancer"),
    ],
)
def test_stem_follows_the_spec_rules(word: str, expected: str) -> None:
    assert stem(word) == expected


def test_content_words_keeps_order_and_repeats() -> None:
    text = "What are the main types of sharks? Are Sharks endangered?"
    assert content_words(text) == ["main", "type", "shark", "shark", "endangered"]


def test_tokens_are_alphanumeric_with_inner_hyphens_and_longer_than_two() -> None:
    assert content_words("The Six-Day War, EC2 and AI in the US") == ["six-day", "war", "ec2"]
    assert content_words("What's Darwin’s theory?") == ["darwin", "theory"]


def test_tokens_return_surface_and_stem() -> None:
    assert tokens("Mako sharks and Companies") == [
        ("mako", "mako"),
        ("sharks", "shark"),
        ("companies", "company"),
    ]


def test_full_width_latin_is_tokenised_like_ascii() -> None:
    assert content_words("ＧＭＯ labels") == ["gmo", "label"]


@pytest.mark.parametrize(
    "word", ["tell", "know", "does", "what", "which", "about", "their", "they", "others", "the"]
)
def test_common_words_are_stop_words(word: str) -> None:
    assert not is_content(word)
    assert content_words(f"{word} {word.upper()}") == []


def test_stop_word_list_is_lower_case_and_sized_for_function_words() -> None:
    assert all(w == w.lower() and len(w) > 2 for w in STOP_WORDS)
    assert 250 <= len(STOP_WORDS) <= 450
    # topic-bearing words must survive
    for word in ["cancer", "throat", "shark", "type", "kind", "symptom", "cost"]:
        assert word not in STOP_WORDS


@given(st.text(max_size=60))
def test_content_words_are_lowercase_stemmed_and_not_stop_words(text: str) -> None:
    for surface, stemmed in tokens(text):
        assert surface == surface.lower()
        assert len(surface) > 2
        assert stemmed == stem(surface)
        assert surface not in STOP_WORDS and stemmed not in STOP_WORDS


@given(st.from_regex(r"[a-z]{3,10}", fullmatch=True))
def test_stem_only_shortens_the_word(word: str) -> None:
    stemmed = stem(word)
    assert len(stemmed) <= len(word)
    assert word.startswith(stemmed[:-1])
