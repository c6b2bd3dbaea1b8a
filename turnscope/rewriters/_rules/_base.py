"""What every rule of the embedded rewriter reads and returns.

* :class:`Rule` is the one interface: a ``name`` and ``apply(turn)``, which returns a
  :class:`Rewrite` (what the rule did to the message) or ``None`` (it does not apply).
* :class:`TurnContext` is the turn being rewritten: the request, the text so far, the
  rules' trace and what earlier rules decided (the route, the centre, the focus). Only
  :meth:`TurnContext.take` changes it, from the rule's :class:`Rewrite`.
* The helpers below are plain functions: the conversation's antecedents, its topic, the
  questions a follow-up may be parallel to, and the two ways a name is written into a
  message (in place of a pronoun, or attached to the question). Those that read the
  domain vocabulary or extract entities take the session's extractor explicitly.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from turnscope._lexicon import FUNCTION_WORDS, LOCATION_TYPES, VERBS, is_plural
from turnscope.conversation import ConversationState, ResolvedTurn
from turnscope.entities import EntityExtractor, Mention, Slot
from turnscope.references import HEADLESS_SUPERLATIVE, Classification, ReferenceClass, english_pronoun
from turnscope.rewriters._base import RewriteRequest
from turnscope.rewriters._rules._text import _PLACE_NAME, _SENT_END, _the
from turnscope.scope import Message, Scope


class Route(enum.Enum):
    """Which store the reference rules read for this message (decided once, by the
    ``route`` rule, after the pro-forms and the learned resolver)."""

    NONE = "none"  # the learned resolver or the pro-forms answered; or nothing refers
    IMMEDIATE = "immediate"  # the previous exchange and the lists in scope
    RECALL = "recall"  # an earlier exchange found by topic key, kind or position


@dataclass(frozen=True)
class Centre:
    """What a pronoun of the message most likely continues (the centring step): the
    pronoun, its person/place kind, the antecedent, the previous question and the topic."""

    pronoun: re.Match[str] | None
    word: str
    kind: str | None
    antecedent: Mention | None
    prev: ResolvedTurn | None
    topic: Mention | None


@dataclass(frozen=True)
class Rewrite:
    """What one rule did to the message. Every way a rule may change the turn is a field
    here, so :meth:`TurnContext.take` is the only place the turn changes."""

    text: str
    #: trace labels, in order (``"anaphora->Dublin"``)
    labels: tuple[str, ...] = ()
    #: the entity the query is now about (set when ``final``, or when not ``None``)
    focus: Mention | None = None
    #: the message's reference is resolved: the reference rules after this one stand aside
    final: bool = False
    #: from now on the message is read as ``text``, with these mentions (extracted by the rule)
    reread: tuple[Mention, ...] | None = None
    #: names the message now holds (an antecedent is not the one it already names)
    named: tuple[str, ...] = ()
    #: phrases brought in from earlier turns (docs/output.md ``carried``)
    carried: tuple[str, ...] = ()
    #: entries for the turn's trace (``resolver``, ``shift_probability``, ``domain``)
    trace: tuple[tuple[str, object], ...] = ()
    #: the screen had nothing to read: the message is answered as an immediate reference
    screen_missing: bool = False
    #: pro-forms were replaced by what the conversation named (``deixis``)
    deixis: bool = False
    #: the learned resolver wrote the query
    learned: bool = False
    #: a reference of the message was resolved against the previous exchanges (a pronoun,
    #: an ordinal, an ellipsis): the message goes on with the subject (``continues``)
    continues: bool = False
    route: Route | None = None
    centre: Centre | None = None


class Rule(Protocol):
    """One rule of the embedded rewriter: its ``name``, the :class:`Route` it serves
    (``None``: it is tried on every message, before or after the reference rules), and
    ``apply``."""

    @property
    def name(self) -> str: ...

    @property
    def route(self) -> Route | None: ...

    def apply(self, turn: TurnContext) -> Rewrite | None: ...


@dataclass
class TurnContext:
    """The message being rewritten and what the rules decided so far (mutable: it is the
    working state of one ``run``; rules read it, :meth:`take` alone writes it)."""

    request: RewriteRequest
    extractor: EntityExtractor
    #: the message as the rules read it now (the request's, or the text after a pro-form)
    message: Message
    text: str
    cls_used: ReferenceClass
    trace: dict[str, object] = field(default_factory=lambda: {"rules": []})
    focus: Mention | None = None
    carried: tuple[str, ...] = ()
    deixis: bool = False
    learned: bool = False
    continues: bool = False
    route: Route = Route.NONE
    resolved: bool = False
    present: frozenset[str] = frozenset()
    centre: Centre | None = None

    @classmethod
    def start(cls, request: RewriteRequest, extractor: EntityExtractor) -> TurnContext:
        msg = request.message
        return cls(request, extractor, msg, msg.text.strip(), msg.classification.reference_class)

    @property
    def rules(self) -> list[str]:
        out: list[str] = self.trace["rules"]  # type: ignore[assignment]
        return out

    @property
    def scope(self) -> Scope:
        return self.request.scope

    @property
    def state(self) -> ConversationState:
        return self.request.state

    @property
    def lang(self) -> str:
        return self.request.message.lang

    @property
    def c(self) -> Classification:
        return self.request.message.classification

    def mentions_of(self, text: str) -> tuple[Mention, ...]:
        """The mentions of ``text``: the message's own when it is the text the message is
        read as (the session extracted them once), else extracted now."""
        if text == self.message.text:
            return self.message.mentions
        return tuple(self.extractor.extract(text, self.lang))

    @property
    def immediate(self) -> bool:
        """Whether the immediate reference rules still have a message to resolve."""
        return self.route is Route.IMMEDIATE and not self.resolved

    def take(self, out: Rewrite | None) -> None:
        """Apply a rule's rewrite to the turn."""
        if out is None:
            return
        self.text = out.text
        self.rules.extend(out.labels)
        self.trace.update(out.trace)
        if out.final or out.focus is not None:
            self.focus = out.focus
        self.resolved = self.resolved or out.final
        self.carried = (*self.carried, *out.carried)
        self.present = self.present | {n.casefold() for n in out.named}
        if out.reread is not None:
            m = self.message
            self.message = Message(m.index, out.text, m.lang, out.reread, m.classification, m.screen)
        if out.screen_missing:
            self.cls_used = ReferenceClass.IMMEDIATE
        self.deixis = self.deixis or out.deixis
        self.learned = self.learned or out.learned
        self.continues = self.continues or out.continues
        if out.route is not None:
            self.route = out.route
        if out.centre is not None:
            self.centre = out.centre


_EN_DEM_NP = re.compile(r"\b(?:that|this|those|these|the\s+same)\s+(?P<noun>[A-Za-z][A-Za-z\-]+)",
                        re.IGNORECASE)
# (not the こ of the interrogative どこの, "which ...'s")
_JA_DEM_NP = re.compile(r"(?<!ど)(?:その|この|あの)(?=[\u30a0-\u30ffー\u4e00-\u9fffA-Za-z])")
# 「その人」「あの方」 point at a person: the focus is a thing or a role as often as not, and
# nothing here tells a Japanese person's name, so such a message is left as typed
JA_DEM_PERSON = re.compile(r"(?<!ど)(?:その|この|あの)(?:人|方|かた|男性|女性)")
_JA_PRON = re.compile(r"それ|これ|あれ|そちら|こちら|そっち|こっち")
_NOT_DEM_NOUNS = frozenset("one ones page site article detail more time way part".split())
_ORG_NAME = re.compile(r"\b(?:Club|Company|Corporation|Corp|Inc|Ltd|Group|Band|Team|Party|"
                       r"University|College|School|Institute|Foundation|Association|Society|"
                       r"Agency|Department|Ministry|Council|Committee|Bank|Airlines?|Records)$")


def primary_mention(named: Sequence[Mention], text: str = "", lang: str = "en") -> Mention | None:
    if not named:
        return None
    # vocabulary entities are the real subjects; among them the first written
    vocab = [m for m in named if m.source == "vocab"] or list(named)
    if text:
        # noun phrases are head-final: 「アバター案内の無料トライアル」 is about the trial,
        # "CMK rotation" is a rotation; follow a compound (or の chain) to its last entity
        links = ("の", "での", "における", " ") if lang == "ja" else ("", " ", "-", "'s ", "’s ")
        head = vocab[0]
        for m in vocab[1:]:
            if m.start >= head.end and text[head.end:m.start] in links:
                head = m
        return head
    return vocab[0]

def scoped_user_records(scope: Scope, state: ConversationState) -> list[ResolvedTurn]:
    """Resolved user turns in scope, newest first."""
    out = []
    for t in sorted(scope.turns, reverse=True):
        r = state.resolved.get(t)
        if r is not None:
            out.append(r)
    return out

def find_antecedent(scope: Scope, state: ConversationState, exclude: set[str],
                lang: str, number: str | None = None,
                kind: str | None = None) -> Mention | None:
    """The entity a pronoun most likely continues (see module docstring); a candidate
    that agrees in number with the pronoun is preferred."""
    cands = antecedent_candidates(scope, state, exclude)
    if kind == "person" and lang == "en":
        # he / she: a proper name, not a common noun phrase
        people = []
        for m in cands:
            # "Melania Trump's religion": the possessor is the person
            owner = re.split(r"['’]s\b", m.name, maxsplit=1)[0].strip()
            if owner and owner.casefold() not in exclude \
                    and all(w[:1].isupper() for w in owner.split()) \
                    and not _PLACE_NAME.fullmatch(owner) and not _ORG_NAME.search(owner) \
                    and (m.type == "name" or owner != m.name):
                # (a name headed by a place or organisation noun is not a "he"/"she")
                people.append(m if owner == m.name else
                              Mention("name", owner, owner, m.start, m.start + len(owner),
                                      m.source))
        return people[0] if people else None
    if kind == "place" and lang == "en":
        places = [m for m in cands if m.type in LOCATION_TYPES or (
            m.type == "name" and all(w[:1].isupper() for w in m.name.split()))]
        if places:
            return places[0]
    if number is not None and lang == "en":
        agreeing = [m for m in cands if (number == "pl") == is_plural(m.name)]
        if agreeing:
            cands = agreeing
    return cands[0] if cands else None

def antecedent_candidates(scope: Scope, state: ConversationState,
                 exclude: set[str]) -> list[Mention]:
    out: list[Mention] = []
    seen: set[str] = set()

    def add(m: Mention) -> None:
        k = m.name.casefold()
        if k not in seen and k not in exclude:
            seen.add(k)
            out.append(m)

    allowed: set[str] | None = None
    if scope.guarded:
        allowed = {s.name.casefold() for s in scope.slots}
    for rec in scoped_user_records(scope, state):
        cands = [rec.focus] if rec.focus is not None else []
        cands += [m for m in rec.entities if not m.is_attribute]
        for m in cands:
            if allowed is not None and m.name.casefold() not in allowed:
                continue
            add(m)
    # then the entities of in-scope turns, most recent first
    for t in sorted(scope.turns, reverse=True):
        ms = [m for m in state.mentions.get(t, ()) if not m.is_attribute]
        if allowed is not None:
            ms = [m for m in ms if m.name.casefold() in allowed]
        primary = primary_mention(ms)
        if primary is not None:
            add(primary)
        for m in ms:
            add(m)
    if scope.guarded and scope.slots:
        live = sorted((s for s in scope.slots if s.type != "attribute"),
                      key=lambda s: (s.by_user, s.last_seen), reverse=True)
        for s in live:
            add(Mention(s.type, s.name, s.name, 0, 0, "slot"))
    return out

def parallel_records(scope: Scope, state: ConversationState,
                      now: int) -> list[ResolvedTurn]:
    """Earlier questions an elliptical one may be parallel to, newest first: those in
    scope, then (guarded scopes) older ones whose entities are not terminal, within
    the eviction horizon (bounded, so a turn's cost does not grow)."""
    out = scoped_user_records(scope, state)
    if not scope.guarded:
        return out
    seen = {r.turn for r in out}
    in_scope = {s.name.casefold() for s in (*scope.slots, *scope.stale)}
    if not in_scope:
        return out
    horizon = 2 * state.slots.config.evict_after
    for t in range(now - 1, max(0, now - horizon), -1):
        r = state.resolved.get(t)
        if r is None or t in seen:
            continue
        # an older question counts only through entities the scope still holds
        if any(m.name.casefold() in in_scope for m in r.entities if not m.is_attribute):
            out.append(r)
    return out

def topic_in_scope(scope: Scope, state: ConversationState, exclude: set[str],
           allow_stale: bool = False) -> Mention | None:
    """The conversation topic in force (see :class:`ResolvedTurn`), if still in scope."""
    if not state.resolved:
        return None
    # dicts keep insertion order: the last key is the latest user turn (O(1))
    topic = state.resolved[next(reversed(state.resolved))].topic
    if topic is None or topic.name.casefold() in exclude:
        return None
    if scope.guarded:
        names = {s.name.casefold() for s in scope.slots}
        if allow_stale:
            names |= {s.name.casefold() for s in scope.stale}
        if topic.name.casefold() not in names:
            return None
    elif not any(topic.name.casefold() == m.name.casefold()
                 for t in scope.turns for m in state.mentions.get(t, ())):
        return None
    return topic

def of_kind(extractor: EntityExtractor, slot: Slot, nouns: set[str]) -> bool:
    """Whether a slot is an instance of one of ``nouns``: its type, or a kind its
    vocabulary entry declares ("db" for managed Postgres)."""
    return slot.type in nouns or bool(nouns & extractor.vocabulary.kinds_of(slot.name))

def associated(extractor: EntityExtractor, own: Sequence[Mention], candidates: Sequence[Mention],
                at_least: float = 0.0) -> Mention | None:
    """The candidate the domain most associates with the message's own entities
    (documents that discuss the one discuss the other), if any association is known;
    ties keep the candidates' order (recency)."""
    vocab = extractor.vocabulary
    if not own or not candidates or not vocab.related:
        return None
    scored = [(max(vocab.association(o.name, c.name) for o in own), -i, c)
              for i, c in enumerate(candidates)]
    best = max(scored, key=lambda t: (t[0], t[1]))
    return best[2] if best[0] > 0 and best[0] >= at_least else None

def substitute_pronouns(extractor: EntityExtractor, text: str, lang: str, name: str, *,
                         allow_that: bool) -> tuple[str, int]:
    """Replace the pronoun the classifier would resolve (the same rules decide)."""
    if lang == "ja":
        if JA_DEM_PERSON.search(text):
            return text, 0
        n = 0

        def dem(m: re.Match[str]) -> str:
            nonlocal n
            n += 1
            return f"{name}の"

        text = _JA_DEM_NP.sub(dem, text)
        text, k = _JA_PRON.subn(lambda _m: name, text)  # a function: the name is literal text
        return text, n + k
    mentions = extractor.extract(text, lang)
    pm = english_pronoun(text, mentions)
    if pm is not None:
        word = pm.group(0)
        low = word.lower()
        if low in ("that", "this", "those", "these") and not allow_that:
            return text, 0
        if low == "there":
            rep = f"in {name}"
        elif pm.group("poss") if "poss" in (pm.re.groupindex or {}) else low in ("its", "their"):
            rep = f"{_the(name, lang)}'" + ("" if name.endswith("s") else "s")
        else:
            rep = _the(name, lang)
        if word[:1].isupper():
            rep = rep[:1].upper() + rep[1:]
        return text[: pm.start()] + rep + text[pm.end():], 1
    # "that region", "those logs": a demonstrative noun phrase
    count = 0

    def np_sub(m: re.Match[str]) -> str:
        nonlocal count
        noun = m.group("noun")
        low = noun.lower()
        if low in _NOT_DEM_NOUNS or low in VERBS or low in FUNCTION_WORDS:
            return m.group(0)
        count += 1
        if low.rstrip("s") in name.lower():
            return _the(name, lang)
        return f"{_the(name, lang)} {noun}"

    text = _EN_DEM_NP.sub(np_sub, text, count=1)
    return text, count

def gapping(extractor: EntityExtractor, prev: ResolvedTurn, new: Sequence[Mention],
            lang: str) -> tuple[str, Mention | None] | None:
    """Copy the previous question and swap the element of the same type."""
    if not new:
        return None
    query = prev.query
    prev_ms = list(extractor.extract(query, lang))
    for nm in new:
        for pm in prev_ms:
            same_type = pm.type == nm.type and (nm.source == "vocab" or pm.source != "vocab")
            general_swap = (nm.source != "vocab" and pm.source != "vocab"
                            and not nm.is_attribute and not pm.is_attribute
                            and prev.focus is not None
                            and pm.name.casefold() == prev.focus.name.casefold())
            if (same_type and nm.source == "vocab") or (general_swap and lang == "en"):
                if pm.name.casefold() == nm.name.casefold():
                    continue
                swap = nm.name if nm.source == "vocab" else nm.surface
                out = query[: pm.start] + swap + query[pm.end :]
                keep_focus = prev.focus if (prev.focus and prev.focus.name != pm.name) else nm
                return out, keep_focus
    return None

def attach(text: str, lang: str, name: str) -> str:
    # (the classifier's headless superlative, except "the best one": one-anaphora)
    sup = next((m for m in HEADLESS_SUPERLATIVE.finditer(text)
                if not re.match(r"\s*one\b", text[m.end():], re.IGNORECASE)),
               None) if lang == "en" else None
    if sup is not None:
        # "the largest ever" -> "the largest sharks ever": the topic fills the noun slot
        return text[: sup.end()] + f" {name}" + text[sup.end():]
    core = _SENT_END.sub("", text)
    end = text[len(core):].strip() or ("？" if lang == "ja" else "?")
    if lang == "ja":
        # 「料金は？」 -> 「アバター案内の料金は？」
        core = re.sub(r"^(?:じゃあ|では|なら|で|あと|それで)[、,]?\s*", "", core)
        return f"{name}の{core}{end}"
    return f"{core} for {_the(name, lang)}{end}"
