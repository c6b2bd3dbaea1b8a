"""Reporting: terminal tables, the share-weighted decomposition, and a self-contained HTML page.

Every figure is shown per stratum with its share of the set and its bootstrap
interval, the mean last (docs/benchmarks.md). The HTML report draws its charts as
inline SVG and carries its own CSS, so it opens in a browser with no network
and no JavaScript.
"""

from __future__ import annotations

import html
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from turnscope._exceptions import ConfigError, InputError
from turnscope.evaluation._baselines import BASELINE_PREFIX, baseline_title
from turnscope.evaluation._bootstrap import Interval
from turnscope.evaluation._gate import GateFailure
from turnscope.evaluation._metrics import ItemRecord, get_metric
from turnscope.evaluation._runner import MEAN, EvalResult, PolicyResult, stratum_order

__all__ = [
    "DEFAULT_CHART_METRICS",
    "DEFAULT_COMPARE_METRICS",
    "DEFAULT_FAILURE_RANK",
    "SUMMARY_METRICS",
    "Decomposition",
    "DecompositionRow",
    "decompose",
    "is_failure",
    "print_decomposition",
    "print_summary",
    "print_tables",
    "render_html",
    "summary_legend",
    "write_html",
    "write_json",
    "write_png",
]

#: metrics charted in the HTML report (those with figures), in this order
DEFAULT_CHART_METRICS: tuple[str, ...] = (
    "R@5", "MRR", "contamination", "coverage", "input_contamination", "input_coverage",
)
#: metrics ``--compare`` decomposes
DEFAULT_COMPARE_METRICS: tuple[str, ...] = ("R@5", "contamination", "coverage")
#: an item whose best gold passage ranks below this counts as a retrieval failure
DEFAULT_FAILURE_RANK = 5
#: the summary's columns: the rewrite's two checks, their input twins, then recall
SUMMARY_METRICS: tuple[str, ...] = (
    "coverage", "contamination", "input_coverage", "input_contamination", "R@5",
)
#: column titles of the summary, in plain words
_SUMMARY_TITLES = {"coverage": "coverage", "contamination": "contamination",
                   "input_coverage": "input coverage", "input_contamination": "input contamination",
                   "R@5": "recall@5"}
#: what each scope policy shows the rewriter (the module table of turnscope.scope._policies)
_POLICY_WORDS = {
    "full": "every earlier turn (what a condense prompt is handed)",
    "window": "the last few turns",
    "segment": "the turns since the last topic shift",
    "liveness": "entities still in use, plus the last two turns",
    "relevant": "the earlier exchange a message names",
    "default": "live entities, a recalled exchange, the screen",
}
#: what the baselines a data set brings along are, where "a fixed query" would mislead
_BASELINE_WORDS = {
    "human": "a person's rewrite, the set's answer key",
    "automatic": "the set organisers' automatic rewriter",
}
#: Okabe-Ito: distinguishable with the common colour-vision deficiencies
_PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442",
            "#000000")


def _fmt(x: float) -> str:
    return f"{x:.2f}"


def _ci(iv: Interval) -> str:
    return f"[{iv.low:.2f}, {iv.high:.2f}]"


def _metrics_with_figures(result: EvalResult, wanted: Sequence[str]) -> list[str]:
    return [m for m in wanted
            if any(p.figure(MEAN, m) is not None for p in result.policies)]


def _all_strata(result: EvalResult) -> list[str]:
    seen: set[str] = set()
    for p in result.policies:
        seen.update(p.strata)
    return stratum_order(sorted(seen)) + [MEAN]


# ---------------------------------------------------------------------- terminal


def _cell(iv: Interval | None) -> Text:
    # value over its interval: two short lines keep eight columns inside 80 characters
    if iv is None:
        return Text("–", style="dim")
    out = Text(_fmt(iv.value))
    # ".35–.74": the leading zero dropped so six policies fit in 80 columns
    out.append(f"\n{_short(iv.low)}–{_short(iv.high)}", style="dim")
    return out


def _short(x: float) -> str:
    return f"{x:.2f}".removeprefix("0")


def _table(title: str) -> Table:
    # no cell padding: the box's blank column separator is the only gap, which is what
    # lets six policies' figures and intervals fit in 80 columns (CI logs)
    return Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, padding=(0, 0),
                 show_edge=False)


def _policy_table(p: PolicyResult, metrics: Sequence[str], title: str) -> Table:
    table = _table(title)
    table.add_column("stratum", overflow="fold")
    table.add_column("n", justify="right")
    table.add_column("share", justify="right", min_width=4)
    for m in metrics:
        arrow = "↑" if get_metric(m).higher_is_better else "↓"
        table.add_column(f"{m} {arrow}", justify="right", overflow="fold", min_width=9)
    for row in p.rows:
        if row.stratum == MEAN:
            table.add_section()
        table.add_row(row.stratum, str(row.n), f"{row.share:.0%}",
                      *[_cell(row.figures.get(m)) for m in metrics],
                      style="bold" if row.stratum == MEAN else "")
    return table


def _side_by_side(result: EvalResult, metric: str) -> Table:
    better = "higher" if get_metric(metric).higher_is_better else "lower"
    table = _table(f"{metric} by stratum and policy ({better} is better; value over its 95% "
                   f"interval)")
    # figures never wrap (min_width fits "1.00–1.00"); a long stratum name folds instead
    table.add_column("stratum", overflow="fold")
    table.add_column("share", justify="right", min_width=4)
    for p in result.policies:
        # "baseline:prev_user" on two lines ("baseline:" over "prev_user"): folded at the
        # column's width it read "baseline:pre" over "v_user" at 80 columns
        table.add_column(p.policy.replace(":", ":\n", 1), justify="right", overflow="fold",
                         min_width=9)
    first = result.policies[0]
    for s in _all_strata(result):
        row = first.row(s)
        if s == MEAN:
            table.add_section()
        share = f"{row.share:.0%}" if row is not None else "–"
        table.add_row(s, share, *[_cell(p.figure(s, metric)) for p in result.policies],
                      style="bold" if s == MEAN else "")
    return table


def print_tables(result: EvalResult, console: Console | None = None,
                 metrics: Sequence[str] | None = None) -> None:
    """Print the figures per stratum, mean last, each over its 95% interval.

    One policy: a table of retrieval metrics and a table of rewrite and input checks.
    Several policies: one side-by-side table (strata × policies) per metric.

    >>> print_tables(run_eval(items, EvalConfig(policies=("full", "default"))))  # doctest: +SKIP
    """
    con = console or Console()
    shown = _metrics_with_figures(result, metrics or result.metrics)
    retr = f" · retriever {result.retriever}" if result.retriever else ""
    n = len(result.policies[0].records) if result.policies else 0
    con.print(f"[bold]{result.dataset}[/bold] · {n} items · rewriter {result.rewriter}{retr} · "
              f"policies {', '.join(result.policy_names)}")
    con.print()
    if len(result.policies) == 1:
        p = result.policies[0]
        for kind, label in (("retrieval", "retrieval"), ("item", "rewrite and input checks")):
            group = [m for m in shown if get_metric(m).kind == kind]
            if group:
                con.print(_policy_table(p, group, f"policy {p.policy} · {label}"))
                con.print()
    else:
        for m in shown:
            con.print(_side_by_side(result, m))
            con.print()
    for note in result.notes:
        con.print(f"[yellow]note:[/yellow] {note}")


# ----------------------------------------------------------------------- summary


def _summary_metrics(result: EvalResult) -> list[str]:
    return _metrics_with_figures(result, SUMMARY_METRICS)


def _summary_rows(result: EvalResult) -> list[PolicyResult]:
    """Policies in the order named, then the baselines (simplest first, as run)."""
    policies = [p for p in result.policies if not p.policy.startswith(BASELINE_PREFIX)]
    return policies + [p for p in result.policies if p.policy.startswith(BASELINE_PREFIX)]


def _policy_words(label: str) -> str:
    """What a row is, in plain words: what a policy shows the rewriter, or the baseline's
    query ("" for a policy this module does not know)."""
    if label.startswith(BASELINE_PREFIX):
        return _BASELINE_WORDS.get(label[len(BASELINE_PREFIX):], "a fixed query, no rewriter")
    name, _, arg = label.partition(":")
    if name == "window" and arg.isdigit():
        return f"the last {arg} turns"
    if name == "segment" and arg:
        return f"the turns since the last topic shift ({arg} detector)"
    return _POLICY_WORDS.get(name, "")


def summary_legend(result: EvalResult) -> list[tuple[str, str]]:
    """The summary's columns and rows explained in plain words, as (term, explanation)."""
    shown = _summary_metrics(result)
    legend: list[tuple[str, str]] = []
    if "coverage" in shown:
        legend.append(("coverage", "share of rewrites holding every word they need (the words a "
                                   "human rewrite brings in from earlier turns)"))
    if "contamination" in shown:
        legend.append(("contamination",
                       "share of rewrites holding a word of a subject the user has left"))
    if "input_coverage" in shown or "input_contamination" in shown:
        legend.append(("input coverage, input contamination",
                       "the same two checks on what the policy shows the rewriter, the evidence "
                       "an LLM rewriter would be given. A policy can show the rewriter a left "
                       "subject (high input contamination) while the embedded rewriter still "
                       "leaves it out of the query (low contamination)"))
    if "R@5" in shown:
        legend.append(("recall@5", "share of follow-ups whose right passage is among the first "
                                   f"5 the retriever ({result.retriever}) returns for the query"))
    rows = "a policy decides what the embedded rewriter is shown"
    if any(p.policy.startswith(BASELINE_PREFIX) for p in result.policies):
        rows += ("; a baseline is a query built without turnscope (the message with history "
                 "pasted in front, or the set's own rewrites), so it has no input to check (–)")
    legend.append(("rows", rows))
    legend.append(("figures", "each is a mean over the items with its 95% bootstrap interval"))
    return legend


def _headline(result: EvalResult) -> str:
    n = len(result.policies[0].records) if result.policies else 0
    retr = f" · retriever {result.retriever}" if result.retriever else ""
    return f"{result.dataset} · {n} items · rewriter {result.rewriter}{retr}"


def print_summary(result: EvalResult, console: Console | None = None) -> None:
    """One table: every policy and baseline × the summary metrics, each a mean over its
    95% interval, then the legend in plain words (the per-stratum figures: :func:`print_tables`).

    >>> print_summary(run_eval(items, EvalConfig(policies=("full", "default"))))  # doctest: +SKIP
    """
    con = console or Console()
    metrics = _summary_metrics(result)
    con.print(f"[bold]{_headline(result)}[/bold]")
    con.print()
    table = _table("mean over the items scored, its 95% interval under it (↑ higher is "
                   "better, ↓ lower)")
    table.add_column("policy or baseline", overflow="fold", min_width=16, max_width=24)
    for m in metrics:
        arrow = "↑" if get_metric(m).higher_is_better else "↓"
        # titles broken by hand ("input" over the check's name, the arrow last): five of
        # them beside a 16-character name still fit in 80 columns
        title = _SUMMARY_TITLES[m].replace("input ", "input\n")
        table.add_column(f"{title}\n{arrow}" if "\n" not in title else f"{title} {arrow}",
                         justify="right", min_width=9)
    seen_baseline = False
    for p in _summary_rows(result):
        is_baseline = p.policy.startswith(BASELINE_PREFIX)
        if is_baseline and not seen_baseline:
            table.add_section()
            seen_baseline = True
        table.add_row(baseline_title(p.policy), *[_cell(p.figure(MEAN, m)) for m in metrics],
                      style="bold" if p.policy == "default" else "")
    con.print(table)
    con.print()
    for term, words in summary_legend(result):
        con.print(f"[bold]{term}[/bold]: {words}", highlight=False)
    for note in result.notes:
        con.print(f"[yellow]note:[/yellow] {note}")


# ------------------------------------------------------------------ decomposition


@dataclass(frozen=True)
class DecompositionRow:
    stratum: str
    share: float
    a: float
    b: float

    @property
    def delta(self) -> float:
        return self.b - self.a

    @property
    def contribution(self) -> float:
        """The stratum's delta weighted by its share: what it moves the mean by."""
        return self.delta * self.share


@dataclass(frozen=True)
class Decomposition:
    """The change of a metric's mean from policy ``a`` to ``b``, stratum by stratum.

    ``predicted`` is the sum of the rows' contributions; ``actual`` the change in the
    mean. With the set's own shares the two agree up to rounding (the mean *is* the
    share-weighted sum of stratum means); a gap means the shares came from elsewhere.
    """

    metric: str
    a: str
    b: str
    rows: tuple[DecompositionRow, ...]
    actual: float

    @property
    def predicted(self) -> float:
        return sum(r.contribution for r in self.rows)

    def to_json(self) -> dict[str, object]:
        return {
            "metric": self.metric, "a": self.a, "b": self.b,
            "rows": [{"stratum": r.stratum, "share": r.share, "a": r.a, "b": r.b,
                      "delta": r.delta, "contribution": r.contribution} for r in self.rows],
            "predicted": self.predicted, "actual": self.actual,
        }


def decompose(result: EvalResult, a: str, b: str, metric: str) -> Decomposition:
    """Decompose the change in ``metric``'s mean from policy ``a`` to ``b`` into stratum
    delta × share.

    Only items the metric scores under both policies count, so shares and means refer
    to one population.

    >>> d = decompose(result, "full", "window:2", "R@5")             # doctest: +SKIP
    >>> round(d.predicted, 6) == round(d.actual, 6)                  # doctest: +SKIP
    True
    """
    get_metric(metric)
    pa, pb = result.policy(a), result.policy(b)
    if [r.id for r in pa.records] != [r.id for r in pb.records]:
        raise InputError(f"policies {a!r} and {b!r} were run on different items")
    va, vb = pa.scores.get(metric), pb.scores.get(metric)
    if va is None or vb is None:
        raise ConfigError(f"metric {metric!r} was not computed for both {a!r} and {b!r}")
    both = [i for i in range(len(pa.records)) if va[i] is not None and vb[i] is not None]
    if not both:
        raise InputError(f"{metric} applies to no item under both {a!r} and {b!r}")
    groups: dict[str, list[int]] = {}
    for i in both:
        groups.setdefault(pa.records[i].stratum, []).append(i)
    rows = []
    for s in stratum_order(list(groups)):
        idx = groups[s]
        mean_a = sum(float(va[i] or 0.0) for i in idx) / len(idx)
        mean_b = sum(float(vb[i] or 0.0) for i in idx) / len(idx)
        rows.append(DecompositionRow(s, len(idx) / len(both), mean_a, mean_b))
    actual = (sum(float(vb[i] or 0.0) for i in both) - sum(float(va[i] or 0.0) for i in both)) \
        / len(both)
    return Decomposition(metric, a, b, tuple(rows), actual)


def print_decomposition(d: Decomposition, console: Console | None = None) -> None:
    """Print a decomposition as a table: share, A, B, delta, delta × share; sum vs actual."""
    con = console or Console()
    table = Table(title=f"{d.metric}: {d.a} → {d.b}, change in the mean by stratum",
                  title_justify="left", pad_edge=False)
    for col in ("stratum", "share", d.a, d.b, "delta", "delta × share"):
        table.add_column(col, justify="left" if col == "stratum" else "right", no_wrap=True)
    for r in d.rows:
        table.add_row(r.stratum, f"{r.share:.0%}", _fmt(r.a), _fmt(r.b), f"{r.delta:+.3f}",
                      f"{r.contribution:+.3f}")
    table.add_section()
    table.add_row("sum of delta × share", "", "", "", "", f"{d.predicted:+.3f}", style="bold")
    table.add_row("actual change in the mean", "", "", "", "", f"{d.actual:+.3f}", style="bold")
    con.print(table)


# ------------------------------------------------------------------------- HTML


def is_failure(record: ItemRecord, rank: int = DEFAULT_FAILURE_RANK) -> bool:
    """Whether a record belongs in the failures table: an error, a gold passage outside the
    top ``rank``, a forbidden term in the rewrite, or a required term missing."""
    if record.error is not None:
        return True
    if record.checks_scored and (record.forbidden_hits or record.required_missing):
        return True
    if record.gold and record.hits is not None:
        g = record.gold_rank
        return g is None or g > rank
    return False


def _e(x: object) -> str:
    return html.escape(str(x), quote=True)


def _svg_chart(result: EvalResult, metric: str) -> str:
    """A grouped bar chart: one group per stratum (mean last), one bar per policy, with
    the interval as an error bar and the exact figures in a hover title."""
    strata = _all_strata(result)
    pols = result.policies
    bar_w, gap, left, top, plot_h, bottom = 12, 16, 44, 28, 200, 110
    group_w = bar_w * len(pols) + gap
    width = left + group_w * len(strata) + 20
    height = top + plot_h + bottom
    lower = not get_metric(metric).higher_is_better
    title = f"{metric} ({'lower' if lower else 'higher'} is better)"
    parts = [f'<svg role="img" width="{width}" '
             f'height="{height}" viewBox="0 0 {width} {height}" aria-label="{_e(title)}">',
             f'<text x="{left}" y="16" class="t">{_e(title)}</text>']

    def y(v: float) -> float:
        return top + plot_h * (1.0 - max(0.0, min(1.0, v)))

    for tick in (0.0, 0.25, 0.5, 0.75, 1.0):
        parts.append(f'<line x1="{left}" x2="{width - 10}" y1="{y(tick):.1f}" '
                     f'y2="{y(tick):.1f}" class="grid"/>')
        parts.append(f'<text x="{left - 6}" y="{y(tick) + 4:.1f}" class="ax" '
                     f'text-anchor="end">{tick:.2f}</text>')
    for gi, s in enumerate(strata):
        gx = left + gi * group_w + gap / 2
        if s == MEAN:
            parts.append(f'<rect x="{gx - gap / 2:.1f}" y="{top}" width="{group_w}" '
                         f'height="{plot_h}" class="meanbg"/>')
        for pi, p in enumerate(pols):
            iv = p.figure(s, metric)
            if iv is None:
                continue
            x = gx + pi * bar_w
            colour = _PALETTE[pi % len(_PALETTE)]
            tip = (f"{p.policy} · {s}: {iv.value:.3f} [{iv.low:.3f}, {iv.high:.3f}], "
                   f"n={iv.n}")
            parts.append(f'<rect x="{x:.1f}" y="{y(iv.value):.1f}" width="{bar_w - 2}" '
                         f'height="{y(0) - y(iv.value):.1f}" fill="{colour}">'
                         f'<title>{_e(tip)}</title></rect>')
            cx = x + (bar_w - 2) / 2
            parts.append(f'<line x1="{cx:.1f}" x2="{cx:.1f}" y1="{y(iv.high):.1f}" '
                         f'y2="{y(iv.low):.1f}" class="err"/>')
        lx = gx + (bar_w * len(pols)) / 2
        ly = top + plot_h + 12
        parts.append(f'<text x="{lx:.1f}" y="{ly}" class="ax" text-anchor="end" '
                     f'transform="rotate(-35 {lx:.1f} {ly})">{_e(s)}</text>')
    parts.append("</svg>")
    return "".join(parts)


def _legend(result: EvalResult) -> str:
    items = "".join(
        f'<span class="lg"><span class="sw" style="background:{_PALETTE[i % len(_PALETTE)]}">'
        f'</span>{_e(baseline_title(p.policy))}</span>' for i, p in enumerate(result.policies))
    return f'<div class="legend">{items}</div>'


def _figure_table(result: EvalResult, metric: str) -> str:
    head = "".join(f"<th>{_e(baseline_title(p.policy))}</th>" for p in result.policies)
    rows = []
    first = result.policies[0]
    for s in _all_strata(result):
        row = first.row(s)
        share = f"{row.share:.0%}" if row is not None else "–"
        cells = []
        for p in result.policies:
            iv = p.figure(s, metric)
            cells.append("<td>–</td>" if iv is None else
                         f"<td>{_fmt(iv.value)} <span class=ci>{_ci(iv)}</span></td>")
        cls = ' class="mean"' if s == MEAN else ""
        rows.append(f"<tr{cls}><th>{_e(s)}</th><td>{share}</td>{''.join(cells)}</tr>")
    return (f"<table><thead><tr><th>stratum</th><th>share</th>{head}</tr></thead>"
            f"<tbody>{''.join(rows)}</tbody></table>")


def _decomposition_html(d: Decomposition) -> str:
    rows = "".join(
        f"<tr><th>{_e(r.stratum)}</th><td>{r.share:.0%}</td><td>{_fmt(r.a)}</td>"
        f"<td>{_fmt(r.b)}</td><td>{r.delta:+.3f}</td><td>{r.contribution:+.3f}</td></tr>"
        for r in d.rows)
    return (f"<h3>{_e(d.metric)}: {_e(d.a)} → {_e(d.b)}</h3><table><thead><tr><th>stratum</th>"
            f"<th>share</th><th>{_e(d.a)}</th><th>{_e(d.b)}</th><th>delta</th>"
            f"<th>delta × share</th></tr></thead><tbody>{rows}"
            f'<tr class="mean"><th>sum of delta × share</th><td colspan=4></td>'
            f"<td>{d.predicted:+.3f}</td></tr>"
            f'<tr class="mean"><th>actual change in the mean</th><td colspan=4></td>'
            f"<td>{d.actual:+.3f}</td></tr></tbody></table>")


def _failures_html(p: PolicyResult, rank: int) -> str:
    fails = [r for r in p.records if is_failure(r, rank)]
    if not fails:
        return (f"<details><summary>{_e(p.policy)}: no failures</summary></details>")
    rows = []
    for r in fails:
        g = r.gold_rank
        gold = "–" if not r.gold or r.hits is None else ("not retrieved" if g is None else str(g))
        query = _e(r.query) if r.error is None else f'<span class="bad">{_e(r.error)}</span>'
        rows.append(
            f"<tr><td>{_e(r.id)}</td><td>{_e(r.stratum)}</td><td>{_e(r.follow_up)}</td>"
            f"<td>{query}</td><td class=bad>{_e(', '.join(r.forbidden_hits))}</td>"
            f"<td class=bad>{_e(', '.join(r.required_missing))}</td><td>{gold}</td></tr>")
    return (f"<details><summary>{_e(p.policy)}: {len(fails)} of {len(p.records)} items "
            f"failed</summary><table class=fail><thead><tr><th>id</th><th>stratum</th>"
            f"<th>follow-up</th><th>rewrite</th><th>forbidden terms hit</th>"
            f"<th>required terms missed</th><th>gold rank</th></tr></thead>"
            f"<tbody>{''.join(rows)}</tbody></table></details>")


def _summary_table_html(result: EvalResult) -> str:
    metrics = _summary_metrics(result)
    head = "".join(
        f"<th>{_e(_SUMMARY_TITLES[m])} {'↑' if get_metric(m).higher_is_better else '↓'}</th>"
        for m in metrics)
    rows = []
    seen_baseline = False
    for p in _summary_rows(result):
        is_baseline = p.policy.startswith(BASELINE_PREFIX)
        cls = []
        if is_baseline and not seen_baseline:
            cls.append("first-baseline")
            seen_baseline = True
        if p.policy == "default":
            cls.append("main")
        cells = []
        for m in metrics:
            iv = p.figure(MEAN, m)
            cells.append("<td>–</td>" if iv is None else
                         f"<td>{_fmt(iv.value)} <span class=ci>{_short(iv.low)}–"
                         f"{_short(iv.high)}</span></td>")
        attr = f' class="{" ".join(cls)}"' if cls else ""
        words = _policy_words(p.policy)
        what = f" <span class=what>{_e(words)}</span>" if words else ""
        rows.append(f"<tr{attr}><th>{_e(baseline_title(p.policy))}{what}</th>"
                    f"{''.join(cells)}</tr>")
    return (f'<table class="summary"><thead><tr><th class=l>policy or baseline · what it is'
            f"</th>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>")


def _summary_svg(result: EvalResult) -> str:
    """One picture: a panel per summary metric (the rewrite's checks and recall, not the
    input twins, which baselines lack), a horizontal bar per policy and baseline with its
    interval, policies in blue and baselines in grey."""
    metrics = [m for m in _summary_metrics(result) if not m.startswith("input_")]
    rows = _summary_rows(result)
    label_w, panel_w, panel_gap, row_h, top = 190, 170, 44, 21, 40
    width = label_w + len(metrics) * (panel_w + panel_gap)
    height = top + row_h * len(rows) + 24
    parts = [f'<svg role="img" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
             f'aria-label="policies and baselines compared">']
    for ri, p in enumerate(rows):
        cy = top + ri * row_h + row_h / 2
        cls = "ax main" if p.policy == "default" else "ax"
        parts.append(f'<text x="{label_w - 8}" y="{cy + 4:.1f}" class="{cls}" '
                     f'text-anchor="end">{_e(baseline_title(p.policy))}</text>')
    for mi, m in enumerate(metrics):
        x0 = label_w + mi * (panel_w + panel_gap)
        better = "higher" if get_metric(m).higher_is_better else "lower"
        parts.append(f'<text x="{x0}" y="14" class="t">{_e(_SUMMARY_TITLES[m])}</text>'
                     f'<text x="{x0}" y="29" class="ax">{better} is better</text>')
        for tick in (0.0, 0.5, 1.0):
            tx = x0 + panel_w * tick
            parts.append(f'<line x1="{tx:.1f}" x2="{tx:.1f}" y1="{top - 4}" '
                         f'y2="{top + row_h * len(rows)}" class="grid"/>'
                         f'<text x="{tx:.1f}" y="{top + row_h * len(rows) + 14}" class="ax" '
                         f'text-anchor="middle">{tick:.1f}</text>')
        for ri, p in enumerate(rows):
            iv = p.figure(MEAN, m)
            if iv is None:
                continue
            y = top + ri * row_h + 4
            colour = "#9a9a9a" if p.policy.startswith(BASELINE_PREFIX) else _PALETTE[0]
            tip = f"{baseline_title(p.policy)}: {iv.value:.3f} [{iv.low:.3f}, {iv.high:.3f}], n={iv.n}"
            parts.append(f'<rect x="{x0}" y="{y}" width="{panel_w * iv.value:.1f}" '
                         f'height="{row_h - 8}" fill="{colour}"><title>{_e(tip)}</title></rect>'
                         f'<line x1="{x0 + panel_w * iv.low:.1f}" x2="{x0 + panel_w * iv.high:.1f}" '
                         f'y1="{y + (row_h - 8) / 2}" y2="{y + (row_h - 8) / 2}" class="err"/>')
            # the figure right of its interval, where neither bar nor whisker covers it
            tx = x0 + panel_w * max(iv.value, iv.high) + 4
            parts.append(f'<text x="{tx:.1f}" y="{y + row_h - 11}" class="val">'
                         f"{_fmt(iv.value)}</text>")
    parts.append("</svg>")
    return "".join(parts)


def _lead(result: EvalResult) -> str:
    """The summary in one sentence: the default policy (or the last one named) beside the
    raw message and the whole history, on coverage and contamination."""
    named = [p for p in result.policies if not p.policy.startswith(BASELINE_PREFIX)]
    if not named:
        return ""
    main = next((p for p in named if p.policy == "default"), named[-1])
    # recall only where every row compared has it (CAsT has no passages to retrieve)
    metrics = ["coverage", "contamination", "R@5"]
    parts: list[str] = []
    whole = next((b for b in ("baseline:all_history", "baseline:all_user")
                  if b in result.policy_names), None)
    compared = [result.policy(label) for label in (main.policy, whole, "baseline:raw")
                if label is not None and label in result.policy_names]
    metrics = [m for m in metrics if all(p.figure(MEAN, m) is not None for p in compared)]
    n = main.figure(MEAN, "coverage")
    if len(compared) < 2 or n is None or metrics[:2] != ["coverage", "contamination"]:
        return ""  # nothing to compare the policy with
    for pol in compared:
        who = (f"the {pol.policy} policy" if pol is main
               else f"the {baseline_title(pol.policy)}")
        values = [pol.figure(MEAN, m) for m in metrics]  # all present: filtered above
        figures = " / ".join(f"{iv.value:.0%}" for iv in values if iv is not None)
        parts.append(f"{who} {figures}")
    what = ("the share whose query holds every word it needs / a word of a subject the user "
            "has left")
    if "R@5" in metrics:
        what += " / finds the right passage in the top 5"
    return (f"Is it better than pasting the history into the query? Of the {n.n} follow-ups "
            f"scored, {what}: {', '.join(parts)}.")


def _legend_html(result: EvalResult) -> str:
    return ('<dl class="words">' + "".join(f"<dt>{_e(t)}</dt><dd>{_e(w)}</dd>"
                                          for t, w in summary_legend(result)) + "</dl>")


_CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:24px auto;
max-width:1200px;padding:0 16px;color:#1b1b1b}
h1{font-size:22px}h2{font-size:18px;margin-top:32px;border-bottom:1px solid #ddd}
h3{font-size:15px}
table{border-collapse:collapse;margin:8px 0 16px;font-variant-numeric:tabular-nums}
th,td{border-bottom:1px solid #e5e5e5;padding:3px 8px;text-align:right;vertical-align:top}
thead th{background:#f4f4f4}tbody th{text-align:left;font-weight:normal}
tr.mean th,tr.mean td{font-weight:bold;border-top:2px solid #999}
.ci{color:#777;font-size:12px}
table.fail td{text-align:left;max-width:320px;overflow-wrap:anywhere}
.bad{color:#b00020}.ok{color:#1a7f37}
.chart{overflow-x:auto;margin:8px 0 4px}
svg .t{font-size:13px;font-weight:bold}svg .ax{font-size:11px;fill:#333}
svg .grid{stroke:#e3e3e3}svg .err{stroke:#222;stroke-width:1}
svg .meanbg{fill:#f6f6f6}
.legend{margin:4px 0 12px}.lg{margin-right:16px;white-space:nowrap}
.sw{display:inline-block;width:12px;height:12px;margin-right:5px;vertical-align:-1px}
.meta{color:#555}summary{cursor:pointer;margin:6px 0}
table.summary th,table.summary td{padding:2px 8px}
table.summary th.l{text-align:left}
table.summary .what{color:#777;font-size:12px;margin-left:6px}
table.summary tr.main th,table.summary tr.main td{background:#eef5fb;font-weight:bold}
table.summary tr.first-baseline th,table.summary tr.first-baseline td{border-top:2px solid #999}
svg .main{font-weight:bold}svg .val{font-size:11px;fill:#333}
.pair{display:flex;flex-wrap:wrap;gap:8px 24px;align-items:flex-start}
dl.words{flex:1 1 340px;margin:8px 0;font-size:13px}
dl.words dt{font-weight:bold}dl.words dd{margin:0 0 4px 0}
.lead{font-size:15px;max-width:1100px}
"""


def render_html(
    result: EvalResult,
    *,
    decompositions: Sequence[Decomposition] = (),
    gate_failures: Sequence[GateFailure] | None = None,
    failure_rank: int = DEFAULT_FAILURE_RANK,
) -> str:
    """The report as one HTML string: no external resource, no script.

    >>> page = render_html(result)                     # doctest: +SKIP
    >>> "<svg" in page and "https://" not in page      # doctest: +SKIP
    True
    """
    n = len(result.policies[0].records) if result.policies else 0
    meta = (f"dataset <b>{_e(result.dataset)}</b> · {n} items · rewriter "
            f"<b>{_e(result.rewriter)}</b>"
            + (f" · retriever <b>{_e(result.retriever)}</b>" if result.retriever else ""))
    out = ["<!DOCTYPE html><html lang=en><head><meta charset=utf-8>",
           "<meta name=viewport content='width=device-width,initial-scale=1'>",
           f"<title>turnscope eval · {_e(result.dataset)}</title><style>{_CSS}</style>",
           "</head><body>",
           f"<h1>turnscope evaluation · {_e(result.dataset)}</h1>", f'<p class="meta">{meta}</p>']
    # the first screen: is this better than a plain query built from the history?
    lead = _lead(result)
    if lead:
        out.append(f'<p class="lead">{_e(lead)}</p>')
    if _summary_metrics(result):
        out.append(_summary_table_html(result))
        # the picture and the legend side by side: both on the first screen
        out.append(f'<div class="pair"><div class="chart">{_summary_svg(result)}</div>'
                   f"{_legend_html(result)}</div>")
    for note in result.notes:
        out.append(f'<p class="bad">note: {_e(note)}</p>')
    if gate_failures is not None:
        out.append("<h2>Gate</h2>")
        if gate_failures:
            out.append("<ul>" + "".join(f'<li class="bad">{_e(f.message)}</li>'
                                        for f in gate_failures) + "</ul>")
        else:
            out.append('<p class="ok">passed: every stratum meets its bounds</p>')
    charted = _metrics_with_figures(result, DEFAULT_CHART_METRICS)
    if charted:
        out.append("<h2>Details: figures by stratum</h2>")
        out.append("<p>Every figure per stratum (the kind of follow-up), with its share of the "
                   "set and a 95% bootstrap interval; the mean comes last. Hover a bar for its "
                   "exact value.</p>")
        out.append(_legend(result))
    for m in charted:
        out.append(f'<div class="chart">{_svg_chart(result, m)}</div>')
        out.append(_figure_table(result, m))
    if decompositions:
        out.append("<h2>Change in the mean, decomposed</h2>")
        out.extend(_decomposition_html(d) for d in decompositions)
    out.append(f"<h2>Failures per policy</h2><p>Items with a forbidden term in the rewrite, a "
               f"required term missing, or no gold passage in the top {failure_rank}.</p>")
    out.extend(_failures_html(p, failure_rank) for p in result.policies)
    out.append("</body></html>")
    return "\n".join(out)


def write_html(
    result: EvalResult,
    path: str | Path,
    *,
    decompositions: Sequence[Decomposition] = (),
    gate_failures: Sequence[GateFailure] | None = None,
    failure_rank: int = DEFAULT_FAILURE_RANK,
) -> Path:
    """Write :func:`render_html` to ``path`` (parents created) and return it."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    page = render_html(result, decompositions=decompositions, gate_failures=gate_failures,
                       failure_rank=failure_rank)
    p.write_text(page, encoding="utf-8")
    return p


def write_json(result: EvalResult, path: str | Path,
               *, gate_failures: Sequence[GateFailure] | None = None,
               decompositions: Sequence[Decomposition] = ()) -> Path:
    """Write every record, per-item value and per-stratum figure as JSON."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    data = result.to_json()
    if gate_failures is not None:
        data["gate"] = {"passed": not gate_failures,
                        "failures": [f.to_json() for f in gate_failures]}
    if decompositions:
        data["decompositions"] = [d.to_json() for d in decompositions]
    p.write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")
    return p


def write_png(result: EvalResult, path: str | Path, metric: str | None = None) -> Path | None:
    """The report's summary picture as a PNG (every policy and baseline on coverage,
    contamination and recall@5), or with ``metric`` that metric by stratum; ``None`` when
    matplotlib is not importable (the HTML report does not need it) or nothing is charted."""
    try:
        import matplotlib

        matplotlib.use("Agg")  # no display in CI
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    if metric is None:
        return _summary_png(result, Path(path), plt)
    m = metric
    strata = _all_strata(result)
    pols = result.policies
    width = 0.8 / max(1, len(pols))
    fig, ax = plt.subplots(figsize=(max(8.0, 0.9 * len(strata) + 2), 4.5))
    for pi, p in enumerate(pols):
        xs, vals, lo, hi = [], [], [], []
        for si, s in enumerate(strata):
            iv = p.figure(s, m)
            if iv is None:
                continue
            xs.append(si - 0.4 + width * (pi + 0.5))
            vals.append(iv.value)
            lo.append(iv.value - iv.low)
            hi.append(iv.high - iv.value)
        ax.bar(xs, vals, width * 0.92, yerr=[lo, hi], capsize=0,
               color=_PALETTE[pi % len(_PALETTE)], label=p.policy,
               error_kw={"elinewidth": 0.8})
    ax.set_xticks(range(len(strata)))
    ax.set_xticklabels(strata, rotation=35, ha="right")
    ax.set_ylim(0, 1.05)  # room for intervals that reach 1
    better = "higher" if get_metric(m).higher_is_better else "lower"
    ax.set_title(f"{m} by stratum and policy ({better} is better) · {result.dataset}")
    ax.grid(axis="y", color="#e3e3e3")
    ax.set_axisbelow(True)
    ax.legend(ncol=min(len(pols), 6), fontsize=8, loc="upper center",
              bbox_to_anchor=(0.5, -0.32))
    fig.tight_layout()
    p_out = Path(path)
    p_out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(p_out, dpi=120)
    plt.close(fig)
    return p_out


def _summary_png(result: EvalResult, path: Path, plt: Any) -> Path | None:
    """:func:`_summary_svg` drawn with matplotlib: one panel per metric, a bar per row."""
    metrics = [m for m in _summary_metrics(result) if not m.startswith("input_")]
    if not metrics:
        return None
    rows = _summary_rows(result)
    labels = [baseline_title(p.policy) for p in rows]
    fig, axes = plt.subplots(1, len(metrics), sharey=True,
                             figsize=(2.2 + 2.6 * len(metrics), 0.9 + 0.32 * len(rows)))
    axes = [axes] if len(metrics) == 1 else list(axes)
    ys = list(range(len(rows)))
    for ax, m in zip(axes, metrics, strict=True):
        for y, p in zip(ys, rows, strict=True):
            iv = p.figure(MEAN, m)
            if iv is None:
                continue
            colour = "#9a9a9a" if p.policy.startswith(BASELINE_PREFIX) else _PALETTE[0]
            ax.barh(y, iv.value, 0.7, color=colour,
                    xerr=[[iv.value - iv.low], [iv.high - iv.value]],
                    error_kw={"elinewidth": 0.8, "ecolor": "#222"})
            # right of the interval, where neither bar nor whisker covers it
            ax.text(max(iv.value, iv.high) + 0.02, y, _fmt(iv.value), va="center", fontsize=7)
        better = "higher" if get_metric(m).higher_is_better else "lower"
        ax.set_title(f"{_SUMMARY_TITLES[m]}\n({better} is better)", fontsize=9)
        ax.set_xlim(0, 1.2)  # room for the figure printed right of a full bar
        ax.set_xticks([0, 0.5, 1])
        ax.grid(axis="x", color="#e3e3e3")
        ax.set_axisbelow(True)
    axes[0].set_yticks(ys)
    axes[0].set_yticklabels(labels, fontsize=8)
    for tick, p in zip(axes[0].get_yticklabels(), rows, strict=True):
        if p.policy == "default":
            tick.set_fontweight("bold")
    axes[0].invert_yaxis()  # the first row on top, as in the table
    fig.suptitle(result.dataset, fontsize=9, x=0.01, ha="left")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path
