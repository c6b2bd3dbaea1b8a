"""References resolved through the vocabulary's typed slots: one-anaphora ("that one",
"the irish one"), a contrastive modifier ("the reporting one"), a type noun ("that
region", "the other db").
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from turnscope._lexicon import DEMONYMS
from turnscope.conversation import ConversationState, ResolvedTurn, Role
from turnscope.entities import GENERAL_TYPES, EntityExtractor, Mention, SlotStatus
from turnscope.references import anchors
from turnscope.rewriters._rules._base import of_kind, scoped_user_records
from turnscope.rewriters._rules._text import DEFAULT_OTHER_LOOKBACK, _the
from turnscope.scope import Message, Scope

_ONE_MOD = re.compile(r"\bthe\s+(?P<mod>(?:[a-z][a-z\-]+\s+){0,2}[a-z][a-z\-]+)\s+ones?\b",
                      re.IGNORECASE)
_NOT_MODIFIERS = frozenset("first second third last other same next previous new old right "
                           "best only former latter".split())
_ABOUT_WORD = re.compile(r"\b(?:about|for)\s+(?:the\s+)?(?P<mod>[a-z][a-z\-]+)\s*\??\s*$", re.IGNORECASE)
#: "org-level", "account-wide": the modifier is its first part
_MOD_SUFFIXES = frozenset("level wide based side scoped only".split())
_OTHER_ONE = re.compile(r"\b(?:the\s+)?other\s+one\b", re.IGNORECASE)
_TYPE_REF = re.compile(r"\b(?:that|this|the|those|these)\s+(?P<other>other\s+)?(?P<noun>[a-z]+)"
                       r"(?:\s+(?:you|we|i)\s+(?:suggested|recommended|mentioned|said|picked|chose|"
                       r"listed))?\b", re.IGNORECASE)
_ONE_PRON = re.compile(r"\b(?:that|this)\s+one\b|\b(?P<verb>set|get|create|make|use|pick|choose|"
                       r"buy|need|add|enable|try)\s+one\b", re.IGNORECASE)


def type_reference(extractor: EntityExtractor, text: str, lang: str, scope: Scope, state: ConversationState,
                    present: set[str]) -> tuple[str, Mention] | None:
    if lang != "en":
        return None
    for m in _TYPE_REF.finditer(text):
        word = m.group("noun").lower()
        nouns = {word, word.rstrip("s")}
        same_kind = sorted((sl for sl in (*scope.slots, *scope.stale) if of_kind(extractor, sl, nouns)),
                           key=lambda sl: sl.last_seen, reverse=True)
        if m.group("other"):
            # "the other db": of that kind, not the one the conversation is on now; the
            # one it superseded is exactly "the other" one, so terminal slots count here
            current = same_kind[0].name if same_kind else None
            same_kind = same_kind[1:] + [
                sl for sl in state.slots.recent(DEFAULT_OTHER_LOOKBACK)
                if sl.status is SlotStatus.SUPERSEDED and sl.superseded_by == current
                and of_kind(extractor, sl, nouns)]
        cands = [sl for sl in same_kind if sl.name.casefold() not in present]
        if cands:
            best = cands[0]
            ent = Mention(best.type, best.name, best.name, 0, 0, "slot")
            return text[: m.start()] + best.name + text[m.end():], ent
    return None

def answer_new(scope: Scope, state: ConversationState) -> list[Mention]:
    """Entities the latest in-scope assistant turn introduced (absent from the question
    it answered): the alternatives an answer offers are what "that one" selects."""
    for t in sorted(scope.turns, reverse=True):
        turn = state.turns[t - 1]
        if turn.role is not Role.ASSISTANT:
            continue
        asked = {m.name.casefold() for m in state.mentions.get(t - 1, ())}
        return [m for m in state.mentions.get(t, ())
                if not m.is_attribute and anchors(m) and m.name.casefold() not in asked]
    return []

def resolve_one(extractor: EntityExtractor, text: str, lang: str, scope: Scope, state: ConversationState,
                 msg: Message) -> tuple[str, Mention | None] | None:
    if lang != "en":
        return None
    m = _ONE_MOD.search(text)
    if m is not None and m.group("mod").lower() not in _NOT_MODIFIERS:
        mod = m.group("mod").lower()
        ent = None
        mod_words = mod.split()
        for sl in (*scope.slots, *scope.stale):
            words = sl.name.lower().replace("-", " ").split()
            if sl.type != "attribute" and all(w in words for w in mod_words):
                ent = Mention(sl.type, sl.name, sl.name, 0, 0, "slot")
                break
        if ent is None:
            # "the irish one": a demonym names the place a vocabulary alias spells out
            place = DEMONYMS.get(mod)
            hits = extractor.vocabulary.find(place) if place else []
            hits = hits or extractor.vocabulary.find(mod)
            if hits:
                ent = hits[0]
        if ent is None:
            ent = list_member_named(extractor, mod_words, scope)
        if ent is None:
            ent = described_as(mod, scope, state, msg.index)
        if ent is not None:
            return text[: m.start()] + _the(ent.name, lang) + text[m.end():], ent
        return None
    m = _OTHER_ONE.search(text)
    if m is not None:
        # "the other one": the member of the last pair that was not just discussed
        asked = {x.name.casefold() for r in scoped_user_records(scope, state)[:1]
                 for x in r.entities}
        for e in scope.enumerations:
            if len(e.items) == 2:
                rest = [x for x in e.items if x.name.casefold() not in asked]
                if len(rest) == 1:
                    return (text[: m.start()] + _the(rest[0].name, lang) + text[m.end():],
                            rest[0])
        return None
    m = _ONE_PRON.search(text)
    if m is None:
        return None
    introduced = answer_new(scope, state)
    if not introduced:
        return None
    ent = introduced[0]
    group = m.group("verb")
    rep = f"{group} {_the(ent.name, lang)}" if group else _the(ent.name, lang)
    return text[: m.start()] + rep + text[m.end():], ent

def list_member_named(extractor: EntityExtractor, mod_words: Sequence[str], scope: Scope) -> Mention | None:
    """"the us one of the two": the member of a list in scope that one of its names
    spells with the modifier ("us-east-1"), when exactly one member does."""
    vocab = extractor.vocabulary
    for enum in reversed(scope.enumerations):
        hits = []
        for item in enum.items:
            tokens = {t for surface in vocab.surfaces_of(item.name)
                      for t in re.split(r"[\s\-_.()]+", surface.casefold()) if t}
            if all(w in tokens for w in mod_words):
                hits.append(item)
        if len(hits) == 1:
            return hits[0]
    return None

def described_as(mod: str, scope: Scope, state: ConversationState,
                  now: int) -> Mention | None:
    """"the org-level one": the entity in scope that the conversation's own answers
    described with the modifier ("… per organization, shared by all projects in the
    org"), when exactly one of them was. Only answers about a single entity of its
    type count, within the eviction horizon (bounded)."""
    core = mod.split("-")[0] if "-" in mod and mod.split("-")[-1] in _MOD_SUFFIXES else mod
    if len(core) < 3:
        return None
    pattern = re.compile(rf"\b{re.escape(core)}\w*", re.IGNORECASE)
    # a superseded entity counts: the modifier names it explicitly, as "the other" does
    superseded = [sl for sl in state.slots.recent(DEFAULT_OTHER_LOOKBACK)
                  if sl.status is SlotStatus.SUPERSEDED]
    cands = {sl.name.casefold(): sl for sl in (*superseded, *scope.slots, *scope.stale)
             if sl.type != "attribute" and sl.type not in GENERAL_TYPES}
    hits: set[str] = set()
    horizon = max(0, now - 2 * state.slots.config.evict_after)
    for t in range(now - 1, horizon - 1, -1):
        turn = state.turns[t - 1] if 0 < t <= len(state.turns) else None
        if turn is None or turn.role is not Role.ASSISTANT or not pattern.search(turn.content):
            continue
        about = [m for m in state.mentions.get(t, ()) if m.name.casefold() in cands]
        if len({m.type for m in about}) == len({m.name.casefold() for m in about}) and about:
            hits |= {m.name.casefold() for m in about}
    if len(hits) != 1:
        return None
    sl = cands[hits.pop()]
    return Mention(sl.type, sl.name, sl.name, 0, 0, "slot")

def contrastive_modifier(extractor: EntityExtractor, text: str, lang: str, scope: Scope, state: ConversationState,
                          own: Sequence[Mention]) -> tuple[str, Mention] | None:
    """"the reporting one" / "what about usage?" after "the billing export API": the
    word contrasts with the antecedent's modifier and keeps its head, which names
    another entity of the vocabulary (N-bar ellipsis with a contrastive modifier)."""
    if lang != "en":
        return None
    m = _ONE_MOD.search(text) or _ABOUT_WORD.search(text)
    if m is None:
        return None
    word = m.group("mod").lower()
    if word in _NOT_MODIFIERS or any(x.source == "vocab" and x.start <= m.start("mod") < x.end
                                     for x in own):
        return None
    recent = [e for rec in scoped_user_records(scope, state)[:2] for e in rec.entities]
    # then the entities the scope still holds (a sibling of something said earlier)
    recent += [Mention(sl.type, sl.name, sl.name, 0, 0, "vocab")
               for sl in (*scope.slots, *scope.stale) if sl.type != "attribute"]
    for ent in recent:
        words = ent.name.split()
        if ent.source != "vocab" or ent.is_attribute or len(words) < 2:
            continue
        candidate = f"{word} {' '.join(words[1:])}"
        # the whole candidate must name an entity ("reporting export API"), not a part of
        # it ("reporting viewer" contains "viewer" but names nothing)
        hits = [h for h in extractor.vocabulary.find(candidate)
                if h.start == 0 and h.end == len(candidate)]
        if hits and hits[0].name.casefold() != ent.name.casefold():
            made = hits[0]
            return text[: m.start("mod")] + _the(made.name, lang).removeprefix("the ") \
                + text[m.end():], made
    # nothing in scope to contrast with: a vocabulary entry the modifier begins, when it
    # is one of a family that shares its head ("usage export API" among the export APIs)
    family = family_member(extractor, word)
    if family is not None and _ONE_MOD.search(text):
        return text[: m.start("mod")] + family.name + text[m.end():], family
    return None

def family_member(extractor: EntityExtractor, word: str) -> Mention | None:
    entries = extractor.vocabulary.entries
    starting = [e for e in entries if e.name.lower().split()[0] == word and " " in e.name]
    if len(starting) != 1:
        return None
    e = starting[0]
    head = e.name.split(maxsplit=1)[1].lower()
    siblings = [x for x in entries if x.type == e.type and x is not e
                and x.name.lower().endswith(" " + head)]
    if not siblings:
        return None
    return Mention(e.type, e.name, e.name, 0, 0, "vocab")

def one_anaphora(extractor: EntityExtractor, text: str, lang: str, prev: ResolvedTurn,
                  scope: Scope | None = None) -> Mention | None:
    """"the reporting one" after "the billing export API": the modifier replaces the
    antecedent's own modifier and keeps its head noun (N-bar ellipsis); "the hsm ones"
    picks the entity in scope whose name carries the modifier."""
    if lang != "en":
        return None
    m = re.search(r"\bthe\s+([a-z][a-z\-]+)\s+ones?\b", text, re.IGNORECASE)
    if m is None:
        return None
    if scope is not None:
        mod = m.group(1).lower()
        for sl in (*scope.slots, *scope.stale):
            if sl.type != "attribute" and mod in sl.name.lower().replace("-", " ").split():
                return Mention(sl.type, sl.name, sl.name, 0, 0, "slot")
    for ant in prev.entities:
        words = ant.name.split()
        if ant.is_attribute or len(words) < 2:
            continue
        candidate = f"{m.group(1)} {' '.join(words[1:])}"
        found = [x for x in extractor.vocabulary.find(candidate) if x.type == ant.type]
        if found:
            return found[0]
        if ant.source != "vocab":
            return Mention(ant.type, candidate, candidate, 0, 0, "general")
    return None
