"""Training the ranker from public conversations with human rewrites.

The label of a (message, candidate) pair comes from the human rewrite, with the
SPEC section 7 words: a candidate is *needed* when it holds a word the rewrite
adds over the raw message that occurs earlier in the conversation, and every
content word of it is in the rewrite (a phrase with one wrong word would
contaminate the query, so it is a negative).

Only development sets are read (docs/splits.md): CAsT 2019, CANARD dev and the
even-numbered CAsT 2021 topics. Every candidate row of the *ranker* weighs the same,
whichever set it comes from: CANARD, the largest and most varied set, then holds most of the
weight. (With each set weighing the same in total, the session-replay objective below was
0.148 / 0.138 / 0.139 at seeds 13 / 7 / 21; with equal rows 0.165 / 0.204 / 0.172; measured
before round 12.) The *gate* can weigh a set's messages more (:data:`GATE_SET_WEIGHTS`; measured in round 14,
not shipped).
Two models are fitted: the ranker over every
candidate, then the gate over each message's shortlist, from the ranker's
out-of-fold scores (stacking: the gate learns from scores like those it will see
on new conversations). The gate's threshold and the cap on carried phrases are
chosen on its own out-of-fold predictions (folds by conversation), by the
precision-first objective ``coverage - CONTAMINATION_WEIGHT * contamination``
averaged over the sets, each set weighing the same.

With ``own_histories`` (measured, not shipped: :data:`OWN_HISTORIES`) both models also learn
from every development conversation *as the resolver itself rewrote it*
(:func:`own_history_items`): in a session the features that read earlier
rewrites ("the previous query carried this phrase") see the resolver's own, sometimes
incomplete, rewrites, not a human's; trained on human ones only, the gate learned to trust
a signal it rarely gets (exposure bias). Each conversation is replayed by the fold models
that never saw it; the labels stay the human rewrite's.
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np

from turnscope._matching import check_terms
from turnscope.datasets import load_canard, load_cast
from turnscope.resolver._calibration import (
    CALIBRATION_SEEDS,
    CONTAMINATION_WEIGHT,
    _best_pair,
    _calibrate,
    _mean_rows,
)
from turnscope.resolver._candidates import HistoryTurn, candidates, key_of
from turnscope.resolver._embedcache import CachedEmbedder
from turnscope.resolver._features import BASE_FEATURES, FEATURES, featurize
from turnscope.resolver._neural import NeuralTagger, default_tagger
from turnscope.resolver._ranker import (
    DEFAULT_HISTORY_TURNS,
    GATE_EXTRA,
    GATE_SEPARATOR,
    Bag,
    Shadow,
    carried_count,
    gate_rows,
    scope_history,
    shortlist,
    tagger_view,
)
from turnscope.resolver._realize import realize
from turnscope.resolver._replay import fold_of, replayed, session_items
from turnscope.resolver._shift import history_shift_probability

__all__ = ["DEFAULT_SEED", "TRAINING_SETS", "Example", "TrainReport", "build_examples", "fit",
           "fit_gate", "sweep", "train_resolver"]

DEFAULT_SEED = 13
#: which training examples read the session's latent subject (:data:`LATENT_STATE`)
LatentMode = Literal["none", "all", "own"]
#: the tagger reads earlier user turns as their rewrites (see ``_ranker.tagger_view``): the
#: session-replay objective on the development sets (fold models, two seeds) was 0.226 with,
#: 0.223 reading the raw turns, against 0.206 for the resolver without the tagger
NN_READS_REWRITES = True
DEFAULT_FOLDS = 5
#: how much each message of a set weighs in the *gate's* loss (a set not named: 1). None
#: named: every message weighs the same. Measured in round 14 (docs/neural.md) and not
#: shipped: CAsT messages weighing W times a CANARD one (CANARD is 87% of the gate's rows, so
#: the probabilities it gives are CANARD's). On the development replay
#: (``benchmarks/gate_weights.py``, mean objective of seeds 13 / 14 at the best pair) W = 1
#: 0.2264, 2 0.2255, 3 0.2419, 4 0.2316, 5 0.2363, 8 0.2317 (W = 3 against 1 at (0.8, 0.85)
#: over seeds 13-16: 0.2379 against 0.2242); on CAsT 2020 (check) W = 3 kept the coverage
#: (0.414) and raised the contamination 0.058 -> 0.079, the frontier within 0.01 of W = 1
GATE_SET_WEIGHTS: Mapping[str, float] = {}
#: add the examples whose earlier user turns read as the fold models' own rewrites (see the
#: module docstring). Off: on the development replay (fold models, seeds 13 and 14) it moved
#: the operating point more than the frontier (docs/neural.md, round 14): at the chosen pair
#: (0.8, 0.85) objective 0.2333 against 0.2264, CANARD 0.321 / 0.051 against 0.272 / 0.034
OWN_HISTORIES = False
#: the session's latent subject as features (``_features.LATENT_FEATURES``, round 16): what
#: the resolver shortlisted at earlier turns, with the gate's probabilities, carried or not.
#: Trained in two stages: today's fold models replay every development conversation and
#: leave their latent subjects on each turn; the models refitted on those read them. ``"all"``:
#: every example reads them; ``"own"``: only the own-history examples (``own_histories``),
#: whose earlier turns are that same replay's rewrites, the human-rewrite examples reading
#: them as missing; ``"none"``: the shipped models, which read no such column
LATENT_STATE: LatentMode = "none"
#: how many times the models are refitted on the state the models before them left: the
#: first refit reads the state of models that read none, while in a session a model reads
#: the state it left itself; each further stage replays with the latest models
LATENT_STAGES = 1
#: later turns read a turn the resolver left unchanged as if its best phrase had been carried
#: when the gate gave it at least a floor (``_ranker.Shadow``; round 16, measured, not
#: shipped: None, every turn read as the user's query)
SHADOW: Shadow | None = None
#: the (slot, other) thresholds of the replay that writes those rewrites: the pair the
#: calibration chose for the resolver trained on human rewrites only (round 12)
OWN_HISTORY_PAIR = (0.8, 0.85)
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
#: how many models (seeds ``seed + 1000 * i``) each ranker and gate averages (``_ranker.Bag``);
#: 1: one model, as shipped
BAG = 1
#: the seed step between a bag's members (far from the calibration's ``seed + 1``)
BAG_SEED_STEP = 1000
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


#: a conversation's fold (kept under this name: :mod:`._neural_dev` and the tests use it)
_fold = fold_of


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
    #: whose rewrites the earlier user turns read as: ``human`` or ``own`` (the fold models')
    history: str = "human"


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
    #: examples whose earlier turns read as the fold models' own rewrites (0: none)
    own_examples: int = 0
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
    # the latent subjects a session replay left (``_replay.session_items``), aligned alike
    latents = list(item.get("prefix_latent") or [])
    by_latent = dict(zip(users[len(users) - len(latents):], latents, strict=True)) if latents else {}
    return [HistoryTurn(k + 1, t["role"], t["content"], by_turn.get(k), _latent(by_latent.get(k)))
            for k, t in enumerate(item["prefix"])]


def _latent(entries: Sequence[Sequence[Any]] | None) -> tuple[tuple[str, float], ...] | None:
    return None if entries is None else tuple((str(text), float(p)) for text, p in entries)


def labels_for(item: dict[str, Any], keys: Sequence[frozenset[str]]) -> np.ndarray:
    human = key_of(item["human_rewrite"])
    raw = key_of(item["follow_up"])
    earlier = set().union(*(key_of(t["content"]) for t in item["prefix"])) if item["prefix"] else set()
    required = (human - raw) & earlier
    allowed = human | raw
    return np.array([float(bool(k & required) and k <= allowed) for k in keys], dtype=np.float32)


def build_examples(items: Sequence[dict[str, Any]], set_name: str, embedder: CachedEmbedder,
                   progress: Callable[[int], None] | None = None,
                   tagger: NeuralTagger | None = None, nn_rewrites: bool = False,
                   fold_taggers: Mapping[int, NeuralTagger] | None = None, folds: int = 0,
                   history: str = "human", features: Sequence[str] = BASE_FEATURES) -> list[Example]:
    """One :class:`Example` per item with a history. ``fold_taggers`` (with ``folds``) score
    each item by the tagger of its conversation's fold instead of ``tagger``; ``history``
    names whose rewrites the items' ``prefix_rewrites`` are; ``features`` are the columns kept."""
    columns = np.asarray([FEATURES.index(f) for f in features], dtype=np.intp)
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
        # the tagger's scores must be as honest here as on a user's conversation: a tagger
        # fine-tuned on these sets is replaced by the fold tagger that never saw this item
        conv = str(item.get("conversation", item["id"]))
        use = fold_taggers[_fold(conv, folds)] if fold_taggers is not None else tagger
        ev = use.evidence(item["follow_up"], tagger_view(full, nn_rewrites)) if use is not None else None
        x = featurize(item["follow_up"], hist, cands, embedder.query, shift, ev)[:, columns]
        keys = [c.key for c in cands]
        out.append(Example(set_name, conv, item["follow_up"],
                           item["required_in_rewrite"], item["forbidden_in_rewrite"],
                           [c.text for c in cands], keys, x, labels_for(item, keys), history))
    return out


def fit(examples: Sequence[Example], seed: int, rounds: int = DEFAULT_ROUNDS,
        params: dict[str, Any] | None = None, features: Sequence[str] = BASE_FEATURES, bag: int = 1) -> Any:
    """The ranker: every candidate of every message (its columns named ``features``); a
    :class:`Bag` of ``bag`` seeds where ``bag`` > 1."""
    return _fit([e.x for e in examples], [e.y for e in examples], list(features), seed, rounds, params, bag=bag)


def _fit(xs: Sequence[np.ndarray], ys: Sequence[np.ndarray], names: list[str],
         seed: int, rounds: int, params: dict[str, Any] | None = None,
         weights: Sequence[np.ndarray] | None = None, bag: int = 1) -> Any:
    """One LightGBM model at ``seed``; with ``bag`` > 1 a :class:`Bag` of models at seeds
    ``seed + BAG_SEED_STEP * i`` (the first of them the single model's)."""
    import lightgbm as lgb

    if bag < 1:
        raise ValueError(f"bag must be at least 1, got {bag}")
    members = []
    for i in range(bag):
        # a Dataset frees its rows once built: each member builds its own
        data = lgb.Dataset(np.concatenate(xs), np.concatenate(ys), feature_name=names, free_raw_data=True,
                           weight=np.concatenate(weights) if weights is not None else None)
        members.append(lgb.train({**PARAMS, **(params or {}), "seed": seed + BAG_SEED_STEP * i}, data,
                                 num_boost_round=rounds))
    return members[0] if bag == 1 else Bag(tuple(members))


@dataclass
class _GateData:
    short: list[list[int]]
    x: list[np.ndarray]
    y: list[np.ndarray]
    #: the weight of each message's rows in the gate's loss (:data:`GATE_SET_WEIGHTS`)
    w: list[float] = field(default_factory=list)

    def subset(self, idx: Sequence[int]) -> _GateData:
        return _GateData([self.short[j] for j in idx], [self.x[j] for j in idx], [self.y[j] for j in idx],
                         [self.w[j] for j in idx])


def _gate_data(examples: Sequence[Example], scores: Sequence[np.ndarray],
               weights: Mapping[str, float] | None = None) -> _GateData:
    """The gate's rows of each message; ``weights`` by set (default :data:`GATE_SET_WEIGHTS`,
    1 for a set it does not name)."""
    weights = GATE_SET_WEIGHTS if weights is None else weights
    g = _GateData([], [], [])
    for e, s in zip(examples, scores, strict=True):
        g.w.append(float(weights.get(e.set, 1.0)))
        short = shortlist(e.cand_keys, s) if len(e.y) else []
        g.short.append(short)
        g.x.append(gate_rows(e.x, s, short) if short else np.zeros((0, e.x.shape[1] + len(GATE_EXTRA))))
        g.y.append(e.y[short] if short else np.zeros(0, dtype=np.float32))
    return g


def fit_gate(g: _GateData, idx: Sequence[int], seed: int, rounds: int,
             params: dict[str, Any] | None = None, features: Sequence[str] = BASE_FEATURES, bag: int = 1) -> Any:
    """The gate: the shortlisted candidates of the messages ``idx``, with out-of-fold ranker scores."""
    idx = [j for j in idx if len(g.y[j])]
    # no weights at all where every message weighs 1: the shipped gate is rebuilt as it was
    weights = None if all(g.w[j] == 1.0 for j in idx) else \
        [np.full(len(g.y[j]), g.w[j], dtype=np.float64) for j in idx]
    return _fit([g.x[j] for j in idx], [g.y[j] for j in idx], [*features, *GATE_EXTRA], seed, rounds,
                params, weights, bag)


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
               params: dict[str, Any] | None = None, gate_weights: Mapping[str, float] | None = None,
               features: Sequence[str] = BASE_FEATURES, bag: int = 1) -> _Folded:
    fold_of = [_fold(e.conversation, folds) for e in examples]
    oof: list[np.ndarray] = [np.zeros(len(e.y)) for e in examples]
    rankers: dict[int, Any] = {}
    gates: dict[int, Any] = {}
    for k in range(folds):
        train_part = [e for e, f in zip(examples, fold_of, strict=True) if f != k and len(e.y)]
        if not train_part or not any(e.y.any() for e in train_part):
            continue
        model = rankers[k] = fit(train_part, seed, rounds, params, features, bag)
        for j, (e, f) in enumerate(zip(examples, fold_of, strict=True)):
            if f == k and len(e.y):
                oof[j] = np.asarray(model.predict(e.x), dtype=np.float64)
    # the gate learns from out-of-fold ranker scores: the scores it will see on new data
    g = _gate_data(examples, oof, gate_weights)
    gate_oof: list[np.ndarray] = [np.zeros(len(y)) for y in g.y]
    for k in range(folds):
        train_idx = [j for j, f in enumerate(fold_of) if f != k and len(g.y[j])]
        if not train_idx or not any(g.y[j].any() for j in train_idx):
            continue
        gm = gates[k] = fit_gate(g, train_idx, seed, rounds, params, features, bag)
        for j, f in enumerate(fold_of):
            if f == k and len(g.y[j]):
                gate_oof[j] = np.asarray(gm.predict(g.x[j]), dtype=np.float64)
    return _Folded(rankers, gates, oof, g, gate_oof)



def _columns(examples: Sequence[Example], have: Sequence[str], keep: Sequence[str]) -> list[Example]:
    """``examples`` (columns ``have``) with only the columns ``keep``."""
    if list(have) == list(keep):
        return list(examples)
    idx = np.asarray([list(have).index(f) for f in keep], dtype=np.intp)
    return [dataclasses.replace(e, x=e.x[:, idx]) for e in examples]


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
                   nn_rewrites: bool = NN_READS_REWRITES,
                   fold_taggers: Mapping[int, NeuralTagger] | None = None,
                   own_histories: bool = OWN_HISTORIES,
                   gate_weights: Mapping[str, float] | None = None,
                   latent: LatentMode = LATENT_STATE, latent_stages: int = LATENT_STAGES,
                   shadow: Shadow | None = SHADOW, bag: int = BAG) -> TrainReport:
    """Build the examples, choose the threshold out of fold, fit on everything, write ``out``.

    ``items`` replaces the public sets (a test trains on a fixture); ``limit`` keeps the
    first N items of each set (quick runs); ``cache`` is the on-disk embedding cache;
    ``params`` override :data:`PARAMS` (a fixture of a few hundred rows needs smaller
    leaves than the public sets); ``fold_taggers`` (one per fold, :mod:`._neural_dev`) stand
    in for the shipped tagger when that one was fine-tuned on these sets; ``own_histories``
    adds :func:`own_history_items`' examples (module docstring); ``gate_weights`` replace
    :data:`GATE_SET_WEIGHTS`; ``latent`` adds the session's latent subject to the features
    (:data:`LATENT_STATE`), refitted ``latent_stages`` times (:data:`LATENT_STAGES`);
    ``shadow`` makes later turns read shadow rewrites (:data:`SHADOW`); ``bag`` averages that
    many seeds in every ranker and gate (:data:`BAG`).
    """
    if bag < 1:
        raise ValueError(f"bag must be at least 1, got {bag}")
    if latent not in ("none", "all", "own"):
        raise ValueError(f"latent must be 'none', 'all' or 'own', got {latent!r}")
    if latent_stages < 1:
        raise ValueError(f"latent_stages must be at least 1, got {latent_stages}")
    if shadow is not None and not own_histories:
        raise ValueError("shadow rewrites need own_histories (the gate learns to read them from them)")
    if latent == "own" and not own_histories:
        raise ValueError("latent='own' gives the latent subject to the own-history examples: "
                         "it needs own_histories")
    features = BASE_FEATURES if latent == "none" else FEATURES
    gate_weights = dict(GATE_SET_WEIGHTS if gate_weights is None else gate_weights)
    from rich.progress import Progress

    started = time.perf_counter()
    embedder = CachedEmbedder(disk=cache)
    tagger = None if fold_taggers is not None else default_tagger()
    loaded = items if items is not None else {name: TRAINING_SETS[name](data_root) for name in sets}
    if limit:
        loaded = {k: v[:limit] for k, v in loaded.items()}
    examples: list[Example] = []
    with Progress(console=console, transient=False) as progress:
        for name, its in loaded.items():
            task = progress.add_task(f"features {name}", total=len(its))
            def advance(k: int, task: Any = task) -> None:
                progress.advance(task, k)

            examples.extend(build_examples(its, name, embedder, advance, tagger, nn_rewrites,
                                           fold_taggers, folds, features=features))
            embedder.save()
    examples = [e for e in examples if len(e.y)] + [e for e in examples if not len(e.y)]
    # stage 1 is the shipped configuration: the columns of a model without the session state
    folded = _fit_folds(_columns(examples, features, BASE_FEATURES), folds, seed, rounds, params, gate_weights,
                        bag=bag)
    own_examples: list[Example] = []
    latent_cap: int | None = None
    human = examples
    stages = latent_stages if latent != "none" else 1
    for stage in range(stages if (own_histories or latent != "none") and folded.rankers and folded.gates else 0):
        # the models of the stage before (stage 1: without the session's own evidence) replay
        # every conversation; the models refitted on what the sessions left read it
        at = [j for j, e in enumerate(examples) if e.history == "human"]
        first = sweep([examples[j] for j in at], folded.g.subset(at), [folded.gate_oof[j] for j in at])
        cap = max(first, key=lambda r: (r["objective"], -r["max_carried"], r["threshold"]))["max_carried"]
        with Progress(console=console, transient=False) as progress:
            task = progress.add_task(f"replaying with the fold models (stage {stage + 1} of {stages})",
                                     total=sum(len(v) for v in loaded.values()))
            def advance(k: int, task: Any = task) -> None:
                progress.advance(task, k)

            replays = replayed(loaded, folded.rankers, folded.gates, folds, cap, embedder, nn_rewrites,
                               OWN_HISTORY_PAIR, fold_taggers, advance=advance)
        latent_cap = cap if latent != "none" else None
        if latent == "all":
            # every example again, its earlier turns holding the latent subjects the session
            # left for them (the human rewrites stay)
            human = [e for name, run in replays.items()
                     for e in build_examples(session_items(run, own=False, latent=True), name, embedder, None,
                                             tagger, nn_rewrites, fold_taggers, folds, features=features)]
        own_examples = [e for name, run in replays.items() if own_histories
                        for e in build_examples(session_items(run, own=True, latent=latent != "none",
                                                              shadow=shadow), name,
                                                embedder, None, tagger, nn_rewrites, fold_taggers, folds,
                                                history="own", features=features) if len(e.y)]
        embedder.save()
        examples = [e for e in human if len(e.y)] + own_examples + [e for e in human if not len(e.y)]
        folded = _fit_folds(examples, folds, seed, rounds, params, gate_weights, features, bag)
    trainable = [e for e in examples if len(e.y)]
    rankers, gates, oof, g, gate_oof = folded.rankers, folded.gates, folded.oof, folded.g, folded.gate_oof
    # the out-of-fold figures (the sweep's cap, the AUC) are read on the human-history examples,
    # the ones earlier rounds were measured on
    keep = [j for j, e in enumerate(examples) if e.history == "human"]
    grid = sweep([examples[j] for j in keep], g.subset(keep), [gate_oof[j] for j in keep])
    best = max(grid, key=lambda r: (r["objective"], -r["max_carried"], r["threshold"]))
    auc = {}
    for name in loaded:
        ys = [examples[j].y for j in keep if examples[j].set == name and len(examples[j].y)]
        ss = [oof[j] for j in keep if examples[j].set == name and len(examples[j].y)]
        if ys:
            auc[name] = _auc(np.concatenate(ys), np.concatenate(ss))
    calibration: list[dict[str, Any]] = []
    threshold = slot_threshold = float(best["threshold"])
    if calibrate and rankers and gates:
        # the replay of one seed's fold models decides pairs a few thousandths apart, less
        # than what another seed moves them: each pair is judged by the mean over seeds
        runs = [_calibrate(loaded, rankers, gates, folds, best["max_carried"], embedder, console, nn_rewrites,
                           fold_taggers, shadow=shadow)]
        for extra in range(1, CALIBRATION_SEEDS):
            more = _fit_folds(examples, folds, seed + extra, rounds, params, gate_weights, features, bag)
            if more.rankers and more.gates:
                runs.append(_calibrate(loaded, more.rankers, more.gates, folds, best["max_carried"],
                                       embedder, console, nn_rewrites, fold_taggers, shadow=shadow))
        calibration = _mean_rows(runs)
        slot_threshold, threshold = _best_pair(calibration)
    model = fit(trainable, seed, rounds, params, features, bag)
    gate_model = fit_gate(g, range(len(examples)), seed, rounds, params, features, bag)
    meta = {"format": "turnscope-resolver/2", "features": list(features), "gate_extra": list(GATE_EXTRA),
            "nn_reads_rewrites": nn_rewrites,
            "seed": seed,
            "threshold": threshold, "slot_threshold": slot_threshold, "max_carried": best["max_carried"],
            "oof_threshold": best["threshold"], "calibration": calibration,
            "trained_on": {k: len(v) for k, v in loaded.items()},
            "fold_taggers": fold_taggers is not None, "gate_set_weights": gate_weights,
            "own_histories": {"examples": len(own_examples), "pair": list(OWN_HISTORY_PAIR)}
            if own_examples else None,
            **({"shadow": shadow.to_meta()} if shadow is not None else {}),
            **({"latent_state": {"examples": latent, "stages": latent_stages, "pair": list(OWN_HISTORY_PAIR),
                                 "max_carried": latent_cap}}
               if latent_cap is not None else {}),
            **({"bag": bag} if bag > 1 else {}),
            "objective": f"coverage - {CONTAMINATION_WEIGHT} * contamination, mean over sets, out of fold",
            "oof": best["sets"], "auc_oof": auc, "params": {**PARAMS, **(params or {})}, "rounds": rounds}
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".tmp")
    tmp.write_text(json.dumps(meta, sort_keys=True) + "\n" + model.model_to_string() + GATE_SEPARATOR
                   + gate_model.model_to_string(), encoding="utf-8")
    tmp.replace(out)
    return TrainReport(seed=seed, examples=len(examples), rows=int(sum(len(e.y) for e in examples)),
                       positives=int(sum(e.y.sum() for e in examples)), threshold=threshold,
                       slot_threshold=slot_threshold,
                       max_carried=best["max_carried"], seconds=time.perf_counter() - started,
                       embed_misses=embedder.misses, own_examples=len(own_examples), auc=auc, sweep=grid,
                       calibration=calibration)
