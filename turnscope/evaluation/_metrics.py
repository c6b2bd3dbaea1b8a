"""Metrics as data: each is registered under its literature name (docs/benchmarks.md).

Two kinds:

- **retrieval** metrics are computed over a ranked run with ``ranx`` (never by
  hand): ``R@1``, ``R@5``, ``R@10`` are recall@k, *the share of items with
  a gold passage in the top k*, which is ranx's ``hit_rate@k`` (ranx's own
  ``recall@k`` is the share of an item's gold passages retrieved, a different
  figure when an item has several golds); ``MRR`` is ranx's ``mrr`` over the
  retrieved depth (10 by default, so MRR@10).
- **item** metrics are checks on one rewrite: ``contamination`` (a forbidden
  term is present), ``coverage`` (every required term is present) and their
  ``input_`` twins applied to the rewriter input a policy builds.

Every metric yields one value per item, or ``None`` where it does not apply (no
gold passage, no rewriter input); the harness then averages per stratum.

>>> get_metric("R@5").ranx_name
'hit_rate@5'
>>> sorted(metric_names())[:3]
['MRR', 'R@1', 'R@10']
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from turnscope._exceptions import ConfigError

__all__ = [
    "DEFAULT_DEPTH",
    "DEFAULT_METRICS",
    "ItemRecord",
    "Metric",
    "get_metric",
    "metric_names",
    "register_metric",
    "score_records",
    "unregister_metric",
]

#: how many passages are retrieved per query; MRR is computed over this depth
DEFAULT_DEPTH = 10
#: the figures ``turnscope eval`` reports, in column order
DEFAULT_METRICS: tuple[str, ...] = (
    "R@1",
    "R@5",
    "R@10",
    "MRR",
    "contamination",
    "coverage",
    "input_contamination",
    "input_coverage",
)


@dataclass(frozen=True)
class ItemRecord:
    """What one policy did with one item: the rewrite, what it retrieved, what it hit.

    ``hits`` is ``None`` when nothing was retrieved for the item (no gold passage,
    or a set scored on the rewrite alone). ``input_*`` are ``None`` when there was
    no rewriter input to check (a fixed baseline query). ``checks_scored`` is false
    when the term checks do not count for this item (a CAsT topic's first turn has
    no history, so it can neither miss a carried-over word nor carry a stale one).
    """

    id: str
    stratum: str
    lang: str
    policy: str
    follow_up: str
    query: str
    gold: tuple[str, ...] = ()
    hits: tuple[str, ...] | None = None
    forbidden_hits: tuple[str, ...] = ()
    required_missing: tuple[str, ...] = ()
    input_forbidden_hits: tuple[str, ...] | None = None
    input_required_missing: tuple[str, ...] | None = None
    checks_scored: bool = True
    backend: str = ""
    fallback: bool = False
    reference_class: str = ""
    scope_turns: tuple[int, ...] = ()
    error: str | None = None

    @property
    def gold_rank(self) -> int | None:
        """1-based rank of the best-ranked gold passage, ``None`` if none was retrieved."""
        if not self.hits or not self.gold:
            return None
        gold = set(self.gold)
        for rank, pid in enumerate(self.hits, start=1):
            if pid in gold:
                return rank
        return None

    def to_json(self) -> dict[str, object]:
        return {
            "id": self.id,
            "stratum": self.stratum,
            "lang": self.lang,
            "policy": self.policy,
            "follow_up": self.follow_up,
            "query": self.query,
            "gold": list(self.gold),
            "hits": None if self.hits is None else list(self.hits),
            "gold_rank": self.gold_rank,
            "forbidden_hits": list(self.forbidden_hits),
            "required_missing": list(self.required_missing),
            "input_forbidden_hits": (
                None if self.input_forbidden_hits is None else list(self.input_forbidden_hits)
            ),
            "input_required_missing": (
                None if self.input_required_missing is None else list(self.input_required_missing)
            ),
            "checks_scored": self.checks_scored,
            "backend": self.backend,
            "fallback": self.fallback,
            "reference_class": self.reference_class,
            "scope_turns": list(self.scope_turns),
            "error": self.error,
        }


ItemCheck = Callable[[ItemRecord], "float | None"]


@dataclass(frozen=True)
class Metric:
    """A named figure: either a ranx measure over the run or a check on each item.

    Exactly one of ``ranx_name`` and ``check`` is set. ``depth`` is how many hits a
    retrieval metric needs (10 for ``R@10``); ``higher_is_better`` decides whether a
    gate sets a floor or a ceiling on it.

    >>> Metric("R@20", "gold in the top 20", ranx_name="hit_rate@20", depth=20).kind
    'retrieval'
    """

    name: str
    description: str
    higher_is_better: bool = True
    ranx_name: str | None = None
    check: ItemCheck | None = None
    depth: int = 0

    def __post_init__(self) -> None:
        if not self.name or self.name != self.name.strip():
            raise ConfigError(f"metric name {self.name!r} is empty or has surrounding spaces")
        if (self.ranx_name is None) == (self.check is None):
            raise ConfigError(
                f"metric {self.name!r}: give exactly one of ranx_name (retrieval) or check (item)"
            )

    @property
    def kind(self) -> str:
        return "retrieval" if self.ranx_name is not None else "item"


_REGISTRY: dict[str, Metric] = {}


def register_metric(metric: Metric) -> Metric:
    """Add ``metric`` to the registry; a name can be registered once.

    >>> register_metric(Metric("R@5", "dup", ranx_name="hit_rate@5", depth=5))
    Traceback (most recent call last):
    ...
    turnscope._exceptions.ConfigError: metric 'R@5' is already registered
    """
    if metric.name in _REGISTRY:
        # silently replacing a metric would change what a gate floor means
        raise ConfigError(f"metric {metric.name!r} is already registered")
    _REGISTRY[metric.name] = metric
    return metric


def unregister_metric(name: str) -> None:
    """Remove a metric (for tests and plug-ins that registered their own)."""
    get_metric(name)
    del _REGISTRY[name]


def get_metric(name: str) -> Metric:
    """The metric registered as ``name``; an unknown name lists the valid ones.

    >>> get_metric("coverage").higher_is_better
    True
    """
    try:
        return _REGISTRY[name]
    except KeyError:
        raise ConfigError(
            f"unknown metric {name!r}; valid metrics: {', '.join(metric_names())}"
        ) from None


def metric_names() -> list[str]:
    """Registered metric names, in registration order."""
    return list(_REGISTRY)


# ----------------------------------------------------------------- built-in metrics


def _contamination(r: ItemRecord) -> float | None:
    return float(bool(r.forbidden_hits)) if r.checks_scored else None


def _coverage(r: ItemRecord) -> float | None:
    return float(not r.required_missing) if r.checks_scored else None


def _input_contamination(r: ItemRecord) -> float | None:
    if not r.checks_scored or r.input_forbidden_hits is None:
        return None
    return float(bool(r.input_forbidden_hits))


def _input_coverage(r: ItemRecord) -> float | None:
    if not r.checks_scored or r.input_required_missing is None:
        return None
    return float(not r.input_required_missing)


for _k in (1, 5, 10):
    register_metric(
        Metric(f"R@{_k}", f"share of items with a gold passage in the top {_k}",
               ranx_name=f"hit_rate@{_k}", depth=_k)
    )
register_metric(
    Metric("MRR", "mean reciprocal rank of the first gold passage (over the retrieved depth)",
           ranx_name="mrr", depth=DEFAULT_DEPTH)
)
register_metric(
    Metric("contamination", "share of rewrites containing at least one forbidden term",
           higher_is_better=False, check=_contamination)
)
register_metric(
    Metric("coverage", "share of rewrites containing every required term", check=_coverage)
)
register_metric(
    Metric("input_contamination",
           "share of rewriter inputs containing at least one forbidden term",
           higher_is_better=False, check=_input_contamination)
)
register_metric(
    Metric("input_coverage", "share of rewriter inputs containing every required term",
           check=_input_coverage)
)


# ------------------------------------------------------------------------- scoring

_NO_HIT = "__turnscope_no_hit__"


def _ranx_scores(
    records: Sequence[ItemRecord], metrics: Sequence[Metric]
) -> dict[str, list[float | None]]:
    out: dict[str, list[float | None]] = {m.name: [None] * len(records) for m in metrics}
    judged = [i for i, r in enumerate(records) if r.gold and r.hits is not None]
    if not judged or not metrics:
        return out
    from ranx import Qrels, Run, evaluate  # imported here: ranx pulls in numba (~2 s)

    # zero-padded ids so ranx's key order is our order whatever it sorts by
    qids = {i: f"q{i:09d}" for i in judged}
    qrels = Qrels({qids[i]: {g: 1 for g in records[i].gold} for i in judged})
    run_dict: dict[str, dict[str, float]] = {}
    for i in judged:
        hits = records[i].hits or ()
        # score by rank, not by the retriever's score: fused scores can tie, and ranx
        # would then re-order passages the retriever had ranked
        ranked = {pid: 1.0 / rank for rank, pid in enumerate(dict.fromkeys(hits), start=1)}
        # ranx needs at least one document per query; a passage id no gold can equal
        run_dict[qids[i]] = ranked or {_NO_HIT: 0.0}
    run = Run(run_dict)
    names = [m.ranx_name for m in metrics if m.ranx_name is not None]
    with warnings.catch_warnings():
        # numba warns about an int cast inside ranx; harmless and noisy
        warnings.simplefilter("ignore")
        values = evaluate(qrels, run, names, return_mean=False, make_comparable=False)
    if len(names) == 1:
        values = {names[0]: values}
    for m in metrics:
        column = values[m.ranx_name]
        for pos, i in enumerate(judged):
            out[m.name][i] = float(column[pos])
    return out


def score_records(
    records: Sequence[ItemRecord], metrics: Sequence[str] = DEFAULT_METRICS
) -> dict[str, list[float | None]]:
    """Per-item values of each metric, aligned with ``records`` (``None``: not applicable).

    >>> r = ItemRecord("a", "ordinal", "en", "default", "and the second?", "Dublin SLA",
    ...                gold=("p2",), hits=("p1", "p2"), forbidden_hits=("Frankfurt",))
    >>> s = score_records([r], ["R@1", "R@5", "MRR", "contamination"])   # doctest: +SKIP
    >>> s["R@5"], s["MRR"], s["contamination"]                            # doctest: +SKIP
    ([1.0], [0.5], [1.0])
    """
    resolved = [get_metric(name) for name in metrics]
    retrieval = [m for m in resolved if m.kind == "retrieval"]
    out = _ranx_scores(records, retrieval)
    for m in resolved:
        if m.check is not None:
            out[m.name] = [m.check(r) for r in records]
    return {m.name: out[m.name] for m in resolved}
