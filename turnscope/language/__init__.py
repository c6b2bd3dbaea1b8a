"""Language evidence that carries to new wording: a real parser's reference spans and
candidate phrases, a small pretrained language model's in-context score, and the one learned
decision that reads both (``ReferenceDecider``)."""

from turnscope.language._anchor import Anchor, topic_anchor
from turnscope.language._decide import (
    Candidate,
    Decider,
    Decision,
    ReferenceDecider,
    candidates_for,
    decider_unavailable,
    feature_names,
    shared_decider,
)
from turnscope.language._lm import CandidateScore, SmallLM, model_path
from turnscope.language._parse import Phrase, Reference, load_parser

__all__ = [
    "Anchor",
    "Candidate",
    "CandidateScore",
    "Decider",
    "Decision",
    "Phrase",
    "Reference",
    "ReferenceDecider",
    "SmallLM",
    "candidates_for",
    "decider_unavailable",
    "feature_names",
    "load_parser",
    "model_path",
    "shared_decider",
    "topic_anchor",
]
