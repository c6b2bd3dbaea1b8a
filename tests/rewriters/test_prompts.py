"""Prompt builders: one per scope policy, with and without the counterweight clause."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from turnscope import Session
from turnscope._session import normalize_message
from turnscope.rewriters import RewriteRequest, build_messages, prompt_size
from turnscope.rewriters._prompts import (
    COUNTERWEIGHT_CLAUSE,
    LIVENESS_INSTRUCTION,
    PROMPT_BUILDERS,
    REWRITE_JSON_SCHEMA,
    user_content,
)

try:
    from .fake_openai import SPEC_CONVERSATION, capture_requests, cloud_vocab
except ImportError:  # tests/rewriters is not a package: pytest put it on sys.path
    from fake_openai import (  # type: ignore[no-redef,unused-ignore]
        SPEC_CONVERSATION,
        capture_requests,
        cloud_vocab,
    )

POLICIES = ["full", "window", "segment", "liveness", "default", "relevant"]
#: the prompt does not depend on the detector; "flag" needs no encoder, so tests stay fast
SPECS = {"segment": "segment:flag"}
TURN1 = "Which EU regions support customer-managed encryption keys?"
PIVOT = "ok different question — is the billing export API paginated?"

RECALL_CONVERSATION = SPEC_CONVERSATION + [
    ("assistant", "Yes, the billing export API uses cursor pagination with next_page_token."),
    ("user", "What's the page size limit?"),
    ("assistant", "The billing export API returns at most 1000 rows per page."),
    ("user", "Can I filter by date?"),
    ("assistant", "Yes, the billing export API accepts start_date and end_date."),
    ("user", "Is it rate limited?"),
    ("assistant", "The billing export API allows 10 requests per second."),
    ("user", "go back to what you said about Dublin — what was the RPO?"),
]


def turn7(policy: str) -> RewriteRequest:
    req: RewriteRequest = capture_requests(SPEC_CONVERSATION, policy=SPECS.get(policy, policy),
                                           vocabulary=cloud_vocab())[-1]
    return req


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("counterweight", [True, False])
def test_every_policy_has_both_variants(policy: str, counterweight: bool) -> None:
    assert policy in PROMPT_BUILDERS
    msgs = build_messages(turn7(policy), counterweight=counterweight)
    assert [m["role"] for m in msgs] == ["system", "user"]
    assert (COUNTERWEIGHT_CLAUSE in msgs[0]["content"]) is counterweight
    assert f"LATEST MESSAGE: {PIVOT}" in msgs[1]["content"]
    assert "QUERY LANGUAGE: English" in msgs[1]["content"]
    # the output contract is spelled out in every variant; the reference class is the
    # schema's (a constrained model fills it from the enum), not a fifth of the prompt
    for key in ("query", "topic_shift", "entities"):
        assert f'"{key}"' in msgs[0]["content"]
    assert "reference_class" not in msgs[0]["content"]
    assert "reference_class" in REWRITE_JSON_SCHEMA["required"]  # type: ignore[operator]


def test_counterweight_is_the_only_difference() -> None:
    req = turn7("full")
    with_cw = build_messages(req, counterweight=True)
    without = build_messages(req, counterweight=False)
    assert with_cw[1] == without[1]
    assert with_cw[0]["content"].replace(f"\n- {COUNTERWEIGHT_CLAUSE}", "") == without[0]["content"]


def test_no_real_entity_names_in_the_instructions() -> None:
    system = build_messages(turn7("full"))[0]["content"]
    for name in ("Dublin", "Frankfurt", "billing", "EU"):
        assert name not in system


def test_full_shows_the_whole_transcript() -> None:
    user = build_messages(turn7("full"))[1]["content"]
    assert user.startswith("CONVERSATION:\n")
    for i, (role, text) in enumerate(SPEC_CONVERSATION[:-1], 1):
        assert f"[{i}] {role}: {text}" in user


def test_window_shows_the_last_w_turns() -> None:
    req = capture_requests(SPEC_CONVERSATION, policy="window:3", vocabulary=cloud_vocab())[-1]
    user = build_messages(req)[1]["content"]
    assert user.startswith("RECENT TURNS (the last 3):\n")
    assert "[4] assistant:" in user and "[6] assistant:" in user and "[3] user" not in user


def test_segment_shows_the_current_segment() -> None:
    reqs = capture_requests(SPEC_CONVERSATION, policy="segment:flag", vocabulary=cloud_vocab())
    user5 = build_messages(reqs[-2])[1]["content"]
    assert user5.startswith("TURNS OF THE CURRENT TOPIC (since turn 1):\n")
    assert f"[1] user: {TURN1}" in user5 and "[4] assistant:" in user5
    # the pivot opens a new segment: nothing of the old topic is shown
    user7 = build_messages(reqs[-1])[1]["content"]
    assert user7.startswith("TURNS OF THE CURRENT TOPIC (since turn 7):\n(none)\n")
    assert "Dublin" not in user7


def test_liveness_input_is_slots_two_turns_message_instruction() -> None:
    req = turn7("liveness")
    user = build_messages(req)[1]["content"]
    live, rest = user.split("\n\nRECENT TURNS:\n", 1)
    assert live.startswith("LIVE ENTITIES:\n")
    assert "- region: Dublin (last mentioned turn 6)" in live
    assert "[5] user: And the RPO for Dublin?" in rest and "[6] assistant:" in rest
    assert "[4]" not in rest and TURN1 not in user
    assert user.rstrip().endswith(LIVENESS_INSTRUCTION)
    # the list Frankfurt/Dublin offered at turn 2 is still live: "the second one" needs it
    assert "LISTS OFFERED EARLIER:\n- turn 2: 1. Frankfurt, 2. Dublin" in user


def test_default_adds_the_recalled_exchange() -> None:
    req = capture_requests(RECALL_CONVERSATION, policy="default", vocabulary=cloud_vocab())[-1]
    user = build_messages(req)[1]["content"]
    assert 'EARLIER EXCHANGE THE MESSAGE REFERS TO (found by topic key "Dublin"):' in user
    live, rest = user.split("\n\nRECENT TURNS:", 1)
    # slots brought back with the exchange are not presented as live
    assert "Dublin" not in live
    # a live slot the recent turns spell is not repeated among the live entities
    assert "billing export API" not in live and "billing export API" in rest.split("LATEST MESSAGE:")[0]
    assert "ENTITIES OF THAT EXCHANGE:\n" in user and "- region: Dublin" in user
    assert LIVENESS_INSTRUCTION in user


def test_relevant_alone_uses_the_liveness_template() -> None:
    req = capture_requests(RECALL_CONVERSATION, policy="relevant", vocabulary=cloud_vocab())[-1]
    user = build_messages(req)[1]["content"]
    assert user.startswith("LIVE ENTITIES:\n(none)\n\nRECENT TURNS:\n(none)\n")
    assert "EARLIER EXCHANGE THE MESSAGE REFERS TO" in user


def test_screen_is_shown() -> None:
    seen: list[RewriteRequest] = []

    class Capture:
        name = "capture"

        def run(self, request: RewriteRequest):  # type: ignore[no-untyped-def]
            seen.append(request)
            return s.embedded.run(request)

    s = Session(rewriter=Capture())
    s.user("このページは何？", screen={"page_title": "料金プラン", "page_url": "https://x.jp/price",
                                     "site": "x.jp"})
    user = build_messages(seen[0])[1]["content"]
    assert 'SCREEN: page "料金プラン" at https://x.jp/price on site x.jp' in user
    assert "QUERY LANGUAGE: Japanese" in user


def test_user_content_is_the_evidence() -> None:
    msgs = build_messages(turn7("liveness"))
    assert user_content(msgs) == msgs[1]["content"]


def test_schema_is_strict_compatible() -> None:
    props, required = REWRITE_JSON_SCHEMA["properties"], REWRITE_JSON_SCHEMA["required"]
    assert isinstance(props, dict) and isinstance(required, list)
    assert sorted(required) == sorted(props)
    assert REWRITE_JSON_SCHEMA["additionalProperties"] is False


def test_prompt_size_estimate() -> None:
    assert prompt_size([]) == (0, 0)
    assert prompt_size([{"role": "user", "content": "a" * 40}]) == (40, 10)
    assert prompt_size([{"role": "user", "content": "料金は？"}]) == (4, 4)  # ？ is not CJK
    chars, tokens = prompt_size(build_messages(turn7("full")))
    assert chars > 0 and chars / 5 < tokens < chars / 3


@settings(max_examples=40, deadline=None)
@given(text=st.text(min_size=1, max_size=80).filter(
           lambda t: normalize_message(t, single_line=True).strip() != ""),
       policy=st.sampled_from(POLICIES))
def test_any_message_builds_a_prompt(text: str, policy: str) -> None:
    reqs = capture_requests([("user", "Is the billing export API paginated?"),
                             ("assistant", "Yes, with next_page_token."), ("user", text)],
                            policy=SPECS.get(policy, policy))
    msgs = build_messages(reqs[-1])
    # the session normalises a turn as it enters (width, invisible and control characters)
    assert normalize_message(text, single_line=True).strip() in msgs[1]["content"]
    chars, tokens = prompt_size(msgs)
    assert chars == sum(len(m["content"]) for m in msgs) and 0 < tokens <= chars


def test_liveness_prompt_stays_flat_full_grows() -> None:
    topics = [("billing export API", "paginated"), ("Dublin", "uptime SLA"),
              ("reporting export API", "rate limited"), ("Frankfurt", "RPO")]

    def last_prompt(policy: str, n_blocks: int) -> int:
        turns: list[tuple[str, str]] = []
        for b in range(n_blocks):
            name, attr = topics[(b - n_blocks + 1) % len(topics)]  # last block: same topic
            turns += [("user", f"Tell me about the {attr} of {name}."),
                      ("assistant", f"{name}: the {attr} of {name} is documented for {name}."),
                      ("user", "And is it free?"),
                      ("assistant", f"Yes, {name} has no extra charge for the {attr}.")]
        turns.append(("user", "What about the limits?"))
        req = capture_requests(turns, policy=policy, vocabulary=cloud_vocab())[-1]
        return prompt_size(build_messages(req))[0]

    assert last_prompt("liveness", 12) / last_prompt("liveness", 2) <= 1.3
    assert last_prompt("full", 12) / last_prompt("full", 2) > 2.0


def test_the_default_shows_a_short_conversation_whole_and_scopes_a_long_one() -> None:
    short = build_messages(turn7("default"))[1]["content"]
    # a short conversation: every earlier turn, as the full policy shows it
    assert short == build_messages(turn7("full"))[1]["content"]
    assert TURN1 in short and "LIVE ENTITIES:" not in short
    # past SHORT_CONVERSATION_TURNS earlier turns: the scoped sections and the instruction
    long_req = capture_requests(RECALL_CONVERSATION, policy="default", vocabulary=cloud_vocab())[-1]
    assert len([t for t in long_req.state.turns if t.index < long_req.message.index]) > 10
    long = build_messages(long_req)[1]["content"]
    assert "LIVE ENTITIES:" in long and LIVENESS_INSTRUCTION in long
    # no resolver scores, and slots written shorter than the liveness policy writes them
    assert "EARLIER PHRASES RANKED" not in long and "last mentioned turn" not in long
    scoped = build_messages(capture_requests(RECALL_CONVERSATION, policy="relevant",
                                             vocabulary=cloud_vocab())[-1])[1]["content"]
    assert "last mentioned turn" in scoped or "LIVE ENTITIES:\n(none)" in scoped
