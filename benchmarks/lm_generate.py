"""Can the shipped small LM write the standalone query itself? Greedy rewrites by
SmolLM2-135M-Instruct (the decider's model, ``turnscope.language.SmallLM``) for the written
corpus's English items, scored like every rewrite (coverage / contamination per reference
group), beside the default's queries for the same items.

    python benchmarks/lm_generate.py --split dev [--limit N] [--turns 4]

The prompt is a condense prompt in the model's chat template: the last ``--turns`` messages,
then the user's message and the instruction to rewrite it to stand alone. Prints no item text.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import defaultdict
from typing import Any

from corpus_eval import PATTERN_GROUPS

from turnscope import BatchRewriter, Session
from turnscope._lexicon import check_terms
from turnscope.language import SmallLM
from turnscope.training.corpus import load_corpus

INSTRUCTION = ("Rewrite my last question so that it can be understood without the conversation: "
               "replace words like it, he, she, they, that, the first one with what they refer to. "
               "Reply with the rewritten question only.")


def prompt(item: dict[str, Any], turns: int) -> str:
    lines = [f"{t['role']}: {t['content']}" for t in item["prefix"][-turns:]]
    body = "Conversation:\n" + "\n".join(lines) + f"\n\nMy last question: {item['follow_up']}\n\n" + INSTRUCTION
    return f"<|im_start|>user\n{body}<|im_end|>\n<|im_start|>assistant\n"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--split", default="dev", choices=["train", "dev"])
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--turns", type=int, default=4)
    args = ap.parse_args()
    items = load_corpus(args.split, lang="en")
    if args.limit:
        items = items[: args.limit]
    lm = SmallLM.load()
    batch = BatchRewriter(Session)
    rows: dict[str, list[tuple[int, int, int, int]]] = defaultdict(list)
    seconds = []
    for i, item in enumerate(items):
        start = time.perf_counter()
        generated = lm.generate(prompt(item, args.turns), 40).strip().splitlines()
        seconds.append(time.perf_counter() - start)
        query = generated[0] if generated else item["follow_up"]
        ours = batch.rewrite(item).query
        g = check_terms(query, item["required_in_rewrite"], item["forbidden_in_rewrite"])
        d = check_terms(ours, item["required_in_rewrite"], item["forbidden_in_rewrite"])
        row = (int(g.covered), int(g.contaminated), int(d.covered), int(d.contaminated))
        for key in (PATTERN_GROUPS.get(item["pattern"], "other"), "ALL"):
            rows[key].append(row)
        if (i + 1) % 50 == 0:
            print(f"  ... {i + 1}/{len(items)}", file=sys.stderr)
    print(f"{'group':24s} {'n':>4s} {'SmolLM2 writes it':>18s} {'default':>12s}")
    for key, v in sorted(rows.items(), key=lambda kv: (kv[0] == "ALL", kv[0])):
        n = len(v)
        gc, gx, dc, dx = (sum(r[j] for r in v) / n for j in range(4))
        print(f"{key:24s} {n:4d} {gc:9.2f} / {gx:.2f} {dc:6.2f} / {dx:.2f}")
    seconds.sort()
    print(f"generation: median {seconds[len(seconds) // 2]:.2f} s, "
          f"p90 {seconds[int(len(seconds) * 0.9)]:.2f} s a message (coverage / contamination)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
