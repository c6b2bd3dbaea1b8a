"""Typed entity extraction without a model.

Two sources, in priority order:

1. a *domain vocabulary* (optional): types, canonical names and aliases loaded
   from JSON, e.g. ``region: Dublin = eu-west-1``. Types are what make
   supersession possible (a new ``service`` replaces the old one).
2. a *general extractor* for unseen domains: quoted names, identifiers
   (``eu-west-1``, ``EC2``, ``v2``), acronyms, capitalised proper-noun spans and
   multi-word noun phrases (runs of words that are not function words or
   verbs); for Japanese, katakana/kanji/Latin compounds between kana.

Enumerations ("Frankfurt and Dublin", "1) … 2) …") are kept in order, so that
"the second one" can be resolved later.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from typing import Any

from turnscope._lexicon import (
    ADJECTIVES,
    ADVERBS,
    AMBIGUOUS_VERBS,
    AUXILIARIES,
    DETERMINERS,
    FUNCTION_WORDS,
    GENERIC_HEADS,
    JA_RELATIONAL,
    PREPOSITIONS,
    RELATIONAL_NOUNS,
    VERB_CONTEXT,
    VERBS,
    predicate_word,
)
from turnscope.entities._enumerate import find_enumerations

# (re-exported: callers import the records and the vocabulary from here)
from turnscope.entities._mention import GENERAL_TYPES, Enumeration, Mention
from turnscope.entities._vocabulary import (
    BUNDLED_CORPUS_OF,
    Vocabulary,
    _is_cjk,
    _norm,
    bundled_vocabularies,
    bundled_vocabulary,
)

__all__ = [
    "Mention",
    "Enumeration",
    "Vocabulary",
    "EntityExtractor",
    "GENERAL_TYPES",
    "bundled_vocabulary",
    "bundled_vocabularies",
    "BUNDLED_CORPUS_OF",
]


# General extractor ---------------------------------------------------------------------

_PRONOUN_COPULA = frozenset("i'm you're we're they're it's he's she's".split())
_COPULAR_3SG = frozenset("sounds looks seems feels tastes smells appears".split())
_INVERTED_AUX = frozenset("do does did can could will would should may might must".split())


_THE_END = re.compile(r"\bthe\s+$", re.I)
_PUNCT_NEXT = re.compile(r"\s*[,.;:?!]")


def search_before(pattern: re.Pattern[str], text: str, end: int,
                  reach: int) -> re.Match[str] | None:
    """``pattern.search(text[:end])`` for a pattern anchored at the end (``...\\s*$``) whose
    match, without its trailing whitespace, is at most ``reach`` characters long.

    Slicing and searching the whole prefix, once per mention or token, made long
    messages quadratic; this looks at the tail only (the regex still sees the character
    before it, so ``\\b`` means what it meant).
    """
    i = end
    while i > 0 and text[i - 1].isspace():
        i -= 1
    return pattern.search(text, max(0, i - reach), end)


def _coordinated_names(text: str, found: list[Mention]) -> list[Mention]:
    """"the Lewis and Clark expedition", "the Procter and Gamble shares": after "the", two
    capitalised names joined by "and" that go on into one noun phrase are one name."""
    out: list[Mention] = []
    i = 0
    while i < len(found):
        a = found[i]
        b = found[i + 1] if i + 1 < len(found) else None
        if b is not None and a.type == "name" and b.surface[:1].isupper() \
                and text[a.end:b.start] == " and " and search_before(_THE_END, text, a.start, 3) \
                and " " in b.surface:
            surface = text[a.start:b.end]
            out.append(Mention("name", surface, surface, a.start, b.end, "general"))
            i += 2
            continue
        out.append(a)
        i += 1
    return out


_OBJECT_PRONOUNS = frozenset("it them him her me us".split())
_DEFINITE = frozenset("the this that these those its their my your our his her".split())
_DEFINITE_LEN = max(map(len, _DEFINITE))


def _plural_word(word: str) -> bool:
    low = word.lower()
    return len(low) > 3 and low.endswith("s") and not low.endswith(("ss", "us", "is", "'s", "’s"))


def _base_form(word: str) -> str:
    """The word itself when it is a bare verb form (not -s/-ed/-ing), else ''."""
    return "" if word.endswith(("s", "ed", "ing")) else word


_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9'’_\-./]*[A-Za-z0-9]|[A-Za-z0-9]")
_IDENT = re.compile(r"^(?=.*[0-9])(?=.*[A-Za-z])[A-Za-z0-9][A-Za-z0-9_\-./]*$|^\w+_\w+$|^\w+(?:\.\w+){2,}$")
_NUMBER = re.compile(r"^[0-9][0-9.,]*$")
_ACRONYM = re.compile(r"^[A-Z][A-Z0-9]{1,}s?$")
_QUOTED = re.compile(r"\"([^\"]{2,60})\"|“([^”]{2,60})”|「([^」]{1,40})」|『([^』]{1,40})』")
# Japanese compounds: runs of katakana, kanji and Latin/digits between kana and punctuation
_JA_COMPOUND = re.compile(r"[\u30a0-\u30ffー\u4e00-\u9fff々A-Za-z0-9][\u30a0-\u30ffー・\u4e00-\u9fff々A-Za-z0-9\-]*")
_JA_STOP = frozenset("何 私 僕 今 方 事 時 所 物 人 感じ 場合 以外 以上 以下 ため 的".split())
_PAREN = re.compile(r"\([^()]*\)|（[^（）]*）|\s(?:region|regions|tier|plan|API)\b")
#: determiners after which a verb form is a noun ("the export"); quantifiers such as
#: "both" float before verbs ("both support CMK"), so they are not in this set
_ARTICLES = frozenset("a an the this that these those my your our their his her its".split())


def _word_before(text: str, end: int, limit: int) -> str | None:
    """``text[:end].split()[-1]`` (or "") without splitting the whole prefix, which made
    every phrase cost the length of the text before it; None for a word longer than
    ``limit`` (callers compare it with a list of short words)."""
    i = end
    while i > 0 and text[i - 1].isspace():
        i -= 1
    j = i
    while j > 0 and not text[j - 1].isspace():
        j -= 1
        if i - j > limit:
            return None
    return text[j:i]


_SMALL_FIRST = re.compile(r"^[a-z][A-Z][a-z]")
#: a model code: letters and digits, perhaps hyphenated ("X1", "x360", "S24", "WH-1000XM5")
_MODEL_CODE = re.compile(r"^(?=[^A-Za-z]*[A-Za-z])(?=[A-Za-z\-]*\d)[A-Za-z0-9][A-Za-z0-9\-]{0,11}$")


def _in_name(tok: str) -> bool:
    """Whether a token can be a word of a proper name: capitalised ("Galaxy"), a brand
    spelt with a small first letter ("iPad", "eBay"; not a unit such as "vCPUs"), a number
    or a model code ("X1", "x360", "S9")."""
    return tok[:1].isupper() or tok.isdigit() or bool(_SMALL_FIRST.match(tok)) \
        or bool(_MODEL_CODE.match(tok))


def _clean_token(tok: str) -> str:
    return tok.rstrip(".").replace("’", "'")


#: extractions an extractor remembers (Mentions are immutable, so a cached one is safe)
_RECENT_EXTRACTIONS = 16


#: the gap between two tokens that ends a sentence, and one that ends a noun run
#: (compiled once: the English pass tests every token gap of a long answer)
_SENTENCE_GAP = re.compile(r"[.?!:;]\s*$")
_PHRASE_BREAK = re.compile(r"[,.;:?!()\"“”—–]|\s[-–]\s")


class EntityExtractor:
    """Typed mentions from one message.

    >>> ex = EntityExtractor(Vocabulary.from_dict({"types": {"region": ["Dublin", "Frankfurt"]}}))
    >>> [m.name for m in ex.extract("Frankfurt and Dublin both support CMK.")]
    ['Frankfurt', 'Dublin', 'CMK']
    """

    def __init__(self, vocabulary: Vocabulary | None = None, *, general: bool = True) -> None:
        self.vocabulary = vocabulary or Vocabulary()
        self.general = general
        # one turn asks about the same message several times (session, classifier,
        # rewriter); on a long message each pass is the bulk of the turn's time
        self._recent: OrderedDict[tuple[str, str, bool], tuple[Mention, ...]] = OrderedDict()
        self._recent_vocab = self.vocabulary
        self._recent_lock = threading.Lock()

    def __getstate__(self) -> dict[str, Any]:
        # the cache is an optimisation and a lock cannot be pickled: a copy starts afresh
        d = self.__dict__.copy()
        for k in ("_recent", "_recent_lock", "_recent_vocab"):
            d.pop(k, None)
        return d

    def __setstate__(self, d: dict[str, Any]) -> None:
        self.__dict__.update(d)
        self._recent = OrderedDict()
        self._recent_vocab = self.vocabulary
        self._recent_lock = threading.Lock()

    def extract(self, text: str, lang: str = "en") -> list[Mention]:
        key = (text, lang, self.general)
        with self._recent_lock:
            if self._recent_vocab is not self.vocabulary:  # reassigned: forget old answers
                self._recent.clear()
                self._recent_vocab = self.vocabulary
            hit = self._recent.get(key)
            if hit is not None:
                self._recent.move_to_end(key)
                return list(hit)
        found = self.vocabulary.find(text)
        if self.general:
            extra = self._general_ja(text) if lang == "ja" else self._general_en(text)
            found = _merge(found, extra)
        out = sorted(found, key=lambda m: m.start)
        with self._recent_lock:
            if self._recent_vocab is not self.vocabulary:
                return out
            self._recent[key] = tuple(out)
            while len(self._recent) > _RECENT_EXTRACTIONS:
                self._recent.popitem(last=False)
        return out

    # -- English ---------------------------------------------------------------------
    def _general_en(self, text: str) -> list[Mention]:
        out: list[Mention] = []
        for m in _QUOTED.finditer(text):
            g = next(x for x in m.groups() if x)
            out.append(Mention("name", g.strip(), g, m.start(), m.end(), "general"))
        tokens = [(t.start(), t.end(), _clean_token(t.group(0))) for t in _TOKEN.finditer(text)]
        run: list[tuple[int, int, str]] = []
        run_opened = False
        run_indefinite = False
        run_after_aux = False
        sentence_start = {0} | {i + 1 for i, (s, _, _) in enumerate(tokens[:-1])
                                if _SENTENCE_GAP.search(text[tokens[i][1]:tokens[i + 1][0]])}

        def flush(next_low: str = "") -> None:
            if run:
                if next_low in {"one", "ones"} and len(run) == 1:
                    # "a smart one": the adjective modifies an anaphoric "one"
                    s0, e0, t0 = run[0]
                    out.append(Mention("attribute", t0, t0, s0, e0, "general"))
                else:
                    out.extend(self._phrase_mentions(text, run))
                run.clear()

        for i, (s, e, tok) in enumerate(tokens):
            low = tok.lower()
            gap = text[tokens[i - 1][1]:s] if i else ""
            if run and _PHRASE_BREAK.search(gap):
                flush()
            if run and _MODEL_CODE.match(tok) and not gap.strip() and not run[-1][2].isdigit() \
                    and _in_name(run[-1][2]):
                # "ThinkPad X1 Carbon", "Galaxy Tab S9 Ultra": a model code right after a
                # word of a name is part of the product's name, not a term of its own
                run.append((s, e, tok))
                continue
            if _IDENT.match(tok):
                flush()
                out.append(Mention("term", tok, text[s:e], s, e, "general"))
                continue
            is_cap = tok[:1].isupper() and i not in sentence_start
            is_acronym = bool(_ACRONYM.match(tok)) and low not in {"i", "ok"}
            verb = low in VERBS and not is_cap
            if not verb and not is_cap and low in AMBIGUOUS_VERBS and run and run_after_aux:
                verb = True  # "how did Ben Franklin cook …": subject after the auxiliary, then the verb
            if not verb and not is_cap and low in AMBIGUOUS_VERBS and i and (
                    (not run and tokens[i - 1][2].lower() in VERB_CONTEXT)
                    or (i + 1 < len(tokens) and tokens[i + 1][2].lower() in _OBJECT_PRONOUNS)):
                # "how do I save", "ways to cook them", "did Ben Franklin cook it": the
                # syntax wants a verb (a noun is never followed by an object pronoun)
                verb = True
            if verb:
                # a verb form right after a determiner, or inside a noun run and followed by
                # another content word, is a noun modifier: "the billing export API"
                prev = tokens[i - 1][2].lower() if i else ""
                nxt = tokens[i + 1][2].lower() if i + 1 < len(tokens) else ""
                # only inside a noun phrase that a determiner or preposition opened
                if prev in _ARTICLES or (run and run_opened and nxt
                                           and nxt not in FUNCTION_WORDS and nxt not in VERBS):
                    verb = False
                # a gerund after a modifier heads the phrase: "seafloor spreading", "binge
                # drinking", "mindful breathing" (unless an object follows: "… using it")
                if verb and run and low.endswith("ing") and not (
                        nxt in DETERMINERS or nxt in _OBJECT_PRONOUNS or nxt in ("a", "an")):
                    verb = False
                # … but a plural noun followed by a bare verb is subject and verb:
                # "what foods contain iron", "can the cells go away"
                if not verb and run and low == _base_form(low) and _plural_word(run[-1][2]):
                    verb = True
                # "a quota increase": after a singular noun that "a" opened, a bare verb form
                # cannot agree as a finite verb, so it is the head of a compound noun
                if verb and run and run_indefinite and low == _base_form(low) \
                        and not _plural_word(run[-1][2]):
                    verb = False
            if run and low in _COPULAR_3SG:
                verb = True  # "a crown sounds expensive": a perception verb after its subject
            # "how reliable is …", "how safe are …": the word between "how" and the verb
            # is an adjective (the degree asked about), not an entity
            degree = (not is_cap and i > 0 and tokens[i - 1][2].lower() == "how"
                      and i + 1 < len(tokens) and tokens[i + 1][2].lower() in AUXILIARIES)
            # "if I'm allergic", "it's dangerous": the complement of a pronoun's copula at
            # the end of its clause describes, it does not name
            degree = degree or (not is_cap and not run and i > 0
                                and tokens[i - 1][2].lower() in _PRONOUN_COPULA
                                and (i + 1 == len(tokens) or tokens[i + 1][2].lower() in FUNCTION_WORDS
                                     or bool(_PUNCT_NEXT.match(text, e))))
            if run and _NUMBER.match(tok) and tok.isdigit() and (
                    run[-1][2][:1].isupper() or (_in_name(run[-1][2]) and _in_name(run[0][2]))):
                # "Model 3", "Windows 11": the number is in the name; so is a second one
                # after a model code or number ("XPS 13 9340", "Spectre x360 14")
                run.append((s, e, tok))
                continue
            if not run and tok.isdigit() and i and tokens[i - 1][2].lower() in _ARTICLES \
                    and i + 1 < len(tokens) and tokens[i + 1][2].lower() not in FUNCTION_WORDS:
                # "a 529 plan", "the 401k": a number that opens a noun phrase names it
                run_opened, run_indefinite, run_after_aux = True, tokens[i - 1][2].lower() in ("a", "an"), False
                run.append((s, e, tok))
                continue
            if not is_acronym and (low in FUNCTION_WORDS or verb or degree or _NUMBER.match(tok)):
                flush(low)
                continue
            if not run:
                prev_low = tokens[i - 1][2].lower() if i else ""
                run_opened = prev_low in DETERMINERS or prev_low in PREPOSITIONS
                run_indefinite = prev_low in ("a", "an")
                run_after_aux = prev_low in _INVERTED_AUX
            run.append((s, e, tok))
        flush()
        return _coordinated_names(text, out)

    def _phrase_mentions(self, text: str, run: list[tuple[int, int, str]]) -> list[Mention]:
        # strip leading/trailing generic words: "different types" is not an entity
        words = [t for t in run]
        while words and words[-1][2].lower() in {"please", "now", "today"}:
            words.pop()
        # English noun phrases end in their noun: a trailing adjective, adverb or participle
        # is the predicate ("why is Chattanooga famous", "is Red Bull bad", "how are levels
        # naturally …", "when were turkeys domesticated")
        while len(words) >= 2 and not words[-1][2][:1].isupper() and predicate_word(words[-1][2]):
            words.pop()
        if not words:
            return []
        s, e = words[0][0], words[-1][1]
        surface = text[s:e]
        caps = all(_in_name(w[2]) for w in words) and not words[0][2].isdigit()
        head = words[-1][2].lower()
        if len(words) == 1 and _ACRONYM.match(words[0][2]):
            return [Mention("term", surface, surface, s, e, "general")]
        if len(words) == 1 and (head in GENERIC_HEADS or head in ADJECTIVES or (
                not words[0][2][:1].isupper() and predicate_word(head) and head not in ADVERBS)):
            # ("what is unique about …": an adjective on its own describes, it does not name)
            return [Mention("attribute", surface.lower(), surface, s, e, "general")]
        if head in RELATIONAL_NOUNS and not any(w[2][:1].isupper() for w in words) and (
                len(words) <= 2 or all(w[2].lower() in ADJECTIVES for w in words[:-1])):
            # "the main function", "other good sources": an aspect of something, not a topic
            return [Mention("attribute", surface.lower(), surface, s, e, "general")]
        typ = "name" if caps else "phrase"
        definite = (_word_before(text, s, _DEFINITE_LEN) or "").lower() in _DEFINITE
        return [Mention(typ, surface, surface, s, e, "general", definite)]

    # -- Japanese --------------------------------------------------------------------
    def _general_ja(self, text: str) -> list[Mention]:
        out: list[Mention] = []
        text = _norm(text)  # full-width Latin and digits: ＥＣ２ -> EC2 (same length)
        for m in _QUOTED.finditer(text):
            g = next(x for x in m.groups() if x)
            out.append(Mention("name", g.strip(), g, m.start(), m.end(), "general"))
        for m in _JA_COMPOUND.finditer(text):
            w = m.group(0).strip("-・")
            if len(w) < 2 or w in _JA_STOP or w.isdigit():
                continue
            if re.fullmatch(r"[A-Za-z0-9\-]+", w):
                if w.lower() in FUNCTION_WORDS:
                    continue
                out.append(Mention("term", w, w, m.start(), m.end(), "general"))
                continue
            typ = "attribute" if w in JA_RELATIONAL else "phrase"
            out.append(Mention(typ, w, w, m.start(), m.end(), "general"))
        return out

    # -- enumerations ----------------------------------------------------------------
    def enumeration(self, text: str, turn: int, lang: str = "en",
                    mentions: Sequence[Mention] | None = None) -> Enumeration | None:
        """The most explicit list a turn offers (see :meth:`enumerations`), if any."""
        found = self.enumerations(text, turn, lang, mentions)
        return found[0] if found else None

    def enumerations(self, text: str, turn: int, lang: str = "en",
                     mentions: Sequence[Mention] | None = None) -> list[Enumeration]:
        """Every ordered list of alternatives a turn offers, most explicit first.

        1. numbered items, inline ("1) … 2) …") or one per line (also bullets): each
           item is its clause up to the first comma or parenthesis;
        2. coordinations of entities: "Frankfurt, Dublin and Paris", 「AとBとC」 (an alias
           in apposition and anything in parentheses do not break the list);
        3. the typed entities of one vocabulary type (or proper names), in order of first
           appearance, when a turn walks through them in parallel clauses.
        """
        ms = list(mentions) if mentions is not None else self.extract(text, lang)
        return find_enumerations(text, turn, lang, ms)


def _merge(primary: Iterable[Mention], secondary: Iterable[Mention]) -> list[Mention]:
    """Keep every primary mention; add secondary ones that overlap none of them.

    A general phrase that *contains* a vocabulary mention ("Dublin region") is
    dropped rather than kept, because the typed mention is the better slot.
    """
    kept = list(primary)
    extra = list(secondary)
    # owner[i] = index in kept of a mention covering character i (-1: none). Comparing each
    # mention with every kept one was quadratic in the message length; this is linear.
    # A character covered twice keeps its last owner: the overlap test and the furthest
    # end below only need some owner per character, and an interval whose every
    # character has a later owner ends no further than one of them.
    size = max((m.end for m in (*kept, *extra)), default=0)
    owner = [-1] * size

    def own(i: int) -> None:
        k = kept[i]
        owner[k.start:k.end] = [i] * (k.end - k.start)

    for i in range(len(kept)):
        own(i)
    for m in extra:
        overlapping = {i for i in owner[m.start:m.end] if i >= 0}
        if not overlapping:
            kept.append(m)
            own(len(kept) - 1)
            continue
        if m.type != "phrase" or _is_cjk(m.surface):
            continue
        # the words of the phrase after the typed entity are its head noun, which the
        # entity only modifies: "managed Postgres backups" -> backups
        last = max(kept[i].end for i in overlapping)
        if last < m.end:
            words = []
            for w in m.surface[last - m.start:].split():
                if w.lower() in ADJECTIVES or w.lower() in VERBS:
                    break
                words.append(w)
            rest = " ".join(words)
            if len(rest) >= 3 and rest.lower() not in GENERIC_HEADS:
                start = last + m.surface[last - m.start:].find(rest)
                kept.append(Mention("phrase", rest, rest, start, start + len(rest), "general"))
                own(len(kept) - 1)
    return kept

