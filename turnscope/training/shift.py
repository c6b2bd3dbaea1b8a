"""Training the learned topic-shift detector (:mod:`turnscope.resolver._shift`).

``turnscope train --only shift`` runs it (writes the shipped model and prints its figures).

What it does, and why:

1. **Data.** A seeded subsample of TopiOCQA train (``topiocqa_train_part.json``;
   information-seeking, a switch is a change of Wikipedia topic) plus a seeded
   subsample of TIAGE train (chit-chat, annotated shifts). Subsampled because every
   text costs an e5 embedding (~20-40 ms on a shared 2-core machine) and the whole
   run, embedding included, must stay within about five minutes without a cache.
   TopiOCQA *dev* and TIAGE *dev* are never read here: they are what the detector is
   scored on (``benchmarks/topic_shift.py``).
2. **Folds.** Conversations (never turns: turns of one conversation are not
   independent) are dealt, per source, into cross-validation folds.
3. **Two rounds.** One feature, the cosine to the current segment's centroid,
   depends on the detector's own earlier decisions. Round one fits on gold
   segments (teacher forcing); round two replays the round-one model through the
   fitting conversations, so the segment feature is fitted on segments like the
   ones the detector itself opens at run time, and fits again on those features.
4. **Threshold.** The decision threshold is the one that maximises F1 of the shift
   class over the held-out folds, each replayed by the fold model that did not see
   it, as the detector runs (its decisions shape its later segments). The shipped
   booster is fitted on every training conversation and the threshold is written
   into the model file with it.

Everything is seeded (subsample, split, LightGBM with ``deterministic`` and one
thread), so a rerun on the same data writes the same file. Embeddings are cached
under ``$TURNSCOPE_CACHE/shift`` (content-addressed by encoder and texts); the
cache only saves time, the budget is met without it.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console

from turnscope._encoder import Encoder, default_encoder
from turnscope._exceptions import InputError
from turnscope._paths import default_cache_dir
from turnscope.datasets import load_tiage_train, load_topiocqa_train, resolve_data_root
from turnscope.resolver._shift import (
    FEATURE_NAMES,
    SEGMENT_COLUMNS,
    SegmentCentroid,
    ShiftModel,
    ShiftTracker,
    shipped_model_path,
)
from turnscope.training.shift_embed import (
    EmbeddedConversation,
    Scorer,
    embed_conversations,
)

__all__ = [
    "DEFAULT_MAX_CONVERSATIONS",
    "DEFAULT_MAX_DIALOGUES",
    "DEFAULT_SEED",
    "EmbeddedConversation",
    "ShiftTrainReport",
    "best_threshold",
    "embed_conversations",
    "fit_shift_model",
    "replay",
    "train_shift",
]

logger = logging.getLogger(__name__)

#: TopiOCQA train conversations sampled (of 3,209; ~13 turns, two texts per turn)
DEFAULT_MAX_CONVERSATIONS = 140
#: TIAGE train dialogues sampled (of 300; ~16 utterances, one text each)
DEFAULT_MAX_DIALOGUES = 70
DEFAULT_SEED = 13
#: cross-validation folds for choosing the threshold (every conversation held out once)
FOLDS = 3
#: LightGBM settings: small trees and a slow learning rate on a few thousand rows;
#: min_data_in_leaf keeps a leaf from resting on a handful of turns of one conversation
LGB_PARAMS: dict[str, Any] = {
    "objective": "binary",
    "learning_rate": 0.05,
    "num_leaves": 15,
    "min_data_in_leaf": 30,
    "feature_fraction": 0.8,
    "bagging_fraction": 0.8,
    "bagging_freq": 1,
    "lambda_l2": 1.0,
    "num_threads": 1,
    "deterministic": True,
    "force_row_wise": True,
    "verbose": -1,
}
NUM_ROUNDS = 250
#: candidate thresholds for the held-out F1 search: a coarse pass, then a fine pass
#: around the best coarse value (each candidate costs a full replay). With switches on
#: ~30% of turns, F1 beyond 0.75 is far below its peak, so the grid stops there
THRESHOLD_GRID = np.round(np.arange(0.05, 0.751, 0.05), 2)
FINE_STEP = 0.01
# part of every embedding-cache key: bump when what is embedded changes
@dataclass(frozen=True)
class ShiftTrainReport:
    """What a training run did and how the model did on its held-out part."""

    out_path: str
    seed: int
    topiocqa_conversations: int
    tiage_dialogues: int
    fit_turns: int
    fit_switches: int
    threshold: float
    cv_precision: float  # pooled over the folds, each scored by the model that did not see it
    cv_recall: float
    cv_f1: float
    cv_f1_by_source: dict[str, float]
    round1_cv_f1: float
    texts_embedded: int
    cache_hits: int
    embed_seconds: float
    total_seconds: float
    model_bytes: int

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def static_rows(conversations: Sequence[EmbeddedConversation]) -> list[np.ndarray]:
    """Feature rows of turns 2..n of each conversation, with the decision-dependent
    :data:`SEGMENT_COLUMNS` left to :func:`replay` to fill in.

    Every other feature depends only on the turns themselves, so it is computed once
    here and reused by every replay of a threshold search.
    """
    out: list[np.ndarray] = []
    for c in conversations:
        tracker = ShiftTracker()
        rows: list[np.ndarray] = []
        for k, turn in enumerate(c.turns):
            if k > 0:
                rows.append(tracker.features(turn.question, c.questions[k]).as_row())
            tracker.add_user(turn.question, c.questions[k], False)
            if c.has_answer[k]:
                tracker.add_assistant(turn.answer)
        out.append(np.stack(rows) if rows else np.zeros((0, len(FEATURE_NAMES))))
    return out


def replay(
    conversations: Sequence[EmbeddedConversation],
    scorer: Scorer | None,
    threshold: float = 0.5,
    *,
    static: Sequence[np.ndarray] | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Run the detector through conversations as a session would.

    Returns (features, labels, probabilities, conversation index) for every user
    turn after the first. With ``scorer=None`` the segment follows the gold labels
    (teacher forcing) and the probabilities are zeros; otherwise it follows the
    detector's own decisions ``p >= threshold``. Conversations advance in lock-step,
    one turn position at a time, so the model is called once per position for all
    of them rather than once per turn. ``static`` is :func:`static_rows` of the same
    conversations, when the caller replays them more than once.
    """
    rows_of = list(static) if static is not None else static_rows(conversations)
    segments = [SegmentCentroid() for _ in conversations]
    longest = max((len(c.turns) for c in conversations), default=0)
    feats: list[np.ndarray] = []
    labels: list[bool] = []
    probs: list[np.ndarray] = []
    owner: list[int] = []
    seg_cos, seg_turns = SEGMENT_COLUMNS
    for k in range(longest):
        live = [i for i, c in enumerate(conversations) if k < len(c.turns)]
        decisions: dict[int, bool] = {}
        if k > 0:
            rows = np.stack([rows_of[i][k - 1] for i in live])
            for r, i in enumerate(live):
                rows[r, seg_cos] = segments[i].cos(conversations[i].questions[k])
                rows[r, seg_turns] = float(segments[i].count)
            gold = np.asarray([conversations[i].turns[k].is_switch for i in live])
            p = scorer(rows) if scorer is not None else np.zeros(len(live))
            decided = p >= threshold if scorer is not None else gold
            decisions = {i: bool(d) for i, d in zip(live, decided, strict=True)}
            feats.append(rows)
            labels.extend(bool(g) for g in gold)
            probs.append(p)
            owner.extend(live)
        for i in live:
            segments[i].add(conversations[i].questions[k], decisions.get(i, False))
    width = len(FEATURE_NAMES)
    return (np.concatenate(feats) if feats else np.zeros((0, width)),
            np.asarray(labels, dtype=bool),
            np.concatenate(probs) if probs else np.zeros(0),
            np.asarray(owner, dtype=np.int64))


def _prf(pred: np.ndarray, gold: np.ndarray) -> tuple[float, float, float]:
    tp = float(np.sum(pred & gold))
    fp = float(np.sum(pred & ~gold))
    fn = float(np.sum(~pred & gold))
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * tp / (2 * tp + fp + fn) if tp else 0.0
    return precision, recall, f1


def best_threshold(
    conversations: Sequence[EmbeddedConversation],
    scorer: Scorer,
    grid: Iterable[float] = THRESHOLD_GRID,
) -> tuple[float, tuple[float, float, float]]:
    """The threshold with the best replayed F1 on ``conversations``, and its (P, R, F1).

    Each candidate is replayed, not just applied to fixed probabilities: where the
    detector cuts changes the segments it compares later turns with. The coarse
    ``grid`` is refined in steps of :data:`FINE_STEP` around its best value. Ties go
    to the lowest threshold, so the search is deterministic.
    """
    return pooled_best_threshold([(conversations, scorer)], grid)


def pooled_best_threshold(
    parts: Sequence[tuple[Sequence[EmbeddedConversation], Scorer]],
    grid: Iterable[float] = THRESHOLD_GRID,
    *,
    statics: Sequence[Sequence[np.ndarray]] | None = None,
) -> tuple[float, tuple[float, float, float]]:
    """:func:`best_threshold` over several (conversations, scorer) parts, their counts
    pooled: the cross-validation folds, each scored by the model that did not see it.
    ``statics`` (one :func:`static_rows` per part) is for a caller whose rows carry more
    columns than the shipped features (``benchmarks/shift_evidence.py``)."""
    scores: dict[float, tuple[float, float, float]] = {}
    if statics is None:
        statics = [static_rows(convs) for convs, _ in parts]

    def score(t: float) -> None:
        t = round(t, 4)
        if t in scores or not 0.0 < t < 1.0:
            return
        golds, preds = [], []
        for (convs, scorer), static in zip(parts, statics, strict=True):
            _, gold, probs, _ = replay(convs, scorer, t, static=static)
            golds.append(gold)
            preds.append(probs >= t)
        scores[t] = _prf(np.concatenate(preds), np.concatenate(golds))

    def best() -> float:
        return min(scores, key=lambda t: (-scores[t][2], t))

    coarse = sorted(float(t) for t in grid)
    for t in coarse:
        score(t)
    step = min((b - a for a, b in zip(coarse, coarse[1:], strict=False)), default=0.0)
    centre = best()
    for k in range(1, int(round(step / FINE_STEP))):
        score(centre - k * FINE_STEP)
        score(centre + k * FINE_STEP)
    t = best()
    return t, scores[t]


# ------------------------------------------------------------------------ fit


def _booster(rows: np.ndarray, labels: np.ndarray, seed: int, rounds: int,
             overrides: Mapping[str, Any] | None = None) -> Any:
    import lightgbm

    params = dict(LGB_PARAMS, **(overrides or {}))
    params.update(seed=seed, bagging_seed=seed, feature_fraction_seed=seed,
                  data_random_seed=seed)
    data = lightgbm.Dataset(rows, label=labels.astype(np.float64),
                            feature_name=list(FEATURE_NAMES), free_raw_data=True)
    return lightgbm.train(params, data, num_boost_round=rounds)


def _scorer(booster: Any) -> Scorer:
    # a provisional model with a dummy threshold: the scorer must add the cue rule, as
    # the shipped model does
    model = ShiftModel(booster, 0.5, FEATURE_NAMES)
    return model.probabilities


def assign_folds(conversations: Sequence[EmbeddedConversation], seed: int,
                 folds: int = FOLDS) -> list[int]:
    """A fold number per conversation (whole conversations: turns of one conversation
    are not independent), dealt per source so every fold holds both kinds of dialogue."""
    rng = np.random.default_rng(seed)
    out = [0] * len(conversations)
    for source in sorted({c.source for c in conversations}):
        members = [i for i, c in enumerate(conversations) if c.source == source]
        for rank, j in enumerate(rng.permutation(len(members))):
            out[members[int(j)]] = rank % folds
    return out


@dataclass(frozen=True)
class FitResult:
    """The fitted model and its cross-validated figures (what the threshold was chosen on)."""

    model: ShiftModel
    fit_turns: int
    fit_switches: int
    cv_prf: tuple[float, float, float]
    cv_f1_by_source: dict[str, float]
    round1_cv_f1: float


def _source_f1(parts: Sequence[tuple[Sequence[EmbeddedConversation], Scorer]],
               threshold: float) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    by: dict[str, tuple[list[np.ndarray], list[np.ndarray]]] = {}
    for convs, scorer in parts:
        _, gold, probs, owner = replay(convs, scorer, threshold)
        for i, c in enumerate(convs):
            mask = owner == i
            g, p = by.setdefault(c.source, ([], []))
            g.append(gold[mask])
            p.append(probs[mask] >= threshold)
    return {k: (np.concatenate(g), np.concatenate(p)) for k, (g, p) in sorted(by.items())}


def fit_shift_model(
    conversations: Sequence[EmbeddedConversation],
    *,
    seed: int = DEFAULT_SEED,
    rounds: int = NUM_ROUNDS,
    folds: int = FOLDS,
    header: dict[str, Any] | None = None,
    params: Mapping[str, Any] | None = None,
) -> FitResult:
    """Fit the booster in two rounds; choose each round's threshold by cross-validation.

    Every conversation is held out once: the threshold that maximises the pooled F1 of
    the fold models, each replayed on the fold it did not see, is the one shipped. A
    single held-out split of a few dozen conversations made that choice swing by 0.1
    between subsamples; pooling the folds uses every training conversation for it.
    The shipped booster is then fitted on all conversations. ``params`` overrides
    entries of :data:`LGB_PARAMS` (a tiny test set needs smaller leaves); seeds always
    come from ``seed``.
    """
    if len(conversations) < folds:
        raise InputError(f"training needs at least {folds} conversations, got {len(conversations)}")
    fold_of = assign_folds(conversations, seed, folds)
    train = [[c for c, f in zip(conversations, fold_of, strict=True) if f != k]
             for k in range(folds)]
    held = [[c for c, f in zip(conversations, fold_of, strict=True) if f == k]
            for k in range(folds)]
    rows, gold, _, _ = replay(conversations, None)
    if gold.all() or not gold.any():
        raise InputError("training needs both shift and non-shift turns after the first")

    def fit(part: Sequence[EmbeddedConversation], scorer: Scorer | None, t: float) -> Any:
        r, g, _, _ = replay(part, scorer, t)
        return _booster(r, g, seed, rounds, params)

    # round one: segments from the gold labels (teacher forcing)
    b1 = [fit(part, None, 0.5) for part in train]
    t1, prf1 = pooled_best_threshold([(h, _scorer(b)) for h, b in zip(held, b1, strict=True)])
    # round two: segments as the round-one detector opens them at its threshold
    b2 = [fit(part, _scorer(b), t1) for part, b in zip(train, b1, strict=True)]
    t2, prf2 = pooled_best_threshold([(h, _scorer(b)) for h, b in zip(held, b2, strict=True)])
    second = prf2[2] >= prf1[2]
    final1 = fit(conversations, None, 0.5)
    booster = fit(conversations, _scorer(final1), t1) if second else final1
    threshold, prf, cv = (t2, prf2, b2) if second else (t1, prf1, b1)
    per_source = _source_f1([(h, _scorer(b)) for h, b in zip(held, cv, strict=True)], threshold)
    by_source = {k: _prf(p, g)[2] for k, (g, p) in per_source.items()}
    meta = dict(header or {})
    meta.update(seed=seed, rounds=rounds, folds=folds,
                lgb_params=dict(LGB_PARAMS, **(params or {})),
                fit_turns=int(len(gold)), fit_switches=int(gold.sum()),
                cv_precision=round(prf[0], 4), cv_recall=round(prf[1], 4),
                cv_f1=round(prf[2], 4),
                cv_f1_by_source={k: round(v, 4) for k, v in by_source.items()},
                round1_cv_f1=round(prf1[2], 4), selected_round=2 if second else 1)
    model = ShiftModel(booster, threshold, FEATURE_NAMES, meta)
    return FitResult(model, int(len(gold)), int(gold.sum()), prf, by_source, prf1[2])


# ---------------------------------------------------------------------- train


def _sample(items: Sequence[Any], n: int | None, rng: np.random.Generator) -> list[Any]:
    if n is None or n >= len(items):
        return list(items)
    picked = np.sort(rng.choice(len(items), size=n, replace=False))
    return [items[int(i)] for i in picked]


def train_shift(
    data_root: Path | None = None,
    out_path: Path | None = None,
    *,
    seed: int = DEFAULT_SEED,
    max_conversations: int | None = DEFAULT_MAX_CONVERSATIONS,
    max_dialogues: int | None = DEFAULT_MAX_DIALOGUES,
    cache_dir: Path | None = None,
    use_cache: bool = True,
    encoder: Encoder | None = None,
    progress: bool = True,
    console: Console | None = None,
) -> ShiftTrainReport:
    """Train the shift detector on TopiOCQA train + TIAGE train and write the model file.

    ``out_path`` defaults to the shipped model (``turnscope/data/models/shift.txt``);
    ``cache_dir`` to ``$TURNSCOPE_CACHE`` (``use_cache=False`` embeds everything
    afresh, which is what the five-minute budget is measured on).

    >>> report = train_shift(Path("../shared/data"), Path("/tmp/shift.txt"))  # doctest: +SKIP
    >>> round(report.threshold, 2), report.cv_f1 > 0.5                        # doctest: +SKIP
    """
    start = time.perf_counter()
    root = resolve_data_root(data_root)
    out = Path(out_path) if out_path is not None else shipped_model_path()
    enc = encoder or default_encoder()
    cache = (cache_dir or default_cache_dir()) if use_cache else None
    rng = np.random.default_rng(seed)
    topio = _sample(load_topiocqa_train(root), max_conversations, rng)
    tiage = _sample(load_tiage_train(root), max_dialogues, rng)
    t0 = time.perf_counter()
    embedded: list[EmbeddedConversation] = []
    texts = hits = 0
    for name, convs in (("topiocqa-train", topio), ("tiage-train", tiage)):
        got, n_new, n_hit = embed_conversations(convs, name, enc, cache_dir=cache,
                                                progress=progress, console=console)
        embedded += got
        texts += n_new
        hits += n_hit
    embed_seconds = time.perf_counter() - t0
    header = {
        "encoder": enc.name,
        "training_data": {
            "topiocqa-train": {"file": "topiocqa/topiocqa_train_part.json",
                               "conversations": len(topio),
                               "ids": [c[0].conversation for c in topio]},
            "tiage-train": {"file": "tiage/anno_train.json", "dialogues": len(tiage),
                            "ids": [c[0].conversation for c in tiage]},
        },
        "threshold_chosen_on": f"{FOLDS}-fold cross-validation over the training "
                               "conversations (pooled replayed F1 of the held-out folds)",
    }
    result = fit_shift_model(embedded, seed=seed, header=header)
    result.model.save(out)
    total = time.perf_counter() - start
    return ShiftTrainReport(
        out_path=str(out), seed=seed, topiocqa_conversations=len(topio),
        tiage_dialogues=len(tiage), fit_turns=result.fit_turns,
        fit_switches=result.fit_switches, threshold=result.model.threshold,
        cv_precision=result.cv_prf[0], cv_recall=result.cv_prf[1], cv_f1=result.cv_prf[2],
        cv_f1_by_source=result.cv_f1_by_source, round1_cv_f1=result.round1_cv_f1,
        texts_embedded=texts, cache_hits=hits,
        embed_seconds=round(embed_seconds, 2), total_seconds=round(total, 2),
        model_bytes=out.stat().st_size)

