"""Per-message language detection (English / Japanese).

A message is Japanese when kana or CJK ideographs make up a noticeable share
of its letters; a single katakana product name inside an English sentence
should not flip it, hence a share rather than "any".
"""

from __future__ import annotations

import re

__all__ = ["detect_language", "has_cjk", "DEFAULT_JA_SHARE"]

#: share of CJK letters among all letters above which a message is Japanese
DEFAULT_JA_SHARE = 0.3

_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uff66-\uff9f々〆ヵヶ]")
_LATIN = re.compile(r"[A-Za-z]")
_HIRAGANA = re.compile(r"[\u3040-\u309f]")


def has_cjk(text: str) -> bool:
    return _CJK.search(text) is not None


def detect_language(text: str, *, ja_share: float = DEFAULT_JA_SHARE) -> str:
    """Return ``"ja"`` or ``"en"``.

    >>> detect_language("このページは何？")
    'ja'
    >>> detect_language("What's the SLA for Dublin?")
    'en'
    """
    cjk = len(_CJK.findall(text))
    latin = len(_LATIN.findall(text))
    if cjk == 0:
        return "en"
    # hiragana is Japanese grammar (particles, endings), even in a Latin-heavy message;
    # katakana alone is often just a product name inside an English sentence
    if _HIRAGANA.search(text):
        return "ja"
    return "ja" if cjk / max(1, cjk + latin) >= ja_share else "en"
