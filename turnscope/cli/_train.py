"""``turnscope train``: rebuild the shipped learned models from the public data.

The training code lives in :mod:`turnscope.training`; the command imports it when it runs,
so the runtime (every other command) never loads it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from turnscope._exceptions import TurnscopeError
from turnscope.cli._app import app

#: where the shipped models live inside the source tree
PACKAGE_MODELS = Path(__file__).resolve().parent.parent / "data" / "models"
#: the stages ``--only`` names; ``all`` runs them in this order (the resolver reads the other two)
STAGES = ("all", "shift", "neural", "resolver")


@app.command("train", short_help="Train the learned models on the data sets in place.")
def train(
    data_root: Annotated[Path | None, typer.Option(
        help="Folder holding the public sets (default: $TURNSCOPE_DATA or ../shared/data).")] = None,
    output: Annotated[Path, typer.Option(
        "--output", "-o", help="Where the resolver model is written.")] = PACKAGE_MODELS / "resolver.txt",
    seed: Annotated[int, typer.Option(help="Seed of every random choice (samples, folds, LightGBM).")] = 13,
    limit: Annotated[int, typer.Option(
        help="Keep the first N items of each resolver set and N of the tagger's examples (0: all).",
        min=0)] = 0,
    cache: Annotated[bool, typer.Option(
        help="Keep e5 embeddings under $TURNSCOPE_CACHE so a second run embeds nothing.")] = True,
    only: Annotated[str, typer.Option(
        help="'all' (the shift detector, the neural tagger, then the resolver, which reads both), "
             "'shift', 'neural' or 'resolver'.")] = "all",
) -> None:
    """Train the learned models on the sets of docs/splits.md (seeded, deterministic):
    the topic-shift detector (TopiOCQA train part + TIAGE train), the neural tagger
    (synthetic follow-ups from TopiOCQA train, docs/neural_data.md; needs the train
    extra), then the resolver (CAsT 2019, CANARD, the CAsT 2021 dev half), which reads the
    detector's probability and the tagger's scores."""
    console = Console(stderr=True)
    if only not in STAGES:
        console.print(f"error: --only must be all, shift, neural or resolver, got {only!r}", markup=False,
                      highlight=False)
        raise typer.Exit(2)
    # OpenMP threads that spin while they wait make e5 several times slower when the two
    # cores are shared with another job; passive waiting costs nothing when they are not.
    # Only effective before the encoder is loaded, hence here, in the command
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    if only in ("all", "shift"):
        _train_shift(data_root, seed, cache, console)
    if only in ("all", "neural"):
        _train_neural(data_root, seed, limit, console)
    if only in ("all", "resolver"):
        _train_resolver(data_root, output, seed, limit, cache, console)


def _train_shift(data_root: Path | None, seed: int, cache: bool, console: Console) -> None:
    """The topic-shift detector, into the package."""
    from turnscope.resolver import _shift
    from turnscope.training.shift import train_shift

    try:
        shift = train_shift(data_root, PACKAGE_MODELS / "shift.txt", seed=seed, use_cache=cache, console=console)
    except TurnscopeError as exc:
        console.print(f"error: {exc}", markup=False, highlight=False)
        raise typer.Exit(1) from None
    # the resolver's features read the detector: use the model just written
    _shift.shipped_model.cache_clear()
    _shift._default_detector.cache_clear()
    console.print(f"shift detector: threshold {shift.threshold:.3f}, cross-validated F1 {shift.cv_f1:.3f}",
                  markup=False, highlight=False)


def _train_neural(data_root: Path | None, seed: int, limit: int, console: Console) -> None:
    """The tagger's synthetic follow-ups (in the cache), then the tagger (the int8 model, into
    the package)."""
    from turnscope.resolver import _candidates
    from turnscope.retrieval import default_cache_dir
    from turnscope.training.neural import train_neural
    from turnscope.training.neural_data import build_neural_data

    data = default_cache_dir() / f"neural-data-{seed}.jsonl"
    try:
        built = build_neural_data(data_root, data, seed=seed)
        console.print(f"neural data: {built}", markup=False, highlight=False)
        report = train_neural(data, PACKAGE_MODELS / "neural", seed=seed, limit=limit or None, console=console)
    except TurnscopeError as exc:
        console.print(f"error: {exc}", markup=False, highlight=False)
        raise typer.Exit(1) from None
    _candidates._DEFAULT = None  # the resolver trained next reads the tagger just written
    console.print(f"neural tagger: {report.examples} examples, {report.steps} steps in {report.seconds:.0f} s; "
                  f"held-out token AUC {report.token_auc:.3f}, need AUC {report.need_auc:.3f}",
                  markup=False, highlight=False)


def _train_resolver(data_root: Path | None, output: Path, seed: int, limit: int, cache: bool,
                    console: Console) -> None:
    """The resolver's ranker and gate, into ``output``, and its out-of-fold figures."""
    from turnscope.retrieval import default_cache_dir
    from turnscope.training.resolver import train_resolver

    cache_path = default_cache_dir() / "resolver-embeddings.npz" if cache else None
    try:
        report = train_resolver(data_root, output, seed=seed, limit=limit or None, cache=cache_path,
                                console=console)
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
                  f"{report.examples} messages, {report.rows} candidates ({report.positives} needed); "
                  f"{report.embed_misses} texts embedded; {report.seconds:.0f} s; "
                  f"model {output.stat().st_size / 1e6:.2f} MB at {output}", markup=False, highlight=False)
