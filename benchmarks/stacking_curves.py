"""Two resolvers' development-replay calibration rows side by side (by default the shipped
one against the one trained on stacked tagger scores).

    python benchmarks/stacking_curves.py [--stacked HEADER] [--base HEADER] [--labels A,B] [--png FILE]

Both model headers hold the session-replay calibration rows: every development conversation
(CANARD: 150 dialogues) replayed by fold models that never saw it, at each (slot, other)
gate threshold pair, averaged over two seeds. This prints both models' rows per set and
draws coverage against contamination, one panel per set. No check set is read. The stacked
header is the one round 13 measured (``turnscope train --only neural --stack`` then
``--only resolver``), kept in ``benchmarks/figures/resolver_stacked_header_issue20.json``.
``--base`` replaces the shipped model (a model file or a header), ``--labels`` the two names
(round 14 compared the round-12 resolver with the one that also learns from its own
histories this way).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

HERE = Path(__file__).resolve().parent
SHIPPED = HERE.parent / "turnscope" / "data" / "models" / "resolver.txt"


def rows(header: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    meta = json.loads(header.read_text(encoding="utf-8").splitlines()[0])
    return meta, sorted(meta["calibration"], key=lambda r: (r["slot_threshold"], r["threshold"]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--stacked", type=Path, default=HERE / "figures" / "resolver_stacked_header_issue20.json")
    ap.add_argument("--base", type=Path, default=SHIPPED)
    ap.add_argument("--labels", default="shipped (synthetic tagger),stacked fold taggers")
    ap.add_argument("--title", default="shipped vs stacked tagger")
    ap.add_argument("--png", type=Path, default=HERE / "figures" / "stacking_curves_issue20.png")
    args = ap.parse_args()
    base_label, other_label = args.labels.split(",", 1)
    models = {base_label: rows(args.base), other_label: rows(args.stacked)}
    sets = list(next(iter(models.values()))[1][0]["sets"])
    table = Table(title="development session replay, coverage / contamination per threshold pair")
    table.add_column("slot, other")
    for label in models:
        for name in sets:
            table.add_column(f"{name}\n{label}", justify="right")
        table.add_column(f"objective\n{label}", justify="right")
    (_, first), (_, second) = models.values()
    for a, b in zip(first, second, strict=True):
        cells = [f"{a['slot_threshold']}, {a['threshold']}"]
        for r in (a, b):
            cells += [f"{r['sets'][n]['coverage']:.3f} / {r['sets'][n]['contamination']:.3f}" for n in sets]
            cells.append(f"{r['objective']:.4f}")
        table.add_row(*cells)
    Console(width=200).print(table)
    for label, (meta, _) in models.items():
        print(f"{label}: chosen ({meta['slot_threshold']}, {meta['threshold']}), at most {meta['max_carried']}")

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(sets), figsize=(5 * len(sets), 4.2))
    for ax, name in zip(axes, sets, strict=True):
        for (label, (meta, rs)), marker in zip(models.items(), ("o", "s"), strict=True):
            xs = [r["sets"][name]["contamination"] for r in rs]
            ys = [r["sets"][name]["coverage"] for r in rs]
            ax.scatter(xs, ys, marker=marker, label=label, alpha=0.75)
            chosen = next(r for r in rs if (r["slot_threshold"], r["threshold"])
                          == (meta["slot_threshold"], meta["threshold"]))
            ax.scatter([chosen["sets"][name]["contamination"]], [chosen["sets"][name]["coverage"]],
                       marker=marker, s=160, facecolors="none", edgecolors="black")
        ax.set_title(f"{name} (development replay)")
        ax.set_xlabel("contamination")
        ax.set_ylabel("coverage")
        ax.grid(alpha=0.3)
    axes[0].legend(loc="lower right", fontsize=8)
    fig.suptitle(f"Resolver gate pairs: {args.title} (outlined: the chosen pair)")
    fig.tight_layout()
    fig.savefig(args.png, dpi=110)
    print(f"wrote {args.png}")


if __name__ == "__main__":
    main()
