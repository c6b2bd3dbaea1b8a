"""Context a question is framed by: the place a conversation is set in, and (unguarded
scopes only) the qualifiers a condense step would carry.
"""

from __future__ import annotations

import re

from turnscope._lexicon import ANAPHORIC_PRONOUNS
from turnscope.conversation import ConversationState
from turnscope.entities import EntityExtractor
from turnscope.rewriters._rules._base import Rewrite, Route, TurnContext
from turnscope.rewriters._rules._text import _PLACE_NAME, _SENT_END, _TIME_NAMES, _join
from turnscope.scope import Scope

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
