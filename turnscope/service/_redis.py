"""Redis session store: for many workers and many hosts sharing one set of sessions."""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import redis
from redis.backoff import ExponentialBackoff
from redis.retry import Retry

from turnscope.service._exceptions import NotFound, StoreUnavailable, VersionConflict
from turnscope.service._records import SessionMeta, SessionRecord, StoredTurn

__all__ = ["RedisStore"]

T = TypeVar("T")

# KEYS[1] meta hash, KEYS[2] turns list; ARGV: expected version, turn JSON, ttl ms.
# Redis runs a script atomically: nothing else touches the session between the version
# check and the write, whichever worker or host sent it.
_APPEND = """
local v = redis.call('HGET', KEYS[1], 'version')
if not v then return -2 end
if tonumber(v) ~= tonumber(ARGV[1]) then return -1 end
redis.call('RPUSH', KEYS[2], ARGV[2])
redis.call('HSET', KEYS[1], 'version', tonumber(v) + 1)
redis.call('PEXPIRE', KEYS[1], ARGV[3])
redis.call('PEXPIRE', KEYS[2], ARGV[3])
return tonumber(v) + 1
"""


# KEYS[1] the lock, KEYS[2] a priority claim; ARGV: token, lease ms, "1" if this waiter has
# waited long. A waiter that has waited long claims priority (one claim at a time); while a
# claim stands nobody else may take the lock, so no worker's stream of fresh requests can
# starve another worker's waiter.
_LOCK = """
local w = redis.call('GET', KEYS[2])
if w and w ~= ARGV[1] then return 0 end
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  if w then redis.call('DEL', KEYS[2]) end
  return 1
end
if w then
  redis.call('PEXPIRE', KEYS[2], 2000)
elseif ARGV[3] == '1' then
  redis.call('SET', KEYS[2], ARGV[1], 'PX', 2000)
end
return 0
"""
#: a waiter that has waited this long claims priority
_STARVING = 0.02

# release a lease only if it is still ours (it may have expired and been taken since)
_UNLOCK = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""
#: how long a session lock lives if its holder dies without releasing it (long enough for a
#: turn on an overloaded machine; a lease that runs out costs a retry, not a turn)
_LEASE_MS = 30_000


class RedisStore:
    """Sessions in Redis: a hash (meta, version) and a list (turns) per session, both
    with the session TTL, refreshed on every append.

    >>> store = RedisStore("redis://127.0.0.1:6379/0", ttl_seconds=3600)  # doctest: +SKIP
    >>> store.kind  # doctest: +SKIP
    'redis'

    Keys share a hash tag (``ts:{ID}``), so a session's two keys live on one cluster slot
    and the append script may touch both. Connection errors are retried with backoff;
    a retried append whose first attempt did land shows up as a version conflict, which
    the engine resolves by finding its own turn (``StoredTurn.tid``), never by writing twice.
    """

    kind = "redis"

    def __init__(self, url: str, *, ttl_seconds: float, prefix: str = "ts") -> None:
        self.url = url
        self.ttl_ms = max(1, int(ttl_seconds * 1000))
        self.prefix = prefix
        self.r: redis.Redis = redis.Redis.from_url(
            url, decode_responses=True, socket_timeout=10, socket_connect_timeout=5,
            retry=Retry(ExponentialBackoff(cap=1.0, base=0.05), 6),
            retry_on_error=[redis.exceptions.ConnectionError, redis.exceptions.TimeoutError],
            health_check_interval=30)
        self._append = self.r.register_script(_APPEND)
        self._unlock = self.r.register_script(_UNLOCK)
        self._lock = self.r.register_script(_LOCK)

    def _keys(self, session_id: str) -> tuple[str, str]:
        return f"{self.prefix}:{{{session_id}}}", f"{self.prefix}:{{{session_id}}}:turns"

    def _guard(self, fn: Callable[[], T]) -> T:
        try:
            return fn()
        except redis.exceptions.RedisError as exc:
            raise StoreUnavailable(f"session store error: {type(exc).__name__}: {exc}") from None

    def create(self, meta: SessionMeta) -> None:
        k_meta, _ = self._keys(meta.session_id)

        def run() -> None:
            with self.r.pipeline(transaction=True) as p:
                p.hset(k_meta, mapping={"meta": json.dumps(meta.to_dict()), "version": 0})
                p.pexpire(k_meta, self.ttl_ms)
                p.execute()

        self._guard(run)

    def load(self, session_id: str, since: int = 0) -> SessionRecord | None:
        k_meta, k_turns = self._keys(session_id)

        def run() -> SessionRecord | None:
            # MULTI/EXEC: the hash and the list are read at one instant
            with self.r.pipeline(transaction=True) as p:
                p.hgetall(k_meta)
                p.lrange(k_turns, since, -1)
                raw_meta, raw_turns = p.execute()
            if not raw_meta:
                return None
            meta = SessionMeta.from_dict(json.loads(raw_meta["meta"]))
            return SessionRecord(meta, int(raw_meta["version"]), since,
                                 tuple(StoredTurn.from_json(t) for t in raw_turns))

        return self._guard(run)

    def append(self, session_id: str, expected_version: int, turn: StoredTurn) -> int:
        if turn.index != expected_version + 1:
            raise ValueError(f"turn index {turn.index} does not follow version {expected_version}")
        keys = list(self._keys(session_id))
        res: Any = self._guard(lambda: self._append(keys=keys, args=[expected_version, turn.to_json(),
                                                                      self.ttl_ms]))
        if res == -2:
            raise NotFound(f"no session {session_id!r}", code="session_not_found")
        if res == -1:
            raise VersionConflict(f"session is no longer at version {expected_version}")
        return int(res)

    @contextmanager
    def session_lock(self, session_id: str, timeout: float) -> Iterator[bool]:
        key = f"{self.prefix}:{{{session_id}}}:lock"
        want = f"{self.prefix}:{{{session_id}}}:want"
        token = secrets.token_hex(8)
        start = time.monotonic()
        deadline = start + timeout
        delay = 0.0005
        got = False
        while True:
            try:
                starving = "1" if time.monotonic() - start > _STARVING else "0"
                got = bool(self._lock(keys=[key, want], args=[token, _LEASE_MS, starving]))
            except redis.exceptions.RedisError:
                break  # the append itself will report an unreachable store
            if got or time.monotonic() > deadline:
                break
            time.sleep(delay)
            delay = min(delay * 2, 0.005)
        try:
            yield got
        finally:
            if got:
                try:
                    self._unlock(keys=[key], args=[token])
                except redis.exceptions.RedisError:
                    pass  # the lease runs out by itself

    def delete(self, session_id: str) -> bool:
        return bool(self._guard(lambda: self.r.delete(*self._keys(session_id))))

    def ping(self) -> None:
        self._guard(self.r.ping)

    def hit(self, bucket: str, window: float) -> int:
        """Count one request in ``bucket``'s current fixed window (shared by all workers)."""
        w = int(time.time() // window)
        key = f"{self.prefix}:rl:{bucket}:{w}"

        def run() -> int:
            with self.r.pipeline(transaction=True) as p:
                p.incr(key)
                p.pexpire(key, int(window * 1000) + 1000)
                n, _ = p.execute()
            return int(n)

        return self._guard(run)

    def close(self) -> None:
        self.r.close()
