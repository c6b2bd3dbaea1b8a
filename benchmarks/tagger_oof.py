"""How well the neural tagger reads the development sets, out of fold.

    python benchmarks/tagger_oof.py [--synthetic DIR] [--stacked DIR] [--save FILE]

For every development message with a history (CAsT 2019, CANARD dev, the even CAsT 2021
topics; docs/splits.md) the tagger scores each content stem of the history it reads; the
label is whether the human rewrite adds that stem. The AUC of those scores, per set, for:

- the synthetic-stage tagger (TopiOCQA follow-ups only; it never saw these sets): the
  shipped one, or ``--synthetic DIR``;
- the stacked fold taggers: each message scored by the tagger fine-tuned on the *other*
  folds, i.e. the scores the resolver's gate learns from. ``--stacked DIR`` holds the
  stacked tagger whose ``tagger.json`` names its fold taggers (``turnscope train --only
  neural --stack`` writes it into the package; default ``$TURNSCOPE_CACHE/neural-stacked-13``,
  where round 13 kept a copy before restoring the shipped files).

No PyTorch needed.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from rich.console import Console
from rich.table import Table

from turnscope.resolver._neural import NeuralTagger
from turnscope.resolver._neural_dev import dev_rows, fold_taggers, oof_stem_auc
from turnscope.resolver._train import DEFAULT_FOLDS, TRAINING_SETS
from turnscope.retrieval._cache import default_cache_dir

SHIPPED = Path(__file__).resolve().parent.parent / "turnscope" / "data" / "models" / "neural"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--synthetic", type=Path, default=SHIPPED)
    ap.add_argument("--stacked", type=Path, default=default_cache_dir() / "neural-stacked-13")
    ap.add_argument("--save", type=Path)
    args = ap.parse_args()
    console = Console()
    loaded = {name: load(None) for name, load in TRAINING_SETS.items()}
    rows = dev_rows(loaded, DEFAULT_FOLDS)
    base = NeuralTagger(args.synthetic / "tagger.int8.onnx", SHIPPED / "tokenizer.json")
    synthetic = oof_stem_auc(rows, dict.fromkeys(range(DEFAULT_FOLDS), base))
    folds = fold_taggers(args.stacked, DEFAULT_FOLDS)
    if folds is None:
        raise SystemExit(f"the tagger in {args.stacked} is not stacked: there are no fold taggers to compare")
    stacked = oof_stem_auc(rows, folds)
    table = Table(title="tagger stem AUC on the development sets (label: the human rewrite adds the stem)")
    for col in ("set", "messages", "synthetic stage", "stacked, out of fold"):
        table.add_column(col, justify="right")
    for name in loaded:
        n = sum(1 for r in rows if r["set"] == name)
        table.add_row(name, str(n), f"{synthetic[name]:.3f}", f"{stacked[name]:.3f}")
    console.print(table)
    if args.save:
        args.save.write_text(json.dumps({"synthetic": synthetic, "stacked_oof": stacked}, indent=1) + "\n")


if __name__ == "__main__":
    main()
