"""Score a file of rewrites (one JSON line per item id with its ``query``, as ``turnscope
rewrite`` writes) on the written corpus, per reference group: how an earlier version or
another rewriter did on the same items.

    python benchmarks/score_rewrites.py --split check --rewrites OUT.jsonl
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpus_eval import PATTERN_GROUPS, figures, print_table  # noqa: E402

from turnscope.training.corpus import load_corpus  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--split", default="dev", choices=["train", "dev", "check"])
    ap.add_argument("--rewrites", required=True)
    ap.add_argument("--label", default="rewrites")
    args = ap.parse_args()
    queries = {}
    for line in Path(args.rewrites).read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            queries[row["id"]] = row.get("query")
    items = [it for it in load_corpus(args.split) if it["id"] in queries]
    rows = [(f"{it['lang']}:{PATTERN_GROUPS.get(it['pattern'], 'other')}", it, queries[it["id"]] or "")
            for it in items]
    print_table(f"{args.label} on corpus {args.split} ({len(items)} items)", {args.label: figures(rows)})
    return 0


if __name__ == "__main__":
    sys.exit(main())
