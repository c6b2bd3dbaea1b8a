"""Typed entities, enumerations and liveness slots."""

from turnscope.entities._extract import (
    BUNDLED_CORPUS_OF,
    BUNDLED_PREFIX,
    GENERAL_TYPES,
    EntityExtractor,
    Enumeration,
    Mention,
    Vocabulary,
    bundled_name,
    bundled_vocabularies,
    bundled_vocabulary,
    search_before,
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
    "search_before",
    "BUNDLED_CORPUS_OF",
    "BUNDLED_PREFIX",
    "bundled_name",
]
