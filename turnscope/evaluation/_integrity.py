"""Whether a rewrite keeps the user's own words: the words it invents.

A rewrite may replace a reference span ("he", "the second one") with words of the
conversation, drop a discourse opener whole, and add the few words a query needs to join
them ("of", "about"). Any other word it holds that is in neither the message nor the
conversation before it (nor the screen) was invented, usually by damaging a user word:
"Sorry, ..." cut to "Rry, ...", "the second-largest" to "<item>-largest".
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

__all__ = ["GLUE_WORDS", "invented_words"]

#: words a query may add that no one typed: they join a carried phrase to the message
GLUE_WORDS = frozenset(
    "a an the of about for in on at to and or with from by is are was were do does did "
    "what which who how when where s".split()
)
_WORD = re.compile(r"[^\W_]+", re.UNICODE)


def _words(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(unicodedata.normalize("NFKC", text))]


def invented_words(message: str, query: str, context: Iterable[str] = ()) -> list[str]:
    """The words of ``query`` found neither in ``message``, nor in ``context`` (the earlier
    turns and the screen), nor among the glue words, in the order they appear.

    Latin words are compared whole; a word written in CJK script is accepted when it is a
    substring of the message or the context (Japanese has no spaces to cut at).

    >>> invented_words("Sorry, is it open on Sundays?", "Rry, is the museum open on Sundays?",
    ...                ["The Louvre museum opens at 9."])
    ['rry']
    >>> invented_words("how old is he?", "How old is Bong Joon-ho?", ["directed by Bong Joon-ho"])
    []
    """
    known = set(_words(message))
    texts = [unicodedata.normalize("NFKC", message).lower()]
    for text in context:
        known.update(_words(text))
        texts.append(unicodedata.normalize("NFKC", text).lower())
    out = []
    for w in _words(query):
        if w in known or w in GLUE_WORDS:
            continue
        if not w.isascii():
            out.extend(_unmatched_pieces(w, texts))
            continue
        out.append(w)
    return out


def _unmatched_pieces(run: str, texts: list[str]) -> list[str]:
    """A run of non-Latin script, cut greedily into the longest pieces found in ``texts``;
    the characters found nowhere are returned (Japanese is not written with spaces)."""
    out: list[str] = []
    i = 0
    while i < len(run):
        j = len(run)
        while j > i and not any(run[i:j] in t for t in texts):
            j -= 1
        if j == i:
            out.append(run[i])
            i += 1
        else:
            i = j
    return out
