"""Text as it enters a session: the same word always looks the same to the matchers.

Users paste text from anywhere: half-width katakana from old forms (ｸﾗｳﾄﾞ), full-width
Latin letters (ＡＰＩ), zero-width spaces and byte-order marks from web pages and editors,
stray control characters from terminals. Every extractor and pattern in turnscope is
written for the ordinary forms, so the session normalises each turn once, on entry,
and everything after it (extraction, ordinals, classification, the query itself) reads
the normalised text:

- **width**: full-width ASCII letters and digits become ASCII, half-width katakana
  (with its sound marks) becomes full-width katakana (NFKC on those ranges only).
  Full-width punctuation such as ``？`` and ``（`` is left alone: it is the normal form in
  Japanese text and the queries keep it;
- **composition**: NFC, so a decomposed ``か`` + ``゛`` is the same ``が`` as a typed one;
- **invisible characters**: zero-width spaces/joiners, word joiners, byte-order marks,
  soft hyphens and bidirectional controls are removed (they sit inside words: "Dub\u200blin");
- **control characters**: terminal escape sequences and C0/C1 controls other than line
  breaks and tabs are removed;
  in a user message (one line of query text) line breaks and tabs become spaces.

Every step maps characters one by one or by a single regex pass, so it is linear in the
length of the text.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["normalize_message", "has_visible_text"]

# full-width 0-9 A-Z a-z, and the half-width katakana block (with its punctuation and
# sound marks, which NFKC composes with the kana before them)
_WIDTH = re.compile(r"[\uff10-\uff19\uff21-\uff3a\uff41-\uff5a\uff61-\uff9f]+")
# zero-width space/non-joiner/joiner, LRM/RLM, bidi embeddings and isolates, word joiner
# and invisible operators, BOM / zero-width no-break space, soft hyphen, Mongolian vowel
# separator
_INVISIBLE = re.compile(r"[\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff\u00ad\u180e]+")
# C0 and C1 controls except tab, line feed and carriage return (kept for assistant text:
# lists are split on line breaks); DEL too
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x84\x86-\x9f]+")
# line and paragraph breaks of every kind, and tabs: in a user message they separate words
_BREAK = re.compile(r"[\t\n\r\x0b\x0c\x85\u2028\u2029]+")
# a terminal escape sequence (colours pasted from a terminal): CSI ... final byte, or ESC + one
_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b[@-Z\\-_]")
# a lone surrogate (from a JSON "\ud800" escape) is not a character and cannot be encoded
_SURROGATE = re.compile(r"[\ud800-\udfff]+")


def normalize_message(text: str, *, single_line: bool) -> str:
    """``text`` with width, composition, invisible and control characters normalised.

    ``single_line`` (user messages, screen fields) also turns line breaks and tabs into
    spaces, so the query built from the message stays one line.

    >>> normalize_message("ｸﾗｳﾄﾞの料金は？", single_line=True)
    'クラウドの料金は？'
    >>> normalize_message("Is Dub\\u200blin\\x07 up?\\n", single_line=True)
    'Is Dublin up? '
    """
    text = _WIDTH.sub(lambda m: unicodedata.normalize("NFKC", m.group()), text)
    text = _INVISIBLE.sub("", text)
    text = _SURROGATE.sub("", text)
    if single_line:
        text = _BREAK.sub(" ", text)
    else:
        # the breaks kept in assistant text are plain line feeds
        text = text.replace("\r\n", "\n").replace("\r", "\n")
        text = re.sub(r"[\x0b\x0c\x85\u2028\u2029]", "\n", text)
    text = _CONTROL.sub("", _ANSI.sub("", text))
    return unicodedata.normalize("NFC", text)


def has_visible_text(text: str) -> bool:
    """True when ``text`` (already normalised) holds something other than whitespace."""
    return bool(text.strip())
