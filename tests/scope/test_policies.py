"""Scope policies (SPEC section 2): selection by name and the scope each one builds,
observed through ``Session(policy=...)`` and the returned ``TurnResult.scope``."""

from __future__ import annotations

import pytest

from turnscope import ConfigError, Session, SlotStatus, bundled_vocabulary, get_policy, policy_names
from turnscope.scope import (
    CentroidDetector,
    DefaultPolicy,
    FlagDetector,
    FullPolicy,
    LivenessPolicy,
    RelevantPolicy,
    Scope,
    SegmentPolicy,
    WindowPolicy,
)

SPEC_CONVERSATION = [
    ("user", "Which EU regions support customer-managed encryption keys?"),
    ("assistant", "Frankfurt and Dublin both support CMK for data at rest."),
    ("user", "What's the uptime SLA on the second one?"),
    ("assistant", "Dublin (eu-west-1) is covered by the 99.95% monthly uptime SLA."),
    ("user", "And the RPO for Dublin?"),
    ("assistant", "The documented RPO for Dublin is 15 minutes."),
]
PIVOT = "ok different question — is the billing export API paginated?"

# Dublin is discussed in exactly one exchange (turns 1-2), then two unrelated ones
DUBLIN_THEN_OTHER = [
    ("user", "What's the RPO for Dublin?"),
    ("assistant", "The documented RPO for Dublin is 15 minutes."),
    ("user", "How do I rotate an API token?"),
    ("assistant", "API tokens are rotated from the console under Security."),
    ("user", "How long are audit logs kept by default?"),
    ("assistant", "Audit logs are kept for 400 days by default."),
]
RECALL_EN = "go back to what you said about Dublin"

AVATAR_THEN_KIOSK = [
    ("user", "アバター案内の料金はいくら？"),
    ("assistant", "アバター案内は月額5万円からです。"),
    ("user", "受付キオスクのレンタル料金っていくら？"),
    ("assistant", "おもてなし受付のレンタルプランは月額3万円です。"),
]
RECALL_JA = "さっきのアバターの話ですが、無料トライアルはある？"


def session(policy: str, conversation: list[tuple[str, str]], vocab: str = "cloud") -> Session:
    s = Session(policy=policy, vocabulary=bundled_vocabulary(vocab))
    for role, text in conversation:
        s.add(role, text)
    return s


def scope_of(policy: str, conversation: list[tuple[str, str]], message: str,
             vocab: str = "cloud") -> Scope:
    return session(policy, conversation, vocab).user(message).scope


# -- selection by name ---------------------------------------------------------------

@pytest.mark.parametrize(
    ("spec", "cls", "name"),
    [
        ("full", FullPolicy, "full"),
        ("window:3", WindowPolicy, "window"),
        ("segment:flag", SegmentPolicy, "segment"),
        ("segment:centroid", SegmentPolicy, "segment"),
        ("liveness", LivenessPolicy, "liveness"),
        ("relevant", RelevantPolicy, "relevant"),
        ("default", DefaultPolicy, "default"),
    ],
)
def test_get_policy_by_name(spec: str, cls: type, name: str) -> None:
    p = get_policy(spec)
    assert isinstance(p, cls)
    assert p.name == name


def test_window_argument_sets_the_length() -> None:
    p = get_policy("window:3")
    assert isinstance(p, WindowPolicy) and p.w == 3


def test_segment_argument_selects_the_detector() -> None:
    flag = get_policy("segment:flag")
    centroid = get_policy("segment:centroid")
    assert isinstance(flag, SegmentPolicy) and isinstance(flag.detector, FlagDetector)
    assert isinstance(centroid, SegmentPolicy) and isinstance(centroid.detector, CentroidDetector)


def test_every_listed_name_is_selectable() -> None:
    names = policy_names()
    for required in ("full", "window", "segment", "liveness", "relevant", "default"):
        assert required in names
    for n in names:
        assert get_policy(n).run is not None


def test_a_policy_object_passes_through() -> None:
    p = LivenessPolicy()
    assert get_policy(p) is p


def test_unknown_policy_is_a_config_error_listing_valid_names() -> None:
    with pytest.raises(ConfigError) as info:
        get_policy("nope")
    msg = str(info.value)
    assert "nope" in msg
    for n in ("full", "window", "segment", "liveness", "relevant", "default"):
        assert n in msg


def test_unknown_policy_in_session_is_a_config_error() -> None:
    with pytest.raises(ConfigError):
        Session(policy="nope")


@pytest.mark.parametrize("spec", ["window:abc", "window:2.5", "window:-1"])
def test_bad_window_argument_is_a_config_error(spec: str) -> None:
    with pytest.raises(ConfigError):
        get_policy(spec)


@pytest.mark.parametrize("spec", ["segment:bogus", "full:3", "liveness:2"])
def test_bad_or_unexpected_argument_is_a_config_error(spec: str) -> None:
    with pytest.raises(ConfigError):
        get_policy(spec)


def test_config_error_is_a_value_error() -> None:
    with pytest.raises(ValueError):
        get_policy("nope")


# -- the scope each policy builds ----------------------------------------------------

def test_full_covers_every_earlier_turn() -> None:
    s = Session(policy="full", vocabulary=bundled_vocabulary("cloud"))
    first = s.user(SPEC_CONVERSATION[0][1])
    assert first.scope.turns == ()
    for role, text in SPEC_CONVERSATION[1:]:
        s.add(role, text)
    r = s.user(PIVOT)
    assert r.scope.policy == "full"
    assert r.scope.turns == (1, 2, 3, 4, 5, 6)
    assert r.scope.guarded is False


def test_window_2_covers_the_last_two_turns() -> None:
    s = Session(policy="window:2", vocabulary=bundled_vocabulary("cloud"))
    seen = {}
    for role, text in SPEC_CONVERSATION:
        r = s.add(role, text)
        if r is not None:
            seen[r.turn] = r.scope.turns
    seen[7] = s.user(PIVOT).scope.turns
    assert seen == {1: (), 3: (1, 2), 5: (3, 4), 7: (5, 6)}


def test_window_longer_than_the_history_covers_all_of_it() -> None:
    assert scope_of("window:10", SPEC_CONVERSATION[:2], "is it free?").turns == (1, 2)


def test_liveness_is_guarded_with_live_slots_and_last_two_turns() -> None:
    s = session("liveness", SPEC_CONVERSATION)
    r = s.user(PIVOT)
    sc = r.scope
    assert sc.policy == "liveness"
    assert sc.guarded is True
    assert sc.turns == (5, 6)
    assert sc.slots, "the live slots are part of the liveness scope"
    assert all(slot.status is SlotStatus.LIVE for slot in sc.slots)
    keys = sc.slot_keys()
    assert "region:Dublin" in keys  # mentioned at turns 5 and 6
    # Frankfurt was last mentioned at turn 2: stale by turn 7, so not shown as live
    assert "region:Frankfurt" not in keys
    assert "region:Frankfurt" in [slot.key for slot in sc.stale]


def test_relevant_finds_the_earlier_exchange_by_topic_key_english() -> None:
    sc = scope_of("relevant", DUBLIN_THEN_OTHER, RECALL_EN)
    assert sc.policy == "relevant"
    assert sc.recalled == (1,)
    assert sc.turns == (1, 2)
    assert sc.to_json()["recalled"] == [1]


def test_relevant_finds_the_earlier_exchange_by_topic_key_japanese() -> None:
    # 「アバター」 shares its character 2-grams with 「アバター案内」: no morphology needed
    sc = scope_of("relevant", AVATAR_THEN_KIOSK, RECALL_JA, vocab="ja_site")
    assert sc.recalled == (1,)
    assert sc.turns == (1, 2)


def test_relevant_without_a_topic_key_shows_nothing() -> None:
    sc = scope_of("relevant", SPEC_CONVERSATION, "is it free?")
    assert sc.turns == ()
    assert sc.slots == ()
    assert sc.recalled == ()


def test_default_adds_the_recalled_exchange_to_the_liveness_scope() -> None:
    sc = scope_of("default", DUBLIN_THEN_OTHER, RECALL_EN)
    assert sc.policy == "default"
    assert sc.guarded is True
    assert sc.recalled == (1,)
    assert {1, 2} <= set(sc.turns)  # the recalled exchange
    assert {5, 6} <= set(sc.turns)  # the last two turns (liveness)
    assert not {3, 4} & set(sc.turns)  # nothing in between
    # the recalled exchange's entities come back into scope with it
    assert "region:Dublin" in sc.slot_keys()


def test_default_recall_scope_lists_each_slot_once() -> None:
    # Dublin and RPO are mentioned in both turns of the recalled exchange
    sc = scope_of("default", DUBLIN_THEN_OTHER, RECALL_EN)
    keys = sc.slot_keys()
    assert len(keys) == len(set(keys)), keys


def test_default_without_backward_reference_is_the_liveness_scope() -> None:
    follow_up = "Is the SLA the same for Frankfurt?"
    d = scope_of("default", SPEC_CONVERSATION, follow_up)
    lv = scope_of("liveness", SPEC_CONVERSATION, follow_up)
    assert d.turns == lv.turns and d.turns
    assert d.slot_keys() == lv.slot_keys()
    assert d.recalled == ()


def test_default_after_an_explicit_pivot_shows_none_of_the_left_subject() -> None:
    lv = scope_of("liveness", SPEC_CONVERSATION, PIVOT)
    assert lv.turns and "region:Dublin" in lv.slot_keys()  # what the pivot leaves behind
    d = scope_of("default", SPEC_CONVERSATION, PIVOT)
    assert d.turns == ()
    assert not [k for k in d.slot_keys() if "Dublin" in k or "Frankfurt" in k]
    assert d.enumerations == ()
    assert "subject_start=" in d.note


def test_default_keeps_the_new_subject_after_a_pivot_and_recall_still_reaches_the_old() -> None:
    s = Session(vocabulary=bundled_vocabulary("cloud"))
    for role, text in SPEC_CONVERSATION:
        s.add(role, text)
    s.user(PIVOT)
    s.assistant("Yes: the billing export API returns 100 rows per page with a next-page token.")
    after = s.user("How do I get the next page?")
    assert after.scope.turns and min(after.scope.turns) >= 7
    assert not [k for k in after.scope.slot_keys() if "Dublin" in k]
    back = s.user("Going back to Dublin, what was its SLA again?")
    assert "Dublin" in back.query


def test_segment_flag_starts_a_new_segment_at_an_explicit_pivot() -> None:
    s = Session(policy="segment:flag", vocabulary=bundled_vocabulary("cloud"))
    scopes = {}
    for role, text in SPEC_CONVERSATION:
        r = s.add(role, text)
        if r is not None:
            scopes[r.turn] = r.scope
    assert scopes[5].turns == (1, 2, 3, 4)  # one segment so far
    assert scopes[5].topic_shift is False
    pivot = s.user(PIVOT)
    assert pivot.topic_shift is True
    assert pivot.scope.topic_shift is True
    assert pivot.scope.turns == ()  # the new segment starts at the pivot itself
    s.assistant("Yes: the billing export API returns 1,000 rows per page with a page token.")
    after = s.user("how big can a page be?")
    assert after.scope.turns == (7, 8)
    assert "Dublin" not in after.query


def test_scope_to_json_has_policy_turns_and_slots() -> None:
    for policy in ("full", "window:2", "liveness", "default", "segment:flag", "relevant"):
        out = scope_of(policy, SPEC_CONVERSATION, PIVOT).to_json()
        assert {"policy", "turns", "slots"} <= set(out), (policy, out)
        assert isinstance(out["policy"], str)
        assert isinstance(out["turns"], list) and all(isinstance(t, int) for t in out["turns"])
        assert isinstance(out["slots"], list) and all(isinstance(k, str) for k in out["slots"])
    lv = scope_of("liveness", SPEC_CONVERSATION, PIVOT).to_json()
    assert lv["policy"] == "liveness"
    assert lv["turns"] == [5, 6]
    assert all(":" in k for k in lv["slots"])  # "type:name"
