"""Could a learned judge of "the embedded rewrite is right" let the cascade skip more calls?

    python benchmarks/cascade_judge.py [--set corpus-dev] [--set cast19] [--set cast21dev]

The cascade saves a call only on turns whose embedded rewrite it trusts, and no single signal
turnscope reports was precise enough to trust (docs/llm.md). This asks whether the signals
together are: it replays the development sets' whole conversations through the embedded
rewriter (as ``cascade_share.py`` does), records for each judged follow-up what its result
says (reference class, topic shift, carried phrases, the decider's probability and number of
candidates, the topic anchor, the shift probability, the learned resolver's best phrase
score and its lead over the second, the rules that fired, what decided, the message's length,
pronouns, capitalised words and overlap with the previous user message) and whether the
rewrite holds every required word and no forbidden one. A LightGBM classifier is scored out of
fold (five folds by conversation, pooled over the sets), and for each threshold the
script prints how many follow-ups the judge would keep local and how many of those are wrong:
a turn kept wrong is coverage the cascade loses. Development sets only.
"""

from __future__ import annotations

import argparse
import re
from typing import Any

import lightgbm as lgb
import numpy as np
from cascade_share import SETS, conversations

from turnscope import Session
from turnscope.evaluation import check_terms

DEV_SETS = ("corpus-dev", "cast19", "cast21dev")
THRESHOLDS = (0.5, 0.6, 0.7, 0.8, 0.9, 0.95)
#: (leaves, rounds): a small, a middle and a larger tree, so no single size decides
SIZES = ((3, 100), (7, 150), (15, 300))
_PRONOUN = re.compile(r"\b(it|its|they|them|their|he|him|his|she|her|this|that|these|those|one|ones)\b", re.I)
_WORD = re.compile(r"\w+")
_NUMERIC = ("turn", "words", "changed", "added_words", "topic_shift", "carried",
            "decider_probability", "decider_chosen", "decider_candidates", "anchor", "shift_probability",
            "rules", "pronouns", "capitalised", "overlap_previous", "entities", "resolver_top", "resolver_margin")


def features(message: str, previous: str, turn: int, r: Any) -> dict[str, Any]:
    trace = r.trace
    dec = trace.get("decider") if isinstance(trace.get("decider"), dict) else None
    anchor = trace.get("anchor") if isinstance(trace.get("anchor"), dict) else None
    resolver = trace.get("resolver") if isinstance(trace.get("resolver"), dict) else {}
    scores = [float(c["score"]) for c in resolver.get("candidates") or []] + [0.0, 0.0]
    words = {w.lower() for w in _WORD.findall(message)}
    rules = [str(x).split("->")[0] for x in trace.get("rules") or []]
    return {
        "turn": turn, "words": len(_WORD.findall(message)),
        "changed": float(r.query.strip() != message.strip()),
        "added_words": len(_WORD.findall(r.query)) - len(_WORD.findall(message)),
        "topic_shift": float(bool(r.topic_shift)), "carried": len(r.carried or ()),
        "decider_probability": float(dec.get("probability") or -1) if dec else -1.0,
        "decider_chosen": float(bool(dec.get("chosen"))) if dec else -1.0,
        "decider_candidates": float(dec.get("candidates") or 0) if dec else -1.0,
        "anchor": float(bool(anchor.get("phrase"))) if anchor else -1.0,
        "shift_probability": float(trace.get("shift_probability") or -1),
        "rules": len(rules), "rule_names": rules,
        "pronouns": len(_PRONOUN.findall(message)),
        "capitalised": sum(1 for w in _WORD.findall(message)[1:] if w[:1].isupper()),
        "overlap_previous": len(words & {w.lower() for w in _WORD.findall(previous)}) / max(1, len(words)),
        "entities": len(r.entities), "kind": f"{r.reference_class}/{r.decided_by}",
        # the learned resolver's best phrase score and its lead over the second (0: it did not run)
        "resolver_top": scores[0], "resolver_margin": scores[0] - scores[1],
    }


def rows(name: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for ci, conv in enumerate(conversations(SETS[name]())):
        s, previous, turn = Session(), "", 0
        for t in conv:
            if t.role != "user":
                s.assistant(t.content)
                continue
            r = s.user(t.content)
            turn += 1
            if t.item is not None and t.item["prefix"]:
                c = check_terms(r.query, t.item["required_in_rewrite"], t.item["forbidden_in_rewrite"])
                out.append({"set": name, "conversation": f"{name}:{ci}", "right": c.covered and not c.contaminated,
                            **features(t.content, previous, turn, r)})
            previous = t.content
    return out


def matrix(data: list[dict[str, Any]]) -> np.ndarray:
    counts: dict[str, int] = {}
    for d in data:
        for n in set(d["rule_names"]):
            counts[n] = counts.get(n, 0) + 1
    rules = sorted(n for n, k in counts.items() if k >= 8)
    kinds = sorted({d["kind"] for d in data})
    return np.array([[float(d[k]) for k in _NUMERIC] + [float(d["kind"] == c) for c in kinds]
                     + [float(n in d["rule_names"]) for n in rules] for d in data])


def out_of_fold(x: np.ndarray, y: np.ndarray, groups: list[str], leaves: int, rounds: int) -> np.ndarray:
    order = sorted(set(groups))
    np.random.default_rng(0).shuffle(order)
    fold = {g: i % 5 for i, g in enumerate(order)}
    folds = np.array([fold[g] for g in groups])
    params = {"objective": "binary", "num_leaves": leaves, "learning_rate": 0.05, "min_data_in_leaf": 10,
              "verbose": -1, "seed": 0, "deterministic": True}
    p = np.zeros(len(y))
    for k in range(5):
        model = lgb.train(params, lgb.Dataset(x[folds != k], y[folds != k]), rounds)
        p[folds == k] = model.predict(x[folds == k])
    return p


def main() -> int:
    ap = argparse.ArgumentParser(prog="python benchmarks/cascade_judge.py")
    ap.add_argument("--set", dest="sets", action="append", choices=DEV_SETS, help="repeatable; default all three")
    args = ap.parse_args()
    data = [r for name in args.sets or DEV_SETS for r in rows(name)]
    x, y = matrix(data), np.array([d["right"] for d in data], dtype=float)
    sets = np.array([d["set"] for d in data])
    print(f"{len(y)} judged follow-ups, embedded rewrite right on {int(y.sum())}")
    print("| judge (leaves / rounds) | threshold | " + " | ".join(f"{s}: kept, wrong" for s in sorted(set(sets)))
          + " | all: kept, wrong |")
    print("|---|---|" + "---|" * (len(set(sets)) + 1))
    for leaves, rounds in SIZES:
        p = out_of_fold(x, y, [d["conversation"] for d in data], leaves, rounds)
        for t in THRESHOLDS:
            keep = p >= t
            cells = [f"{int((keep & (sets == s)).sum())}, {int((keep & (sets == s) & (y == 0)).sum())}"
                     for s in sorted(set(sets))]
            print(f"| {leaves} / {rounds} | {t} | " + " | ".join(cells)
                  + f" | {int(keep.sum())}, {int((keep & (y == 0)).sum())} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
