"""Reference classes (the reference classes of docs/output.md) and follow-up cues.

Every user message is classified before it is rewritten; the class decides
which store is read:

==================  =====================================  ==============================
class               example                                store
==================  =====================================  ==============================
standalone          "is the billing export API paginated?" none
immediate           "is it free?", "explain that more"     the previous exchange
earlier             "go back to Dublin"                    the exchange found by topic key
page                "what's on this page?"                 the current screen
site                "other articles on this site?"         the site
==================  =====================================  ==============================

Two decisions are kept apart, as the field report insists: *does this
message need context* (it refers, or it is elliptical) and *is it a follow-up
request* (cue terms such as "in more detail", 詳しく, 具体的に — which hold
even when the verb is dropped). No length cutoff decides the second.

The classification reads two kinds of reference defined here as well, first in the module:

* **ordinals** — a position in a list: "the second one", "the last two", "point 3",
  「2つ目」 (and, when the ordinal names one, the kind of thing listed);
* **English pronouns** and the mentions they may stand for: which pronoun of a message
  refers outside it (binding, dummy subjects, determiners, clause boundaries), and which
  mention can carry a question on its own.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from turnscope._lexicon import (
    ANAPHORS,
    AUXILIARIES,
    DEMONYMS,
    FUNCTION_WORDS,
    LOCATION_TYPES,
    PREPOSITIONS,
    VERBS,
    WH_WORDS,
    is_plural,
    pronoun_number,
)
from turnscope.entities import Mention, search_before

__all__ = [
    "ReferenceClass",
    "Cue",
    "Classification",
    "anchors",
    "classify",
    "follow_up_cue",
    "ORDINALS_EN",
    "Ordinal",
    "english_pronoun",
    "find_ordinal",
    "find_ordinal_span",
]

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
    rf"\bthe\s+(?P<ord2>former|latter)\b|\bthe\s+(?P<ord3>{_ORD_WORDS})(?=\s*(?:[?.!,—]|$)|\s+-)",  # "-" only as a dash
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


class ReferenceClass(StrEnum):
    STANDALONE = "standalone"
    IMMEDIATE = "textual_immediate"
    EARLIER = "textual_earlier"
    PAGE = "situational_page"
    SITE = "situational_site"


class Cue(StrEnum):
    """What in the message triggered a need for context."""

    PRONOUN = "pronoun"
    DEMONSTRATIVE = "demonstrative"
    ORDINAL = "ordinal"
    ELLIPSIS = "ellipsis"
    BRIDGING = "bridging"  # "the cost" with no "of X"
    ELABORATION = "elaboration"
    ONE = "one_anaphora"  # "the reporting one", "that one"
    TYPE = "type_anaphora"  # "that region", "the tier you suggested"
    ZERO = "zero_anaphora"  # Japanese: the topic is dropped
    RECALL = "recall"
    OTHER_THREAD = "other_thread"  # "back to the other thing": the thread before this one
    SCREEN = "screen"


# follow-up request cues: the term is what carries the intent (22/22 in the field report)
_FOLLOW_UP_EN = re.compile(
    r"\b(?:in\s+(?:more\s+)?detail|more\s+detail(?:s|ed)?|details\s*\?|more\s+specific\w*|"
    # "specifically" / "the specifics" ask for detail; the adjective does not ("any specific
    # shows?", "from anywhere specific?"); misspelt adverbs ("specificaly") still count
    r"specific(?:a?l+y|s)|"
    r"(?:explain|say)\s+\w+\s+more|more\s+on\s+the|go\s+deeper|"
    r"elaborate|expand\s+on|go\s+deeper|dig\s+deeper|deeper\s+dive|in\s+depth|tell\s+me\s+more|"
    r"more\s+about\s+(?:that|this|it)|explain\s+(?:that|this|it)|say\s+more|more\s+info)\b",
    re.IGNORECASE,
)
_FOLLOW_UP_JA = re.compile(r"詳しく|詳細|具体的|具体例|もう少し|もうちょっと|掘り下げ|詳しい")

_RECALL_EN = re.compile(
    r"\b(?:earlier|previously|back\s+to|go(?:ing)?\s+back|you\s+(?:mentioned|said|told|described|"
    r"talked)|we\s+(?:discussed|talked)|as\s+you\s+said|"
    r"(?:said|mentioned|discussed|asked|talked\s+about)\s+(?:before|at\s+the\s+(?:start|beginning))|"
    r"return(?:ing)?\s+to\s+(?:what|the\s+(?:earlier|previous|first)|our)|revisit)\b",
    re.IGNORECASE,
)
_RECALL_JA = re.compile(r"さっき|先ほど|先程|前に|以前|最初に|さきほど|前の話|話に戻")
# the topic key follows "about"/"on"/"regarding" or precedes の話/について
_TOPIC_EN = re.compile(
    r"\b(?:about|on|regarding|re|to|with|mentioned|said\s+about|for)\s+(?:the\s+)?(?P<key>[^?.,!;]+)",
    re.IGNORECASE,
)

_PAGE_EN = re.compile(
    r"\b(?:this|current)\s+(?:page|article|doc|screen|section)\b(?![\w-])|\bon\s+(?:the\s+)?screen\b|"
    r"\bthe\s+(?:page|article)\s+(?:i'?m|i\s+am|you'?re)\b|\bwhat\s+i'?m\s+(?:looking|reading)\b",
    re.IGNORECASE,
)
SITE_EN = re.compile(r"\b(?:this|your)\s+(?:site|website|docs\s+site|portal)\b(?![\w-])",
                      re.IGNORECASE)
_PAGE_JA = re.compile(r"(?:この|今の|今見ている|表示中の|こちらの)(?:ページ|画面|記事)|ここ(?:に|で|の)")
SITE_JA = re.compile(r"(?:この|こちらの|御社の|このウェブ)(?:サイト|ホームページ|ウェブサイト|HP)")

_DEMONSTRATIVE_NP_EN = re.compile(r"\b(?:that|this|those|these|such)\s+(?P<noun>[a-z][a-z\-]+)",
                                  re.IGNORECASE)
_PRONOUN_JA = re.compile(r"(?<!ど)(?:それ|これ|あれ|その|この|あの|そちら|こちら|そっち|こっち|そこ|前者|後者|同じ)")

# elliptical openers: "what about the RTO?", "and for Paris?", "how about X", "same for X"
_ELLIPSIS_EN = re.compile(
    r"^\s*(?:ok(?:ay)?[,\s]+|and\s+|so\s+|hmm+[,\s]+|also\s+)*(?:what|how)\s+about\b|"
    r"^\s*(?:and|also|ok(?:ay)?\s+and|but)\b(?:\s+(?:what|how)\b)?|^\s*(?:the\s+)?same\s+(?:(?:thing|question|again)\s+)?(?:but\s+)?(?:for|with|in|on|question)\b|"
    r"^\s*(?:for|in|with|on)\s+\S+\s*\?\s*$|\b(?:instead|as\s+well|too)\s*\?\s*$|^\s*vs\.?\s",
    re.IGNORECASE,
)
# Japanese: a topic phrase closed by は/って with no predicate: 「料金は？」「英語は？」
_ELLIPSIS_JA = re.compile(
    r"^[^。？?]{1,20}(?:は|って|も|の方は|のほうは|だと|では)[？?]?\s*$|^(?:じゃあ|では|なら|で)、?"
)

_WORD = re.compile(r"[A-Za-z][A-Za-z'\-]*")


@dataclass(frozen=True, slots=True)
class Classification:
    """The decisions made about one user message before it is rewritten."""

    reference_class: ReferenceClass
    needs_context: bool
    follow_up: bool
    cues: tuple[Cue, ...] = ()
    ordinal: Ordinal | None = None
    topic_key: str | None = None  # for textual-earlier references
    pivot: bool = False  # explicit change-of-subject cue

    @property
    def spec_class(self) -> str:
        """The class name as the reference classes of docs/output.md writes it."""
        return {
            ReferenceClass.STANDALONE: "standalone",
            ReferenceClass.IMMEDIATE: "textual_immediate",
            ReferenceClass.EARLIER: "textual_earlier",
            ReferenceClass.PAGE: "situational_page",
            ReferenceClass.SITE: "situational_site",
        }[self.reference_class]


PIVOT_EN = re.compile(
    r"\b(?:different|unrelated|separate|another|new|other)\s+(?:question|topic|thing|subject|q)\b|"
    r"\bchanging\s+(?:the\s+)?(?:topic|subject)\b|\bswitching\s+gears\b|\bon\s+another\s+note\b|"
    r"\bby\s+the\s+way\b|\bbtw\b|\bunrelated\b|\bmoving\s+on\b|\bnow\s+for\s+something\b|"
    r"\bforget\s+(?:that|about)\b|\bsomething\s+(?:else|different)\b",
    re.IGNORECASE,
)
_BACK_TO_OTHER = re.compile(
    r"\b(?:back\s+to|return(?:ing)?\s+to|going\s+back\s+to)\s+(?:the\s+|our\s+)?(?:other|previous|"
    r"earlier)\s+(?:thing|question|topic|subject|one|issue)\b", re.IGNORECASE)
PIVOT_JA = re.compile(r"ところで|話は変わ|話が変わ|別の質問|別件|それとは別に|関係ない|"
                       r"(?:は|を)?置いといて|置いておいて|はさておき|それはそうと")


def after_pivot(text: str) -> tuple[int, str] | None:
    """The clause after a change-of-subject cue and where it starts, if there is one.

    >>> after_pivot("ok, unrelated to all that — how many replicas per shard?")
    (27, ' how many replicas per shard?')
    """
    pv = PIVOT_EN.search(text) or PIVOT_JA.search(text)
    if pv is None:
        return None
    rest = re.split(r"[—–:：;.!?？。、,]|\s-\s", text[pv.end():], maxsplit=1)
    if len(rest) == 2 and rest[1].strip():
        return len(text) - len(rest[1]), rest[1]
    return None


def follow_up_cue(text: str) -> bool:
    """True when the message carries a follow-up request term, with or without a verb.

    >>> follow_up_cue("Can you explain that in more detail?")
    True
    >>> follow_up_cue("設定方法の詳細")
    True
    >>> follow_up_cue("Is the billing export API paginated?")
    False
    """
    return bool(_FOLLOW_UP_EN.search(text) or _FOLLOW_UP_JA.search(text))


_RECALL_KEY_EN = re.compile(
    r"\b(?:back\s+to|return(?:ing)?\s+to|revisit(?:ing)?|(?:you\s+)?(?:mentioned|said|told\s+me|"
    r"talked\s+about|discussed)(?:\s+(?:earlier|before|previously))?(?:\s+about)?|earlier\s+about|"
    r"about\s+the\s+earlier)\s+(?:what\s+you\s+said\s+about\s+)?(?:the\s+|that\s+|our\s+|your\s+)?"
    r"(?P<key>[^—–,.?!:;()]+?)(?=\s*(?:[—–,.?!:;()]|\s-\s|$|\s+(?:is|are|was|were|does|do|can|"
    r"could|will|would|how|what|which|who|when|where|why)\b))",
    re.IGNORECASE,
)
_JA_RECALL_KEY = re.compile(r"(?:さっき|先ほど|先程|前に|以前|最初に)(?:の|話した|言ってた|聞いた)?"
                            r"([^\s、。？?]{1,20}?)(?:の話|について|のこと|の件|って)")


def _topic_key(text: str, lang: str, mentions: Sequence[Mention]) -> str | None:
    """The words that name what an explicit backward reference goes back to.

    The phrase right after the recall cue wins ("back to the key thing" -> "key"); a
    demonym is spelled as the place it names ("the aussie region" -> "Australia").
    """
    cue = (_JA_RECALL_KEY if lang == "ja" else _RECALL_KEY_EN).search(text)
    if cue is not None:
        raw = cue.group("key") if lang != "ja" else cue.group(1)
        words = [DEMONYMS.get(w.lower(), w) for w in raw.split() if w.lower() not in _VAGUE
                 and w.lower() not in FUNCTION_WORDS]
        if words:
            return " ".join(words)
    for m in mentions:
        if m.is_attribute:
            continue
        words = [w for w in m.surface.split() if w.lower() not in _VAGUE]
        if words:
            return " ".join(words)
    if lang == "ja":
        jm = re.search(r"([^\s、。？?]{2,20}?)(?:の話|について|のこと|の件)", text)
        return jm.group(1) if jm else None
    em = _TOPIC_EN.search(text)
    if not em:
        return None
    words = [w for w in _WORD.findall(em.group("key"))
             if w.lower() not in FUNCTION_WORDS and w.lower() not in _VAGUE]
    return " ".join(words[:4]) or None


#: words that name no topic ("back to the key thing" is about *key*)
_VAGUE = frozenset("thing things stuff question questions part bit topic issue one ones point "
                   "discussion conversation said mentioned talked asked told".split())


def classify(text: str, lang: str, mentions: Sequence[Mention], *,
             has_history: bool = True, has_screen: bool = False,
             known_types: frozenset[str] = frozenset(),
             subject_types: frozenset[str] = frozenset()) -> Classification:
    """Classify a user message.

    >>> from turnscope.entities import EntityExtractor
    >>> ex = EntityExtractor()
    >>> msg = "What's the uptime SLA on the second one?"
    >>> classify(msg, "en", ex.extract(msg)).reference_class.value
    'textual_immediate'
    """
    cues: list[Cue] = []
    follow_up = follow_up_cue(text)
    back = _BACK_TO_OTHER.search(text) if lang == "en" else None
    if back is not None and has_history:
        # "back to the other thing — …": a return to the thread before this one, not a
        # change of subject (the words after the cue are the question)
        return Classification(ReferenceClass.EARLIER, True, follow_up,
                              (Cue.RECALL, Cue.OTHER_THREAD), None, topic_key=None, pivot=False)
    pivot = (PIVOT_EN.search(text) or PIVOT_JA.search(text)) is not None
    cut = after_pivot(text)
    if cut is not None:
        # "ok, unrelated to all that — how many replicas ...": the new question is what
        # follows the change-of-subject cue; earlier words refer to the closed subject
        offset, text = cut
        mentions = [Mention(m.type, m.name, m.surface, m.start - offset, m.end - offset,
                            m.source) for m in mentions if m.start >= offset]
    named = [m for m in mentions if not m.is_attribute]

    # situational first: "this page" is read from the screen, never from the transcript
    page = _PAGE_JA.search(text) if lang == "ja" else _PAGE_EN.search(text)
    site = SITE_JA.search(text) if lang == "ja" else SITE_EN.search(text)
    if site:
        return Classification(ReferenceClass.SITE, True, follow_up, (Cue.SCREEN,), pivot=pivot)
    if page:
        return Classification(ReferenceClass.PAGE, True, follow_up, (Cue.SCREEN,), pivot=pivot)
    if has_screen and not pivot:
        # situational deixis: with a page in front of the user, the proximal demonstrative
        # ("is this available in London?", 「この事例」「ここに載ってる」) points at the screen
        if lang == "ja":
            proximal = _PROXIMAL_JA.search(text) is not None
        else:
            pr = english_pronoun(text, mentions)
            proximal = pr is not None and pr.group(0).lower() in ("this", "these")
        if proximal:
            return Classification(ReferenceClass.PAGE, True, follow_up,
                                  (Cue.SCREEN, Cue.PRONOUN), pivot=pivot)

    recall = _RECALL_JA.search(text) if lang == "ja" else _RECALL_EN.search(text)
    if recall and has_history:
        key = _topic_key(text, lang, mentions)
        ordinal = find_ordinal(text, lang)
        cues_r = (Cue.RECALL, Cue.ORDINAL) if ordinal is not None else (Cue.RECALL,)
        return Classification(ReferenceClass.EARLIER, True, follow_up, cues_r, ordinal,
                              topic_key=key, pivot=False)

    ordinal = find_ordinal(text, lang)
    if ordinal is not None:
        cues.append(Cue.ORDINAL)
    if lang == "ja":
        jp = _PRONOUN_JA.search(text)
        if jp and not (pivot and jp.group(0) in ("この", "その", "あの")):
            cues.append(Cue.PRONOUN)
        if _ELLIPSIS_JA.search(text.strip()):
            cues.append(Cue.ELLIPSIS)
        if not named and not cues and len(text.strip()) <= 15:
            cues.append(Cue.ELLIPSIS)
    else:
        core = strip_discourse(text)
        pron = english_pronoun(text, mentions)
        if pron is not None:
            cues.append(Cue.PRONOUN)
        if _ONE_ANAPHORA.search(text):
            cues.append(Cue.ONE)
        tm = _TYPE_NP.search(text)
        if tm and (tm.group("noun") or tm.group("noun2")).lower().rstrip("s") in known_types:
            cues.append(Cue.TYPE)
        named_words = {m.surface.lower() for m in mentions if m.source == "vocab"}
        if _ELLIPSIS_EN.search(text) or _ELLIPSIS_EN.search(core) or _is_fragment(core, named_words):
            cues.append(Cue.ELLIPSIS)
        if has_history and _is_question(text) and not any(_introduces(m, text) for m in named):
            # nothing new is introduced: the question is about the subject already given
            cues.append(Cue.BRIDGING)
        elif has_history and _is_question(text) and _UNSATURATED.search(text) \
                and not any(_proper(m) for m in named):
            # "what is the impact on modern biology?": a relational noun whose "of" slot
            # is left open while another preposition fills a second role; the open slot is
            # the topic's ("the impact of Darwin's theory on modern biology")
            cues.append(Cue.BRIDGING)
        elif has_history and (HEADLESS_SUPERLATIVE.search(text) or (
                _EVALUATIVE_NP.search(text) and not any(_proper(m) for m in named))):
            # "the largest ever", "the most powerful": a superlative with no noun takes the
            # topic's; "important applications", "famous foods": an evaluative adjective is
            # relative to a domain (important *for what*?) and the domain is the topic
            cues.append(Cue.BRIDGING)
    cue_spans = [mm.span() for mm in _FOLLOW_UP_EN.finditer(text)] if lang == "en" else []
    own = [m for m in named if not any(a <= m.start < b for a, b in cue_spans)]
    names_own_subject = lang == "en" and (
        any(_introduces(m, text) and _proper(m) for m in own)
        or bool(_MORE_ABOUT_NP.search(text)))
    if follow_up and not names_own_subject:
        # "tell me more about tiger sharks" names its own subject: not an elaboration
        cues.append(Cue.ELABORATION)
    if lang == "ja" and has_history and not any(
            (m.source == "vocab" and (not subject_types or m.type in subject_types))
            or m.type in ("name", "term") for m in named) \
            and (known_types or not any(len(m.name) >= 4 for m in named)) \
            and not (pivot or Cue.PRONOUN in cues or Cue.ELABORATION in cues
                     or (Cue.ELLIPSIS in cues and any(m.source == "vocab" for m in named))):
        # Japanese drops the topic it continues (zero anaphora): a question that names no
        # subject is about the one in play (an elliptical or elaboration request has its
        # own store: the question it continues)
        cues.append(Cue.ZERO)
    if pivot and not (Cue.PRONOUN in cues or Cue.ORDINAL in cues):
        # an explicit change of subject: whatever else is in the message stands alone
        return Classification(ReferenceClass.STANDALONE, False, follow_up, (), pivot=True)
    if cues and has_history:
        return Classification(ReferenceClass.IMMEDIATE, True, follow_up, tuple(cues), ordinal,
                              pivot=False)
    return Classification(ReferenceClass.STANDALONE, False, follow_up, tuple(cues), ordinal,
                          pivot=pivot)


_DISCOURSE = re.compile(
    r"^\s*(?:(?:ok(?:ay)?|k|hmm+|hm+|yes|yeah|yep|yup|no|nope|right|cool|nice|great|perfect|"
    r"thanks|thank\s+you|thx|ty|fine|sure|got\s+it|makes\s+sense|i\s+see|ah+|oh+|wait|so|"
    r"and|also|now|well|alright|good|understood|legal\s+said\s+fine|sounds\s+good)\b"
    r"[\s,.!:;—–\-]*)+",
    re.IGNORECASE,
)
_ONE_ANAPHORA = re.compile(
    r"\b(?:the|that|this)\s+(?:[a-z][\w\-]*\s+)?ones?\b"
    r"(?!\s+of\s+(?:the|your|my|our)\b(?!\s+(?:two|three|four|pair|both)\b))|"
    r"\b(?:other|another)\s+one\b|\b(?:set|get|create|make|use|pick|choose|buy|need|add|"
    r"enable|try)\s+one\b",
    re.IGNORECASE,
)
_TYPE_NP = re.compile(r"\b(?:that|this|the|those|these)\s+(?:other\s+)?(?P<noun>[a-z]+)\b"
                      r"(?=\s+(?:you|we|i)\s+(?:suggested|recommended|mentioned|said|picked|"
                      r"chose|listed)|\s*(?:[?.!,]|$|btw\b|then\b|there\b))|"
                      r"\b(?:that|this|those|these)\s+(?P<noun2>[a-z]+)\b", re.IGNORECASE)
_VERBLESS_OK = frozenset("do does did".split())


def strip_discourse(text: str) -> str:
    """The message without leading discourse markers ("ok nice. and ...")."""
    return _DISCOURSE.sub("", text).strip()


def _is_fragment(core: str, named: frozenset[str] | set[str] = frozenset()) -> bool:
    """A verbless phrase ("enterprise?", "the rto?", "now do oregon") asks the previous
    question again about something else."""
    words = re.findall(r"[A-Za-z][A-Za-z'\-]*", core)
    if not words or len(words) > 5:
        return False
    low = [w.lower() for w in words]
    if low[0] in _VERBLESS_OK and len(low) == 2 and (words[1][:1].isupper() or low[1] in named):
        return True  # "do Oregon": the pro-verb stands for the previous question
    if len(low) >= 2 and low[0] == "now" and low[1] in _VERBLESS_OK:
        return True  # "now do oregon"
    return not any(w in VERBS or w in AUXILIARIES or w in WH_WORDS for w in low)


_PROXIMAL_JA = re.compile(r"これ|この|ここ|こちら")
HEADLESS_SUPERLATIVE = re.compile(
    r"\bthe\s+(?:(?:most|least)\s+[a-z]+|[a-z]{2,}est|best|worst)\b"
    r"(?=\s*(?:[?.!,]|$|\bever\b|\bto\b|\bin\b|\bof\b|\band\b|\bon\b|\bone\b))",
    re.IGNORECASE)
_UNSATURATED = re.compile(
    r"\bthe\s+(?:[a-z\-]+\s+)?(?:impact|impacts|relationship|relation|implications|effects?|"
    r"influence|advantages|disadvantages|benefits|differences?|similarities|connection|link)\s+"
    r"(?:on|to|for|in)\b", re.IGNORECASE)
_EVALUATIVE_ADJ = (r"(?:important|popular|famous|typical|notable|main|key|common|major|best|top|"
                   r"good|well-known|interesting|other|similar|related|nearby|local|traditional)")
_EVALUATIVE_NP = re.compile(
    r"^\W*(?:what|which|who)\s+(?:are|were|is)\s+(?:the\s+|some\s+)?(?:most\s+)?"
    rf"{_EVALUATIVE_ADJ}\s+(?:(?!(?:in|of|for|to|at|on|about|with)\b)[a-z][a-z\-]+\s+){{0,2}}"
    r"[a-z][a-z\-]+s\b"
    rf"|^\W*are\s+there\s+(?:any|some)\s+{_EVALUATIVE_ADJ}\b"
    rf"|\b(?:some|any)\s+{_EVALUATIVE_ADJ}\s+[a-z][a-z\-]+s\b",
    re.IGNORECASE)
# "tell me more about angel rounds": the request names its own subject
_MORE_ABOUT_NP = re.compile(r"\bmore\s+(?:about|on)\s+(?!(?:it|that|this|those|these|them|the\s+"
                            r"(?:last|first|second|cost|other)\b))(?:the\s+|an?\s+)?[a-z]",
                            re.IGNORECASE)
_GIVEN_DET = re.compile(r"\b(?:the|its|their|this|that|these|those|what|which|whose|such)\s*$",
                       re.IGNORECASE)


def _introduces(m: Mention, text: str) -> bool:
    """Whether a mention brings its own subject into the question (information status).

    Names, identifiers and vocabulary entities do; so does a common noun phrase that is
    indefinite or bare ("a quota increase", "makos"). A definite or interrogative one
    ("the main themes", "what empires") presupposes a referent already given.
    """
    if anchors(m) and (m.source != "general" or m.type in ("name", "term")
                       or any(w[:1].isupper() for w in m.name.split())):
        return True  # names, and phrases with a name or acronym in them ("the billing API")
    return not search_before(_GIVEN_DET, text, m.start, 5)  # the longest word is 5 letters


def _is_question(text: str) -> bool:
    # a request for information is a question whether asked or ordered ("tell me about …",
    # "describe …", "explain …")
    return bool(re.search(r"\?\s*$|^\s*(?:what|which|who|whom|whose|when|where|why|how|is|are|"
                          r"was|were|do|does|did|can|could|should|would|will|tell\s+me|describe|"
                          r"explain|list|name|give\s+me|show\s+me|compare)\b", text,
                          re.IGNORECASE))


