"""Two pro-forms whose antecedent structure alone fixes, with no model and no vocabulary.

* A **locative "there"** stands for a place the conversation named: a proper name after a
  locative preposition or a verb of travel ("visiting Kyoto", "driving to Yellowstone"),
  or a name headed by a place noun ("the Van Gogh Museum"). The existential "there"
  ("is there", "there are", "what's there to do") is a dummy subject and names nothing.
* A **possessive "mine" / "ours"** stands for the thing the user called "my …" / "our …"
  ("My dishwasher leaves spots … how often should I descale mine?" -> "my dishwasher").

Both read only the turns the scope allows, newest exchange first, and within an exchange
the user's own words before the answer's (the user set the frame; an answer names many
places in passing).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from turnscope._lexicon import (
    ADVERBS,
    AMBIGUOUS_VERBS,
    AUXILIARIES,
    DEMONYMS,
    DETERMINERS,
    FUNCTION_WORDS,
    VERBS,
)
from turnscope.conversation import ConversationState, Role
from turnscope.rewriters._rules._text import _PLACE_NAME, _TIME_NAMES

__all__ = ["Substitution", "locative_there", "possessive_pronoun"]

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
