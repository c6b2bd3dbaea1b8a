"""Openers a question is stripped of: a change-of-subject cue ("unrelated to all that —")
and a preamble ("ok so", "quick question:"). What is left is written as a sentence.
"""

from __future__ import annotations

import re

from turnscope.references import ReferenceClass, after_pivot, attach_topic, split_preamble
from turnscope.rewriters._rules._base import Rewrite, Route, TurnContext

_PREAMBLE = re.compile(
    r"^\s*(?:(?:ok(?:ay)?|hmm+|so|alright|right|anyway|also|btw|by\s+the\s+way|oh|um+|"
    r"(?:a\s+)?(?:totally\s+)?(?:different|unrelated|separate|another|new|other)\s+"
    r"(?:question|topic|thing|subject|q)|unrelated(?:\s+but)?|changing\s+(?:the\s+)?"
    r"(?:topic|subject)|switching\s+gears|on\s+another\s+note|moving\s+on|quick\s+question|"
    r"ところで|話は変わりますが|話が変わりますが|別の質問(?:です)?(?:が|けど)|別件(?:です)?(?:が|けど)?|"
    r"それとは別に)[\s,，、:：—–\-.!…]*)+",
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
