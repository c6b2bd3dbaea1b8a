"""Session: input validation, the SPEC section 4 output object, fallback, replay, logging."""

from __future__ import annotations

import logging

import pytest

from turnscope import (
    InputError,
    RewriteRequest,
    RewriteResult,
    Session,
    SlotStatus,
    TurnResult,
    bundled_vocabulary,
)

SPEC_FIELDS = {"id", "query", "reference_class", "topic_shift", "entities", "scope", "backend",
               "fallback", "fallback_reason", "carried", "decided_by"}
REFERENCE_CLASSES = {"standalone", "textual_immediate", "textual_earlier", "situational_page",
                     "situational_site"}
PREFIX = [
    {"role": "user", "content": "Which EU regions support customer-managed encryption keys?"},
    {"role": "assistant", "content": "Frankfurt and Dublin both support CMK for data at rest."},
]


def cloud_session(**kwargs: object) -> Session:
    return Session(vocabulary=bundled_vocabulary("cloud"), **kwargs)  # type: ignore[arg-type]


class Boom:
    name = "boom"

    def run(self, request: RewriteRequest) -> RewriteResult:
        raise RuntimeError("backend exploded")


class Fixed:
    """A well-behaved custom rewriter."""

    name = "fixed"

    def run(self, request: RewriteRequest) -> RewriteResult:
        return RewriteResult("fixed query", "standalone", False, backend="fixed")


# -- validation ------------------------------------------------------------------------

@pytest.mark.parametrize("role", ["system", "bot", "", "tool"])
def test_add_rejects_a_bad_role_naming_it(role: str) -> None:
    s = Session()
    with pytest.raises(InputError) as info:
        s.add(role, "hello")
    assert repr(role) in str(info.value) or f"'{role}'" in str(info.value)
    assert s.state.turns == []  # nothing was recorded


def test_add_accepts_both_roles_and_returns_a_result_for_user_turns() -> None:
    s = Session()
    assert isinstance(s.add("user", "Which EU regions support CMK?"), TurnResult)
    assert s.add("assistant", "Frankfurt and Dublin.") is None
    assert [t.index for t in s.state.turns] == [1, 2]


@pytest.mark.parametrize("content", ["", "   ", "\n\t"])
def test_empty_user_message_is_an_input_error(content: str) -> None:
    s = Session()
    with pytest.raises(InputError):
        s.user(content)
    with pytest.raises(InputError):
        s.add("user", content)
    assert s.state.turns == []


def test_non_string_messages_are_input_errors() -> None:
    s = Session()
    with pytest.raises(InputError):
        s.user(None)  # type: ignore[arg-type]
    with pytest.raises(InputError):
        s.assistant(42)  # type: ignore[arg-type]


def test_bad_screen_is_an_input_error() -> None:
    with pytest.raises(InputError):
        Session().user("what's on this page?", screen="docs")  # type: ignore[arg-type]


def test_input_error_is_a_value_error() -> None:
    with pytest.raises(ValueError):
        Session().add("system", "x")


# -- output object ---------------------------------------------------------------------

def test_to_output_has_exactly_the_spec_fields() -> None:
    s = cloud_session()
    for t in PREFIX:
        s.add(t["role"], t["content"])
    r = s.user("What's the uptime SLA on the second one?")
    out = r.to_output("fu_0001")
    assert set(out) == SPEC_FIELDS
    assert out["id"] == "fu_0001"
    assert out["query"] == r.query and "Dublin" in out["query"]
    assert out["reference_class"] in REFERENCE_CLASSES
    assert isinstance(out["topic_shift"], bool)
    assert out["backend"] == "embedded"
    assert out["fallback"] is False and out["fallback_reason"] is None
    # the user named the cloud vocabulary's entities: its typed slots and the rules decide
    assert out["decided_by"] == r.decided_by == r.trace["decided_by"] == "vocabulary"
    assert {"policy", "turns", "slots"} <= set(out["scope"])
    assert out["scope"]["policy"] == "default"
    for e in out["entities"]:
        assert set(e) == {"type", "name", "status"}
    # what was carried is in the query, in the order it appears there
    positions = [out["query"].find(c) for c in out["carried"]]
    assert all(p >= 0 for p in positions) and positions == sorted(positions)


def test_to_output_without_an_id_omits_it() -> None:
    out = Session().user("How do I rotate an API token?").to_output()
    assert set(out) == SPEC_FIELDS - {"id"}


def test_to_output_is_json_serialisable() -> None:
    import json

    r = cloud_session().user("Is the billing export API paginated?")
    assert json.loads(json.dumps(r.to_output("x"), ensure_ascii=False))["id"] == "x"


def test_entity_statuses_in_the_output() -> None:
    s = cloud_session()
    s.user("How do I use the billing export API?")
    s.assistant("The billing export API writes daily CSV files.")
    r = s.user("ok different question — does the reporting export API support Parquet?")
    entities = {e["name"]: e for e in r.to_output("x")["entities"]}
    valid = {st.value for st in SlotStatus}
    assert all(e["status"] in valid for e in entities.values())
    assert entities["reporting export API"] == {"type": "service", "name": "reporting export API",
                                                 "status": "live"}
    # the new service superseded the old one in the typed slot
    table = {row["name"]: row["status"] for row in s.slot_rows(include_terminal=True)}
    assert table["billing export API"] == "superseded"
    assert table["reporting export API"] == "live"
    assert "billing export API" not in {row["name"] for row in s.slot_rows()}


# -- fallback --------------------------------------------------------------------------

def test_a_rewriter_that_raises_falls_back_to_embedded() -> None:
    s = cloud_session(rewriter=Boom())
    for t in PREFIX:
        s.add(t["role"], t["content"])
    r = s.user("What's the uptime SLA on the second one?")
    assert r.fallback is True
    assert r.backend == "embedded"
    assert r.fallback_reason is not None
    assert "RuntimeError" in r.fallback_reason and "backend exploded" in r.fallback_reason
    # the embedded answer is the one the embedded session gives
    ref = cloud_session()
    for t in PREFIX:
        ref.add(t["role"], t["content"])
    assert r.query == ref.user("What's the uptime SLA on the second one?").query
    out = r.to_output("fu_1")
    assert set(out) == SPEC_FIELDS
    assert out["fallback"] is True and "backend exploded" in out["fallback_reason"]


def test_fallback_logs_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="turnscope.session")
    Session(rewriter=Boom()).user("How do I rotate an API token?")
    assert any(rec.levelno == logging.WARNING and "backend exploded" in rec.getMessage()
               for rec in caplog.records)


def test_a_working_custom_rewriter_is_used() -> None:
    r = Session(rewriter=Fixed()).user("anything at all?")
    assert r.query == "fixed query"
    assert r.backend == "fixed"
    assert r.fallback is False and r.fallback_reason is None


# -- replay ----------------------------------------------------------------------------

def test_replay_equals_feeding_the_turns_by_hand() -> None:
    vocab = bundled_vocabulary("cloud")
    replayed = Session.replay(PREFIX, vocabulary=vocab)
    by_hand = Session(vocabulary=vocab)
    for t in PREFIX:
        by_hand.add(t["role"], t["content"])
    msg = "What's the uptime SLA on the second one?"
    a, b = replayed.user(msg), by_hand.user(msg)
    assert a.query == b.query
    assert a.to_output("x") == b.to_output("x")
    assert a.turn == 3


def test_replay_passes_options_through() -> None:
    s = Session.replay(PREFIX, policy="window:1", vocabulary=bundled_vocabulary("cloud"))
    assert s.user("is it free?").scope.turns == (2,)


def test_replay_carries_the_screen() -> None:
    prefix = [{"role": "user", "content": "how do I paginate?",
               "screen": {"page_title": "Billing export API", "page_url": None, "site": None}},
              {"role": "assistant", "content": "Pass the page token."}]
    s = Session.replay(prefix, vocabulary=bundled_vocabulary("cloud"))
    assert "Billing export API" in s.user("what's on this page?").query


@pytest.mark.parametrize("bad", [[{"role": "user"}], [{"content": "x"}], ["just a string"]])
def test_replay_rejects_a_malformed_turn_naming_its_index(bad: list[object]) -> None:
    with pytest.raises(InputError) as info:
        Session.replay([PREFIX[0], *bad])  # type: ignore[list-item]
    assert "prefix[1]" in str(info.value)


def test_replay_rejects_a_bad_role() -> None:
    with pytest.raises(InputError) as info:
        Session.replay([{"role": "system", "content": "be nice"}])
    assert "system" in str(info.value)


# -- logging ---------------------------------------------------------------------------

def test_slot_table_is_logged_every_user_turn(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="turnscope.session")
    s = cloud_session()
    s.user(PREFIX[0]["content"])
    s.assistant(PREFIX[1]["content"])
    r = s.user("What's the uptime SLA on the second one?")
    records = [rec for rec in caplog.records if rec.name == "turnscope.session"]
    assert len(records) == 2  # one per user turn, none for the assistant turn
    last = records[-1].getMessage()
    assert r.query in last  # the rewrite beside the slot table
    for row in r.slot_table:
        assert f"{row['type']}:{row['name']}={row['status']}" in last
    assert "region:Dublin=live" in last


def test_slot_table_on_the_result_matches_slot_rows() -> None:
    s = cloud_session()
    s.user(PREFIX[0]["content"])
    s.assistant(PREFIX[1]["content"])
    r = s.user("What's the uptime SLA on the second one?")
    assert list(r.slot_table) == s.slot_rows()
    for row in r.slot_table:
        assert set(row) == {"type", "name", "introduced", "last_seen", "status"}
