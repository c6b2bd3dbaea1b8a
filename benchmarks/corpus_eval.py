"""The default policy on the written corpus (corpus/README.md), per pattern and stratum.

    python benchmarks/corpus_eval.py --split dev [--lang en] [--dump dev.jsonl] [--baselines]

Coverage (every required word present) and contamination (a forbidden word present) per
pattern, per reference class and overall, with the share of items each holds. ``--dump``
writes one line per item (message, rewrite, trace, the checks) for reading failures: use it
on ``dev`` only; the check part is read as aggregates (docs/splits.md lists each use).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import Any

from turnscope import BatchRewriter, Session
from turnscope._lexicon import check_terms
from turnscope.training.corpus import load_corpus

PATTERN_GROUPS = {
    "person_pronoun": "person pronoun", "thing_pronoun": "thing pronoun",
    "np_antecedent": "noun-phrase antecedent", "substitution": "ellipsis", "completion": "ellipsis",
    "ordinal": "ordinal", "described_option": "ordinal",
}


def baseline_queries(item: dict[str, Any]) -> dict[str, str]:
    users = [t["content"] for t in item["prefix"] if t["role"] == "user"]
    return {
        "raw message": item["follow_up"],
        "previous user turn prepended": " ".join(users[-1:] + [item["follow_up"]]),
        "whole history prepended": " ".join(users + [item["follow_up"]]),
        "human rewrite": item.get("human_rewrite") or item["follow_up"],
    }


def table(rows: Sequence[tuple[str, dict[str, Any], str]], title: str) -> None:
    groups: dict[str, list[tuple[bool, bool]]] = defaultdict(list)
    for key, item, query in rows:
        c = check_terms(query, item["required_in_rewrite"], item["forbidden_in_rewrite"])
        groups[key].append((c.covered, c.contaminated))
        groups["ALL"].append((c.covered, c.contaminated))
    n_all = len(groups["ALL"])
    print(f"\n{title}")
    print(f"{'group':28s} {'share':>6s} {'n':>4s} {'cov':>5s} {'cont':>5s}")
    for key in sorted(groups, key=lambda k: (k == "ALL", k)):
        v = groups[key]
        cov = sum(a for a, _ in v) / len(v)
        cont = sum(b for _, b in v) / len(v)
        print(f"{key:28s} {len(v) / n_all:6.2f} {len(v):4d} {cov:5.2f} {cont:5.2f}")


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
    ap.add_argument("--baselines", action="store_true")
    ap.add_argument("--by", default="group", choices=["group", "pattern", "reference_type"])
    args = ap.parse_args()
    items = load_corpus(args.split, lang=args.lang)
    start = time.perf_counter()
    results = rewrite_all(items, Session)
    took = time.perf_counter() - start

    def key(item: dict[str, Any]) -> str:
        if args.by == "group":
            return f"{item['lang']}:{PATTERN_GROUPS.get(item['pattern'], 'other')}"
        return f"{item['lang']}:{item[args.by]}"

    table([(key(it), it, r.query) for it, r in zip(items, results)],
          f"turnscope default on corpus {args.split} ({len(items)} items, {took:.0f} s)")
    if args.baselines:
        for name in baseline_queries(items[0]):
            table([(key(it), it, baseline_queries(it)[name]) for it in items], name)
    if args.dump:
        with open(args.dump, "w", encoding="utf-8") as fh:
            for it, r in zip(items, results):
                c = check_terms(r.query, it["required_in_rewrite"], it["forbidden_in_rewrite"])
                fh.write(json.dumps({
                    "id": it["id"], "pattern": it["pattern"], "prefix": [t["content"] for t in it["prefix"][-2:]],
                    "follow_up": it["follow_up"], "query": r.query, "human": it["human_rewrite"],
                    "missing": c.required_missing, "forbidden": c.forbidden_hits,
                    "decided_by": r.trace.get("decided_by") if hasattr(r, "trace") else None,
                }, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
