"""turnscope: scope-aware query contextualization for conversational retrieval.

>>> import turnscope
>>> s = turnscope.Session()
>>> _ = s.user("Which EU regions support customer-managed encryption keys?")
>>> s.assistant("Frankfurt and Dublin both support CMK for data at rest.")
>>> s.user("What's the uptime SLA on the second one?").query
"What's the uptime SLA on Dublin?"
"""

from turnscope._batch import BatchRewriter, BatchStats
from turnscope._exceptions import (
    BackendError,
    BackendTimeout,
    ConfigError,
    CorpusError,
    DatasetError,
    GateError,
    InputError,
    ItemError,
    TurnscopeError,
)
from turnscope._session import Session, TurnResult
from turnscope._warmup import WarmUp, warm_up
from turnscope.conversation import Role, Screen, Turn, detect_language
from turnscope.entities import (
    EntityExtractor,
    LivenessConfig,
    Mention,
    Slot,
    SlotStatus,
    SlotTable,
    Vocabulary,
    bundled_vocabulary,
)
from turnscope.references import Classification, ReferenceClass, classify, follow_up_cue
from turnscope.rewriters import EmbeddedRewriter, Rewriter, RewriteRequest, RewriteResult
from turnscope.scope import PolicySpec, Scope, ScopePolicy, get_policy, parse_policy, policy_names

__version__ = "0.1.0"

__all__ = [
    "Session",
    "TurnResult",
    "BatchRewriter",
    "BatchStats",
    "Role",
    "Screen",
    "Turn",
    "detect_language",
    "EntityExtractor",
    "LivenessConfig",
    "Mention",
    "Slot",
    "SlotStatus",
    "SlotTable",
    "Vocabulary",
    "bundled_vocabulary",
    "Classification",
    "ReferenceClass",
    "classify",
    "follow_up_cue",
    "EmbeddedRewriter",
    "RewriteRequest",
    "RewriteResult",
    "Rewriter",
    "Scope",
    "ScopePolicy",
    "get_policy",
    "parse_policy",
    "PolicySpec",
    "policy_names",
    "warm_up",
    "WarmUp",
    "TurnscopeError",
    "InputError",
    "ItemError",
    "ConfigError",
    "DatasetError",
    "CorpusError",
    "BackendError",
    "BackendTimeout",
    "GateError",
]
