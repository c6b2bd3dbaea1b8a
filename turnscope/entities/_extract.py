"""Typed entity extraction without a model: the records it produces, the domain vocabulary,
the general extractor and the enumerations of a turn.

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

In reading order: the records (:class:`Mention`, :class:`Enumeration`), the domain
vocabulary (:class:`Vocabulary` and the bundled ones), the general extractor
(:class:`EntityExtractor`), the enumerations it finds (:func:`find_enumerations`), and
last the liveness of what was extracted (:class:`SlotTable`: one slot per entity type).
"""

from __future__ import annotations

import json
import re
import threading
import unicodedata
from bisect import bisect_left
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from turnscope._exceptions import ConfigError
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

__all__ = [
    "BUNDLED_CORPUS_OF",
    "BUNDLED_PREFIX",
    "DEFAULT_EVICT_AFTER",
    "DEFAULT_STALE_AFTER",
    "EntityExtractor",
    "Enumeration",
    "GENERAL_TYPES",
    "LivenessConfig",
    "Mention",
    "Slot",
    "SlotStatus",
    "SlotTable",
    "Vocabulary",
    "bundled_name",
    "bundled_vocabularies",
    "bundled_vocabulary",
    "find_enumerations",
    "search_before",
]

# Records -------------------------------------------------------------------------------
# What entity extraction produces: a typed mention and an ordered list of them.

#: types produced by the general extractor; they are too coarse for supersession
#: ("a new phrase" does not replace "an old phrase") so slots of these types only age out.
GENERAL_TYPES = frozenset({"name", "term", "phrase", "attribute"})


@dataclass(frozen=True, slots=True)
class Mention:
    """One occurrence of an entity in a message."""

    type: str
    name: str  # canonical name
    surface: str  # as written
    start: int
    end: int
    source: str = "general"  # "vocab" | "general"
    #: written with a definite determiner ("the system", "these plans"): it points back at
    #: something given, where a bare noun ("melatonin", "sharks") names its own subject
    definite: bool = False

    @property
    def key(self) -> str:
        return f"{self.type}:{self.name}"

    @property
    def is_attribute(self) -> bool:
        return self.type == "attribute"


@dataclass(frozen=True, slots=True)
class Enumeration:
    """An ordered list of alternatives offered in one turn."""

    turn: int
    items: tuple[Mention, ...]
    numbered: bool = False
    #: how the list was found: ``"numbered"`` items, a ``"coordination"`` ("A, B and C"),
    #: or a ``"run"`` of same-typed entities named one after another in separate clauses
    kind: str = "coordination"

    @property
    def explicit(self) -> bool:
        """A list the turn itself presents as one: numbered items, a coordination, or a
        run of vocabulary entities. A run of proper names is not: in a long answer it is
        every capitalised word in order ("Formation, Pangaea, Rodinia, …")."""
        return self.kind != "run" or all(m.source == "vocab" for m in self.items)


# Domain vocabulary ---------------------------------------------------------------------
# A domain vocabulary: types, canonical names, aliases and kinds loaded from JSON
# (``region: Dublin = eu-west-1``), matched in text by one compiled trie pattern; and the
# bundled vocabularies.


@dataclass(frozen=True, slots=True)
class _Entry:
    type: str
    name: str
    surfaces: tuple[str, ...]
    #: common nouns the entity is an instance of ("database", "db" for managed Postgres):
    #: what "the other db" or "that database" can point at
    kinds: tuple[str, ...] = ()


@dataclass(frozen=True)
class Vocabulary:
    """Domain vocabulary: typed canonical names with aliases.

    >>> v = Vocabulary.from_dict({"types": {"region": [{"name": "Dublin", "aliases": ["eu-west-1"]}]}})
    >>> [m.name for m in v.find("SLA in eu-west-1?")]
    ['Dublin']
    """

    entries: tuple[_Entry, ...] = ()
    attribute_types: frozenset[str] = field(default_factory=frozenset)
    #: types of the things a conversation is about (products, regions, services), as
    #: opposed to their aspects (features, plans, metrics); a question that names only
    #: aspects leaves its subject unsaid. Declared by the vocabulary file.
    subject_types: frozenset[str] = field(default_factory=frozenset)
    #: P(b | a) over documents: how typical entity b is where entity a is discussed
    #: (canonical names, case-folded). Domain knowledge for choosing between referents.
    related: Mapping[str, Mapping[str, float]] = field(default_factory=dict, compare=False,
                                                      hash=False)
    #: the documents the associations were counted over: (case-folded text, entity names)
    documents: tuple[tuple[str, frozenset[str]], ...] = field(default=(), compare=False,
                                                             hash=False)

    def with_associations(self, texts: Iterable[str]) -> Vocabulary:
        """The same vocabulary with entity associations counted over ``texts`` (documents:
        two entities are associated when the same passage names both).

        >>> v = Vocabulary.from_dict({"types": {"p": ["kiosk", "chatbot"], "f": ["warranty"]}})
        >>> v = v.with_associations(["kiosk warranty", "chatbot plans"])
        >>> v.association("warranty", "kiosk"), v.association("warranty", "chatbot")
        (1.0, 0.0)
        """
        docs: dict[str, int] = {}
        pairs: dict[str, dict[str, int]] = {}
        documents: list[tuple[str, frozenset[str]]] = []
        for text in texts:
            names = {m.name.casefold() for m in self.find(text)}
            documents.append((_norm(text).casefold(), frozenset(names)))
            for a in names:
                docs[a] = docs.get(a, 0) + 1
                row = pairs.setdefault(a, {})
                for b in names:
                    if b != a:
                        row[b] = row.get(b, 0) + 1
        related = {a: {b: n / docs[a] for b, n in row.items()} for a, row in pairs.items()}
        return Vocabulary(self.entries, self.attribute_types, self.subject_types, related,
                          tuple(documents))

    def association(self, a: str, b: str) -> float:
        """P(b | a): the share of documents naming ``a`` that also name ``b``. ``a`` may be
        any phrase (matched as a substring of the documents) when it is not an entity."""
        row = self.related.get(a.casefold())
        if row is not None:
            return row.get(b.casefold(), 0.0)
        key = _norm(a).casefold()
        if len(key) < 2 or not self.documents:
            return 0.0
        hits = [names for text, names in self.documents if key in text]
        if not hits:
            return 0.0
        return sum(b.casefold() in names for names in hits) / len(hits)

    @classmethod
    def from_dict(cls, data: object, *, source: str = "<vocabulary>") -> Vocabulary:
        if not isinstance(data, dict) or not isinstance(data.get("types"), dict):
            raise ConfigError(f"{source}: a vocabulary is an object with a 'types' object")
        entries: list[_Entry] = []
        for typ, items in data["types"].items():
            if not isinstance(items, list):
                raise ConfigError(f"{source}: types.{typ} must be a list of {{name, aliases}}")
            for i, it in enumerate(items):
                if isinstance(it, str):
                    it = {"name": it}
                if not isinstance(it, dict) or not isinstance(it.get("name"), str):
                    raise ConfigError(f"{source}: types.{typ}[{i}] needs a string 'name'")
                aliases = it.get("aliases") or []
                if not isinstance(aliases, list) or not all(isinstance(a, str) for a in aliases):
                    raise ConfigError(f"{source}: types.{typ}[{i}].aliases must be strings")
                surfaces = tuple(dict.fromkeys([it["name"], *aliases]))
                kinds = it.get("kinds") or []
                if not isinstance(kinds, list) or not all(isinstance(k, str) for k in kinds):
                    raise ConfigError(f"{source}: types.{typ}[{i}].kinds must be strings")
                entries.append(_Entry(str(typ), it["name"], surfaces,
                                      tuple(k.casefold() for k in kinds)))
        attr = data.get("attribute_types", [])
        subj = data.get("subject_types", [])
        if not isinstance(subj, list) or not all(isinstance(t, str) for t in subj):
            raise ConfigError(f"{source}: subject_types must be a list of type names")
        return cls(tuple(entries), frozenset(attr if isinstance(attr, list) else []),
                   frozenset(subj))

    @classmethod
    def load(cls, path: str | Path) -> Vocabulary:
        p = Path(path)
        try:
            data = json.loads(p.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise ConfigError(f"vocabulary file not found: {p}") from None
        except json.JSONDecodeError as exc:
            raise ConfigError(f"{p}: not valid JSON ({exc})") from None
        return cls.from_dict(data, source=str(p))

    @property
    def types(self) -> frozenset[str]:
        """The entity types this vocabulary knows ("region", "service", ...)."""
        return frozenset(e.type for e in self.entries)

    def merged(self, other: Vocabulary) -> Vocabulary:
        return Vocabulary(self.entries + other.entries, self.attribute_types | other.attribute_types,
                          self.subject_types | other.subject_types,
                          {**self.related, **other.related}, self.documents + other.documents)

    def __len__(self) -> int:
        return len(self.entries)

    @property
    def _pattern(self) -> re.Pattern[str] | None:
        return _compile_vocab(self.entries)

    def find(self, text: str) -> list[Mention]:
        """Non-overlapping vocabulary mentions, longest surface first."""
        pat = self._pattern
        if pat is None:
            return []
        norm = _norm(text)
        lookup = _surface_lookup(self.entries)
        out: list[Mention] = []
        for m in pat.finditer(norm):
            key = m.group(0).casefold()
            entry = lookup.get(key)
            if entry is None:
                continue
            out.append(Mention(entry.type, entry.name, text[m.start() : m.end()], m.start(),
                               m.end(), "vocab"))
        return out

    def type_of(self, name: str) -> str | None:
        e = _surface_lookup(self.entries).get(_norm(name).casefold())
        return e.type if e else None

    @property
    def kinds(self) -> frozenset[str]:
        """The common nouns entities are declared instances of ("database", "db")."""
        return frozenset(k for e in self.entries for k in e.kinds)

    def kinds_of(self, name: str) -> frozenset[str]:
        """The kind nouns of one entity (by any of its names), with its type."""
        e = _surface_lookup(self.entries).get(_norm(name).casefold())
        return frozenset((*e.kinds, e.type)) if e else frozenset()

    def surfaces_of(self, name: str) -> tuple[str, ...]:
        e = _surface_lookup(self.entries).get(_norm(name).casefold())
        return e.surfaces if e else (name,)


def _norm(text: str) -> str:
    # NFKC keeps offsets for the text we handle (ASCII, kana, kanji, full-width forms map 1:1
    # except rare ligatures); fall back to the raw text when lengths differ.
    n = unicodedata.normalize("NFKC", text)
    return n if len(n) == len(text) else text


def _is_cjk(s: str) -> bool:
    return any("\u3040" <= ch <= "\u9fff" or ch == "ー" for ch in s)


@lru_cache(maxsize=64)
def _compile_vocab(entries: tuple[_Entry, ...]) -> re.Pattern[str] | None:
    surfaces = {_norm(s): _is_cjk(s) for e in entries for s in e.surfaces}
    if not surfaces:
        return None
    return re.compile(_trie_pattern(surfaces), re.IGNORECASE)


#: how a Latin-script name must not touch an ASCII letter or digit (docs/output.md)
_AFTER_OK = "(?![A-Za-z0-9])"


def _trie_pattern(surfaces: dict[str, bool]) -> str:
    """One regex matching, at each position, the longest surface that fits there.

    The surfaces share prefixes, so they are merged into a trie: an alternation of every
    surface (longest first) made the regex engine try each one at every character of the
    text, hundreds of attempts per character. A Latin-script surface (``surfaces[s]`` is
    False for it) must not touch an ASCII letter or digit on either side; the check before
    it sits at the end of its path, as a fixed-width look-behind over the surface itself.
    Children come before the node's own end, so longer surfaces win, and backtracking
    falls back to a shorter one when the longer one's boundary fails, as the plain
    longest-first alternation did.
    """
    root: dict[str, Any] = {}
    for surface, cjk in surfaces.items():
        node = root
        for ch in surface:
            node = node.setdefault(ch.lower(), {})
        node.setdefault("", set()).add((len(surface), cjk))

    def emit(node: dict[str, Any]) -> str:
        alts = [re.escape(ch) + emit(child) for ch, child in sorted(node.items()) if ch]
        for depth, cjk in sorted(node.get("", ()), key=lambda x: x[1]):
            alts.append("" if cjk else rf"(?<![A-Za-z0-9][\s\S]{{{depth}}}){_AFTER_OK}")
        if len(alts) == 1:
            return alts[0]
        return "(?:" + "|".join(alts) + ")"

    first = "".join(sorted({re.escape(ch) for ch in root}))
    # the look-ahead rejects most positions with one character-class test
    return f"(?=[{first}])" + emit(root)


@lru_cache(maxsize=64)
def _surface_lookup(entries: tuple[_Entry, ...]) -> dict[str, _Entry]:
    out: dict[str, _Entry] = {}
    for e in entries:
        for s in e.surfaces:
            out.setdefault(_norm(s).casefold(), e)
    return out


#: the bundled corpus each bundled vocabulary's associations are counted over
BUNDLED_CORPUS_OF = {"cloud": "cloud_docs", "ja_site": "ja_site"}
#: how a shipped vocabulary is declared (``bundled:cloud``, ``bundled:ja-site``): the CLI
#: and the service read the same spelling
BUNDLED_PREFIX = "bundled:"


def bundled_name(spec: str) -> str | None:
    """The shipped vocabulary a ``bundled:NAME`` declaration names, as its file is named
    (``ja-site`` and ``ja_site`` are both ``ja_site``); ``None`` for any other spec. Whether
    that vocabulary exists is :func:`bundled_vocabulary`'s to say.

    >>> bundled_name("bundled:ja-site"), bundled_name("none")
    ('ja_site', None)
    """
    if not spec.startswith(BUNDLED_PREFIX):
        return None
    return spec[len(BUNDLED_PREFIX):].replace("-", "_")


@lru_cache(maxsize=8)
def bundled_vocabulary(name: str) -> Vocabulary:
    """A vocabulary shipped with turnscope (``cloud``, ``ja_site``), with entity
    associations counted over the bundled documents of the same domain."""
    try:
        ref = resources.files("turnscope").joinpath("data", "vocab", f"{name}.json")
        vocab = Vocabulary.from_dict(json.loads(ref.read_text(encoding="utf-8")), source=name)
    except FileNotFoundError:
        raise ConfigError(f"no bundled vocabulary named {name!r}") from None
    corpus = BUNDLED_CORPUS_OF.get(name)
    if corpus is None:
        return vocab
    try:
        lines = resources.files("turnscope").joinpath("data", "corpus", f"{corpus}.jsonl") \
            .read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return vocab
    texts = []
    for line in lines:
        if line.strip():
            row = json.loads(line)
            texts.append(f"{row.get('title', '')} {row.get('text', '')}")
    return vocab.with_associations(texts)


def bundled_vocabularies() -> Vocabulary:
    """Every vocabulary shipped with turnscope, merged (what the bundled set uses)."""
    merged = Vocabulary()
    for name in BUNDLED_CORPUS_OF:
        merged = merged.merged(bundled_vocabulary(name))
    return merged


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


# Latin letters with their accented forms: "Évora" and "Óbidos" are one word each
_L = "A-Za-z\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u024f"
_TOKEN = re.compile(rf"[{_L}0-9][{_L}0-9'’_\-./]*[{_L}0-9]|[{_L}0-9]")
_IDENT = re.compile(r"^(?=.*[0-9])(?=.*[A-Za-z])[A-Za-z0-9][A-Za-z0-9_\-./]*$|^\w+_\w+$|^\w+(?:\.\w+){2,}$")
_NUMBER = re.compile(r"^[0-9][0-9.,]*$")
_ACRONYM = re.compile(r"^[A-Z][A-Z0-9]{1,}s?$")
_QUOTED = re.compile(r"\"([^\"]{2,60})\"|“([^”]{2,60})”|「([^」]{1,40})」|『([^』]{1,40})』")
# Japanese compounds: runs of katakana, kanji and Latin/digits between kana and punctuation
# (Latin words and numbers joined by single spaces are one name: 「AirSound Pro 3 の重さ」)
_JA_COMPOUND = re.compile(r"[\u30a0-\u30ffー\u4e00-\u9fff々A-Za-z0-9][\u30a0-\u30ffー・\u4e00-\u9fff々A-Za-z0-9\-]*"
                          r"(?:(?<=[A-Za-z0-9]) (?=[A-Za-z0-9])[A-Za-z0-9][A-Za-z0-9\-]*)*")
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


# Enumerations --------------------------------------------------------------------------
# The ordered lists of alternatives a turn offers ("Frankfurt, Dublin and
# Paris", "1) … 2) …", 「AとBとC」), kept in order so that "the second one" can be resolved.

_PAIR_LINK = re.compile(r"\s*(?:↔|<->|⇄|<=>|/|&|and|vs\.?|versus)\s*", re.IGNORECASE)
#: what joins two items of a list; an English article may open the next item ("the Paleozoic
#: Era, the Mesozoic Era and the Cenozoic Era")
_COORD = re.compile(r"^\s*(?:,|、|，|/|and|or|,\s*and|,\s*or|and\s+also|as\s+well\s+as|vs\.?|versus|"
                    r"と|や|または|か|及び|および|、?\s*そして|、?\s*それから)(?:\s+(?:the|a|an))?\s*$", re.IGNORECASE)
_PAREN_SPAN = re.compile(r"\([^()]*\)|（[^（）]*）")
_LOOSE_COORD = re.compile(r"(?:,\s*|\s)(?:or|and)\s*$|、$|と$|や$|または$", re.IGNORECASE)
_INLINE_NUMBER_JA = re.compile(r"([1-9])(?:つ目|番目)(?:が|は|に|として)")
_INLINE_NUMBER = re.compile(r"(?<![\w.\-/])(\d{1,2})[.)）]\s+")
_NUMBERED_LINE = re.compile(r"^\s*(?:\(?(\d{1,2})[.)、）]|[-*•・]|[①-⑳])\s*(.+)$", re.MULTILINE)


def find_enumerations(text: str, turn: int, lang: str, ms: list[Mention]) -> list[Enumeration]:
    """The ordered lists of alternatives in ``text``, most explicit first, from its
    mentions ``ms`` (see :meth:`EntityExtractor.enumerations`)."""
    parens = [(p.start(), p.end()) for p in _PAREN_SPAN.finditer(text)]
    paren_starts = [a for a, _ in parens]

    def in_parens(m: Mention) -> bool:
        # the spans do not overlap and come in order: only the last one opening
        # before m can hold it (testing every span per mention was quadratic)
        k = bisect_left(paren_starts, m.start) - 1
        return k >= 0 and m.start < parens[k][1]

    named = [m for m in ms if not m.is_attribute and not in_parens(m)]
    by_start = sorted(range(len(named)), key=lambda k: named[k].start)
    named_starts = [named[k].start for k in by_start]

    def named_from(lo: int, hi: int) -> list[Mention]:
        """The named mentions starting in [lo, hi), in the order of ``named``."""
        ks = by_start[bisect_left(named_starts, lo):bisect_left(named_starts, hi)]
        return [named[k] for k in sorted(ks)]
    out: list[Enumeration] = []

    markers = list((_INLINE_NUMBER_JA if lang == "ja" else _INLINE_NUMBER).finditer(text))
    if len(markers) < 2:
        markers = list(_NUMBERED_LINE.finditer(text))
        bodies = [(ln.start(2), ln.end()) for ln in markers]
    else:
        nums = [int(mk.group(1)) for mk in markers]
        if nums != list(range(1, len(markers) + 1)):
            markers, bodies = [], []
        else:
            bodies = [(mk.end(), markers[k + 1].start() if k + 1 < len(markers) else len(text))
                      for k, mk in enumerate(markers)]
    if len(bodies) >= 2:
        items: list[Mention] = []
        for a, b in bodies:
            clause = re.split(r"[,，、。;:：(（—–]|\s(?:or|and|which|that|with)\s|です|でした",
                              text[a:b])[0]
            clause = " ".join(re.sub(r"^(?:the|a|an)\s+", "", clause.strip(), flags=re.I)
                              .split()[:8]).rstrip(".。")
            # (English: room for the article the clause dropped; Japanese clauses end
            # where they were split, or "カメラです。入館証…" would reach the next sentence)
            clause_end = a + len(text[a:b]) - len(text[a:b].lstrip()) + len(clause) \
                + (0 if lang == "ja" else 4)
            inside = named_from(a, min(b, clause_end))
            if lang == "ja":
                inside = [m for m in inside if m.source == "vocab"]
            pair = [m for m in named_from(a, b) if not in_parens(m)]
            if len(pair) >= 2 and pair[0].type == pair[1].type \
                    and _PAIR_LINK.fullmatch(_PAREN_SPAN.sub("", text[pair[0].end:pair[1].start])):
                # "3. Virginia (us-east-1) ↔ Oregon (us-west-2)": the item is the pair
                both = f"{pair[0].name} and {pair[1].name}"
                items.append(Mention(pair[0].type, both, both, pair[0].start, pair[1].end,
                                     pair[0].source))
                continue
            if inside and len(clause.split()) <= len(inside[0].surface.split()) + 1:
                items.append(inside[0])
            elif clause:
                typ = inside[0].type if inside else "phrase"
                items.append(Mention(typ, clause, clause, a, a + len(clause), "general"))
        if len(items) == len(bodies):
            out.append(Enumeration(turn, tuple(items), numbered=True, kind="numbered"))

    def coordination(pool: list[Mention], loose: bool) -> list[Mention]:
        """The longest chain of ``pool`` joined by coordinators. ``loose`` lets a
        clause's tail sit between two items ("RDB snapshots every 6 hours, or AOF")."""
        # the best chain is a prefix of a chain list (chains only grow or restart):
        # keeping it by reference and length avoids copying it at every step
        best: list[Mention] = []
        best_len = 0
        chain: list[Mention] = []
        surfaces: set[str] = set()
        last_end = 0
        for m in pool:
            if in_parens(m):
                continue
            between = text[last_end : m.start].strip()
            if chain and (between in ("(", "（") or (m.name == chain[-1].name
                                                    and m.surface == chain[-1].surface)):
                last_end = m.end  # apposition: "Tokyo (ap-northeast-1)"
                continue
            gap = _PAREN_SPAN.sub("", text[last_end : m.start]).strip("()（） ") if chain else ""
            joined = bool(_COORD.match(gap)) or (
                loose and bool(_LOOSE_COORD.search(gap)) and not re.search(r"[.;:?!。]", gap))
            if chain and joined and m.surface not in surfaces:
                chain.append(m)
                surfaces.add(m.surface)
            else:
                chain = [m]
                surfaces = {m.surface}
            last_end = m.end
            if len(chain) > best_len:
                best, best_len = chain, len(chain)
        return best[:best_len]

    typed_pool = [x for x in ms if not x.is_attribute and (x.source == "vocab" or x.type == "name")]
    best = coordination(typed_pool, loose=True)
    if len(best) >= 2:
        # the last item may carry the list's noun and so not be a name of its own
        # ("the Paleozoic, Mesozoic and Cenozoic eras"): a capitalised phrase joined on
        after = [x for x in ms if x.start >= best[-1].end and not x.is_attribute and not in_parens(x)]
        if after:
            nxt = min(after, key=lambda x: x.start)
            if nxt.surface[:1].isupper() and _COORD.match(text[best[-1].end:nxt.start]) \
                    and nxt.surface not in {m.surface for m in best}:
                best = [*best, nxt]
    if len(best) < 2:
        best = coordination([x for x in ms if not x.is_attribute], loose=False)
    if len(best) >= 2:
        if len({m.name for m in best}) < len(best):
            best = [Mention(m.type, m.surface, m.surface, m.start, m.end, m.source)
                    for m in best]
        out.append(Enumeration(turn, tuple(best), numbered=False))

    by_type: dict[str, list[Mention]] = {}
    seen_names: dict[str, set[str]] = {}
    for m in named:
        if m.source == "vocab" or m.type == "name":
            bucket = by_type.setdefault(m.type, [])
            names = seen_names.setdefault(m.type, set())
            if m.name not in names:
                bucket.append(m)
                names.add(m.name)
    for items_t in by_type.values():
        if len(items_t) >= 2 and all(
                [x.name for x in e.items] != [y.name for y in items_t] for e in out):
            out.append(Enumeration(turn, tuple(items_t), numbered=False, kind="run"))
    return out


# Liveness slots -----------------------------------------------------------------------
# Entity liveness slots (docs/architecture.md).
#
# ::
#
#                 mentioned again
#        +-------------------------------+
#        v                               |
#      LIVE --(stale_after silent turns)--> STALE --(evict_after silent turns)--> EVICTED
#        |                                   |
#        +--(new entity of the same type)----+--> SUPERSEDED
#
# Silence is counted per entity from its own last mention, in turns (user and
# assistant turns both count, as the turn numbering does). Going stale is
# reversible; eviction and supersession are terminal. A later mention of a
# terminated entity opens a *new* slot (a new generation): the old slot never
# comes back, but the user can always name a thing again.
#
# Supersession only applies to *exclusive* types: vocabulary types by default
# (a ``service`` replaces a ``service``). The general extractor's coarse types
# (``phrase``, ``name``, ``term``) never supersede one another: "a new phrase"
# says nothing about the old one being finished with. Entities introduced in the
# same turn never supersede each other either (that is an enumeration or a
# comparison, "Frankfurt and Dublin").

#: docs/architecture.md defaults, in turns of silence
DEFAULT_STALE_AFTER = 3
DEFAULT_EVICT_AFTER = 8


class SlotStatus(StrEnum):
    LIVE = "live"
    STALE = "stale"
    EVICTED = "evicted"
    SUPERSEDED = "superseded"

    @property
    def terminal(self) -> bool:
        return self in (SlotStatus.EVICTED, SlotStatus.SUPERSEDED)


@dataclass(frozen=True, slots=True)
class LivenessConfig:
    stale_after: int = DEFAULT_STALE_AFTER
    evict_after: int = DEFAULT_EVICT_AFTER
    #: None = every type except the general extractor's coarse ones
    exclusive_types: frozenset[str] | None = None

    def __post_init__(self) -> None:
        if self.stale_after < 1 or self.evict_after <= self.stale_after:
            raise ConfigError(
                f"need 1 <= stale_after < evict_after, got stale_after={self.stale_after}, "
                f"evict_after={self.evict_after}"
            )

    def is_exclusive(self, typ: str) -> bool:
        if typ == "attribute":
            return False
        if self.exclusive_types is None:
            return typ not in GENERAL_TYPES
        return typ in self.exclusive_types


@dataclass(frozen=True, slots=True)
class Slot:
    type: str
    name: str
    introduced: int
    last_seen: int
    status: SlotStatus = SlotStatus.LIVE
    mentions: int = 1
    by_user: bool = False  # ever mentioned by the user (users' entities anchor topics)
    superseded_by: str | None = None

    @property
    def key(self) -> str:
        return f"{self.type}:{self.name}"

    def silent_turns(self, now: int) -> int:
        """Turns strictly between the last mention and ``now``."""
        return max(0, now - self.last_seen - 1)


class SlotTable:
    """The working set of entities of one conversation.

    >>> t = SlotTable()
    >>> from turnscope.entities import Mention
    >>> t.observe(1, [Mention("service", "billing export API", "billing export API", 0, 1)])
    >>> t.observe(5, [Mention("service", "reporting export API", "reporting export API", 0, 1)])
    >>> [(s.name, s.status.value) for s in t.slots()]
    [('billing export API', 'superseded'), ('reporting export API', 'live')]
    """

    def __init__(self, config: LivenessConfig | None = None) -> None:
        self.config = config or LivenessConfig()
        self._slots: list[Slot] = []
        # index of the current (non-terminal) slot per key; terminal ones drop out
        self._current: dict[str, int] = {}
        self.now = 0

    # -- queries ---------------------------------------------------------------------
    def slots(self) -> list[Slot]:
        """All slots ever opened, oldest first (terminal ones included)."""
        return list(self._slots)

    def current(self) -> list[Slot]:
        """Non-terminal slots (live or stale)."""
        return [self._slots[i] for i in sorted(self._current.values())]

    def recent(self, limit: int) -> list[Slot]:
        """The ``limit`` most recently opened slots (any status), newest first; bounded, so
        a look back does not grow with the conversation."""
        return [self._slots[i] for i in range(len(self._slots) - 1,
                                               max(-1, len(self._slots) - 1 - limit), -1)]

    def live(self) -> list[Slot]:
        return [s for s in self.current() if s.status is SlotStatus.LIVE]

    def get(self, typ: str, name: str) -> Slot | None:
        i = self._current.get(_key(typ, name))
        return self._slots[i] if i is not None else None

    def find_name(self, name: str) -> Slot | None:
        """Latest slot (any status) with this canonical name, whatever its type."""
        low = name.casefold()
        for s in reversed(self._slots):
            if s.name.casefold() == low:
                return s
        return None

    def copy(self) -> SlotTable:
        """An independent table with the same slots (a forked session's): slots are frozen
        records and are shared; only the containers that :meth:`observe` and
        :meth:`advance` change are new. The configuration is shared (it is never changed)."""
        new = SlotTable.__new__(SlotTable)
        new.config = self.config
        new._slots = list(self._slots)
        new._current = dict(self._current)
        new.now = self.now
        return new

    # -- transitions -----------------------------------------------------------------
    def advance(self, now: int) -> None:
        """Age every slot to turn ``now`` (silence-based transitions)."""
        if now < self.now:
            return
        self.now = now
        cfg = self.config
        for key, i in list(self._current.items()):
            s = self._slots[i]
            silent = s.silent_turns(now)
            if silent >= cfg.evict_after:
                self._slots[i] = replace(s, status=SlotStatus.EVICTED)
                del self._current[key]
            elif silent >= cfg.stale_after and s.status is SlotStatus.LIVE:
                self._slots[i] = replace(s, status=SlotStatus.STALE)

    def observe(self, turn: int, mentions: Iterable[Mention], *, by_user: bool = False) -> None:
        """Record the mentions of one turn: revive, open or supersede slots."""
        self.advance(turn)
        ms = [m for m in mentions if m.type != "attribute"]
        arriving_types = {m.type for m in ms if self.config.is_exclusive(m.type)}
        arriving_keys = {_key(m.type, m.name) for m in ms}
        # supersession: an exclusive-type newcomer ends every other slot of its type,
        # unless that slot is mentioned in the same turn (comparison / enumeration)
        new_keys = {k for k in arriving_keys if k not in self._current}
        new_types = {m.type for m in ms if _key(m.type, m.name) in new_keys} & arriving_types
        for key, i in list(self._current.items()):
            s = self._slots[i]
            if s.type in new_types and key not in arriving_keys:
                newcomer = next(m.name for m in ms
                                if m.type == s.type and _key(m.type, m.name) in new_keys)
                self._slots[i] = replace(s, status=SlotStatus.SUPERSEDED, superseded_by=newcomer)
                del self._current[key]
        for m in ms:
            key = _key(m.type, m.name)
            cur = self._current.get(key)
            if cur is None:
                self._slots.append(Slot(m.type, m.name, turn, turn, SlotStatus.LIVE, 1, by_user))
                self._current[key] = len(self._slots) - 1
            else:
                s = self._slots[cur]
                if s.last_seen == turn and s.status is SlotStatus.LIVE:
                    continue  # several mentions in one turn count once
                self._slots[cur] = replace(s, last_seen=turn, status=SlotStatus.LIVE,
                                         mentions=s.mentions + 1, by_user=s.by_user or by_user)

    def table(self) -> list[dict[str, object]]:
        """The slot table as plain rows, for logs and traces."""
        return [
            {"type": s.type, "name": s.name, "introduced": s.introduced,
             "last_seen": s.last_seen, "status": s.status.value}
            for s in self._slots
        ]


def _key(typ: str, name: str) -> str:
    return f"{typ}:{name.casefold()}"
