"""Query baselines: fixed queries built from the history, scored like the policies' rewrites."""

from __future__ import annotations

from typing import Any

from turnscope._items import FollowUpItem
from turnscope.evaluation import (
    MEAN,
    EvalConfig,
    baseline_title,
    query_baselines,
    run_eval,
)


def test_the_three_queries(long_range_items: list[FollowUpItem]) -> None:
    item = long_range_items[0]
    b = query_baselines([item])
    assert list(b) == ["raw", "prev_user", "all_history"]
    assert b["raw"] == [item.follow_up]
    # the previous *user* turn is the digression's last question, not the list
    assert b["prev_user"] == [f"and how long do we have to pay them? {item.follow_up}"]
    whole = b["all_history"][0]
    assert whole.startswith("list the asia pacific regions") and whole.endswith(item.follow_up)
    assert "Sydney (ap-southeast-2)" in whole  # the assistant's turns are history too


def test_without_assistant_turns_the_whole_history_is_the_user_turns() -> None:
    items = [FollowUpItem.model_validate(
        {"id": "c1", "follow_up": "is it treatable?",
         "prefix": [{"role": "user", "content": "what is throat cancer?"},
                    {"role": "user", "content": "what causes it?"}]}),
        FollowUpItem.model_validate({"id": "c0", "follow_up": "what is throat cancer?"})]
    b = query_baselines(items)
    assert b["all_history"] == ["what is throat cancer? what causes it? is it treatable?",
                                "what is throat cancer?"]
    assert b["prev_user"] == ["what causes it? is it treatable?", "what is throat cancer?"]


def test_titles_are_plain_words() -> None:
    assert baseline_title("baseline:raw") == "raw message"
    assert baseline_title("baseline:all_history") == "whole history prepended"
    assert baseline_title("baseline:something_new") == "something_new"
    assert baseline_title("window:2") == "window:2"


def test_baselines_are_scored_with_the_same_checks(long_range_items: list[FollowUpItem],
                                                   tiny_corpus: Any) -> None:
    result = run_eval(long_range_items, EvalConfig(retriever="bm25", corpus=tiny_corpus,
                                                   resamples=50),
                      baselines=query_baselines(long_range_items), progress=False)
    assert result.policy_names == ["default", "baseline:raw", "baseline:prev_user",
                                   "baseline:all_history"]

    def mean(label: str, metric: str) -> float | None:
        iv = result.policy(label).figure(MEAN, metric)
        return None if iv is None else iv.value

    # the message alone names no antecedent but one ("back to the peering"), and never the
    # digression
    assert mean("baseline:raw", "coverage") == 0.2
    assert mean("baseline:raw", "contamination") == 0.0
    # the whole history holds the antecedent and the left subject (invoices) alike
    assert mean("baseline:all_history", "coverage") == 1.0
    assert mean("baseline:all_history", "contamination") == 1.0
    # a fixed query has no rewriter input to check
    assert mean("baseline:all_history", "input_contamination") is None
    assert mean("baseline:raw", "R@5") is not None
