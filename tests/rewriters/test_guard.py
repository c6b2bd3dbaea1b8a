"""The leak guard: entities in a query that the scope excluded; what a rewrite brought in."""

from __future__ import annotations

import pytest

from turnscope.entities import EntityExtractor, Mention
from turnscope.rewriters import find_leaks
from turnscope.rewriters._guard import brought_in

try:
    from .fake_openai import SPEC_CONVERSATION, capture_requests, cloud_vocab
except ImportError:  # tests/rewriters is not a package: pytest put it on sys.path
    from fake_openai import (  # type: ignore[no-redef,unused-ignore]
        SPEC_CONVERSATION,
        capture_requests,
        cloud_vocab,
    )

CLOUD = EntityExtractor(cloud_vocab())


def declared(typ: str, name: str) -> Mention:
    return Mention(typ, name, name, -1, -1, "llm")


def test_entity_absent_from_the_conversation() -> None:
    req = capture_requests(SPEC_CONVERSATION, policy="liveness", vocabulary=cloud_vocab())[-1]
    report = find_leaks("Is the billing export API paginated in Tokyo?", req, extractor=CLOUD)
    assert report.leaks == ("Tokyo",)
    assert report.reasons == {"Tokyo": "not in conversation"}
    assert "billing export API" in report.checked and bool(report)


def test_clean_query_has_no_leaks() -> None:
    req = capture_requests(SPEC_CONVERSATION, policy="liveness", vocabulary=cloud_vocab())[-1]
    report = find_leaks("Is the billing export API paginated?", req, extractor=CLOUD)
    assert report.leaks == () and not report


def test_superseded_slot() -> None:
    turns = [("user", "Is the billing export API paginated?"),
             ("assistant", "Yes, the billing export API uses cursor pagination."),
             ("user", "What about the reporting export API?"),
             ("assistant", "The reporting export API is paginated as well."),
             ("user", "Does it support CSV?")]
    req = capture_requests(turns, policy="liveness", vocabulary=cloud_vocab())[-1]
    report = find_leaks("Does the billing export API support CSV?", req, extractor=CLOUD)
    assert report.leaks == ("billing export API",)
    assert report.reasons["billing export API"] == "superseded"


def test_evicted_slot() -> None:
    turns = list(SPEC_CONVERSATION) + [
        ("assistant", "Yes, the billing export API uses cursor pagination."),
        ("user", "What's the page size?"),
        ("assistant", "The billing export API returns 1000 rows per page."),
        ("user", "Can I filter by date?"),
        ("assistant", "Yes, the billing export API accepts a date range."),
        ("user", "Is it rate limited?"),
        ("assistant", "The billing export API allows 10 requests per second."),
        ("user", "Does it support CSV?"),
    ]
    req = capture_requests(turns, policy="liveness", vocabulary=cloud_vocab())[-1]
    report = find_leaks("Does the billing export API for Dublin support CSV?", req, extractor=CLOUD)
    assert report.leaks == ("Dublin",)
    assert report.reasons["Dublin"] == "evicted"


def test_stale_slot_under_liveness() -> None:
    req = capture_requests(SPEC_CONVERSATION, policy="liveness", vocabulary=cloud_vocab())[-1]
    report = find_leaks("Is the billing export API paginated with customer-managed keys?", req,
                        extractor=CLOUD)
    assert report.leaks == ("customer-managed keys",)
    assert report.reasons["customer-managed keys"] == "stale"


def test_outside_the_window_is_out_of_scope() -> None:
    req = capture_requests(SPEC_CONVERSATION, policy="window:2", vocabulary=cloud_vocab())[-1]
    report = find_leaks("Is the billing export API paginated in Frankfurt?", req, extractor=CLOUD)
    assert report.leaks == ("Frankfurt",)
    assert report.reasons["Frankfurt"] == "out of scope"


def test_outside_the_segment_is_a_leak() -> None:
    req = capture_requests(SPEC_CONVERSATION, policy="segment:flag", vocabulary=cloud_vocab())[-1]
    report = find_leaks("Is the billing export API paginated in Dublin?", req, extractor=CLOUD)
    assert report.leaks == ("Dublin",)


def test_full_scope_excludes_nothing() -> None:
    req = capture_requests(SPEC_CONVERSATION, policy="full", vocabulary=cloud_vocab())[-1]
    report = find_leaks("Is the billing export API paginated in the Dublin region?", req,
                        extractor=CLOUD)
    assert report.leaks == ()  # contamination, not a leak: measured by the evaluation


def test_alias_in_the_evidence_counts() -> None:
    turns = [("user", "What's the uptime SLA in eu-west-1?")]
    req = capture_requests(turns, policy="liveness", vocabulary=cloud_vocab())[-1]
    assert find_leaks("What's the uptime SLA in Dublin?", req, extractor=CLOUD).leaks == ()


def test_paraphrased_declared_entity_is_not_a_leak() -> None:
    turns = [("user", "Which regions support CMK?"),
             ("assistant", "Frankfurt and Dublin both support CMK."),
             ("user", "What's the SLA on the second one?")]
    req = capture_requests(turns, policy="liveness")[-1]  # no vocabulary
    report = find_leaks("What is the SLA of the Dublin region, and its pagination support?", req,
                        entities=[declared("region", "Dublin region")])
    assert report.leaks == ()


def test_declared_entity_not_in_the_query_is_ignored() -> None:
    req = capture_requests(SPEC_CONVERSATION, policy="liveness", vocabulary=cloud_vocab())[-1]
    report = find_leaks("Is the billing export API paginated?", req, extractor=CLOUD,
                        entities=[declared("region", "Tokyo")])
    assert report.leaks == ()


def test_japanese_declared_entity() -> None:
    turns = [("user", "アバター案内の料金はいくらですか？")]
    req = capture_requests(turns, policy="liveness")[-1]
    ok = find_leaks("アバター案内の料金", req, entities=[declared("product", "アバター案内")])
    assert ok.leaks == ()
    leak = find_leaks("東京のアバター案内の料金", req,
                      entities=[declared("product", "アバター案内"), declared("place", "東京")])
    assert leak.leaks == ("東京",) and leak.reasons["東京"] == "not in conversation"


def test_explicit_evidence_overrides_the_scope() -> None:
    req = capture_requests(SPEC_CONVERSATION, policy="liveness", vocabulary=cloud_vocab())[-1]
    report = find_leaks("Is the billing export API paginated in Tokyo?", req, extractor=CLOUD,
                        evidence="we talked about Tokyo")
    assert report.leaks == ()


_SAID_EN = ["Frankfurt and Dublin both support CMK.", "Customer-managed keys (CMK) page"]
_SAID_JA = ["アバター案内はAIアバターです。", "アバター案内マニュアル — 画面連動", "受付キオスク「おもてなし受付」"]


@pytest.mark.parametrize(("typed", "query", "said", "expected"), [
    # function words at a run's ends are cut; the option itself is named
    ("is the second one cheaper?", "is Dublin cheaper?", _SAID_EN, ("Dublin",)),
    ("compare the first two", "compare Frankfurt and Dublin", _SAID_EN, ("Frankfurt and Dublin",)),
    # a bracket the run opened is closed
    ("is this in london", "is Customer-managed keys (CMK) in london", _SAID_EN, ("Customer-managed keys (CMK)",)),
    # a word nobody said is not a carried phrase, nor is the user's own word moved
    ("is the second one cheaper?", "is Lisbon cheaper?", _SAID_EN, ()),
    ("is dublin cheaper than it?", "is it cheaper than dublin?", _SAID_EN, ()),
    ("same text", "same text", _SAID_EN, ()),
    # Japanese runs are compared character by character and kept as they stand
    ("それは別料金？", "アバター案内は別料金？", _SAID_JA, ("アバター案内",)),
    # a character the page title shares with the typed message does not split the title
    ("このページは何？", "「アバター案内マニュアル — 画面連動」は何？", _SAID_JA,
     ("アバター案内マニュアル — 画面連動",)),
    ("このページの製品は英語大丈夫？", "受付キオスク「おもてなし受付」は英語大丈夫？", _SAID_JA,
     ("受付キオスク「おもてなし受付」",)),
    # a stretch the conversation never said is left out
    ("それは別料金？", "チャットボットは別料金？", _SAID_JA, ()),
])
def test_brought_in_keeps_only_runs_the_conversation_said(typed: str, query: str, said: list[str],
                                                          expected: tuple[str, ...]) -> None:
    assert brought_in(typed, query, said) == expected
