"""Per-stratum gates: parsing, failures, and the gate biting a broken policy."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from turnscope._exceptions import GateError
from turnscope._items import FollowUpItem
from turnscope.evaluation import (
    EvalConfig,
    bundled_gate,
    bundled_session_vocabulary,
    check_gate,
    load_gate,
    parse_gate,
    run_eval,
)
from turnscope.retrieval import Corpus


def test_parse_and_wildcard() -> None:
    gate = parse_gate("""
        [floors."*"]
        "R@5" = 0.8
        [floors.long_range]
        "R@5" = 0.9
        coverage = 0.5
        [ceilings."*"]
        contamination = 0.05
        [floors.mean]
        "R@5" = 0.85
    """)
    assert sorted(gate.bounds_for("long_range")) == [
        ("R@5", 0.9, "floor"), ("contamination", 0.05, "ceiling"), ("coverage", 0.5, "floor")]
    assert sorted(gate.bounds_for("ordinal")) == [("R@5", 0.8, "floor"),
                                                  ("contamination", 0.05, "ceiling")]
    # the wildcard is for strata; the mean is gated only when named
    assert gate.bounds_for("mean") == [("R@5", 0.85, "floor")]
    assert gate.named_strata == ["long_range", "mean"]


@pytest.mark.parametrize("text, match", [
    ("[floors.long_range\n", "not valid TOML"),
    ("floor = 1\n", "unknown key"),
    ('[floors.long_range]\n"recall@5" = 0.9\n', r"unknown metric 'recall@5'; valid metrics: R@1"),
    ("[floors.long_range]\ncontamination = 0.05\n",
     r"lower-is-better; put its bound under \[ceilings.long_range\]"),
    ('[ceilings.long_range]\n"R@5" = 0.9\n', r"under \[floors.long_range\]"),
    ('[floors.long_range]\n"R@5" = 90\n', "outside"),
    ('[floors.long_range]\n"R@5" = "high"\n', "must be a number"),
    ('[floors.long_range]\n"R@5" = true\n', "must be a number"),
    ("floors = 3\n", "must be a table of strata"),
    ("[floors]\nlong_range = 0.9\n", "must be a table of metric"),
    ("[floors.long_range]\n", "names no metric"),
    ("description = 'nothing'\n", "sets no bound"),
    ('policies = "default"\n[floors.x]\n"R@5" = 0.5\n', "policies must be"),
])
def test_malformed_gates_name_the_problem(text: str, match: str) -> None:
    with pytest.raises(GateError, match=match):
        parse_gate(text, "g.toml")


def test_load_gate(tmp_path: Path) -> None:
    with pytest.raises(GateError, match="gate file not found"):
        load_gate(tmp_path / "missing.toml")
    path = tmp_path / "gate.toml"
    path.write_text('[floors.ordinal]\n"R@5" = 0.5\n', encoding="utf-8")
    assert load_gate(path).source == str(path)
    bad = tmp_path / "bad.toml"
    bad.write_text('[floors.ordinal]\n"R@5" = 2\n', encoding="utf-8")
    with pytest.raises(GateError, match=str(bad)):
        load_gate(bad)


def test_the_bundled_gate_parses_and_names_every_stratum() -> None:
    from turnscope._items import STRATA

    gate = load_gate("default")
    assert gate == bundled_gate()
    assert set(STRATA) <= set(gate.named_strata)
    for s in STRATA:
        metrics = {m for m, _, _ in gate.bounds_for(s)}
        assert {"R@5", "contamination"} <= metrics
    with pytest.raises(GateError, match="no bundled gate named 'strict'"):
        bundled_gate("strict")


def test_failures_name_stratum_metric_value_and_bound(make_result: Any,
                                                      make_record: Any) -> None:
    recs = [make_record("a", "ordinal", "p", gold=("g",), hits=("g",)),
            make_record("b", "long_range", "p", gold=("g",), hits=("x",),
                        forbidden_hits=("Dublin",))]
    result = make_result({"p": recs})
    gate = parse_gate("""
        [floors."*"]
        "R@5" = 0.9
        [ceilings.long_range]
        contamination = 0.1
        [floors.situational]
        "R@5" = 0.5
    """)
    failures = check_gate(gate, result)
    got = {(f.stratum, f.metric, f.value, f.bound, f.kind) for f in failures}
    assert got == {
        ("long_range", "R@5", 0.0, 0.9, "floor"),
        ("long_range", "contamination", 1.0, 0.1, "ceiling"),
        ("situational", "", None, 0.5, "floor"),  # named, but absent from the results
    }
    messages = sorted(f.message for f in failures)
    assert "stratum long_range: R@5 0.000 < floor 0.90 (policy p)" in messages
    assert "stratum long_range: contamination 1.000 > ceiling 0.10 (policy p)" in messages
    assert "stratum situational: no items to judge (floor 0.50, policy p)" in messages


def test_metric_without_a_figure_fails(make_result: Any, make_record: Any) -> None:
    # no gold anywhere: R@5 cannot be computed, which must not pass silently
    result = make_result({"p": [make_record("a", "ordinal", "p")]})
    failures = check_gate(parse_gate('[floors.ordinal]\n"R@5" = 0.5\n'), result)
    assert [(f.metric, f.value) for f in failures] == [("R@5", None)]
    assert "no R@5 figure" in failures[0].message


def test_which_policies_are_judged(make_result: Any, make_record: Any) -> None:
    good = [make_record("a", "ordinal", "good", gold=("g",), hits=("g",))]
    bad = [make_record("a", "ordinal", "bad", gold=("g",), hits=())]
    base = [make_record("a", "ordinal", "baseline:raw", gold=("g",), hits=())]
    result = make_result({"good": good, "bad": bad, "baseline:raw": base})
    gate = parse_gate('[floors.ordinal]\n"R@5" = 0.5\n')
    assert {f.policy for f in check_gate(gate, result)} == {"bad"}  # baselines not judged
    assert check_gate(gate, result, ["good"]) == []
    pinned = parse_gate('policies = ["good"]\n[floors.ordinal]\n"R@5" = 0.5\n')
    assert check_gate(pinned, result) == []
    with pytest.raises(GateError, match="judges policy 'default', which was not evaluated"):
        check_gate(gate, result, ["default"])


def test_the_gate_bites_a_broken_policy(long_range_items: list[FollowUpItem],
                                        tiny_corpus: Corpus, long_range_gate: str) -> None:
    """A one-turn window cannot reach an antecedent four turns back: the per-stratum gate
    fails it on long_range, while the default policy passes the same gate."""
    config = EvalConfig(policies=("window:1", "default"), retriever="bm25", corpus=tiny_corpus,
                        vocabulary=bundled_session_vocabulary(), resamples=200)
    result = run_eval(long_range_items, config, progress=False)
    gate = parse_gate(long_range_gate, "long-range gate")

    broken = check_gate(gate, result, ["window:1"])
    assert broken, "the gate let window:1 through"
    assert {f.stratum for f in broken} == {"long_range"}
    assert {f.metric for f in broken} >= {"R@1", "coverage"}
    assert all("stratum long_range" in f.message and "window:1" in f.message for f in broken)

    assert check_gate(gate, result, ["default"]) == []
