"""Threshold sweep of the learned resolver: coverage against contamination.

    python benchmarks/resolver_sweep.py [--set cast21check] [--png FILE] [--json FILE]

Replays every conversation of the set in sessions at each gate threshold, the same for
every message (the cap on carried phrases stays the shipped one), and once with the
shipped pair of thresholds (one for messages with a pronoun slot, one for the rest). A
session's earlier rewrites feed the later ones, so a threshold is judged where it
acts, not on items taken one by one. The
baselines (raw, previous user turn, previous exchange, whole history, the
organisers' automatic rewrite where the set has one) are measured in
the same run and drawn beside the curve. Runs on a check set by default: the
shipped thresholds were chosen on development data, and this only reports what it
gives elsewhere. Writes a table, a PNG and the rows as JSON.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from resolver_sets import SETS, figures, replay  # type: ignore[import-not-found]
from rich.console import Console
from rich.table import Table

from turnscope import Session
from turnscope.datasets import cast_baselines
from turnscope.resolver import Resolver, default_resolver

THRESHOLDS = [0.3, 0.4, 0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95, 1.01]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--set", default="cast21check", choices=list(SETS))
    ap.add_argument("--png", type=Path, default=Path("benchmarks/figures/resolver_sweep.png"))
    ap.add_argument("--json", type=Path, default=Path("benchmarks/figures/resolver_sweep.json"))
    ap.add_argument("--limit", type=int, default=0, help="first N items (quick runs)")
    ap.add_argument("--compare", type=Path, default=None,
                    help="another resolver model file (e.g. a retrained candidate) swept beside")
    ap.add_argument("--compare-label", default="other model")
    args = ap.parse_args()
    console = Console(width=160)
    items = SETS[args.set][1]()
    if args.limit:
        items = items[: args.limit]
    r = default_resolver()
    # the curve: one threshold for every message; the shipped point: its pair (slot, other)
    thresholds = sorted(THRESHOLDS)
    def curve(model: Resolver, label: str) -> list[tuple[float, float, float]]:
        out = []
        for t in thresholds:
            rt = model.with_threshold(t)

            def make(rt: Resolver = rt) -> Session:
                return Session(resolver=rt)

            f = figures(items, replay(items, make, console, f"{label} at {t:.2f}"))
            out.append((t, f["coverage"], f["contamination"]))
            console.print(f"{label} {t:.2f}: coverage {f['coverage']:.3f}, "
                          f"contamination {f['contamination']:.3f}", highlight=False)
        return out

    rows = curve(r, "threshold")
    other = curve(Resolver.load(args.compare, embedder=r.embedder), args.compare_label) \
        if args.compare is not None else []
    shipped = figures(items, replay(items, lambda: Session(resolver=r), console, "shipped"))
    ship_label = f"shipped: {r.slot_threshold:.2f} with a pronoun slot, {r.threshold:.2f} without"
    console.print(f"{ship_label}: coverage {shipped['coverage']:.3f}, "
                  f"contamination {shipped['contamination']:.3f}", highlight=False)
    rules = figures(items, replay(items, lambda: Session(resolver=None), console, "rules alone"))
    base: dict[str, dict[str, float]] = {"rules alone (no learned resolver)": rules}
    for name, qs in cast_baselines(items).items():
        if len(qs) == len(items):
            base[name] = figures(items, qs)
    n = sum(1 for it in items if it["prefix"])
    table = Table(title=f"resolver threshold sweep on {args.set} ({SETS[args.set][0]} set, {n} "
                        f"follow-ups, session replay; {ship_label})")
    for col in ("threshold / system", "coverage", "contamination"):
        table.add_column(col, justify="right")
    for t, cv, cn in rows:
        table.add_row(f"{t:.2f}", f"{cv:.3f}", f"{cn:.3f}")
    for t, cv, cn in other:
        table.add_row(f"{args.compare_label} {t:.2f}", f"{cv:.3f}", f"{cn:.3f}", style="dim")
    table.add_row(ship_label, f"{shipped['coverage']:.3f}", f"{shipped['contamination']:.3f}",
                  style="bold")
    for name, f in base.items():
        table.add_row(name, f"{f['coverage']:.3f}", f"{f['contamination']:.3f}", style="dim")
    console.print(table)
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps({"set": args.set, "shipped_threshold": r.threshold,
                                     "shipped_slot_threshold": r.slot_threshold,
                                     "shipped": shipped,
                                     "sweep": [{"threshold": t, "coverage": cv, "contamination": cn}
                                               for t, cv, cn in rows],
                                     "baselines": base,
                                     "compare": {"label": args.compare_label,
                                                 "sweep": [{"threshold": t, "coverage": cv, "contamination": cn}
                                                           for t, cv, cn in other]} if other else None},
                                    indent=1) + "\n", encoding="utf-8")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.5, 5.5))
    ax.plot([cn for _, _, cn in rows], [cv for _, cv, _ in rows], "o-", label="learned resolver")
    if other:
        ax.plot([cn for _, _, cn in other], [cv for _, cv, _ in other], "x--", color="grey",
                label=args.compare_label)
    for name, f in base.items():
        ax.plot([f["contamination"]], [f["coverage"]], "s", ms=6, alpha=0.7, label=name)
    for t, cv, cn in rows[::2]:
        ax.annotate(f"{t:.2f}", (cn, cv), textcoords="offset points", xytext=(4, 4), fontsize=7)
    ax.plot([shipped["contamination"]], [shipped["coverage"]], "r*", ms=14, label=ship_label)
    ax.set_xlabel("contamination (share of rewrites with a forbidden term)")
    ax.set_ylabel("required coverage")
    ax.set_title(f"Threshold sweep, {args.set}")
    ax.grid(alpha=0.3)
    ax.legend(loc="lower right", fontsize=7)
    fig.tight_layout()
    fig.savefig(args.png, dpi=120)
    console.print(f"wrote {args.png}")


if __name__ == "__main__":
    main()
