"""An experiment of round 14: generic same-topic follow-ups from TopiOCQA train as tagger examples.

    python benchmarks/generic_followups.py [--out DIR] [--min-conversations 30] [--seed 13]

The CAsT 2019 turns the resolver leaves as typed are mostly *generic* follow-ups ("Who are the
main characters?"): they neither name the conversation's subject nor point at it, and need it.
The shipped tagger's training data (``turnscope.resolver._neural_data``) has no such kind: it
counts those turns as "natural-same-topic" and leaves them out unless asked
(``build_neural_data(..., generic=True)``). This writes round 14's experiment (docs/neural.md)
into ``DIR``, the generator's generic examples appended after the shipped data:

- ``generic.jsonl``: a same-topic TopiOCQA train turn (not a switch, answered, not the first)
  whose question does not name the topic, has no pronoun, pointer or locative, is not a
  labelled ``natural`` follow-up, and uses only words common across conversations (each
  content word in the questions of at least ``--min-conversations`` of the 3,209
  conversations; a named sub-subject, e.g. "titan" in a Saturn conversation, is rare and
  fails). Label: the subject as the history writes it (the CAsT convention: a human rewrite
  adds it). Each gets a twin naming the subject ("who is the director of 7 Khoon Maaf?",
  label: nothing), as the ``deablation`` kind does for pronoun follow-ups;
- ``full.jsonl``: the shipped training data (``$TURNSCOPE_CACHE/neural-data-SEED.jsonl``,
  written by ``turnscope train --only neural``) followed by those examples;
- ``subset.jsonl`` / ``control.jsonl``: 4,000 seeded rows of the shipped data plus the
  generic examples, or plus as many other shipped rows (the short fine-tuning comparison).

The label is the weak point: a same-topic question may ask about something its topic's article
says without needing the title in a rewrite. No development or check set is read.
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
from pathlib import Path
from typing import Any

from turnscope.resolver._neural_data import build_neural_data
from turnscope.retrieval._cache import default_cache_dir


def generic_examples(min_conversations: int, seed: int) -> list[dict[str, Any]]:
    """The generator's ``generic`` and ``generic-named`` examples, in its order (conversation,
    turn); round 14's run appended them after the shipped data."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "data.jsonl"
        build_neural_data(None, out, seed=seed, progress=False, generic=True,
                          generic_min_conversations=min_conversations)
        rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines() if line]
    return [r for r in rows if r["id"].rsplit(":", 1)[1] in ("generic", "generic-named")]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=Path("/tmp/gen"))
    ap.add_argument("--min-conversations", type=int, default=30)
    ap.add_argument("--seed", type=int, default=13)
    args = ap.parse_args()
    shipped = default_cache_dir() / f"neural-data-{args.seed}.jsonl"
    if not shipped.exists():
        raise SystemExit(f"{shipped} is missing: run `turnscope train --only neural` first")
    gen = generic_examples(args.min_conversations, args.seed)
    old = [json.loads(line) for line in shipped.read_text(encoding="utf-8").splitlines() if line]
    rng = random.Random(args.seed)
    base = rng.sample(old, 4000)
    taken = {r["id"] for r in base}
    extra = rng.sample([r for r in old if r["id"] not in taken][:20000], len(gen))
    args.out.mkdir(parents=True, exist_ok=True)
    files = {"generic": gen, "full": old + gen, "subset": base + gen, "control": base + extra}
    for name, rows in files.items():
        with (args.out / f"{name}.jsonl").open("w", encoding="utf-8") as fh:
            for r in rows:
                fh.write(json.dumps(r) + "\n")
    print(f"{len(gen) // 2} generic follow-ups (+ as many named twins); files in {args.out}: "
          + ", ".join(f"{k} {len(v)}" for k, v in files.items()))


if __name__ == "__main__":
    main()
