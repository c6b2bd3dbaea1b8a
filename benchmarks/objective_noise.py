"""How much the development objective moves with the fold models' seed alone.

    python benchmarks/objective_noise.py [--seeds 13,14,15,16,17,18] [--config shipped|own-histories]
        [--bag K] [--paired OTHER.json] [--save FILE.json] [--png FILE.png] [--redraw SAVED.json]

The rule that decides whether a resolver candidate earns a look at a check set compares its
calibration objective (coverage - 2 x contamination, mean over the three development sets,
each conversation replayed in sessions by the fold models that never saw it; two seeds
averaged) with the shipped one's. This benchmark fits the *shipped configuration* at each
seed (nothing else changes: same examples, same settings), replays every development
conversation (CANARD: 150 dialogues, as the calibration reads it) at the shipped threshold
pair and cap, and prints each seed's figures, the spread of one seed's objective, and that of
a two-seed mean (what the rule compares). A candidate whose two-seed objective differs from
the shipped one by less than about two such spreads is not told apart by the rule. No check
set is read. The examples are those of ``benchmarks/gate_learning_curve.py`` (cached in
``$TURNSCOPE_CACHE/gate-examples.pkl``).

``--config own-histories`` fits round 14's configuration instead (the gate and ranker also learn
from every conversation as that seed's fold models rewrote it; ``turnscope train --only resolver
--own-histories`` takes its own examples from the first seed's replay for both calibration
seeds, this from each seed's own). ``--paired`` reads another run's saved JSON (other seeds
ignored) and prints the per-seed differences, their mean and spread: the comparison a rule
should make, since a seed moves both configurations alike in part. ``--bag K`` makes every
ranker and gate the mean of K models (seeds ``seed + 1000 * i``, ``_ranker.Bag``; round 17).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import Progress
from rich.table import Table

import turnscope.resolver._train as T
from turnscope.resolver import default_resolver
from turnscope.resolver._calibration import _calibrate
from turnscope.resolver._embedcache import CachedEmbedder
from turnscope.retrieval._cache import default_cache_dir

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gate_learning_curve import examples  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", default="13,14,15,16,17,18")
    ap.add_argument("--config", choices=("shipped", "own-histories"), default="shipped")
    ap.add_argument("--bag", type=int, default=1, help="models averaged in every ranker and gate")
    ap.add_argument("--paired", type=Path, help="another run's --save JSON to compare with, seed by seed")
    ap.add_argument("--save", type=Path)
    ap.add_argument("--redraw", type=Path, help="a saved run: draw --png from it (with --paired) and fit nothing")
    ap.add_argument("--png", type=Path)
    args = ap.parse_args()
    console = Console()
    if args.redraw:
        if not args.png:
            raise SystemExit("--redraw needs --png")
        saved = json.loads(args.redraw.read_text())
        draw(saved, list(saved["rows"][0]["sets"]), args.png,
             json.loads(args.paired.read_text()) if args.paired else None)
        return
    seeds = [int(s) for s in args.seeds.split(",")]
    if args.bag < 1:
        raise SystemExit("--bag must be at least 1")
    if len(seeds) < 2:
        raise SystemExit("--seeds needs at least two seeds to measure a spread")
    shipped = default_resolver()
    pair = (shipped.slot_threshold, shipped.threshold)
    cap = shipped.max_carried
    exs = examples(console)
    loaded = {name: load(None) for name, load in T.TRAINING_SETS.items()}
    embedder = CachedEmbedder(disk=default_cache_dir() / "resolver-embeddings.npz")
    rows: list[dict[str, Any]] = []
    with Progress(console=console) as progress:
        task = progress.add_task("seeds (fit the folds, replay the sessions)", total=len(seeds))
        for seed in seeds:
            folded = T._fit_folds(exs, T.DEFAULT_FOLDS, seed, T.DEFAULT_ROUNDS, bag=args.bag)
            if args.config == "own-histories":
                folded = _with_own_histories(exs, folded, seed, loaded, embedder, args.bag)
            row = _calibrate(loaded, folded.rankers, folded.gates, T.DEFAULT_FOLDS, cap, embedder,
                               Console(stderr=True, quiet=True), T.NN_READS_REWRITES, pairs=[pair])[0]
            rows.append({"seed": seed, **row})
            progress.advance(task)
    objectives = [r["objective"] for r in rows]
    sd = statistics.stdev(objectives)
    config = args.config if args.bag == 1 else f"{args.config}, bag {args.bag}"
    summary = {"config": config, "pair": list(pair), "max_carried": cap, "seeds": seeds,
               "mean": statistics.fmean(objectives),
               "sd_one_seed": sd, "sd_two_seed_mean": sd / 2 ** 0.5,
               "min": min(objectives), "max": max(objectives), "rows": rows}
    sets = list(T.TRAINING_SETS)
    table = Table(title=f"{config} configuration at {pair}, cap {cap}: development replay per seed")
    table.add_column("seed", justify="right")
    table.add_column("objective", justify="right")
    for name in sets:
        table.add_column(f"{name} cov / con", justify="right")
    for r in rows:
        table.add_row(str(r["seed"]), f"{r['objective']:.4f}",
                      *(f"{r['sets'][n]['coverage']:.3f} / {r['sets'][n]['contamination']:.3f}" for n in sets))
    console.print(table)
    console.print(f"mean {summary['mean']:.4f}, range {summary['min']:.4f} - {summary['max']:.4f}; "
                  f"sd of one seed {sd:.4f}, of a two-seed mean {summary['sd_two_seed_mean']:.4f}")
    other = json.loads(args.paired.read_text()) if args.paired else None
    if other is not None:
        summary["paired"] = paired(summary, other, console)
    if args.save:
        args.save.write_text(json.dumps(summary, indent=1) + "\n")
    if args.png:
        draw(summary, sets, args.png, other)


def _with_own_histories(exs: list[Any], folded: Any, seed: int, loaded: dict[str, Any],
                        embedder: CachedEmbedder, bag: int = 1) -> Any:
    """Round 14's configuration at ``seed``: the fold models replay every conversation, and
    the models are refitted on the human-history examples plus those read as they rewrote them."""
    from turnscope.resolver._neural import default_tagger
    from turnscope.resolver._replay import replayed, session_items

    first = T.sweep(exs, folded.g, folded.gate_oof)
    cap = max(first, key=lambda r: (r["objective"], -r["max_carried"], r["threshold"]))["max_carried"]
    runs = replayed(loaded, folded.rankers, folded.gates, T.DEFAULT_FOLDS, cap, embedder, T.NN_READS_REWRITES,
                    T.OWN_HISTORY_PAIR)
    tagger = default_tagger()
    own = [e for name, run in runs.items()
           for e in T.build_examples(session_items(run, own=True, latent=False), name, embedder, None, tagger,
                                     T.NN_READS_REWRITES, history="own") if len(e.y)]
    return T._fit_folds([*exs, *own], T.DEFAULT_FOLDS, seed, T.DEFAULT_ROUNDS, bag=bag)


def paired(summary: dict[str, Any], other: dict[str, Any], console: Console) -> dict[str, Any]:
    """Seed-by-seed differences (this run minus ``other``) on the seeds both ran."""
    theirs = {r["seed"]: r["objective"] for r in other["rows"]}
    diffs = {r["seed"]: r["objective"] - theirs[r["seed"]] for r in summary["rows"] if r["seed"] in theirs}
    if len(diffs) < 2:
        raise SystemExit("--paired needs at least two seeds in common")
    values = list(diffs.values())
    mean, sd = statistics.fmean(values), statistics.stdev(values)
    # runs saved before --config existed were of the shipped configuration
    out = {"against": other.get("config", "shipped"), "differences": diffs, "mean": mean, "sd": sd,
           "se": sd / len(values) ** 0.5}
    console.print(f"paired with {out['against']}: mean difference {mean:+.4f} over {len(values)} seeds "
                  f"(sd {sd:.4f}, standard error {out['se']:.4f}; "
                  + ", ".join(f"{k}: {v:+.4f}" for k, v in diffs.items()) + ")")
    return out


def draw(summary: dict[str, Any], sets: list[str], png: Path, other: dict[str, Any] | None = None) -> None:
    """Each seed's objective and per-set point; with ``other`` (the --paired run) its points in
    grey beside, a line joining the two runs of one seed."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = summary["rows"]
    fig, axes = plt.subplots(1, len(sets) + 1, figsize=(4.4 * (len(sets) + 1), 4))
    ax = axes[0]
    label = summary.get("config", "shipped")
    theirs = {r["seed"]: r for r in other["rows"]} if other is not None else {}
    for r in rows:
        if r["seed"] in theirs:
            ax.plot([r["seed"]] * 2, [theirs[r["seed"]]["objective"], r["objective"]], color="grey", lw=0.8)
    if other is not None:
        ax.scatter(list(theirs), [t["objective"] for t in theirs.values()], color="grey",
                   label=other.get("config", "shipped"))
    ax.scatter([r["seed"] for r in rows], [r["objective"] for r in rows], color="tab:blue", label=label)
    ax.axhline(summary["mean"], color="grey", lw=1)
    ax.axhspan(summary["mean"] - summary["sd_two_seed_mean"], summary["mean"] + summary["sd_two_seed_mean"],
               color="grey", alpha=0.2, label="mean +/- sd of a two-seed mean")
    ax.set_title("objective per seed")
    ax.set_xlabel("fold-model seed")
    ax.margins(y=0.25)
    ax.legend(fontsize=8, loc="lower left")
    for ax, name in zip(axes[1:], sets, strict=True):
        if theirs:
            ax.scatter([t["sets"][name]["contamination"] for t in theirs.values()],
                       [t["sets"][name]["coverage"] for t in theirs.values()], color="grey")
        ax.scatter([r["sets"][name]["contamination"] for r in rows], [r["sets"][name]["coverage"] for r in rows],
                   color="tab:blue")
        for r in rows:
            ax.annotate(str(r["seed"]), (r["sets"][name]["contamination"], r["sets"][name]["coverage"]), fontsize=7)
        ax.set_title(f"{name}: one dot per seed")
        ax.set_xlabel("contamination")
        ax.set_ylabel("coverage")
        ax.grid(alpha=0.3)
    fig.suptitle(f"Seed noise of the development objective ({summary.get('config', 'shipped')} configuration, "
                 f"pair {tuple(summary['pair'])})")
    fig.tight_layout()
    fig.savefig(png, dpi=110)


if __name__ == "__main__":
    main()
