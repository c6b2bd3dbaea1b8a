"""Scope policies: which turns and entities the rewriter may see (docs/architecture.md)."""

from turnscope.scope._base import Message, Scope, ScopePolicy
from turnscope.scope._policies import (
    DEFAULT_RECENT_TURNS,
    DEFAULT_WINDOW,
    POLICIES,
    SEGMENT_DEFAULT_DETECTOR,
    DefaultPolicy,
    FullPolicy,
    LivenessPolicy,
    PolicySpec,
    RelevantPolicy,
    SegmentPolicy,
    WindowPolicy,
    get_policy,
    parse_policy,
    policy_grammar,
    policy_names,
)
from turnscope.scope._render import render_evidence
from turnscope.scope._segment import (
    CALIBRATED_THRESHOLDS,
    SEGMENT_DETECTORS,
    CentroidDetector,
    FlagDetector,
    SegmentDetector,
    TopicShift,
    calibrate_threshold,
)

__all__ = [
    "Message",
    "render_evidence",
    "Scope",
    "ScopePolicy",
    "DEFAULT_RECENT_TURNS",
    "DEFAULT_WINDOW",
    "POLICIES",
    "SEGMENT_DEFAULT_DETECTOR",
    "DefaultPolicy",
    "FullPolicy",
    "LivenessPolicy",
    "RelevantPolicy",
    "SegmentPolicy",
    "WindowPolicy",
    "get_policy",
    "parse_policy",
    "policy_grammar",
    "PolicySpec",
    "policy_names",
    "CALIBRATED_THRESHOLDS",
    "CentroidDetector",
    "FlagDetector",
    "SegmentDetector",
    "calibrate_threshold",
    "SEGMENT_DETECTORS",
    "TopicShift",
]
