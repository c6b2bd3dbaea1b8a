"""Reference classes, follow-up cues, ordinals and pivots (SPEC section 3)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from turnscope import (
    Classification,
    EntityExtractor,
    ReferenceClass,
    bundled_vocabulary,
    classify,
    follow_up_cue,
)
from turnscope.references import Cue, Ordinal, find_ordinal, find_ordinal_span

GENERAL = EntityExtractor()
VOCAB = {"en": EntityExtractor(bundled_vocabulary("cloud")),
         "ja": EntityExtractor(bundled_vocabulary("ja_site"))}


def cls(text: str, lang: str = "en", *, vocab: bool = False, **kw: bool) -> Classification:
    ex = VOCAB[lang] if vocab else GENERAL
    return classify(text, lang, ex.extract(text, lang), **kw)


BOTH = pytest.mark.parametrize("vocab", [False, True], ids=["general", "vocab"])

# -- the five classes -----------------------------------------------------------------------------

STANDALONE = [
    ("is the billing export API paginated?", "en"),
    ("Which EU regions support customer-managed encryption keys?", "en"),
    ("What is the capital of France?", "en"),
    ("How do I rotate encryption keys in Frankfurt?", "en"),
    ("アバター案内とは何ですか？", "ja"),
    ("受付端末の設置には専門スタッフが必要ですか？", "ja"),
]

IMMEDIATE = [
    ("is it free?", "en"),
    ("explain that in more detail", "en"),
    ("What's the uptime SLA on the second one?", "en"),
    ("And the RPO for Dublin?", "en"),
    ("what about the RTO?", "en"),
    ("それは無料ですか？", "ja"),
    ("料金は？", "ja"),
    ("詳しく", "ja"),
    ("2つ目のプランは？", "ja"),
]

EARLIER = [
    ("earlier you mentioned the avatar, how much is it?", "en", "avatar"),
    ("go back to Dublin", "en", "Dublin"),
    ("going back to what you said about the billing export API", "en", "billing export API"),
    ("さっきのアバターの話", "ja", "アバター"),
    ("先ほどの受付端末の件ですが、設置は何日かかりますか", "ja", "受付端末"),
]

PAGE = [
    ("what's on this page?", "en"),
    ("Can you summarize this article?", "en"),
    ("このページは何？", "ja"),
    ("今見ているページについて教えて", "ja"),
]

SITE = [
    ("what other articles are on this site?", "en"),
    ("Does your website have a pricing page?", "en"),
    ("このサイトには他にどんな記事がありますか？", "ja"),
]


@BOTH
@pytest.mark.parametrize("text, lang", STANDALONE)
def test_standalone(text: str, lang: str, vocab: bool) -> None:
    c = cls(text, lang, vocab=vocab)
    assert c.reference_class is ReferenceClass.STANDALONE, c
    assert not c.needs_context
    assert c.spec_class == "standalone"


@BOTH
@pytest.mark.parametrize("text, lang", IMMEDIATE)
def test_textual_immediate(text: str, lang: str, vocab: bool) -> None:
    c = cls(text, lang, vocab=vocab)
    assert c.reference_class is ReferenceClass.IMMEDIATE, c
    assert c.needs_context
    assert c.spec_class == "textual_immediate"


@BOTH
@pytest.mark.parametrize("text, lang, key", EARLIER)
def test_textual_earlier(text: str, lang: str, key: str, vocab: bool) -> None:
    c = cls(text, lang, vocab=vocab)
    assert c.reference_class is ReferenceClass.EARLIER, c
    assert c.needs_context
    assert Cue.RECALL in c.cues
    assert c.topic_key is not None and key.casefold() in c.topic_key.casefold()
    assert c.spec_class == "textual_earlier"


@BOTH
@pytest.mark.parametrize("text, lang", PAGE)
def test_situational_page(text: str, lang: str, vocab: bool) -> None:
    c = cls(text, lang, vocab=vocab)
    assert c.reference_class is ReferenceClass.PAGE, c
    assert c.needs_context and Cue.SCREEN in c.cues
    assert c.spec_class == "situational_page"


@BOTH
@pytest.mark.parametrize("text, lang", SITE)
def test_situational_site(text: str, lang: str, vocab: bool) -> None:
    c = cls(text, lang, vocab=vocab)
    assert c.reference_class is ReferenceClass.SITE, c
    assert c.needs_context and Cue.SCREEN in c.cues
    assert c.spec_class == "situational_site"


@pytest.mark.parametrize("text", [
    "Do I need to enable encryption before creating the bucket?",
    "What happens at the start of a billing cycle?",
    "Can I return to the default settings after a migration?",
])
def test_ordinary_time_words_are_not_recall(text: str) -> None:
    # "before", "at the start", "return to" inside a self-contained question
    c = cls(text)
    assert c.reference_class is not ReferenceClass.EARLIER, c


@pytest.mark.parametrize("text", [
    "What is the page size limit for the billing export API?",
    "What's the maximum size of the doc attachment?",
    "How do I configure the site-to-site VPN?",
])
def test_page_and_site_as_ordinary_nouns_are_not_situational(text: str) -> None:
    c = cls(text)
    assert c.reference_class not in (ReferenceClass.PAGE, ReferenceClass.SITE), c


def test_no_history_means_no_textual_reference() -> None:
    for text in ("is it free?", "go back to Dublin"):
        c = cls(text, has_history=False)
        assert c.reference_class is ReferenceClass.STANDALONE, (text, c)


def test_screen_reference_without_history() -> None:
    c = cls("what's on this page?", has_history=False)
    assert c.reference_class is ReferenceClass.PAGE


# -- follow-up cues -----------------------------------------------------------------------------------

FOLLOW_UP = [
    "in more detail",
    "explain that in more detail",
    "Can you explain that in more detail?",
    "specifically",
    "specifically, which regions?",
    "Tell me more",
    "Could you elaborate?",
    "詳しく",
    "具体的に",
    "もっと詳しく教えてください",
    "具体的には？",
    "設定方法の詳細",
    "料金の詳細",
    "具体例",
]

NOT_FOLLOW_UP = [
    "is the billing export API paginated?",
    "is it free?",
    "What's the uptime SLA on the second one?",
    "Which EU regions support customer-managed encryption keys?",
    "アバター案内の料金はいくらですか？",
    "このページは何？",
    "",
    # the adjective is not a request for detail
    "Were there any specific shows on that tour?",
    "Did they come from anywhere specific?",
]


@pytest.mark.parametrize("text", FOLLOW_UP)
def test_follow_up_cue_detected(text: str) -> None:
    assert follow_up_cue(text)
    lang = "ja" if any(ord(ch) > 0x3000 for ch in text) else "en"
    c = cls(text, lang)
    assert c.follow_up
    assert Cue.ELABORATION in c.cues


@pytest.mark.parametrize("text", NOT_FOLLOW_UP)
def test_no_follow_up_cue(text: str) -> None:
    assert not follow_up_cue(text)


@pytest.mark.parametrize("text, lang", [
    ("Could you walk me through the setup of the billing export API in more detail please?",
     "en"),
    (("For the Frankfurt region and the billing export API, can you specifically list the "
      "pagination limits?"), "en"),
    ("アバター案内の導入にかかる費用と期間について具体的に教えていただけますか", "ja"),
    ("受付端末を設置するときに必要なネットワーク設定について詳しく知りたいです", "ja"),
])
def test_long_message_with_cue_is_a_follow_up(text: str, lang: str) -> None:
    assert len(text) > 25
    assert follow_up_cue(text)
    assert cls(text, lang).follow_up


CUES = ["in more detail", "specifically", "詳しく", "具体的に", "の詳細"]
FILLER = st.text(alphabet="abcdefghijklmnopqrstuvwxyz ,アイウエオ料金設定方法", max_size=80)


@given(FILLER, st.sampled_from(CUES), FILLER)
def test_length_never_decides_follow_up(before: str, cue: str, after: str) -> None:
    # a cue term holds however long the message around it is
    text = f"{before} {cue} {after}"
    assert follow_up_cue(text)
    lang = "ja" if cue[0] > "\u3000" else "en"
    assert cls(text, lang).follow_up


@given(st.text(alphabet="abcdefghijklmnopqrstuvwxyz ", min_size=0, max_size=200))
def test_follow_up_cue_is_pure_function_of_cue_terms(text: str) -> None:
    # no English cue term in lowercase letters/spaces without detail/specific/etc -> False,
    # whatever the length
    words = set(text.split())
    trigger = {"detail", "details", "detailed", "specific", "specifically", "specifics",
               "elaborate", "more", "deeper", "depth", "explain", "expand", "say", "info"}
    if not words & trigger:
        assert not follow_up_cue(text)


def test_follow_up_and_needs_context_are_separate() -> None:
    # needs context without a follow-up request
    c = cls("is it free?")
    assert c.needs_context and not c.follow_up
    # a follow-up request that also names its topic
    c = cls("Tell me about the billing export API specifically", vocab=True)
    assert c.follow_up


# -- ordinals ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("text, lang, expected", [
    ("the second one", "en", Ordinal(2)),
    ("What's the uptime SLA on the second one?", "en", Ordinal(2)),
    ("and the third one?", "en", Ordinal(3)),
    ("the last two", "en", Ordinal(-1, 2)),
    ("what about the last two?", "en", Ordinal(-1, 2)),
    ("tell me about the first two marriages", "en", Ordinal(1, 2, "marriages")),
    ("the first region", "en", Ordinal(1, 1, "region")),
    ("option 3", "en", Ordinal(3)),
    ("the latter", "en", Ordinal(-1)),
    ("2つ目", "ja", Ordinal(2)),
    ("2つ目のプランは？", "ja", Ordinal(2)),
    ("三つ目", "ja", Ordinal(3)),
    ("2番目の記事", "ja", Ordinal(2)),
    ("最後のプラン", "ja", Ordinal(-1)),
    ("最初のプラン", "ja", Ordinal(1)),
    ("２つ目のプランは？", "ja", Ordinal(2)),  # full-width digit, common in Japanese input
])
def test_find_ordinal(text: str, lang: str, expected: Ordinal) -> None:
    got = find_ordinal(text, lang)
    assert got is not None, text
    assert (got.position, got.count) == (expected.position, expected.count)
    if expected.noun is not None:
        assert got.noun == expected.noun


@pytest.mark.parametrize("text", [
    "the first time I tried it",
    "first of all, is it free?",
    "is the billing export API paginated?",
    "What is the second step?",
    # an ordinal after a possessor counts that possessor's things in time
    "When did they release their first album?",
    "What was the name of INXS's first album?",
])
def test_not_an_ordinal_reference(text: str) -> None:
    assert find_ordinal(text, "en") is None


def test_ordinal_span() -> None:
    text = "What's the uptime SLA on the second one?"
    found = find_ordinal_span(text, "en")
    assert found is not None
    s, e, o = found
    assert text[s:e] == "the second one" and o.position == 2
    text = "2つ目のプランは？"
    found = find_ordinal_span(text, "ja")
    assert found is not None
    s, e, _ = found
    assert text[s:e].startswith("2つ目")


def test_ordinal_in_classification() -> None:
    c = cls("What's the uptime SLA on the second one?")
    assert c.reference_class is ReferenceClass.IMMEDIATE
    assert Cue.ORDINAL in c.cues
    assert c.ordinal is not None and c.ordinal.position == 2
    c = cls("and the last two?")
    assert c.ordinal is not None and (c.ordinal.position, c.ordinal.count) == (-1, 2)
    c = cls("2つ目のプランは？", "ja")
    assert c.ordinal is not None and c.ordinal.position == 2


# -- pivots -------------------------------------------------------------------------------------------


@BOTH
@pytest.mark.parametrize("text, lang", [
    ("ok different question — is the billing export API paginated?", "en"),
    ("Different question: how do I rotate keys?", "en"),
    ("btw, how do I rotate keys?", "en"),
    ("Changing the subject, what regions are in Asia Pacific?", "en"),
    ("ところで、受付端末の設置にはどのくらい時間がかかりますか？", "ja"),
    ("話は変わりますが、アバター案内の料金は？", "ja"),
])
def test_pivot_is_standalone(text: str, lang: str, vocab: bool) -> None:
    c = cls(text, lang, vocab=vocab)
    assert c.pivot
    assert c.reference_class is ReferenceClass.STANDALONE, c
    assert not c.needs_context


def test_spec_turn_7_pivot() -> None:
    c = cls("ok different question — is the billing export API paginated?", vocab=True)
    assert c.pivot and c.reference_class is ReferenceClass.STANDALONE
    assert not c.follow_up


def test_pivot_with_pronoun_still_refers() -> None:
    c = cls("ok different question — is it paginated?")
    assert c.reference_class is ReferenceClass.IMMEDIATE


def test_back_to_the_other_thing_is_a_recall_not_a_pivot() -> None:
    c = classify("back to the other thing — who accepts it?", "en", [], has_history=True)
    assert c.reference_class is ReferenceClass.EARLIER and not c.pivot
    assert Cue.OTHER_THREAD in c.cues


@pytest.mark.parametrize("text", [
    "Tell me about the author of the experiment.",
    "What are popular hiking trails?",
    "Can I visit some nearby distilleries?",
])
def test_requests_relative_to_the_topic_bridge(text: str) -> None:
    ex = EntityExtractor()
    c = classify(text, "en", ex.extract(text), has_history=True)
    assert Cue.BRIDGING in c.cues


@pytest.mark.parametrize(("text", "bridges"), [
    ("What is the impact on modern biology?", True),  # the "of" slot is open
    ("What are the implications for society?", True),
    ("What is the impact of the theory on biology?", False),  # saturated by "of"
    ("What is the relationship between inflation and unemployment?", False),
])
def test_a_relational_noun_with_its_of_slot_open_bridges(text: str, bridges: bool) -> None:
    ex = EntityExtractor()
    c = classify(text, "en", ex.extract(text), has_history=True)
    assert (Cue.BRIDGING in c.cues) is bridges


def test_something_else_is_a_change_of_subject() -> None:
    c = classify("thanks. now something else entirely: how do I rotate a token?", "en", [],
                 has_history=True)
    assert c.pivot
