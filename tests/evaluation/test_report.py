"""Terminal tables, the share-weighted decomposition and the HTML/PNG report."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console

from turnscope._exceptions import ConfigError
from turnscope.evaluation import (
    MEAN,
    GateFailure,
    decompose,
    is_failure,
    print_decomposition,
    print_summary,
    print_tables,
    render_html,
    summary_legend,
    write_html,
    write_json,
    write_png,
)


@pytest.fixture
def two_policies(make_result: Any, make_record: Any) -> Any:
    """A: contaminated on all three 'immediate' items, clean on the 'long_range' one;
    B the other way round. Shares 0.75 / 0.25."""
    def recs(policy: str, dirty_immediate: bool) -> list[Any]:
        out = [make_record(f"i{k}", "immediate", policy, gold=("g",), hits=("g",),
                           forbidden_hits=("Dublin",) if dirty_immediate else ())
               for k in range(3)]
        out.append(make_record("l0", "long_range", policy, gold=("g",),
                               hits=("x", "g") if dirty_immediate else ("x",),
                               forbidden_hits=() if dirty_immediate else ("<b>Dublin</b>",),
                               required_missing=() if dirty_immediate else ("RPO",),
                               query="<script>alert(1)</script> RPO"))
        return out
    return make_result({"A": recs("A", True), "B": recs("B", False)})


def test_decomposition_sums_to_the_change_in_the_mean(two_policies: Any) -> None:
    d = decompose(two_policies, "A", "B", "contamination")
    rows = {r.stratum: r for r in d.rows}
    assert [r.stratum for r in d.rows] == ["immediate", "long_range"]
    assert rows["immediate"].share == 0.75 and rows["long_range"].share == 0.25
    assert rows["immediate"].delta == -1.0 and rows["long_range"].delta == 1.0
    assert rows["immediate"].contribution == pytest.approx(-0.75)
    assert rows["long_range"].contribution == pytest.approx(0.25)
    assert d.predicted == pytest.approx(-0.5)
    assert d.actual == pytest.approx(-0.5)
    mean_a = two_policies.policy("A").figure(MEAN, "contamination").value
    mean_b = two_policies.policy("B").figure(MEAN, "contamination").value
    assert d.actual == pytest.approx(mean_b - mean_a)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["immediate", "ordinal", "long_range"]),
                          st.booleans(), st.booleans()), min_size=1, max_size=40))
def test_decomposition_always_closes_with_the_sets_own_shares(
        make_result: Any, make_record: Any, rows: list[tuple[str, bool, bool]]) -> None:
    a = [make_record(f"x{i}", s, "A", forbidden_hits=("t",) if x else ())
         for i, (s, x, _) in enumerate(rows)]
    b = [make_record(f"x{i}", s, "B", forbidden_hits=("t",) if y else ())
         for i, (s, _, y) in enumerate(rows)]
    d = decompose(make_result({"A": a, "B": b}, ("contamination",)), "A", "B",
                  "contamination")
    assert d.predicted == pytest.approx(d.actual, abs=1e-12)
    assert sum(r.share for r in d.rows) == pytest.approx(1.0)


def test_decompose_errors(two_policies: Any) -> None:
    with pytest.raises(ConfigError, match="not evaluated"):
        decompose(two_policies, "A", "C", "R@5")
    with pytest.raises(ConfigError, match="unknown metric"):
        decompose(two_policies, "A", "B", "P@5")


def test_terminal_tables(two_policies: Any) -> None:
    console = Console(record=True, width=120)
    print_tables(two_policies, console)
    out = console.export_text()
    assert "contamination by stratum and policy" in out
    # strata first, mean last, intervals printed under the figure
    assert out.index("immediate") < out.index("long_range") < out.index(MEAN)
    assert re.search(r"\.\d\d–\d?\.\d\d", out)
    print_decomposition(decompose(two_policies, "A", "B", "contamination"), console)
    out = console.export_text()
    assert "sum of delta × share" in out and "-0.500" in out


def test_side_by_side_tables_read_whole_at_80_columns(make_result: Any, make_record: Any) -> None:
    # the longest stratum name beside four baselines: nothing is cut mid-word
    policies = ["default", "baseline:raw", "baseline:prev_user", "baseline:all_history",
                "baseline:yours"]
    result = make_result({p: [make_record(f"i{k}", s, p, gold=("g",), hits=("g",))
                              for k, s in enumerate(["post_pivot_standalone", "explicit_recall"])]
                          for p in policies})
    console = Console(record=True, width=80)
    print_tables(result, console)
    out = console.export_text()
    assert max(len(line) for line in out.splitlines()) <= 80
    words = set(out.split())
    assert {"post_pivot_standalone", "explicit_recall", "prev_user", "all_history", "yours"} <= words
    assert "baseline:" in words


def test_single_policy_table_has_every_metric(make_result: Any, make_record: Any) -> None:
    result = make_result({"only": [make_record("a", "ordinal", "only", gold=("g",),
                                               hits=("g",), input_forbidden_hits=(),
                                               input_required_missing=())]})
    console = Console(record=True, width=200)
    print_tables(result, console)
    out = console.export_text()
    for metric in ("R@1", "R@5", "R@10", "MRR", "contamination", "coverage",
                   "input_contamination", "input_coverage"):
        assert metric in out


def test_html_report_is_self_contained(two_policies: Any, tmp_path: Path) -> None:
    d = decompose(two_policies, "A", "B", "contamination")
    failures = [GateFailure("B", "long_range", "R@5", 0.0, 0.9, "floor")]
    path = write_html(two_policies, tmp_path / "sub" / "report.html", decompositions=[d],
                      gate_failures=failures)
    page = path.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>")
    # nothing is fetched: no external src/href, no script, no URL of any kind
    assert not re.search(r"""(src|href)\s*=\s*["']?\s*(https?:)?//""", page)
    assert "http://" not in page and "https://" not in page
    assert "<script" not in page and "<link" not in page
    # a grouped bar chart per metric, bars for both policies
    assert page.count("<svg") >= 3
    assert "A · long_range" in page and "B · immediate" in page
    # per-item failures with the rewrite, the terms, and the gold rank; text is escaped
    assert "&lt;script&gt;alert(1)&lt;/script&gt; RPO" in page
    assert "&lt;b&gt;Dublin&lt;/b&gt;" in page
    assert "not retrieved" in page
    assert "stratum long_range: R@5 0.000 &lt; floor 0.90 (policy B)" in page
    assert "sum of delta × share" in page


def test_png_is_written_when_matplotlib_is_there(two_policies: Any, tmp_path: Path) -> None:
    out = write_png(two_policies, tmp_path / "chart.png")
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        assert out is None
        return
    assert out is not None and out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_json_output(two_policies: Any, tmp_path: Path) -> None:
    import json

    path = write_json(two_policies, tmp_path / "out.json", gate_failures=[])
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["gate"] == {"passed": True, "failures": []}
    assert [p["policy"] for p in data["policies"]] == ["A", "B"]
    first = data["policies"][0]["records"][0]
    assert first["scores"]["contamination"] == 1.0 and first["gold_rank"] == 1


def test_is_failure(make_record: Any) -> None:
    ok = make_record("a", "ordinal", "p", gold=("g",), hits=("x", "g"))
    assert not is_failure(ok)
    assert is_failure(make_record("b", "ordinal", "p", gold=("g",), hits=("1", "2", "3", "4",
                                                                           "5", "g")))
    assert is_failure(make_record("c", "ordinal", "p", forbidden_hits=("Dublin",)))
    assert is_failure(make_record("d", "ordinal", "p", error="boom"))
    assert not is_failure(make_record("e", "ordinal", "p", forbidden_hits=("x",),
                                      checks_scored=False))


@pytest.fixture
def with_baselines(make_result: Any, make_record: Any) -> Any:
    """Two policies and two baselines on two items: ``full`` shows the rewriter the left
    subject on both items yet rewrites clean; the whole history carries it."""
    def recs(policy: str, **kw: Any) -> list[Any]:
        return [make_record(f"i{k}", "immediate" if k else "long_range", policy, **kw)
                for k in range(2)]
    seen = {"input_forbidden_hits": ("Frankfurt",), "input_required_missing": ()}
    return make_result({
        "full": recs("full", **seen),
        "default": recs("default", input_forbidden_hits=(), input_required_missing=()),
        "baseline:raw": recs("baseline:raw", required_missing=("Dublin",)),
        "baseline:all_history": recs("baseline:all_history", forbidden_hits=("Frankfurt",)),
    })


def test_summary_is_one_table_and_a_legend(with_baselines: Any) -> None:
    console = Console(record=True, width=200)
    print_summary(with_baselines, console)
    out = console.export_text()
    # policies first, then the baselines under their plain names
    assert out.index("full") < out.index("default") < out.index("raw message") \
        < out.index("whole history prepended")
    assert "baseline:" not in out
    # means only: no stratum is named
    assert "long_range" not in out and "immediate" not in out
    row = next(line for line in out.splitlines() if line.startswith("full"))
    # coverage, contamination, input coverage, input contamination (recall: no gold here)
    assert row.split()[1:] == ["1.00", "0.00", "1.00", "1.00"]
    row = next(line for line in out.splitlines() if line.startswith("raw message"))
    assert row.split()[2:] == ["0.00", "0.00", "–", "–"]
    legend = dict(summary_legend(with_baselines))
    assert "recall@5" not in legend
    assert "subject the user has left" in legend["contamination"]
    assert "high input contamination" in legend["input coverage, input contamination"]
    assert "input contamination: the same two checks on what the policy shows the rewriter" in out


def test_report_opens_on_the_summary(with_baselines: Any) -> None:
    page = render_html(with_baselines)
    first_table = page.index('<table class="summary">')
    # the summary table, its picture and the legend come before every per-stratum figure
    assert first_table < page.index("<svg") < page.index("Details: figures by stratum")
    assert page.index("whole history prepended") < page.index("long_range")
    summary = page[first_table:page.index("Details: figures by stratum")]
    assert "every earlier turn" in summary and "a fixed query, no rewriter" in summary
    assert "<dt>input coverage, input contamination</dt>" in summary
    # the one-sentence answer: the default policy beside the whole history and the message
    assert ("the default policy 100% / 0%, the whole history prepended 100% / 100%, "
            "the raw message 0% / 0%") in page


def test_summary_png(with_baselines: Any, tmp_path: Path) -> None:
    out = write_png(with_baselines, tmp_path / "summary.png")
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        assert out is None
        return
    assert out is not None and out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
