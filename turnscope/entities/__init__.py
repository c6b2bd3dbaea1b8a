"""Typed entities, enumerations and liveness slots."""

from turnscope.entities._extract import (
    GENERAL_TYPES,
    EntityExtractor,
    Enumeration,
    Mention,
    Vocabulary,
    bundled_vocabularies,
    bundled_vocabulary,
)
from turnscope.entities._liveness import (
    DEFAULT_EVICT_AFTER,
    DEFAULT_STALE_AFTER,
    LivenessConfig,
    Slot,
    SlotStatus,
    SlotTable,
)

__all__ = [
    "GENERAL_TYPES",
    "EntityExtractor",
    "Enumeration",
    "Mention",
    "Vocabulary",
    "bundled_vocabulary",
    "bundled_vocabularies",
    "DEFAULT_EVICT_AFTER",
    "DEFAULT_STALE_AFTER",
    "LivenessConfig",
    "Slot",
    "SlotStatus",
    "SlotTable",
]
