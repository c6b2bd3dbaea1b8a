"""Ordinal reference: "the second one", "the last two", 「2つ目」 select from a list in scope.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from turnscope.conversation import ConversationState
from turnscope.entities import EntityExtractor, Enumeration, Mention
from turnscope.scope import Scope

# an ordinal that selects from a list ("the third one", "option 2"), not "at the very start"
_LIST_ORDINAL = re.compile(r"\b(?:first|second|third|fourth|fifth|last|\d(?:st|nd|rd|th))\s+"
                           r"(?:one|ones|two|three|option|item|region|tier|plan)\b|"
                           r"\b(?:option|item|point|step|#)\s*\d|[1-9１-９]つ目|番目", re.IGNORECASE)
_NUMBERED_REF = re.compile(r"(?:point|item|option|number|no\.?|#)\s*\d", re.IGNORECASE)
_OF_THE_N = re.compile(r"\bof\s+the\s+(two|three|four|five|both)\b", re.IGNORECASE)
_NUMBER_WORDS = {"two": 2, "both": 2, "three": 3, "four": 4, "five": 5}
# the message names the list it counts in: "you mentioned three periods ... the first one"
_COUNTED_KIND = re.compile(rf"\b({'|'.join(w for w in _NUMBER_WORDS if w != 'both')})\s+"
                           r"(?:(?:main|different|major|key)\s+)?([a-z]{3,}s)\b", re.IGNORECASE)


def enumeration(extractor: EntityExtractor, scope: Scope, noun: str | None, position: int,
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
        kinds = extractor.vocabulary.kinds_of
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

def walked(state: ConversationState, index: int,
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

def list_frame(extractor: EntityExtractor, enum: Enumeration, chosen: Sequence[Mention], state: ConversationState,
                now: int, text: str) -> list[Mention]:
    """The property a list from an earlier thread was selected by: the aspect entities
    (vocabulary, not subject types) of the question the list answered. Nothing when
    the list belongs to the latest exchange: there the thread itself carries it."""
    subj = extractor.vocabulary.subject_types
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
        own_attrs = [m for m in extractor.extract(text, "en") if m.is_attribute
                     and m.source == "vocab"]
        attrs = [] if own_attrs else [m for m in question.entities if m.is_attribute
                                      and m.source == "vocab"
                                      and m.name.casefold() not in low]
        return ([m for m in frame if m.type in subj] if keep_subjects else []) + attrs
    closed = any(r.topic_shift for t in range(enum.turn + 1, now)
                 if (r := state.resolved.get(t)) is not None)
    return frame if closed else []
