"""turnscope on TREC CAsT beside the SPEC section 7 baselines, per year and, for 2019,
per utterance type (SE self-contained, FT depends on the first turn, PT on the previous).

    python benchmarks/cast_rewrites.py [--policies default,full,window:2] [DATA_ROOT]

Figures are over follow-up turns (non-empty prefix), as in ``cast_baselines.py``.
No domain vocabulary is used: CAsT is an unseen domain for the general extractor.
"""

from __future__ import annotations

import argparse
from collections import defaultdict
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import track
from rich.table import Table

from turnscope import Session
from turnscope.datasets import CAST_YEARS, cast_baselines, load_cast, resolve_data_root
from turnscope.evaluation import check_terms

BASELINES = ("raw", "prev_user", "all_user", "automatic", "human")


def rewrite_all(items: list[dict[str, Any]], policy: str) -> list[str]:
    """Replay each topic once, turn by turn (items of a topic share their prefix)."""
    out: list[str] = []
    session: Session | None = None
    for item in items:
        if not item["prefix"]:
            session = Session(policy=policy)
        if session is None:
            raise ValueError(f"{item['id']}: topic does not start with a first turn")
        out.append(session.user(item["follow_up"]).query)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--policies", default="default")
    ap.add_argument("data_root", nargs="?")
    args = ap.parse_args()
    root = resolve_data_root(Path(args.data_root) if args.data_root else None)
    policies = [p.strip() for p in args.policies.split(",") if p.strip()]
    console = Console(width=200)
    rows: dict[str, dict[str, list[tuple[bool, bool]]]] = defaultdict(lambda: defaultdict(list))
    for year in CAST_YEARS:
        items = load_cast(year, root)
        systems = {name: qs for name, qs in cast_baselines(items).items()}
        for pol in policies:
            systems[f"turnscope:{pol}"] = rewrite_all(
                list(track(items, description=f"CAsT {year} {pol}", console=console)), pol)
        for name, queries in systems.items():
            for item, q in zip(items, queries, strict=True):
                if not item["prefix"]:
                    continue
                c = check_terms(q, item["required_in_rewrite"], item["forbidden_in_rewrite"])
                rows[name][str(year)].append((c.covered, c.contaminated))
                ut = item.get("utterance_type")
                if year == 2019 and ut:
                    rows[name][f"2019-{ut}"].append((c.covered, c.contaminated))
    cols = ["2019", "2020", "2019-SE", "2019-FT", "2019-PT"]
    table = Table(title="CAsT: required coverage / contamination (follow-up turns)")
    table.add_column("system")
    for col in cols:
        table.add_column(col, justify="right")
    order = [b for b in BASELINES if b in rows] + [f"turnscope:{p}" for p in policies]
    for name in order:
        cells = []
        for col in cols:
            v = rows[name].get(col)
            if not v:
                cells.append("–")
                continue
            cov = sum(a for a, _ in v) / len(v)
            con = sum(b for _, b in v) / len(v)
            cells.append(f"{cov:.2f} / {con:.2f} (n={len(v)})")
        table.add_row(name, *cells)
    console.print(table)


if __name__ == "__main__":
    main()
