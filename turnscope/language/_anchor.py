"""The subject a follow-up is still about, read off the parser: the topic anchor.

A follow-up such as "how long did it take to build" or "any good self watering pots" often
needs the subject the user opened the current stretch of conversation with ("the Taj
Mahal", "herbs on my balcony") and holds no pronoun the decider could replace. The anchor
is the noun phrase of the segment's first user message whose head word comes back in a
later message of the segment (repetition is what makes it the subject, not a passing
word); it is appended to the query in parentheses, so every word the user typed stays as
typed and every added word comes from the conversation.

It is withheld where the message brings or picks its own subject: a name of its own, a
coordinating opener ("and Spain?", "what about the Red Fort"), a contrast or choice
("the other one", "the cheaper one"), a return to an earlier thread, a person pronoun
(the anchor is a topic, never the person meant), or when the opening message compares
several things (the anchor would be one of them). Measured in docs/decider.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from turnscope.language._parse import _NUMERIC, _PERSON, parse

__all__ = ["Anchor", "topic_anchor"]

#: closed-class words of contrast and choice ("the other one", "anything else")
_CONTRAST = {"other", "else", "another", "one", "ones"}
#: a return to an earlier thread ("going back to", "earlier you said", "before that")
_RETURN = {"back", "earlier", "before"}


@dataclass(frozen=True)
class Anchor:
    """The phrase carried and the query with it appended."""

    phrase: str
    query: str


def _withheld(doc: Any) -> str | None:
    """Why the message keeps its own subject (``None``: it may take the anchor)."""
    words = [t for t in doc if not t.is_punct]
    if not words:
        return "empty"
    if any(t.pos_ == "PROPN" for t in words) or any(e.label_ not in _NUMERIC for e in doc.ents):
        return "names its own subject"
    if words[0].pos_ == "CCONJ" or (len(words) > 1 and words[0].lower_ in ("what", "how")
                                     and words[1].lower_ == "about"):
        return "substitutes a subject"
    lowered = {t.lower_ for t in words}
    if lowered & _PERSON:
        return "points at a person"
    if lowered & _CONTRAST:
        return "contrasts or picks"
    if {t.lemma_.lower() for t in words} & _RETURN:
        return "returns to an earlier thread"
    return None


def _phrase(chunk: Any) -> list[Any]:
    """The chunk without determiners, possessives, numbers and superlatives, ending on its
    noun (empty when nothing nominal is left)."""
    toks = [t for t in chunk
            if t.pos_ not in ("DET", "PRON", "NUM", "PUNCT") and t.dep_ not in ("poss", "nummod")
            and t.ent_type_ not in _NUMERIC and t.tag_ not in ("PRP$", "WDT", "WP", "JJS", "JJR")]
    while toks and toks[0].pos_ not in ("NOUN", "PROPN", "ADJ"):
        toks = toks[1:]
    if not toks or toks[-1].pos_ not in ("NOUN", "PROPN"):
        return []
    return toks


def topic_anchor(message: str, query: str, segment: Sequence[tuple[str, str]], nlp: Any,
                 cue: bool = True) -> tuple[Anchor | None, str]:
    """The anchor for ``message`` (rewritten so far as ``query``) given ``segment``, the
    ``(role, text)`` messages since the last change of subject (oldest first, the segment's
    first user message first), and why there is none. ``cue``: the classifier found a reference cue;
    without one, the message takes the anchor only when every noun it holds was said in the
    segment (a noun of its own is a subject of its own).

    >>> from turnscope.language import load_parser
    >>> topic_anchor("how long did it take to build", "how long did it take to build",
    ...              [("user", "who built the Taj Mahal?"),
    ...               ("assistant", "Shah Jahan had the Taj Mahal built.")], load_parser())[0].query
    'how long did it take to build (Taj Mahal)'
    """
    if not segment:
        return None, "no segment"
    doc = parse(nlp, message)
    why = _withheld(doc)
    if why is None and query != message:
        # what the rules or the decider put in its place counts as the message's own subject
        why = _withheld(parse(nlp, query))
    if why is not None:
        return None, why
    opening = parse(nlp, segment[0][1])
    later_docs = [(role, parse(nlp, text)) for role, text in segment[1:]]
    later = [{t.lemma_.lower() for t in d} for _, d in later_docs]
    said = {t.lemma_.lower() for t in opening}.union(*later)
    if not cue and any(t.pos_ == "NOUN" and t.lemma_.lower() not in said for t in doc):
        return None, "a noun of its own"
    # the previous user message moved the subject: a noun none of the messages before it used
    # ("tell me about lung cancer" after "throat cancer"); the message's reference is then
    # to that, not to the opening
    users = [k for k, (role, _) in enumerate(later_docs) if role == "user"]
    if users:
        k = users[-1]
        before = {t.lemma_.lower() for t in opening}.union(*later[:k])
        if any(t.pos_ in ("NOUN", "PROPN") and t.lemma_.lower() not in before for t in later_docs[k][1]):
            return None, "the previous question moved the subject"
    best: tuple[int, str] | None = None
    for chunk in opening.noun_chunks:
        if chunk.root.dep_ == "conj" or any(c.dep_ == "conj" for c in chunk.root.children):
            return None, "the opening compares several things"
        toks = _phrase(chunk)
        if not toks:
            continue
        repeats = sum(toks[-1].lemma_.lower() in lemmas for lemmas in later)
        if repeats and (best is None or repeats > best[0]):
            best = (repeats, " ".join(t.text for t in toks))
    if best is None:
        return None, "no subject comes back"
    phrase = best[1]
    if phrase.lower() in query.lower():
        return None, "the query names it"
    return Anchor(phrase, f"{query} ({phrase})"), "carried"
