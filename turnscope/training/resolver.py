"""Training the ranker from public conversations with human rewrites.

The label of a (message, candidate) pair comes from the human rewrite, with the
docs/benchmarks.md words: a candidate is *needed* when it holds a word the rewrite
adds over the raw message that occurs earlier in the conversation, and every
content word of it is in the rewrite (a phrase with one wrong word would
contaminate the query, so it is a negative).

Only development sets are read (docs/splits.md): CAsT 2019, CANARD dev and the
even-numbered CAsT 2021 topics. Every candidate row weighs the same, whichever set it comes
from: CANARD, the largest and most varied set, then holds most of the weight. (With each set
weighing the same in total, the session-replay objective below was 0.148 / 0.138 / 0.139 at
seeds 13 / 7 / 21; with equal rows 0.165 / 0.204 / 0.172; measured before round 12.)

Two models are fitted: the ranker over every candidate, then the gate over each message's
shortlist, from the ranker's out-of-fold scores (stacking: the gate learns from scores like
those it will see on new conversations). The gate's threshold and the cap on carried
phrases are chosen on its own out-of-fold predictions (folds by conversation), by the
precision-first objective ``coverage - CONTAMINATION_WEIGHT * contamination`` averaged over
the sets, each set weighing the same, then in session replay (:mod:`.calibration`).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from turnscope._lexicon import check_terms
from turnscope._paths import replace_atomically
from turnscope.datasets import load_canard, load_cast
from turnscope.resolver._candidates import CachedEmbedder, HistoryTurn, NeuralTagger, candidates, default_tagger, key_of
from turnscope.resolver._ranker import (
    DEFAULT_HISTORY_TURNS,
    FEATURES,
    GATE_EXTRA,
    GATE_SEPARATOR,
    carried_count,
    featurize,
    gate_rows,
    realize,
    scope_history,
    shortlist,
    tagger_view,
)
from turnscope.resolver._shift import history_shift_probability
from turnscope.training.calibration import (
    CALIBRATION_SEEDS,
    CONTAMINATION_WEIGHT,
    _best_pair,
    _calibrate,
    _mean_rows,
    fold_of,
)

__all__ = ["DEFAULT_SEED", "TRAINING_SETS", "Example", "TrainReport", "build_examples", "fit",
           "fit_gate", "sweep", "train_resolver"]

DEFAULT_SEED = 13
#: the tagger reads earlier user turns as their rewrites (see ``_ranker.tagger_view``): the
#: session-replay objective on the development sets (fold models, two seeds) was 0.226 with,
#: 0.223 reading the raw turns, against 0.206 for the resolver without the tagger
NN_READS_REWRITES = True
DEFAULT_FOLDS = 5
#: LightGBM settings: small trees, many rounds, row-wise and deterministic so that a
#: seeded run rebuilds the same file. 15 leaves of at least 100 rows: on the development
#: sets' session replay (mean over seeds 13 / 7 / 21) 0.204, against 0.181 for 31 leaves of
#: 40 rows, 0.193 for 15 of 40, 0.179 for 7 of 40, 0.160 for 63 of 20
PARAMS: dict[str, Any] = {
    "objective": "binary", "learning_rate": 0.05, "num_leaves": 15, "min_data_in_leaf": 100,
    "feature_fraction": 0.8, "bagging_fraction": 0.8, "bagging_freq": 1, "lambda_l2": 1.0,
    "deterministic": True, "force_row_wise": True, "num_threads": 2, "verbose": -1,
}
DEFAULT_ROUNDS = 300
THRESHOLDS = tuple(round(0.05 + 0.025 * i, 3) for i in range(37))
MAX_CARRIED = (1, 2, 3)

TRAINING_SETS: dict[str, Callable[[Path | None], list[dict[str, Any]]]] = {
    "cast19": lambda root: load_cast(2019, root),
    # every CANARD dialogue (3,430 questions): only user turns are embedded, so all of it
    # costs about a minute of e5 on a cold cache (it was 200 of 490 dialogues while every
    # sentence of every answer was embedded)
    "canard": load_canard,
    "cast21dev": lambda root: load_cast(2021, root, part="dev"),
}


@dataclass
class Example:
    """One message with its candidates, features and labels."""

    set: str
    conversation: str
    message: str
    required: list[Any]
    forbidden: list[str]
    cand_texts: list[str]
    cand_keys: list[frozenset[str]]
    x: np.ndarray
    y: np.ndarray


@dataclass
class TrainReport:
    seed: int
    examples: int
    rows: int
    positives: int
    threshold: float
    max_carried: int
    #: the threshold for messages with a pronoun slot (``threshold``: every other message)
    slot_threshold: float
    seconds: float
    embed_misses: int
    auc: dict[str, float] = field(default_factory=dict)
    sweep: list[dict[str, Any]] = field(default_factory=list)
    calibration: list[dict[str, Any]] = field(default_factory=list)


def _history(item: dict[str, Any]) -> list[HistoryTurn]:
    """The item's earlier turns; user turns carry their human rewrite when the set has them
    (the resolver in a session reads its own earlier rewrites there)."""
    rewrites = list(item.get("prefix_rewrites") or [])
    users = [k for k, t in enumerate(item["prefix"]) if t["role"] == "user"]
    # the opening turn of a CANARD dialogue has no rewrite: align from the end
    by_turn = dict(zip(users[len(users) - len(rewrites):], rewrites, strict=True)) if rewrites else {}
    return [HistoryTurn(k + 1, t["role"], t["content"], by_turn.get(k)) for k, t in enumerate(item["prefix"])]


def labels_for(item: dict[str, Any], keys: Sequence[frozenset[str]]) -> np.ndarray:
    human = key_of(item["human_rewrite"])
    raw = key_of(item["follow_up"])
    earlier = set().union(*(key_of(t["content"]) for t in item["prefix"])) if item["prefix"] else set()
    required = (human - raw) & earlier
    allowed = human | raw
    return np.array([float(bool(k & required) and k <= allowed) for k in keys], dtype=np.float32)


def build_examples(items: Sequence[dict[str, Any]], set_name: str, embedder: CachedEmbedder,
                   progress: Callable[[int], None] | None = None,
                   tagger: NeuralTagger | None = None, nn_rewrites: bool = False) -> list[Example]:
    """One :class:`Example` per item with a history, its rows the columns of :data:`FEATURES`;
    ``tagger`` (None: no tagger) gives the neural columns."""
    out: list[Example] = []
    for item in items:
        if progress is not None:
            progress(1)
        if not item["prefix"]:
            continue
        hist = scope_history(_history(item), DEFAULT_HISTORY_TURNS)
        cands = candidates(hist)
        msg_key = key_of(item["follow_up"])
        cands = [c for c in cands if not c.key <= msg_key]
        full = _history(item)
        shift = history_shift_probability(full, item["follow_up"], encoder=embedder) \
            if any(t.role == "user" for t in full) else 0.0
        # the tagger never saw these sets (it learns from TopiOCQA train only), so its scores
        # here are as honest as on a user's conversation
        conv = str(item.get("conversation", item["id"]))
        ev = tagger.evidence(item["follow_up"], tagger_view(full, nn_rewrites)) if tagger is not None else None
        x = featurize(item["follow_up"], hist, cands, embedder.query, shift, ev)
        keys = [c.key for c in cands]
        out.append(Example(set_name, conv, item["follow_up"],
                           item["required_in_rewrite"], item["forbidden_in_rewrite"],
                           [c.text for c in cands], keys, x, labels_for(item, keys)))
    return out


def fit(examples: Sequence[Example], seed: int, rounds: int = DEFAULT_ROUNDS,
        params: dict[str, Any] | None = None) -> Any:
    """The ranker: every candidate of every message (its columns named :data:`FEATURES`)."""
    return _fit([e.x for e in examples], [e.y for e in examples], list(FEATURES), seed, rounds, params)


def _fit(xs: Sequence[np.ndarray], ys: Sequence[np.ndarray], names: list[str],
         seed: int, rounds: int, params: dict[str, Any] | None = None) -> Any:
    """One LightGBM model at ``seed``."""
    import lightgbm as lgb

    data = lgb.Dataset(np.concatenate(xs), np.concatenate(ys), feature_name=names, free_raw_data=True)
    return lgb.train({**PARAMS, **(params or {}), "seed": seed}, data, num_boost_round=rounds)


@dataclass
class _GateData:
    short: list[list[int]]
    x: list[np.ndarray]
    y: list[np.ndarray]


def _gate_data(examples: Sequence[Example], scores: Sequence[np.ndarray]) -> _GateData:
    """The gate's rows of each message: its shortlist by ``scores``."""
    g = _GateData([], [], [])
    for e, s in zip(examples, scores, strict=True):
        short = shortlist(e.cand_keys, s) if len(e.y) else []
        g.short.append(short)
        g.x.append(gate_rows(e.x, s, short) if short else np.zeros((0, e.x.shape[1] + len(GATE_EXTRA))))
        g.y.append(e.y[short] if short else np.zeros(0, dtype=np.float32))
    return g


def fit_gate(g: _GateData, idx: Sequence[int], seed: int, rounds: int,
             params: dict[str, Any] | None = None) -> Any:
    """The gate: the shortlisted candidates of the messages ``idx``, with out-of-fold ranker scores."""
    idx = [j for j in idx if len(g.y[j])]
    return _fit([g.x[j] for j in idx], [g.y[j] for j in idx], [*FEATURES, *GATE_EXTRA], seed, rounds, params)


def sweep(examples: Sequence[Example], g: _GateData, gate: Sequence[np.ndarray]) -> list[dict[str, Any]]:
    """Coverage / contamination per set for every gate threshold and cap."""
    rows: list[dict[str, Any]] = []
    for cap in MAX_CARRIED:
        for t in THRESHOLDS:
            per: dict[str, list[tuple[bool, bool]]] = {}
            for e, short, p in zip(examples, g.short, gate, strict=True):
                n = carried_count(p, t, cap) if short else 0
                q, _ = realize(e.message, [e.cand_texts[i] for i in short[:n]])
                c = check_terms(q, e.required, e.forbidden)
                per.setdefault(e.set, []).append((c.covered, c.contaminated))
            figs = {k: (float(np.mean([a for a, _ in v])), float(np.mean([b for _, b in v])))
                    for k, v in per.items()}
            objective = float(np.mean([cov - CONTAMINATION_WEIGHT * con for cov, con in figs.values()]))
            rows.append({"threshold": t, "max_carried": cap, "objective": objective,
                         "sets": {k: {"coverage": a, "contamination": b} for k, (a, b) in figs.items()}})
    return rows


@dataclass
class _Folded:
    """Models fitted with one fold held out, and their out-of-fold predictions."""

    rankers: dict[int, Any]
    gates: dict[int, Any]
    oof: list[np.ndarray]
    g: _GateData
    gate_oof: list[np.ndarray]


def _fit_folds(examples: Sequence[Example], folds: int, seed: int, rounds: int,
               params: dict[str, Any] | None = None) -> _Folded:
    fold_of_example = [fold_of(e.conversation, folds) for e in examples]
    oof: list[np.ndarray] = [np.zeros(len(e.y)) for e in examples]
    rankers: dict[int, Any] = {}
    gates: dict[int, Any] = {}
    for k in range(folds):
        train_part = [e for e, f in zip(examples, fold_of_example, strict=True) if f != k and len(e.y)]
        if not train_part or not any(e.y.any() for e in train_part):
            continue
        model = rankers[k] = fit(train_part, seed, rounds, params)
        for j, (e, f) in enumerate(zip(examples, fold_of_example, strict=True)):
            if f == k and len(e.y):
                oof[j] = np.asarray(model.predict(e.x), dtype=np.float64)
    # the gate learns from out-of-fold ranker scores: the scores it will see on new data
    g = _gate_data(examples, oof)
    gate_oof: list[np.ndarray] = [np.zeros(len(y)) for y in g.y]
    for k in range(folds):
        train_idx = [j for j, f in enumerate(fold_of_example) if f != k and len(g.y[j])]
        if not train_idx or not any(g.y[j].any() for j in train_idx):
            continue
        gm = gates[k] = fit_gate(g, train_idx, seed, rounds, params)
        for j, f in enumerate(fold_of_example):
            if f == k and len(g.y[j]):
                gate_oof[j] = np.asarray(gm.predict(g.x[j]), dtype=np.float64)
    return _Folded(rankers, gates, oof, g, gate_oof)


def _auc(y: np.ndarray, s: np.ndarray) -> float:
    pos, neg = s[y > 0.5], s[y <= 0.5]
    if not len(pos) or not len(neg):
        return float("nan")
    order = np.argsort(np.concatenate([pos, neg]), kind="stable")
    ranks = np.empty(len(order))
    ranks[order] = np.arange(1, len(order) + 1)
    return float((ranks[: len(pos)].sum() - len(pos) * (len(pos) + 1) / 2) / (len(pos) * len(neg)))


def train_resolver(data_root: Path | None, out: Path, *, seed: int = DEFAULT_SEED,
                   folds: int = DEFAULT_FOLDS, sets: Sequence[str] = tuple(TRAINING_SETS),
                   limit: int | None = None, cache: Path | None = None,
                   items: dict[str, list[dict[str, Any]]] | None = None,
                   rounds: int = DEFAULT_ROUNDS, console: Any = None,
                   calibrate: bool = True, params: dict[str, Any] | None = None,
                   nn_rewrites: bool = NN_READS_REWRITES) -> TrainReport:
    """Build the examples, choose the threshold out of fold, fit on everything, write ``out``.

    ``items`` replaces the public sets (a test trains on a fixture); ``limit`` keeps the
    first N items of each set (quick runs); ``cache`` is the on-disk embedding cache;
    ``params`` override :data:`PARAMS` (a fixture of a few hundred rows needs smaller
    leaves than the public sets).
    """
    from rich.progress import Progress

    started = time.perf_counter()
    embedder = CachedEmbedder(disk=cache)
    tagger = default_tagger()
    loaded = items if items is not None else {name: TRAINING_SETS[name](data_root) for name in sets}
    if limit:
        loaded = {k: v[:limit] for k, v in loaded.items()}
    examples: list[Example] = []
    with Progress(console=console, transient=False) as progress:
        for name, its in loaded.items():
            task = progress.add_task(f"features {name}", total=len(its))
            def advance(k: int, task: Any = task) -> None:
                progress.advance(task, k)

            examples.extend(build_examples(its, name, embedder, advance, tagger, nn_rewrites))
            embedder.save()
    examples = [e for e in examples if len(e.y)] + [e for e in examples if not len(e.y)]
    folded = _fit_folds(examples, folds, seed, rounds, params)
    trainable = [e for e in examples if len(e.y)]
    rankers, gates, oof, g, gate_oof = folded.rankers, folded.gates, folded.oof, folded.g, folded.gate_oof
    grid = sweep(examples, g, gate_oof)
    best = max(grid, key=lambda r: (r["objective"], -r["max_carried"], r["threshold"]))
    auc = {}
    for name in loaded:
        ys = [e.y for e in examples if e.set == name and len(e.y)]
        ss = [s for e, s in zip(examples, oof, strict=True) if e.set == name and len(e.y)]
        if ys:
            auc[name] = _auc(np.concatenate(ys), np.concatenate(ss))
    calibration: list[dict[str, Any]] = []
    threshold = slot_threshold = float(best["threshold"])
    if calibrate and rankers and gates:
        # the replay of one seed's fold models decides pairs a few thousandths apart, less
        # than what another seed moves them: each pair is judged by the mean over seeds
        runs = [_calibrate(loaded, rankers, gates, folds, best["max_carried"], embedder, console, nn_rewrites)]
        for extra in range(1, CALIBRATION_SEEDS):
            more = _fit_folds(examples, folds, seed + extra, rounds, params)
            if more.rankers and more.gates:
                runs.append(_calibrate(loaded, more.rankers, more.gates, folds, best["max_carried"],
                                       embedder, console, nn_rewrites))
        calibration = _mean_rows(runs)
        slot_threshold, threshold = _best_pair(calibration)
    model = fit(trainable, seed, rounds, params)
    gate_model = fit_gate(g, range(len(examples)), seed, rounds, params)
    meta = {"format": "turnscope-resolver/2", "features": list(FEATURES), "gate_extra": list(GATE_EXTRA),
            "nn_reads_rewrites": nn_rewrites,
            "seed": seed,
            "threshold": threshold, "slot_threshold": slot_threshold, "max_carried": best["max_carried"],
            "oof_threshold": best["threshold"], "calibration": calibration,
            "trained_on": {k: len(v) for k, v in loaded.items()},
            "objective": f"coverage - {CONTAMINATION_WEIGHT} * contamination, mean over sets, out of fold",
            "oof": best["sets"], "auc_oof": auc, "params": {**PARAMS, **(params or {})}, "rounds": rounds}
    text = (json.dumps(meta, sort_keys=True) + "\n" + model.model_to_string() + GATE_SEPARATOR
            + gate_model.model_to_string())
    replace_atomically(out, lambda tmp: tmp.write_text(text, encoding="utf-8"))
    return TrainReport(seed=seed, examples=len(examples), rows=int(sum(len(e.y) for e in examples)),
                       positives=int(sum(e.y.sum() for e in examples)), threshold=threshold,
                       slot_threshold=slot_threshold,
                       max_carried=best["max_carried"], seconds=time.perf_counter() - started,
                       embed_misses=embedder.misses, auc=auc, sweep=grid, calibration=calibration)
