"""Reference spans and candidate phrases, read off spaCy's parse."""

from __future__ import annotations

import pytest

from turnscope.language import load_parser
from turnscope.language._parse import phrases, references


@pytest.fixture(scope="module")
def nlp():  # type: ignore[no-untyped-def]
    return load_parser()


def test_person_pronouns_and_possessives(nlp) -> None:  # type: ignore[no-untyped-def]
    refs = references(nlp("did he paint her portrait?"))
    assert [(r.text, r.kind, r.possessive) for r in refs] == [("he", "person", False), ("her", "person", True)]


def test_definite_noun_phrase_is_a_reference(nlp) -> None:  # type: ignore[no-untyped-def]
    refs = references(nlp("how loud is the cheaper one"))
    assert [(r.text, r.kind) for r in refs] == [("the cheaper one", "np")]


def test_agreement_tells_two_referents_apart(nlp) -> None:  # type: ignore[no-untyped-def]
    refs = references(nlp("will she tell him if I talk to her"))
    assert [r.agreement for r in refs] == ["person:f", "person:m", "person:f"]
    assert references(nlp("is it open"))[0].agreement == "thing"


def test_phrases_keep_names_with_their_role_and_recency(nlp) -> None:  # type: ignore[no-untyped-def]
    docs = [("user", nlp("Who wrote Frankenstein?")),
            ("assistant", nlp("Mary Shelley wrote Frankenstein in 1818 at the Villa Diodati."))]
    found = {p.text: p for p in phrases(docs)}
    assert "Mary Shelley" in found and found["Mary Shelley"].distance == 1
    assert found["Mary Shelley"].role == "assistant"
    assert found["Frankenstein"].distance == 1  # the most recent mention is kept
    assert "1818" not in found  # a date names no thing a pronoun points at


def test_a_parse_is_remembered_and_the_cache_is_bounded(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from turnscope.language import _parse

    calls: list[str] = []

    def nlp(text: str) -> object:
        calls.append(text)
        return object()

    monkeypatch.setattr(_parse, "DEFAULT_PARSE_CACHE", 2)
    first = _parse.parse(nlp, "who built the Taj Mahal?")
    assert _parse.parse(nlp, "who built the Taj Mahal?") is first
    assert calls == ["who built the Taj Mahal?"]
    _parse.parse(nlp, "b")
    _parse.parse(nlp, "c")  # the oldest entry goes
    assert _parse.parse(nlp, "who built the Taj Mahal?") is not first
