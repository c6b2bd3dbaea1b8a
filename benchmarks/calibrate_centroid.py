"""Calibrate the centroid segmenter's threshold for the bundled encoder on TIAGE train.

Run from the repository root::

    python benchmarks/calibrate_centroid.py [DATA_ROOT]      # package installed
    PYTHONPATH=. python benchmarks/calibrate_centroid.py    # or from a plain checkout

TIAGE (``<data_root>/tiage/anno_train.json``) is a JSON object of dialogues, each a
list of ``[utterance, label]`` with label ``"1"`` for a topic shift, ``"0"`` for
none and ``"-1"`` on the opening utterance. Every utterance is one turn.

The threshold is chosen by replaying :class:`~turnscope.scope.CentroidDetector`'s
own arithmetic for each candidate: cosine of the turn against the running mean
of the segment *the detector* has open, a new segment when it falls below the
threshold. Replaying matters because the segment the detector compares with
depends on its earlier decisions: a threshold that fires too often keeps
centroids short and noisy, which a calibration against gold segments (the
teacher-forced figure, printed for reference) cannot see. The F1-optimal
threshold of the replay goes into ``CALIBRATED_THRESHOLDS``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.progress import track

from turnscope._encoder import default_encoder
from turnscope.datasets import resolve_data_root
from turnscope.scope import calibrate_threshold

#: candidate thresholds: e5 cosines of related sentences sit around 0.75-0.95
GRID = np.round(np.arange(0.60, 0.98, 0.0025), 4)


def load_dialogues(root: Path) -> list[list[tuple[str, bool]]]:
    data = json.loads((root / "tiage" / "anno_train.json").read_text(encoding="utf-8"))
    dialogues = []
    for key in sorted(data, key=int):
        turns = [(str(text), label == "1") for text, label in data[key]]
        if turns:
            turns[0] = (turns[0][0], False)  # the opening utterance cannot be a shift
            dialogues.append(turns)
    return dialogues


def replay(vectors: list[np.ndarray], threshold: float) -> list[bool]:
    """CentroidDetector.is_shift for every turn of one dialogue (same arithmetic)."""
    out: list[bool] = []
    total: np.ndarray | None = None
    count = 0
    for vec in vectors:
        shift = False
        if total is not None and count:
            centroid = total / count
            norm = float(np.linalg.norm(centroid)) or 1.0
            shift = float(centroid @ vec) / norm < threshold
        if shift or total is None:
            total, count = vec.astype(np.float64), 1
        else:
            total = total + vec
            count += 1
        out.append(shift)
    return out


def f1_of(preds: list[list[bool]], labels: list[list[bool]]) -> tuple[float, float, float]:
    tp = fp = fn = 0
    for p_row, l_row in zip(preds, labels, strict=True):
        for p, gold in list(zip(p_row, l_row, strict=True))[1:]:
            tp += p and gold
            fp += p and not gold
            fn += gold and not p
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * tp / (2 * tp + fp + fn) if tp else 0.0
    return precision, recall, f1


def teacher_forced(vectors: list[list[np.ndarray]],
                   labels: list[list[bool]]) -> tuple[list[float], list[bool]]:
    """Cosine of each turn against the mean of its *gold* segment so far."""
    sims: list[float] = []
    flags: list[bool] = []
    for vecs, labs in zip(vectors, labels, strict=True):
        total = vecs[0].astype(np.float64)
        count = 1
        for vec, lab in zip(vecs[1:], labs[1:], strict=True):
            centroid = total / count
            sims.append(float(centroid @ vec) / (float(np.linalg.norm(centroid)) or 1.0))
            flags.append(lab)
            if lab:
                total, count = vec.astype(np.float64), 1
            else:
                total, count = total + vec, count + 1
    return sims, flags


def main(argv: list[str]) -> None:
    console = Console()
    root = resolve_data_root(Path(argv[0]) if argv else None)
    dialogues = load_dialogues(root)
    encoder = default_encoder()
    labels = [[shift for _, shift in d] for d in dialogues]
    vectors = [
        list(encoder.embed_queries([text for text, _ in d]))
        for d in track(dialogues, description="embedding TIAGE train", console=console)
    ]
    scored = sum(len(d) - 1 for d in dialogues)
    shifts = sum(sum(row[1:]) for row in labels)
    console.print(f"encoder {encoder.name}: {len(dialogues)} dialogues, {scored} scored turns, "
                  f"{shifts} shifts")

    best = (0.0, 0.0, 0.0, 0.0)  # f1, threshold, precision, recall
    for t in GRID:
        p, r, f1 = f1_of([replay(v, float(t)) for v in vectors], labels)
        if f1 > best[0]:
            best = (f1, float(t), p, r)
    f1, threshold, p, r = best
    sims, flags = teacher_forced(vectors, labels)
    tf = calibrate_threshold(sims, flags)
    console.print(f"teacher-forced (gold segments) F1-optimal threshold: {tf:.3f} (reference)")
    console.print(f"detector replay F1-optimal threshold: [bold]{threshold:.4f}[/bold] "
                  f"(P {p:.3f}, R {r:.3f}, F1 {f1:.3f}; always-shift F1 "
                  f"{2 * shifts / (scored + shifts):.3f})")
    console.print(f'CALIBRATED_THRESHOLDS["{encoder.name}"] = {threshold:.4f}')


if __name__ == "__main__":
    main(sys.argv[1:])
