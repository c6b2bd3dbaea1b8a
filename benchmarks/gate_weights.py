"""How much the CAsT messages should weigh in the resolver gate's loss: development replay.

    python benchmarks/gate_weights.py [--weights 1,2,3,4,5,8] [--seeds 13,14] [--save FILE.json] [--png FILE.png]

For each weight W (every CAsT 2019 and CAsT 2021 dev message counts W times a CANARD one in
the *gate's* loss; the ranker is unweighted) the fold models are fitted as ``turnscope
train`` fits them, and every development conversation is replayed in sessions by the fold
models that never saw it (CANARD: 150 dialogues), at the gate threshold pairs around the
shipped one. Printed: per weight, the objective (coverage - 2 x contamination, mean over the
three sets) of each pair averaged over the seeds, and the sets' figures at the best pair; the
picture draws each weight's pairs, coverage against contamination, one panel per set. No
check set is read. The examples are those of ``benchmarks/gate_learning_curve.py`` (built
once, kept in ``$TURNSCOPE_CACHE/gate-examples.pkl``).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console
from rich.progress import Progress
from rich.table import Table

import turnscope.resolver._train as T
from turnscope.resolver._embedcache import CachedEmbedder
from turnscope.retrieval._cache import default_cache_dir

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gate_learning_curve import examples  # noqa: E402

#: the replay's pairs: the shipped one and its neighbours
PAIRS = ((0.8, 0.8), (0.8, 0.85), (0.8, 0.9), (0.85, 0.85), (0.85, 0.9), (0.7, 0.85), (0.75, 0.85))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--weights", default="1,2,3,4,5,8")
    ap.add_argument("--seeds", default="13,14")
    ap.add_argument("--save", type=Path)
    ap.add_argument("--png", type=Path)
    args = ap.parse_args()
    console = Console()
    exs = examples(console)
    loaded = {name: load(None) for name, load in T.TRAINING_SETS.items()}
    embedder = CachedEmbedder(disk=default_cache_dir() / "resolver-embeddings.npz")
    weights = [float(w) for w in args.weights.split(",")]
    seeds = [int(s) for s in args.seeds.split(",")]
    results: dict[str, list[dict[str, Any]]] = {}
    with Progress(console=console) as progress:
        task = progress.add_task("weights x seeds", total=len(weights) * len(seeds))
        for w in weights:
            runs = []
            for seed in seeds:
                folded = T._fit_folds(exs, T.DEFAULT_FOLDS, seed, T.DEFAULT_ROUNDS, None,
                                      {"cast19": w, "cast21dev": w})
                runs.append(T._calibrate(loaded, folded.rankers, folded.gates, T.DEFAULT_FOLDS, 3, embedder,
                                         Console(stderr=True, quiet=True), T.NN_READS_REWRITES,
                                         pairs=PAIRS))
                progress.advance(task)
            results[str(w)] = T._mean_rows(runs)
    sets = list(T.TRAINING_SETS)
    table = Table(title="gate weight of the CAsT messages: development replay, mean over seeds "
                        + ",".join(map(str, seeds)))
    table.add_column("W", justify="right")
    table.add_column("best pair", justify="right")
    table.add_column("objective", justify="right")
    for name in sets:
        table.add_column(name, justify="right")
    for w, rows in results.items():
        best = max(rows, key=lambda r: (r["objective"], r["threshold"], r["slot_threshold"]))
        table.add_row(w, f"{best['slot_threshold']}, {best['threshold']}", f"{best['objective']:.4f}",
                      *(f"{best['sets'][n]['coverage']:.3f} / {best['sets'][n]['contamination']:.3f}"
                        for n in sets))
    console.print(table)
    if args.save:
        args.save.write_text(json.dumps(results, indent=1) + "\n")
    if args.png:
        draw(results, sets, args.png)


def draw(results: dict[str, list[dict[str, Any]]], sets: list[str], png: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(sets), figsize=(5 * len(sets), 4.2))
    colours = plt.get_cmap("viridis")(np.linspace(0, 0.9, len(results)))
    for ax, name in zip(axes, sets, strict=True):
        for (w, rows), colour in zip(results.items(), colours, strict=True):
            ax.scatter([r["sets"][name]["contamination"] for r in rows],
                       [r["sets"][name]["coverage"] for r in rows], color=colour, label=f"W={w}", alpha=0.8)
        ax.set_title(f"{name} (development replay)")
        ax.set_xlabel("contamination")
        ax.set_ylabel("coverage")
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=8)
    fig.suptitle("Gate weight W of the CAsT messages: threshold pairs around the shipped one")
    fig.tight_layout()
    fig.savefig(png, dpi=110)


if __name__ == "__main__":
    main()
