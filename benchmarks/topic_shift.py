"""Topic-shift detection on TopiOCQA dev and TIAGE dev: the learned detector beside the
centroid detector and the trivial baselines.

Run from the repository root::

    python benchmarks/topic_shift.py [--data-root DIR] [--png benchmarks/out/topic_shift_pr.png]
                                     [--limit N] [--resamples 1000] [--no-output]

Each conversation is fed turn by turn (the question as a user turn, the answer as an
assistant turn) and turns 2..n are scored, as ``turnscope eval --dataset topiocqa
--policies segment:centroid,segment:learned`` scores them. By default the detectors
read a bare :class:`~turnscope.conversation.ConversationState`, which is all the
``segment`` policy hands them: a full session would also rewrite every turn, which
costs far more than the detection and changes nothing in it. The first ``--check``
conversations are also run through the harness's sessions
(:func:`turnscope.evaluation.detect_switches`) and must agree turn for turn;
``--sessions`` runs everything through sessions.
Precision, recall and F1 carry 95% intervals from a bootstrap over conversations (the
same resampling as :func:`turnscope.evaluation.score_detection`: turns within one
conversation are not independent).

Beside the detectors, two rows score what a user reads: ``output`` is the
``topic_shift`` field a :class:`~turnscope.Session` with default settings (the field
``turnscope rewrite`` writes) returns for each turn, each conversation replayed through
one session (question as a user turn, answer as an assistant turn); it is the learned
detector's decision or an explicit pivot cue, except on a turn whose pronoun, ordinal or
ellipsis the rewriter resolved against the previous exchange, which continues its subject
(docs/output.md). TopiOCQA counts many of those as switches (a question about what the last
answer brought up), so there the row scores below ``learned``.
``rewriter flag`` is the embedded rewriter's own flag for the same turns (the session's
trace keeps it as ``rewriter_topic_shift``; ``segment:flag`` cuts at it). Both come from
the same sessions, with the same bootstrap intervals; ``--no-output`` skips them (they
rewrite every turn, which takes minutes).

The PNG shows the learned detector's precision and recall on TopiOCQA dev as its
threshold varies, each point a full replay (the segment the detector compares a turn
with depends on where it cut before). It is for information only: the shipped
threshold was chosen on held-out *training* conversations and is marked on the plot;
reading a better one off this curve would be tuning on the dev set.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

# e5's OpenMP threads spin while they wait; on two shared cores that makes every
# embedding several times slower. Set before the encoder is loaded (see turnscope.training.shift).
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from rich import box
from rich.console import Console
from rich.progress import track
from rich.table import Table

from turnscope import Session
from turnscope._encoder import default_encoder
from turnscope.conversation import ConversationState, Role, Turn
from turnscope.datasets import TopicTurn, load_tiage, load_topiocqa, resolve_data_root
from turnscope.evaluation import detect_switches, score_detection
from turnscope.evaluation._bootstrap import DEFAULT_RESAMPLES, DEFAULT_SEED
from turnscope.resolver._shift import ShiftDetector, shipped_model
from turnscope.scope import CentroidDetector
from turnscope.training.shift import replay
from turnscope.training.shift_embed import embed_conversations

DETECTORS = ("never", "always", "centroid", "learned")
#: rows read off full sessions: the output field, and the rewriter's own flag
OUTPUT_ROWS = ("output", "rewriter flag")


def _counts(convs: Sequence[Sequence[TopicTurn]], preds: Sequence[Sequence[bool]]) -> np.ndarray:
    """(tp, fp, fn) per conversation over turns 2..n."""
    out = np.zeros((len(convs), 3), dtype=np.int64)
    for c, (conv, pred) in enumerate(zip(convs, preds, strict=True)):
        for turn, p in list(zip(conv, pred, strict=True))[1:]:
            out[c] += (p and turn.is_switch, p and not turn.is_switch, turn.is_switch and not p)
    return out


def _prf(sums: np.ndarray) -> np.ndarray:
    """Precision, recall, F1 for rows of (tp, fp, fn) sums: (n, 3) -> (n, 3)."""
    tp, fp, fn = (sums[:, i].astype(np.float64) for i in range(3))
    p = np.divide(tp, tp + fp, out=np.zeros_like(tp), where=tp + fp > 0)
    r = np.divide(tp, tp + fn, out=np.zeros_like(tp), where=tp + fn > 0)
    f = np.divide(2 * tp, 2 * tp + fp + fn, out=np.zeros_like(tp), where=tp > 0)
    return np.stack([p, r, f], axis=1)


def intervals(counts: np.ndarray, resamples: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Point (P, R, F1) and their 2.5/97.5 percentiles over conversation resamples."""
    point = _prf(counts.sum(axis=0, keepdims=True))[0]
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(counts), size=(resamples, len(counts)))
    boot = _prf(counts[idx].sum(axis=1))
    return point, np.quantile(boot, [0.025, 0.975], axis=0)


class MemoEncoder:
    """The bundled encoder with a memory: the centroid detector, the learned one and the
    threshold sweep read the same questions, which are embedded once."""

    def __init__(self) -> None:
        self.inner = default_encoder()
        self.name = self.inner.name
        self._memo: dict[str, np.ndarray] = {}

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        missing = [t for t in dict.fromkeys(texts) if t not in self._memo]
        if missing:
            for t, v in zip(missing, self.inner.embed_queries(missing), strict=True):
                self._memo[t] = v
        return np.stack([self._memo[t] for t in texts]) if texts else \
            np.zeros((0, 384), np.float32)

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        return self.inner.embed_passages(texts)


ENCODER = MemoEncoder()


class _Msg:
    """What a segment detector reads of a message: its turn index and text."""

    def __init__(self, index: int, text: str) -> None:
        self.index = index
        self.text = text


def state_switches(conv: Sequence[TopicTurn], detector: str) -> list[bool]:
    """:func:`detect_switches` without the session's rewriting: the detector alone over
    a conversation state fed the same turns."""
    if detector in ("never", "always"):
        return detect_switches(conv, detector)
    det = CentroidDetector(encoder=ENCODER) if detector == "centroid" \
        else ShiftDetector(encoder=ENCODER)
    state = ConversationState()
    out: list[bool] = []
    for turn in conv:
        if not turn.question.strip():
            out.append(False)
            continue
        msg = _Msg(state.last_index + 1, turn.question)
        out.append(det.is_shift(state, msg))  # type: ignore[arg-type]
        state.turns.append(Turn(msg.index, Role.USER, turn.question))
        if turn.answer.strip():
            state.turns.append(Turn(state.last_index + 1, Role.ASSISTANT, turn.answer))
    if out:
        out[0] = False
    return out


def session_outputs(conv: Sequence[TopicTurn]) -> tuple[list[bool], list[bool]]:
    """Per turn of one conversation replayed through a :class:`Session` with default
    settings: the ``topic_shift`` it outputs, and the rewriter's own flag (its trace's
    ``rewriter_topic_shift``). The first turn, and an empty question, count as no switch,
    as :func:`detect_switches` counts them."""
    session = Session()
    output: list[bool] = []
    flag: list[bool] = []
    for turn in conv:
        if not turn.question.strip():
            output.append(False)
            flag.append(False)
            continue
        result = session.user(turn.question)
        output.append(result.topic_shift)
        flag.append(bool(result.trace.get("rewriter_topic_shift")))
        if turn.answer.strip():
            session.assistant(turn.answer)
    if output:
        output[0] = flag[0] = False
    return output, flag


def score_outputs(name: str, convs: list[list[TopicTurn]], resamples: int, seed: int,
                  console: Console) -> tuple[dict[str, tuple[np.ndarray, np.ndarray, int]],
                                             list[list[bool]]]:
    """The ``output`` and ``rewriter flag`` rows (see the module docstring), and the
    output's predictions per conversation."""
    t0 = time.perf_counter()
    runs = [session_outputs(c) for c in
            track(convs, description=f"{name}: sessions", console=console)]
    out = {}
    for row, preds in zip(OUTPUT_ROWS, ([r[0] for r in runs], [r[1] for r in runs]),
                          strict=True):
        counts = _counts(convs, preds)
        point, ci = intervals(counts, resamples, seed)
        out[row] = (point, ci, int(counts[:, 0].sum() + counts[:, 1].sum()))
        console.log(f"{name} {row}: F1 {point[2]:.3f}")
    console.log(f"{name} sessions: {time.perf_counter() - t0:.0f} s")
    return out, [r[0] for r in runs]


def agreement(a: Sequence[Sequence[bool]], b: Sequence[Sequence[bool]]) -> tuple[int, int]:
    """Scored turns (2..n) on which two prediction lists agree, and how many there are."""
    same = total = 0
    for x, y in zip(a, b, strict=True):
        for p, q in list(zip(x, y, strict=True))[1:]:
            same += p == q
            total += 1
    return same, total


def score_set(name: str, convs: list[list[TopicTurn]], resamples: int, seed: int,
              console: Console, sessions: bool = False, check: int = 1,
              preds_out: dict[str, list[list[bool]]] | None = None,
              ) -> dict[str, tuple[np.ndarray, np.ndarray, int]]:
    out = {}
    for det in DETECTORS:
        t0 = time.perf_counter()
        run = detect_switches if sessions else state_switches
        preds = [run(c, det) for c in
                 track(convs, description=f"{name}: {det}", console=console,
                       disable=det in ("never", "always"))]
        if not sessions:
            for c, p in zip(convs[:check], preds, strict=False):
                # the shortcut must decide exactly what the harness's sessions decide
                assert detect_switches(c, det) == p, (name, det, c[0].conversation)
        counts = _counts(convs, preds)
        point, ci = intervals(counts, resamples, seed)
        # the harness's own F1 interval must agree with ours (same resampling)
        harness = score_detection(det, convs, preds, resamples=resamples, seed=seed)
        assert abs(harness.f1 - point[2]) < 1e-9, (harness.f1, point[2])
        out[det] = (point, ci, int(counts[:, 0].sum() + counts[:, 1].sum()))
        if preds_out is not None:
            preds_out[det] = preds
        console.log(f"{name} {det}: F1 {point[2]:.3f} ({time.perf_counter() - t0:.0f} s)")
    return out


def print_table(title: str, scores: dict[str, tuple[np.ndarray, np.ndarray, int]],
                console: Console, switches: int, turns: int) -> None:
    table = Table(title=f"{title} · {turns} scored turns, {switches} switches",
                  title_justify="left", box=box.SIMPLE_HEAD)
    for col in ("detector", "F1 [95%]", "precision [95%]", "recall [95%]", "predicted"):
        table.add_column(col, justify="left" if col == "detector" else "right", no_wrap=True)
    for det, (point, ci, predicted) in scores.items():
        cells = [f"{point[k]:.3f} [{ci[0, k]:.3f}, {ci[1, k]:.3f}]" for k in (2, 0, 1)]
        table.add_row(det, *cells, str(predicted),
                      style="dim" if det in ("never", "always") else
                      "bold" if det == "output" else "")
    console.print(table)


def pr_curve(convs: list[list[TopicTurn]], png: Path, console: Console) -> Path | None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        console.print("[yellow]matplotlib not installed: no PNG[/yellow]")
        return None
    model = shipped_model()
    embedded, _, _ = embed_conversations(convs, "topiocqa-dev", ENCODER, console=console,
                                         progress=False)
    grid = np.round(np.arange(0.05, 0.951, 0.025), 3)
    rows = []
    for t in track(grid, description="threshold sweep", console=console):
        _, gold, probs, _ = replay(embedded, model.probabilities, float(t))
        pred = probs >= t
        tp, fp, fn = (int(np.sum(pred & gold)), int(np.sum(pred & ~gold)),
                      int(np.sum(~pred & gold)))
        rows.append(_prf(np.asarray([[tp, fp, fn]]))[0])
    arr = np.asarray(rows)
    fig, ax = plt.subplots(figsize=(6.4, 4.2), dpi=120)
    ax.plot(grid, arr[:, 0], label="precision")
    ax.plot(grid, arr[:, 1], label="recall")
    ax.plot(grid, arr[:, 2], label="F1", linewidth=2)
    ax.axvline(model.threshold, color="grey", linestyle="--",
               label=f"shipped threshold {model.threshold:.2f} (chosen on train)")
    ax.set_xlabel("decision threshold")
    ax.set_ylim(0, 1)
    ax.set_title("learned shift detector · TopiOCQA dev (information only)")
    ax.legend(loc="lower left", fontsize=8)
    ax.grid(alpha=0.3)
    png.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(png)
    plt.close(fig)
    return png


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data-root", type=Path, default=None)
    ap.add_argument("--png", type=Path, default=Path("benchmarks/out/topic_shift_pr.png"))
    ap.add_argument("--limit", type=int, default=None, help="first N conversations per set")
    ap.add_argument("--resamples", type=int, default=DEFAULT_RESAMPLES)
    ap.add_argument("--seed", type=int, default=DEFAULT_SEED)
    ap.add_argument("--sessions", action="store_true",
                    help="run every conversation through full sessions (slow)")
    ap.add_argument("--check", type=int, default=1,
                    help="conversations per set also run through sessions, which must agree")
    ap.add_argument("--no-output", dest="output", action="store_false",
                    help="skip the output and rewriter-flag rows (full sessions, slow)")
    args = ap.parse_args(argv)
    # wide enough for the table when the output is a file, not a terminal
    console = Console(width=None if sys.stdout.isatty() else 110)
    root = resolve_data_root(args.data_root)
    model = shipped_model()
    console.print(f"shipped model: threshold {model.threshold:.2f}, trained on "
                  f"{model.header.get('fit_turns')} turns (seed {model.header.get('seed')})")
    for name, loader in (("TopiOCQA dev", load_topiocqa), ("TIAGE dev", load_tiage)):
        convs = loader(root)
        convs = convs[: args.limit] if args.limit else convs
        preds: dict[str, list[list[bool]]] = {}
        scores = score_set(name, convs, args.resamples, args.seed, console,
                           sessions=args.sessions, check=args.check, preds_out=preds)
        if args.output:
            rows, output = score_outputs(name, convs, args.resamples, args.seed, console)
            scores.update(rows)
            same, total = agreement(output, preds["learned"])
            console.print(f"{name}: the output field agrees with the learned detector on "
                          f"{same} of {total} scored turns")
        turns = sum(len(c) - 1 for c in convs)
        switches = sum(t.is_switch for c in convs for t in c[1:])
        print_table(f"topic-shift detection · {name} ({len(convs)} conversations)", scores,
                    console, switches, turns)
        if name == "TopiOCQA dev" and args.png:
            png = pr_curve(convs, args.png, console)
            if png is not None:
                console.print(f"wrote {png}")


if __name__ == "__main__":
    main()
