"""The leak guard: entities in a model's query that its scope did not give it.

A scope policy decides what the rewriter may see; a model can still write
something else into the query, from its own knowledge or because it guessed.
An entity in the query is a **leak** when it occurs neither in the latest
message nor in the evidence the model was shown (the scoped turns, live slots,
recalled exchange, lists and screen). That covers, with one rule:

* an *evicted* or *superseded* slot, and a *stale* one under a slot-based scope
  (the scope left it out, so it is absent from the evidence);
* an entity of an earlier *segment* or outside the *window*;
* an entity found nowhere in the conversation at all (``not in conversation``).

Under ``full`` nothing in the transcript is a leak: the scope excluded nothing,
and the contamination that follows is measured by the evaluation instead.

Which entities of the query are checked: vocabulary entities, the general
extractor's names, acronyms and identifiers, and the entities the model itself
declared. The general extractor's multi-word *phrases* are not checked, because
a model's paraphrase ("pagination support" for "paginated") would read as a leak.

>>> from turnscope import Session
>>> seen = []
>>> class Capture:
...     name = "capture"
...     def run(self, request):
...         seen.append(request)
...         return s.embedded.run(request)
>>> s = Session(policy="liveness", rewriter=Capture())
>>> _ = s.user("Is the billing export API paginated?")
>>> find_leaks("Is the billing export API paginated in Tokyo?", seen[0]).leaks
('Tokyo',)
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from turnscope._lexicon import FUNCTION_WORDS, contains_term, normalize
from turnscope.entities import EntityExtractor, Mention, SlotStatus
from turnscope.rewriters._base import RewriteRequest
from turnscope.rewriters._prompts import PLACEHOLDER_PATTERN
from turnscope.scope import render_evidence

__all__ = [
    "CHECKED_TYPES_SKIPPED",
    "LeakReport",
    "conversation_text",
    "find_leaks",
    "invented_entities",
    "placeholder_echoes",
    "scoped_evidence",
]

#: general-extractor types that are not checked (paraphrase noise, see module docstring)
CHECKED_TYPES_SKIPPED = frozenset({"phrase", "attribute"})

_WORD = re.compile(r"[a-z0-9][a-z0-9\-]*")
#: longest first, so that "ations" is tried before "s"
_SUFFIXES = ("ations", "ation", "ating", "ated", "ions", "ion", "ing", "ies", "ed", "es", "s")


@dataclass(frozen=True, slots=True)
class LeakReport:
    """The leaks of one query. ``reasons`` maps each leaked name to why it was excluded:
    ``evicted``, ``superseded``, ``stale``, ``out of scope`` or ``not in conversation``."""

    leaks: tuple[str, ...] = ()
    reasons: dict[str, str] = field(default_factory=dict)
    checked: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.leaks)


def scoped_evidence(request: RewriteRequest) -> str:
    """What a scope shows a rewriter, as text: turns, slots, screen, the latest message,
    and the items of in-scope lists (they may come from a turn the scope does not show)."""
    text = render_evidence(request.scope, request.state, request.message)
    lists = [m.name for e in request.scope.enumerations for m in e.items]
    return text + ("\nLISTS: " + "; ".join(lists) if lists else "")


def _stem(word: str) -> str:
    for suf in _SUFFIXES:
        if word.endswith(suf) and len(word) - len(suf) >= 4:
            return word[: -len(suf)]
    return word


def _stems(text: str) -> set[str]:
    return {_stem(w) for w in _WORD.findall(normalize(text))}


def _known(name: str, surfaces: Iterable[str], typ: str, haystack: str, stems: set[str]) -> bool:
    """Whether ``name`` (or one of its surfaces) occurs in the haystack.

    Exact term match first (docs/output.md rules). For Latin names a looser match
    follows: every content word of the name, up to a light suffix stem, occurs in
    the haystack, ignoring a word that merely repeats the entity's type ("Dublin
    region" is known when the evidence says "Dublin").
    """
    for s in (name, *surfaces):
        if s.strip() and contains_term(haystack, s):
            return True
    words = [w for w in _WORD.findall(normalize(name)) if w not in FUNCTION_WORDS]
    type_words = {_stem(w) for w in _WORD.findall(normalize(typ))}
    content = [_stem(w) for w in words if _stem(w) not in type_words]
    if not content or re.search(r"[^\x00-\x7f]", name):
        return False
    return all(w in stems for w in content)


def _reason(name: str, request: RewriteRequest) -> str:
    state, scope = request.state, request.scope
    slot = state.slots.find_name(name)
    if slot is not None:
        if slot.status in (SlotStatus.EVICTED, SlotStatus.SUPERSEDED):
            return slot.status.value
        if slot.status is SlotStatus.STALE and scope.guarded:
            return "stale"
    if any(contains_term(t.content, name) for t in state.turns):
        return "out of scope"
    return "not in conversation"


def _candidates(query: str, lang: str, declared: Sequence[Mention],
                extractor: EntityExtractor) -> list[Mention]:
    found = [m for m in extractor.extract(query, lang)
             if m.source == "vocab" or m.type not in CHECKED_TYPES_SKIPPED]
    for m in declared:
        if m.name.strip() and (contains_term(query, m.name) or contains_term(query, m.surface)):
            found.append(m)
    out: list[Mention] = []
    seen: set[str] = set()
    for m in found:
        if m.name.casefold() not in seen:
            seen.add(m.name.casefold())
            out.append(m)
    return out


def find_leaks(query: str, request: RewriteRequest, *, evidence: str | None = None,
               entities: Sequence[Mention] = (), extractor: EntityExtractor | None = None
               ) -> LeakReport:
    """Entities in ``query`` that are in neither the message nor the scoped evidence.

    ``evidence`` is the text the model was shown (by default the scope rendered with
    :func:`scoped_evidence`); ``entities`` are the ones the model declared;
    ``extractor`` finds the others (give the session's, so vocabulary aliases count:
    "Dublin" is known when the evidence says "eu-west-1").
    """
    ex = extractor or EntityExtractor()
    haystack = (evidence if evidence is not None else scoped_evidence(request))
    haystack = haystack + "\n" + request.message.text
    candidates = _candidates(query, request.message.lang, entities, ex)
    leaks = _unknown(candidates, haystack, ex)
    reasons = {name: _reason(name, request) for name in leaks}
    return LeakReport(leaks, reasons, tuple(m.name for m in candidates))


def _unknown(mentions: Sequence[Mention], haystack: str, ex: EntityExtractor) -> tuple[str, ...]:
    """The names of ``mentions`` that ``haystack`` does not contain (aliases count)."""
    stems = _stems(haystack)
    known_vocab = {m.name.casefold() for m in ex.vocabulary.find(haystack)}
    out: list[str] = []
    for m in mentions:
        if m.name.casefold() in known_vocab:
            continue
        surfaces = (m.surface, *ex.vocabulary.surfaces_of(m.name))
        if not _known(m.name, surfaces, m.type, haystack, stems):
            out.append(m.name)
    return tuple(out)


def conversation_text(request: RewriteRequest, evidence: str | None = None) -> str:
    """Everything the conversation holds, whatever the scope showed: every turn, the
    latest message, the screens, and ``evidence`` (slots and lists shown as text)."""
    parts = [evidence if evidence is not None else scoped_evidence(request)]
    for t in request.state.turns:
        parts.append(t.content)
        if t.screen is not None:
            parts.extend(x for x in (t.screen.page_title, t.screen.page_url, t.screen.site) if x)
    parts.append(request.message.text)
    scr = request.message.screen
    if scr is not None:
        parts.extend(x for x in (scr.page_title, scr.page_url, scr.site) if x)
    return "\n".join(parts)


def invented_entities(query: str, request: RewriteRequest, *, evidence: str | None = None,
                      entities: Sequence[Mention] = (), extractor: EntityExtractor | None = None
                      ) -> tuple[str, ...]:
    """Names the answer gives that occur nowhere in the conversation.

    Unlike :func:`find_leaks`, which asks what the *scope* excluded, this asks what the
    conversation never said at all: a name in the query, or any entity the model
    declared even if the query does not write it (declared entities become liveness
    slots, so an invented one would be offered to every later turn as live).

    >>> from turnscope import Session
    >>> seen = []
    >>> class Capture:
    ...     name = "capture"
    ...     def run(self, request):
    ...         seen.append(request)
    ...         return s.embedded.run(request)
    >>> s = Session(policy="liveness", rewriter=Capture())
    >>> _ = s.user("Is the billing export API paginated?")
    >>> invented_entities("Is the billing export API paginated?", seen[0],
    ...                   entities=[Mention("region", "Tokyo", "Tokyo", -1, -1, "llm")])
    ('Tokyo',)
    """
    ex = extractor or EntityExtractor()
    haystack = conversation_text(request, evidence)
    candidates = _candidates(query, request.message.lang, (), ex)
    names = {m.name.casefold() for m in candidates}
    candidates += [m for m in entities if m.name.strip() and m.name.casefold() not in names]
    return _unknown(candidates, haystack, ex)


def placeholder_echoes(texts: Iterable[str], evidence: str) -> tuple[str, ...]:
    """Angle-bracketed placeholders (``<standalone query>``, ``<name>``) in the answer's
    ``texts`` that the evidence does not contain: copied from the prompt's example
    object rather than filled in. One the user wrote ("what does <details> do?") is not.

    >>> placeholder_echoes(["<standalone query>", "<name>"], "LATEST MESSAGE: hi")
    ('<standalone query>', '<name>')
    >>> placeholder_echoes(["What does the <details> tag do?"], "the <details> tag")
    ()
    """
    seen = evidence.casefold()
    out: list[str] = []
    for text in texts:
        for p in PLACEHOLDER_PATTERN.findall(text):
            if p.casefold() not in seen and p not in out:
                out.append(p)
    return tuple(out)
