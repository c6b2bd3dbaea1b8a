"""Settings every framework drop-in test needs before a framework is imported."""

from __future__ import annotations

import os

# Haystack sends usage telemetry unless told not to; these tests make no network call
os.environ.setdefault("HAYSTACK_TELEMETRY_ENABLED", "False")
