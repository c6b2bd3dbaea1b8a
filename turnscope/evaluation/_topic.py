"""Topic-shift detection scored against labelled conversations (TopiOCQA dev, TIAGE).

Each conversation is fed turn by turn to a :class:`Session` running the
``segment`` policy with the detector under test, exactly as it would run in
production: the question as a user turn, then (when the data set has one) the
answer as an assistant turn. A turn is predicted a switch when

- ``centroid`` and ``learned``: the segment policy opened a new segment at it
  (``scope.topic_shift``);
- ``flag``: the rewriter flagged a shift (the flag rides on the rewrite; the session's
  trace keeps it as ``rewriter_topic_shift``).

The first turn of a conversation is not scored: there is nothing to switch
from, so every detector (and the labels) say "no switch" there and counting it
would only inflate the true negatives. Two trivial baselines bracket the
detectors: ``never`` (no switch anywhere: F1 0) and ``always`` (a switch at
every turn: recall 1, precision = the switch rate).

F1 carries a 95% interval from a bootstrap over conversations (turns within
one conversation are not independent).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from rich import box
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from turnscope._exceptions import ConfigError, InputError
from turnscope._session import Session
from turnscope.entities import Vocabulary
from turnscope.evaluation._bootstrap import DEFAULT_RESAMPLES, DEFAULT_SEED

if TYPE_CHECKING:
    # annotation only: turnscope.datasets imports this package's matcher, so a runtime
    # import here would be circular
    from turnscope.datasets import TopicTurn

__all__ = [
    "DEFAULT_DETECTORS",
    "TOPIC_BASELINES",
    "DetectionScore",
    "detect_switches",
    "print_detection",
    "score_detection",
    "topic_shift_eval",
]

#: the segment detectors of docs/architecture.md, and the learned one
DEFAULT_DETECTORS: tuple[str, ...] = ("centroid", "flag", "learned")
#: trivial predictors reported beside the detectors
TOPIC_BASELINES: tuple[str, ...] = ("never", "always")


def _safe_div(a: float, b: float) -> float:
    return a / b if b else 0.0


def _f1(tp: float, fp: float, fn: float) -> float:
    return _safe_div(2 * tp, 2 * tp + fp + fn)


@dataclass(frozen=True)
class DetectionScore:
    """Switch-detection counts of one detector over a data set, with F1's interval."""

    detector: str
    tp: int
    fp: int
    fn: int
    tn: int
    f1_low: float = 0.0
    f1_high: float = 0.0

    @property
    def precision(self) -> float:
        """Share of predicted switches that are switches (0 when nothing is predicted)."""
        return _safe_div(self.tp, self.tp + self.fp)

    @property
    def recall(self) -> float:
        return _safe_div(self.tp, self.tp + self.fn)

    @property
    def f1(self) -> float:
        return _f1(self.tp, self.fp, self.fn)

    @property
    def predicted(self) -> int:
        return self.tp + self.fp

    @property
    def actual(self) -> int:
        return self.tp + self.fn

    def to_json(self) -> dict[str, object]:
        return {"detector": self.detector, "precision": self.precision, "recall": self.recall,
                "f1": self.f1, "f1_low": self.f1_low, "f1_high": self.f1_high,
                "tp": self.tp, "fp": self.fp, "fn": self.fn, "tn": self.tn}


def detect_switches(conversation: Sequence[TopicTurn], detector: str,
                    vocabulary: Vocabulary | None = None) -> list[bool]:
    """Predicted switch per turn of one conversation (the first turn is always ``False``).

    >>> from turnscope.datasets import TopicTurn
    >>> conv = [TopicTurn(1, 1, "Who wrote Dune?", "Frank Herbert.", "Dune", False),
    ...         TopicTurn(1, 2, "ok different question: what is the boiling point of "
    ...                   "water?", "100 C.", "Water", True)]
    >>> detect_switches(conv, "never")
    [False, False]
    """
    if detector == "never":
        return [False] * len(conversation)
    if detector == "always":
        return [False] + [True] * (len(conversation) - 1)
    if detector not in DEFAULT_DETECTORS:
        raise ConfigError(f"unknown detector {detector!r}; valid: "
                          f"{', '.join(DEFAULT_DETECTORS + TOPIC_BASELINES)}")
    session = Session(policy=f"segment:{detector}", vocabulary=vocabulary)
    out: list[bool] = []
    for turn in conversation:
        if not turn.question.strip():
            # an empty utterance cannot be rewritten; it opens nothing
            out.append(False)
            continue
        result = session.user(turn.question)
        # flag: the rewriter's own flag (what segment:flag cuts at); the output's
        # topic_shift is the learned detector's decision whatever the policy
        out.append(bool(result.trace.get("rewriter_topic_shift", result.topic_shift))
                   if detector == "flag" else result.scope.topic_shift)
        if turn.answer.strip():
            session.assistant(turn.answer)
    if out:
        out[0] = False
    return out


def score_detection(
    detector: str,
    conversations: Sequence[Sequence[TopicTurn]],
    predictions: Sequence[Sequence[bool]],
    *,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> DetectionScore:
    """Count TP/FP/FN/TN over turns 2..n of each conversation; bootstrap F1 over
    conversations.

    >>> from turnscope.datasets import TopicTurn
    >>> conv = [TopicTurn(1, i, "q", "", "", s) for i, s in enumerate([False, True, False], 1)]
    >>> score_detection("always", [conv], [[False, True, True]]).precision
    0.5
    """
    if len(conversations) != len(predictions):
        raise InputError("one prediction list per conversation is needed")
    counts = np.zeros((len(conversations), 3), dtype=np.int64)  # tp, fp, fn per conversation
    tn = 0
    for c, (conv, pred) in enumerate(zip(conversations, predictions, strict=True)):
        if len(conv) != len(pred):
            raise InputError(f"conversation {c}: {len(conv)} turns but {len(pred)} predictions")
        for turn, p in list(zip(conv, pred, strict=True))[1:]:
            gold = turn.is_switch
            if p and gold:
                counts[c, 0] += 1
            elif p:
                counts[c, 1] += 1
            elif gold:
                counts[c, 2] += 1
            else:
                tn += 1
    tp, fp, fn = (int(x) for x in counts.sum(axis=0))
    low = high = _f1(tp, fp, fn)
    if len(conversations) > 1 and resamples > 0:
        rng = np.random.default_rng(seed)
        idx = rng.integers(0, len(conversations), size=(resamples, len(conversations)))
        sums = counts[idx].sum(axis=1)  # (resamples, 3)
        f1s = np.where(sums[:, 0] > 0,
                       2 * sums[:, 0] / np.maximum(1, 2 * sums[:, 0] + sums[:, 1] + sums[:, 2]),
                       0.0)
        low, high = (float(x) for x in np.quantile(f1s, [0.025, 0.975]))
    return DetectionScore(detector, tp, fp, fn, tn, low, high)


def topic_shift_eval(
    conversations: Sequence[Sequence[TopicTurn]],
    detectors: Sequence[str] = DEFAULT_DETECTORS,
    *,
    vocabulary: Vocabulary | None = None,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    console: Console | None = None,
    progress: bool = True,
) -> list[DetectionScore]:
    """Precision/recall/F1 of each detector, then the ``never`` and ``always`` baselines.

    >>> from turnscope.datasets import load_topiocqa
    >>> scores = topic_shift_eval(load_topiocqa()[:20])           # doctest: +SKIP
    >>> [(s.detector, round(s.f1, 2)) for s in scores]            # doctest: +SKIP
    """
    if not conversations:
        raise InputError("no conversations to score")
    names = list(detectors) + [b for b in TOPIC_BASELINES if b not in detectors]
    out: list[DetectionScore] = []
    bar = Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                   TimeRemainingColumn(), console=console, disable=not progress)
    with bar:
        for name in names:
            task = bar.add_task(name, total=len(conversations))
            preds = []
            for conv in conversations:
                preds.append(detect_switches(conv, name, vocabulary))
                bar.advance(task)
            out.append(score_detection(name, conversations, preds, resamples=resamples,
                                       seed=seed))
    return out


def print_detection(scores: Sequence[DetectionScore], dataset: str,
                    console: Console | None = None) -> None:
    """Print the detection table: P, R, F1 [interval], predicted and true switches."""
    con = console or Console()
    turns = scores[0].tp + scores[0].fp + scores[0].fn + scores[0].tn if scores else 0
    table = Table(title=f"topic-shift detection · {dataset} · {turns} scored turns",
                  title_justify="left", box=box.SIMPLE_HEAD, show_edge=False)
    for col in ("detector", "precision", "recall", "F1", "F1 95% interval", "predicted",
                "switches"):
        table.add_column(col, justify="left" if col == "detector" else "right", no_wrap=True)
    for s in scores:
        style = "dim" if s.detector in TOPIC_BASELINES else ""
        table.add_row(s.detector, f"{s.precision:.3f}", f"{s.recall:.3f}", f"{s.f1:.3f}",
                      f"[{s.f1_low:.3f}, {s.f1_high:.3f}]", str(s.predicted), str(s.actual),
                      style=style)
    con.print(table)
