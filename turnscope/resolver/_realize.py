"""Turn the carried phrases into a query that reads as the user's own message.

Two moves, in order of preference:

1. **substitute**: the first anaphoric pronoun ("it", "they", "them", "he", a
   demonstrative used as a pronoun) becomes the top phrase; a possessive ("its",
   "their", "his") becomes "<phrase>'s";
   a plural one ("they", "them", "their") becomes the first two phrases joined by "and"
   ("What's the difference in throat cancer and esophageal cancer's symptoms?");
2. **attach**: any other carried phrase follows the message in parentheses,
   before its final punctuation ("What are the symptoms (lobular carcinoma)?").

The message itself is never cut: a rewrite is the message plus what was carried,
so it cannot turn into a fragment of an answer.

Grammar decides whether the top phrase may stand for the pronoun at all: "he",
"him", "his" and "she" refer to a person, and a phrase with no capitalised word
("controversy", "global warming") cannot name one; nor can a word capitalised only
because it opens a section heading ("Van Morrison — Influence": the resolver passes
what it knows of where each phrase was capitalised). Then nothing is carried: on the
development sets every such rewrite put a wrong word in the query ("Did controversy
plead guilty to the charge?", 6 of 7; the seventh added nothing the human rewrite
needed), and attaching the phrase instead would add the same wrong word.

A carried phrase that another carried phrase extends goes: "binge drinking" says all
that "drinking" says.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from turnscope.resolver._candidates import key_of

__all__ = ["can_stand_for", "has_slot", "realize"]

_SUBJECT = re.compile(r"\b(?P<w>it|they|them|he|him|she|this|that|these|those)\b"
                      r"(?!\s*(?:'s|’s|is\s+(?:a|an|the)\b))", re.IGNORECASE)
_POSSESSIVE = re.compile(r"\b(?P<w>its|their|his)\b", re.IGNORECASE)
# a demonstrative is a pronoun only when no noun follows it ("that" in "is that safe?")
_DEM_FOLLOW = re.compile(r"\s*(?:[?.!,;]|$|is\b|are\b|was\b|were\b|do\b|does\b|did\b|have\b|has\b|"
                         r"mean\b|work\b|cost\b|help\b|happen\b|affect\b|cause\b|compare\b|"
                         r"can\b|will\b|would\b|should\b|could\b)", re.IGNORECASE)
_END = re.compile(r"[\s?？.。!！]*$")
#: pronouns that refer to a person (the antecedent must be able to name one)
_PERSONAL = frozenset({"he", "him", "his", "she"})
_PLURAL = frozenset({"they", "them", "their"})


def _pronoun(message: str) -> re.Match[str] | None:
    hits = []
    for m in _SUBJECT.finditer(message):
        w = m.group("w").lower()
        if w in ("this", "that", "these", "those") and not _DEM_FOLLOW.match(message, m.end()):
            continue
        if w == "that" and re.search(r"\b(?:so|such|now|than|is|was|and)\s*$", message[: m.start()], re.I):
            continue  # a conjunction or relative "that", not a pronoun
        hits.append(m)
        break
    pm = _POSSESSIVE.search(message)
    if pm is not None:
        hits.append(pm)
    return min(hits, key=lambda m: m.start()) if hits else None


def has_slot(message: str) -> bool:
    """Whether the message has a pronoun a carried phrase would stand for.

    >>> has_slot("Is it treatable?"), has_slot("What are its symptoms?"), has_slot("What does that cost?")
    (True, True, True)
    >>> has_slot("Tell me about lung cancer."), has_slot("What is that region's SLA?")
    (False, False)
    """
    return _pronoun(message.strip()) is not None


def can_stand_for(phrase: str, pronoun: str, *, name: bool | None = None) -> bool:
    """Whether ``phrase`` agrees with ``pronoun``: a personal pronoun needs a name.

    ``name`` says whether the phrase can name someone when the caller knows more than its
    text (where it was capitalised: :func:`turnscope.resolver._candidates.may_name`); without
    it, a capitalised word decides.

    >>> can_stand_for("Jack White", "he"), can_stand_for("controversy", "he")
    (True, False)
    >>> can_stand_for("global warming", "it")
    True
    """
    if pronoun.lower() not in _PERSONAL:
        return True
    if name is not None:
        return name
    return any(w[:1].isupper() for w in phrase.split())


def realize(message: str, carried: Sequence[str], names: Sequence[bool] | None = None) -> tuple[str, list[str]]:
    """The query and the carried phrases in the order they appear in it.

    >>> realize("How deadly is it?", ["lobular carcinoma"])
    ('How deadly is lobular carcinoma?', ['lobular carcinoma'])
    >>> realize("What about its treatment?", ["lobular carcinoma", "LCIS"])
    ("What about lobular carcinoma's treatment (LCIS)?", ['lobular carcinoma', 'LCIS'])
    >>> realize("And the side effects?", [])
    ('And the side effects?', [])
    >>> realize("Did he plead guilty?", ["controversy"])  # "he" cannot be "controversy"
    ('Did he plead guilty?', [])
    """
    text = message.strip()
    if not carried:
        return text, []
    carried, names = _widest(carried, names)
    rest = list(carried)
    m = _pronoun(text)
    if m is not None and not can_stand_for(rest[0], m.group("w"), name=names[0] if names else None):
        return text, []
    if m is not None:
        phrase = rest.pop(0)
        if m.group("w").lower() in _PLURAL and rest:
            phrase = f"{phrase} and {rest.pop(0)}"
        if m.group("w").lower() in ("its", "their", "his"):
            phrase = phrase + "'s"
        if m.start() == 0 or re.search(r"[.!?]\s*$", text[: m.start()]):
            phrase = phrase[:1].upper() + phrase[1:]
        text = text[: m.start()] + phrase + text[m.end():]
    if rest:
        end = _END.search(text)
        cut = end.start() if end else len(text)
        text = f"{text[:cut]} ({'; '.join(rest)}){text[cut:]}"
    order = sorted(carried, key=lambda p: text.find(p) if p in text else len(text))
    return text, order


def _widest(carried: Sequence[str], names: Sequence[bool] | None) -> tuple[list[str], list[bool] | None]:
    """The carried phrases without those another one extends; an extending phrase takes the
    place of the first phrase it extends ("drinking", "binge drinking" -> "binge drinking")."""
    keys = [key_of(p) for p in carried]
    widest = [i for i, k in enumerate(keys) if not k or not any(k < o for o in keys)]
    out: list[int] = []
    for i, k in enumerate(keys):
        pick = i if i in widest else next(j for j in widest if k < keys[j])
        if pick not in out:
            out.append(pick)
    return [carried[i] for i in out], ([names[i] for i in out] if names is not None else None)
