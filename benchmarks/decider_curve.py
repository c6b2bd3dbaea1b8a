"""The reference decider's learning curve: 25 / 50 / 100% of the corpus's train part (by
conversation, three draws for the partial sizes), the threshold set on dev each time,
coverage and contamination on the check part (English items the decider reviews and those it
does not: the whole English check part).

    python -m turnscope.training.decider extract --split check   # once: the cached candidates
    python benchmarks/decider_curve.py [--png benchmarks/figures/decider_curve.png]

Reads only the caches (.cache/decider/*.jsonl); each run is one aggregate use of the check
part (docs/splits.md).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

from turnscope.training.decider import (
    CACHE_DIR,
    choose_threshold,
    decisions,
    fit_booster,
    outcome,
    split_rows,
    subset_by_conversation,
    training_rows,
)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--png", default=None)
    ap.add_argument("--cache-dir", type=Path, default=CACHE_DIR)
    args = ap.parse_args()
    dev, check = (split_rows(args.cache_dir, s) for s in ("dev", "check"))
    train, counts = training_rows(args.cache_dir)
    print(f"training rows: {counts}")
    base = outcome(decisions(fit_booster(train), check), 2.0)
    print(f"check, English: {len(check)} items; rules alone {base[0]:.3f} / {base[1]:.3f}")
    print(f"{'train part':>10s} {'items':>6s} {'threshold':>9s} {'check coverage':>15s} {'contamination':>14s}")
    curve = []
    for fraction, seeds in ((0.25, (0, 1, 2)), (0.5, (0, 1, 2)), (1.0, (0,))):
        covs, conts, ts, ns = [], [], [], []
        for seed in seeds:
            part = subset_by_conversation(train, fraction, seed) if fraction < 1 else train
            booster = fit_booster(part, seed)
            t = choose_threshold(decisions(booster, dev))
            cov, cont = outcome(decisions(booster, check), t)
            covs.append(cov), conts.append(cont), ts.append(t), ns.append(len(part))
        row = {"fraction": fraction, "items": int(statistics.mean(ns)), "threshold": statistics.mean(ts),
               "coverage": statistics.mean(covs), "contamination": statistics.mean(conts)}
        curve.append(row)
        print(f"{fraction:10.0%} {row['items']:6d} {row['threshold']:9.2f} {row['coverage']:15.3f} "
              f"{row['contamination']:14.3f}")
    print(json.dumps({"rules_alone": base, "curve": curve}))
    if args.png:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots(figsize=(5, 3.2))
        xs = [r["fraction"] * 100 for r in curve]
        ax.plot(xs, [r["coverage"] for r in curve], "o-", label="coverage (decider)")
        ax.plot(xs, [r["contamination"] for r in curve], "s-", label="contamination (decider)")
        ax.axhline(base[0], ls="--", c="grey", label="coverage, rules alone")
        ax.axhline(base[1], ls=":", c="grey", label="contamination, rules alone")
        ax.set_xlabel("% of the train part"), ax.set_ylabel("share of English check items")
        ax.set_xticks(xs), ax.legend(fontsize=7), fig.tight_layout()
        fig.savefig(args.png, dpi=120)
    return 0


if __name__ == "__main__":
    sys.exit(main())
