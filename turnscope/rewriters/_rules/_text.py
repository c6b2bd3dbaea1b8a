"""Shared pieces of the embedded rewriter's rules: how a name is written into a query,
the sentence patterns several rules read, and the bounds on look-back.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

#: how strongly a plain word must go with a thread's subject (share of the documents using
#: the word that name the subject) to choose that thread: "fail" goes with managed Postgres
#: in most passages that use it, "cost" with every subject a little
DEFAULT_WORD_ASSOCIATION = 0.5
#: how many recent slots "the other <kind>" looks back over for the one that was superseded
DEFAULT_OTHER_LOOKBACK = 64
_SENTENCE_SPLIT = re.compile(r"(?<=[.!?])\s+|(?<=[。！？])|(?<=[;；])\s*|\s+—\s+")
_SENT_END = re.compile(r"[\s?？.。!！]*$")
#: a proper name headed by a place noun ("Rock City", "South Pond Nature Area")
_PLACE_NAME = re.compile(
    r"\b(?:[A-Z][\w\-]*\s+){1,4}(?:Museum|Park|Center|Centre|Area|Reserve|City|Trail|Street|"
    r"Square|Gardens?|Hall|Bridge|Lake|River|Mountain|Beach|Market|Zoo|Library|Theat(?:er|re)|"
    r"Stadium|Cathedral|Church|Castle|Palace|Tower|Monument|Memorial|Falls|Island)\b")


def _the(name: str, lang: str) -> str:
    """'billing export API' reads better as 'the billing export API'; names stay bare."""
    if lang == "ja" or not name or name[0].isupper() or name[0].isdigit() or " " not in name:
        return name
    return f"the {name}"


def _join(names: Sequence[str], lang: str) -> str:
    names = list(dict.fromkeys(names))
    if lang == "ja":
        return "と".join(names)
    if len(names) <= 2:
        return " and ".join(names)
    return ", ".join(names[:-1]) + " and " + names[-1]


#: capitalised words after "in" or "at" that name a time, not a place ("in June")
_TIME_NAMES = frozenset(
    "January February March April May June July August September October November December "
    "Monday Tuesday Wednesday Thursday Friday Saturday Sunday Christmas Easter Halloween "
    "Thanksgiving Ramadan Spring Summer Autumn Fall Winter".split())
