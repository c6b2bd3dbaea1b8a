"""Ordinal reference read as a position in a list: "the second one", "the last two",
"point 3", 「2つ目」 (and, when the ordinal names one, the kind of thing listed).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from turnscope._lexicon import FUNCTION_WORDS, VERBS

ORDINALS_EN = {
    "first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4, "4th": 4,
    "fifth": 5, "5th": 5, "sixth": 6, "6th": 6, "seventh": 7, "eighth": 8, "ninth": 9,
    "tenth": 10, "last": -1, "latter": -1, "former": 1, "final": -1, "middle": 0,
}
_ORD_WORDS = "|".join(sorted(ORDINALS_EN, key=len, reverse=True))
# "the second one", "the last two", "the first region", "option 3", "#2", "number 2"
_ORDINAL_EN = re.compile(
    rf"\b(?:the\s+)?(?P<ord>{_ORD_WORDS})\s+(?:of\s+the\s+(?:two|three|four|five)\s+)?"
    rf"(?P<rest>one|ones|two|three|option|item|choice|[a-z][a-z\-]+)\b|"
    rf"(?:\b(?:option|item|choice|number|no\.|point|step|pair|bullet)|#)\s*(?P<num>\d{{1,2}})\b|"
    rf"\bthe\s+(?P<ord2>former|latter)\b|\bthe\s+(?P<ord3>{_ORD_WORDS})(?=\s*(?:[?.!,—-]|$))",
    re.IGNORECASE,
)
_POSSESSED = re.compile(r"(?:\b(?:their|his|her|its|my|your|our)|\w['’]s)\s+$", re.IGNORECASE)
_JA_NUM = {"一": 1, "二": 2, "三": 3, "四": 4, "五": 5, "1": 1, "2": 2, "3": 3, "4": 4, "5": 5,
           "６": 6, "6": 6, "7": 7, "8": 8, "9": 9}
_ORDINAL_JA = re.compile(
    r"(?P<n>[1-9１-９])(?:つ目|番目|個目|番)|(?P<n2>[一二三四五])(?:つ目|番目|個目)|(?P<last>最後|一番下)の|(?P<first>最初|一番上)の|(?P<mid>真ん中)の"
)


@dataclass(frozen=True, slots=True)
class Ordinal:
    position: int  # 1-based; negative counts from the end
    count: int = 1  # "the last two" -> 2
    noun: str | None = None  # "the first region" -> "region"


def find_ordinal(text: str, lang: str) -> Ordinal | None:
    found = find_ordinal_span(text, lang)
    return found[2] if found else None


def find_ordinal_span(text: str, lang: str) -> tuple[int, int, Ordinal] | None:
    """The ordinal reference in ``text`` with its character span."""
    if lang == "ja":
        m = _ORDINAL_JA.search(text)
        if not m:
            return None
        end = m.end()
        # 「2つ目のプラン」: the noun after の is the kind of thing counted, part of the reference
        tail = re.match(r"の?([\u30a0-\u30ffー\u4e00-\u9fff]{1,8})?", text[end:])
        if m.group("last") or m.group("first") or m.group("mid"):
            noun_end = end + (len(tail.group(0)) if tail and tail.group(1) else 0)
            pos = -1 if m.group("last") else (0 if m.group("mid") else 1)
            return m.start(), noun_end, Ordinal(pos)
        noun_end = end + (len(tail.group(0)) if tail and tail.group(1) else 0)
        digit = unicodedata.normalize("NFKC", m.group("n") or m.group("n2"))
        return m.start(), noun_end, Ordinal(_JA_NUM.get(digit, 1))
    m = _ORDINAL_EN.search(text)
    if not m:
        return None
    if _POSSESSED.search(text[: m.start()]):
        # "their first album", "Tesla's second factory": an ordinal after a possessor
        # counts that possessor's things in time, it does not pick from a list
        return None
    if m.group("num"):
        return m.start(), m.end(), Ordinal(int(m.group("num")))
    if m.group("ord2"):
        return m.start(), m.end(), Ordinal(ORDINALS_EN[m.group("ord2").lower()])
    if m.group("ord3"):
        return m.start(), m.end(), Ordinal(ORDINALS_EN[m.group("ord3").lower()])
    pos = ORDINALS_EN[m.group("ord").lower()]
    rest = m.group("rest").lower()
    count = {"two": 2, "three": 3}.get(rest, 1)
    noun = None if rest in {"one", "ones", "two", "three", "option", "item", "choice"} else rest
    if noun in {"or", "and"} and m.group(0).lower().startswith("the "):
        # "the first or the second": a bare ordinal coordinated with another
        return m.start(), m.start("rest") - 1, Ordinal(pos, 1, None)
    if noun is not None and (noun in FUNCTION_WORDS or noun in VERBS):
        if m.group(0).lower().startswith("the ") and noun in VERBS:
            # "what does the 2nd cost": a bare ordinal followed by its verb
            end = m.start("rest") - 1
            return m.start(), end, Ordinal(pos, 1, None)
        # "the first time", "first of all" are not ordinal references to a list
        return None
    if noun in {"time", "step", "thing", "question", "place", "sign", "signs", "half", "part", "bit",
                "sentence", "paragraph"}:
        return None
    nxt = re.match(r"\s+([A-Za-z][\w\-]*)", text[m.end():])
    if noun is not None and nxt and nxt.group(1).lower() not in FUNCTION_WORDS \
            and nxt.group(1).lower() not in VERBS:
        # "first response time", "second factor authentication": the ordinal is part of a
        # compound noun, not a pick from a list
        return None
    if noun is None and count > 1 and nxt and nxt.group(1).lower() not in FUNCTION_WORDS \
            and nxt.group(1).lower() not in VERBS:
        # "the first two marriages": the noun after the count names the kind counted (the
        # span stays "the first two": the items replace it, the noun stays)
        noun = nxt.group(1)
    return m.start(), m.end(), Ordinal(pos, count, noun)
