"""Requests per key per window (fixed windows).

With Redis the count is shared by every worker and host; with SQLite it is kept in each
worker's memory, so ``--workers N`` admits up to N times the limit in total (a counter in
the SQLite file would add a write lock to every request, which costs more than the limit
is worth for a single-host deployment).
"""

from __future__ import annotations

import math
import threading
import time
from typing import Protocol

from turnscope.service._exceptions import RateLimited

__all__ = ["RateLimiter", "MemoryRateLimiter", "SharedRateLimiter", "WindowCounter"]


class WindowCounter(Protocol):
    def hit(self, bucket: str, window: float) -> int: ...


class RateLimiter(Protocol):
    def check(self, bucket: str) -> None:
        """Count a request for ``bucket``; raise :class:`RateLimited` when over the limit."""
        ...


def _refuse(limit: int, window: float) -> RateLimited:
    retry = max(1, math.ceil(window - (time.time() % window)))
    return RateLimited(f"more than {limit} requests in {window:g} s for this key; retry in {retry} s",
                       headers={"Retry-After": str(retry)})


class MemoryRateLimiter:
    """Per-process fixed-window counter.

    >>> rl = MemoryRateLimiter(2, 60.0)
    >>> rl.check("k"); rl.check("k")
    >>> rl.check("k")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    turnscope.service._exceptions.RateLimited: more than 2 requests in 60 s for this key; retry in ...
    """

    def __init__(self, limit: int, window: float) -> None:
        self.limit = limit
        self.window = window
        self._lock = threading.Lock()
        self._counts: dict[str, int] = {}
        self._window_id = -1

    def check(self, bucket: str) -> None:
        w = int(time.time() // self.window)
        with self._lock:
            if w != self._window_id:
                # a new window: forget every old count at once (memory stays bounded by
                # the number of distinct keys seen in one window)
                self._counts.clear()
                self._window_id = w
            n = self._counts.get(bucket, 0) + 1
            self._counts[bucket] = n
        if n > self.limit:
            raise _refuse(self.limit, self.window)


class SharedRateLimiter:
    """A fixed-window counter kept in the store (Redis), shared by all workers."""

    def __init__(self, counter: WindowCounter, limit: int, window: float) -> None:
        self.counter = counter
        self.limit = limit
        self.window = window

    def check(self, bucket: str) -> None:
        if self.counter.hit(bucket, self.window) > self.limit:
            raise _refuse(self.limit, self.window)
