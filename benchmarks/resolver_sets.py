"""Coverage / contamination on every development and check set (docs/splits.md), beside
the baselines (raw message, previous user turn, previous exchange, whole history, the
organisers' automatic rewrite, the human rewrite).

    python benchmarks/resolver_sets.py [--sets cast19,canard,cast21dev,cast20,cast21check]
        [--policies default] [--save figures.json] [--before before.json] [--limit N]

Items of one conversation are replayed once, in order: the session sees every earlier
user turn and every response, as a chat backend would feed it. ``--before FILE`` adds the
rows of an earlier run (e.g. the default before a change) to the table.

A third figure, **wrong word**, is the share of rewrites that hold a content word found in
neither the raw message nor the human rewrite (content words, by stem). The
forbidden list only knows the conversation's topic words; a rewrite that swaps "the first
band" for a name from the answer, or appends a heading of a passage, is wrong in a way it
cannot see. Sets without human rewrites show "–" there.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from turnscope import Session
from turnscope._items import replay_conversations
from turnscope.datasets import cast_baselines, content_words, load_canard, load_cast
from turnscope.evaluation import check_terms


def _multidomain() -> list[dict[str, Any]]:
    from importlib import resources

    text = (resources.files("turnscope") / "data" / "multidomain" / "items.jsonl").read_text("utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


SETS: dict[str, tuple[str, Callable[[], list[dict[str, Any]]]]] = {
    "cast19": ("dev", lambda: load_cast(2019)),
    "canard": ("dev", load_canard),
    "cast21dev": ("dev", lambda: load_cast(2021, part="dev")),
    "cast20": ("check", lambda: load_cast(2020)),
    "cast21check": ("check", lambda: load_cast(2021, part="check")),
    # hand-written before the resolver, never edited since: a check set for everyone
    "multidomain": ("check", _multidomain),
}


def replay(items: list[dict[str, Any]], make_session: Callable[[], Session],
           console: Console | None = None, label: str = "") -> list[str]:
    """The rewrite of every item's follow-up, each conversation replayed once."""
    from rich.progress import Progress

    with Progress(console=console, transient=True) as progress:
        task = progress.add_task(label, total=len(items))
        results = replay_conversations(items, make_session, lambda k: progress.advance(task, k))
    return [r.query for r in results]


def wrong_words(query: str, raw: str, human: str) -> set[str]:
    """Content words (stems) of ``query`` that neither ``raw`` nor ``human`` holds."""
    return set(content_words(query)) - set(content_words(raw)) - set(content_words(human))


def figures(items: list[dict[str, Any]], queries: list[str]) -> dict[str, float | None]:
    cov = con = wrong = n = 0
    judged = all(item.get("human_rewrite") for item in items if item["prefix"])
    for item, q in zip(items, queries, strict=True):
        if not item["prefix"]:
            continue
        c = check_terms(q, item["required_in_rewrite"], item["forbidden_in_rewrite"])
        cov += c.covered
        con += c.contaminated
        if judged:
            wrong += bool(wrong_words(q, item["follow_up"], item["human_rewrite"]))
        n += 1
    return {"coverage": cov / n, "contamination": con / n,
            "wrong_word": wrong / n if judged else None, "n": n}


def _cell(f: dict[str, Any] | None) -> str:
    if f is None:
        return "–"
    w = f.get("wrong_word")
    return f"{f['coverage']:.2f} / {f['contamination']:.2f} / " + ("–" if w is None else f"{w:.2f}")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", default=",".join(SETS))
    ap.add_argument("--policies", default="default")
    ap.add_argument("--save", type=Path)
    ap.add_argument("--before", type=Path, help="figures.json of an earlier run to show beside")
    ap.add_argument("--before-label", default="earlier run")
    ap.add_argument("--limit", type=int, default=0, help="first N items per set (quick runs)")
    ap.add_argument("--threshold", type=float, default=None, help="override the gate threshold")
    ap.add_argument("--resolver", choices=["default", "none"], default="default",
                    help="none: the embedded rules alone (Session(resolver=None))")
    ap.add_argument("--decider", choices=["default", "none", "both"], default="default",
                    help="the reference decider (docs/decider.md): on, off (the rules alone), or both "
                         "side by side in one run")
    args = ap.parse_args(argv)
    console = Console(width=200, stderr=True)
    names = [s.strip() for s in args.sets.split(",") if s.strip()]
    unknown = [s for s in names if s not in SETS]
    if unknown:
        sys.exit(f"unknown set(s) {unknown}; choose from {list(SETS)}")
    results: dict[str, dict[str, dict[str, float | None]]] = {}
    for name in names:
        items = SETS[name][1]()
        if args.limit:
            items = items[: args.limit]
        systems = dict(cast_baselines(items))
        for pol in [p.strip() for p in args.policies.split(",") if p.strip()]:
            resolver: Any = None if args.resolver == "none" else "default"
            if resolver is not None and args.threshold is not None:
                from turnscope.resolver import default_resolver

                resolver = default_resolver().with_threshold(args.threshold)
            variants = {"default": [("", "default")], "none": [("", None)],
                        "both": [(" (rules alone)", None), ("", "default")]}[args.decider]
            for suffix, decider in variants:
                def make(pol: str = pol, resolver: Any = resolver, decider: Any = decider) -> Session:
                    return Session(policy=pol, resolver=resolver, decider=decider)

                systems[f"turnscope:{pol}{suffix}"] = replay(items, make, console, f"{name} {pol}{suffix}")
        results[name] = {k: figures(items, qs) for k, qs in systems.items()}
    before: dict[str, Any] = json.loads(args.before.read_text()) if args.before else {}
    rows = sorted({k for r in results.values() for k in r} |
                  {f"before:{k}" for r in before.values() for k in r if k.startswith("turnscope")})
    table = Table(title="coverage / contamination / wrong word over follow-up turns")
    table.add_column("system")
    for name in names:
        table.add_column(f"{name} ({SETS[name][0]})", justify="right")
    for row in rows:
        cells = []
        for name in names:
            src = before.get(name, {}) if row.startswith("before:") else results[name]
            f = src.get(row.removeprefix("before:"))
            cells.append(_cell(f))
        label = row.replace("before:turnscope", args.before_label + " turnscope") \
            if row.startswith("before:") else row
        table.add_row(label, *cells)
    Console(width=200).print(table)
    if args.save:
        args.save.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
