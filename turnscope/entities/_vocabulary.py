"""A domain vocabulary: types, canonical names, aliases and kinds loaded from JSON
(``region: Dublin = eu-west-1``), matched in text by one compiled trie pattern; and the
bundled vocabularies.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from turnscope._exceptions import ConfigError
from turnscope.entities._mention import Mention


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
