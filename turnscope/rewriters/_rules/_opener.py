"""Openers a question is stripped of: a change-of-subject cue ("unrelated to all that —")
and a preamble ("ok so", "quick question:"). What is left is written as a sentence.
"""

from __future__ import annotations

import re

from turnscope.references import ReferenceClass, after_pivot
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
