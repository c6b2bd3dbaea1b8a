"""English pronouns and the mentions they may stand for: which pronoun of a message refers
outside it (binding, dummy subjects, determiners, clause boundaries), and which mention
can carry a question on its own.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from turnscope._lexicon import (
    ANAPHORS,
    AUXILIARIES,
    FUNCTION_WORDS,
    LOCATION_TYPES,
    PREPOSITIONS,
    VERBS,
    WH_WORDS,
    is_plural,
    pronoun_number,
)
from turnscope.entities import Mention

_PRONOUN_EN = re.compile(
    rf"\b(?P<poss>its|their)\b|\b(?:{'|'.join(sorted(ANAPHORS - {'its', 'their'}))})\b|"
    r"\b(?:that|this|those|these)\b|"
    r"(?<!are )(?<!is )(?<!was )(?<!were )(?<!'s )(?<!’s )(?<!hi )(?<!hey )(?<!hello )\bthere\b"
    r"(?!['’](?:s|re|ll)\b|\s+(?:is|are|was|were|a|an|any|be|to\s+[a-z]+)\b)",
    re.IGNORECASE,
)


def anchors(m: Mention) -> bool:
    """Whether a mention can carry a question on its own.

    A proper name, an identifier, a vocabulary entity or a multi-word noun phrase
    ("lung cancer") anchors; a bare common noun ("the system", "the term") is a
    definite description that points at something already given.
    """
    if m.is_attribute:
        return False
    if m.source != "general" or m.type in ("name", "term"):
        return True
    return len(m.name.split()) >= 2 or (m.name[:1].isupper() and not m.name.isupper())


_THAT_CLAUSE_NEXT = frozenset("a an the i you we they he she it there this my our your their "
                              "its his her all every some no".split())


def _proper(m: Mention) -> bool:
    # "e-Discovery", "iPhone": a capital inside a word marks a name as well
    return m.source != "general" or m.type in ("name", "term") or any(
        w[:1].isupper() or any(c.isupper() for c in w[1:]) for w in m.name.split())


def english_pronoun(text: str, mentions: Sequence[Mention]) -> re.Match[str] | None:
    """The first pronoun that needs an antecedent outside the message.

    *it/they* after a noun phrase of the same message that agrees in number are bound
    to it; *this/that* are pronouns unless a noun phrase follows (a determiner) or a
    clause follows (a complementiser: "a tier that Paris is missing").
    """
    # Everything below reads the text from a position (match(text, pos), search with
    # pos/endpos) instead of slicing it: a slice per pronoun made long messages quadratic.
    starts = {m.start for m in mentions}
    named = [m for m in mentions if not m.is_attribute]
    inf = len(text) + 1
    first_proper_end = min((m.end for m in named if _proper(m)), default=inf)
    first_place_end = min((m.end for m in mentions if m.type in LOCATION_TYPES), default=inf)
    nps: dict[Mention, str] = {}

    def np_of(m: Mention) -> str:
        if m not in nps:
            nps[m] = _np(text, m)
        return nps[m]

    def between(pattern: re.Pattern[str], a: int, b: int) -> bool:
        """``pattern.search(text[a:b])``: with pos/endpos unless a word runs across ``a``,
        where the slice would see a word boundary the whole text does not have."""
        if 0 < a < len(text) and (text[a - 1].isalnum() or text[a - 1] == "_") \
                and (text[a].isalnum() or text[a] == "_"):
            return pattern.search(text[a:b]) is not None
        return pattern.search(text, a, max(a, b)) is not None

    for pm in _PRONOUN_EN.finditer(text):
        word = pm.group(0).lower()
        if word in ("this", "that", "these", "those"):
            nxt = _NEXT_WORD.match(text, pm.end())
            nxt_start = nxt.start(1) if nxt else pm.end()
            prev = _letters_before(text, pm.start()).lower()
            if nxt and (nxt_start in starts or nxt.group(1).lower() in ("one", "ones")) \
                    and not (prev in AUXILIARIES and _verb_like(nxt.group(1), text, nxt.end())):
                continue  # determiner, or one-anaphora (its own cue)
            if word == "that" and nxt and nxt.group(1).lower() in _THAT_CLAUSE_NEXT \
                    and prev not in AUXILIARIES and prev not in WH_WORDS \
                    and prev not in PREPOSITIONS and prev:
                continue  # complementiser or relative pronoun ("after that" is a pronoun)
            if word == "that" and prev and prev not in AUXILIARIES and prev not in WH_WORDS \
                    and prev not in PREPOSITIONS and prev not in VERBS and prev not in (
                        "explain", "expand", "elaborate", "about", "is", "do"):
                if nxt and nxt.group(1).lower() not in ("is", "was", "one"):
                    continue  # "the region that has ...": relative pronoun
            if nxt is None and _APOSTROPHE_S.match(text, pm.end()):
                continue  # "that's sorted", "that's all": discourse, not a reference
            if first_proper_end <= pm.start():
                continue  # "can the billing export do that?": the message's own subject
            return pm
        if word == "there":
            if first_place_end <= pm.start():
                continue  # "go with Dublin — what's the RPO there?": bound to the place named
            return pm
        if _DUMMY_SUBJECT.match(text, pm.end()):
            continue  # "it's unrelated": a dummy subject
        if word == "it" and _EXTRAPOSED.match(text, pm.end()):
            continue  # "does it cost anything to turn on …": extraposition, a dummy subject
        num = pronoun_number(word)
        possessive = word in ("its", "their")
        # binding: a pronoun takes a noun phrase of its own message only across a clause
        # boundary ("what is Rock City, and why is it famous?"); inside one clause a
        # personal pronoun cannot refer to its own subject ("a viewer can't do it"),
        # possessives can ("the Brits and their ...")
        # any noun phrase of the message can bind it across a clause boundary ("can we keep
        # the delivered files, or do they get cleaned up?"); a bare singular common noun only
        # when it anchors (names something)
        # … or when it is a bare noun ("what is mortadella and where is it from?"); a
        # relational noun binds too when it heads the first clause ("what is the newest
        # version and what is better about it?")
        bound = any(m.end <= pm.start()
                    and (((anchors(m) or (num == "pl" and is_plural(np_of(m))))
                          and (possessive or between(_CLAUSE_BREAK, m.end, pm.start())))
                         or (((m.type == "phrase" and not m.definite)
                              or (m.is_attribute and _COPULA_SUBJECT.match(text, 0, m.start)))
                             and between(_NEW_CLAUSE, m.end, pm.start())))
                    and (num is None or (num == "pl") == is_plural(np_of(m)))
                    for m in mentions if not m.is_attribute or m.source == "vocab"
                    or _COPULA_SUBJECT.match(text, 0, m.start))
        if not bound:
            return pm
    return None


_EXTRAPOSED = re.compile(
    r"\s+(?:(?:cost|costs|take|takes|make\s+sense|help|helps|matter|matters|hurt|hurts|pay|"
    r"pays)\b[^.?!]*?\bto\s+[a-z]+|(?:is|was|be)?\s*(?:possible|worth|necessary|ok|okay|safe|"
    r"hard|easy|better|cheaper)\s+to\s+[a-z]+)", re.IGNORECASE)
_COPULA_SUBJECT = re.compile(r"^\W*(?:what|which|who)\s+(?:is|was|are|were)\s+(?:the\s+)?(?:\w+\s+)?$",
                             re.IGNORECASE)
_NEW_CLAUSE = re.compile(r"[,;:—–?!.]|\s-\s|\b(?:and|or|but)\s+(?:where|what|why|how|when|who|which|is|"
                         r"are|was|were|does|do|did|can|could)\b", re.IGNORECASE)
_CLAUSE_BREAK = re.compile(r"[,;:—–?!.]|\s-\s|\b(?:and|or|but|so|because|if|when|then|which|"
                           r"that|who|where|while|before|after)\b", re.IGNORECASE)


def _verb_like(word: str, text: str, pos: int) -> bool:
    """After "does that …" / "is that …": is this word (followed by ``text[pos:]``) the
    verb (so *that* is a pronoun)?"""
    w = word.lower()
    if w in VERBS or w.endswith(("ed", "ing")):
        return True
    nxt = _VERB_NEXT.match(text, pos)
    return nxt is None or nxt.group(1).lower() in PREPOSITIONS | {"?", ".", "!", ",", "anywhere",
                                                                   "too", "also", "again"}


def _np(text: str, m: Mention) -> str:
    """A mention with the content words that follow it ("VPC peering" + "requests"):
    the noun phrase whose head decides its number."""
    # word by word, stopping at the first function word or verb: matching the whole run
    # of words after every mention made a long message without punctuation quadratic
    words = [m.surface]
    pos = m.end
    while (w := _NP_WORD.match(text, pos)) is not None:
        lw = w.group(1).lower()
        if lw in FUNCTION_WORDS or lw in VERBS:
            break
        words.append(w.group(1))
        pos = w.end()
    return " ".join(words)


_NP_WORD = re.compile(r"\s+([A-Za-z][\w\-]*)")
_NEXT_WORD = re.compile(r"\s+([A-Za-z][\w'\-]*)")
_VERB_NEXT = re.compile(r"\s*([A-Za-z]+|[?.!,])")
_APOSTROPHE_S = re.compile(r"['’]s\b")
_DUMMY_SUBJECT = re.compile(r"['’]s\s+(?:unrelated|fine|ok|okay|sorted|all|great|done|clear)\b",
                            re.IGNORECASE)
_LETTERS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'")


def _letters_before(text: str, end: int) -> str:
    """The last run of ASCII letters and apostrophes in ``text[:end]`` (what
    ``re.findall(r"[A-Za-z']+", text[:end])[-1]`` was, without scanning the prefix): "" if none."""
    i = end
    while i > 0 and text[i - 1] not in _LETTERS:
        i -= 1
    j = i
    while j > 0 and text[j - 1] in _LETTERS:
        j -= 1
    return text[j:i]
