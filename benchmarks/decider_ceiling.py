"""How far a perfect decision would go: per reference group, the share of items whose query
the default gets right, and the share for which some rewrite the decider is offered (a parser
candidate, the message as typed, the rules' rewrite) or the default's query is right.

    python -m turnscope.training.decider extract --split dev       # candidates, cached
    python benchmarks/corpus_eval.py --split dev --dump dev.jsonl  # the default's queries
    python benchmarks/decider_ceiling.py --split dev --dump dev.jsonl

Japanese items have no decider candidates: their ceiling is the default's own figure.
Prints counts only (usable on the check part without reading an item).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

from corpus_eval import group_of

from turnscope.training.corpus import load_corpus
from turnscope.training.decider import CACHE_DIR


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--split", default="dev", choices=["train", "dev", "check"])
    ap.add_argument("--dump", type=Path, required=True, help="corpus_eval.py --dump output")
    args = ap.parse_args()
    items = {it["id"]: it for it in load_corpus(args.split)}
    queries = [json.loads(line) for line in args.dump.read_text("utf-8").splitlines() if line]
    records = {}
    for line in (CACHE_DIR / f"{args.split}.jsonl").read_text("utf-8").splitlines():
        r = json.loads(line)
        records[r["id"]] = r
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    for q in queries:
        right = not q["missing"] and not q["forbidden"]
        cands = records.get(q["id"], {}).get("cands", [])
        reachable = right or any(c["good"] for c in cands)
        by_parser = any(c["good"] and c["gen"] == "parser" for c in cands)
        for key in (group_of(items[q["id"]]), "ALL"):
            c = counts[key]
            c[0] += 1
            c[1] += right
            c[2] += reachable
            c[3] += by_parser
    print(f"{'group':28s} {'items':>5s} {'default':>8s} {'perfect decision':>17s} {'a parser candidate':>19s}")
    for key, (n, right, reachable, by_parser) in sorted(counts.items(), key=lambda kv: (kv[0] == "ALL", kv[0])):
        print(f"{key:28s} {n:5d} {right / n:8.2f} {reachable / n:17.2f} {by_parser / n:19.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
