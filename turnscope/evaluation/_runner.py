"""Run follow-up items through scope policies, retrieve, score, and summarise per stratum.

For every policy, each item's follow-up is rewritten as a fresh :class:`Session` replaying
its prefix would (:class:`~turnscope.BatchRewriter`: items written turn by turn continue
the session of the item before, five times cheaper on CAsT-style sets), the rewrite and
the rewriter *input* the policy built checked against the item's terms, and the rewrite
sent to a retriever over the item's corpus (English items to ``cloud_docs``, Japanese
ones to ``ja_site``, unless a corpus is given). Figures are then summarised per stratum
with their share of the set and a bootstrap interval, the mean last (docs/benchmarks.md).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import MappingProxyType

import numpy as np
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from turnscope._batch import BatchRewriter
from turnscope._exceptions import ConfigError, InputError
from turnscope._items import STRATA, FollowUpItem
from turnscope._lexicon import check_terms
from turnscope._session import Session
from turnscope.conversation import detect_language
from turnscope.entities import Vocabulary, bundled_vocabularies
from turnscope.evaluation._bootstrap import DEFAULT_RESAMPLES, DEFAULT_SEED, Interval, bootstrap_ci
from turnscope.evaluation._metrics import (
    DEFAULT_DEPTH,
    DEFAULT_METRICS,
    ItemRecord,
    get_metric,
    score_records,
)
from turnscope.retrieval import RETRIEVER_KINDS, Corpus, Retriever, build_retriever, bundled_corpus
from turnscope.rewriters import Rewriter
from turnscope.scope import get_policy, render_evidence

__all__ = [
    "DEFAULT_LANG_CORPORA",
    "DEFAULT_POLICIES",
    "DEFAULT_RETRIEVER",
    "MEAN",
    "EvalConfig",
    "EvalResult",
    "PolicyResult",
    "StratumRow",
    "bundled_session_vocabulary",
    "run_eval",
    "stratum_order",
    "summarize",
]

logger = logging.getLogger("turnscope.evaluation")

#: policies evaluated when none are named
DEFAULT_POLICIES: tuple[str, ...] = ("default",)
#: BM25 and dense fused by reciprocal rank: the retriever a deployment would run
DEFAULT_RETRIEVER = "hybrid"
#: which bundled corpus answers an item, by the item's language
DEFAULT_LANG_CORPORA: Mapping[str, str] = MappingProxyType({"en": "cloud_docs", "ja": "ja_site"})
#: the row name of the whole-set figure, printed after the strata
MEAN = "mean"
#: the stratum of an item without a ``reference_type``
UNLABELLED = "unlabelled"


@dataclass(frozen=True)
class EvalConfig:
    """What to run. ``corpus`` overrides the by-language bundled corpora; ``vocabulary``
    is the entity vocabulary each session gets (``None``: the general extractor only);
    ``history_only`` scores the term checks only on items with a non-empty prefix (the
    CAsT convention, docs/benchmarks.md).

    >>> EvalConfig(policies=("full", "default"), retriever="bm25").retriever
    'bm25'
    """

    policies: tuple[str, ...] = DEFAULT_POLICIES
    retriever: str = DEFAULT_RETRIEVER
    corpus: Corpus | None = None
    vocabulary: Vocabulary | None = None
    metrics: tuple[str, ...] = DEFAULT_METRICS
    resamples: int = DEFAULT_RESAMPLES
    seed: int = DEFAULT_SEED
    history_only: bool = False
    cache_dir: str | os.PathLike[str] | None = None

    def __post_init__(self) -> None:
        if not self.policies:
            raise ConfigError("name at least one policy to evaluate")
        if len(set(self.policies)) != len(self.policies):
            raise ConfigError(f"a policy is named twice in {list(self.policies)}")
        for p in self.policies:
            get_policy(p)  # raises ConfigError listing the valid names
        if self.retriever not in RETRIEVER_KINDS:
            raise ConfigError(
                f"unknown retriever {self.retriever!r}; valid: {', '.join(RETRIEVER_KINDS)}"
            )
        for m in self.metrics:
            get_metric(m)

    @property
    def depth(self) -> int:
        """Hits retrieved per query: enough for the deepest retrieval metric."""
        depths = [get_metric(m).depth for m in self.metrics if get_metric(m).kind == "retrieval"]
        return max(depths, default=DEFAULT_DEPTH)


@dataclass(frozen=True)
class StratumRow:
    """One stratum's (or the mean's) figures for one policy.

    ``share`` is the stratum's share of the set; ``figures`` maps a metric name to its
    mean and interval, for the metrics that apply to at least one of its items.
    """

    stratum: str
    n: int
    share: float
    figures: Mapping[str, Interval]

    def to_json(self) -> dict[str, object]:
        return {"stratum": self.stratum, "n": self.n, "share": self.share,
                "figures": {k: v.to_json() for k, v in self.figures.items()}}


@dataclass(frozen=True)
class PolicyResult:
    """Everything measured for one policy: per-item records and values, per-stratum rows."""

    policy: str
    records: tuple[ItemRecord, ...]
    scores: Mapping[str, tuple[float | None, ...]]
    rows: tuple[StratumRow, ...]

    def row(self, stratum: str) -> StratumRow | None:
        return next((r for r in self.rows if r.stratum == stratum), None)

    def figure(self, stratum: str, metric: str) -> Interval | None:
        row = self.row(stratum)
        return None if row is None else row.figures.get(metric)

    @property
    def strata(self) -> list[str]:
        """The strata present, in reporting order (without the mean)."""
        return [r.stratum for r in self.rows if r.stratum != MEAN]

    def to_json(self) -> dict[str, object]:
        return {
            "policy": self.policy,
            "rows": [r.to_json() for r in self.rows],
            "records": [
                {**rec.to_json(), "scores": {m: self.scores[m][i] for m in self.scores}}
                for i, rec in enumerate(self.records)
            ],
        }


@dataclass(frozen=True)
class EvalResult:
    """The outcome of :func:`run_eval`: one :class:`PolicyResult` per policy, in order."""

    dataset: str
    rewriter: str
    retriever: str | None
    metrics: tuple[str, ...]
    policies: tuple[PolicyResult, ...]
    notes: tuple[str, ...] = field(default=())

    def policy(self, name: str) -> PolicyResult:
        for p in self.policies:
            if p.policy == name:
                return p
        raise ConfigError(
            f"policy {name!r} was not evaluated; evaluated: "
            f"{', '.join(p.policy for p in self.policies)}"
        )

    @property
    def policy_names(self) -> list[str]:
        return [p.policy for p in self.policies]

    def to_json(self) -> dict[str, object]:
        return {
            "dataset": self.dataset,
            "rewriter": self.rewriter,
            "retriever": self.retriever,
            "metrics": list(self.metrics),
            "notes": list(self.notes),
            "policies": [p.to_json() for p in self.policies],
        }


# ---------------------------------------------------------------------- helpers


def bundled_session_vocabulary() -> Vocabulary:
    """The bundled cloud and Japanese-site vocabularies merged (what the bundled set uses)."""
    return bundled_vocabularies()


def stratum_order(strata: Sequence[str]) -> list[str]:
    """The strata in their documented order, then any others alphabetically."""
    known = [s for s in STRATA if s in strata]
    return known + sorted(set(strata) - set(STRATA))


def _lang(item: FollowUpItem) -> str:
    return item.lang or detect_language(item.follow_up)


def _stratum(item: FollowUpItem) -> str:
    return item.reference_type or UNLABELLED


class _Retrievers:
    """Builds one retriever per corpus on first use, shared by every policy."""

    def __init__(self, config: EvalConfig) -> None:
        self._config = config
        self._built: dict[str, Retriever] = {}
        self.corpora: dict[str, Corpus] = {}

    def corpus_key(self, item: FollowUpItem) -> str:
        if self._config.corpus is not None:
            return "custom"
        lang = _lang(item)
        if lang not in DEFAULT_LANG_CORPORA:
            raise ConfigError(
                f"item {item.id!r}: no bundled corpus for language {lang!r} "
                f"(bundled: {dict(DEFAULT_LANG_CORPORA)}); pass a corpus"
            )
        return DEFAULT_LANG_CORPORA[lang]

    def corpus(self, key: str) -> Corpus:
        if key not in self.corpora:
            self.corpora[key] = (
                self._config.corpus if key == "custom" and self._config.corpus is not None
                else bundled_corpus(key)
            )
        return self.corpora[key]

    def get(self, key: str) -> Retriever:
        if key not in self._built:
            self._built[key] = build_retriever(self._config.retriever, self.corpus(key),
                                               cache_dir=self._config.cache_dir)
        return self._built[key]


def _check_record(item: FollowUpItem, policy: str, query: str, evidence: str | None,
                  *, checks_scored: bool) -> ItemRecord:
    rewrite = check_terms(query, item.required_in_rewrite, item.forbidden_in_rewrite)
    inp = (None if evidence is None
           else check_terms(evidence, item.required_in_rewrite, item.forbidden_in_rewrite))
    return ItemRecord(
        id=item.id,
        stratum=_stratum(item),
        lang=_lang(item),
        policy=policy,
        follow_up=item.follow_up,
        query=query,
        gold=tuple(item.gold),
        forbidden_hits=rewrite.forbidden_hits,
        required_missing=rewrite.required_missing,
        input_forbidden_hits=None if inp is None else inp.forbidden_hits,
        input_required_missing=None if inp is None else inp.required_missing,
        checks_scored=checks_scored,
    )


def _rewrite_one(item: FollowUpItem, batch: BatchRewriter, policy: str,
                 checks_scored: bool) -> ItemRecord:
    result, session = batch.rewrite_in_session(item)
    evidence = render_evidence(result.scope, session.state)
    if result.turn not in result.scope.turns:
        # the rewriter always sees the message it rewrites, whatever the scope holds
        evidence = f"{evidence}\nLATEST: {item.follow_up}" if evidence else item.follow_up
    record = _check_record(item, policy, result.query, evidence, checks_scored=checks_scored)
    return replace(record, backend=result.backend, fallback=result.fallback,
                   reference_class=result.reference_class,
                   scope_turns=tuple(result.scope.turns))


def summarize(
    records: Sequence[ItemRecord],
    scores: Mapping[str, Sequence[float | None]],
    *,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> tuple[StratumRow, ...]:
    """Per-stratum rows (documented order), then the mean over every item.

    A stratum's ``share`` is its share of the records; each figure averages the items
    the metric applies to.
    """
    total = len(records)
    if total == 0:
        raise InputError("nothing to summarise: no records")
    by_stratum: dict[str, list[int]] = {}
    for i, r in enumerate(records):
        by_stratum.setdefault(r.stratum, []).append(i)
    groups = [(s, by_stratum[s]) for s in stratum_order(list(by_stratum))]
    groups.append((MEAN, list(range(total))))
    rows: list[StratumRow] = []
    for stratum, idx in groups:
        figures: dict[str, Interval] = {}
        for metric, values in scores.items():
            vals = [v for v in (values[i] for i in idx) if v is not None]
            if vals:
                figures[metric] = bootstrap_ci(np.asarray(vals), resamples=resamples, seed=seed)
        rows.append(StratumRow(stratum, len(idx), len(idx) / total,
                               MappingProxyType(figures)))
    return tuple(rows)


def _progress(console: Console | None, enabled: bool) -> Progress:
    return Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=console,
        disable=not enabled,
        transient=False,
    )


# ------------------------------------------------------------------------- entry


def run_eval(
    items: Sequence[FollowUpItem],
    config: EvalConfig | None = None,
    *,
    rewriter: Rewriter | None = None,
    rewriter_name: str = "embedded",
    baselines: Mapping[str, Sequence[str]] | None = None,
    dataset: str = "items",
    console: Console | None = None,
    progress: bool = True,
) -> EvalResult:
    """Evaluate ``items`` under every policy of ``config``.

    ``rewriter`` is shared by all sessions (``None``: the embedded rewriter).
    ``baselines`` maps a name to one fixed query per item (CAsT's raw utterance,
    human rewrite…); each becomes a row set ``baseline:<name>`` scored the same way,
    without input checks. An item whose rewrite raises is kept as a failed record
    (empty query, ``error`` set) so one bad item never loses the others' results.

    >>> from turnscope.evaluation import bundled_items
    >>> result = run_eval(bundled_items()[:5], EvalConfig(retriever="bm25"),
    ...                   progress=False)                                   # doctest: +SKIP
    >>> result.policy("default").figure("mean", "R@5")                      # doctest: +SKIP
    Interval(value=1.0, low=1.0, high=1.0, n=5)
    """
    cfg = config or EvalConfig()
    if not items:
        raise InputError("no follow-up items to evaluate")
    needs_retrieval = any(item.gold for item in items)
    retrievers = _Retrievers(cfg)
    keys = [retrievers.corpus_key(item) if item.gold else "" for item in items]
    checks_scored = [bool(item.prefix) or not cfg.history_only for item in items]
    notes: list[str] = []

    if needs_retrieval:
        missing = [
            (item.id, g) for item, key in zip(items, keys, strict=True) if key
            for g in item.gold if g not in retrievers.corpus(key).by_id
        ]
        if missing:
            shown = ", ".join(f"{i} ({g})" for i, g in missing[:5])
            more = f" and {len(missing) - 5} more" if len(missing) > 5 else ""
            notes.append(f"{len(missing)} gold passage ids are not in the corpus and can "
                         f"never be retrieved: {shown}{more}")

    base = baselines or {}
    for name, queries in base.items():
        if len(queries) != len(items):
            raise InputError(f"baseline {name!r} has {len(queries)} queries for "
                             f"{len(items)} items")
    labels = list(cfg.policies) + [f"baseline:{name}" for name in base]
    results: list[PolicyResult] = []
    with _progress(console, progress) as bar:
        for label in labels:
            task = bar.add_task(label, total=len(items))
            records: list[ItemRecord] = []
            if label.startswith("baseline:"):
                for i, item in enumerate(items):
                    record = _check_record(item, label, base[label[9:]][i], None,
                                           checks_scored=checks_scored[i])
                    records.append(replace(record, backend=label))
                    bar.advance(task)
            else:
                def make_session(policy: str = label) -> Session:
                    return Session(policy=policy, rewriter=rewriter, vocabulary=cfg.vocabulary)

                # each item's result is a fresh session's replaying its prefix; items written
                # turn by turn (TREC CAsT) continue the session of the item before
                batch = BatchRewriter(make_session)
                for i, item in enumerate(items):
                    try:
                        records.append(_rewrite_one(item, batch, label, checks_scored[i]))
                    except Exception as exc:  # noqa: BLE001 - kept as a failed record
                        logger.warning("item %s under %s failed: %s", item.id, label, exc)
                        record = _check_record(item, label, "", None,
                                               checks_scored=checks_scored[i])
                        records.append(replace(record, error=f"{type(exc).__name__}: {exc}"))
                    bar.advance(task)
            if needs_retrieval:
                records = _retrieve(records, keys, retrievers, cfg.depth)
            scores = score_records(records, cfg.metrics)
            frozen = {m: tuple(v) for m, v in scores.items()}
            rows = summarize(records, frozen, resamples=cfg.resamples, seed=cfg.seed)
            results.append(PolicyResult(label, tuple(records), MappingProxyType(frozen), rows))
    errors = sum(r.error is not None for p in results for r in p.records)
    if errors:
        notes.append(f"{errors} item rewrites raised an error; they count as failures "
                     "(see the records' 'error' field)")
    return EvalResult(
        dataset=dataset,
        rewriter=rewriter_name,
        retriever=cfg.retriever if needs_retrieval else None,
        metrics=cfg.metrics,
        policies=tuple(results),
        notes=tuple(notes),
    )


def _retrieve(records: list[ItemRecord], keys: Sequence[str], retrievers: _Retrievers,
              depth: int) -> list[ItemRecord]:
    out = list(records)
    by_key: dict[str, list[int]] = {}
    for i, key in enumerate(keys):
        if key:
            by_key.setdefault(key, []).append(i)
    for key, idx in by_key.items():
        hits = retrievers.get(key).run_many([records[i].query for i in idx], k=depth)
        for i, h in zip(idx, hits, strict=True):
            out[i] = replace(records[i], hits=tuple(x.id for x in h))
    return out
