"""The rules a default open-domain turn runs, in two parts: the open-domain references (the
messages the learned resolver decides, and what structure fixes before it or where it
abstains), then the form of the query every route shares (openers, the screen, the clean
query, carried qualifiers, the place frame; the section "The query's form" below).

* **Pro-forms** — two whose antecedent structure alone fixes, with no model and no
  vocabulary. A locative "there" stands for a place the conversation named: a proper name
  after a locative preposition or a verb of travel ("visiting Kyoto", "driving to
  Yellowstone"), or a name headed by a place noun ("the Van Gogh Museum"); the existential
  "there" ("is there", "there are", "what's there to do") is a dummy subject and names
  nothing. A possessive "mine" / "ours" stands for the thing the user called "my …" /
  "our …" ("My dishwasher leaves spots … how often should I descale mine?" -> "my
  dishwasher"). Both read only the turns the scope allows, newest exchange first, and
  within an exchange the user's own words before the answer's (the user set the frame; an
  answer names many places in passing).
* **The bridge to the learned resolver** — which messages it decides, and how a broken
  install leaves the rules to answer alone.
* **Elliptical fragments** — "and in France?", "what about the Pixel 9 Pro?", "and the
  cinematographer?": an earlier question of the thread with one part swapped, or completed
  (:mod:`turnscope.references._grammar` decides which part, by kind and structure, and
  abstains when the evidence is not unique). The rule runs before the learned resolver:
  the resolver chooses an earlier *phrase* to write into a message, and a fragment needs an
  earlier *question* with a phrase taken out, which it does not do (it leaves "and in
  France?" as typed). When the fragment reading abstains, the message goes on to the
  resolver and the immediate rules as before.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from turnscope._exceptions import ConfigError
from turnscope._lexicon import (
    ADVERBS,
    AMBIGUOUS_VERBS,
    ANAPHORIC_PRONOUNS,
    AUXILIARIES,
    DEMONYMS,
    DETERMINERS,
    FUNCTION_WORDS,
    VERBS,
)
from turnscope.conversation import ConversationState, ResolvedTurn, Role
from turnscope.entities import EntityExtractor
from turnscope.references import (
    SITE_EN,
    SITE_JA,
    Cue,
    Fragment,
    ReferenceClass,
    after_pivot,
    attach_topic,
    english_pronoun,
    is_person,
    named_kinds,
    parse_fragment,
    person_names,
    pronoun_agreement,
    question_subject,
    split_preamble,
    substitute_in_thread,
    thing_subject,
    which_of_pair,
)
from turnscope.resolver import (
    HistoryTurn,
    Resolver,
    default_resolver,
    history_of,
    session_shift,
    shift_threshold,
)
from turnscope.rewriters._base import RewriteRequest
from turnscope.rewriters._rules._base import Rewrite, Route, TurnContext
from turnscope.rewriters._rules._text import _PLACE_NAME, _SENT_END, _TIME_NAMES, _join
from turnscope.scope import Scope

__all__ = ["Substitution", "locative_there", "possessive_pronoun", "FragmentEllipsis", "thread_questions"]

#: how many turns back (user and assistant) a pro-form looks for its antecedent: the last
#: two exchanges, where centring puts what a pro-form continues
LOOKBACK_TURNS = 4

#: a proper name of up to five capitalised words, joined by "of", "and" and the like
#: ("Alabama Agricultural and Mechanical University", "Isle of Skye")
_NAME = r"[A-Z][\w.'’\-]*[A-Za-z](?:\s+(?:of\s+|de\s+|del\s+|la\s+|and\s+|&\s+)?[A-Z][\w.'’\-]*[A-Za-z]){0,4}"
#: a proper name after a locative preposition, a verb of visiting or a verb of travel + "to"
_TRAVEL = (r"go|goes|going|went|travel|travels|travell?ing|travell?ed|fly|flying|flew|drive|"
           r"driving|drove|move|moving|moved|relocate|relocating|relocated|trip|head|heading|"
           r"headed|get|getting|come|coming|back|send|sends|sent|sending|ship|ships|shipped|"
           r"copy|copies|copied|route|routed|transfer|transferred|redirect|redirected")
_PLACE_AFTER = re.compile(
    rf"\b(?:(?P<prep>(?i:in|at|near|around))|visit|visits|visiting|visited|(?:{_TRAVEL})\s+to)"
    rf"\s+(?P<the>the\s+)?(?P<place>{_NAME})")
#: capitalised words that follow "in" or "at" without naming a place
_NOT_PLACES = frozenset({w.lower() for w in _TIME_NAMES} | {"i", "english"})
#: a verb of motion before "there": "get there", "drive there" -> "to <place>"
_MOTION = frozenset("go goes going went gone get gets getting got travel travels traveling "
                    "travelling traveled travelled fly flying flew drive driving drove walk walking "
                    "walked move moving moved commute commuting ride riding take taking send "
                    "sending ship shipping head heading return returning come coming came "
                    "relocate relocating".split())
#: a head noun that is a building or venue: one is "at" it, not "in" it
_BUILDING = re.compile(
    r"\b(?:Museum|Center|Centre|Hall|Library|Theat(?:er|re)|Stadium|Cathedral|Church|Castle|"
    r"Palace|Tower|Zoo|Market|Gallery|Arena|Airport|Station|Hotel|University|College|School)$")
_LOCATES = re.compile(r"\s*(?:,|\s(?:in|at)\s)\s*(?:the\s+)?")
_THE_BEFORE = re.compile(r"\bthe\s+$", re.IGNORECASE)
_THERE = re.compile(r"\b(?:(?:over|down|up|out)\s+)?there\b", re.IGNORECASE)
#: "is there", "what's there to do", "there are", "there'll be": a dummy subject
_EXISTENTIAL_BEFORE = re.compile(r"(?:\b(?:is|are|was|were|isn't|aren't|wasn't|weren't)|['’]s)\s+$",
                                 re.IGNORECASE)
_EXISTENTIAL_AFTER = re.compile(
    r"(?:['’](?:s|re|ll|d)\b|\s+(?:is|are|was|were|isn't|aren't|wasn't|weren't|be|been|will|"
    r"would|could|should|must|might|may|can|seem|seems|seemed|appear|appears|exist|exists|"
    r"existed|has|have|had|used|a|an|any|some|no|you\s+go|to\s+[a-z]+)\b)", re.IGNORECASE)
_GREETING = re.compile(r"\b(?:hi|hello|hey)\s*,?\s*$", re.IGNORECASE)
_POSSESSIVE = re.compile(r"\b(?P<word>mine|ours)\b", re.IGNORECASE)
_OWNER = {"mine": "my", "ours": "our"}
_WORD = re.compile(r"[A-Za-z][A-Za-z'’\-]*|\d[\w.\-]*")


@dataclass(frozen=True)
class Substitution:
    """A pro-form replaced by its antecedent: the new text and the phrase written in."""

    text: str
    phrase: str
    rule: str


def _recent_turns(state: ConversationState, turns: Sequence[int], now: int) -> list[int]:
    """In-scope turns before ``now``, by exchange newest first, the user's before the
    answer's within an exchange (bounded)."""
    recent = sorted((t for t in turns if t < now), reverse=True)[:LOOKBACK_TURNS]
    exchanges: dict[int, list[int]] = {}
    for t in recent:
        turn = state.turns[t - 1] if 0 < t <= len(state.turns) else None
        if turn is None:
            continue
        # an answer belongs to the question before it
        key = t - 1 if turn.role is Role.ASSISTANT else t
        exchanges.setdefault(key, []).append(t)
    return [t for key in sorted(exchanges, reverse=True)
            for t in sorted(exchanges[key], key=lambda t: state.turns[t - 1].role is Role.ASSISTANT)]


def _places(text: str) -> list[tuple[int, str, str]]:
    """Places a text names, with where each starts and the preposition one is there with:
    names after a locative preposition or a verb of travel, and names headed by a place
    noun ("at" a building, else "in", or "at" when the text said so)."""
    found: list[tuple[int, str, str]] = []
    for m in _PLACE_AFTER.finditer(text):
        place = m.group("place")
        first = place.split()[0].lower()
        if first in _NOT_PLACES or first in DEMONYMS or first in FUNCTION_WORDS:
            continue
        name = (m.group("the") or "") + place
        prep = "at" if (m.group("prep") or "").lower() == "at" or _BUILDING.search(place) else "in"
        found.append((m.start("place"), name, prep))
    for m in _PLACE_NAME.finditer(text):
        name = m.group(0)
        start = m.start()
        article = _THE_BEFORE.search(text, 0, start) is not None
        if name.split()[0] == "The":
            name, start, article = name.split(maxsplit=1)[1], start + 4, True
        if name.split()[0].lower() in FUNCTION_WORDS:
            continue
        if not any(s <= start < s + len(p) for s, p, _ in found):
            # the name keeps the article it was written with ("the Van Gogh Museum",
            # but "Rock City")
            found.append((start, f"the {name}" if article else name,
                          "at" if _BUILDING.search(name) else "in"))
    found.sort()
    # "the Van Gogh Museum in Amsterdam": the second name locates the first, it is not a
    # second place
    return [p for k, p in enumerate(found)
            if not (k and _LOCATES.fullmatch(text, found[k - 1][0] + len(found[k - 1][1])
                                             - (4 if found[k - 1][1].startswith("the ") else 0),
                                             p[0]))]


def locative_there(text: str, state: ConversationState, turns: Sequence[int],
                   now: int) -> Substitution | None:
    """A locative "there" replaced by the place the conversation named, if any.

    >>> from turnscope.conversation import ConversationState, Role, Turn
    >>> state = ConversationState()
    >>> state.turns.append(Turn(1, Role.USER, "I'm visiting Kyoto next month."))
    >>> locative_there("What's the weather like there in spring?", state, (1,), 2).text
    "What's the weather like in Kyoto in spring?"
    """
    if _places(text):
        return None  # "I fly to Oslo — is it cold there?": bound in the message itself
    for m in _THERE.finditer(text):
        before = text[: m.start()]
        if _EXISTENTIAL_BEFORE.search(before) or _EXISTENTIAL_AFTER.match(text, m.end()) \
                or _GREETING.search(before):
            continue
        # the nearest turn that names a place; if it names two, structure cannot say which
        # one "there" is ("… in Dublin are sent to Frankfurt instead")
        places = next((ps for t in _recent_turns(state, turns, now)
                       if (ps := _places(state.turns[t - 1].content))), [])
        if len({p.removeprefix("the ").casefold() for _, p, _ in places}) != 1:
            return None
        _, place, prep = places[0]
        words = before.split()
        prev = words[-1].lower().strip(",") if words else ""
        if prev in _MOTION:
            phrase = f"to {place}"
        elif prev in ("from", "to", "in", "at", "near", "around", "of"):
            phrase = place  # the preposition is already written
        else:
            phrase = f"{prep} {place}"
        if m.group(0)[:1].isupper():
            phrase = phrase[:1].upper() + phrase[1:]
        return Substitution(text[: m.start()] + phrase + text[m.end():], place, f"there->{place}")
    return None


def _possessed(text: str, owner: str) -> str | None:
    """The noun phrase after the first "my"/"our" of a text: words up to a verb, a function
    word or punctuation ("My dishwasher leaves spots" -> "dishwasher")."""
    for m in re.finditer(rf"\b{owner}\s+", text, re.IGNORECASE):
        words: list[str] = []
        last = m.end()
        for w in _WORD.finditer(text, m.end()):
            if text[last:w.start()].strip():
                break  # punctuation between two words ends the phrase
            tok = w.group(0)
            base = re.sub(r"['’]s$", "", tok)
            low = base.lower()
            if low in FUNCTION_WORDS or (words and _verb_form(low)) or len(words) == 4:
                break
            words.append(base)
            last = w.end()
            if base != tok:
                break  # "my phone's screen": the possessor is the thing
        if words:
            return " ".join(words)
    return None


def _pronoun_position(before: str) -> bool:
    """Whether "mine" after ``before`` stands where a noun phrase would: not after "of"
    ("a cousin of mine" points at no one named), and not in a noun phrase a determiner
    opened ("the old copper mine"): walking back over its would-be modifiers, a verb or
    a function word comes before any determiner."""
    words = [w.lower() for w in _WORD.findall(before)]
    if words and words[-1] == "of":
        return False
    for w in reversed(words):
        if w in DETERMINERS:
            return False
        if w in VERBS or w in FUNCTION_WORDS:
            return True
    return True


def _noun_follows(after: str) -> bool:
    """"mine shaft": a content word right after "mine" that is no verb form is the noun it
    modifies."""
    m = re.match(r" ([a-z]+)\b", after)
    if m is None:
        return False
    low = m.group(1)
    return low not in FUNCTION_WORDS and low not in AUXILIARIES and low not in ADVERBS \
        and not _verb_form(low) and not low.endswith(("ed", "ly", "ing"))


def _verb_form(word: str) -> bool:
    """A verb the lexicon knows, bare or with its third-person "-s" ("drops", "leaks")."""
    return any(w in VERBS or w in AMBIGUOUS_VERBS
               for w in (word, word.removesuffix("s"), word.removesuffix("es")))


def possessive_pronoun(text: str, state: ConversationState, turns: Sequence[int],
                       now: int) -> Substitution | None:
    """A possessive "mine"/"ours" replaced by what the user called "my …"/"our …".

    "Mine" is a pronoun only where a noun phrase would stand: not after "of" ("a cousin
    of mine" points at no one named), not inside a noun phrase that a determiner opened
    ("the old copper mine"), and not before a noun ("mine shaft").

    >>> from turnscope.conversation import ConversationState, Role, Turn
    >>> state = ConversationState()
    >>> state.turns.append(Turn(1, Role.USER, "My laptop won't charge."))
    >>> possessive_pronoun("Does the warranty cover mine?", state, (1,), 2).text
    'Does the warranty cover my laptop?'
    """
    for m in _POSSESSIVE.finditer(text):
        if not _pronoun_position(text[: m.start()]) or _noun_follows(text[m.end():]):
            continue
        owner = _OWNER[m.group("word").lower()]
        thing = next((p for t in _recent_turns(state, turns, now)
                      if state.turns[t - 1].role is Role.USER
                      for p in [_possessed(state.turns[t - 1].content, owner)] if p), None)
        if thing is None:
            return None
        phrase = f"{owner} {thing}"
        if m.group("word")[:1].isupper():
            phrase = phrase[:1].upper() + phrase[1:]
        return Substitution(text[: m.start()] + phrase + text[m.end():], f"{owner} {thing}",
                            f"possessive->{owner} {thing}")
    return None


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
    fixes (see :func:`possessive_pronoun`, :func:`locative_there`); when they were all the
    message referred to, the reference is resolved."""

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
        # a pronoun resolved, a pair picked from, or a phrase carried in for a pronoun of
        # the message: the message goes on with the subject
        msg = turn.request.message
        continues = label != "learned-resolver" or (
            bool(more) and english_pronoun(msg.text, msg.mentions) is not None)
        return Rewrite(text, (label,), carried=more, trace=tuple(trace.items()),
                       learned=True, final=True, continues=continues)


#: how many earlier questions of the thread a fragment may be parallel to (a
#: fragment continues the last few questions, not the whole conversation)
_MAX_BACK = 3
#: the shift probability from which a fragment of no closed kind is a new subject
_NEW_SUBJECT = 0.5


def thread_questions(state: ConversationState, now: int, max_back: int = _MAX_BACK) -> list[ResolvedTurn]:
    """The user turns before ``now`` as resolved, newest first, back to (and including) the
    one that started the current topic: a fragment is not parallel to a question the user
    has since changed the subject from."""
    out: list[ResolvedTurn] = []
    for t in sorted((t for t in state.resolved if t < now), reverse=True):
        rec = state.resolved[t]
        out.append(rec)
        if rec.topic_shift or len(out) >= max_back:
            break
    return out


class FragmentEllipsis:
    """An English fragment in open-domain talk is the thread's earlier question with the
    fragment's part swapped in (or the question completed with it); what it kept of that
    question is ``carried``. Abstains (the message goes on unchanged) when the fragment
    reading is not unique."""

    name = "fragment-ellipsis"
    route: Route | None = None

    def __init__(self, bridge: ResolverBridge) -> None:
        self.bridge = bridge

    def apply(self, turn: TurnContext) -> Rewrite | None:
        if turn.resolved or turn.cls_used is not turn.c.reference_class \
                or not self.bridge._open_domain(turn.request):
            return None
        frag = parse_fragment(turn.text)
        if frag is None:
            return None
        if frag.kind == "other" and self._new_subject(turn):
            # "what about the weather tomorrow?" is as often a new subject as an ellipsis:
            # a phrase of no closed kind is read as one only where the one topic-shift
            # detector says the subject goes on
            # the doubt withholds the rewrite, not the reading: a fragment ("and the other
            # one?") is elliptical in form, and the output does not call it a new subject
            # (on the corpus's dev and train parts all four such turns went on)
            return Rewrite(turn.text, ("fragment-ellipsis:new-subject",), continues=True)
        records = thread_questions(turn.state, turn.message.index)
        if not records:
            return None
        # substitute_in_thread reads the thread oldest first
        questions = [r.query for r in reversed(records)]
        query = substitute_in_thread(questions, frag, max_back=_MAX_BACK)
        if query is None:
            return None
        source = next((r for r in records if _kept_from(r.query, query, frag)), records[0])
        mentions = turn.mentions_of(query)
        carried = _carried(query, turn.text, frag, tuple(m.name for m in mentions))
        focus = next((m for m in mentions if frag.phrase.casefold() in m.name.casefold()), source.focus)
        return Rewrite(query, (f"fragment-ellipsis:{frag.kind}@turn{source.turn}",), focus,
                       final=True, reread=mentions, carried=carried, continues=True)


    def _new_subject(self, turn: TurnContext) -> bool:
        resolver = self.bridge.resolver
        if resolver is None:
            return True  # no detector to ask: not rewritten
        p = session_shift(turn.state, turn.message.index, turn.message.text, resolver)
        # more likely a new subject than not (the detector's own threshold is set low, for
        # the output's topic_shift; a fragment reads the previous question when in doubt)
        return p >= max(shift_threshold(), _NEW_SUBJECT)


def _kept_from(question: str, query: str, frag: Fragment) -> bool:
    """Whether ``query`` was written from ``question`` (it keeps the question's words but
    the swapped part)."""
    words = {w.casefold().strip("?.!,") for w in question.split()}
    new = {w.casefold().strip("?.!,") for w in query.split()} - {
        w.casefold() for w in frag.phrase.split()}
    return bool(new) and new <= words


def _carried(query: str, message: str, frag: Fragment, names: tuple[str, ...]) -> tuple[str, ...]:
    """What the query holds from the earlier question, in query order: its named phrases
    that neither the message nor the fragment wrote."""
    said = message.casefold()
    out: list[str] = []
    for name in sorted(names, key=lambda n: query.casefold().find(n.casefold())):
        low = name.casefold()
        if low in said or low in frag.phrase.casefold() or frag.phrase.casefold() in low or name in out:
            continue
        out.append(name)
    return tuple(out)


# The query's form ---------------------------------------------------------------------
# How a question is put, apart from what it refers to: the openers it is stripped of, the
# screen it points at, and the context it is framed by.
#
# * **Openers** — a change-of-subject cue ("unrelated to all that —") and a preamble ("ok
#   so", "quick question:") go, and what is left is written as a sentence; the preamble an
#   English message opened with goes from what the rules wrote, a back-reference's topic
#   kept.
# * **Screen deixis** — "this page" / 「このページ」 read the screen, "this site" the site.
# * **Frame** — the place a conversation is set in, and (unguarded scopes only) the
#   qualifiers a condense step would carry.

_PREAMBLE = re.compile(
    r"^\s*(?:(?:ok(?:ay)?|hmm+|so|alright|right|anyway|also|btw|by\s+the\s+way|oh|um+|"
    r"(?:a\s+)?(?:totally\s+)?(?:different|unrelated|separate|another|new|other)\s+"
    r"(?:question|topic|thing|subject|q)|unrelated(?:\s+but)?|changing\s+(?:the\s+)?"
    r"(?:topic|subject)|switching\s+gears|on\s+another\s+note|moving\s+on|quick\s+question|"
    r"ところで|話は変わりますが|話が変わりますが|別の質問(?:です)?(?:が|けど)|別件(?:です)?(?:が|けど)?|"
    r"それとは別に)(?![A-Za-z0-9'’])[\s,，、:：—–\-.!…]*)+",
    re.IGNORECASE,
)
#: a conjunction left at the front once the opener it joined is dropped ("unrelated, but
#: what's …"): it joined the opener to the question, and the question does not need it
_DANGLING = re.compile(r"^(?:(?:but|and|so|or|then)(?:\s*,\s*|\s+))+", re.IGNORECASE)


def _after_pivot(text: str) -> str:
    """The question after a change-of-subject cue ("unrelated to all that — how …?")."""
    cut = after_pivot(text)
    if cut is not None and len(cut[1].strip()) > 3:
        return cut[1].strip()
    return text


def _as_sentence(rest: str, lang: str) -> str:
    """The question left after a dropped opener, written as a sentence: a conjunction that
    joined the opener to it goes too, and its first word takes a capital unless the word
    is a name spelt with a small first letter ("iOS", "eBay").

    >>> _as_sentence("but what's the capital of Peru?", "en")
    "What's the capital of Peru?"
    >>> _as_sentence("eBay fees for sellers?", "en")
    'eBay fees for sellers?'
    """
    if lang != "en":
        return rest
    out = _DANGLING.sub("", rest).strip() or rest
    first = out.split(maxsplit=1)[0]
    if any(ch.isupper() for ch in first[1:]):
        return out  # "iOS", "eBay", "macOS": the small letter is the name's own
    return out[0].upper() + out[1:]


class AfterPivot:
    """An explicit change of subject: the question after it starts the query."""

    name = "after-pivot"
    route: Route | None = None

    def apply(self, turn: TurnContext) -> Rewrite | None:
        if not turn.c.pivot:
            return None
        cut = _after_pivot(turn.text)
        if cut == turn.text:
            return None
        return Rewrite(_as_sentence(cut, turn.lang), ("after-pivot",))


class StripPreamble:
    """A preamble ("ok so", "quick question:") goes from a pivot or a standalone question."""

    name = "strip-preamble"
    route: Route | None = None

    def apply(self, turn: TurnContext) -> Rewrite | None:
        if not (turn.c.pivot or turn.c.reference_class is ReferenceClass.STANDALONE):
            return None
        stripped = _PREAMBLE.sub("", turn.text).strip()
        if not stripped or stripped == turn.text:
            return None
        return Rewrite(_as_sentence(stripped, turn.lang), ("strip-preamble",))


def _names_topic(query: str, topic: str) -> bool:
    """Whether ``query`` still names the back-reference's topic: its head noun (the last
    word of "the training plan") is a word of the query."""
    words = topic.split()
    head = words[-1].casefold() if words else ""
    return bool(head) and re.search(rf"(?<![\w'’-]){re.escape(head)}(?![\w'’-])", query, re.IGNORECASE) is not None


class CleanQuery:
    """What the rules wrote, without the conversational preamble an English message opened
    with ("thanks!", "ok, another thing:", "going back to the UK,"): none of that is a search
    word. A back-reference's topic stays in the query: where the query already names it,
    the preamble simply goes; else, where the rules left the message as typed, the topic
    takes the place of its one "it" or, for a place, is attached ("… in the UK?")
    (:func:`attach_topic`); else the query is left as the rules wrote it (dropping the
    topic would lose the subject, and overriding what the rules wrote needs more evidence
    than the user's words)."""

    name = "clean-query"
    route: Route | None = None

    def apply(self, turn: TurnContext) -> Rewrite | None:
        if turn.lang != "en":
            return None
        typed = turn.request.message.text.strip()
        typed_clean, topic = split_preamble(typed)
        if typed_clean == typed:
            return None  # the user opened with no preamble: nothing to clean
        clean, written_topic = split_preamble(turn.text)
        if clean == turn.text:
            return None  # an earlier rule already dropped it
        topic = topic or written_topic
        if topic is None:
            return Rewrite(clean, ("clean-query",))
        if _names_topic(clean, topic):
            return Rewrite(clean, ("clean-query",))
        if turn.text.strip() != typed or topic.split()[-1].casefold() in _NOT_A_TOPIC:
            # the rules wrote something in that is not the named topic (the thread "the
            # other thing" names was read by the recall rule), or the back-reference names
            # no subject: the query stays as they wrote it
            return None
        attached = attach_topic(typed_clean, topic)
        if attached is not None and not turn.carried:
            # the topic the user named stands where the message had "it" (or closes a
            # place): "back to the curry, can I freeze it?" -> "Can I freeze the curry?"
            return Rewrite(attached, ("clean-query:topic",))
        return None


#: heads of back-references that point at a thread or a turn, not at a subject
_NOT_A_TOPIC = frozenset("thing things topic topics question questions one ones stuff part bit point "
                         "earlier before that this it".split())


_EN_PAGE = re.compile(r"\b(?:this|current)\s+(?:page|article|doc|screen|section)\b(?![\w-])|"
                      r"\bthe\s+(?:page|article)(?=\s+(?:i'?m|i\s+am|you'?re)\b)", re.IGNORECASE)
_JA_PAGE = re.compile(r"(?:この|今の|今見ている|表示中の|こちらの)(?:ページ|画面|記事)")
_EN_PROXIMAL = re.compile(r"\b(?:this|these)\b(?!\s+(?:page|site|article)\b)", re.IGNORECASE)
_JA_PROXIMAL_NP = re.compile(r"この(?=[\u30a0-\u30ffー\u4e00-\u9fffA-Za-z])")
_JA_PROXIMAL = re.compile(r"これ|ここ|こちら")


# what a page's title says besides its subject: the site after a bar (a dash as often
# joins the subject's own parts: 「マニュアル — 画面連動」), a closing
# 「商品ページ」 or 「ページ」
_TITLE_SITE = re.compile(r"\s*[|｜].*$")
_TITLE_PAGE = re.compile(r"\s*(?:の)?(?:商品|製品)?(?:ページ|詳細)$")
_JA_PAGE_THING = re.compile(_JA_PAGE.pattern + r"(?:の|で紹介している|に載っている)(?:商品|製品)")


def page_subject(title: str) -> str:
    """The subject a page's title names, without the site or a closing 「商品ページ」.

    >>> page_subject("ワイヤレスイヤホン AirSound Pro 3 商品ページ")
    'ワイヤレスイヤホン AirSound Pro 3'
    >>> page_subject("配送・送料について | ソラネオ公式ストア")
    '配送・送料について'
    """
    subject = _TITLE_PAGE.sub("", _TITLE_SITE.sub("", title)).strip()
    return subject or title


def situational(text: str, lang: str, scope: Scope, cls: ReferenceClass) -> str | None:
    screen = scope.screen
    if screen is None or screen.is_empty():
        return None
    if cls is ReferenceClass.SITE:
        site = screen.site or screen.page_url or ""
        if not site:
            return None
        pat = SITE_JA if lang == "ja" else SITE_EN
        site_rep = f"{site}のサイト" if lang == "ja" else f"the {site} site"
        # replacements are functions: a backslash in user text is literal, not a template
        return pat.sub(lambda _m: site_rep, text, count=1)
    title = screen.page_title or screen.page_url or ""
    if not title:
        return None
    if lang == "ja":
        # 「このページの商品の値段は？」: the page is about its subject, which the query names
        # as the subject (「…」のページ would make the page, not the product, the focus)
        subject = page_subject(title)
        out, n = _JA_PAGE_THING.subn(lambda _m: subject, text, count=1)
        if not n:
            out, n = _JA_PAGE.subn(lambda _m: f"「{subject}」", text, count=1)
        if n:
            return out
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


class ScreenDeixis:
    """"this page" / 「このページ」 read the screen, "this site" the site; with nothing on
    the screen to read, the message is answered as an immediate reference."""

    name = "screen"
    route: Route | None = None

    def apply(self, turn: TurnContext) -> Rewrite | None:
        cls = turn.c.reference_class
        if cls not in (ReferenceClass.PAGE, ReferenceClass.SITE):
            return None
        new = situational(turn.text, turn.lang, turn.scope, cls)
        if new is None:
            return Rewrite(turn.text, ("screen-missing",), screen_missing=True)
        return Rewrite(new, (f"screen:{cls.value}",))


#: a general proper name after a locative preposition: the place a question is set in
#: (not a time: "in June", "at Christmas")
_PLACE_IN = re.compile(r"\b(?:in|around|near|visit|visiting|at)\s+(?:downtown\s+|mt\.?\s+|mount\s+)?"
                       rf"(?!(?:{'|'.join(sorted(_TIME_NAMES))})\b)"
                       r"(?P<place>[A-Z][\w.\-]*[A-Za-z](?:\s+[A-Z][\w.\-]*[A-Za-z]){0,3})")
#: things a question asks about that are somewhere: what a place frame applies to
_LOCATABLE = re.compile(
    r"\b(?:museums?|parks?|trails?|festivals?|restaurants?|bars?|clubs?|hotels?|beach(?:es)?|"
    r"tours?|attractions?|events?|nightlife|shops?|shopping|markets?|neighbou?rhoods?|downtown|"
    r"distiller(?:y|ies)|brewer(?:y|ies)|galler(?:y|ies)|theat(?:er|re)s?|schools?|classes|"
    r"things\s+to\s+do|to\s+do|the\s+city|sights?|landmarks?|collections?|concerts?)\b",
    re.IGNORECASE)
#: a question about someone, not a place: one that points back ("did he perform at
#: Woodstock?") or names its subject after the auxiliary ("what did Jacobs do in NYC?")
_REFERS_BACK = re.compile(rf"\b(?:{'|'.join(sorted(ANAPHORIC_PRONOUNS))})\b", re.IGNORECASE)
_NAMED_SUBJECT = re.compile(r"\b(?i:did|does|do|was|is|were|are|has|had|will|would|can|could)\s+"
                            r"(?:[A-Z][\w.\-]*\s+){1,3}[a-z]")
#: a settlement's own name ("Salt Lake City", "Jefferson County") replaces the frame
_SETTLEMENT = re.compile(r"\b(?:[A-Z][\w\-]*\s+){1,3}(?:City|Town|County|Village|Borough)\b")


def locative_frame(extractor: EntityExtractor, text: str, original: str, pivot: bool, state: ConversationState,
                    rules: list[str]) -> str:
    """The place a conversation is set in ("what is there to do in Chattanooga?") frames
    later questions about places and things to do that name no place of their own
    ("are there any film festivals?", "what is Rock City?" -> in Chattanooga). A new
    place replaces it, a change of subject clears it. General names only: a domain
    vocabulary's places are typed slots and are carried as such."""
    memo = state.rules
    own = _PLACE_IN.search(original) or _PLACE_IN.search(text)
    place: str | None = None if pivot else memo.place
    out = text
    if place is not None and own is None and place.casefold() not in text.casefold() \
            and (_LOCATABLE.search(text) or _PLACE_NAME.search(text)):
        core = _SENT_END.sub("", text)
        end = text[len(core):].strip() or "?"
        out = f"{core} in {place}{end}"
        rules.append(f"place->{place}")
    settlement = _SETTLEMENT.search(original)
    if own is not None and not extractor.vocabulary.find(own.group("place")) \
            and not _REFERS_BACK.search(original) and not _NAMED_SUBJECT.search(original):
        # a place sets the frame when the question is about the place ("interesting
        # things around Ann Arbor"); a question about someone, already given or named as
        # its subject, only locates what they did ("did he perform at Woodstock?",
        # "what did Jacobs do in NYC?")
        memo.place = own.group("place")
    elif settlement is not None and place is not None:
        memo.place = settlement.group(0)  # "how does Salt Lake City differ?"
    elif pivot:
        memo.place = None
    return out

def carry(extractor: EntityExtractor, text: str, lang: str, scope: Scope, state: ConversationState,
           rules: list[str]) -> str:
    if not scope.turns:
        return text
    present_ms = extractor.extract(text, lang)
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


class Carry:
    """Unguarded scopes (``full``, ``window``, ``segment``) carry the most salient entity of
    each type absent from the message, as a "condense the question" step does (not after a
    change of subject, the learned resolver or a pro-form)."""

    name = "carry"
    route: Route | None = None

    def apply(self, turn: TurnContext) -> Rewrite | None:
        if turn.scope.guarded or turn.c.pivot or turn.learned or turn.deixis:
            return None
        labels: list[str] = []
        text = carry(turn.extractor, turn.text, turn.lang, turn.scope, turn.state, labels)
        return Rewrite(text, tuple(labels))


class LocativeFrame:
    """English: the place the conversation is set in frames a question about things that
    are somewhere (see :func:`locative_frame`)."""

    name = "place"
    route: Route | None = None

    def apply(self, turn: TurnContext) -> Rewrite | None:
        if turn.lang != "en":
            return None
        labels: list[str] = []
        text = locative_frame(turn.extractor, turn.text, turn.message.text, turn.c.pivot,
                              turn.state, labels)
        return Rewrite(text, tuple(labels))
