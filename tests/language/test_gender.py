"""A name's agreement with a person pronoun, from first names counted in GAP."""

from __future__ import annotations

from turnscope.language._gender import gender_agreement, name_gender


def test_first_names_counted_in_gap() -> None:
    assert name_gender("Mary Shelley") == "f"
    assert name_gender("Arthur McDonald") == "m"


def test_a_title_decides_and_a_bare_surname_borrows_the_full_name() -> None:
    assert name_gender("Mrs. Dalloway") == "f"
    assert name_gender("Shelley", ["Mary Shelley", "The Vampyre"]) == "f"


def test_unknown_names_and_non_person_pronouns_give_no_evidence() -> None:
    assert name_gender("Zqxv Blorp") is None
    assert gender_agreement("it", "Mary Shelley") == 0.0
    assert gender_agreement("she", "Zqxv Blorp") == 0.0


def test_agreement_is_signed() -> None:
    assert gender_agreement("she", "Mary Shelley") == 1.0
    assert gender_agreement("his", "Mary Shelley") == -1.0
