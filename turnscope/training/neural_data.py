"""Training examples for the neural resolver (issue 20, part 1), built from TopiOCQA train.

One JSON line per example::

    {"id": str, "source": str, "message": str,
     "history": [{"role": "user"|"assistant", "text": str}, ...],   # oldest first
     "targets": [str, ...],   # spans of history texts the message needs carried; [] = none
     "original": str | null}  # the unablated question, when made by ablation

**What is read.** Only the TopiOCQA train part of the shared snapshot
(``topiocqa/topiocqa_train_part.json``, through :func:`load_topiocqa_train`). Not CANARD,
not CAsT, not TopiOCQA dev: the development sets (CAsT 2019, CANARD, the even CAsT 2021
topics) train the downstream ranker and gate out of fold on this model's scores, so this
model must never have seen them; the check sets (CAsT 2020, the odd CAsT 2021 topics) are
never used for anything but figures.

**Kinds** (the last fields of ``id``; ``docs/neural_data.md`` says how each differs from a
real follow-up and gives the counts). A message is a turn's question; its history the real
turns before it (question, then answer cut to 400 characters; an unanswerable turn keeps
only its question), at most the last 12. The *subject* of a turn is its Topic title, the
title without its parenthetical or a leading "The", or the part before a comma, matched
case-insensitively on word boundaries; ``targets`` is always the subject as the history
writes it (newest mention).

- ``ablation:<form>`` (positive): a same-topic turn whose question names the subject,
  which the history also names. The mention becomes the pronoun the subject takes
  (he/she/they when the conversation clearly says so, else it; possessives too), or the
  definite description the title or question gives ("the film"), or it is dropped with
  its preposition ("what is the capital of italy" -> "what is the capital").
- ``named`` (negative): a same-topic turn's question that names its subject, as asked
  (the unablated twin of an ablation, or a question whose subject the history lacks).
- ``switch-named`` (negative): a topic switch whose question names the new topic.
- ``natural:<form>`` (positive; ``natural=True``, the default): a real follow-up that
  points at the subject one clear way: one third-person pronoun class (agreeing with the
  subject's when the conversation says which), else one description ("this country",
  "the above song", "the film"), else one locative "there"/"here"; no list reference
  ("the former", "the second").
- ``deablation`` (negative; with ``natural``): that question with the pointer replaced by
  the subject ("when was it released?" -> "when was Piece of Me released?").

Not emitted, only counted: same-topic turns that neither name the subject nor point at it
clearly (their label is unknown), and switches whose question does not name the new topic.
The latter are *not* "carry nothing" examples: in TopiOCQA a switch usually moves to
something the history named ("what is it?" after an answer naming a band), so labelling
them ``[]`` would teach the model not to carry where it must.

Why ``natural`` exists and is on: TopiOCQA questions rarely name their subject (about 1.4%
of same-topic turns do), so ablation alone gives a few hundred examples, not 40,000.
``natural=False`` keeps only the ablation kinds.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from turnscope._exceptions import DatasetError
from turnscope.datasets import TopicTurn, load_topiocqa_train
from turnscope.training.neural_forms import (
    _ablate,
    _decide,
    _history_span,
    _named,
    _natural,
    _pronoun_counts,
    _title_description,
    _variants,
)

__all__ = ["NeuralDataReport", "build_neural_data", "render_sample"]

SOURCE = "topiocqa-train"
#: answers are cut here in the history (a passage-length answer is mostly noise to a tagger)
ANSWER_CHARS = 400
#: turns (question + answer) of history kept before the message
HISTORY_TURNS = 12
#: the positive share outside which the larger class is thinned to an even split
BALANCE_BAND = (0.45, 0.55)
_UNANSWERABLE = "UNANSWERABLE"


@dataclass(frozen=True)
class NeuralDataReport:
    """What :func:`build_neural_data` wrote and what it left out, by kind."""

    out: Path
    seed: int
    natural: bool
    turns_read: int
    examples: int
    positives: int
    by_source: dict[str, int]
    #: positives by how the message was made: "ablation:it", "ablation:drop", "natural:he", ...
    positive_kinds: dict[str, int]
    #: negatives by kind: "named", "switch-named", "deablation"
    negative_kinds: dict[str, int]
    #: turns not used, by reason: "first-turn", "unanswerable", "natural-same-topic" (names
    #: no subject, points at none clearly), "switch-unnamed", "ablation-unreadable"
    excluded: dict[str, int]
    #: named turns whose subject the (cut) history does not contain: no positive made
    dropped_no_history_span: int
    #: examples of the larger class left out to keep the positive share in the band
    dropped_for_balance: int = 0

    @property
    def positive_share(self) -> float:
        return self.positives / self.examples if self.examples else 0.0


@dataclass(frozen=True)
class _Example:
    conversation: int
    turn: int
    kind: str  # "ablation:<form>", "named", ...
    message: str
    history: tuple[tuple[str, str], ...]
    targets: tuple[str, ...]
    original: str | None

    @property
    def positive(self) -> bool:
        return bool(self.targets)

    def to_json(self) -> dict[str, Any]:
        return {"id": f"{SOURCE}:{self.conversation}:{self.turn}:{self.kind}", "source": SOURCE,
                "message": self.message,
                "history": [{"role": r, "text": t} for r, t in self.history],
                "targets": list(self.targets), "original": self.original}


def _history(turns: Sequence[TopicTurn], i: int) -> tuple[tuple[str, str], ...]:
    """The history of turn ``i``: the earlier questions and answers, the last :data:`HISTORY_TURNS`."""
    out: list[tuple[str, str]] = []
    for t in turns[max(0, i - HISTORY_TURNS):i]:
        out.append(("user", t.question.strip()))
        answer = t.answer.strip()
        # an unanswerable turn got no answer a user saw; "UNANSWERABLE" is a data-set marker
        if answer and answer != _UNANSWERABLE:
            out.append(("assistant", answer[:ANSWER_CHARS]))
    return tuple(out)


def _examples(turns: Sequence[TopicTurn], rng: random.Random, natural: bool,
              counts: Counter[str]) -> Iterator[_Example]:
    """Every example of one conversation, in turn order; ``counts`` gets what was left out."""
    pronouns: dict[str, Counter[str]] = {}
    for i, turn in enumerate(turns):
        if i == 0:
            counts["excluded:first-turn"] += 1
            continue
        answer = turn.answer.strip()
        if not turn.topic or not answer or answer == _UNANSWERABLE:
            counts["excluded:unanswerable"] += 1
            continue
        question = turn.question.strip()
        history = _history(turns, i)
        if turn.topic not in pronouns:
            pronouns[turn.topic] = _pronoun_counts(turns, turn.topic)
        topic_counts = pronouns[turn.topic]
        variants = _variants(turn.topic)
        named = _named(question, variants)

        def make(kind: str, message: str, targets: tuple[str, ...] = (),
                 original: str | None = None, t: TopicTurn = turn,
                 h: tuple[tuple[str, str], ...] = history) -> _Example:
            return _Example(t.conversation, t.turn, kind, message, h, targets, original)

        if named and turn.is_switch:
            yield make("switch-named", question)
            continue
        if named:
            yield make("named", question)
            span = _history_span(variants, history)
            if span is None:
                counts["dropped-no-history-span"] += 1
                continue
            cls, _ = _decide(topic_counts, turn.topic)
            made = _ablate(question, named, cls, _title_description(turn.topic), rng)
            if made is None or made[0].lower() == question.lower() or len(made[0].split()) < 2:
                counts["excluded:ablation-unreadable"] += 1
                continue
            yield make(f"ablation:{made[1]}", made[0], (span,), question)
            continue
        reason = "excluded:switch-unnamed" if turn.is_switch else "excluded:natural-same-topic"
        span = _history_span(variants, history) if natural else None
        labelled = _natural(question, turn.topic, topic_counts, span) if span else None
        if span is None or labelled is None:
            counts[reason] += 1
            continue
        yield make(f"natural:{labelled[0]}", question, (span,))
        yield make("deablation", labelled[1])


def _check(example: _Example) -> bool:
    """Every target occurs (case-insensitively) in some history text."""
    texts = [t.lower() for _, t in example.history]
    return all(any(tg.lower() in t for t in texts) for tg in example.targets)


def _balance(examples: list[_Example], rng: random.Random) -> tuple[list[_Example], int]:
    """Thin the larger class at random to an even split when the share leaves the band."""
    pos = [e for e in examples if e.positive]
    if not examples or BALANCE_BAND[0] <= len(pos) / len(examples) <= BALANCE_BAND[1]:
        return examples, 0
    neg_n = len(examples) - len(pos)
    larger_positive = len(pos) > neg_n
    big = [k for k, e in enumerate(examples) if e.positive == larger_positive]
    drop = set(rng.sample(big, len(big) - min(len(pos), neg_n)))
    return [e for k, e in enumerate(examples) if k not in drop], len(drop)


def build_neural_data(data_root: Path | None, out: Path, *, seed: int = 13,
                      progress: bool = True, natural: bool = True) -> NeuralDataReport:
    """Write the neural resolver's training examples (JSON Lines) to ``out``.

    ``data_root`` is the shared data folder (``None``: ``$TURNSCOPE_DATA`` or
    ``../shared/data``). Same ``seed``, same file. ``natural`` (default) adds the real
    follow-ups labelled through their pronoun or description and their de-ablated twins;
    ``natural=False`` gives the ablation kinds only (see the module docstring).
    Raises :class:`DatasetError` naming the file when TopiOCQA train is missing or garbled.

    >>> report = build_neural_data(Path("/work/shared/data"), Path("/tmp/nd.jsonl"),
    ...                            progress=False)  # doctest: +SKIP
    >>> report.positive_kinds["ablation:it"] > 0, 0.45 <= report.positive_share <= 0.55  # doctest: +SKIP
    (True, True)
    """
    conversations = load_topiocqa_train(data_root)
    rng = random.Random(seed)
    counts: Counter[str] = Counter()
    examples: list[_Example] = []
    dropped_check = 0

    def run(step: Any) -> None:
        nonlocal dropped_check
        for conv in conversations:
            for ex in _examples(conv, rng, natural, counts):
                if _check(ex):
                    examples.append(ex)
                else:
                    dropped_check += 1
            step()

    if progress:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

        with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn()) as bar:
            task = bar.add_task("neural training data", total=len(conversations))
            run(lambda: bar.advance(task))
    else:
        run(lambda: None)

    kept, dropped_balance = _balance(examples, rng)
    out.parent.mkdir(parents=True, exist_ok=True)
    try:
        with out.open("w", encoding="utf-8") as fh:
            for ex in kept:
                fh.write(json.dumps(ex.to_json(), ensure_ascii=False) + "\n")
    except OSError as exc:
        raise DatasetError(f"{out}: cannot write the training examples ({exc})") from None

    pos_kinds = Counter(e.kind for e in kept if e.positive)
    neg_kinds = Counter(e.kind for e in kept if not e.positive)
    excluded = {k.split(":", 1)[1]: v for k, v in sorted(counts.items()) if k.startswith("excluded:")}
    return NeuralDataReport(
        out=out, seed=seed, natural=natural,
        turns_read=sum(len(c) for c in conversations), examples=len(kept),
        positives=sum(pos_kinds.values()), by_source={SOURCE: len(kept)},
        positive_kinds=dict(sorted(pos_kinds.items())),
        negative_kinds=dict(sorted(neg_kinds.items())), excluded=excluded,
        # a target the history lacks can only come from a bug; it is dropped and counted too
        dropped_no_history_span=counts["dropped-no-history-span"] + dropped_check,
        dropped_for_balance=dropped_balance)


def render_sample(path: Path, n: int = 50, seed: int = 13) -> str:
    """A seeded random sample of a generated file, one compact Markdown block per item.

    >>> print(render_sample(Path("/tmp/nd.jsonl"), n=1))  # doctest: +SKIP
    1. `topiocqa-train:301:7:ablation:it` **when was it discovered?** → [Saturn] ...
    """
    try:
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    except (OSError, json.JSONDecodeError) as exc:
        raise DatasetError(f"{path}: cannot read generated examples ({exc})") from None
    picked = sorted(random.Random(seed).sample(range(len(rows)), min(n, len(rows))))
    lines = []
    for k, idx in enumerate(picked, 1):
        r = rows[idx]
        last_q = next((h["text"] for h in reversed(r["history"]) if h["role"] == "user"), "")
        orig = f" (original: _{r['original']}_)" if r["original"] else ""
        lines.append(f"{k}. `{r['id']}` **{r['message']}** → {json.dumps(r['targets'], ensure_ascii=False)}"
                     f"{orig}<br>last user turn: _{last_q}_")
    return "\n".join(lines)
