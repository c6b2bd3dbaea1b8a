"""Every user message of the public sets through the default policy: the words the rewrites
invent (issue 37: the user's words are never damaged; the goal is 0).

    python benchmarks/user_words.py [--sets cast2019,cast2020,cast2021,canard] [--limit N]

Prints, per set, the messages, how many the default changed and how many invented a word,
with each such message, its rewrite and the invented words.
"""

from __future__ import annotations

import argparse
import sys
import time

from turnscope import BatchRewriter, Session
from turnscope.datasets import load_canard, load_cast
from turnscope.evaluation._integrity import invented_words

LOADERS = {
    "cast2019": lambda: load_cast(2019),
    "cast2020": lambda: load_cast(2020),
    "cast2021": lambda: load_cast(2021),
    "canard": load_canard,
}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sets", default=",".join(LOADERS))
    ap.add_argument("--limit", type=int, default=0)
    args = ap.parse_args()
    total_bad = 0
    for name in args.sets.split(","):
        items = LOADERS[name]()
        if args.limit:
            items = items[: args.limit]
        batch = BatchRewriter(Session)
        changed = bad = 0
        start = time.perf_counter()
        for i, item in enumerate(items):
            q = batch.rewrite(item).query
            if q.strip() != item["follow_up"].strip():
                changed += 1
            ctx = [t["content"] for t in item["prefix"]]
            for t in item["prefix"]:
                if t.get("screen"):
                    ctx.extend(str(v) for v in t["screen"].values())
            if item.get("screen"):
                ctx.extend(str(v) for v in item["screen"].values())
            new = invented_words(item["follow_up"], q, ctx)
            if new:
                bad += 1
                print(f"  {item['id']}: {item['follow_up']!r} -> {q!r}: {new}")
            if (i + 1) % 500 == 0:
                print(f"  ... {i + 1}/{len(items)}", file=sys.stderr)
        total_bad += bad
        print(f"{name}: {len(items)} messages, {changed} changed, {bad} with invented words "
              f"({time.perf_counter() - start:.0f} s)")
    return 0 if total_bad == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
