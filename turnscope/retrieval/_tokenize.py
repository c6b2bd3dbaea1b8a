"""Language-aware tokenisation for lexical retrieval, without a morphological analyser.

Text is NFKC-normalised first (full-width ``ＥＣ２`` becomes ``EC2``, half-width
katakana becomes full-width), then split into word-character runs. Inside a run,
CJK characters (kanji and kana) and everything else are handled separately:

- non-CJK words are lower-cased; optionally English stop words are dropped and a
  light plural stemmer is applied (the same rules as docs/benchmarks.md);
- CJK runs become overlapping character 2-grams, a run of one character becomes
  that character. Bigrams are the standard dictionary-free way to index Japanese
  and Chinese (Lucene's ``CJKBigramFilter`` does the same) and need no segmenter.

>>> tokenize("EC2の料金")
['ec2', 'の料', '料金']

Scripts written without spaces other than Chinese and Japanese (Thai, Lao, ...) are
not segmented; a whole run becomes one token.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Protocol

from turnscope._lexicon import stem

__all__ = [
    "DEFAULT_STOPWORDS",
    "TOKENIZER_VERSION",
    "TextTokenizer",
    "Tokenizer",
    "is_cjk",
    "tokenize",
]

# Bump whenever the output of TextTokenizer changes for some input: the version is
# part of the tokeniser's name, and the name keys the on-disk BM25 index cache.
TOKENIZER_VERSION = 1

#: A deliberately small English stop-word list (function words only). Content words
#: that happen to be frequent in documentation ("api", "region") are kept: BM25's
#: idf already discounts them, and dropping them would hurt short queries.
DEFAULT_STOPWORDS: frozenset[str] = frozenset(
    """
    a about above after again against all am an and any are as at be because been
    before being below between both but by can could did do does doing down during
    each few for from further had has have having he her here hers herself him
    himself his how i if in into is it its itself just me more most my myself no nor
    not now of off on once only or other our ours ourselves out over own same she
    should so some such than that the their theirs them themselves then there these
    they this those through to too under until up very was we were what when where
    which while who whom why will with would you your yours yourself yourselves
    s t d ll m re ve
    """.split()
)

# Word-character runs; "_" separates so that ``page_size`` matches "page size".
_RUN = re.compile(r"[^\W_]+")


def is_cjk(ch: str) -> bool:
    """True for a kanji (CJK ideograph) or kana character, including ``ー`` and ``々``."""
    cp = ord(ch)
    if cp == 0x30FB:  # katakana middle dot "・" is punctuation
        return False
    return (
        0x3040 <= cp <= 0x30FF  # hiragana, katakana (incl. prolonged sound mark)
        or 0x31F0 <= cp <= 0x31FF  # katakana phonetic extensions
        or 0x3400 <= cp <= 0x4DBF  # CJK extension A
        or 0x4E00 <= cp <= 0x9FFF  # CJK unified ideographs
        or 0xF900 <= cp <= 0xFAFF  # CJK compatibility ideographs
        or 0x20000 <= cp <= 0x3FFFF  # CJK extensions B and later
        or cp in (0x3005, 0x3006, 0x3007)  # 々 〆 〇
    )


def _split_scripts(run: str) -> list[tuple[bool, str]]:
    """Split a word run into maximal (is_cjk, text) pieces: ``ec2の料金`` -> ec2 | の料金."""
    pieces: list[tuple[bool, str]] = []
    start = 0
    current = is_cjk(run[0])
    for i in range(1, len(run)):
        flag = is_cjk(run[i])
        if flag != current:
            pieces.append((current, run[start:i]))
            start, current = i, flag
    pieces.append((current, run[start:]))
    return pieces


def _bigrams(run: str) -> list[str]:
    if len(run) == 1:
        return [run]
    return [run[i : i + 2] for i in range(len(run) - 1)]


def stem_plural(word: str) -> str:
    """Light English plural stemming (docs/benchmarks.md); words of three letters or fewer stay.

    >>> [stem_plural(w) for w in ("policies", "classes", "boxes", "regions", "status")]
    ['policy', 'class', 'box', 'region', 'status']
    """
    if len(word) <= 3 or not word.isalpha():
        return word
    return stem(word)  # the one docs/benchmarks.md rule, shared with the term checks


class Tokenizer(Protocol):
    """Turns one text into index terms. ``name`` identifies the output (it keys caches)."""

    name: str

    def run(self, text: str) -> list[str]: ...


class TextTokenizer:
    """The default tokeniser: lower-cased words plus CJK character bigrams.

    >>> TextTokenizer().run("Exporting invoices from ＥＣ２の料金ページ")
    ['exporting', 'invoice', 'ec2', 'の料', '料金', '金ペ', 'ペー', 'ージ']
    """

    def __init__(self, *, stopwords: bool = True, stem: bool = True) -> None:
        self._stopwords = stopwords
        self._stem = stem
        flags = ("+stop" if stopwords else "") + ("+stem" if stem else "")
        self.name = f"turnscope-text/v{TOKENIZER_VERSION}{flags}"

    def run(self, text: str) -> list[str]:
        tokens: list[str] = []
        for match in _RUN.finditer(unicodedata.normalize("NFKC", text).lower()):
            for cjk, piece in _split_scripts(match.group()):
                if cjk:
                    tokens.extend(_bigrams(piece))
                    continue
                if self._stopwords and piece in DEFAULT_STOPWORDS:
                    continue
                tokens.append(stem_plural(piece) if self._stem else piece)
        return tokens

    def __repr__(self) -> str:
        return f"TextTokenizer(stopwords={self._stopwords}, stem={self._stem})"


_DEFAULT = TextTokenizer()


def tokenize(text: str, *, stopwords: bool = True, stem: bool = True) -> list[str]:
    """Tokenise ``text`` with :class:`TextTokenizer`.

    >>> tokenize("What's the uptime SLA?")
    ['uptime', 'sla']
    """
    if stopwords and stem:
        return _DEFAULT.run(text)
    return TextTokenizer(stopwords=stopwords, stem=stem).run(text)
