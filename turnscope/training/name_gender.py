"""Which pronoun a first name takes, counted from GAP (Apache-2.0). GAP was built so that both
candidate names of a passage fit its ambiguous he/she/his/her (that is what makes it
ambiguous), so both take that pronoun's gender.

    python -m turnscope.training.name_gender    # writes turnscope/data/models/name_gender.json

GAP's development and validation parts only; its test part stays a check set.
"""

from __future__ import annotations

import csv
import json
import sys
from collections import Counter
from pathlib import Path

from turnscope.datasets import resolve_data_root
from turnscope.language._gender import DEFAULT_TABLE

MALE = {"he", "him", "his", "himself"}
FEMALE = {"she", "her", "hers", "herself"}
#: a name is kept when at least this many passages name it and this share agree
MIN_COUNT, MIN_SHARE = 1, 0.9


def build(root: Path) -> dict[str, str]:
    counts: dict[str, Counter[str]] = {}
    for part in ("development", "validation"):
        with open(root / "gap" / f"gap-{part}.tsv", encoding="utf-8") as fh:
            for row in csv.DictReader(fh, delimiter="\t"):
                pron = row["Pronoun"].lower()
                gender = "m" if pron in MALE else "f" if pron in FEMALE else None
                if gender is None:
                    continue
                for name, coref in ((row["A"], row["A-coref"]), (row["B"], row["B-coref"])):
                    words = name.split()
                    del coref  # both candidates fit the pronoun's gender, linked or not
                    if len(words) >= 2 and words[0][:1].isupper():
                        counts.setdefault(words[0].lower(), Counter())[gender] += 1
    table = {}
    for first, c in counts.items():
        total = sum(c.values())
        top, n = c.most_common(1)[0]
        if total >= MIN_COUNT and n / total >= MIN_SHARE:
            table[first] = top
    return dict(sorted(table.items()))


def main() -> int:
    table = build(resolve_data_root())
    DEFAULT_TABLE.write_text(json.dumps({"source": "GAP development + validation (Apache-2.0)",
                                         "names": table}, ensure_ascii=False, indent=0) + "\n", encoding="utf-8")
    print(f"{len(table)} first names -> {DEFAULT_TABLE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
