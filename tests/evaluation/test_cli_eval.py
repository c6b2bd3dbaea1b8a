"""``turnscope eval`` through typer's CliRunner, on a tiny data set and corpus."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from turnscope.cli._eval import register
from turnscope.retrieval import Corpus

runner = CliRunner()


def flat(output: str) -> str:
    """The output with rich's panel borders and line wrapping undone."""
    return " ".join(re.sub("[│╭╮╰╯─]", " ", output).split())


@pytest.fixture
def app() -> typer.Typer:
    app = typer.Typer()

    @app.callback()
    def main() -> None:
        """Keeps ``eval`` a subcommand (a one-command app would collapse into it)."""

    register(app)
    return app


@pytest.fixture
def files(tmp_path: Path, item_dicts: list[dict[str, Any]], tiny_corpus: Corpus,
          long_range_gate: str) -> dict[str, Path]:
    items = tmp_path / "items.jsonl"
    items.write_text("".join(json.dumps(d) + "\n" for d in item_dicts), encoding="utf-8")
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"id": p.id, "title": p.title, "text": p.text}) + "\n"
                              for p in tiny_corpus), encoding="utf-8")
    gate = tmp_path / "gate.toml"
    gate.write_text(long_range_gate, encoding="utf-8")
    return {"items": items, "corpus": corpus, "gate": gate, "dir": tmp_path}


def _base(files: dict[str, Path]) -> list[str]:
    # the items are written in the shipped cloud domain: a file other than the bundled
    # set gets no vocabulary unless it declares one
    return ["eval", "--dataset", str(files["items"]), "--corpus", str(files["corpus"]),
            "--retriever", "bm25", "--resamples", "100", "--vocabulary", "bundled"]


def test_eval_passes_the_gate_and_writes_reports(app: typer.Typer,
                                                 files: dict[str, Path]) -> None:
    report = files["dir"] / "report.html"
    out_json = files["dir"] / "out.json"
    # a wide terminal, so that no row name is folded over two lines of the table
    res = runner.invoke(app, [*_base(files), "--policies", "default", "--gate",
                              str(files["gate"]), "--report", str(report),
                              "--json", str(out_json)], env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    assert "gate passed" in res.output
    out = flat(res.output)
    # by default one summary table (policies and the query baselines, means only) and its
    # legend in plain words; the per-stratum tables wait for --detail
    assert "default" in out and "raw message" in out and "whole history prepended" in out
    assert "contamination: share of rewrites holding a word of a subject the user has left" in out
    assert "by stratum" not in out
    page = report.read_text(encoding="utf-8")
    assert "<svg" in page
    # the report has the strata anyway, below the summary
    assert page.index("whole history prepended") < page.index("long_range")
    data = json.loads(out_json.read_text(encoding="utf-8"))
    assert data["gate"]["passed"] is True
    assert [p["policy"] for p in data["policies"]] == [
        "default", "baseline:raw", "baseline:prev_user", "baseline:all_history"]
    # and so does the JSON, for every row
    assert {r["stratum"] for r in data["policies"][0]["rows"]} == {"long_range", "standalone",
                                                                   "mean"}


def test_detail_prints_the_figures_per_stratum(app: typer.Typer, files: dict[str, Path]) -> None:
    res = runner.invoke(app, [*_base(files), "--policies", "window:1,default", "--detail"])
    assert res.exit_code == 0, res.output
    out = flat(res.output)
    for metric in ("R@1", "coverage", "input_contamination"):
        assert f"{metric} by stratum and policy" in out
    assert out.index("standalone") < out.index("long_range") < out.rindex("mean")
    # the summary still comes last, where a terminal's last screen shows it
    assert out.rindex("by stratum and policy") < out.index("mean over the items scored")


def test_no_baselines_scores_the_policies_alone(app: typer.Typer, files: dict[str, Path]) -> None:
    out_json = files["dir"] / "alone.json"
    res = runner.invoke(app, [*_base(files), "--policies", "default", "--no-baselines",
                              "--json", str(out_json)])
    assert res.exit_code == 0, res.output
    assert "raw message" not in flat(res.output)
    data = json.loads(out_json.read_text(encoding="utf-8"))
    assert [p["policy"] for p in data["policies"]] == ["default"]


def test_gate_failure_exits_1_naming_the_stratum(app: typer.Typer,
                                                 files: dict[str, Path]) -> None:
    res = runner.invoke(app, [*_base(files), "--policies", "window:1,default", "--gate",
                              str(files["gate"])])
    assert res.exit_code == 1, res.output
    assert "gate failed" in res.output
    assert "stratum long_range" in res.output and "window:1" in res.output


def test_compare_prints_the_decomposition(app: typer.Typer, files: dict[str, Path]) -> None:
    res = runner.invoke(app, [*_base(files), "--policies", "default",
                              "--compare", "full", "window:2"])
    assert res.exit_code == 0, res.output
    assert "full → window:2" in res.output
    assert "sum of delta × share" in res.output and "actual change in the mean" in res.output


@pytest.mark.parametrize("args, message", [
    (["--dataset", "nope.jsonl"], "neither a file nor one of bundled, cast2019"),
    (["--policies", "widow:2"], "unknown policy 'widow:2'"),
    (["--retriever", "splade"], "unknown retriever 'splade'"),
    (["--gate", "missing.toml"], "gate file not found"),
    (["--dataset", "topiocqa", "--report", "r.html"], "--report applies to follow-up sets"),
    (["--rewriter", "llm"], "needs base_url and model"),
])
def test_errors_are_messages_not_tracebacks(app: typer.Typer, files: dict[str, Path],
                                            args: list[str], message: str) -> None:
    base = _base(files)
    if "--dataset" in args:
        base = ["eval", "--retriever", "bm25"]
    res = runner.invoke(app, [*base, *args])
    assert res.exit_code == 2, res.output
    assert message in flat(res.output)
    assert "Traceback" not in res.output


def test_bad_item_line_is_named(app: typer.Typer, files: dict[str, Path]) -> None:
    bad = files["dir"] / "bad.jsonl"
    bad.write_text('{"id": "a", "follow_up": "ok?"}\n{"id": "b"}\n', encoding="utf-8")
    res = runner.invoke(app, ["eval", "--dataset", str(bad), "--retriever", "bm25"])
    assert res.exit_code == 2
    assert "line 2" in flat(res.output)


def test_bad_gate_is_reported_before_the_run(app: typer.Typer, files: dict[str, Path]) -> None:
    gate = files["dir"] / "bad.toml"
    gate.write_text('[floors.long_range]\ncontamination = 0.1\n', encoding="utf-8")
    res = runner.invoke(app, [*_base(files), "--gate", str(gate)])
    assert res.exit_code == 2
    assert "ceilings.long_range" in flat(res.output)


def _rewrites(files: dict[str, Path], item_dicts: list[dict[str, Any]], query: Any) -> Path:
    path = files["dir"] / "mine.jsonl"
    path.write_text("".join(json.dumps({"id": d["id"], "query": query(d)}) + "\n"
                            for d in item_dicts), encoding="utf-8")
    return path


def test_your_rewrites_are_scored_and_gated_beside_the_policies(
        app: typer.Typer, files: dict[str, Path], item_dicts: list[dict[str, Any]]) -> None:
    # a condense step that pastes the whole history in front: it keeps left subjects
    mine = _rewrites(files, item_dicts,
                     lambda d: " ".join([t["content"] for t in d["prefix"]] + [d["follow_up"]]))
    out_json = files["dir"] / "yours.json"
    res = runner.invoke(app, [*_base(files), "--policies", "default", "--rewrites", str(mine),
                              "--gate", str(files["gate"]), "--json", str(out_json)],
                        env={"COLUMNS": "200"})
    data = json.loads(out_json.read_text(encoding="utf-8"))
    yours = next(p for p in data["policies"] if p["policy"] == "baseline:yours")
    mean = next(r for r in yours["rows"] if r["stratum"] == "mean")
    assert mean["n"] == len(item_dicts)
    assert "your rewrites" in flat(res.output)
    # the gate judges them as it judges the policies: the pasted history carries the left
    # subject into the long-range questions, which the policy's rewrites do not
    assert {f["policy"] for f in data["gate"]["failures"]} == {"baseline:yours"}
    assert res.exit_code == 1


@pytest.mark.parametrize(("lines", "message"), [
    (["{not json"], "line 1: not JSON"),
    (['{"id": "x"}'], 'line 1: expected {"id"'),
    (None, "no rewrite for"),
])
def test_a_bad_rewrites_file_is_named_before_anything_runs(
        app: typer.Typer, files: dict[str, Path], item_dicts: list[dict[str, Any]],
        lines: list[str] | None, message: str) -> None:
    path = files["dir"] / "bad.jsonl"
    if lines is None:  # every item but the last
        lines = [json.dumps({"id": d["id"], "query": d["follow_up"]}) for d in item_dicts[:-1]]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    res = runner.invoke(app, [*_base(files), "--rewrites", str(path)], env={"COLUMNS": "200"})
    assert res.exit_code == 2
    assert message in flat(res.output)
    assert str(path) in flat(res.output).replace(" ", "") or "bad.jsonl" in flat(res.output)
