"""Coverage and contamination of the CAsT baselines (SPEC section 7 self-check).

Run from the repository root::

    python benchmarks/cast_baselines.py [DATA_ROOT]    # package installed (pip install -e .)
    PYTHONPATH=. python benchmarks/cast_baselines.py   # or from a plain checkout

Figures are over follow-up turns (items with a non-empty prefix): a topic's
first turn has no history, so it can neither miss a carried-over word nor
carry a stale one. This is the population behind the SPEC's CAsT 2019 figures
(whole history: coverage 1.00, contamination 0.68; raw: 0.21 / 0.00).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from turnscope.datasets import CAST_YEARS, cast_baselines, load_cast, resolve_data_root
from turnscope.evaluation import check_terms

BASELINES = ("raw", "prev_user", "all_user", "automatic", "human")


def rates(items: list[dict[str, Any]], queries: list[str]) -> tuple[float, float, int]:
    """(coverage, contamination, n) over the follow-up turns."""
    checks = [
        check_terms(query, item["required_in_rewrite"], item["forbidden_in_rewrite"])
        for item, query in zip(items, queries, strict=True)
        if item["prefix"]
    ]
    n = len(checks)
    return sum(c.covered for c in checks) / n, sum(c.contaminated for c in checks) / n, n


def main(argv: list[str]) -> None:
    root = resolve_data_root(Path(argv[0]) if argv else None)
    table = Table(title="CAsT baselines: required coverage / contamination (follow-up turns)")
    for column in ("baseline", "year", "coverage", "contamination", "n"):
        table.add_column(column, justify="left" if column == "baseline" else "right")
    per_year = {year: load_cast(year, root) for year in CAST_YEARS}
    queries = {year: cast_baselines(items) for year, items in per_year.items()}
    for name in BASELINES:
        for year in CAST_YEARS:
            if name not in queries[year]:
                continue
            cov, cont, n = rates(per_year[year], queries[year][name])
            table.add_row(name, str(year), f"{cov:.2f}", f"{cont:.2f}", str(n))
    Console().print(table)


if __name__ == "__main__":
    main(sys.argv[1:])
