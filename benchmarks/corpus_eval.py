"""The default on the written corpus (corpus/README.md), per reference group, before and after
the reference decider, in one run.

    python benchmarks/corpus_eval.py --split dev [--lang en] [--dump dev.jsonl] [--baselines]
                                     [--save benchmarks/figures/corpus_dev.json]

"before" is the rules alone (``Session(decider=None)``), "after" the default. Coverage (every
required word present) and contamination (a forbidden word present) per group with the
group's share and a bootstrap 95% interval. ``--dump`` writes one line per item (message,
both rewrites, the checks) for reading failures: use it on ``dev`` only; the check part is
read as aggregates (docs/splits.md lists each use).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from typing import Any

from turnscope import BatchRewriter, Session
from turnscope._lexicon import check_terms
from turnscope.training.corpus import load_corpus

#: the issue's groups: each pattern label the writers used, gathered by the kind of reference
PATTERN_GROUPS = {
    "person_pronoun": "person pronoun", "thing_pronoun": "thing pronoun",
    "np_antecedent": "noun-phrase antecedent", "substitution": "ellipsis", "completion": "ellipsis",
    "ordinal": "ordinal", "described_option": "ordinal",
}


def group_of(item: dict[str, Any]) -> str:
    """The item's row in the per-group tables: its language and reference group."""
    return f"{item['lang']}:{PATTERN_GROUPS.get(item['pattern'], 'other')}"


def baseline_queries(item: dict[str, Any]) -> dict[str, str]:
    users = [t["content"] for t in item["prefix"] if t["role"] == "user"]
    return {
        "raw message": item["follow_up"],
        "previous user turn prepended": " ".join(users[-1:] + [item["follow_up"]]),
        "whole history prepended": " ".join(users + [item["follow_up"]]),
        "human rewrite": item.get("human_rewrite") or item["follow_up"],
    }


def _interval(values: list[int], seed: int = 0, rounds: int = 1000) -> tuple[float, float]:
    rng = random.Random(seed)
    n = len(values)
    means = sorted(sum(rng.choice(values) for _ in range(n)) / n for _ in range(rounds))
    return means[int(0.025 * rounds)], means[int(0.975 * rounds) - 1]


def figures(rows: list[tuple[str, dict[str, Any], str]]) -> dict[str, dict[str, Any]]:
    groups: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for key, item, query in rows:
        c = check_terms(query, item["required_in_rewrite"], item["forbidden_in_rewrite"])
        groups[key].append((int(c.covered), int(c.contaminated)))
        groups["ALL"].append((int(c.covered), int(c.contaminated)))
    n_all = len(groups["ALL"])
    out = {}
    for key, v in groups.items():
        cov = [a for a, _ in v]
        cont = [b for _, b in v]
        out[key] = {"n": len(v), "share": len(v) / n_all, "coverage": sum(cov) / len(v),
                    "coverage_ci": _interval(cov), "contamination": sum(cont) / len(v),
                    "contamination_ci": _interval(cont)}
    return out


def print_table(title: str, columns: dict[str, dict[str, dict[str, Any]]]) -> None:
    print(f"\n{title}")
    keys = sorted(next(iter(columns.values())), key=lambda k: (k == "ALL", k))
    head = f"{'group':26s} {'share':>5s}" + "".join(f" {name[:22]:>22s}" for name in columns)
    print(head)
    for key in keys:
        first = next(iter(columns.values()))[key]
        line = f"{key:26s} {first['share']:5.2f}"
        for col in columns.values():
            f = col[key]
            lo, hi = f["coverage_ci"]
            line += f"  {f['coverage']:.2f} [{lo:.2f},{hi:.2f}] /{f['contamination']:.2f}"
        print(line)
    print("(coverage [95% interval] / contamination)")


def rewrite_all(items: list[dict[str, Any]], make_session: Callable[[], Session]) -> list[Any]:
    batch = BatchRewriter(make_session)
    out = []
    for i, item in enumerate(items):
        out.append(batch.rewrite(item))
        if (i + 1) % 100 == 0:
            print(f"  ... {i + 1}/{len(items)}", file=sys.stderr)
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--split", default="dev", choices=["train", "dev", "check"])
    ap.add_argument("--lang", default=None)
    ap.add_argument("--dump", default=None)
    ap.add_argument("--save", default=None)
    ap.add_argument("--baselines", action="store_true")
    ap.add_argument("--by", default="group", choices=["group", "pattern", "reference_type"])
    args = ap.parse_args()
    items = load_corpus(args.split, lang=args.lang)

    def key(item: dict[str, Any]) -> str:
        if args.by == "group":
            return group_of(item)
        return f"{item['lang']}:{item[args.by]}"

    start = time.perf_counter()
    before = rewrite_all(items, lambda: Session(decider=None))
    t_before = time.perf_counter() - start
    start = time.perf_counter()
    after = rewrite_all(items, Session)
    t_after = time.perf_counter() - start
    columns = {
        "before (rules alone)": figures([(key(it), it, r.query) for it, r in zip(items, before, strict=True)]),
        "after (default)": figures([(key(it), it, r.query) for it, r in zip(items, after, strict=True)]),
    }
    if args.baselines:
        for name in baseline_queries(items[0]):
            columns[name] = figures([(key(it), it, baseline_queries(it)[name]) for it in items])
    print_table(f"corpus {args.split} ({len(items)} items; {t_before:.0f} s rules alone, "
                f"{t_after:.0f} s default)", columns)
    if args.save:
        with open(args.save, "w", encoding="utf-8") as fh:
            json.dump({"split": args.split, "lang": args.lang, "items": len(items), "columns": columns}, fh, indent=1)
    if args.dump:
        with open(args.dump, "w", encoding="utf-8") as fh:
            for it, b, r in zip(items, before, after, strict=True):
                c = check_terms(r.query, it["required_in_rewrite"], it["forbidden_in_rewrite"])
                fh.write(json.dumps({
                    "id": it["id"], "pattern": it["pattern"], "prefix": [t["content"] for t in it["prefix"][-2:]],
                    "follow_up": it["follow_up"], "before": b.query, "query": r.query, "human": it["human_rewrite"],
                    "missing": c.required_missing, "forbidden": c.forbidden_hits, "decider": r.trace.get("decider"),
                }, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
