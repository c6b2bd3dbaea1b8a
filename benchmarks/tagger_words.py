"""The tagger alone on the development sets: how often its best-scored history word is one
the human rewrite adds, shipped tagger against another one (round 15).

    python benchmarks/tagger_words.py --other DIR [--label NAME] [--save FILE.json]

``DIR`` holds ``tagger.int8.onnx`` (and ``tokenizer.json``; else the shipped one), e.g. the
output directory of ``train_neural``. For every development message with a history
(CAsT 2019, CANARD dev, the CAsT 2021 dev half; earlier user turns read as their human
rewrites, as the gate is trained), the tagger's best content word outside the message is
*right* when the human rewrite adds it. Messages are ranked by that word's score, and the
table gives how many are right before the wrong ones pass 1%, 2% and 5% of the set's messages:
the tagger's own frontier, before any ranker or gate. No check set is read.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import track
from rich.table import Table

from turnscope.resolver._candidates import key_of
from turnscope.resolver._neural import NeuralTagger
from turnscope.resolver._neural_dev import needed_stems
from turnscope.resolver._ranker import tagger_view
from turnscope.resolver._train import TRAINING_SETS, _history

SHARES = (0.01, 0.02, 0.05)


def top_words(tagger: NeuralTagger, items: list[dict[str, Any]]) -> list[tuple[float, bool]]:
    """(best word score, is it a word the human rewrite adds) per message with a history."""
    out = []
    for it in items:
        if not it["prefix"]:
            continue
        hist = tagger_view(_history(it), True)
        raw = key_of(it["follow_up"])
        needed = needed_stems(it, [t.text for t in hist])
        stems = {s: v for s, v in tagger.evidence(it["follow_up"], hist).stems.items() if s not in raw}
        if not stems:
            out.append((0.0, False))
            continue
        best = max(stems, key=lambda s: stems[s])
        out.append((stems[best], best in needed))
    return out


def right_before(scored: list[tuple[float, bool]], wrong_limit: int) -> int:
    """Right top words among the best-scored messages before the wrong ones pass ``wrong_limit``."""
    right = wrong = 0
    for _, good in sorted(scored, key=lambda x: -x[0]):
        if good:
            right += 1
        else:
            wrong += 1
            if wrong > wrong_limit:
                break
    return right


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--other", type=Path, required=True)
    ap.add_argument("--label", default="other tagger")
    ap.add_argument("--save", type=Path)
    args = ap.parse_args()
    tok = args.other / "tokenizer.json"
    taggers = {"shipped": NeuralTagger(),
               args.label: NeuralTagger(args.other / "tagger.int8.onnx", tok if tok.exists() else None)}
    table = Table(title="tagger alone: right top words before the wrong ones pass 1% / 2% / 5% of messages")
    table.add_column("set")
    table.add_column("messages", justify="right")
    for name in taggers:
        table.add_column(name, justify="right")
    figures: dict[str, Any] = {}
    for set_name, load in TRAINING_SETS.items():
        items = load(None)
        scored = {name: top_words(t, list(track(items, description=f"{set_name}: {name}")))
                  for name, t in taggers.items()}
        n = len(next(iter(scored.values())))
        limits = [int(n * s) for s in SHARES]
        figures[set_name] = {"messages": n, "wrong_limits": limits,
                             **{name: [right_before(sc, k) for k in limits] for name, sc in scored.items()}}
        table.add_row(set_name, str(n), *(" / ".join(map(str, figures[set_name][name])) for name in taggers))
    Console().print(table)
    if args.save:
        args.save.write_text(json.dumps(figures, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
