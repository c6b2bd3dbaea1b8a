"""The LLM backend's memory: a response cache (SQLite, keyed by model and messages) and
the circuit breaker that stops calling a server that keeps failing."""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

__all__ = [
    "ResponseCache",
    "cache_key",
]

def cache_key(model: str, messages: Sequence[Mapping[str, str]]) -> str:
    """``sha256(model + messages JSON)``: the same prompt to the same model is one entry."""
    payload = model + "\n" + json.dumps(list(messages), ensure_ascii=False, sort_keys=True)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


class ResponseCache:
    """Model answers on disk (SQLite), keyed by :func:`cache_key`.

    Only answers that validated are stored, so a bad answer is asked again next time.

    >>> c = ResponseCache(":memory:")
    >>> c.put("k", "m", '{"query": "x"}'); c.get("k")
    '{"query": "x"}'
    """

    def __init__(self, path: str | Path) -> None:
        if str(path) != ":memory:":
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        # one connection shared by threads (sync and async callers); the lock serialises it
        self._conn = sqlite3.connect(str(path), check_same_thread=False)
        self._lock = threading.Lock()
        with self._lock, self._conn:
            self._conn.execute("CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, "
                               "model TEXT NOT NULL, content TEXT NOT NULL, created REAL NOT NULL)")

    def get(self, key: str) -> str | None:
        with self._lock:
            row = self._conn.execute("SELECT content FROM responses WHERE key = ?",
                                     (key,)).fetchone()
        return str(row[0]) if row is not None else None

    def put(self, key: str, model: str, content: str) -> None:
        with self._lock, self._conn:
            self._conn.execute("INSERT OR REPLACE INTO responses VALUES (?, ?, ?, ?)",
                               (key, model, content, time.time()))

    def __len__(self) -> int:
        with self._lock:
            row = self._conn.execute("SELECT COUNT(*) FROM responses").fetchone()
        return int(row[0])

    def close(self) -> None:
        with self._lock:
            self._conn.close()


# -- the circuit breaker -----------------------------------------------------------------

class _CircuitBreaker:
    """Closed → (threshold consecutive failures) → open → (cooldown) → half-open: one
    trial request; its success closes the circuit, its failure re-opens it."""

    def __init__(self, threshold: int, cooldown: float, clock: Callable[[], float]) -> None:
        self.threshold = threshold
        self.cooldown = cooldown
        self._clock = clock
        self._failures = 0
        self._opened_at: float | None = None
        self._trial = False
        self._lock = threading.Lock()

    @property
    def state(self) -> str:
        with self._lock:
            if self._opened_at is None:
                return "closed"
            if self._clock() - self._opened_at >= self.cooldown:
                return "half-open"
            return "open"

    def allow(self) -> bool:
        with self._lock:
            if self._opened_at is None:
                return True
            if self._clock() - self._opened_at < self.cooldown or self._trial:
                return False
            self._trial = True  # exactly one caller probes the server
            return True

    def success(self) -> None:
        with self._lock:
            self._failures = 0
            self._opened_at = None
            self._trial = False

    def failure(self) -> bool:
        """Record a failure; True when this one opened the circuit."""
        with self._lock:
            self._failures += 1
            if self._trial or self._failures >= self.threshold:
                self._opened_at = self._clock()
                self._trial = False
                return True
            return False


# -- configuration -----------------------------------------------------------------------
