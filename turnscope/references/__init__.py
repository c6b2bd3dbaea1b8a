"""Reference classes and follow-up cues (SPEC section 3)."""

from turnscope.references._classify import (
    Classification,
    Cue,
    Ordinal,
    ReferenceClass,
    after_pivot,
    anchors,
    classify,
    find_ordinal,
    find_ordinal_span,
    follow_up_cue,
)

__all__ = [
    "after_pivot",
    "Classification",
    "Cue",
    "Ordinal",
    "ReferenceClass",
    "anchors",
    "classify",
    "find_ordinal",
    "find_ordinal_span",
    "follow_up_cue",
]
