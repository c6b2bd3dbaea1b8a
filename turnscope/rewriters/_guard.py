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

The same reading of a query against the conversation names what a rewrite brought in
(:func:`brought_in`, the output's ``carried`` where a rule named nothing itself).

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
from difflib import SequenceMatcher

from turnscope._lexicon import FUNCTION_WORDS, contains_term, normalize
from turnscope.entities import EntityExtractor, Mention, SlotStatus
from turnscope.rewriters._base import RewriteRequest
from turnscope.rewriters._prompts import PLACEHOLDER_PATTERN
from turnscope.scope import render_evidence

__all__ = [
    "CHECKED_TYPES_SKIPPED",
    "LeakReport",
    "brought_in",
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


#: a word in Latin script or digits, or one character of any other script (Japanese has no
#: spaces: its runs are compared character by character)
_OTHER_SCRIPT = r"[^\W_A-Za-z0-9]"
_TOKEN = re.compile(rf"[A-Za-z0-9]+(?:[-'’.][A-Za-z0-9]+)*|{_OTHER_SCRIPT}")
_OTHER_RUN = re.compile(rf"{_OTHER_SCRIPT}+")
#: Japanese particles a run of brought-in characters may start or end with
_RUN_PARTICLES = frozenset("のはがをにでともへや")


#: brackets a brought-in run may open and so must close
_BRACKETS = (("(", ")"), ("「", "」"), ("『", "』"))


def _changed_runs(matcher: SequenceMatcher[str], tokens: Sequence[re.Match[str]]) -> list[tuple[int, int]]:
    """The query's inserted or replaced token runs, as (start, end) token indices. One
    character of Japanese both texts happen to share ("ー" of ページ and of マニュアル) does not
    split a run: character by character, such a match is chance, not the user's word."""
    runs: list[tuple[int, int]] = []
    ops = matcher.get_opcodes()
    for k, (tag, _, _, j1, j2) in enumerate(ops):
        if tag in ("insert", "replace"):
            if runs and runs[-1][1] == j1:
                runs[-1] = (runs[-1][0], j2)
            else:
                runs.append((j1, j2))
        elif (tag == "equal" and j2 - j1 == 1 and runs and runs[-1][1] == j1 and k + 1 < len(ops)
              and ops[k + 1][0] in ("insert", "replace") and not tokens[j1].group().isascii()):
            runs[-1] = (runs[-1][0], j2)
    return runs


def _edge(token: str) -> bool:
    t = token.casefold()
    return t in FUNCTION_WORDS or t in _RUN_PARTICLES


def brought_in(typed: str, query: str, sources: Sequence[str]) -> tuple[str, ...]:
    """What ``query`` holds that ``typed`` does not and the conversation does: each run of
    the query's words that replaced or joined the typed words, cut of function words (and
    Japanese particles) at its ends, in query order, kept only when the conversation said it:
    each Latin word of it, and each stretch of Japanese as it stands. It names ``carried``
    where a rule wrote a phrase in without naming it (an ordinal's option, a pronoun's
    antecedent); a run holding anything from nowhere is left out, not guessed.

    >>> brought_in("What's the SLA on the second one?", "What's the SLA on Dublin?",
    ...            ["Frankfurt and Dublin both support it."])
    ('Dublin',)
    >>> brought_in("それは別料金？", "アバター案内は別料金？", ["アバター案内はAIアバターです。"])
    ('アバター案内',)
    """
    if query.strip() == typed.strip():
        return ()
    tokens = list(_TOKEN.finditer(query))
    typed_tokens = [t.casefold() for t in _TOKEN.findall(typed)]
    matcher = SequenceMatcher(a=typed_tokens, b=[t.group().casefold() for t in tokens], autojunk=False)
    said_words = {w.casefold() for src in sources for w in _TOKEN.findall(src)}
    said_text = "\n".join(sources).casefold()
    own = set(typed_tokens)
    out: list[str] = []
    for j1, j2 in _changed_runs(matcher, tokens):
        run = tokens[j1:j2]
        while run and _edge(run[0].group()):
            run = run[1:]
        while run and _edge(run[-1].group()):
            run = run[:-1]
        folded = [t.group().casefold() for t in run]
        # (a run of the user's own words only moved: "how fast does dublin recover")
        if not run or all(t in own for t in folded):
            continue
        text_end = run[-1].end()
        for opening, closing in _BRACKETS:
            if query.count(opening, run[0].start(), text_end) > query.count(closing, run[0].start(), text_end) \
                    and query[text_end:text_end + 1] == closing:
                text_end += 1  # "Customer-managed keys (CMK)": the bracket the run opened
        phrase = query[run[0].start():text_end]
        if all(w in said_words for w in _TOKEN.findall(phrase.casefold()) if w.isascii()) and \
                all(j in said_text for j in _OTHER_RUN.findall(phrase.casefold())):
            out.append(phrase)
    return tuple(dict.fromkeys(out))
