"""How far the learned resolver's own candidates can go: an oracle over the development sets.

    python benchmarks/resolver_oracle.py

For every development message with a history (CAsT 2019, CANARD dev, the even CAsT 2021
topics) the oracle takes the resolver's candidate phrases (the window it reads), keeps those
the training labels call needed (they hold a word the human rewrite adds and no word it
lacks), and tries every combination of at most three of the first eight through the
resolver's own realization; the message counts as covered if any combination covers it.
It reads the answer key, so it is an upper bound for the ranker and gate, not a system: the
distance between it and the shipped default is what the decision (which candidates, when)
loses, not what the candidates lack.
"""

from __future__ import annotations

from itertools import combinations

from rich.console import Console
from rich.table import Table

from turnscope._matching import check_terms
from turnscope.resolver._candidates import candidates, key_of
from turnscope.resolver._ranker import DEFAULT_HISTORY_TURNS, scope_history
from turnscope.resolver._realize import realize
from turnscope.resolver._train import TRAINING_SETS, _history, labels_for


def main() -> None:
    table = Table(title="resolver candidates: oracle of at most 3 needed phrases (development sets)")
    for col in ("set", "messages", "raw covers", "need context", "a needed candidate exists",
                "oracle covers (of need)", "oracle coverage (all)"):
        table.add_column(col, justify="right")
    for name, load in TRAINING_SETS.items():
        need = raw_ok = any_needed = oracle = 0
        for it in load(None):
            if not it["prefix"]:
                continue
            if check_terms(it["follow_up"], it["required_in_rewrite"], it["forbidden_in_rewrite"]).covered:
                raw_ok += 1
                continue
            need += 1
            cands = [c for c in candidates(scope_history(_history(it), DEFAULT_HISTORY_TURNS))
                     if not c.key <= key_of(it["follow_up"])]
            needed = [c.text for c, y in zip(cands, labels_for(it, [c.key for c in cands]), strict=True) if y]
            any_needed += bool(needed)
            oracle += any(
                check_terms(realize(it["follow_up"], list(combo))[0], it["required_in_rewrite"],
                            it["forbidden_in_rewrite"]).covered
                for n in (1, 2, 3) for combo in combinations(needed[:8], n))
        total = need + raw_ok
        table.add_row(name, str(total), f"{raw_ok / total:.3f}", str(need), f"{any_needed / need:.3f}",
                      f"{oracle / need:.3f}", f"{(raw_ok + oracle) / total:.3f}")
    Console(width=140).print(table)


if __name__ == "__main__":
    main()
