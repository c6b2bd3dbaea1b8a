"""The bridge to the learned resolver: which messages it decides, and how a broken install
leaves the rules to answer alone.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Sequence

from turnscope._exceptions import ConfigError
from turnscope.conversation import ConversationState, Role
from turnscope.entities import EntityExtractor
from turnscope.references import (
    Cue,
    ReferenceClass,
    english_pronoun,
    is_person,
    named_kinds,
    person_names,
    pronoun_agreement,
    question_subject,
    thing_subject,
    which_of_pair,
)
from turnscope.resolver import HistoryTurn, Resolver, default_resolver, history_of, session_shift
from turnscope.rewriters._base import RewriteRequest
from turnscope.rewriters._rules._base import Rewrite, Route, TurnContext
from turnscope.rewriters._rules._deixis import Substitution, locative_there, possessive_pronoun

logger = logging.getLogger("turnscope.rewriters")
#: cues whose store is structure the rules read (a list, the previous exchange), not an
#: open-domain choice of antecedent
_STRUCTURAL_CUES = frozenset({Cue.ORDINAL, Cue.ELABORATION, Cue.RECALL, Cue.OTHER_THREAD, Cue.SCREEN})


def _in_domain(state: ConversationState) -> bool:
    """Whether the user has named a thing of the declared vocabulary in this conversation
    (an attribute such as "price" does not make a conversation the domain's, nor does an
    answer: long answers name "Europe" or "standard" in any subject).

    Incremental: each turn's mentions are read once, whatever the conversation's length."""
    memo = state.rules
    if memo.domain_named:
        return True
    upto = memo.domain_read
    turns = state.turns
    # turns are only ever appended: the unread ones are those after the first ``upto``
    for turn in turns[upto:]:
        if turn.role is Role.USER and any(m.source == "vocab" and not m.is_attribute
                                          for m in state.mentions.get(turn.index, ())):
            memo.domain_named = True
            return True
    memo.domain_read = len(turns)
    return False

def agreement_filter(message: str, history: Sequence[HistoryTurn]) -> Callable[[str], bool] | None:
    """The constraint the message's pronouns put on an antecedent, for the learned resolver's
    candidates: "he"/"she" reject a phrase the conversation's grammar says is a thing, "it"
    one it says is a person (:func:`is_person`); a phrase the grammar says nothing about is
    kept, and the learned score decides among those kept. ``None``: no constraint (no
    pronoun, or pronouns of two kinds)."""
    need = pronoun_agreement(message)
    if need not in ("person", "thing"):
        return None
    texts = [t for h in history for t in ((h.text,) if h.rewrite is None else (h.text, h.rewrite))]
    introduced = any(person_names(t) for t in texts)
    if need == "thing" and not introduced:
        return None  # no person anywhere: nothing for "it" to reject

    def agrees(phrase: str) -> bool:
        # a phrase the grammar says nothing about is kept: names the grammar does not
        # introduce are as often people as not, and the learned score knows them better
        known = is_person(phrase, texts)
        return known is None or known is (need == "person")

    return agrees


_PERSON_PRONOUN = re.compile(r"\b(?:he|she|him|his|her)\b", re.IGNORECASE)


def person_pronoun(message: str, history: Sequence[HistoryTurn]) -> tuple[str, str] | None:
    """"How old is he?" after an exchange that introduced exactly one person: the message
    with the name in place of the pronoun ("his" -> "Bong Joon-ho's"), and the name. The
    last answer is read first, then the last user turn (as resolved); the first of them that
    introduces anyone must introduce exactly one person, and the message must have exactly
    one such pronoun, or nothing is written (two people: the grammar alone cannot pick)."""
    if pronoun_agreement(message) != "person":
        return None
    found = list(_PERSON_PRONOUN.finditer(message))
    if len(found) != 1:
        return None
    answer = next((h for h in reversed(history) if h.role == "assistant"), None)
    question = next((h for h in reversed(history) if h.role == "user"), None)
    if answer is not None and question is not None and answer.index < question.index:
        answer = None  # the last user turn has no answer yet: it is the last exchange
    names: tuple[str, ...] = ()
    source = ""
    for h in (answer, question):
        if h is not None:
            source = h.rewrite or h.text
            names = person_names(source) or (person_names(h.text) if h.rewrite else ())
            if names:
                break
    if len(names) != 1:
        return None
    name = names[0]
    female = found[0].group(0).lower() in ("she", "her")
    said = {w.lower() for w in _GENDERED.findall(source)}
    if said and not said & (_FEMALE if female else _MALE):
        return None  # the text that names them says "he" where the message says "she"
    if name.casefold() in message.casefold():
        return None
    m = found[0]
    word = m.group(0).lower()
    if word == "her":
        # "her" is the object ("ask her") or the possessive ("her age"): which one is the
        # next word's to say, and a wrong "'s" is a wrong word
        nxt = re.match(r"\s+([A-Za-z]+)", message[m.end():])
        if nxt is not None and nxt.group(1).lower() not in _NOT_A_NOUN:
            return None
    new = f"{name}'s" if word == "his" else name
    return message[:m.start()] + new + message[m.end():], name


_GENDERED = re.compile(r"\b(?:he|him|his|himself|she|her|hers|herself)\b", re.IGNORECASE)
_MALE = frozenset("he him his himself".split())
_FEMALE = frozenset("she her hers herself".split())

#: a resolver candidate scoring this much is evidence enough to veto a structural reading
_RIVAL_SCORE = 0.25


def _central_rival(rival: str | None, name: str, history: Sequence[HistoryTurn]) -> bool:
    """Whether the resolver's well-scored ``rival`` is what the conversation is about rather
    than ``name``: a different phrase the user named, or one three turns or more name (a
    "he" continues the conversation's centre before a person an answer mentions in passing)."""
    if rival is None or _shares_word(rival, name):
        return False
    low = rival.casefold()
    turns = [h for h in history if low in (h.rewrite or h.text).casefold()]
    return any(h.role == "user" for h in turns) or len(turns) >= 3


def _swaps_a_part(subject: str, message: str) -> bool:
    """"is it also the law in Spain?" after a question about Germany: the message names
    another of a kind the subject holds (a place, a year, a product …). That is an ellipsis
    with a part swapped, not a pronoun for the whole subject, which would keep Germany."""
    mine = named_kinds(message)
    return any(kind in mine and names != mine[kind] for kind, names in named_kinds(subject).items())


def _shares_word(a: str, b: str) -> bool:
    return bool({w.casefold() for w in a.split()} & {w.casefold() for w in b.split()})


def exchanges(history: Sequence[HistoryTurn], most: int = 2) -> list[tuple[str, str | None]]:
    """The last ``most`` exchanges, newest first: (the user's question as resolved, the
    answer that followed it or None)."""
    out: list[tuple[str, str | None]] = []
    answer: str | None = None
    for h in reversed(history):
        if h.role == "assistant":
            answer = h.text if answer is None else answer
            continue
        out.append((h.rewrite or h.text, answer))
        answer = None
        if len(out) >= most:
            break
    return out


#: words after "her" that show it is an object, not a possessive ("did they ask her to …")
_NOT_A_NOUN = frozenset("to about for in on at with from and or if when as so because".split())


class ResolverBridge:
    """The learned resolver, loaded on first use, and the messages it answers (one per
    rewriter, shared by its two rules below)."""

    def __init__(self, extractor: EntityExtractor, resolver: Resolver | None | str) -> None:
        self.extractor = extractor
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
        history = history_of(state)
        # the tagger reads the message and the history while e5 embeds the message for the
        # shift detector: neither needs the other's answer
        resolver.prefetch(text, history)
        shift = session_shift(state, msg.index, msg.text, resolver)
        res = resolver.resolve(text, history, shift=shift, agrees=agreement_filter(text, history))
        trace["resolver"] = res.trace()
        trace["shift_probability"] = round(shift, 4)
        if any(_swaps_a_part(phrase, text) for phrase in res.carried):
            # "is it the same in Spain?": a carried "minimum wage in Germany" would keep the
            # place the message swaps out; the message stays as typed
            trace["declined"] = "the message swaps a part of the carried phrase"
            return text, ()
        if not res.carried:
            # the resolver carried nothing. What structure fixes may still stand in: the one
            # person a "he"/"she" can stand for in the last exchange (the resolver's
            # candidates are phrases, and its gate does not know that a pronoun of a person
            # needs one), or the subject of the last question for an "it". Its best
            # candidate, when it scores well, must agree with what structure found
            best = max(res.scored, key=lambda c: c.score, default=None)
            rival = best.text if best is not None and best.score >= _RIVAL_SCORE else None
            person = person_pronoun(text, history)
            if person is not None and not _central_rival(rival, person[1], history):
                trace["person_pronoun"] = person[1]
                return person[0], (person[1],)
            thing = thing_subject(text, exchanges(history), question_subject, rival=rival)
            if thing is not None and _swaps_a_part(thing[1], text):
                thing = None
            if thing is not None:
                trace["thing_pronoun"] = thing[1]
                return thing[0], (thing[1],)
            # … and "which one is faster?" the two things the last question compared
            last = exchanges(history, 1)
            pair = which_of_pair(text, last[0][0]) if last else None
            if pair is not None:
                trace["which_of_pair"] = True
                return pair, ()
        return res.query, res.carried

    def _open_domain(self, request: RewriteRequest) -> bool:
        """Whether a message is open-domain talk with no structural cue: English, no
        change of subject, a standalone or immediate reference (no ordinal, elaboration,
        recall or screen), in a conversation that names nothing of a declared vocabulary.
        These are the messages the learned resolver decides."""
        msg = request.message
        c = msg.classification
        return msg.lang == "en" and not c.pivot \
            and c.reference_class in (ReferenceClass.STANDALONE, ReferenceClass.IMMEDIATE) \
            and not set(c.cues) & _STRUCTURAL_CUES \
            and not (self.extractor.vocabulary.types and _in_domain(request.state))

    def _deixis(self, request: RewriteRequest, text: str) -> list[Substitution]:
        """The pro-forms of an open-domain message whose antecedent structure fixes (a
        possessive "mine", a locative "there"), each replaced in turn. What they name is
        not the learned resolver's choice: it does not decide these messages."""
        if not self._open_domain(request):
            return []
        msg, scope, state = request.message, request.scope, request.state
        done: list[Substitution] = []
        for rule in (possessive_pronoun, locative_there):
            sub = rule(text, state, scope.turns, msg.index)
            if sub is not None:
                done.append(sub)
                text = sub.text
        return done


class ProForms:
    """A possessive "mine" or a locative "there" in open-domain talk names what structure
    fixes (see :mod:`._deixis`); when they were all the message referred to, the
    reference is resolved."""

    name = "pro-forms"
    route: Route | None = None

    def __init__(self, bridge: ResolverBridge) -> None:
        self.bridge = bridge

    def apply(self, turn: TurnContext) -> Rewrite | None:
        if turn.cls_used is not turn.c.reference_class:
            return None
        deixis = self.bridge._deixis(turn.request, turn.text)
        if not deixis:
            return None
        text = deixis[-1].text
        # what is left is read as the message the user would have typed with the names
        mentions = turn.mentions_of(text)
        refers = english_pronoun(text, mentions) is not None
        return Rewrite(text, tuple(d.rule for d in deixis), carried=tuple(d.phrase for d in deixis),
                       reread=mentions, deixis=True, final=not refers)


class LearnedResolver:
    """What else an open-domain message refers to ("what did he do there?") is the learned
    resolver's to decide, on the message with the pro-forms' names written in."""

    name = "learned-resolver"
    route: Route | None = None

    def __init__(self, bridge: ResolverBridge) -> None:
        self.bridge = bridge

    def apply(self, turn: TurnContext) -> Rewrite | None:
        if turn.cls_used is not turn.c.reference_class or turn.resolved:
            return None
        trace: dict[str, object] = {}
        learned = self.bridge._learned(turn.request, turn.text, trace)
        if learned is None:
            return Rewrite(turn.text, trace=tuple(trace.items())) if trace else None
        text, more = learned
        person = trace.get("person_pronoun")
        thing = trace.get("thing_pronoun")
        label = (f"person-pronoun->{person}" if isinstance(person, str) else
                 f"thing-pronoun->{thing}" if isinstance(thing, str) else
                 "which-of-pair" if trace.get("which_of_pair") else "learned-resolver")
        return Rewrite(text, (label,), carried=more, trace=tuple(trace.items()),
                       learned=True, final=True)
