"""Reference classes and follow-up cues (the reference classes of docs/output.md)."""

from turnscope.references._agreement import is_person, person_names, pronoun_agreement
from turnscope.references._classify import (
    HEADLESS_SUPERLATIVE,
    ORDINALS_EN,
    PIVOT_EN,
    PIVOT_JA,
    SITE_EN,
    SITE_JA,
    Classification,
    Cue,
    Ordinal,
    ReferenceClass,
    after_pivot,
    anchors,
    classify,
    english_pronoun,
    find_ordinal,
    find_ordinal_span,
    follow_up_cue,
)
from turnscope.references._ellipsis import Fragment, parse_fragment, substitute_in_thread
from turnscope.references._preamble import attach_topic, elaboration_query, split_preamble

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
    "ORDINALS_EN",
    "HEADLESS_SUPERLATIVE",
    "PIVOT_EN",
    "PIVOT_JA",
    "SITE_EN",
    "SITE_JA",
    "english_pronoun",
    "Fragment",
    "parse_fragment",
    "substitute_in_thread",
    "attach_topic",
    "split_preamble",
    "elaboration_query",
    "is_person",
    "person_names",
    "pronoun_agreement",
]
