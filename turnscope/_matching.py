"""Term matching for the rewrite checks (docs/output.md).

Both checks the project reports (contamination: a forbidden term is present;
coverage: every required term is present) rest on one question, *does this
text contain this term*, answered the same way everywhere:

- text and term are compared after Unicode NFKC normalisation and casefolding;
- a term without CJK characters must not touch an ASCII letter or digit on
  either side ("EC2" is in "EC2の" and "EC2-based", not in "EC22");
- a term with CJK characters matches as a plain substring, because Japanese
  and Chinese do not separate words with spaces.

Whitespace inside a term matches any run of whitespace in the text, so
"billing export" is found across a line break.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from turnscope._exceptions import InputError

__all__ = [
    "TermCheck",
    "check_terms",
    "contains_any",
    "contains_term",
    "has_cjk",
    "normalize",
]

# Kana, CJK ideographs (incl. extensions and compatibility forms), Hangul.
_CJK = re.compile(
    "[\u1100-\u11ff\u3040-\u30ff\u3130-\u318f\u31f0-\u31ff\u3400-\u4dbf"
    "\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff66-\uff9f\U00020000-\U0003134f]"
)
_SPACE = re.compile(r"\s+")


def normalize(text: str) -> str:
    """NFKC-normalise and casefold ``text``.

    >>> normalize("ＥＣ２ Straße")
    'ec2 strasse'
    """
    return unicodedata.normalize("NFKC", text).casefold()


def has_cjk(text: str) -> bool:
    """True when ``text`` holds at least one CJK (kana, ideograph, Hangul) character."""
    return _CJK.search(text) is not None


@lru_cache(maxsize=65536)
def _pattern(term: str) -> re.Pattern[str]:
    """Compiled matcher for one raw term (cached: evaluation asks about the same terms
    for every rewrite of every policy)."""
    norm = _SPACE.sub(" ", normalize(term)).strip()
    if not norm:
        raise InputError(f"empty term {term!r}: a term needs at least one visible character")
    body = r"\s+".join(re.escape(part) for part in norm.split(" "))
    if has_cjk(norm):
        return re.compile(body)
    # Only ASCII letters/digits count as "touching": a CJK neighbour or punctuation
    # is a legitimate word boundary ("EC2の", "EC2-based").
    return re.compile(rf"(?<![A-Za-z0-9]){body}(?![A-Za-z0-9])")


def _contains_normalized(norm_text: str, term: str) -> bool:
    return _pattern(term).search(norm_text) is not None


def _contains_any_normalized(norm_text: str, terms: str | Sequence[str]) -> bool:
    if isinstance(terms, str):
        return _contains_normalized(norm_text, terms)
    if len(terms) == 0:
        raise InputError("empty list of alternatives: give at least one term")
    return any(_contains_normalized(norm_text, term) for term in terms)


def contains_term(text: str, term: str) -> bool:
    """True when ``term`` occurs in ``text`` under the docs/output.md rules.

    >>> contains_term("Is EC2-based hosting cheaper?", "ec2")
    True
    >>> contains_term("EC22 pricing", "EC2")
    False
    >>> contains_term("このページは何？", "ページ")
    True

    Raises ``InputError`` for an empty term.
    """
    return _contains_normalized(normalize(text), term)


def contains_any(text: str, term_or_alternatives: str | Sequence[str]) -> bool:
    """True when ``text`` contains the term, or any one of a list of alternatives.

    >>> contains_any("uptime SLA for eu-west-1", ["Dublin", "eu-west-1"])
    True
    """
    return _contains_any_normalized(normalize(text), term_or_alternatives)


def _label(required: str | Sequence[str]) -> str:
    return required if isinstance(required, str) else "|".join(required)


@dataclass(frozen=True)
class TermCheck:
    """Outcome of checking one text against an item's required and forbidden terms.

    ``required_missing`` names a list of alternatives as ``"a|b"``.
    """

    forbidden_hits: tuple[str, ...]
    required_missing: tuple[str, ...]

    @property
    def contaminated(self) -> bool:
        """At least one forbidden term is present."""
        return bool(self.forbidden_hits)

    @property
    def covered(self) -> bool:
        """Every required term (or one of its alternatives) is present."""
        return not self.required_missing


def check_terms(
    text: str,
    required: Sequence[str | Sequence[str]],
    forbidden: Sequence[str],
) -> TermCheck:
    """Check ``text`` against required and forbidden terms.

    >>> c = check_terms("uptime SLA Dublin", [["Dublin", "eu-west-1"], "RPO"], ["Frankfurt"])
    >>> c.covered, c.contaminated, c.required_missing
    (False, False, ('RPO',))
    """
    norm_text = normalize(text)
    hits = tuple(term for term in forbidden if _contains_normalized(norm_text, term))
    missing = tuple(_label(req) for req in required if not _contains_any_normalized(norm_text, req))
    return TermCheck(forbidden_hits=hits, required_missing=missing)
