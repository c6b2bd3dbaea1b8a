"""``turnscope train``: rebuild the shipped learned models from the public data."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, cast

import typer
from rich.console import Console
from rich.table import Table

from turnscope._exceptions import TurnscopeError
from turnscope.cli._app import app
from turnscope.resolver._neural_data import DEFAULT_DROPPED, DEFAULT_GENERIC, DEFAULT_VIEWS

if TYPE_CHECKING:
    from turnscope.resolver._train import LatentMode

#: where the shipped resolver model lives inside the source tree
PACKAGE_MODELS = Path(__file__).resolve().parent.parent / "data" / "models"


@app.command("train")
def train(
    data_root: Annotated[Path | None, typer.Option(
        help="Folder holding the public sets (default: $TURNSCOPE_DATA or ../shared/data).")] = None,
    output: Annotated[Path, typer.Option(
        "--output", "-o", help="Where the resolver model is written.")] = PACKAGE_MODELS / "resolver.txt",
    seed: Annotated[int, typer.Option(help="Seed of every random choice (folds, bagging).")] = 13,
    limit: Annotated[int, typer.Option(help="Keep the first N items of each set (0: all).", min=0)] = 0,
    cache: Annotated[bool, typer.Option(
        help="Keep e5 embeddings under $TURNSCOPE_CACHE so a second run embeds nothing.")] = True,
    only: Annotated[str, typer.Option(
        help="'all' (the shift detector, the neural tagger, then the resolver, which reads both), "
             "'shift', 'neural' or 'resolver'.")] = "all",
    stack: Annotated[bool, typer.Option(
        help="Also fine-tune the tagger on the development sets, with a fold tagger per resolver "
             "fold for stacking (docs/neural.md: measured, not shipped; off rebuilds what ships).")] = False,
    reuse_synthetic: Annotated[bool, typer.Option(
        help="With --stack: start from the synthetic stage's saved weights (in the cache) "
             "instead of training that stage again (about 22 minutes).")] = False,
    own_histories: Annotated[bool, typer.Option(
        help="Also train the resolver on the development conversations as its fold models "
             "rewrote them (docs/neural.md, round 14: measured, not shipped).")] = False,
    generic: Annotated[bool, typer.Option(
        help="Add the generic follow-ups to the tagger's synthetic data (docs/neural_data.md, "
             "kinds generic / generic-named).")] = DEFAULT_GENERIC,
    dropped: Annotated[bool, typer.Option(
        help="Add the natural follow-ups with their pointer dropped to the tagger's synthetic data "
             "(docs/neural_data.md, kind dropped).")] = DEFAULT_DROPPED,
    views: Annotated[bool, typer.Option(
        help="Read some synthetic histories as a session gives them to the tagger: earlier "
             "questions as rewrites naming their subject, some without answers (docs/neural_data.md).")]
        = DEFAULT_VIEWS,
    latent: Annotated[str, typer.Option(
        help="The session's latent subject as resolver features (docs/neural.md, round 16: measured, "
             "not shipped): 'none', 'all' (every example reads it) or 'own' (the own-history "
             "examples only; needs --own-histories).")] = "none",
    shadow_floor: Annotated[float | None, typer.Option(
        help="Later turns read a turn the resolver left unchanged as if its best phrase had been "
             "carried when the gate gave it at least this (docs/neural.md, round 16: measured, not "
             "shipped; needs --own-histories).", min=0.0, max=1.0)] = None,
    shadow_slots_only: Annotated[bool, typer.Option(
        help="With --shadow-floor: write a shadow only for a message with a pronoun slot "
             "(\"Is it treatable?\").")] = False,
    gate_cast_weight: Annotated[float, typer.Option(
        help="Weight of each CAsT message against a CANARD one in the resolver gate's loss "
             "(docs/neural.md, round 14: 3 measured, not shipped).", min=0.0)] = 1.0,
    bag: Annotated[int, typer.Option(
        help="Average this many seeds in every resolver ranker and gate (bagging; docs/neural.md, "
             "round 17).", min=1, max=20)] = 1,
) -> None:
    """Train the learned models on the sets of docs/splits.md (seeded, deterministic):
    the topic-shift detector (TopiOCQA train part + TIAGE train), the neural tagger
    (synthetic follow-ups from TopiOCQA train, docs/neural_data.md; with ``--stack`` then the
    development sets, with fold taggers for stacking; needs the ``train`` extra), then the
    resolver (CAsT 2019, CANARD, the CAsT 2021 dev half), which reads the detector's
    probability and the tagger's scores."""
    from turnscope.resolver._ranker import Shadow
    from turnscope.resolver._train import train_resolver
    from turnscope.retrieval._cache import default_cache_dir

    console = Console(stderr=True)
    if only not in ("all", "resolver", "shift", "neural"):
        console.print(f"error: --only must be all, shift, neural or resolver, got {only!r}", markup=False,
                      highlight=False)
        raise typer.Exit(2)
    if latent not in ("none", "all", "own") or (latent == "own" and not own_histories):
        console.print(f"error: --latent must be none, all or own (own with --own-histories), got {latent!r}",
                      markup=False, highlight=False)
        raise typer.Exit(2)
    if shadow_floor is not None and not (own_histories and shadow_floor > 0):
        console.print("error: --shadow-floor must be above 0 and needs --own-histories (the gate learns to "
                      "read shadow rewrites from them)", markup=False, highlight=False)
        raise typer.Exit(2)
    if only in ("all", "shift"):
        from turnscope.resolver import _shift
        from turnscope.resolver._shift_train import train_shift

        try:
            shift = train_shift(data_root, PACKAGE_MODELS / "shift.txt", seed=seed, use_cache=cache,
                                console=console)
        except TurnscopeError as exc:
            console.print(f"error: {exc}", markup=False, highlight=False)
            raise typer.Exit(1) from None
        # the resolver's features read the detector: use the model just written
        _shift.shipped_model.cache_clear()
        _shift._default_detector.cache_clear()
        console.print(f"shift detector: threshold {shift.threshold:.3f}, cross-validated F1 {shift.cv_f1:.3f}",
                      markup=False, highlight=False)
        if only == "shift":
            return
    if only in ("all", "neural"):
        _train_neural(data_root, seed, limit, console, stack, reuse_synthetic, generic=generic, dropped=dropped,
                      views=views)
        if only == "neural":
            return
    cache_path = default_cache_dir() / "resolver-embeddings.npz" if cache else None
    try:
        from turnscope.resolver._neural_dev import fold_taggers
        from turnscope.resolver._train import DEFAULT_FOLDS

        # a tagger fine-tuned on the development sets is stood in for by its fold taggers
        taggers = fold_taggers(PACKAGE_MODELS / "neural", DEFAULT_FOLDS)
        report = train_resolver(data_root, output, seed=seed, limit=limit or None, cache=cache_path,
                                console=console, fold_taggers=taggers, own_histories=own_histories,
                                latent=cast("LatentMode", latent),
                                shadow=Shadow(shadow_floor, shadow_slots_only) if shadow_floor is not None else None,
                                bag=bag,
                                gate_weights=None if gate_cast_weight == 1.0 else
                                {"cast19": gate_cast_weight, "cast21dev": gate_cast_weight})
    except TurnscopeError as exc:
        console.print(f"[red]error:[/red] {exc}", markup=True, highlight=False)
        raise typer.Exit(1) from None
    except OSError as exc:
        console.print(f"error: cannot write {output}: {exc.strerror}", markup=False, highlight=False)
        raise typer.Exit(1) from None
    table = Table(title="resolver: out-of-fold figures at the chosen threshold")
    for col in ("set", "coverage", "contamination", "AUC"):
        table.add_column(col, justify="right")
    best = next(r for r in report.sweep
                if r["threshold"] == report.threshold and r["max_carried"] == report.max_carried)
    for name, f in best["sets"].items():
        table.add_row(name, f"{f['coverage']:.3f}", f"{f['contamination']:.3f}",
                      f"{report.auc.get(name, float('nan')):.3f}")
    console.print(table)
    console.print(f"threshold {report.threshold} ({report.slot_threshold} where the message has a "
                  f"pronoun slot), at most {report.max_carried} phrases; "
                  f"{report.examples} messages ({report.own_examples} read through the fold models' own "
                  f"rewrites), {report.rows} candidates ({report.positives} needed); "
                  f"{report.embed_misses} texts embedded; {report.seconds:.0f} s; "
                  f"model {output.stat().st_size / 1e6:.2f} MB at {output}", markup=False, highlight=False)


def _train_neural(data_root: Path | None, seed: int, limit: int, console: Console, stack: bool,
                  reuse: bool, *, generic: bool = DEFAULT_GENERIC, dropped: bool = DEFAULT_DROPPED,
                  views: bool = DEFAULT_VIEWS) -> None:
    """The synthetic follow-ups (weights kept in the cache; the int8 model into the package),
    and with ``stack`` then the development sets, once per fold (fold taggers, in the cache)
    and once on all (into the package, replacing the synthetic one)."""
    from turnscope.resolver import _neural
    from turnscope.resolver._neural_data import build_neural_data
    from turnscope.resolver._neural_dev import train_stacked
    from turnscope.resolver._neural_train import train_neural
    from turnscope.resolver._train import DEFAULT_FOLDS, TRAINING_SETS
    from turnscope.retrieval._cache import default_cache_dir

    cache = default_cache_dir()
    data = cache / f"neural-data-{seed}.jsonl"
    base = cache / f"neural-tagger-{seed}.pt"
    try:
        if stack and reuse and base.exists():
            console.print(f"synthetic stage: reusing {base}", markup=False, highlight=False)
        else:
            built = build_neural_data(data_root, data, seed=seed, generic=generic, dropped=dropped,
                                      views=views)
            console.print(f"neural data: {built}", markup=False, highlight=False)
            report = train_neural(data, PACKAGE_MODELS / "neural", seed=seed, limit=limit or None,
                                  console=console, checkpoint=base)
            console.print(f"synthetic stage: {report.examples} examples, {report.steps} steps in "
                          f"{report.seconds:.0f} s; held-out token AUC {report.token_auc:.3f}, "
                          f"need AUC {report.need_auc:.3f}", markup=False, highlight=False)
        stacked = None
        if stack:
            loaded = {name: TRAINING_SETS[name](data_root) for name in TRAINING_SETS}
            if limit:
                loaded = {k: v[:limit] for k, v in loaded.items()}
            stacked = train_stacked(loaded, base, PACKAGE_MODELS / "neural", cache / f"neural-folds-{seed}",
                                    folds=DEFAULT_FOLDS, seed=seed, console=console)
    except TurnscopeError as exc:
        console.print(f"error: {exc}", markup=False, highlight=False)
        raise typer.Exit(1) from None
    _neural._DEFAULT = None  # the resolver trained next reads the tagger just written
    if stacked is not None:
        size = (PACKAGE_MODELS / "neural" / "tagger.int8.onnx").stat().st_size
        console.print(f"development stage: {sum(stacked.rows.values())} messages ({stacked.rows}), "
                      f"{stacked.folds} fold taggers in {stacked.fold_dir}, {stacked.seconds:.0f} s; "
                      f"shipped tagger {size / 1e6:.1f} MB", markup=False, highlight=False)
