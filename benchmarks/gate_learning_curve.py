"""Is the resolver's decision limited by how much data it learns from? A learning curve.

    python benchmarks/gate_learning_curve.py [--fractions 0.25,0.5,0.75,1] [--seeds 13,14]
        [--save FILE.json] [--png FILE.png]

The development sets (CAsT 2019, CANARD dev, the even CAsT 2021 topics; docs/splits.md)
are split into the resolver's five folds by conversation. For each fold the ranker and the
gate are fitted on a *fraction* of the other folds' conversations (the same draw for both
models), and score the held-out fold; the out-of-fold sweep (earlier user turns read as
their human rewrites, as in ``turnscope train``'s first stage) then gives, per fraction:

- the best objective (coverage - 2 x contamination, mean over the three sets), and
- per set, the best coverage at contamination <= 0.02 and <= 0.05 over the sweep's
  thresholds and caps (a frontier, not one point).

If the frontier still climbs from 3/4 to all of the data, the decision is data-bound and
more (honest) training messages for the gate are worth building; if it is flat, they are
not. The examples (features with the shipped tagger) are built once and kept in
``$TURNSCOPE_CACHE/gate-examples.pkl``. No PyTorch needed.
"""

from __future__ import annotations

import argparse
import json
import pickle
import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from turnscope.resolver._embedcache import CachedEmbedder
from turnscope.resolver._neural import default_tagger
from turnscope.resolver._train import (
    DEFAULT_FOLDS,
    DEFAULT_ROUNDS,
    NN_READS_REWRITES,
    TRAINING_SETS,
    Example,
    _fold,
    _gate_data,
    build_examples,
    fit,
    fit_gate,
    sweep,
)
from turnscope.retrieval._cache import default_cache_dir

LIMITS = (0.02, 0.05)


def examples(console: Console) -> list[Example]:
    path = default_cache_dir() / "gate-examples.pkl"
    if path.exists():
        with path.open("rb") as fh:
            out: list[Example] = pickle.load(fh)
        return out
    embedder = CachedEmbedder(disk=default_cache_dir() / "resolver-embeddings.npz")
    tagger = default_tagger()
    out = []
    with Progress(console=console) as progress:
        for name, load in TRAINING_SETS.items():
            its = load(None)
            task = progress.add_task(f"features {name}", total=len(its))
            out.extend(build_examples(its, name, embedder, lambda k, t=task: progress.advance(t, k),
                                      tagger, NN_READS_REWRITES))
    embedder.save()
    out = [e for e in out if len(e.y)]
    with path.open("wb") as fh:
        pickle.dump(out, fh)
    return out


def curve_point(exs: Sequence[Example], fraction: float, seed: int) -> list[dict[str, Any]]:
    fold_of = [_fold(e.conversation, DEFAULT_FOLDS) for e in exs]
    convs = sorted({e.conversation for e in exs})
    rng = random.Random(seed)
    keep = set(rng.sample(convs, round(fraction * len(convs))))
    oof = [np.zeros(len(e.y)) for e in exs]
    for k in range(DEFAULT_FOLDS):
        part = [e for e, f in zip(exs, fold_of, strict=True) if f != k and e.conversation in keep]
        model = fit(part, seed, DEFAULT_ROUNDS)
        for j, f in enumerate(fold_of):
            if f == k:
                oof[j] = np.asarray(model.predict(exs[j].x), dtype=np.float64)
    # the gate needs out-of-fold ranker scores on its own training messages too: the
    # held-out fold's scores above come from rankers that did not see it
    g = _gate_data(exs, oof)
    gate_oof = [np.zeros(len(y)) for y in g.y]
    for k in range(DEFAULT_FOLDS):
        idx = [j for j, f in enumerate(fold_of) if f != k and exs[j].conversation in keep and len(g.y[j])]
        gm = fit_gate(g, idx, seed, DEFAULT_ROUNDS)
        for j, f in enumerate(fold_of):
            if f == k and len(g.y[j]):
                gate_oof[j] = np.asarray(gm.predict(g.x[j]), dtype=np.float64)
    return sweep(exs, g, gate_oof)


def summarise(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    best = max(rows, key=lambda r: r["objective"])
    sets = best["sets"].keys()
    front = {name: {str(lim): max((r["sets"][name]["coverage"] for r in rows
                                   if r["sets"][name]["contamination"] <= lim), default=0.0)
                    for lim in LIMITS} for name in sets}
    return {"objective": best["objective"], "frontier": front}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fractions", default="0.25,0.5,0.75,1")
    ap.add_argument("--seeds", default="13,14")
    ap.add_argument("--save", type=Path)
    ap.add_argument("--png", type=Path)
    args = ap.parse_args()
    console = Console()
    exs = examples(console)
    fractions = [float(f) for f in args.fractions.split(",")]
    seeds = [int(s) for s in args.seeds.split(",")]
    results: dict[str, list[dict[str, Any]]] = {}
    with Progress(console=console) as progress:
        task = progress.add_task("learning curve", total=len(fractions) * len(seeds))
        for fr in fractions:
            for seed in seeds:
                results.setdefault(str(fr), []).append(summarise(curve_point(exs, fr, seed)))
                progress.advance(task)
    names = list(results[str(fractions[-1])][0]["frontier"])
    table = Table(title="gate learning curve (development sets, out of fold; mean over seeds)")
    table.add_column("share of training conversations", justify="right")
    table.add_column("objective", justify="right")
    for name in names:
        for lim in LIMITS:
            table.add_column(f"{name} cov@<={lim}", justify="right")
    for fr, runs in results.items():
        cells = [f"{np.mean([r['objective'] for r in runs]):.4f}"]
        for name in names:
            for lim in LIMITS:
                cells.append(f"{np.mean([r['frontier'][name][str(lim)] for r in runs]):.3f}")
        table.add_row(fr, *cells)
    console.print(table)
    if args.save:
        args.save.write_text(json.dumps(results, indent=1) + "\n")
    if args.png:
        draw(results, names, args.png)


def draw(results: dict[str, list[dict[str, Any]]], names: Sequence[str], png: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    xs = [float(f) for f in results]
    fig, axes = plt.subplots(1, len(LIMITS) + 1, figsize=(5 * (len(LIMITS) + 1), 4))
    for ax, lim in zip(axes, LIMITS, strict=False):
        for name in names:
            ax.plot(xs, [np.mean([r["frontier"][name][str(lim)] for r in runs]) for runs in results.values()],
                    marker="o", label=name)
        ax.set_title(f"coverage at contamination <= {lim}")
        ax.set_xlabel("share of training conversations")
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=8)
    axes[-1].plot(xs, [np.mean([r["objective"] for r in runs]) for runs in results.values()], marker="o")
    axes[-1].set_title("best objective (cov - 2 x cont, mean of sets)")
    axes[-1].set_xlabel("share of training conversations")
    axes[-1].grid(alpha=0.3)
    fig.suptitle("Resolver learning curve on the development sets (out of fold, mean of seeds)")
    fig.tight_layout()
    fig.savefig(png, dpi=110)


if __name__ == "__main__":
    main()
