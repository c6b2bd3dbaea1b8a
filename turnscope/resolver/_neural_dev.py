"""Stacking the neural tagger on the development sets (``turnscope train --only neural``).

The tagger first learns from synthetic TopiOCQA follow-ups (:mod:`._neural_data`), whose
subject is always a Wikipedia title. The development sets (CAsT 2019, CANARD dev, the even
CAsT 2021 topics; docs/splits.md) show what a human rewrite really adds: several noun
phrases, a qualifier from an answer, a subject three turns back. So the synthetic tagger is
fine-tuned on them, labelled by the words the human rewrite adds (the SPEC section 7 words
the resolver's own labels use, :func:`dev_rows`).

The resolver's ranker and gate learn from the tagger's scores, and those scores must be as
honest on the development sets as on a stranger's conversation. Hence stacking, with the
resolver's own folds (:func:`turnscope.resolver._train._fold`, by conversation): for each
fold a tagger fine-tuned on the other folds scores it (these *fold taggers* live in the
cache, next to a manifest, and only ``turnscope train --only resolver`` reads them), and
the tagger that ships is fine-tuned on every fold. Check sets are never read.

Opt-in (``turnscope train --only neural --stack``): measured in round 13, the fold taggers
read the development sets better than the synthetic tagger (stem AUC +0.03 to +0.06, out
of fold), but the resolver trained on their scores did no better in session replay
(objective 0.2248 against 0.2264), so the synthetic tagger still ships (docs/neural.md).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from turnscope._exceptions import ConfigError
from turnscope.resolver._candidates import key_of
from turnscope.resolver._neural import NeuralTagger
from turnscope.resolver._ranker import tagger_view

__all__ = ["DEV_EPOCHS", "DEV_LR", "StackReport", "dev_rows", "fold_taggers", "needed_stems", "oof_stem_auc",
           "train_stacked"]

#: two passes over ~3,200 messages: the prototype of issue 20 fine-tuned for two epochs on
#: the same sets; one pass over so few rows barely moves a tagger that has seen 37,000
DEV_EPOCHS = 2
#: the encoder's step of the synthetic run (BERT fine-tuning default); the heads start
#: trained here, so they take it too
DEV_LR = 5e-5
MANIFEST = "folds.json"


@dataclass(frozen=True)
class StackReport:
    rows: dict[str, int]
    folds: int
    seconds: float
    fold_dir: Path
    shipped: Path


def needed_stems(item: Mapping[str, Any], view: Sequence[str]) -> frozenset[str]:
    """The content stems the item's human rewrite adds to its message and that ``view`` (its
    history as the tagger reads it, earlier user turns as their rewrites) holds."""
    earlier: frozenset[str] = frozenset().union(*(key_of(t) for t in view))
    return (key_of(item["human_rewrite"]) - key_of(item["follow_up"])) & earlier


def dev_rows(loaded: Mapping[str, Sequence[dict[str, Any]]], folds: int) -> list[dict[str, Any]]:
    """One tagger row per development message with a history: the history as the tagger
    reads it (earlier user turns as their human rewrites, :func:`tagger_view`), and as
    ``stems`` the content stems the human rewrite adds over the message that occur in that
    history (none: the message is complete as typed, a negative). ``fold`` is the
    resolver's fold of the row's conversation."""
    from turnscope.resolver._train import _fold, _history

    rows: list[dict[str, Any]] = []
    for name, items in loaded.items():
        for item in items:
            if not item["prefix"] or not item.get("human_rewrite"):
                continue
            view = [t.text for t in tagger_view(_history(item), True)]
            stems = needed_stems(item, view)
            conv = str(item.get("conversation", item["id"]))
            rows.append({"id": f"{name}:{conv}:{item['id']}", "message": item["follow_up"], "history": view,
                         "targets": [], "stems": sorted(stems), "fold": _fold(conv, folds), "set": name})
    return rows


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


def train_stacked(loaded: Mapping[str, Sequence[dict[str, Any]]], base: Path, shipped_dir: Path,
                  fold_dir: Path, *, folds: int, seed: int, epochs: int = DEV_EPOCHS,
                  console: Any = None) -> StackReport:
    """Fine-tune the tagger saved at ``base`` (fp32 weights of the synthetic run): once per
    fold on the other folds (into ``fold_dir``) and once on everything (into ``shipped_dir``)."""
    import time

    from turnscope.resolver._neural_train import train_neural

    started = time.perf_counter()
    rows = dev_rows(loaded, folds)
    counts = {name: sum(1 for r in rows if r["set"] == name) for name in loaded}
    for k in range(folds):
        train_neural([r for r in rows if r["fold"] != k], fold_dir / f"fold{k}", seed=seed, epochs=epochs,
                     init=base, holdout=0.0, lr=DEV_LR, console=console,
                     description=f"fold tagger {k + 1}/{folds}")
    meta = {"stacked": {"sets": counts, "folds": folds, "epochs": epochs, "lr": DEV_LR,
                        "fold_dir": str(fold_dir)}}
    train_neural(rows, shipped_dir, seed=seed, epochs=epochs, init=base, holdout=0.0, lr=DEV_LR,
                 console=console, description="tagger on every fold", extra_meta=meta)
    # the manifest ties the fold taggers to the tagger they stand in for
    manifest = {"folds": folds, "seed": seed, "sets": counts,
                "shipped_sha256": _digest(shipped_dir / "tagger.int8.onnx")}
    (fold_dir / MANIFEST).write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return StackReport(counts, folds, time.perf_counter() - started, fold_dir, shipped_dir)


def fold_taggers(shipped_dir: Path, folds: int) -> dict[int, NeuralTagger] | None:
    """The fold taggers that stand in for the shipped one while the resolver trains, or None
    when the shipped tagger was not fine-tuned on the development sets (then it never saw
    them and scores them honestly itself)."""
    meta = json.loads((shipped_dir / "tagger.json").read_text(encoding="utf-8"))
    stacked = meta.get("stacked")
    if not stacked:
        return None
    fold_dir = Path(stacked["fold_dir"])
    hint = "run `turnscope train --only neural --stack` (needs the train extra) to rebuild them"
    manifest_path = fold_dir / MANIFEST
    if not manifest_path.exists():
        raise ConfigError(f"the shipped tagger was fine-tuned on the development sets, so the resolver "
                          f"trains on fold taggers, and there are none at {fold_dir}; {hint}")
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    if manifest.get("shipped_sha256") != _digest(shipped_dir / "tagger.int8.onnx"):
        raise ConfigError(f"the fold taggers at {fold_dir} belong to another tagger than the shipped one; {hint}")
    if int(manifest["folds"]) != folds:
        raise ConfigError(f"the fold taggers at {fold_dir} were made for {manifest['folds']} folds, "
                          f"the resolver trains with {folds}; {hint}")
    tok = shipped_dir / "tokenizer.json"
    return {k: NeuralTagger(fold_dir / f"fold{k}" / "tagger.int8.onnx", tok) for k in range(folds)}


def oof_stem_auc(rows: Sequence[dict[str, Any]], tagger_of: Mapping[int, NeuralTagger]) -> dict[str, float]:
    """Per set, the AUC of the tagger's word scores for "the human rewrite adds this history
    stem", each row scored by ``tagger_of[row's fold]`` (fold taggers: out of fold)."""
    from turnscope.resolver._candidates import HistoryTurn
    from turnscope.resolver._train import _auc

    ys: dict[str, list[float]] = {}
    ss: dict[str, list[float]] = {}
    for r in rows:
        hist = [HistoryTurn(i + 1, "user", t) for i, t in enumerate(r["history"])]
        ev = tagger_of[r["fold"]].evidence(r["message"], hist)
        want = set(r["stems"])
        for stem, score in ev.stems.items():
            ys.setdefault(r["set"], []).append(float(stem in want))
            ss.setdefault(r["set"], []).append(score)
    return {k: _auc(np.asarray(ys[k]), np.asarray(ss[k])) for k in ys}
