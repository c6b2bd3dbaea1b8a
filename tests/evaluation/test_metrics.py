"""The metric registry and the per-item values (retrieval metrics via ranx)."""

from __future__ import annotations

import pytest

from turnscope._exceptions import ConfigError
from turnscope.evaluation import (
    DEFAULT_METRICS,
    ItemRecord,
    Metric,
    get_metric,
    metric_names,
    register_metric,
    score_records,
    unregister_metric,
)


def rec(id: str, gold: tuple[str, ...] = (), hits: tuple[str, ...] | None = None,
        **kw: object) -> ItemRecord:
    return ItemRecord(id=id, stratum="ordinal", lang="en", policy="default", follow_up="q",
                      query="q", gold=gold, hits=hits, **kw)  # type: ignore[arg-type]


def test_builtin_metrics_are_registered_by_literature_name() -> None:
    assert set(DEFAULT_METRICS) <= set(metric_names())
    assert get_metric("R@5").ranx_name == "hit_rate@5"
    assert get_metric("MRR").ranx_name == "mrr"
    assert get_metric("contamination").higher_is_better is False
    assert get_metric("coverage").kind == "item"


def test_duplicate_registration_is_rejected() -> None:
    with pytest.raises(ConfigError, match="already registered"):
        register_metric(Metric("R@5", "again", ranx_name="hit_rate@5", depth=5))
    # the original is untouched
    assert get_metric("R@5").description.startswith("share of items")


def test_unknown_metric_lists_the_valid_names() -> None:
    with pytest.raises(ConfigError) as err:
        get_metric("recall@5")
    message = str(err.value)
    assert "recall@5" in message
    for name in ("R@1", "R@5", "MRR", "contamination", "input_coverage"):
        assert name in message


def test_metric_needs_exactly_one_way_of_computing() -> None:
    with pytest.raises(ConfigError, match="exactly one"):
        Metric("x", "neither")
    with pytest.raises(ConfigError, match="exactly one"):
        Metric("y", "both", ranx_name="mrr", check=lambda r: 1.0)


def test_a_registered_metric_is_computed_then_can_be_removed() -> None:
    register_metric(Metric("R@2", "gold in the top 2", ranx_name="hit_rate@2", depth=2))
    try:
        s = score_records([rec("a", ("g",), ("x", "g"))], ["R@2"])
        assert s == {"R@2": [1.0]}
    finally:
        unregister_metric("R@2")
    assert "R@2" not in metric_names()


def test_recall_and_mrr_on_a_hand_made_run() -> None:
    records = [
        rec("first", ("g1",), ("g1", "x", "y")),            # gold at rank 1
        rec("third", ("g2",), ("x", "y", "g2", "z")),       # gold at rank 3
        rec("sixth", ("g3",), ("a", "b", "c", "d", "e", "g3")),  # rank 6
        rec("missed", ("g4",), ("a", "b")),                 # not retrieved
        rec("nothing", ("g5",), ()),                        # blank query: no hits at all
        rec("two golds", ("g6", "g7"), ("g7", "x")),        # one of two golds counts
        rec("no gold", (), ("a",)),                         # not applicable
        rec("not retrieved", ("g8",), None),                # not applicable
    ]
    s = score_records(records, ["R@1", "R@5", "R@10", "MRR"])
    assert s["R@1"] == [1.0, 0.0, 0.0, 0.0, 0.0, 1.0, None, None]
    assert s["R@5"] == [1.0, 1.0, 0.0, 0.0, 0.0, 1.0, None, None]
    assert s["R@10"] == [1.0, 1.0, 1.0, 0.0, 0.0, 1.0, None, None]
    mrr = s["MRR"]
    assert mrr[0] == 1.0 and mrr[5] == 1.0
    assert mrr[1] == pytest.approx(1 / 3)
    assert mrr[2] == pytest.approx(1 / 6)
    assert mrr[3] == 0.0 and mrr[4] == 0.0
    assert mrr[6] is None and mrr[7] is None


def test_rank_order_is_the_retrievers_order_even_with_tied_scores() -> None:
    # ranks, not raw scores, reach ranx, so a tie cannot reshuffle the list
    s = score_records([rec("a", ("g",), ("x", "g", "y"))], ["R@1", "MRR"])
    assert s == {"R@1": [0.0], "MRR": [0.5]}


def test_item_checks() -> None:
    clean = rec("clean", input_forbidden_hits=(), input_required_missing=())
    dirty = rec("dirty", forbidden_hits=("Dublin",), required_missing=("RPO",),
                input_forbidden_hits=("Dublin",), input_required_missing=())
    unscored = rec("first turn", forbidden_hits=("x",), checks_scored=False)
    baseline = rec("baseline")  # no rewriter input recorded
    s = score_records([clean, dirty, unscored, baseline],
                      ["contamination", "coverage", "input_contamination", "input_coverage"])
    assert s["contamination"] == [0.0, 1.0, None, 0.0]
    assert s["coverage"] == [1.0, 0.0, None, 1.0]
    assert s["input_contamination"] == [0.0, 1.0, None, None]
    assert s["input_coverage"] == [1.0, 1.0, None, None]


def test_gold_rank() -> None:
    assert rec("a", ("g",), ("x", "g")).gold_rank == 2
    assert rec("b", ("g",), ("x",)).gold_rank is None
    assert rec("c", (), ("x",)).gold_rank is None


def test_unknown_metric_in_score_records() -> None:
    with pytest.raises(ConfigError, match="valid metrics"):
        score_records([rec("a")], ["P@5"])
