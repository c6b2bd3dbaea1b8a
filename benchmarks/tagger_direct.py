"""The stacked tagger's word scores used directly, without the ranker and gate (round 13).

    python benchmarks/tagger_direct.py [--stacked DIR]

Each development message (CAsT 2019, CANARD dev, the even CAsT 2021 topics) is scored by the
fold tagger that never saw it; every history word scoring at least the threshold (and not
already in the message) is appended, and the query is judged like any rewrite (coverage /
contamination, SPEC section 7). Earlier user turns are read as their human rewrites, as in
the out-of-fold sweep, so these figures are a little kinder than a session replay. This is
the bag of words the issue rules out for shipping; it answers whether the tagger alone
beats the gate it feeds. It needs the stacked tagger and its fold taggers
(``turnscope train --only neural --stack``; default dir ``$TURNSCOPE_CACHE/neural-stacked-13``).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import numpy as np

from turnscope._matching import check_terms
from turnscope.resolver._candidates import key_of
from turnscope.resolver._neural import MAX_TURNS, NeuralTagger, word_spans, word_text
from turnscope.resolver._neural_dev import dev_rows, fold_taggers
from turnscope.resolver._train import DEFAULT_FOLDS, TRAINING_SETS
from turnscope.retrieval._cache import default_cache_dir

THRESHOLDS = (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)


def history_words(tagger: NeuralTagger, message: str, history: list[str]) -> list[tuple[float, str]]:
    """(best piece score, word) for every history word the tagger reads, in its order."""
    texts = history[-MAX_TURNS:]
    enc, probs, _ = tagger.run(message, texts)
    turns = list(reversed(texts))
    return [(float(max(probs[w[0]:w[1]])), word_text(enc, turns, w)) for w in word_spans(enc)]


def main() -> None:
    ap = argparse.ArgumentParser(description="the stacked tagger's word scores used directly")
    ap.add_argument("--stacked", type=Path, default=default_cache_dir() / "neural-stacked-13")
    args = ap.parse_args()
    taggers = fold_taggers(args.stacked, DEFAULT_FOLDS)
    if taggers is None:
        raise SystemExit(f"{args.stacked}: not a stacked tagger")
    loaded = {name: load(None) for name, load in TRAINING_SETS.items()}
    by_id = {f"{name}:{it.get('conversation', it['id'])}:{it['id']}": it
             for name, its in loaded.items() for it in its}
    scored: list[tuple[dict[str, Any], list[tuple[float, str]]]] = [
        (r, history_words(taggers[r["fold"]], r["message"], r["history"])) for r in dev_rows(loaded, DEFAULT_FOLDS)]
    print("threshold  " + "  ".join(f"{name} coverage/contamination" for name in loaded))
    for th in THRESHOLDS:
        per: dict[str, list[tuple[bool, bool]]] = {}
        for r, words in scored:
            item = by_id[r["id"]]
            have = set(key_of(r["message"]))
            add = []
            for score, w in words:
                k = key_of(w)
                if score >= th and k and not k <= have:
                    add.append(w.strip(".,?!;:'\"()"))
                    have |= k
            query = r["message"] + (" " + " ".join(add) if add else "")
            c = check_terms(query, item["required_in_rewrite"], item["forbidden_in_rewrite"])
            per.setdefault(r["set"], []).append((c.covered, c.contaminated))
        cells = [f"{np.mean([a for a, _ in v]):.3f} / {np.mean([b for _, b in v]):.3f}" for v in per.values()]
        print(f"{th:<9}  " + "  ".join(cells), flush=True)


if __name__ == "__main__":
    main()
