"""Which evidence lifts topic-shift detection past the shipped detector's features?

    python benchmarks/shift_evidence.py [--conversations N] [--variants base,tagger,tagcls,all]

An experiment, not a shipped path (issue 38 asks for TopiOCQA dev F1 >= 0.70; the shipped
detector reads 0.61, the same features on all the training data 0.67). Each variant adds
columns to the detector's own (:class:`turnscope.resolver._shift.ShiftFeatures`):

- ``base``: none;
- ``answer``: the e5 cosine of the message to the previous answer (its first 48 words), that
  minus the cosine to the previous question, and the answer's cosine to the previous question
  (the shipped detector reads answers for their words only: embedding them costs e5 time);
- ``tagger``: the neural tagger's need head, and its best word score in the previous answer,
  in the previous question and in older turns, and answer minus question;
- ``cls``: the tagger's [CLS] vector of its last layer (384 columns: the tensor its need head
  reads, exposed as an output of the shipped int8 graph in memory, with the ``onnx`` package
  of the ``train`` extra);
- ``tagcls``: tagger + cls; ``all``: answer + tagger + cls.

Each is trained as ``turnscope train --only shift`` trains the detector: TopiOCQA train
(every conversation unless ``--conversations N`` samples N) and TIAGE train, two rounds
(gold segments, then the detector's own), LightGBM with the shipped settings, the threshold
that maximises F1 over three cross-validation folds replayed as the detector runs (coarse
grid, then steps of 0.01). Then it is replayed on TopiOCQA dev at that threshold, with 95%
bootstrap intervals over conversations. Pick a variant by its cross-validated F1, not by the
dev column: TopiOCQA dev is the figure issue 38 reports.

The tagger was fine-tuned on TopiOCQA train conversations, so on the training rows its
columns are in-sample; the dev rows are not (it never read TopiOCQA dev). Features are
cached under ``$TURNSCOPE_CACHE/shift-evidence`` by content; a first run over everything
embeds about 80,000 texts and runs the tagger on 45,000 turns (about 40 minutes on two
shared cores).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import time

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # e5's OpenMP threads: see topic_shift.py
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any

import lightgbm
import numpy as np
from topic_shift import intervals

from turnscope._encoder import default_encoder
from turnscope._paths import default_cache_dir
from turnscope.datasets import load_tiage_train, load_topiocqa, load_topiocqa_train
from turnscope.resolver._candidates import _MODEL_DIR, _MODEL_FILE, encode, load_tokenizer
from turnscope.resolver._shift import CUE_FLOOR, FEATURE_NAMES
from turnscope.training.shift import (
    FOLDS,
    LGB_PARAMS,
    NUM_ROUNDS,
    assign_folds,
    pooled_best_threshold,
    replay,
    static_rows,
)
from turnscope.training.shift_embed import EmbeddedConversation, Scorer, embed_conversations

VARIANTS = {"base": (), "answer": ("answer",), "tagger": ("tagger",), "cls": ("cls",),
            "tagcls": ("tagger", "cls"), "all": ("answer", "tagger", "cls")}
SEED = 13
ANSWER_WORDS = 48
_CLS = "/inner/Gather_output_0"  # the [CLS] row of the last layer, the need head's input


def _key(c: EmbeddedConversation) -> str:
    return hashlib.sha256("\x1f".join(t.question + "\x1e" + t.answer for t in c.turns).encode()).hexdigest()[:16]


def _has_answer(c: EmbeddedConversation, k: int) -> bool:
    return bool(c.has_answer[k] and c.turns[k].answer.strip())


class Columns:
    """The extra columns of each conversation's turns 2..n, computed once and cached."""

    def __init__(self, cache: Path) -> None:
        self.cache = cache
        cache.mkdir(parents=True, exist_ok=True)
        self.encoder = default_encoder()
        self._tokenizer: Any = None
        self._session: Any = None

    def _graph(self) -> Any:
        if self._session is None:
            import onnx  # the train extra
            import onnxruntime as ort

            # the shipped tagger's graph and tokenizer, as NeuralTagger loads them
            self._tokenizer = load_tokenizer()
            path = resources.files("turnscope") / "data" / "models" / _MODEL_DIR / _MODEL_FILE
            model = onnx.load(str(path))
            model.graph.output.append(onnx.helper.make_tensor_value_info(_CLS, onnx.TensorProto.FLOAT, None))
            opts = ort.SessionOptions()
            opts.intra_op_num_threads = 1
            opts.add_session_config_entry("session.x64quantprecision", "1")  # as the tagger runs
            self._session = ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])
        return self._session

    def answers(self, convs: Sequence[EmbeddedConversation]) -> list[np.ndarray]:
        texts = [" ".join(t.answer.split()[:ANSWER_WORDS]) or "-" for c in convs for t in c.turns]
        path = self.cache / f"ans-{hashlib.sha256(chr(31).join(texts).encode()).hexdigest()[:16]}.npy"
        if path.exists():
            flat = np.load(path)
        else:
            flat = np.concatenate([self.encoder.embed_queries(texts[i:i + 64]) for i in range(0, len(texts), 64)])
            np.save(path, flat.astype(np.float32))
        out, pos = [], 0
        for c in convs:
            vecs = flat[pos:pos + len(c.turns)]
            pos += len(c.turns)
            rows = []
            for k in range(1, len(c.turns)):
                if _has_answer(c, k - 1):
                    q, pq, a = c.questions[k], c.questions[k - 1], vecs[k - 1]
                    rows.append([float(q @ a), float(q @ a) - float(q @ pq), float(a @ pq)])
                else:
                    rows.append([np.nan] * 3)
            out.append(np.asarray(rows, dtype=np.float64).reshape(-1, 3))
        return out

    def tagger(self, c: EmbeddedConversation) -> tuple[np.ndarray, np.ndarray]:
        """(need, best word score in the previous answer, in the previous question, older,
        answer - question) and the [CLS] vector, per turn 2..n."""
        tag_path = self.cache / f"tag-{c.source}-{_key(c)}.npy"
        cls_path = self.cache / f"cls-{c.source}-{_key(c)}.npy"
        if tag_path.exists() and cls_path.exists():
            return np.load(tag_path), np.load(cls_path)
        session = self._graph()
        rows, cls, history = [], [], []
        for k, t in enumerate(c.turns):
            if k > 0:
                enc = encode(self._tokenizer, t.question, history)  # the last MAX_TURNS texts, as the tagger reads them
                ids = np.asarray([enc.ids], dtype=np.int64)
                probs, need, vec = session.run(["token_probs", "need_prob", _CLS], {
                    "input_ids": ids, "attention_mask": np.ones_like(ids),
                    "token_type_ids": np.asarray([enc.type_ids], dtype=np.int64)})
                best: dict[int, float] = {}  # per history text, newest first: its best token
                for j, span in enumerate(enc.spans):
                    if span is not None:
                        best[span[0]] = max(best.get(span[0], 0.0), float(probs[0][j]))
                answered = _has_answer(c, k - 1)
                a = best.get(0, np.nan) if answered else np.nan
                q = best.get(1 if answered else 0, np.nan)
                older = max((v for p, v in best.items() if p >= (2 if answered else 1)), default=np.nan)
                rows.append([float(need[0]), a, q, older, a - q])
                cls.append(np.asarray(vec).reshape(-1))
            history.append(t.question)
            if _has_answer(c, k):
                history.append(t.answer)
        tag, vecs = np.asarray(rows, np.float64).reshape(-1, 5), np.asarray(cls, np.float64).reshape(-1, 384)
        np.save(tag_path, tag)
        np.save(cls_path, vecs)
        return tag, vecs


def extra_columns(convs: Sequence[EmbeddedConversation], parts: Sequence[str], cols: Columns) -> list[np.ndarray]:
    answers = cols.answers(convs) if "answer" in parts else None
    out = []
    for i, c in enumerate(convs):
        blocks = [answers[i]] if answers is not None else []
        if "tagger" in parts or "cls" in parts:
            tag, vecs = cols.tagger(c)
            blocks += [tag] if "tagger" in parts else []
            blocks += [vecs] if "cls" in parts else []
        out.append(np.hstack(blocks) if blocks else np.zeros((len(c.turns) - 1, 0)))
    return out


_STATIC: dict[int, np.ndarray] = {}


def widened(convs: Sequence[EmbeddedConversation], extra: Sequence[np.ndarray]) -> list[np.ndarray]:
    """:func:`static_rows` (computed once per conversation) with the extra columns appended:
    the training's :func:`replay` fills in only the segment columns, so it replays them as they are."""
    missing = [c for c in convs if id(c) not in _STATIC]
    for c, rows in zip(missing, static_rows(missing), strict=True):
        _STATIC[id(c)] = rows
    return [np.hstack([_STATIC[id(c)], e]) for c, e in zip(convs, extra, strict=True)]


def fit(rows: np.ndarray, labels: np.ndarray) -> Scorer:
    params = dict(LGB_PARAMS, seed=SEED, bagging_seed=SEED, feature_fraction_seed=SEED, data_random_seed=SEED)
    booster = lightgbm.train(params, lightgbm.Dataset(rows, label=labels.astype(float)), NUM_ROUNDS)
    cue = FEATURE_NAMES.index("change_cue")

    def score(x: np.ndarray) -> np.ndarray:
        p = booster.predict(x)
        return np.where(x[:, cue] > 0, np.maximum(p, CUE_FLOOR), p)  # the shipped cue rule

    return score


def two_rounds(convs: Sequence[EmbeddedConversation], static: Sequence[np.ndarray]) -> Scorer:
    rows, gold, _, _ = replay(convs, None, static=static)
    first = fit(rows, gold)
    rows, gold, _, _ = replay(convs, first, 0.3, static=static)  # the segments the detector itself opens
    return fit(rows, gold)


def cv_threshold(convs: Sequence[EmbeddedConversation], static: Sequence[np.ndarray]) -> tuple[float, float]:
    """The threshold with the best F1 over the folds, each replayed by the model fitted
    without it (as the shipped threshold is chosen), and that F1."""
    folds = assign_folds(convs, SEED)
    parts, statics = [], []
    for f in range(FOLDS):
        fit_on = [i for i in range(len(convs)) if folds[i] != f]
        held = [i for i in range(len(convs)) if folds[i] == f]
        parts.append(([convs[i] for i in held],
                      two_rounds([convs[i] for i in fit_on], [static[i] for i in fit_on])))
        statics.append([static[i] for i in held])
    threshold, (_, _, f1) = pooled_best_threshold(parts, statics=statics)
    return threshold, f1


def main() -> int:
    ap = argparse.ArgumentParser(prog="python benchmarks/shift_evidence.py")
    ap.add_argument("--conversations", type=int, default=0, help="TopiOCQA train conversations sampled (0: all)")
    ap.add_argument("--variants", default="base,tagger,tagcls,all")
    ap.add_argument("--json", type=Path, default=Path("benchmarks/figures/shift_evidence.json"))
    args = ap.parse_args()
    variants = args.variants.split(",")
    unknown = [v for v in variants if v not in VARIANTS]
    if unknown:
        ap.error(f"unknown variant(s) {', '.join(unknown)}; choose from {', '.join(VARIANTS)}")
    rng = np.random.default_rng(SEED)
    train = load_topiocqa_train()
    if args.conversations:
        train = [train[i] for i in sorted(rng.permutation(len(train))[:args.conversations])]
    cache = default_cache_dir() / "shift-evidence"
    cols = Columns(cache)
    t0 = time.time()
    fit_convs: list[EmbeddedConversation] = []
    for convs, source in ((train, "topiocqa-train"), (load_tiage_train(), "tiage-train")):
        fit_convs += embed_conversations(convs, source, cols.encoder, cache_dir=cache, progress=True)[0]
    dev = embed_conversations(load_topiocqa(), "topiocqa-dev", cols.encoder, cache_dir=cache, progress=True)[0]
    print(f"{len(fit_convs)} training conversations, {len(dev)} TopiOCQA dev; questions embedded in "
          f"{time.time() - t0:.0f} s", flush=True)
    results = {}
    print("| variant | columns | threshold (CV) | CV F1 | TopiOCQA dev P | R | F1 [95%] |")
    print("|---|---|---|---|---|---|---|")
    for name in variants:
        t1 = time.time()
        fit_static = widened(fit_convs, extra_columns(fit_convs, VARIANTS[name], cols))
        dev_static = widened(dev, extra_columns(dev, VARIANTS[name], cols))
        threshold, cv = cv_threshold(fit_convs, fit_static)
        _, gold, probs, owner = replay(dev, two_rounds(fit_convs, fit_static), threshold, static=dev_static)
        pred = probs >= threshold
        counts = np.stack([[np.sum(pred[m] & gold[m]), np.sum(pred[m] & ~gold[m]), np.sum(~pred[m] & gold[m])]
                           for m in (owner == i for i in range(len(dev)))])
        point, ci = intervals(counts, 1000, 0)
        width = dev_static[0].shape[1]
        results[name] = {"columns": width, "threshold": threshold, "cv_f1": round(cv, 4),
                         "dev": {"precision": round(float(point[0]), 4), "recall": round(float(point[1]), 4),
                                 "f1": round(float(point[2]), 4), "f1_95": [round(float(x), 4) for x in ci[:, 2]]},
                         "seconds": round(time.time() - t1)}
        print(f"| {name} | {width} | {threshold:.2f} | {cv:.3f} | {point[0]:.3f} | {point[1]:.3f} | "
              f"{point[2]:.3f} [{ci[0, 2]:.3f}, {ci[1, 2]:.3f}] |", flush=True)
    args.json.write_text(json.dumps({"command": "python benchmarks/shift_evidence.py "
                                     f"--conversations {args.conversations} --variants {args.variants}",
                                     "training_conversations": len(fit_convs), "variants": results}, indent=1) + "\n")
    print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
