"""How far carrying earlier entities can go on TREC CAsT: an oracle, not a system.

    python benchmarks/cast_oracle.py [--max-entities 2] [DATA_ROOT]

For every follow-up turn the oracle looks at the raw utterance plus every combination
of at most K entities that the general extractor finds in the earlier *user* turns (the
only context CAsT ships), and keeps the best: clean and covering if any combination
is, else clean, else covering. It reads the answer key, so it is an upper bound for
any rewriter that only appends earlier entities, not something a system can do. It
shows what the SPEC section 7 target (coverage >= 0.80 with contamination <= 0.05)
asks of the choice among those entities.
"""

from __future__ import annotations

import argparse
import itertools
from pathlib import Path

from rich.console import Console
from rich.progress import track
from rich.table import Table

from turnscope.datasets import CAST_YEARS, load_cast, resolve_data_root
from turnscope.entities import EntityExtractor
from turnscope.evaluation import check_terms


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--max-entities", type=int, default=2)
    ap.add_argument("data_root", nargs="?")
    args = ap.parse_args()
    root = resolve_data_root(Path(args.data_root) if args.data_root else None)
    console = Console(width=160)
    ex = EntityExtractor()
    table = Table(title="CAsT: best choice of earlier user-turn entities (oracle)")
    for col in ("year", "K", "coverage", "contamination", "clean and covering"):
        table.add_column(col, justify="right")
    for year in CAST_YEARS:
        items = [it for it in load_cast(year, root) if it["prefix"]]
        for k in range(1, args.max_entities + 1):
            n = cov = cont = both = 0
            for it in track(items, description=f"CAsT {year} K={k}", console=console):
                names: list[str] = []
                for turn in it["prefix"]:
                    if turn["role"] != "user":
                        continue
                    for m in ex.extract(turn["content"]):
                        if not m.is_attribute and m.name.casefold() not in {x.casefold() for x in names}:
                            names.append(m.name)
                best: tuple[tuple[bool, bool, bool], bool, bool] | None = None
                for size in range(k + 1):
                    for combo in itertools.combinations(names, size):
                        c = check_terms(" ".join([it["follow_up"], *combo]), it["required_in_rewrite"],
                                        it["forbidden_in_rewrite"])
                        key = (c.covered and not c.contaminated, not c.contaminated, c.covered)
                        if best is None or key > best[0]:
                            best = (key, c.covered, c.contaminated)
                if best is None:
                    continue
                n += 1
                cov += best[1]
                cont += best[2]
                both += best[1] and not best[2]
            table.add_row(str(year), str(k), f"{cov / n:.2f}", f"{cont / n:.2f}", f"{both / n:.2f}")
    console.print(table)


if __name__ == "__main__":
    main()
