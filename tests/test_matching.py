"""SPEC section 4 term matching."""

from __future__ import annotations

import string

import pytest
from hypothesis import given
from hypothesis import strategies as st

from turnscope._exceptions import InputError
from turnscope._lexicon import (
    TermCheck,
    check_terms,
    contains_any,
    contains_term,
    normalize,
)

ALNUM = string.ascii_letters + string.digits
latin_terms = st.text(alphabet=ALNUM + "-. ", min_size=1, max_size=12).filter(
    lambda t: t.strip() != "" and t[0] in ALNUM and t[-1] in ALNUM
)
cjk_terms = st.text(alphabet="あいうえおカキクケコ漢字検索頁", min_size=1, max_size=6)


def test_normalize_applies_nfkc_and_casefold() -> None:
    assert normalize("ＥＣ２") == "ec2"
    assert normalize("Straße") == "strasse"
    assert normalize("ｶﾀｶﾅ") == "カタカナ"


@pytest.mark.parametrize(
    ("text", "term"),
    [
        ("EC2の料金", "EC2"),
        ("an EC2-based setup", "EC2"),
        ("(EC2)", "ec2"),
        ("Dublin.", "dublin"),
        ("ＥＣ２ instances", "ec2"),
        ("the billing\n export API", "billing export"),
        ("eu-west-1 region", "eu-west-1"),
    ],
)
def test_latin_term_matches_at_non_alphanumeric_boundaries(text: str, term: str) -> None:
    assert contains_term(text, term)


@pytest.mark.parametrize(
    ("text", "term"),
    [
        ("EC22 pricing", "EC2"),
        ("aEC2", "EC2"),
        ("Dubliners", "Dublin"),
        ("billingexport", "billing export"),
        ("sharks", "shark"),
    ],
)
def test_latin_term_does_not_match_glued_to_letters_or_digits(text: str, term: str) -> None:
    assert not contains_term(text, term)


def test_cjk_term_matches_as_substring() -> None:
    assert contains_term("このページは何？", "ページ")
    assert contains_term("アバターについて詳しく", "アバター")
    # a CJK term is a substring even when glued to Latin letters
    assert contains_term("EC2インスタンス", "インスタンス")
    assert not contains_term("このページは何？", "サイト")


def test_empty_term_is_an_input_error() -> None:
    with pytest.raises(InputError):
        contains_term("anything", "  ")
    with pytest.raises(InputError):
        contains_any("anything", [])


def test_contains_any_accepts_a_string_or_alternatives() -> None:
    assert contains_any("RPO for Dublin", "Dublin")
    assert contains_any("RPO for eu-west-1", ["Dublin", "eu-west-1"])
    assert not contains_any("RPO for Frankfurt", ["Dublin", "eu-west-1"])


def test_check_terms_reports_hits_and_missing_alternatives() -> None:
    check = check_terms(
        "Is the billing export API paginated in Dublin?",
        required=["billing export", ["RPO", "recovery point"], "paginated"],
        forbidden=["Dublin", "SLA"],
    )
    assert check == TermCheck(forbidden_hits=("Dublin",), required_missing=("RPO|recovery point",))
    assert check.contaminated
    assert not check.covered


def test_check_terms_clean_and_complete() -> None:
    check = check_terms("uptime SLA Dublin", [["Dublin", "eu-west-1"], "sla"], ["Frankfurt"])
    assert check.covered
    assert not check.contaminated
    assert check_terms("anything", [], []) == TermCheck((), ())


def test_term_check_is_frozen() -> None:
    check = TermCheck((), ())
    with pytest.raises(AttributeError):
        check.forbidden_hits = ("x",)  # type: ignore[misc]


@given(term=latin_terms, left=st.text(max_size=8), right=st.text(max_size=8))
def test_term_matches_itself_between_spaces(term: str, left: str, right: str) -> None:
    assert contains_term(f"{left} {term} {right}", term)
    assert contains_term(f"{left} {term.upper()} {right}", term.lower())


@given(term=latin_terms, glue=st.sampled_from(ALNUM), left_side=st.booleans())
def test_term_never_matches_glued_to_an_ascii_letter_or_digit(
    term: str, glue: str, left_side: bool
) -> None:
    # every occurrence of the term in glue+term (or term+glue) touches an ASCII
    # letter or digit, because the term itself starts and ends with one
    text = f"{glue}{term}" if left_side else f"{term}{glue}"
    assert not contains_term(text, term)
    assert not contains_term(f"# {glue}{term}{glue} #", term)


@given(term=cjk_terms, left=st.text(alphabet=ALNUM + "あ漢", max_size=5), right=st.text(max_size=5))
def test_cjk_term_always_matches_as_substring(term: str, left: str, right: str) -> None:
    assert contains_term(f"{left}{term}{right}", term)


@given(text=st.text(max_size=30), terms=st.lists(latin_terms, min_size=1, max_size=4))
def test_check_terms_agrees_with_contains(text: str, terms: list[str]) -> None:
    check = check_terms(text, [terms], terms)
    assert check.covered == contains_any(text, terms)
    assert set(check.forbidden_hits) == {t for t in terms if contains_term(text, t)}
