"""Scoring rewrites: term matching (docs/output.md) and metrics (docs/benchmarks.md).

The stratified harness behind ``turnscope eval``:

>>> from turnscope.evaluation import EvalConfig, bundled_items, run_eval, print_tables
>>> result = run_eval(bundled_items(), EvalConfig(policies=("full", "default")))  # doctest: +SKIP
>>> print_tables(result)                                                          # doctest: +SKIP
>>> check_gate(load_gate("default"), result)                                     # doctest: +SKIP
[]
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# The matcher is imported eagerly: it is a leaf module that the data-set loaders and
# the rewriter guard import through this package. Everything else (the harness, which
# imports sessions, retrieval, rich and numpy) is loaded on first use, so importing the
# matcher never drags in the harness, and the harness's imports of those packages are
# never circular.
from turnscope._lexicon import (
    TermCheck,
    check_terms,
    contains_any,
    contains_term,
    normalize,
)

if TYPE_CHECKING:
    from turnscope.evaluation._baselines import (
        BASELINE_TITLES,
        QUERY_BASELINES,
        baseline_title,
        query_baselines,
    )
    from turnscope.evaluation._bootstrap import (
        DEFAULT_CONFIDENCE,
        DEFAULT_RESAMPLES,
        DEFAULT_SEED,
        Interval,
        bootstrap_ci,
    )
    from turnscope.evaluation._bundled import bundled_item_files, bundled_items
    from turnscope.evaluation._gate import (
        Gate,
        GateFailure,
        bundled_gate,
        check_gate,
        load_gate,
        parse_gate,
    )
    from turnscope.evaluation._metrics import (
        DEFAULT_DEPTH,
        DEFAULT_METRICS,
        ItemRecord,
        Metric,
        get_metric,
        metric_names,
        register_metric,
        score_records,
        unregister_metric,
    )
    from turnscope.evaluation._report import (
        DEFAULT_CHART_METRICS,
        DEFAULT_COMPARE_METRICS,
        DEFAULT_FAILURE_RANK,
        SUMMARY_METRICS,
        Decomposition,
        DecompositionRow,
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
    from turnscope.evaluation._runner import (
        DEFAULT_LANG_CORPORA,
        DEFAULT_POLICIES,
        DEFAULT_RETRIEVER,
        MEAN,
        EvalConfig,
        EvalResult,
        PolicyResult,
        StratumRow,
        bundled_session_vocabulary,
        run_eval,
        summarize,
    )
    from turnscope.evaluation._topic import (
        DEFAULT_DETECTORS,
        TOPIC_BASELINES,
        DetectionScore,
        detect_switches,
        print_detection,
        score_detection,
        topic_shift_eval,
    )

_LAZY: dict[str, str] = {
    "BASELINE_TITLES": "turnscope.evaluation._baselines",
    "QUERY_BASELINES": "turnscope.evaluation._baselines",
    "YOURS": "turnscope.evaluation._baselines",
    "baseline_title": "turnscope.evaluation._baselines",
    "query_baselines": "turnscope.evaluation._baselines",
    "bundled_item_files": "turnscope.evaluation._bundled",
    "bundled_items": "turnscope.evaluation._bundled",
    "DEFAULT_CONFIDENCE": "turnscope.evaluation._bootstrap",
    "DEFAULT_RESAMPLES": "turnscope.evaluation._bootstrap",
    "DEFAULT_SEED": "turnscope.evaluation._bootstrap",
    "Interval": "turnscope.evaluation._bootstrap",
    "bootstrap_ci": "turnscope.evaluation._bootstrap",
    "Gate": "turnscope.evaluation._gate",
    "GateFailure": "turnscope.evaluation._gate",
    "bundled_gate": "turnscope.evaluation._gate",
    "check_gate": "turnscope.evaluation._gate",
    "load_gate": "turnscope.evaluation._gate",
    "parse_gate": "turnscope.evaluation._gate",
    "DEFAULT_DEPTH": "turnscope.evaluation._metrics",
    "DEFAULT_METRICS": "turnscope.evaluation._metrics",
    "ItemRecord": "turnscope.evaluation._metrics",
    "Metric": "turnscope.evaluation._metrics",
    "get_metric": "turnscope.evaluation._metrics",
    "metric_names": "turnscope.evaluation._metrics",
    "register_metric": "turnscope.evaluation._metrics",
    "score_records": "turnscope.evaluation._metrics",
    "unregister_metric": "turnscope.evaluation._metrics",
    "DEFAULT_CHART_METRICS": "turnscope.evaluation._report",
    "DEFAULT_COMPARE_METRICS": "turnscope.evaluation._report",
    "DEFAULT_FAILURE_RANK": "turnscope.evaluation._report",
    "Decomposition": "turnscope.evaluation._report",
    "DecompositionRow": "turnscope.evaluation._report",
    "decompose": "turnscope.evaluation._report",
    "is_failure": "turnscope.evaluation._report",
    "print_decomposition": "turnscope.evaluation._report",
    "print_summary": "turnscope.evaluation._report",
    "print_tables": "turnscope.evaluation._report",
    "summary_legend": "turnscope.evaluation._report",
    "SUMMARY_METRICS": "turnscope.evaluation._report",
    "render_html": "turnscope.evaluation._report",
    "write_html": "turnscope.evaluation._report",
    "write_json": "turnscope.evaluation._report",
    "write_png": "turnscope.evaluation._report",
    "DEFAULT_LANG_CORPORA": "turnscope.evaluation._runner",
    "DEFAULT_POLICIES": "turnscope.evaluation._runner",
    "DEFAULT_RETRIEVER": "turnscope.evaluation._runner",
    "MEAN": "turnscope.evaluation._runner",
    "EvalConfig": "turnscope.evaluation._runner",
    "EvalResult": "turnscope.evaluation._runner",
    "PolicyResult": "turnscope.evaluation._runner",
    "StratumRow": "turnscope.evaluation._runner",
    "bundled_session_vocabulary": "turnscope.evaluation._runner",
    "run_eval": "turnscope.evaluation._runner",
    "summarize": "turnscope.evaluation._runner",
    "DEFAULT_DETECTORS": "turnscope.evaluation._topic",
    "TOPIC_BASELINES": "turnscope.evaluation._topic",
    "DetectionScore": "turnscope.evaluation._topic",
    "detect_switches": "turnscope.evaluation._topic",
    "print_detection": "turnscope.evaluation._topic",
    "score_detection": "turnscope.evaluation._topic",
    "topic_shift_eval": "turnscope.evaluation._topic",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(__all__)


__all__ = [
    # matching
    "TermCheck",
    "check_terms",
    "contains_any",
    "contains_term",
    "normalize",
    # metrics
    "DEFAULT_DEPTH",
    "DEFAULT_METRICS",
    "ItemRecord",
    "Metric",
    "get_metric",
    "metric_names",
    "register_metric",
    "score_records",
    "unregister_metric",
    # bootstrap
    "DEFAULT_CONFIDENCE",
    "DEFAULT_RESAMPLES",
    "DEFAULT_SEED",
    "Interval",
    "bootstrap_ci",
    # baselines
    "BASELINE_TITLES",
    "QUERY_BASELINES",
    "YOURS",
    "baseline_title",
    "query_baselines",
    # items and runs
    "bundled_item_files",
    "bundled_items",
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
    "summarize",
    # reports
    "DEFAULT_CHART_METRICS",
    "DEFAULT_COMPARE_METRICS",
    "DEFAULT_FAILURE_RANK",
    "Decomposition",
    "DecompositionRow",
    "decompose",
    "is_failure",
    "print_decomposition",
    "print_summary",
    "print_tables",
    "render_html",
    "SUMMARY_METRICS",
    "summary_legend",
    "write_html",
    "write_json",
    "write_png",
    # gates
    "Gate",
    "GateFailure",
    "bundled_gate",
    "check_gate",
    "load_gate",
    "parse_gate",
    # topic shift
    "DEFAULT_DETECTORS",
    "TOPIC_BASELINES",
    "DetectionScore",
    "detect_switches",
    "print_detection",
    "score_detection",
    "topic_shift_eval",
]
