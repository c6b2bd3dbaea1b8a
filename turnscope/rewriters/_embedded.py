"""The embedded rewriter: rules a reader recognises, no model, no network.

Each rule is a general pattern of English or Japanese reference, applied only to
the evidence the scope policy allowed:

* **ordinal reference** — "the second one", "the last two", 「2つ目」 select from
  the most recent enumeration in scope;
* **pronoun / demonstrative anaphora** — "it", "that", それ, その〜 take the
  *focus* of the previous user turn (the centring principle: a pronoun most often
  continues the centre of the preceding utterance), else the most recent entity;
* **ellipsis** — "what about the RTO?", "and for Paris?", 「英語は？」 copy the
  antecedent question and substitute the contrasted element of the same type
  (gapping), or attach the focus when no element is contrasted;
* **bridging** — a relational noun with no complement ("what's the cost?",
  「料金は？」) takes the focus as its complement;
* **elaboration** — "in more detail", 詳しく: the subject is what the previous
  exchange was about (user *and* assistant), i.e. the previous question's subject;
* **explicit recall** — "go back to Dublin": the exchange found by topic key;
* **situational** — "this page" / 「このページ」 read the screen, "this site" the site;
* **pivot** — an explicit change of subject carries nothing over.

Which earlier phrase an open-domain English message needs (a pronoun with no ordinal,
screen or recall cue; a relational noun; a fragment) is not a rule's choice: the learned
resolver (``turnscope.resolver``) makes it, in every conversation where the user has named
nothing of a declared vocabulary. Where the user has, the vocabulary's typed slots decide
with the rules above (the trace says ``"domain": "vocabulary"``).

Unguarded scopes (``full``, ``window``, ``segment``) additionally *carry*
qualifiers from the history, as a "condense the question" step told to keep
constraints that still apply does: the most salient entity of each type absent
from the message. That is exactly the behaviour whose contamination SPEC
section 1 describes, reproduced so policies can be compared on equal terms.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence

from turnscope._exceptions import ConfigError
from turnscope.conversation import ConversationState, ResolvedTurn, Role, char_bigrams
from turnscope.entities import GENERAL_TYPES, EntityExtractor, Enumeration, Mention, Slot, SlotStatus
from turnscope.entities._lexicon import (
    ADJECTIVES,
    ANAPHORIC_PRONOUNS,
    DEMONYMS,
    FUNCTION_WORDS,
    LOCATION_TYPES,
    VERBS,
    is_plural,
    pronoun_number,
)
from turnscope.references import Cue, ReferenceClass, after_pivot, anchors, find_ordinal_span
from turnscope.references._classify import (
    _HEADLESS_SUPERLATIVE,
    _SITE_EN,
    _SITE_JA,
    ORDINALS_EN,
    english_pronoun,
)
from turnscope.resolver import Resolver, default_resolver
from turnscope.resolver._ranker import history_of, session_shift, shift_threshold
from turnscope.rewriters._base import EMBEDDED, RewriteRequest, RewriteResult
from turnscope.scope import Message, Scope

__all__ = ["EmbeddedRewriter"]

logger = logging.getLogger("turnscope.rewriters")

_PREAMBLE = re.compile(
    r"^\s*(?:(?:ok(?:ay)?|hmm+|so|alright|right|anyway|also|btw|by\s+the\s+way|oh|um+|"
    r"(?:a\s+)?(?:totally\s+)?(?:different|unrelated|separate|another|new|other)\s+"
    r"(?:question|topic|thing|subject|q)|unrelated(?:\s+but)?|changing\s+(?:the\s+)?"
    r"(?:topic|subject)|switching\s+gears|on\s+another\s+note|moving\s+on|quick\s+question|"
    r"ところで|話は変わりますが|話が変わりますが|別の質問(?:です)?(?:が|けど)|別件(?:です)?(?:が|けど)?|"
    r"それとは別に)[\s,，、:：—–\-.!…]*)+",
    re.IGNORECASE,
)
_EN_DEM_NP = re.compile(r"\b(?:that|this|those|these|the\s+same)\s+(?P<noun>[A-Za-z][A-Za-z\-]+)",
                        re.IGNORECASE)
_JA_DEM_NP = re.compile(r"(?:その|この|あの)(?=[\u30a0-\u30ffー\u4e00-\u9fffA-Za-z])")
_JA_PRON = re.compile(r"それ|これ|あれ|そちら|こちら|そっち|こっち")
_EN_PAGE = re.compile(r"\b(?:this|current)\s+(?:page|article|doc|screen|section)\b(?![\w-])|"
                      r"\bthe\s+(?:page|article)(?=\s+(?:i'?m|i\s+am|you'?re)\b)", re.IGNORECASE)
_JA_PAGE = re.compile(r"(?:この|今の|今見ている|表示中の|こちらの)(?:ページ|画面|記事)")
_ONE_MOD = re.compile(r"\bthe\s+(?P<mod>(?:[a-z][a-z\-]+\s+){0,2}[a-z][a-z\-]+)\s+ones?\b",
                      re.IGNORECASE)
_NOT_MODIFIERS = frozenset("first second third last other same next previous new old right "
                           "best only former latter".split())
# an ordinal that selects from a list ("the third one", "option 2"), not "at the very start"
_LIST_ORDINAL = re.compile(r"\b(?:first|second|third|fourth|fifth|last|\d(?:st|nd|rd|th))\s+"
                           r"(?:one|ones|two|three|option|item|region|tier|plan)\b|"
                           r"\b(?:option|item|point|step|#)\s*\d|[1-9１-９]つ目|番目", re.IGNORECASE)
_PART = re.compile(r"\b(?:the\s+)?(?:(?P<ord>first|second|third|last|final)\s+(?:part|bit|point|"
                   r"half|sentence)|(?:part|bit)\s+about\s+(?P<about>[^,.?!—–]+))", re.IGNORECASE)
_SENTENCE_SPLIT = re.compile(r"(?<=[.!?])\s+|(?<=[。！？])|(?<=[;；])\s*|\s+—\s+")
_LOCATIVE = re.compile(r"\b(?:there|down\s+there|over\s+there)\b", re.IGNORECASE)
_NOT_DEM_NOUNS = frozenset("one ones page site article detail more time way part".split())
_ABOUT_WORD = re.compile(r"\b(?:about|for)\s+(?:the\s+)?(?P<mod>[a-z][a-z\-]+)\s*\??\s*$", re.IGNORECASE)
_DEMONSTRATIVE_WORDS = frozenset("that this those these".split())
_JA_DEMONSTRATIVE = re.compile(r"(?:それ|その|そちら|そっち)")
_EN_PROXIMAL = re.compile(r"\b(?:this|these)\b(?!\s+(?:page|site|article)\b)", re.IGNORECASE)
_JA_PROXIMAL_NP = re.compile(r"この(?=[\u30a0-\u30ffー\u4e00-\u9fffA-Za-z])")
_JA_PROXIMAL = re.compile(r"これ|ここ|こちら")
#: how many earlier questions compete when the domain knows which thread fits (bounded)
DEFAULT_THREADS = 4
#: how strongly a plain word must go with a thread's subject (share of the documents using
#: the word that name the subject) to choose that thread: "fail" goes with managed Postgres
#: in most passages that use it, "cost" with every subject a little
DEFAULT_WORD_ASSOCIATION = 0.5
#: how many recent slots "the other <kind>" looks back over for the one that was superseded
DEFAULT_OTHER_LOOKBACK = 64
#: "org-level", "account-wide": the modifier is its first part
#: "what happens if I disable a customer-managed key?": the event a later "that" names
_CONDITIONAL_EVENT = re.compile(
    r"\bwhat\s+(?:happens|would\s+happen|will\s+happen)\s+(?:if|when)\s+(?:i|we|you)\s+"
    r"(?P<verb>[a-z]+)\s+(?P<obj>(?:(?:a|an|the|my|our|its)\s+)?[^?.!,;]+)", re.IGNORECASE)
#: a general proper name after a locative preposition: the place a question is set in
_PLACE_IN = re.compile(r"\b(?:in|around|near|visit|visiting|at)\s+(?:downtown\s+|mt\.?\s+|mount\s+)?"
                       r"(?P<place>[A-Z][\w.\-]*[A-Za-z](?:\s+[A-Z][\w.\-]*[A-Za-z]){0,3})")
#: things a question asks about that are somewhere: what a place frame applies to
_LOCATABLE = re.compile(
    r"\b(?:museums?|parks?|trails?|festivals?|restaurants?|bars?|clubs?|hotels?|beach(?:es)?|"
    r"tours?|attractions?|events?|nightlife|shops?|shopping|markets?|neighbou?rhoods?|downtown|"
    r"distiller(?:y|ies)|brewer(?:y|ies)|galler(?:y|ies)|theat(?:er|re)s?|schools?|classes|"
    r"things\s+to\s+do|to\s+do|the\s+city|sights?|landmarks?|collections?|concerts?)\b",
    re.IGNORECASE)
#: a proper name headed by a place noun ("Rock City", "South Pond Nature Area")
_PLACE_NAME = re.compile(
    r"\b(?:[A-Z][\w\-]*\s+){1,4}(?:Museum|Park|Center|Centre|Area|Reserve|City|Trail|Street|"
    r"Square|Gardens?|Hall|Bridge|Lake|River|Mountain|Beach|Market|Zoo|Library|Theat(?:er|re)|"
    r"Stadium|Cathedral|Church|Castle|Palace|Tower|Monument|Memorial|Falls|Island)\b")
_WHO_QUESTION = re.compile(r"^\W*(?:(?:and|ok|so|but)\W+)*(?:who|whom)\b", re.IGNORECASE)
#: "the first api you described": an order over the conversation, not over one list
_HISTORY_ORDINAL = re.compile(
    r"\bthe\s+(?P<ord>first|second|third|last)\s+(?P<noun>[a-z]+)\s+(?:you|we)\s+"
    r"(?:described|mentioned|discussed|talked\s+about|covered|brought\s+up)\b", re.IGNORECASE)
_ORG_NAME = re.compile(r"\b(?:Club|Company|Corporation|Corp|Inc|Ltd|Group|Band|Team|Party|"
                       r"University|College|School|Institute|Foundation|Association|Society|"
                       r"Agency|Department|Ministry|Council|Committee|Bank|Airlines?|Records)$")
#: a question about someone, not a place: one that points back ("did he perform at
#: Woodstock?") or names its subject after the auxiliary ("what did Jacobs do in NYC?")
_REFERS_BACK = re.compile(rf"\b(?:{'|'.join(sorted(ANAPHORIC_PRONOUNS))})\b", re.IGNORECASE)
_NAMED_SUBJECT = re.compile(r"\b(?i:did|does|do|was|is|were|are|has|had|will|would|can|could)\s+"
                            r"(?:[A-Z][\w.\-]*\s+){1,3}[a-z]")
#: a settlement's own name ("Salt Lake City", "Jefferson County") replaces the frame
_SETTLEMENT = re.compile(r"\b(?:[A-Z][\w\-]*\s+){1,3}(?:City|Town|County|Village|Borough)\b")
#: verbs too general to say which clause of an answer a follow-up echoes
VERBS_TOO_COMMON = frozenset("have does make take need want work used using come".split())
_NUMBERED_REF = re.compile(r"(?:point|item|option|number|no\.?|#)\s*\d", re.IGNORECASE)
_OF_THE_N = re.compile(r"\bof\s+the\s+(two|three|four|five|both)\b", re.IGNORECASE)
_NUMBER_WORDS = {"two": 2, "both": 2, "three": 3, "four": 4, "five": 5}
# the message names the list it counts in: "you mentioned three periods ... the first one"
_COUNTED_KIND = re.compile(rf"\b({'|'.join(w for w in _NUMBER_WORDS if w != 'both')})\s+"
                           r"(?:(?:main|different|major|key)\s+)?([a-z]{3,}s)\b", re.IGNORECASE)
_MOD_SUFFIXES = frozenset("level wide based side scoped only".split())
_ADDITIVE = re.compile(r"\b(?:too|also|as\s+well|either|instead|same)\b|も[？?]?$|もそう", re.IGNORECASE)
_OTHER_ONE = re.compile(r"\b(?:the\s+)?other\s+one\b", re.IGNORECASE)
_TYPE_REF = re.compile(r"\b(?:that|this|the|those|these)\s+(?P<other>other\s+)?(?P<noun>[a-z]+)"
                       r"(?:\s+(?:you|we|i)\s+(?:suggested|recommended|mentioned|said|picked|chose|"
                       r"listed))?\b", re.IGNORECASE)
_ONE_PRON = re.compile(r"\b(?:that|this)\s+one\b|\b(?P<verb>set|get|create|make|use|pick|choose|"
                       r"buy|need|add|enable|try)\s+one\b", re.IGNORECASE)
_SENT_END = re.compile(r"[\s?？.。!！]*$")
#: cues whose store is structure the rules read (a list, the previous exchange), not an
#: open-domain choice of antecedent
_STRUCTURAL_CUES = frozenset({Cue.ORDINAL, Cue.ELABORATION, Cue.RECALL, Cue.OTHER_THREAD, Cue.SCREEN})


def _the(name: str, lang: str) -> str:
    """'billing export API' reads better as 'the billing export API'; names stay bare."""
    if lang == "ja" or not name or name[0].isupper() or name[0].isdigit() or " " not in name:
        return name
    return f"the {name}"


def _gerund(verb: str) -> str:
    """disable -> disabling, stop -> stopping, delete -> deleting, rotate -> rotating."""
    v = verb.lower()
    if v.endswith("ie"):
        return v[:-2] + "ying"
    if v.endswith("e") and not v.endswith(("ee", "ye", "oe")):
        return v[:-1] + "ing"
    if len(v) >= 3 and v[-1] not in "aeiouwxy" and v[-2] in "aeiou" and v[-3] not in "aeiou" \
            and len(v) <= 4:
        return v + v[-1] + "ing"
    return v + "ing"


def _join(names: Sequence[str], lang: str) -> str:
    names = list(dict.fromkeys(names))
    if lang == "ja":
        return "と".join(names)
    if len(names) <= 2:
        return " and ".join(names)
    return ", ".join(names[:-1]) + " and " + names[-1]


class EmbeddedRewriter:
    """Offline rewriter. See the module docstring for its rules.

    >>> from turnscope import Session
    >>> s = Session()
    >>> _ = s.user("Which EU regions support customer-managed keys?")
    >>> s.assistant("Frankfurt and Dublin both support CMK for data at rest.")
    >>> s.user("What's the uptime SLA on the second one?").query
    "What's the uptime SLA on Dublin?"
    """

    name = EMBEDDED

    def __init__(self, extractor: EntityExtractor | None = None, *,
                 resolver: Resolver | None | str = "default") -> None:
        self.extractor = extractor or EntityExtractor()
        # the learned resolver answers the open-domain question "which earlier phrase does
        # this message need?"; None keeps the rules alone (the behaviour before issue 8)
        if isinstance(resolver, str) and resolver != "default":
            raise ConfigError(f"resolver must be a Resolver, None or 'default', got {resolver!r}")
        self._resolver = resolver
        self._unavailable: str | None = None

    @property
    def resolver(self) -> Resolver | None:
        if self._resolver == "default":
            try:
                self._resolver = default_resolver()
            except ConfigError as exc:
                # a broken install must not stop the conversation: the rules answer, the
                # log and every trace say why
                logger.warning("learned resolver unavailable (%s); the rules answer alone", exc)
                self._resolver = None
                self._unavailable = str(exc)
        return self._resolver if isinstance(self._resolver, Resolver) else None

    def _learned(self, request: RewriteRequest, text: str,
                 trace: dict[str, object]) -> tuple[str, tuple[str, ...]] | None:
        """The learned resolver's rewrite of an English message with no structural cue."""
        msg, state = request.message, request.state
        c = msg.classification
        if self._resolver is None and self._unavailable:
            trace["resolver"] = {"unavailable": self._unavailable}
        if msg.lang != "en" or c.pivot or self._resolver is None:
            return None
        if self.extractor.vocabulary.types and _in_domain(state):
            # the conversation names things of a declared domain: its typed slots
            # (supersession by type, kinds, aliases) are the structure the rules read; the
            # learned resolver is for open-domain talk, where nothing names the entities. A
            # vocabulary that is loaded but names nothing here (the CLI loads the bundled
            # ones by default) leaves the conversation open-domain
            trace["domain"] = "vocabulary"
            return None
        if c.reference_class not in (ReferenceClass.STANDALONE, ReferenceClass.IMMEDIATE):
            return None  # screen deixis and explicit recall read their own stores
        if set(c.cues) & _STRUCTURAL_CUES:
            return None  # ordinals over a list, elaboration of the previous exchange
        resolver = self.resolver
        if resolver is None:
            if self._unavailable:
                trace["resolver"] = {"unavailable": self._unavailable}
            return None
        shift = session_shift(state, msg.index, msg.text, resolver)
        res = resolver.resolve(text, history_of(state), shift=shift)
        trace["resolver"] = res.trace()
        trace["shift_probability"] = round(shift, 4)
        return res.query, res.carried

    # ------------------------------------------------------------------------------
    def run(self, request: RewriteRequest) -> RewriteResult:
        msg, scope, state = request.message, request.scope, request.state
        c = msg.classification
        lang = msg.lang
        text = msg.text.strip()
        trace: dict[str, object] = {"rules": []}
        rules: list[str] = trace["rules"]  # type: ignore[assignment]
        focus: Mention | None = None

        if c.pivot:
            cut = _after_pivot(text)
            if cut != text:
                # the question after the change of subject starts the query
                text = cut[0].upper() + cut[1:] if lang == "en" else cut
                rules.append("after-pivot")
        if c.pivot or c.reference_class is ReferenceClass.STANDALONE:
            stripped = _PREAMBLE.sub("", text).strip()
            if stripped and stripped != text:
                text = stripped[0].upper() + stripped[1:] if lang == "en" else stripped
                rules.append("strip-preamble")

        cls = c.reference_class
        cls_used: ReferenceClass = cls
        if cls in (ReferenceClass.PAGE, ReferenceClass.SITE):
            new = self._situational(text, lang, scope, cls)
            if new is not None:
                text = new
                rules.append(f"screen:{cls.value}")
            else:
                rules.append("screen-missing")
                cls_used = ReferenceClass.IMMEDIATE

        learned = self._learned(request, text, trace) if cls_used is cls else None
        carried: tuple[str, ...] = ()
        if learned is not None:
            text, carried = learned
            rules.append("learned-resolver")
        elif cls_used is ReferenceClass.EARLIER and Cue.ORDINAL in c.cues \
                and _LIST_ORDINAL.search(text):
            # "back to the regions — the third one?": the list is the store
            text, focus = self._immediate(text, lang, scope, state, msg, rules)
        elif cls_used is ReferenceClass.EARLIER:
            text, focus = self._recall(text, lang, scope, state, msg.mentions, rules,
                                       c.topic_key)
        elif cls_used is ReferenceClass.IMMEDIATE or (
            cls_used in (ReferenceClass.PAGE, ReferenceClass.SITE)
            and (Cue.ORDINAL in c.cues or (Cue.PRONOUN in c.cues and lang == "en"
                                            and english_pronoun(text, self.extractor.extract(
                                                text, lang)) is not None))
        ):
            text, focus = self._immediate(text, lang, scope, state, msg, rules)

        if not scope.guarded and not c.pivot and learned is None:
            text = self._carry(text, lang, scope, state, rules)
        if lang == "en":
            text = self._locative_frame(text, msg.text, c.pivot, state, rules)

        entities = tuple(self.extractor.extract(text, lang))
        named = [m for m in entities if not m.is_attribute]
        if focus is None:
            focus = self._primary(named, text, lang)
        if "shift_probability" in trace:
            # the learned detector replaces the "every name is new" rule; a message that
            # needed an earlier phrase continues its subject whatever the detector says
            # (it scores drift into the previous answer as a shift: see its module)
            topic_shift = cls_used is ReferenceClass.STANDALONE and not carried \
                and float(trace["shift_probability"]) >= shift_threshold()  # type: ignore[arg-type]
        else:
            topic_shift = self._topic_shift(msg.classification.pivot, cls_used, named, scope, state)
        return RewriteResult(
            query=text,
            reference_class=c.spec_class,
            topic_shift=topic_shift,
            entities=entities,
            focus=focus,
            backend=EMBEDDED,
            trace=trace,
            carried=carried,
        )

    # -- helpers ---------------------------------------------------------------------
    @staticmethod
    def _primary(named: Sequence[Mention], text: str = "", lang: str = "en") -> Mention | None:
        if not named:
            return None
        # vocabulary entities are the real subjects; among them the first written
        vocab = [m for m in named if m.source == "vocab"] or list(named)
        if text:
            # noun phrases are head-final: 「アバター案内の無料トライアル」 is about the trial,
            # "CMK rotation" is a rotation; follow a compound (or の chain) to its last entity
            links = ("の", "での", "における") if lang == "ja" else ("", " ", "-", "'s ", "’s ")
            head = vocab[0]
            for m in vocab[1:]:
                if m.start >= head.end and text[head.end:m.start] in links:
                    head = m
            return head
        return vocab[0]

    @staticmethod
    def _topic_shift(pivot: bool, cls: ReferenceClass, named: Sequence[Mention], scope: Scope,
                     state: ConversationState) -> bool:
        if pivot:
            return True
        if cls is not ReferenceClass.STANDALONE or not named or not state.turns:
            return False
        known = {s.name.casefold() for s in state.slots.current()}
        return all(m.name.casefold() not in known for m in named)

    def _scoped_user_records(self, scope: Scope, state: ConversationState) -> list[ResolvedTurn]:
        """Resolved user turns in scope, newest first."""
        out = []
        for t in sorted(scope.turns, reverse=True):
            r = state.resolved.get(t)
            if r is not None:
                out.append(r)
        return out

    def _antecedent(self, scope: Scope, state: ConversationState, exclude: set[str],
                    lang: str, number: str | None = None,
                    kind: str | None = None) -> Mention | None:
        """The entity a pronoun most likely continues (see module docstring); a candidate
        that agrees in number with the pronoun is preferred."""
        cands = self._antecedents(scope, state, exclude)
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

    def _antecedents(self, scope: Scope, state: ConversationState,
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
        for rec in self._scoped_user_records(scope, state):
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
            primary = self._primary(ms)
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

    def _parallel_records(self, scope: Scope, state: ConversationState,
                          now: int) -> list[ResolvedTurn]:
        """Earlier questions an elliptical one may be parallel to, newest first: those in
        scope, then (guarded scopes) older ones whose entities are not terminal, within
        the eviction horizon (bounded, so a turn's cost does not grow)."""
        out = self._scoped_user_records(scope, state)
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

    @staticmethod
    def _topic(scope: Scope, state: ConversationState, exclude: set[str],
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

    def _enumeration(self, scope: Scope, noun: str | None, position: int,
                     total: int | None = None, numbered: bool = False) -> Enumeration | None:
        """The newest in-scope list long enough for the position (and of the named kind).

        Only a list the turn presents as one counts (:attr:`Enumeration.explicit`), and an
        ordinal that names its kind ("the second region") needs a list of that kind: on
        real conversations "the first album", "the last year", "the final vote" count in
        time, and picking from whatever list was nearest wrote "What was Hound Dog?"."""
        fits = [e for e in scope.enumerations if e.explicit and len(e.items) >= abs(position)]
        if numbered:
            # "point 2", "item 3", "#2": a numbered list, if one is in scope
            fits = [e for e in fits if e.numbered] or fits
        if not fits:
            return None
        newest = max(e.turn for e in fits)
        if total is not None:
            # "the first of the two regions": a list of exactly that many
            sized = [e for e in fits if len(e.items) == total]
            if sized:
                fits = sized
                newest = max(e.turn for e in fits)
        if noun is not None:
            n = noun.lower().rstrip("s")
            # items of that type first; a list merely naming the word comes after
            kinds = self.extractor.vocabulary.kinds_of
            typed = [e for e in fits if any(n == m.type.lower() or n in kinds(m.name)
                                            for m in e.items)] or [
                e for e in fits if any(n in m.name.lower() for m in e.items)]
            if not typed:
                return None
            newest = max(e.turn for e in typed)
            fits = typed
        # within the newest turn: numbered lists, then coordinations, then typed runs
        same_turn = [e for e in fits if e.turn == newest]
        # the extractor lists a turn's enumerations most explicit first; keep that order
        # (numbered items, then coordinations, then typed runs) whatever the scope's order
        same_turn.sort(key=lambda e: (not e.numbered, len(e.items) < 2))
        chosen = same_turn[0]
        # the same members listed again in another order ("Stockholm … Paris does") keep
        # the order they were introduced in: that is the order "the first" counts in
        members = {m.name.casefold() for m in chosen.items}
        same = [e for e in fits if {m.name.casefold() for m in e.items} == members]
        return min(same, key=lambda e: e.turn) if same else chosen

    def _walked(self, state: ConversationState, index: int,
                position: int) -> Enumeration | None:
        """The list the previous user turn picked from by its position, if this ordinal can
        go on in it: "What about the second?" after "the first one" walks the same list,
        even when a newer answer brought lists of its own."""
        previous = state.user_turns_before(index, 1)
        if not previous:
            return None
        # from every list of the conversation, not only the scope's newest ones: a list the
        # user picked from one turn ago is live, however many lists the answers since held
        walked = [e for e in state.enumerations if e.explicit and len(e.items) >= abs(position)
                  and state.enumeration_use.get(e.turn) == previous[0].index]
        return max(walked, key=lambda e: (e.numbered, len(e.items))) if walked else None

    # -- immediate references --------------------------------------------------------
    def _immediate(self, text: str, lang: str, scope: Scope, state: ConversationState, msg: object,
                   rules: list[str]) -> tuple[str, Mention | None]:
        if not isinstance(msg, Message):  # internal call; keeps mypy precise
            raise TypeError("msg must be a Message")
        c = msg.classification
        present = {m.name.casefold() for m in msg.mentions}
        focus: Mention | None = None

        # 1. ordinals select from an enumeration
        if Cue.ORDINAL in c.cues:
            span = find_ordinal_span(text, lang)
            if span is not None:
                start, end, ordinal = span
                of_n = _OF_THE_N.search(text)
                total = _NUMBER_WORDS[of_n.group(1).lower()] if of_n else None
                noun = ordinal.noun
                counted = _COUNTED_KIND.search(text) if noun is None and lang == "en" else None
                if counted is not None:
                    # "three periods ... the first one": the first of three periods
                    total, noun = _NUMBER_WORDS[counted.group(1).lower()], counted.group(2)
                enum = self._walked(state, msg.index, ordinal.position or 3) \
                    if noun is None and total is None else None
                if enum is None:
                    enum = self._enumeration(scope, noun, ordinal.position or 3, total,
                                             numbered=bool(_NUMBERED_REF.match(text[start:end])))
                if enum is not None and ordinal.position == 0:
                    # "the middle one" of an odd-length list
                    ordinal = type(ordinal)((len(enum.items) + 1) // 2, ordinal.count,
                                            ordinal.noun)
                if enum is not None and enum.items:
                    idx = ordinal.position - 1 if ordinal.position > 0 else len(enum.items) + ordinal.position
                    count = ordinal.count
                    if ordinal.position < 0:
                        idx = len(enum.items) - count
                    if 0 <= idx < len(enum.items):
                        chosen = list(enum.items[idx: idx + count])
                        name = _join([m.name for m in chosen], lang)
                        text = text[:start] + name + text[end:]
                        focus = chosen[0]
                        state.enumeration_use[enum.turn] = msg.index
                        rules.append(f"ordinal:{ordinal.position}x{count}@turn{enum.turn}")
                        frame = self._list_frame(enum, chosen, state, msg.index, text)
                        if frame:
                            # a list from a thread that has since closed: its items were
                            # chosen by a property ("regions that support CMK"); the
                            # selection means nothing without it
                            text = self._attach(text, lang, _join([m.name for m in frame], lang))
                            rules.append("ordinal-frame:" + ",".join(m.name for m in frame))
                        return text, focus
                rules.append("ordinal-unresolved")

        pm = english_pronoun(text, msg.mentions) if lang == "en" else None
        word = pm.group(0).lower() if pm else ""
        kind = "person" if word in ("he", "she", "him", "his", "her") else (
            "place" if word == "there" else None)
        antecedent = self._antecedent(scope, state, present, lang,
                                      pronoun_number(word) if pm else None, kind)
        persons: set[str] = state.memo.setdefault("persons", set())
        if kind == "person":
            # gender: who "she" stood for is not a "he" later, and the other way round
            gender = "female" if word in ("she", "her") else "male"
            other: set[str] = state.memo.setdefault("male" if gender == "female" else "female",
                                                    set())
            # … and what "they" stood for is a group ("the Dead"), not a "he"
            other = other | state.memo.setdefault("groups", set())
            if antecedent is not None and antecedent.name.casefold() in other:
                antecedent = self._antecedent(scope, state, present | other, lang, None, kind)
            if antecedent is not None:
                # animacy: what "he"/"his" stood for is a person, and "it" will not stand for it
                persons.add(antecedent.name.casefold())
                state.memo.setdefault(gender, set()).add(antecedent.name.casefold())
        elif word in ("it", "its") and antecedent is not None \
                and antecedent.name.casefold() in persons:
            antecedent = self._antecedent(scope, state, present | persons, lang, "sg", None)
        elif word in ("they", "them", "their") and antecedent is not None \
                and not is_plural(antecedent.name):
            state.memo.setdefault("groups", set()).add(antecedent.name.casefold())
        prev = next(iter(self._scoped_user_records(scope, state)), None)
        topic = self._topic(scope, state, present)
        if antecedent is not None and topic is not None and not anchors(antecedent):
            # a weak centre ("the system") yields to the conversation topic
            antecedent = topic

        # 1'. "that one", "set one up", "the admin one": one-anaphora selects an entity
        #     from the previous answer, or the entity in scope that carries the modifier
        one = self._resolve_one(text, lang, scope, state, msg)
        if one is not None:
            text, focus = one
            rules.append(f"one-anaphora->{focus.name if focus else '?'}")
            present = present | ({focus.name.casefold()} if focus else set())
            msg = Message(msg.index, text, msg.lang, tuple(self.extractor.extract(text, lang)),
                          c, msg.screen)

        # 1a. "the reporting one", "what about usage?": a contrastive modifier names a
        #     sibling of the antecedent
        contrastive = self._contrastive_modifier(text, lang, scope, state,
                                                 list(self.extractor.extract(text, lang)))
        if contrastive is not None:
            text, made = contrastive
            rules.append(f"modifier-contrast->{made.name}")
            present = present | {made.name.casefold()}
            msg = Message(msg.index, text, msg.lang, tuple(self.extractor.extract(text, lang)),
                          c, msg.screen)

        # 1b. "that region", "the tier you suggested": the latest entity of that type
        if Cue.TYPE in c.cues:
            typed_ref = self._type_reference(text, lang, scope, state, present)
            if typed_ref is not None:
                text, focus = typed_ref
                rules.append(f"type-anaphora->{focus.name}")
                present = present | {focus.name.casefold()}
                msg = Message(msg.index, text, msg.lang,
                              tuple(self.extractor.extract(text, lang)), c, msg.screen)

        # once the message's own reference is resolved ("go with the irish one — RPO there?"
        # -> Dublin), what is left of it refers inside the message: nothing more is carried
        now_ms = self.extractor.extract(text, lang)
        if any(r.startswith(("one-anaphora", "modifier-contrast", "type-anaphora"))
               for r in rules) and lang == "en" and english_pronoun(text, now_ms) is None \
                and (Cue.ELLIPSIS not in c.cues or any(m.is_attribute for m in now_ms)):
            # (a fragment that names what it asks, "the max retention on the other db?",
            # is complete once its referent is resolved: nothing to copy from earlier)
            return text, focus

        # 1c. Japanese zero anaphora: the dropped topic is the topic in play, unless the
        #     domain knows another entity in scope goes with what the message asks about
        if Cue.ZERO in c.cues:
            topic0 = self._topic(scope, state, present, allow_stale=True)
            own0 = [m for m in self.extractor.extract(text, lang) if not m.is_attribute
                    or m.source == "vocab"]
            subj = self.extractor.vocabulary.subject_types
            if topic0 is not None and subj and topic0.type not in subj:
                topic0 = None  # the dropped argument is a subject, not an aspect
            cands0 = ([topic0] if topic0 is not None else []) + [
                Mention(sl.type, sl.name, sl.name, 0, 0, "slot")
                for sl in sorted((*scope.slots, *scope.stale), key=lambda sl: -sl.last_seen)
                if sl.type != "attribute" and sl.name.casefold() not in present
                and (not subj or sl.type in subj)
                and sl.type not in {m.type for m in own0 if m.source == "vocab"}]
            if topic0 is None and cands0:
                topic0 = cands0[0]
            best0 = self._associated(own0, cands0)
            if best0 is None:
                # a subject the newer one superseded can still be the one meant when the
                # domain ties what is asked to it alone ("入館証も出せる？" -> the kiosk)
                older = [Mention(sl.type, sl.name, sl.name, 0, 0, "slot")
                         for sl in state.slots.recent(DEFAULT_OTHER_LOOKBACK)
                         if sl.status is SlotStatus.SUPERSEDED and (not subj or sl.type in subj)
                         and sl.name.casefold() not in present]
                best0 = self._associated(own0, older, DEFAULT_WORD_ASSOCIATION) if older else None
            if best0 is not None:
                topic0 = best0
            if topic0 is not None:
                rules.append(f"zero-anaphora->{topic0.name}")
                return self._attach(text, lang, topic0.name), topic0

        # 1d. elaboration: what the previous exchange was about, user *and* assistant
        if Cue.ELABORATION in c.cues:
            elab = self._elaboration(text, lang, scope, state)
            if elab is not None:
                rules.append("elaboration")
                return elab

        # 1e'. "why isn't it covered?" after "…CMK in public preview, which isn't covered by
        #      the SLA": the pronoun's predicate echoes a clause of the answer; its subject
        #      is the entity that clause is about
        if lang == "en" and pm is not None and prev is not None and word in ("it", "they", "them"):
            echo = self._predicate_echo(text, pm, prev, state, present)
            if echo is not None:
                echoed, rest = echo
                new_text, n = self._substitute_pronouns(text, lang, echoed.name, allow_that=False)
                if n:
                    rules.append(f"echo->{echoed.name}")
                    if rest:
                        # the rest of that clause stays with it ("… covered by the SLA")
                        new_text = self._attach(new_text, lang, _join([m.name for m in rest], lang))
                    return new_text, echoed

        # 1e. event and plural reference to the previous exchange
        if lang == "en" and pm is not None and prev is not None:
            event = self._event_or_plural(text, word, pm, prev, state)
            if event is not None:
                text, focus_e, rule = event
                rules.append(rule)
                return text, focus_e

        # 2'. typed domains: carry the roles the message leaves open from the question it
        #     is parallel to (the same-type contrast if it names one, else the previous one)
        typed = self._typed_carry(text, lang, scope, state, msg, rules)
        if typed is not None:
            return typed

        # 2. elaboration: the subject of the previous exchange
        if Cue.ELABORATION in c.cues and prev is not None:
            subject = self._subject_phrase(prev, lang)
            if subject:
                new, n = self._substitute_pronouns(text, lang, subject, allow_that=True)
                if n:
                    text = new
                else:
                    core = _SENT_END.sub("", text)
                    text = (f"{subject}について{core}" if lang == "ja"
                            else f"{core} about {subject}")
                rules.append("elaboration")
                return text, prev.focus

        # 3. pronouns and demonstratives
        if antecedent is not None and (Cue.PRONOUN in c.cues or Cue.DEMONSTRATIVE in c.cues):
            new, n = self._substitute_pronouns(text, lang, antecedent.name, allow_that=True)
            if n:
                rules.append(f"anaphora->{antecedent.name}")
                if lang == "en":
                    new = self._second_pronoun(new, word, antecedent, scope, state, present,
                                               topic, rules)
                return new, antecedent

        # 4. ellipsis: copy the antecedent question, substitute the contrasted element
        if Cue.ELLIPSIS in c.cues and prev is not None:
            new_ms = [m for m in msg.mentions]
            one_m = self._one_anaphora(text, lang, prev, scope)
            if one_m is not None:
                new_ms = [one_m]
                rules.append(f"one-anaphora->{one_m.name}")
            for rec in self._parallel_records(scope, state, msg.index):
                replaced = self._gapping(rec, new_ms, lang)
                if replaced is not None:
                    rules.append(f"ellipsis:gapping@turn{rec.turn}")
                    return replaced
            if antecedent is not None and antecedent.name.casefold() not in present:
                rules.append(f"ellipsis:attach->{antecedent.name}")
                return self._attach(text, lang, antecedent.name), antecedent

        # 5. bridging: "the cost", "the main themes" -> about the topic in force; a "he" or
        #    "she" with no person to stand for is left as it is (a topic is not a person)
        anchor = topic or antecedent
        if kind == "person" and antecedent is None:
            anchor = None
        if (Cue.BRIDGING in c.cues or Cue.ELLIPSIS in c.cues or Cue.PRONOUN in c.cues) \
                and anchor is not None and anchor.name.casefold() not in present:
            rules.append(f"bridging->{anchor.name}")
            return self._attach(text, lang, anchor.name), anchor
        rules.append("unresolved")
        return text, focus

    def _elaboration(self, text: str, lang: str, scope: Scope,
                     state: ConversationState) -> tuple[str, Mention | None] | None:
        """"In more detail" asks about what the assistant just explained.

        The subject is the previous question as it was resolved; "the second part",
        "the last bit", "the bit about X" narrow it to that sentence of the answer.
        """
        records = self._scoped_user_records(scope, state)
        if not records:
            return None
        prev = records[0]
        answer = ""
        if prev.turn < len(state.turns) and state.turns[prev.turn].role is Role.ASSISTANT:
            answer = state.turns[prev.turn].content
        subject = _SENT_END.sub("", prev.query)
        part = _PART.search(text) if lang == "en" else None
        if part is not None and answer:
            sentences = [x.strip() for x in _SENTENCE_SPLIT.split(answer) if x.strip()]
            chosen = ""
            if part.group("about"):
                key = part.group("about").strip().lower()
                chosen = next((x for x in sentences if key in x.lower()), "")
            elif sentences:
                word = (part.group("ord") or "").lower()
                idx = {"first": 0, "second": 1, "third": 2, "last": -1, "final": -1}.get(word, -1)
                if -len(sentences) <= idx < len(sentences):
                    chosen = sentences[idx]
            if chosen:
                words = chosen.split()
                subject = f"{subject}: {' '.join(words[:24])}"
        elif answer:
            # what the answer explained in its own terms: its first typed entities that the
            # question did not name ("owner ... billing stuff?" -> billing admin)
            asked = {m.name.casefold() for m in self.extractor.extract(subject, lang)}
            added = [m.name for m in state.mentions.get(prev.turn + 1, ())
                     if m.source == "vocab" and not m.is_attribute
                     and m.name.casefold() not in asked]
            added = list(dict.fromkeys(added))[:1]
            if added:
                subject = f"{subject} ({_join(added, lang)})" if lang == "en" else \
                    f"{subject}（{_join(added, lang)}）"
        core = _SENT_END.sub("", text)
        end = "？" if lang == "ja" else "?"
        if lang == "ja":
            return f"{subject}について、{core}{end}", prev.focus
        return f"{core} — {subject}{end}", prev.focus

    def _type_reference(self, text: str, lang: str, scope: Scope, state: ConversationState,
                        present: set[str]) -> tuple[str, Mention] | None:
        if lang != "en":
            return None
        for m in _TYPE_REF.finditer(text):
            word = m.group("noun").lower()
            nouns = {word, word.rstrip("s")}
            of_kind = sorted((sl for sl in (*scope.slots, *scope.stale) if self._of_kind(sl, nouns)),
                             key=lambda sl: sl.last_seen, reverse=True)
            if m.group("other"):
                # "the other db": of that kind, not the one the conversation is on now; the
                # one it superseded is exactly "the other" one, so terminal slots count here
                current = of_kind[0].name if of_kind else None
                of_kind = of_kind[1:] + [
                    sl for sl in state.slots.recent(DEFAULT_OTHER_LOOKBACK)
                    if sl.status is SlotStatus.SUPERSEDED and sl.superseded_by == current
                    and self._of_kind(sl, nouns)]
            cands = [sl for sl in of_kind if sl.name.casefold() not in present]
            if cands:
                best = cands[0]
                ent = Mention(best.type, best.name, best.name, 0, 0, "slot")
                return text[: m.start()] + best.name + text[m.end():], ent
        return None

    def _list_frame(self, enum: Enumeration, chosen: Sequence[Mention], state: ConversationState,
                    now: int, text: str) -> list[Mention]:
        """The property a list from an earlier thread was selected by: the aspect entities
        (vocabulary, not subject types) of the question the list answered. Nothing when
        the list belongs to the latest exchange: there the thread itself carries it."""
        subj = self.extractor.vocabulary.subject_types
        question = state.resolved.get(enum.turn - 1)
        if question is None or not subj:
            return []
        item_types = {m.type for m in chosen}
        # the items replace what they are instances of; everything else the question named
        # is the frame (items that are not subjects leave the question's subject standing)
        keep_subjects = not (item_types & subj)
        low = text.casefold()
        frame = [m for m in question.entities
                 if m.source == "vocab" and not m.is_attribute
                 and (m.type not in subj or keep_subjects)
                 and m.type not in item_types and m.name.casefold() not in low]
        if enum.turn >= now - 2:
            # the latest list: its thread is the current one, but an item that is not a
            # subject ("AOF") still needs the subject it belongs to ("… of managed Redis"),
            # and a message that names no aspect of its own asks about the one the list was
            # drawn up for ("rate limits for the export apis?" -> "is the last one shared?")
            own_attrs = [m for m in self.extractor.extract(text, "en") if m.is_attribute
                         and m.source == "vocab"]
            attrs = [] if own_attrs else [m for m in question.entities if m.is_attribute
                                          and m.source == "vocab"
                                          and m.name.casefold() not in low]
            return ([m for m in frame if m.type in subj] if keep_subjects else []) + attrs
        closed = any(r.topic_shift for t in range(enum.turn + 1, now)
                     if (r := state.resolved.get(t)) is not None)
        return frame if closed else []

    def _rheme(self, question: ResolvedTurn, state: ConversationState) -> Mention | None:
        """The new information of the answer to ``question``, if it introduced any.

        Thematic progression: the new element an answer introduces (its rheme) is what
        the next question most often takes up as its theme ("Use Infrequent Access
        instead." -> "what's the minimum duration on that one?"). End focus puts the
        rheme late in the sentence, so the last introduced entity of the answer's first
        sentence is taken.
        """
        t = question.turn + 1
        if t > len(state.turns) or state.turns[t - 1].role is not Role.ASSISTANT:
            return None
        asked = {m.name.casefold() for m in question.entities}
        asked |= {m.name.casefold() for m in state.mentions.get(question.turn, ())}
        content = state.turns[t - 1].content
        first_end = len(content)
        mm = _SENTENCE_SPLIT.search(content)
        if mm is not None:
            first_end = mm.start()
        new = [m for m in state.mentions.get(t, ())
               if m.source == "vocab" and m.name.casefold() not in asked and m.start < first_end]
        if not new:
            return None
        return new[-1]

    def _answer_new(self, scope: Scope, state: ConversationState) -> list[Mention]:
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

    def _resolve_one(self, text: str, lang: str, scope: Scope, state: ConversationState,
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
                hits = self.extractor.vocabulary.find(place) if place else []
                hits = hits or self.extractor.vocabulary.find(mod)
                if hits:
                    ent = hits[0]
            if ent is None:
                ent = self._list_member_named(mod_words, scope)
            if ent is None:
                ent = self._described_as(mod, scope, state, msg.index)
            if ent is not None:
                return text[: m.start()] + _the(ent.name, lang) + text[m.end():], ent
            return None
        m = _OTHER_ONE.search(text)
        if m is not None:
            # "the other one": the member of the last pair that was not just discussed
            asked = {x.name.casefold() for r in self._scoped_user_records(scope, state)[:1]
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
        introduced = self._answer_new(scope, state)
        if not introduced:
            return None
        ent = introduced[0]
        group = m.group("verb")
        rep = f"{group} {_the(ent.name, lang)}" if group else _the(ent.name, lang)
        return text[: m.start()] + rep + text[m.end():], ent

    def _list_member_named(self, mod_words: Sequence[str], scope: Scope) -> Mention | None:
        """"the us one of the two": the member of a list in scope that one of its names
        spells with the modifier ("us-east-1"), when exactly one member does."""
        vocab = self.extractor.vocabulary
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

    def _described_as(self, mod: str, scope: Scope, state: ConversationState,
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

    def _associated(self, own: Sequence[Mention], candidates: Sequence[Mention],
                    at_least: float = 0.0) -> Mention | None:
        """The candidate the domain most associates with the message's own entities
        (documents that discuss the one discuss the other), if any association is known;
        ties keep the candidates' order (recency)."""
        vocab = self.extractor.vocabulary
        if not own or not candidates or not vocab.related:
            return None
        scored = [(max(vocab.association(o.name, c.name) for o in own), -i, c)
                  for i, c in enumerate(candidates)]
        best = max(scored, key=lambda t: (t[0], t[1]))
        return best[2] if best[0] > 0 and best[0] >= at_least else None

    def _contrastive_modifier(self, text: str, lang: str, scope: Scope, state: ConversationState,
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
        recent = [e for rec in self._scoped_user_records(scope, state)[:2] for e in rec.entities]
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
            hits = [h for h in self.extractor.vocabulary.find(candidate)
                    if h.start == 0 and h.end == len(candidate)]
            if hits and hits[0].name.casefold() != ent.name.casefold():
                made = hits[0]
                return text[: m.start("mod")] + _the(made.name, lang).removeprefix("the ") \
                    + text[m.end():], made
        # nothing in scope to contrast with: a vocabulary entry the modifier begins, when it
        # is one of a family that shares its head ("usage export API" among the export APIs)
        family = self._family_member(word)
        if family is not None and _ONE_MOD.search(text):
            return text[: m.start("mod")] + family.name + text[m.end():], family
        return None

    def _family_member(self, word: str) -> Mention | None:
        entries = self.extractor.vocabulary.entries
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

    def _typed_carry(self, text: str, lang: str, scope: Scope, state: ConversationState,
                     msg: Message, rules: list[str]) -> tuple[str, Mention | None] | None:
        """Role filling with typed slots.

        A follow-up leaves some roles of the question it continues unsaid ("is it free?"
        keeps the service, "what about Singapore?" keeps the metric and swaps the region).
        The question it continues is the latest one that has an entity of a type the
        message names (a contrast), else the previous one. Every vocabulary entity of that
        question whose type the message does not fill is carried; in guarded scopes only
        non-terminal ones. Untyped (general) mentions are left to centring and the topic.
        """
        c = msg.classification
        own = [m for m in self.extractor.extract(text, lang)]
        own_types = {m.type for m in own if m.source == "vocab"}
        own_names = {m.name.casefold() for m in own}
        records = self._parallel_records(scope, state, msg.index)
        if not records:
            return None
        chosen: ResolvedTurn | None = None
        contrast = False
        # a named entity is a contrast (the earlier question asked again about it) only in
        # an elliptical or additive question ("what about Singapore?", "Redis too?"); in
        # "what's its DR pair?" the named thing is what is asked, not a replacement
        if own_types and (Cue.ELLIPSIS in c.cues or _ADDITIVE.search(text)):
            for r in records:
                if any(m.source == "vocab" and m.type in own_types
                       and m.name.casefold() not in own_names for m in r.entities):
                    chosen, contrast = r, True
                    break
        if chosen is None:
            chosen = records[0]
            # of the open threads, the one whose subject the domain associates with what
            # the message asks about ("is the warranty …?" goes with the kiosk thread)
            own_vocab = [m for m in own if m.source == "vocab"
                         or (not m.is_attribute and len(m.name) >= 4)]
            if not own_vocab and lang == "en":
                # a message that names nothing still says which thread it continues by its
                # words: "does it fail over automatically?" goes where failover is discussed
                own_vocab = [Mention("phrase", w, w, 0, 0, "general")
                             for w in dict.fromkeys(re.findall(r"[a-z][a-z\-]{3,}", text.lower()))
                             if w not in FUNCTION_WORDS and w not in ADJECTIVES
                             and not w.endswith("ly")]
                words_only = True
            else:
                words_only = False
            if own_vocab and len(records) > 1:
                heads = [(r, r.focus) for r in records[:DEFAULT_THREADS] if r.focus is not None]
                best = self._associated(own_vocab, [h for _, h in heads],
                                        DEFAULT_WORD_ASSOCIATION if words_only else 0.0)
                if best is not None:
                    chosen = next(r for r, h in heads if h is best)
                    if chosen is not records[0]:
                        rules.append(f"thread@turn{chosen.turn}")
        def usable(m: Mention) -> bool:
            if m.type in own_types or m.name.casefold() in own_names:
                return False
            # evicted or superseded entities are never carried
            return m.is_attribute or not scope.guarded or \
                state.slots.get(m.type, m.name) is not None

        def store(rec: ResolvedTurn) -> tuple[list[Mention], list[Mention], list[Mention],
                                               Mention | None]:
            """The exchange as a store: the question's entities, the answer's, the
            question's attributes, and its head."""
            answer: list[Mention] = []
            if rec.turn < len(state.turns) and state.turns[rec.turn].role is Role.ASSISTANT:
                answer = [m for m in state.mentions.get(rec.turn + 1, ()) if m.source == "vocab"]
            question = [m for m in rec.entities if m.source == "vocab"]
            q_e = [m for m in question if not m.is_attribute and usable(m)]
            a_e = [m for m in answer if not m.is_attribute and usable(m)]
            if len(a_e) > 1 and 0 < rec.turn <= len(state.turns) \
                    and _WHO_QUESTION.match(state.turns[rec.turn - 1].content):
                # the answer to "who can …?" opens with who (the role that fills the slot);
                # what the exchange is about is the rest of it ("… can change the plan")
                a_e = a_e[1:] + a_e[:1]
            at = [m for m in question if m.is_attribute and usable(m)]
            if contrast:
                # "does that apply to Redis too?": the property asked about stays, only the
                # contrasted entity changes; it may be a plain noun ("backups")
                at += [m for m in rec.entities if m.source == "general" and m.type == "phrase"
                       and m.name.casefold() not in own_names]
            if any(m.is_attribute and m.source == "vocab" for m in own):
                at = []  # the message's own attribute wins ("what about rate limits?")
            f = rec.focus
            if f is not None and f.source == "vocab" and not f.is_attribute and usable(f):
                hd: Mention | None = f
            else:
                hd = (q_e or a_e)[0] if (q_e or a_e) else None
            return q_e, a_e, at, hd

        q_ents, a_ents, attrs, head = store(chosen)
        if head is None and not attrs and not contrast:
            # the question it continues named nothing typed ("who can make the switch?"):
            # the next open question in scope is the store
            for rec in records[:DEFAULT_THREADS]:
                if rec is chosen:
                    continue
                q2, a2, at2, hd2 = store(rec)
                if hd2 is not None:
                    chosen, q_ents, a_ents, attrs, head = rec, q2, a2, at2, hd2
                    rules.append(f"store@turn{rec.turn}")
                    break
        if contrast and Cue.ELLIPSIS in c.cues and Cue.PRONOUN not in c.cues:
            gap = self._gapping(chosen, [m for m in own if m.source == "vocab"], lang)
            if gap is not None:
                rules.append(f"typed:gapping@turn{chosen.turn}")
                return gap
        if head is None and not attrs:
            return None
        out = text
        rheme = self._rheme(chosen, state) if chosen is records[0] else None
        if rheme is not None and rheme.name.casefold() in own_names:
            rheme = None
        pron = english_pronoun(text, own) if lang == "en" else None
        demonstrative = (pron is not None and pron.group(0).lower() in _DEMONSTRATIVE_WORDS) \
            or (lang == "ja" and bool(_JA_DEMONSTRATIVE.search(text)))
        if contrast and attrs and (Cue.PRONOUN in c.cues or Cue.DEMONSTRATIVE in c.cues):
            phrase = _join([m.name for m in attrs[:2]], lang)
            new, n = self._substitute_pronouns(out, lang, phrase, allow_that=True)
            if n:
                rules.append(f"typed:contrast@turn{chosen.turn}->{phrase}")
                return new, head
        if rheme is not None and demonstrative and not contrast:
            # givenness: "it" continues what is in focus (the question's subject), while
            # "that"/"those" point at what was just activated, the answer's new entity
            new, n = self._substitute_pronouns(out, lang, rheme.name, allow_that=True)
            if n:
                rules.append(f"typed:demonstrative@turn{chosen.turn + 1}->{rheme.name}")
                return new, rheme
        if head is not None and (Cue.PRONOUN in c.cues or Cue.DEMONSTRATIVE in c.cues):
            # the pronoun stands for what was asked about: the subject with its attribute
            # ("can I make it shorter?" after "how does CMK rotation work?")
            number = pronoun_number(pron.group(0)) if pron is not None else None
            # ("private endpoints", "audit logs" are names of one service each: "is it
            # billed per hour?" may take them; "they" still wants a plural)
            named_service = head.source == "vocab" and number == "sg" \
                and head.type in self.extractor.vocabulary.subject_types
            if number is not None and lang == "en" and not named_service \
                    and (number == "pl") != is_plural(head.name):
                # agreement: "who can create them?" wants a plural antecedent, from this
                # exchange or, failing that, from the other open questions
                agreeing = [m for m in q_ents + a_ents if (number == "pl") == is_plural(m.name)]
                if not agreeing:
                    for rec in records[:DEFAULT_THREADS]:
                        q2, a2, _, _ = store(rec)
                        agreeing = [m for m in q2 if (number == "pl") == is_plural(m.name)]
                        if agreeing:
                            break
                if agreeing:
                    head = agreeing[0]
                    attrs = []
            phrase = (f"{head.name}の{attrs[0].name}" if lang == "ja" else
                      f"{head.name} {attrs[0].name}") if attrs else head.name
            # the other entities of that question qualify the head, as a reader would
            # say it: "the uptime SLA for managed Redis", 「マネージドRedisのSLA」
            others = [m.name for m in q_ents if m.name.casefold() != head.name.casefold()
                      and m.type != head.type][:1]
            head_in_question = any(m.name.casefold() == head.name.casefold() for m in q_ents)
            if others and head_in_question:
                phrase = (f"{others[0]}の{phrase}" if lang == "ja" else f"{phrase} for {others[0]}")
            if _LOCATIVE.search(text) and head.type not in LOCATION_TYPES:
                # "there" wants a place: of that exchange, else the latest the scope holds
                places = [m for m in q_ents + a_ents if m.type in LOCATION_TYPES]
                if not places:
                    held = sorted((sl for sl in (*scope.slots, *scope.stale)
                                   if sl.type in LOCATION_TYPES), key=lambda sl: -sl.last_seen)
                    places = [Mention(sl.type, sl.name, sl.name, 0, 0, "slot") for sl in held]
                if places:
                    head, phrase = places[0], places[0].name
            new, n = self._substitute_pronouns(out, lang, phrase, allow_that=True)
            if n:
                rules.append(f"typed:anaphora@turn{chosen.turn}->{phrase}")
                return new, head
        if head is None and rheme is not None and (Cue.PRONOUN in c.cues
                                                   or Cue.DEMONSTRATIVE in c.cues):
            # the question named nothing typed: the pronoun takes what the answer brought in
            new, n = self._substitute_pronouns(out, lang, rheme.name, allow_that=True)
            if n:
                rules.append(f"typed:rheme@turn{chosen.turn + 1}->{rheme.name}")
                return new, rheme
        # an elliptical or bridging question keeps the subject and, if it names no
        # attribute of its own, the attribute that was asked about
        carried = ([head] if head is not None else []) + attrs[:1]
        out = self._attach(out, lang, _join([m.name for m in carried], lang))
        rules.append(f"typed:attach@turn{chosen.turn}:" + ",".join(m.name for m in carried))
        return out, head

    def _one_anaphora(self, text: str, lang: str, prev: ResolvedTurn,
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
            found = [x for x in self.extractor.vocabulary.find(candidate) if x.type == ant.type]
            if found:
                return found[0]
            if ant.source != "vocab":
                return Mention(ant.type, candidate, candidate, 0, 0, "general")
        return None

    @staticmethod
    def _subject_phrase(prev: ResolvedTurn, lang: str) -> str:
        """What the previous exchange was about: its question's entities and attributes."""
        names: list[str] = []
        for m in prev.entities:
            if m.is_attribute and m.source != "vocab":
                continue
            names.append(m.name if m.source == "vocab" else m.surface)
        if not names and prev.focus is not None:
            names = [prev.focus.name]
        if not names:
            return _SENT_END.sub("", prev.query)
        return ("の".join(names) if lang == "ja" else " ".join(dict.fromkeys(names)))

    def _predicate_echo(self, text: str, pm: re.Match[str], prev: ResolvedTurn,
                        state: ConversationState,
                        present: set[str]) -> tuple[Mention, list[Mention]] | None:
        """The vocabulary entity that a clause of the previous answer says the message's
        own predicate of (the last entity before the echoed word, in the same clause), and
        the entities that clause names after it."""
        if not prev.turn < len(state.turns) or state.turns[prev.turn].role is not Role.ASSISTANT:
            return None
        answer = state.turns[prev.turn].content
        mentions = [m for m in state.mentions.get(prev.turn + 1, ())
                    if m.source == "vocab" and not m.is_attribute
                    and m.name.casefold() not in present]
        words = [w for w in re.findall(r"[a-z]{4,}", text[pm.end():].lower())
                 if w not in FUNCTION_WORDS and w not in VERBS_TOO_COMMON]
        for w in words:
            hit = re.search(rf"\b{re.escape(w)}\b", answer, re.IGNORECASE)
            if hit is None:
                continue
            clause_start = max(answer.rfind(sep, 0, hit.start()) for sep in (". ", "; ", "? ", "! "))
            ends = [i for i in (answer.find(sep, hit.end()) for sep in (". ", "; ", ", ")) if i >= 0]
            clause_end = min(ends) if ends else len(answer)
            before = [m for m in mentions if clause_start < m.start < hit.start()]
            if before:
                after = [m for m in mentions if hit.end() <= m.start < clause_end
                         and m.name.casefold() != before[-1].name.casefold()]
                return before[-1], after
        return None

    def _event_or_plural(self, text: str, word: str, pm: re.Match[str], prev: ResolvedTurn,
                         state: ConversationState) -> tuple[str, Mention | None, str] | None:
        """Two references to the previous exchange that no single entity fills:

        * event anaphora: after "what happens if I disable a key?", "is *that* logged?"
          is about the event, disabling the key (the conditional clause, as a gerund);
        * plural reference: after an answer that names several new entities ("use the
          billing export or the reporting export"), "which of *those*" is all of them.
        """
        if not 0 < prev.turn <= len(state.turns):
            return None
        if word in ("that", "this", "it"):
            asked = state.turns[prev.turn - 1].content
            cm = _CONDITIONAL_EVENT.search(asked)
            if cm is not None:
                phrase = f"{_gerund(cm.group('verb'))} {cm.group('obj').strip()}"
                return (text[: pm.start()] + phrase + text[pm.end():],
                        prev.focus, f"event->{phrase}")
        if word in ("those", "these", "them", "they") and prev.turn < len(state.turns) \
                and state.turns[prev.turn].role is Role.ASSISTANT:
            asked_names = {m.name.casefold() for m in prev.entities}
            for enum in state.enumerations:
                if enum.turn != prev.turn + 1:
                    continue
                new = [m for m in enum.items if m.name.casefold() not in asked_names]
                if len(new) >= 2:
                    phrase = _join([m.name for m in new], "en")
                    return (text[: pm.start()] + phrase + text[pm.end():], new[0],
                            f"plural->{phrase}")
        return None

    def _second_pronoun(self, text: str, first: str, used: Mention, scope: Scope,
                        state: ConversationState, present: set[str], topic: Mention | None,
                        rules: list[str]) -> str:
        """"how did he cook it?", "what was their role in it?": a second pronoun of another
        person, number or animacy stands for a second antecedent (the topic first)."""
        pm = english_pronoun(text, self.extractor.extract(text, "en"))
        if pm is None:
            return text
        word = pm.group(0).lower()
        kinds = {w: ("person" if w in ("he", "she", "him", "his", "her") else "thing")
                 for w in (first, word)}
        if kinds[first] == kinds[word] and pronoun_number(first) == pronoun_number(word):
            return text  # the same referent again
        exclude = present | {used.name.casefold()} | state.memo.get("persons", set())
        number = pronoun_number(word)
        second: Mention | None = None
        if kinds[word] == "thing" and topic is not None and topic.name.casefold() not in exclude \
                and (number is None or (number == "pl") == is_plural(topic.name)):
            second = topic
        if second is None:
            second = self._antecedent(scope, state, exclude, "en", number,
                                      "person" if kinds[word] == "person" else None)
        if second is None:
            return text
        new, n = self._substitute_pronouns(text, "en", second.name, allow_that=False)
        if n:
            rules.append(f"anaphora->{second.name}")
            return new
        return text

    def _substitute_pronouns(self, text: str, lang: str, name: str, *,
                             allow_that: bool) -> tuple[str, int]:
        """Replace the pronoun the classifier would resolve (the same rules decide)."""
        if lang == "ja":
            n = 0

            def dem(m: re.Match[str]) -> str:
                nonlocal n
                n += 1
                return f"{name}の"

            text = _JA_DEM_NP.sub(dem, text)
            text, k = _JA_PRON.subn(lambda _m: name, text)  # a function: the name is literal text
            return text, n + k
        mentions = self.extractor.extract(text, lang)
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

    def _gapping(self, prev: ResolvedTurn, new: Sequence[Mention], lang: str) -> tuple[str, Mention | None] | None:
        """Copy the previous question and swap the element of the same type."""
        if not new:
            return None
        query = prev.query
        prev_ms = list(self.extractor.extract(query, lang))
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

    def _locative_frame(self, text: str, original: str, pivot: bool, state: ConversationState,
                        rules: list[str]) -> str:
        """The place a conversation is set in ("what is there to do in Chattanooga?") frames
        later questions about places and things to do that name no place of their own
        ("are there any film festivals?", "what is Rock City?" -> in Chattanooga). A new
        place replaces it, a change of subject clears it. General names only: a domain
        vocabulary's places are typed slots and are carried as such."""
        memo = state.memo
        own = _PLACE_IN.search(original) or _PLACE_IN.search(text)
        place: str | None = None if pivot else memo.get("place")
        out = text
        if place is not None and own is None and place.casefold() not in text.casefold() \
                and (_LOCATABLE.search(text) or _PLACE_NAME.search(text)):
            core = _SENT_END.sub("", text)
            end = text[len(core):].strip() or "?"
            out = f"{core} in {place}{end}"
            rules.append(f"place->{place}")
        settlement = _SETTLEMENT.search(original)
        if own is not None and not self.extractor.vocabulary.find(own.group("place")) \
                and not _REFERS_BACK.search(original) and not _NAMED_SUBJECT.search(original):
            # a place sets the frame when the question is about the place ("interesting
            # things around Ann Arbor"); a question about someone, already given or named as
            # its subject, only locates what they did ("did he perform at Woodstock?",
            # "what did Jacobs do in NYC?")
            memo["place"] = own.group("place")
        elif settlement is not None and place is not None:
            memo["place"] = settlement.group(0)  # "how does Salt Lake City differ?"
        elif pivot:
            memo.pop("place", None)
        return out

    def _of_kind(self, slot: Slot, nouns: set[str]) -> bool:
        """Whether a slot is an instance of one of ``nouns``: its type, or a kind its
        vocabulary entry declares ("db" for managed Postgres)."""
        return slot.type in nouns or bool(nouns & self.extractor.vocabulary.kinds_of(slot.name))

    def _recalled_kind(self, text: str, state: ConversationState,
                       key: str | None) -> tuple[str, Mention] | None:
        """"going back to the cache": a kind noun as the recalled topic names the latest
        entity of that kind the conversation had, even one a newer one superseded."""
        vocab = self.extractor.vocabulary
        if not key or key.casefold() not in vocab.kinds:
            return None
        noun = key.casefold()
        for sl in state.slots.recent(DEFAULT_OTHER_LOOKBACK):
            if self._of_kind(sl, {noun}) and sl.status is not SlotStatus.EVICTED:
                ent = Mention(sl.type, sl.name, sl.name, 0, 0, "slot")
                m = re.search(rf"\bthe\s+{re.escape(key)}\b", text, re.IGNORECASE)
                if m is not None:
                    return text[: m.start()] + _the(sl.name, "en") + text[m.end():], ent
                return self._attach(text, "en", sl.name), ent
        return None

    def _history_ordinal(self, text: str, state: ConversationState) -> tuple[str, Mention] | None:
        """"the first api you described": of the entities of that kind the conversation has
        had (bounded look-back, in order of introduction), the one at that position."""
        m = _HISTORY_ORDINAL.search(text)
        if m is None:
            return None
        noun = m.group("noun").lower()
        nouns = {noun, noun.rstrip("s")}
        seen: dict[str, Slot] = {}
        for sl in state.slots.recent(DEFAULT_OTHER_LOOKBACK):
            if self._of_kind(sl, nouns):
                prev = seen.get(sl.name.casefold())
                if prev is None or sl.introduced < prev.introduced:
                    seen[sl.name.casefold()] = sl
        ordered = sorted(seen.values(), key=lambda sl: sl.introduced)
        pos = ORDINALS_EN.get(m.group("ord").lower(), 0)
        if not ordered or pos == 0 or pos > len(ordered):
            return None
        pick = ordered[-1] if m.group("ord").lower() == "last" else ordered[pos - 1]
        ent = Mention(pick.type, pick.name, pick.name, 0, 0, "slot")
        return text[: m.start()] + _the(pick.name, "en") + text[m.end():], ent

    @staticmethod
    def _attach(text: str, lang: str, name: str) -> str:
        # (the classifier's headless superlative, except "the best one": one-anaphora)
        sup = next((m for m in _HEADLESS_SUPERLATIVE.finditer(text)
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

    # -- recall and screen -----------------------------------------------------------
    def _recall(self, text: str, lang: str, scope: Scope, state: ConversationState,
                mentions: Sequence[Mention], rules: list[str],
                msg_key: str | None = None) -> tuple[str, Mention | None]:
        by_order = self._history_ordinal(text, state) if lang == "en" else None
        if by_order is not None:
            text, ent = by_order
            rules.append(f"recall:order->{ent.name}")
            return text, ent
        by_kind = self._recalled_kind(text, state, msg_key) if lang == "en" else None
        if by_kind is not None:
            text, ent = by_kind
            rules.append(f"recall:kind->{ent.name}")
            return text, ent
        if not scope.recalled:
            rules.append("recall-unresolved")
            return text, None
        ex = scope.recalled[0]
        rec = state.resolved.get(ex)
        key_ms = [m for m in state.mentions.get(ex, ()) if not m.is_attribute]
        for t in state.exchange_of(ex)[1:]:
            key_ms += [m for m in state.mentions.get(t, ()) if not m.is_attribute]
        if rec is not None and rec.focus is not None:
            key_ms.insert(0, rec.focus)
        present = {m.name.casefold() for m in mentions}
        key = msg_key or ""
        kg = char_bigrams(key)

        def score(m: Mention) -> tuple[float, int]:
            names = self.extractor.vocabulary.surfaces_of(m.name) if m.source == "vocab" \
                else (m.name,)
            best = max((len(kg & char_bigrams(n)) / max(1, len(kg)) for n in names), default=0.0)
            return best, int(m.source == "vocab")

        # the recalled entity: a vocabulary entity of that exchange the message does not
        # name yet, the one the topic key names best ("the cache sla" -> managed Redis);
        # a general phrase only if the key names it well
        vocab_c = [m for m in key_ms if m.source == "vocab" and m.name.casefold() not in present]
        general_c = [m for m in key_ms if m.source != "vocab" and m.name.casefold() not in present
                     and kg and score(m)[0] >= 0.5]
        target = max(vocab_c, key=score) if vocab_c else (max(general_c, key=score)
                                                          if general_c else None)
        if target is None:
            # everything recalled is named already; an alias ("アバター") gets the canonical
            # name the documents use
            named_alias = [m for m in key_ms if m.source == "vocab"
                           and m.name.casefold() in present
                           and m.name.casefold() not in text.casefold()]
            rules.append("recall:named")
            if named_alias:
                return self._attach(text, lang, named_alias[0].name), named_alias[0]
            return text, key_ms[0] if key_ms else None
        new, n = self._substitute_pronouns(text, lang, target.name, allow_that=False)
        if n:
            rules.append(f"recall:anaphora->{target.name}")
            return new, target
        has_question = bool(re.search(r"[?？]|\b(?:what|how|is|are|does|do|can|which|why|when)\b",
                                      _strip_recall(text, lang), re.IGNORECASE))
        if rec is not None and not has_question:
            rules.append(f"recall:repeat-turn{ex}")
            repeated = rec.query
            have = {m.name.casefold() for m in self.extractor.extract(repeated, lang)}
            # what the user named ("... about Dublin") stays in the query
            keep = [m.name for m in mentions if not m.is_attribute and anchors(m)
                    and m.name.casefold() not in have]
            if target.name.casefold() not in have and not keep:
                keep = [target.name]
            if keep:
                repeated = self._attach(repeated, lang, _join(keep, lang))
            return repeated, target
        rules.append(f"recall:attach->{target.name}")
        return self._attach(text, lang, target.name), target

    @staticmethod
    def _situational(text: str, lang: str, scope: Scope, cls: ReferenceClass) -> str | None:
        screen = scope.screen
        if screen is None or screen.is_empty():
            return None
        if cls is ReferenceClass.SITE:
            site = screen.site or screen.page_url or ""
            if not site:
                return None
            pat = _SITE_JA if lang == "ja" else _SITE_EN
            site_rep = f"{site}のサイト" if lang == "ja" else f"the {site} site"
            # replacements are functions: a backslash in user text is literal, not a template
            return pat.sub(lambda _m: site_rep, text, count=1)
        title = screen.page_title or screen.page_url or ""
        if not title:
            return None
        pat = _JA_PAGE if lang == "ja" else _EN_PAGE
        rep = f"「{title}」のページ" if lang == "ja" else f"the page \"{title}\""
        out, n = pat.subn(lambda _m: rep, text, count=1)
        if n:
            return out
        # a proximal demonstrative for what is on screen: "is this available in London?"
        if lang == "ja":
            out, n = _JA_PROXIMAL_NP.subn(lambda _m: f"「{title}」の", text, count=1)
            if not n:
                out, n = _JA_PROXIMAL.subn(lambda _m: f"「{title}」", text, count=1)
            return out if n else None
        out, n = _EN_PROXIMAL.subn(lambda _m: title, text, count=1)
        return out if n else None

    # -- carry (unguarded scopes only) ----------------------------------------------
    def _carry(self, text: str, lang: str, scope: Scope, state: ConversationState,
               rules: list[str]) -> str:
        if not scope.turns:
            return text
        present_ms = self.extractor.extract(text, lang)
        present = {m.name.casefold() for m in present_ms}
        present_types = {m.type for m in present_ms}
        score: dict[tuple[str, str], float] = {}
        newest = max(scope.turns)
        for t in scope.turns:
            recency = 1.0 / (1 + newest - t)
            for m in state.mentions.get(t, ()):
                if m.is_attribute:
                    continue
                score[(m.type, m.name)] = score.get((m.type, m.name), 0.0) + 1.0 + recency
        best: dict[str, tuple[float, str]] = {}
        for (typ, name), sc in score.items():
            if name.casefold() in present or typ in present_types and typ not in ("phrase", "name", "term"):
                continue
            if typ not in best or sc > best[typ][0]:
                best[typ] = (sc, name)
        carried = [name for typ, (sc, name) in sorted(best.items(), key=lambda kv: -kv[1][0])
                   if sc >= 2.0][:2]
        if not carried:
            return text
        rules.append("carry:" + ",".join(carried))
        core = _SENT_END.sub("", text)
        end = text[len(core):].strip() or ("？" if lang == "ja" else "?")
        if lang == "ja":
            return f"{_join(carried, lang)}の{core}{end}"
        return f"{core} ({_join(carried, lang)}){end}"


def _in_domain(state: ConversationState) -> bool:
    """Whether the user has named a thing of the declared vocabulary in this conversation
    (an attribute such as "price" does not make a conversation the domain's, nor does an
    answer: long answers name "Europe" or "standard" in any subject).

    Incremental: each turn's mentions are read once, whatever the conversation's length."""
    memo = state.memo
    if memo.get("domain:named"):
        return True
    upto = memo.get("domain:upto", 0)
    turns = state.turns
    # turns are only ever appended: the unread ones are those after the first ``upto``
    for turn in turns[upto:]:
        if turn.role is Role.USER and any(m.source == "vocab" and not m.is_attribute
                                          for m in state.mentions.get(turn.index, ())):
            memo["domain:named"] = True
            return True
    memo["domain:upto"] = len(turns)
    return False


def _after_pivot(text: str) -> str:
    """The question after a change-of-subject cue ("unrelated to all that — how …?")."""
    cut = after_pivot(text)
    if cut is not None and len(cut[1].strip()) > 3:
        return cut[1].strip()
    return text


def _strip_recall(text: str, lang: str) -> str:
    if lang == "ja":
        return re.sub(r"(?:さっき|先ほど|先程|前に|以前)[^、。？?]*(?:ですが|けど|について)?[、,]?", "", text)
    return re.sub(r"\b(?:go(?:ing)?\s+back\s+to|back\s+to|earlier|you\s+(?:mentioned|said)|"
                  r"what\s+you\s+said\s+about)\b", "", text, flags=re.IGNORECASE)
