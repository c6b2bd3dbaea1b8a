"""Batch rewriting (``turnscope.BatchRewriter``) against the per-item replay, on
TopiOCQA-style items: one item per turn, the conversation so far as its history.

Run from the repository root::

    python benchmarks/batch_rewrite.py [--data-root DIR] [--items 3000] [--subset 300]
                                       [--seed 13] [--json FILE]

Items come from TopiOCQA dev (2,514 turns) in file order, topped up from the TopiOCQA
train part when ``--items`` asks for more; each turn's question is the follow-up and the
earlier questions and answers are its history (an empty answer is left out, as a chat
log would have none). Both data sets are read in place from the data root.

The batch rewrites all items; the per-item replay (a fresh session replaying each item's
whole history, what ``turnscope rewrite`` did before) rewrites a seeded sample of
``--subset`` items, in file order, and its output must equal the batch's on them, line for
line and trace for trace. The two run in step (each picked item is replayed right after
the batch has rewritten it), so that a change in the load of the machine falls on both
alike, and each has a resolver with an embedding cache of its own. Two passes:

* **end to end**, both caches empty at the start: each question is embedded once, as in
  a full run of either kind (e5 embeds every user turn once; a later item finds it in
  the cache). The per-item replay's cache is first filled, untimed, with the questions
  a full per-item run would have embedded by the time it reached each picked item, so
  that it pays for its new follow-ups only, not for histories embedded at earlier items;
* **replay only**: the same again with every embedding cached: the work that sharing
  histories saves, without e5.

Other caches are process-wide and keyed by text (extractions, candidate phrases): the
per-item replay of an item finds them warm from the batch's rewrite of it just before,
so the ratio errs towards the per-item replay. OpenMP threads wait passively (``OMP_WAIT_POLICY``, as ``turnscope
rewrite`` sets it): spinning ones make every turn several times slower on busy cores.
"""

from __future__ import annotations

import os

# set before e5 or LightGBM load their OpenMP runtimes (see the module docstring)
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import argparse
import json
import random
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich import box
from rich.console import Console
from rich.progress import track
from rich.table import Table

from turnscope import BatchRewriter, Session, TurnResult
from turnscope._items import FollowUpItem, rewrite_item
from turnscope.datasets import TopicTurn, load_topiocqa, load_topiocqa_train, resolve_data_root
from turnscope.resolver import Resolver
from turnscope.resolver._candidates import CachedEmbedder

DEFAULT_ITEMS = 3000
DEFAULT_SUBSET = 300
DEFAULT_SEED = 13


def conversation_items(convs: Sequence[Sequence[TopicTurn]], split: str,
                       limit: int) -> list[FollowUpItem]:
    """One item per turn (at most ``limit``), in order: earlier turns as history."""
    out: list[FollowUpItem] = []
    for conv in convs:
        history: list[dict[str, str]] = []
        for t in conv:
            if len(out) >= limit:
                return out
            out.append(FollowUpItem.model_validate({
                "id": f"topiocqa-{split}-{t.conversation}-{t.turn}",
                "prefix": list(history), "follow_up": t.question}))
            history.append({"role": "user", "content": t.question})
            if t.answer.strip():
                history.append({"role": "assistant", "content": t.answer})
    return out


def build_items(data_root: Path | None, n: int) -> tuple[list[FollowUpItem], int]:
    """``n`` items: TopiOCQA dev, then the train part; also how many came from dev."""
    root = resolve_data_root(data_root)
    items = conversation_items(load_topiocqa(root), "dev", n)
    from_dev = len(items)
    if len(items) < n:
        items += conversation_items(load_topiocqa_train(root), "train", n - len(items))
    return items, from_dev


class FreshSessions:
    """Makes sessions that share one resolver whose embedding cache starts empty (the
    process-wide default resolver's cache would carry one run's embeddings into the next)."""

    def __init__(self) -> None:
        self.resolver = Resolver.load(embedder=CachedEmbedder())

    def __call__(self) -> Session:
        return Session(resolver=self.resolver)


def embedded_before(items: Sequence[FollowUpItem], picked: Sequence[int]) -> list[str]:
    """The questions a full per-item run has embedded when it reaches each picked item,
    among those the item reads: its history's, and its follow-up if an earlier item
    asked it too. A picked item's new follow-up is left out, though a later picked item
    has it in its history: the per-item run embeds it at its own item, as a full run does."""
    chosen = set(picked)
    seen: set[str] = set()
    have: set[str] = set()
    new: set[str] = set()
    for i, it in enumerate(items):
        if i in chosen:
            have.update(t.content for t in it.prefix if t.role == "user")
            (have if it.follow_up in seen else new).add(it.follow_up)
        seen.add(it.follow_up)
        seen.update(t.content for t in it.prefix if t.role == "user")
    return sorted(have - new)


@dataclass
class Run:
    """One pass: the batch over every item, the per-item replay of the picked ones."""

    batch: list[TurnResult] = field(default_factory=list)
    batch_s: list[float] = field(default_factory=list)
    per_item: list[TurnResult] = field(default_factory=list)
    per_item_s: list[float] = field(default_factory=list)


def run(items: Sequence[FollowUpItem], picked: Sequence[int], batch_sessions: FreshSessions,
        item_sessions: FreshSessions, label: str) -> Run:
    """Both kinds in step, item by item: each picked item is replayed on its own right
    after the batch has rewritten it, so a change in the machine's load (its cores are
    shared) falls on both alike. The process-wide text caches are then warm for the
    per-item replay's follow-up: the comparison errs towards it."""
    out = Run()
    batch = BatchRewriter(batch_sessions)
    chosen = set(picked)
    for i, it in enumerate(track(items, description=label, transient=True,
                                 console=Console(stderr=True))):
        t0 = time.perf_counter()
        out.batch.append(batch.rewrite(it))
        out.batch_s.append(time.perf_counter() - t0)
        if i in chosen:
            t0 = time.perf_counter()
            out.per_item.append(rewrite_item(it, item_sessions))
            out.per_item_s.append(time.perf_counter() - t0)
    return out


def _line(result: TurnResult, item: FollowUpItem) -> str:
    return json.dumps(result.to_output(item.id), ensure_ascii=False)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    ap.add_argument("--data-root", type=Path, default=None)
    ap.add_argument("--items", type=int, default=DEFAULT_ITEMS)
    ap.add_argument("--subset", type=int, default=DEFAULT_SUBSET,
                    help="items the per-item replay is timed on (a seeded sample)")
    ap.add_argument("--seed", type=int, default=DEFAULT_SEED)
    ap.add_argument("--json", type=Path, default=None, help="also write the figures here")
    args = ap.parse_args(argv)
    if args.items < 1 or not 1 <= args.subset <= args.items:
        ap.error("need --items >= 1 and 1 <= --subset <= --items")

    console = Console()
    items, from_dev = build_items(args.data_root, args.items)
    picked = sorted(random.Random(args.seed).sample(range(len(items)), args.subset))
    subset = [items[i] for i in picked]
    console.print(f"{len(items)} items ({from_dev} from TopiOCQA dev, "
                  f"{len(items) - from_dev} from the train part), "
                  f"{sum(len(it.prefix) for it in items) / len(items):.1f} history turns "
                  f"an item; per-item replay on {len(subset)} (seed {args.seed})",
                  highlight=False)

    # load e5, LightGBM and the models before any clock starts
    warm_up = FreshSessions()
    rewrite_item(FollowUpItem.model_validate({
        "id": "warm-up", "follow_up": "And where was she born?",
        "prefix": [{"role": "user", "content": "Who wrote Middlemarch?"},
                   {"role": "assistant", "content": "George Eliot."}]}), warm_up)

    batch_sessions, item_sessions = FreshSessions(), FreshSessions()
    item_sessions.resolver.embedder.query(embedded_before(items, picked))
    prefilled = item_sessions.resolver.embedder.misses
    cold = run(items, picked, batch_sessions, item_sessions, "end to end")
    # e5 calls each kind made (a cache miss is one embedding): both embed each question once
    embedded = {"batch": batch_sessions.resolver.embedder.misses,
                "per_item": item_sessions.resolver.embedder.misses - prefilled}
    questions = len({it.follow_up for it in items})
    warm = run(items, picked, batch_sessions, item_sessions, "replay only")

    reference = [_line(r, it) for r, it in zip(cold.per_item, subset, strict=True)]
    identical = all(
        [_line(p.batch[i], items[i]) for i in picked] == reference
        and [_line(x, it) for x, it in zip(p.per_item, subset, strict=True)] == reference
        and all(p.batch[i] == x for i, x in zip(picked, p.per_item, strict=True))
        for p in (cold, warm))

    rows: list[dict[str, Any]] = []
    for label, passed in (("end to end", cold), ("replay only", warm)):
        tb = passed.batch_s
        b_all, b_sub, it_ms = (1000 * statistics.fmean(x) for x in
                               (tb, [tb[i] for i in picked], passed.per_item_s))
        rows.append({"figure": label, "batch_ms_all": b_all, "batch_ms_subset": b_sub,
                     "per_item_ms_subset": it_ms, "ratio_subset": it_ms / b_sub,
                     "ratio_vs_all": it_ms / b_all, "batch_total_s": sum(tb)})

    table = Table(title=f"batch rewriting vs per-item replay, TopiOCQA-style items "
                        f"(OMP_WAIT_POLICY={os.environ.get('OMP_WAIT_POLICY')})",
                  box=box.SIMPLE_HEAD)
    for col in ("", f"batch, {len(items)} items", f"batch, same {len(subset)} items",
                f"per item, {len(subset)} items", "ratio (same items)", "ratio (vs all)"):
        table.add_column(col, justify="left" if not col else "right")
    for r in rows:
        table.add_row(r["figure"], f"{r['batch_ms_all']:.1f} ms  ({r['batch_total_s']:.0f} s)",
                      f"{r['batch_ms_subset']:.1f} ms", f"{r['per_item_ms_subset']:.1f} ms",
                      f"{r['ratio_subset']:.2f}x", f"{r['ratio_vs_all']:.2f}x")
    console.print(table)
    console.print(f"e5 embeddings in the end-to-end pass: batch {embedded['batch']} for "
                  f"{questions} distinct questions; per-item replay {embedded['per_item']} "
                  f"for {len(subset)} items", highlight=False)
    console.print(f"output identical on the {len(subset)} items (JSON lines and results, "
                  f"both runs): {'yes' if identical else 'NO'}", highlight=False)
    if args.json is not None:
        args.json.write_text(json.dumps({
            "items": len(items), "from_dev": from_dev, "subset": len(subset),
            "seed": args.seed, "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY"),
            "identical": identical, "embedded": embedded, "questions": questions,
            "rows": rows}, indent=2) + "\n", encoding="utf-8")
    return 0 if identical else 1


if __name__ == "__main__":
    sys.exit(main())
