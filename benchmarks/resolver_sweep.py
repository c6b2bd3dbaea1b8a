"""Threshold sweep of the learned resolver: coverage against contamination.

    python benchmarks/resolver_sweep.py [--set cast21check] [--png sweep.png]

Scores every candidate of every follow-up once with the shipped model, then
re-decides at each threshold (the cap on carried phrases stays the shipped one).
The resolver alone is swept (no structural rules), on a check set by default:
the shipped threshold was chosen out of fold on development data, and this run
only reports what it gives elsewhere. Writes a table and a PNG.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
from resolver_sets import SETS  # type: ignore[import-not-found]
from rich.console import Console
from rich.progress import track
from rich.table import Table

from turnscope.evaluation import check_terms
from turnscope.resolver import HistoryTurn, default_resolver, realize
from turnscope.resolver._candidates import key_of
from turnscope.resolver._ranker import select

THRESHOLDS = [round(0.05 * i, 2) for i in range(1, 20)] + [0.97, 0.99, 1.01]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--set", default="cast21check", choices=list(SETS))
    ap.add_argument("--png", type=Path, default=Path("resolver_sweep.png"))
    args = ap.parse_args()
    console = Console(width=160)
    items = [it for it in SETS[args.set][1]() if it["prefix"]]
    r = default_resolver()
    scored = []
    for it in track(items, description=f"scoring {args.set}", console=console):
        hist = [HistoryTurn(k + 1, t["role"], t["content"]) for k, t in enumerate(it["prefix"])]
        cands, scores = r.score(it["follow_up"], hist)
        mk = key_of(it["follow_up"])
        scores = np.array([0.0 if c.key <= mk else s for c, s in zip(cands, scores, strict=True)])
        scored.append((it, cands, scores))
    rows = []
    for t in THRESHOLDS:
        cov = con = 0
        for it, cands, scores in scored:
            chosen = select(cands, scores, t, r.max_carried) if cands else []
            q, _ = realize(it["follow_up"], [cands[i].text for i in chosen])
            c = check_terms(q, it["required_in_rewrite"], it["forbidden_in_rewrite"])
            cov += c.covered
            con += c.contaminated
        rows.append((t, cov / len(scored), con / len(scored)))
    table = Table(title=f"resolver threshold sweep on {args.set} ({SETS[args.set][0]}, "
                        f"{len(scored)} follow-ups; shipped threshold {r.threshold})")
    for col in ("threshold", "coverage", "contamination"):
        table.add_column(col, justify="right")
    for t, cv, cn in rows:
        mark = " ◀ shipped" if abs(t - r.threshold) < 1e-9 else ""
        table.add_row(f"{t:.2f}{mark}", f"{cv:.3f}", f"{cn:.3f}")
    ship = [(t, cv, cn) for t, cv, cn in rows if abs(t - r.threshold) < 0.013]
    console.print(table)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4.5))
    ax.plot([cn for _, _, cn in rows], [cv for _, cv, _ in rows], "o-", label="learned resolver")
    for t, cv, cn in rows[::3]:
        ax.annotate(f"{t:.2f}", (cn, cv), textcoords="offset points", xytext=(4, 4), fontsize=7)
    if ship:
        ax.plot([ship[0][2]], [ship[0][1]], "r*", ms=14, label=f"shipped threshold {r.threshold}")
    ax.set_xlabel("contamination (share of rewrites with a forbidden term)")
    ax.set_ylabel("required coverage")
    ax.set_title(f"Threshold sweep, {args.set}")
    ax.grid(alpha=0.3)
    ax.legend(loc="lower right")
    fig.tight_layout()
    fig.savefig(args.png, dpi=120)
    console.print(f"wrote {args.png}")


if __name__ == "__main__":
    main()
