"""Every error turnscope raises on purpose.

Hierarchy::

    TurnscopeError                  base of everything below
    ├── InputError (ValueError)     a caller handed us something malformed
    │   └── ItemError               one follow-up item / JSONL line is invalid
    ├── ConfigError (ValueError)    an unknown policy, rewriter, metric or bad option
    ├── DatasetError                a public data set is missing or not in the expected shape
    ├── CorpusError                 a retrieval corpus cannot be loaded
    ├── BackendError                a rewriter backend failed (timeout, HTTP error, bad JSON);
    │   │                           callers normally never see it: the session falls back
    │   │                           to the embedded rewriter and records the reason
    │   └── BackendTimeout
    └── GateError                   a gate file is malformed

Errors name what was wrong (the file, the line, the field, the valid choices).
"""

from __future__ import annotations

__all__ = [
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


class TurnscopeError(Exception):
    """Base class of all turnscope errors."""


class InputError(TurnscopeError, ValueError):
    """A caller handed us malformed input."""


class ItemError(InputError):
    """One follow-up item (one JSONL line) is invalid.

    ``line`` is 1-based when the item came from a file. ``reason`` is the message
    without the location; ``kind`` a short machine-readable name of what was wrong
    (``invalid_utf8``, ``invalid_json``, ``invalid_item``) and ``item_id`` the item's
    id when the line got far enough to have one: ``turnscope rewrite`` writes them
    into the error object that takes the bad line's place.
    """

    def __init__(self, message: str, *, line: int | None = None, source: str | None = None,
                 kind: str = "invalid_item", item_id: str | None = None):
        where = ""
        if source is not None:
            where = f"{source}:"
        if line is not None:
            where = f"{where}line {line}: " if where else f"line {line}: "
        elif where:
            where = f"{where} "
        super().__init__(f"{where}{message}")
        self.line = line
        self.source = source
        self.reason = message
        self.kind = kind
        self.item_id = item_id


class ConfigError(TurnscopeError, ValueError):
    """Unknown name (policy, rewriter, metric) or an invalid option value."""


class DatasetError(TurnscopeError):
    """A public data set is missing or malformed."""


class CorpusError(TurnscopeError):
    """A retrieval corpus cannot be loaded."""


class BackendError(TurnscopeError):
    """A rewriter backend failed; the caller falls back to the embedded rewriter."""


class BackendTimeout(BackendError):
    """A rewriter backend did not answer in time."""


class GateError(TurnscopeError):
    """A gate file is malformed."""
