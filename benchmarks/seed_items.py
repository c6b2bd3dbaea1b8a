"""Required coverage and contamination of the embedded default on the bundled follow-up
items, per stratum (the seed items — "set": "seed" — and the whole set).

    python benchmarks/seed_items.py [--policy default] [--all]
"""

from __future__ import annotations

import argparse
from collections import defaultdict
from importlib import resources

from rich.console import Console
from rich.table import Table

from turnscope import Session
from turnscope._items import STRATA, load_items, rewrite_item
from turnscope.cli._common import load_vocabulary
from turnscope.evaluation import check_terms


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--policy", default="default")
    ap.add_argument("--all", action="store_true", help="all items, not only the seed set")
    args = ap.parse_args()
    folder = resources.files("turnscope").joinpath("data", "followups")
    items = []
    for f in sorted(p.name for p in folder.iterdir() if p.name.endswith(".jsonl")):
        items += load_items(str(folder.joinpath(f)))
    if not args.all:
        items = [it for it in items if (it.model_extra or {}).get("set") == "seed"]
    vocab = load_vocabulary("bundled")
    stats: dict[str, list[tuple[bool, bool]]] = defaultdict(list)
    for it in items:
        r = rewrite_item(it, lambda: Session(policy=args.policy, vocabulary=vocab))
        c = check_terms(r.query, it.required_in_rewrite, it.forbidden_in_rewrite)
        stats[it.reference_type or "?"].append((c.covered, c.contaminated))
        stats[f"lang:{it.lang}"].append((c.covered, c.contaminated))
    table = Table(title=f"{'all' if args.all else 'seed'} items, policy {args.policy}")
    for col in ("stratum", "n", "share", "coverage", "contamination"):
        table.add_column(col, justify="left" if col == "stratum" else "right")
    n_all = len(items)
    for key in [*STRATA, "lang:en", "lang:ja"]:
        v = stats.get(key)
        if not v:
            continue
        table.add_row(key, str(len(v)), f"{len(v) / n_all:.2f}",
                      f"{sum(a for a, _ in v) / len(v):.2f}", f"{sum(b for _, b in v) / len(v):.2f}")
    allv = [x for k in STRATA for x in stats.get(k, [])]
    table.add_row("mean", str(len(allv)), "1.00", f"{sum(a for a, _ in allv) / len(allv):.2f}",
                  f"{sum(b for _, b in allv) / len(allv):.2f}")
    Console(width=120).print(table)


if __name__ == "__main__":
    main()
