"""Scoring rewrites: term matching (SPEC section 4) and metrics (SPEC section 5)."""

from __future__ import annotations

from turnscope.evaluation._matching import (
    TermCheck,
    check_terms,
    contains_any,
    contains_term,
    normalize,
)

__all__ = ["TermCheck", "check_terms", "contains_any", "contains_term", "normalize"]
