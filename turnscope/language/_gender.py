"""Whether a person's name agrees with a pronoun's gender, from first names counted in GAP
(``turnscope/data/models/name_gender.json``, built by ``turnscope.training.name_gender``)."""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from pathlib import Path

DEFAULT_TABLE = Path(__file__).resolve().parent.parent / "data" / "models" / "name_gender.json"
_TITLES = {"mr": "m", "mr.": "m", "sir": "m", "lord": "m", "king": "m", "prince": "m",
           "mrs": "f", "mrs.": "f", "ms": "f", "ms.": "f", "miss": "f", "lady": "f", "queen": "f",
           "princess": "f", "dame": "f"}
_PRONOUNS = {"he": "m", "him": "m", "his": "m", "himself": "m",
             "she": "f", "her": "f", "hers": "f", "herself": "f"}


@functools.lru_cache(maxsize=1)
def _table() -> dict[str, str]:
    if not DEFAULT_TABLE.exists():
        return {}
    names = json.loads(DEFAULT_TABLE.read_text(encoding="utf-8")).get("names", {})
    return {str(k): str(v) for k, v in names.items()}


def name_gender(phrase: str, names_seen: Sequence[str] = ()) -> str | None:
    """``"m"``, ``"f"`` or None for a person's name; a bare surname borrows the first name of
    a fuller name seen in the conversation ("Kahlo" after "Frida Kahlo")."""
    words = phrase.split()
    if not words:
        return None
    first = words[0].lower()
    if first in _TITLES:
        return _TITLES[first]
    if len(words) == 1:
        for full in names_seen:
            parts = full.split()
            if len(parts) >= 2 and parts[-1].lower() == first:
                return name_gender(full)
    return _table().get(first)


def gender_agreement(pronoun: str, phrase: str, names_seen: Sequence[str] = ()) -> float:
    """+1 when the name's gender is the pronoun's, -1 when it is the other, 0 when unknown."""
    want = _PRONOUNS.get(pronoun.lower())
    have = name_gender(phrase, names_seen) if want else None
    if want is None or have is None:
        return 0.0
    return 1.0 if want == have else -1.0
