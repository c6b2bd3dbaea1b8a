"""Typed entity extraction: vocabulary, general extractor (English and Japanese), enumerations."""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

import pytest

from turnscope import ConfigError, EntityExtractor, Mention, Vocabulary, bundled_vocabulary
from turnscope.entities import GENERAL_TYPES

VOCAB = {
    "types": {
        "region": [
            {"name": "Dublin", "aliases": ["eu-west-1", "Ireland"]},
            {"name": "Frankfurt", "aliases": ["eu-central-1"]},
            "Paris",
        ],
        "service": [{"name": "EC2", "aliases": ["Elastic Compute Cloud"]}],
    }
}


@pytest.fixture
def vocab() -> Vocabulary:
    return Vocabulary.from_dict(VOCAB)


@pytest.fixture
def general() -> EntityExtractor:
    return EntityExtractor()


def names(ms: list[Mention]) -> list[str]:
    return [x.name for x in ms]


def pairs(ms: list[Mention]) -> list[tuple[str, str]]:
    return [(x.type, x.name) for x in ms]


# -- Vocabulary ---------------------------------------------------------------------------------


def test_from_dict_builds_entries(vocab: Vocabulary) -> None:
    assert len(vocab) == 4
    assert vocab.type_of("Dublin") == "region"
    assert vocab.type_of("eu-west-1") == "region"
    assert vocab.type_of("Paris") == "region"  # a bare string is a name with no aliases
    assert vocab.type_of("Lisbon") is None
    assert vocab.surfaces_of("Dublin") == ("Dublin", "eu-west-1", "Ireland")


def test_alias_maps_to_canonical_name(vocab: Vocabulary) -> None:
    found = vocab.find("What's the SLA in eu-west-1?")
    assert len(found) == 1
    f = found[0]
    assert (f.type, f.name, f.surface, f.source) == ("region", "Dublin", "eu-west-1", "vocab")
    text = "What's the SLA in eu-west-1?"
    assert text[f.start:f.end] == "eu-west-1"


def test_alias_match_is_case_insensitive(vocab: Vocabulary) -> None:
    assert names(vocab.find("SLA for EU-WEST-1 and ireland")) == ["Dublin", "Dublin"]


def test_extractor_maps_alias_to_canonical(vocab: Vocabulary) -> None:
    ms = EntityExtractor(vocab).extract("Is eu-west-1 cheaper than eu-central-1?")
    assert [(x.type, x.name) for x in ms if x.source == "vocab"] == [
        ("region", "Dublin"), ("region", "Frankfurt")]


def test_longest_surface_wins(vocab: Vocabulary) -> None:
    found = vocab.find("Elastic Compute Cloud pricing")
    assert pairs(found) == [("service", "EC2")]
    assert found[0].surface == "Elastic Compute Cloud"


@pytest.mark.parametrize("text", ["EC22 pricing", "xEC2", "EC2x", "the 1EC2 tier"])
def test_latin_name_does_not_match_inside_longer_token(vocab: Vocabulary, text: str) -> None:
    assert vocab.find(text) == []


@pytest.mark.parametrize("text", ["EC2の料金", "EC2-based instances", "(EC2)", "ec2 pricing"])
def test_latin_name_matches_at_boundaries(vocab: Vocabulary, text: str) -> None:
    assert names(vocab.find(text)) == ["EC2"]


def test_extractor_does_not_report_vocab_name_inside_longer_token(vocab: Vocabulary) -> None:
    ms = EntityExtractor(vocab).extract("What does EC22 cost?")
    assert "EC2" not in names(ms)
    assert all(x.source != "vocab" for x in ms)


def test_alias_does_not_match_longer_identifier(vocab: Vocabulary) -> None:
    assert vocab.find("eu-west-12") == []


def test_vocab_match_after_nfkc(vocab: Vocabulary) -> None:
    found = vocab.find("ＥＣ２の料金は？")
    assert names(found) == ["EC2"]
    assert found[0].surface == "ＥＣ２"


def test_cjk_names_match_as_substrings() -> None:
    v = Vocabulary.from_dict({"types": {"product": [
        {"name": "アバター案内", "aliases": ["アバター"]}]}})
    assert names(v.find("さっきのアバターの話")) == ["アバター案内"]
    assert names(v.find("アバター案内の料金は？")) == ["アバター案内"]


@pytest.mark.parametrize("data", [
    None, [], "x", {}, {"types": []}, {"types": {"region": "Dublin"}},
    {"types": {"region": [{"aliases": ["x"]}]}}, {"types": {"region": [{"name": 3}]}},
    {"types": {"region": [{"name": "Dublin", "aliases": "eu-west-1"}]}},
    {"types": {"region": [{"name": "Dublin", "aliases": [1]}]}},
])
def test_from_dict_rejects_bad_shapes(data: object) -> None:
    with pytest.raises(ConfigError):
        Vocabulary.from_dict(data)


def test_from_dict_error_names_source() -> None:
    with pytest.raises(ConfigError, match="my-vocab"):
        Vocabulary.from_dict({"types": {"region": [{"aliases": []}]}}, source="my-vocab")


def test_load_round_trip(tmp_path: Path) -> None:
    p = tmp_path / "v.json"
    p.write_text(json.dumps(VOCAB), encoding="utf-8")
    v = Vocabulary.load(p)
    assert names(v.find("eu-west-1")) == ["Dublin"]
    assert names(Vocabulary.load(str(p)).find("Paris")) == ["Paris"]


def test_load_missing_file_names_it(tmp_path: Path) -> None:
    p = tmp_path / "nope.json"
    with pytest.raises(ConfigError, match="nope.json"):
        Vocabulary.load(p)


def test_load_bad_json_names_file(tmp_path: Path) -> None:
    p = tmp_path / "broken.json"
    p.write_text("{not json", encoding="utf-8")
    with pytest.raises(ConfigError, match="broken.json"):
        Vocabulary.load(p)


@pytest.mark.parametrize("payload", [
    {"types": []}, {"types": {"region": "Dublin"}}, {"types": {"region": [{"aliases": []}]}},
    [1, 2],
])
def test_load_bad_shape_names_file(tmp_path: Path, payload: object) -> None:
    p = tmp_path / "shape.json"
    p.write_text(json.dumps(payload), encoding="utf-8")
    with pytest.raises(ConfigError, match="shape.json"):
        Vocabulary.load(p)


def test_merged(vocab: Vocabulary) -> None:
    other = Vocabulary.from_dict({"types": {"region": ["Tokyo"]}})
    both = vocab.merged(other)
    assert len(both) == len(vocab) + 1
    assert names(both.find("Tokyo and Dublin")) == ["Tokyo", "Dublin"]


def test_empty_vocabulary_finds_nothing() -> None:
    assert Vocabulary().find("Dublin") == []
    assert len(Vocabulary()) == 0


def test_bundled_vocabularies() -> None:
    cloud = bundled_vocabulary("cloud")
    assert cloud.type_of("eu-west-1") == "region"
    assert "Dublin" in names(cloud.find("SLA in eu-west-1"))
    ja = bundled_vocabulary("ja_site")
    assert "アバター案内" in names(ja.find("さっきのアバターの話"))
    with pytest.raises(ConfigError, match="nope"):
        bundled_vocabulary("nope")


# -- general extractor, English --------------------------------------------------------------------


def test_general_types_are_coarse() -> None:
    assert {"name", "term", "phrase", "attribute"} == set(GENERAL_TYPES)


def test_mentions_sorted_with_offsets(general: EntityExtractor) -> None:
    text = "Frankfurt and Dublin both support encryption."
    ms = general.extract(text)
    assert [x.start for x in ms] == sorted(x.start for x in ms)
    for x in ms:
        assert text[x.start:x.end] == x.surface


@pytest.mark.parametrize("text, expected", [
    ("Where is the Eiffel Tower?", "Eiffel Tower"),
    ("I live in New York City and work at Google.", "New York City"),
    ("I live in New York City and work at Google.", "Google"),
    ("Frankfurt and Dublin both support encryption.", "Frankfurt"),
    ("Frankfurt and Dublin both support encryption.", "Dublin"),
])
def test_proper_nouns(general: EntityExtractor, text: str, expected: str) -> None:
    ms = general.extract(text)
    hit = [x for x in ms if x.name == expected]
    assert hit, pairs(ms)
    assert hit[0].type == "name"


def test_proper_nouns_around_a_verb(general: EntityExtractor) -> None:
    # "support" is the verb of the sentence, not part of a noun phrase
    ms = general.extract("Does AWS Lambda support Python?")
    assert "AWS Lambda" in names(ms), pairs(ms)
    assert "Python" in names(ms), pairs(ms)


def test_acronym_after_verb_after_determiner(general: EntityExtractor) -> None:
    # the EntityExtractor docstring example: "both ... support" must not glue onto CMK
    v = Vocabulary.from_dict({"types": {"region": ["Dublin", "Frankfurt"]}})
    ms = EntityExtractor(v).extract("Frankfurt and Dublin both support CMK.")
    assert names(ms) == ["Frankfurt", "Dublin", "CMK"]


@pytest.mark.parametrize("text, ident", [
    ("What's the SLA in eu-west-1?", "eu-west-1"),
    ("Compare v2 and v3 of the API", "v2"),
    ("Is the S3 bucket encrypted?", "S3"),
    ("Does Dublin support IPv6?", "IPv6"),
    ("Set the config_file option", "config_file"),
])
def test_identifiers(general: EntityExtractor, text: str, ident: str) -> None:
    ms = general.extract(text)
    assert ("term", ident) in pairs(ms)


@pytest.mark.parametrize("text, acronym", [
    ("What's the SLA for Dublin?", "SLA"),
    ("Is EC2 billed per second?", "EC2"),
    ("Compare v2 and v3 of the API", "API"),
])
def test_acronyms(general: EntityExtractor, text: str, acronym: str) -> None:
    assert ("term", acronym) in pairs(general.extract(text))


def test_ok_and_i_are_not_acronyms(general: EntityExtractor) -> None:
    ms = general.extract("OK so I wonder about pricing")
    assert "OK" not in names(ms) and "I" not in names(ms)


@pytest.mark.parametrize("text, phrase", [
    ("ok different question — is the billing export API paginated?", "billing export API"),
    ("How do I reset my garage door opener?", "garage door opener"),
    ("Tell me about the billing export API", "billing export API"),
])
def test_multi_word_noun_phrases(general: EntityExtractor, text: str, phrase: str) -> None:
    ms = general.extract(text)
    assert phrase in names(ms), pairs(ms)
    assert all(x.type != "attribute" for x in ms if x.name == phrase)


def test_noun_phrase_does_not_swallow_function_words(general: EntityExtractor) -> None:
    ms = general.extract("ok different question — is the billing export API paginated?")
    for x in ms:
        assert "question" not in x.name or x.type == "attribute"
        assert "paginated" not in x.name
        assert "—" not in x.surface


def test_relational_noun_is_an_attribute(general: EntityExtractor) -> None:
    ms = general.extract("What is the rate limit of the billing export API?")
    assert ("attribute", "rate limit") in pairs(ms)
    assert "billing export API" in names(ms)


@pytest.mark.parametrize("text, quoted", [
    ('The tool is called "Night Owl" by the way.', "Night Owl"),
    ("Is “Night Owl” compatible?", "Night Owl"),
    ("「ほしぞらチャット」とは何ですか", "ほしぞらチャット"),
])
def test_quoted_names(general: EntityExtractor, text: str, quoted: str) -> None:
    lang = "ja" if "「" in text else "en"
    ms = general.extract(text, lang)
    assert ("name", quoted) in pairs(ms), pairs(ms)


def test_vocabulary_beats_general_phrase() -> None:
    ex = EntityExtractor(bundled_vocabulary("cloud"))
    ms = ex.extract("ok different question — is the billing export API paginated?")
    hits = [x for x in ms if x.name == "billing export API"]
    assert len(hits) == 1 and hits[0].type == "service" and hits[0].source == "vocab"


def test_general_off_gives_only_vocabulary(vocab: Vocabulary) -> None:
    ms = EntityExtractor(vocab, general=False).extract("Is the garage door opener in Dublin?")
    assert pairs(ms) == [("region", "Dublin")]


def test_no_mentions_in_empty_or_function_text(general: EntityExtractor) -> None:
    assert general.extract("") == []
    assert [x for x in general.extract("is it the same as that?") if x.type != "attribute"] == []


# -- general extractor, Japanese ---------------------------------------------------------------------


@pytest.mark.parametrize("text, compound", [
    ("アバター案内の料金は？", "アバター案内"),
    ("受付端末の設置方法を教えてください", "受付端末"),
    ("多言語対応のチャットボットはありますか", "チャットボット"),
    ("スタンダードプランの月額料金を教えて", "スタンダードプラン"),
])
def test_japanese_compounds(general: EntityExtractor, text: str, compound: str) -> None:
    ms = general.extract(text, "ja")
    assert compound in names(ms), pairs(ms)
    hit = next(x for x in ms if x.name == compound)
    assert hit.type == "phrase"
    assert text[hit.start:hit.end] == compound


def test_japanese_relational_noun_is_attribute(general: EntityExtractor) -> None:
    ms = general.extract("アバター案内の料金は？", "ja")
    assert ("attribute", "料金") in pairs(ms)


def test_japanese_latin_term(general: EntityExtractor) -> None:
    assert ("term", "EC2") in pairs(general.extract("EC2の料金は？", "ja"))


def test_japanese_full_width_latin_term(general: EntityExtractor) -> None:
    # full-width Latin is ordinary in Japanese text; SPEC matching is after NFKC
    ms = general.extract("ＥＣ２の料金は？", "ja")
    assert "EC2" in [unicodedata.normalize("NFKC", x.name) for x in ms], pairs(ms)


def test_japanese_vocabulary_alias() -> None:
    ex = EntityExtractor(bundled_vocabulary("ja_site"))
    ms = ex.extract("受付端末の設置方法を教えてください", "ja")
    assert ("product", "おもてなし受付") in pairs(ms)


# -- enumerations -----------------------------------------------------------------------------------


def test_enumeration_frankfurt_and_dublin(vocab: Vocabulary) -> None:
    ex = EntityExtractor(vocab)
    e = ex.enumeration("Frankfurt and Dublin both support CMK for data at rest.", 2)
    assert e is not None
    assert e.turn == 2 and not e.numbered
    assert names(list(e.items)) == ["Frankfurt", "Dublin"]


def test_enumeration_general_keeps_order(general: EntityExtractor) -> None:
    e = general.enumeration("Frankfurt and Dublin both support encryption.", 2)
    assert e is not None
    assert names(list(e.items)) == ["Frankfurt", "Dublin"]
    e = general.enumeration("Dublin, Paris and Frankfurt are in Europe.", 4)
    assert e is not None
    assert names(list(e.items))[:3] == ["Dublin", "Paris", "Frankfurt"]


def test_a_coordination_keeps_items_with_their_own_article_and_the_lists_noun(
        general: EntityExtractor) -> None:
    # "the B and the C": an article opens an item; "... and C eras": the last item holds
    # the noun of the whole list and is no name by itself, but it is still an item
    e = general.enumeration("Geologists divide it into the Paleozoic Era, the Mesozoic Era and the Cenozoic Era.", 2)
    assert e is not None and e.explicit
    assert names(list(e.items)) == ["Paleozoic Era", "Mesozoic Era", "Cenozoic Era"]
    e = general.enumeration("Geologists divide it into the Paleozoic, Mesozoic and Cenozoic eras.", 2)
    assert e is not None and e.explicit
    assert names(list(e.items)) == ["Paleozoic", "Mesozoic", "Cenozoic eras"]
    # a lower-case phrase after the last name is the sentence going on, not an item
    e = general.enumeration("Frankfurt and Dublin and data residency rules apply.", 2)
    assert e is not None
    assert names(list(e.items)) == ["Frankfurt", "Dublin"]


def test_enumeration_order_follows_text_not_vocabulary(vocab: Vocabulary) -> None:
    e = EntityExtractor(vocab).enumeration("Paris, Frankfurt or Dublin?", 1)
    assert e is not None
    assert names(list(e.items)) == ["Paris", "Frankfurt", "Dublin"]


@pytest.mark.parametrize("extractor", ["vocab", "general"])
def test_enumeration_with_parenthesised_aliases(vocab: Vocabulary, extractor: str) -> None:
    ex = EntityExtractor(vocab) if extractor == "vocab" else EntityExtractor()
    e = ex.enumeration("Frankfurt (eu-central-1) and Dublin (eu-west-1) both support CMK.", 2)
    assert e is not None
    assert names(list(e.items)) == ["Frankfurt", "Dublin"]


def test_enumeration_deduplicates(vocab: Vocabulary) -> None:
    e = EntityExtractor(vocab).enumeration("Dublin, Frankfurt or Dublin?", 1)
    assert e is not None
    assert names(list(e.items)) == ["Dublin", "Frankfurt"]


def test_numbered_lines(general: EntityExtractor) -> None:
    text = "Options:\n1) Light plan\n2) Standard plan\n3) Premium plan"
    e = general.enumeration(text, 2)
    assert e is not None and e.numbered
    assert names(list(e.items)) == ["Light plan", "Standard plan", "Premium plan"]


def test_numbered_lines_with_vocabulary(vocab: Vocabulary) -> None:
    text = "There are three options:\n1) Frankfurt (eu-central-1)\n2) Dublin\n3) Paris"
    e = EntityExtractor(vocab).enumeration(text, 2)
    assert e is not None and e.numbered
    assert names(list(e.items)) == ["Frankfurt", "Dublin", "Paris"]


def test_numbered_lines_dot_style_japanese(general: EntityExtractor) -> None:
    text = "プランは3つあります。\n1. ライトプラン\n2. スタンダードプラン\n3. プレミアムプラン"
    e = general.enumeration(text, 2, "ja")
    assert e is not None and e.numbered
    assert names(list(e.items)) == ["ライトプラン", "スタンダードプラン", "プレミアムプラン"]


def test_numbered_line_without_entity_uses_head(general: EntityExtractor) -> None:
    text = "1) enable it: then wait\n2) ask for more — later"
    e = general.enumeration(text, 3)
    assert e is not None and e.numbered and len(e.items) == 2


def test_enumeration_records_how_the_list_was_found(vocab: Vocabulary, general: EntityExtractor) -> None:
    numbered = general.enumerations("Options:\n1. Oat milk\n2. Soy milk\n3. Rice milk", 2)
    assert numbered[0].kind == "numbered" and numbered[0].explicit
    coordinated = general.enumeration("Dublin, Paris and Frankfurt are in Europe.", 2)
    assert coordinated is not None and coordinated.kind == "coordination" and coordinated.explicit
    typed = EntityExtractor(vocab).enumerations(
        "Frankfurt has the lowest latency. Dublin is cheaper. Paris opened last year.", 2)
    assert any(e.kind == "run" and e.explicit for e in typed)


def test_a_run_of_proper_names_in_a_passage_is_not_a_list(general: EntityExtractor) -> None:
    # every capitalised word of a long answer, in order: not something "the second" picks from
    passage = ("Prior to the Triassic, mammal-like reptiles dominated. According to Geologists, "
               "Pangaea formed later. However, Rodinia came first.")
    runs = [e for e in general.enumerations(passage, 4) if e.kind == "run"]
    assert runs and not any(e.explicit for e in runs)


def test_no_enumeration_for_single_entity(vocab: Vocabulary) -> None:
    assert EntityExtractor(vocab).enumeration("Dublin is covered by the SLA.", 1) is None


# -- phrase boundaries (general extractor) -------------------------------------------------
@pytest.mark.parametrize(("text", "expected"), [
    ("What is Chattanooga famous for?", ["Chattanooga"]),  # predicate adjective
    ("Is Red Bull bad for you?", ["Red Bull"]),
    ("When were the native cultures domesticated?", ["native cultures"]),  # participle
    ("How do I save for college?", ["college"]),  # noun-or-verb after a subject pronoun
    ("What foods contain iron?", ["foods", "iron"]),  # plural noun + bare verb
    ("How reliable is the test?", ["test"]),  # the degree asked about is not an entity
])
def test_noun_phrases_end_in_their_noun(general: EntityExtractor, text: str,
                                         expected: list[str]) -> None:
    assert [m.name for m in general.extract(text) if not m.is_attribute] == expected


def test_relational_head_with_adjectives_is_an_aspect(general: EntityExtractor) -> None:
    ms = general.extract("What is the main function of a virtual machine?")
    assert [(m.name, m.is_attribute) for m in ms] == [("main function", True),
                                                     ("virtual machine", False)]
    # a named method is an entity, not an aspect
    assert not general.extract("Tell me about the RICE method.")[0].is_attribute


def test_definiteness_is_recorded(general: EntityExtractor) -> None:
    bare, = general.extract("What is anemia?")
    definite, = general.extract("Can the system scale?")
    assert not bare.definite and definite.definite


def test_kinds_are_read_and_validated() -> None:
    v = Vocabulary.from_dict({"types": {"service": [
        {"name": "managed Postgres", "aliases": ["Postgres"], "kinds": ["database", "DB"]}]}})
    assert v.kinds == {"database", "db"}
    assert v.kinds_of("Postgres") == {"database", "db", "service"}
    with pytest.raises(ConfigError, match=r"types\.service\[0\]\.kinds"):
        Vocabulary.from_dict({"types": {"service": [{"name": "x", "kinds": "db"}]}})


@pytest.mark.parametrize(("text", "expected"), [
    ("What is seafloor spreading?", ["seafloor spreading"]),  # a gerund heads the phrase
    ("What makes the batteries unique?", ["batteries"]),  # adjective suffix, predicate
    ("How did Ben Franklin cook turkeys?", ["Ben Franklin", "turkeys"]),  # aux, subject, verb
])
def test_gerunds_predicates_and_inverted_questions(general: EntityExtractor, text: str,
                                                   expected: list[str]) -> None:
    assert [m.name for m in general.extract(text) if not m.is_attribute] == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("What were the purposes of the Lewis and Clark expedition?", ["Lewis and Clark expedition"]),
    ("What is unique about the Model 3?", ["Model 3"]),
    ("Which is younger and why?", []),
])
def test_names_with_coordination_and_numbers(general: EntityExtractor, text: str,
                                             expected: list[str]) -> None:
    assert [m.name for m in general.extract(text) if not m.is_attribute] == expected


def test_a_number_opening_a_noun_phrase_is_part_of_it(general: EntityExtractor) -> None:
    assert [m.name for m in general.extract("What is a 529 plan?")] == ["529 plan"]
    levels, = general.extract("How can I increase my levels naturally?")
    assert levels.definite  # a possessive points back like "the"


def test_a_perception_verb_ends_its_subject(general: EntityExtractor) -> None:
    assert [m.name for m in general.extract("a crown sounds expensive")
            if not m.is_attribute] == ["crown"]


def test_a_numbered_line_that_pairs_two_is_one_item(vocab: Vocabulary) -> None:
    text = "Sure:\n1. Frankfurt (eu-central-1) ↔ Paris\n2. Dublin (eu-west-1) ↔ Frankfurt"
    e = EntityExtractor(vocab).enumeration(text, 2)
    assert e is not None and e.numbered
    assert [m.name for m in e.items] == ["Frankfurt and Paris", "Dublin and Frankfurt"]


def test_japanese_numbered_items_end_at_their_clause(vocab: Vocabulary) -> None:
    ex = EntityExtractor(bundled_vocabulary("ja_site"))
    text = ("おもてなし受付の標準セットは3点です。1つ目がタッチパネル本体、2つ目が専用スタンド、"
            "3つ目がカメラです。入館証プリンターはオプションになります。")
    e = ex.enumeration(text, 2, "ja")
    assert e is not None and e.numbered
    assert [m.name for m in e.items][-1] == "カメラ"
