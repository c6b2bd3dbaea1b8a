"""Does a session keep the subject? The previous user turn as a human rewrite against the
resolver's own rewrite, on the development sets (round 15).

    python benchmarks/session_chain.py [--pair 0.8,0.85] [--save FILE.json]

Fits the resolver's fold models as training does (shipped tagger, seed 13), replays every
development conversation in a session by the fold model that never saw it at the threshold
pair, and counts, over the messages that need a word from earlier turns, how often every
needed word is in the previous user turn: read as its human rewrite (what the gate is trained
on) and read as the session's own rewrite (what it sees at run time). Also prints the replay's
coverage / contamination, and the same fold resolver's on each message alone with the human
rewrites as its history (*teacher-forced*: what the session would reach if it never lost the
subject; the resolver only, without the session's structural rules). No check set is read.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from turnscope._items import replay_conversations
from turnscope._session import Session
from turnscope.evaluation import check_terms
from turnscope.resolver._candidates import key_of
from turnscope.resolver._embedcache import CachedEmbedder
from turnscope.resolver._neural import default_tagger
from turnscope.resolver._neural_dev import needed_stems
from turnscope.resolver._ranker import tagger_view
from turnscope.resolver._replay import conversation_of, fold_of, fold_resolver
from turnscope.resolver._train import (
    DEFAULT_FOLDS,
    DEFAULT_ROUNDS,
    DEFAULT_SEED,
    NN_READS_REWRITES,
    TRAINING_SETS,
    _fit_folds,
    _history,
    build_examples,
)
from turnscope.retrieval._cache import default_cache_dir


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pair", default="0.8,0.85", help="slot, other threshold (the shipped pair)")
    ap.add_argument("--max-carried", type=int, default=3)
    ap.add_argument("--save", type=Path)
    args = ap.parse_args()
    slot, other = (float(x) for x in args.pair.split(","))
    console = Console(width=160)
    embedder = CachedEmbedder(disk=default_cache_dir() / "resolver-embeddings.npz")
    tagger = default_tagger()
    loaded = {name: load(None) for name, load in TRAINING_SETS.items()}
    examples = []
    with console.status("features and fold models"):
        for name, items in loaded.items():
            examples.extend(build_examples(items, name, embedder, None, tagger, NN_READS_REWRITES))
        examples = [e for e in examples if len(e.y)] + [e for e in examples if not len(e.y)]
        folded = _fit_folds(examples, DEFAULT_FOLDS, DEFAULT_SEED, DEFAULT_ROUNDS)
    table = Table(title=f"the previous user turn holds every needed word (session pair {slot}, {other})")
    for col in ("set", "needing messages", "human rewrite", "own rewrite", "session coverage / contamination",
                "teacher-forced coverage / contamination"):
        table.add_column(col, justify="right")
    figures: dict[str, Any] = {}
    for name, items in loaded.items():
        query: dict[str, str] = {}
        forced: dict[str, str] = {}
        for k in range(DEFAULT_FOLDS):
            part = [it for it in items if fold_of(conversation_of(it), DEFAULT_FOLDS) == k]
            resolver = fold_resolver(folded.rankers[k], folded.gates[k], (slot, other), args.max_carried,
                                     embedder, NN_READS_REWRITES, tagger)
            def session(r: Any = resolver) -> Session:
                return Session(resolver=r)

            for it, res in zip(part, replay_conversations(part, session), strict=True):
                query[it["id"]] = res.query
                if it["prefix"]:
                    forced[it["id"]] = resolver.resolve(it["follow_up"], _history(it)).query
        previous: dict[str, str | None] = {}
        last: dict[str, str] = {}
        for it in items:  # conversation order: the previous item of a conversation is its previous turn
            previous[it["id"]] = last.get(conversation_of(it))
            last[conversation_of(it)] = query[it["id"]]
        needing = in_human = in_own = covered = contaminated = with_history = f_cov = f_con = 0
        for it in items:
            if not it["prefix"]:
                continue
            with_history += 1
            check = check_terms(query[it["id"]], it["required_in_rewrite"], it["forbidden_in_rewrite"])
            covered += check.covered
            contaminated += check.contaminated
            teacher = check_terms(forced[it["id"]], it["required_in_rewrite"], it["forbidden_in_rewrite"])
            f_cov += teacher.covered
            f_con += teacher.contaminated
            hist = tagger_view(_history(it), True)
            users = [t for t in hist if t.role == "user"]
            needed = needed_stems(it, [t.text for t in hist])
            if not needed or not users:
                continue
            needing += 1
            in_human += needed <= key_of(users[-1].text)
            own = previous[it["id"]]
            in_own += own is not None and needed <= key_of(own)
        figures[name] = {"needing": needing, "in_human": in_human / needing, "in_own": in_own / needing,
                         "coverage": covered / with_history, "contamination": contaminated / with_history,
                         "forced_coverage": f_cov / with_history, "forced_contamination": f_con / with_history}
        f = figures[name]
        table.add_row(name, str(needing), f"{f['in_human']:.3f}", f"{f['in_own']:.3f}",
                      f"{f['coverage']:.3f} / {f['contamination']:.3f}",
                      f"{f['forced_coverage']:.3f} / {f['forced_contamination']:.3f}")
    console.print(table)
    if args.save:
        args.save.write_text(json.dumps(figures, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
