"""CAsT 2021 and CANARD: conversations with the assistant's responses (issue 8's data)."""

from __future__ import annotations

import pytest

from turnscope import InputError
from turnscope.datasets import cast21_part, cast_baselines, load_canard, load_cast


@pytest.fixture(scope="module")
def cast21() -> list[dict]:  # type: ignore[type-arg]
    return load_cast(2021)


def test_cast21_prefix_alternates_user_and_passage(cast21: list[dict]) -> None:  # type: ignore[type-arg]
    item = next(it for it in cast21 if len(it["prefix"]) >= 4)
    assert [t["role"] for t in item["prefix"][:4]] == ["user", "assistant", "user", "assistant"]
    assert len(item["prefix"][1]["content"]) > 100  # a passage, not an utterance


def test_cast21_split_is_by_topic_parity_and_covers_everything(cast21: list[dict]) -> None:  # type: ignore[type-arg]
    dev, check = load_cast(2021, part="dev"), load_cast(2021, part="check")
    assert len(dev) + len(check) == len(cast21) == 239
    dev_topics = {it["conversation"] for it in dev}
    check_topics = {it["conversation"] for it in check}
    assert not dev_topics & check_topics
    assert all(int(c.split("_")[1]) % 2 == 0 for c in dev_topics)
    assert cast21_part(107) == "check" and cast21_part(106) == "dev"


def test_required_words_can_come_from_a_response(cast21: list[dict]) -> None:  # type: ignore[type-arg]
    # some required word occurs only in an earlier passage, never in an earlier user turn
    def only_in_response(it: dict) -> bool:  # type: ignore[type-arg]
        users = " ".join(t["content"].lower() for t in it["prefix"] if t["role"] == "user")
        answers = " ".join(t["content"].lower() for t in it["prefix"] if t["role"] == "assistant")
        for req in it["required_in_rewrite"]:
            forms = [req] if isinstance(req, str) else req
            if not any(f in users for f in forms) and any(f in answers for f in forms):
                return True
        return False

    assert sum(only_in_response(it) for it in cast21) >= 30


def test_part_is_rejected_for_other_years() -> None:
    with pytest.raises(InputError, match="only defined for 2021"):
        load_cast(2020, part="dev")


def test_baselines_with_responses_include_the_previous_exchange(cast21: list[dict]) -> None:  # type: ignore[type-arg]
    b = cast_baselines(cast21)
    assert {"prev_exchange", "all_history", "automatic", "human"} <= set(b)
    item = cast21[1]
    assert b["prev_exchange"][1].startswith(item["prefix"][0]["content"])
    assert b["prev_exchange"][1].endswith(item["follow_up"])


def test_canard_dialogues_open_with_title_and_section() -> None:
    items = load_canard()
    assert len(items) == 3430
    first = items[0]
    assert first["prefix"] == [{"role": "user", "content": "Frank Zappa — Disbandment"}]
    second = items[1]
    assert second["follow_up"] == "When did they disband?"
    assert second["prefix"][-1] == {"role": "assistant", "content": "Zappa and the Mothers of Invention"}
    assert "zappa" in second["required_in_rewrite"]
    assert second["prefix_rewrites"] == ["What group disbanded?"]
