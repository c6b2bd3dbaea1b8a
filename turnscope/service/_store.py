"""Open a session store by URL. The records and the store interface live in
:mod:`turnscope.service._records`, which the stores import, so the SQLite and Redis
modules never import this one back (it imports them only when a URL names them).
"""

from __future__ import annotations

from turnscope._exceptions import ConfigError
from turnscope.service._records import (
    LOCK_SLOTS,
    SessionMeta,
    SessionRecord,
    SessionStore,
    StoredTurn,
    lock_slot,
)

__all__ = ["SessionMeta", "StoredTurn", "SessionRecord", "SessionStore", "open_store", "lock_slot",
           "LOCK_SLOTS"]


def open_store(url: str, *, ttl_seconds: float) -> SessionStore:
    """The store a URL names: ``sqlite:PATH`` or ``redis://HOST:PORT/DB`` (``rediss://`` too).

    >>> import tempfile, os
    >>> store = open_store("sqlite:" + os.path.join(tempfile.mkdtemp(), "s.db"), ttl_seconds=60)
    >>> store.kind
    'sqlite'
    """
    if url.startswith("sqlite:"):
        from turnscope.service._sqlite import SQLiteStore

        path = url[len("sqlite:"):]
        if path.startswith("//"):  # sqlite:///abs/path, the SQLAlchemy spelling
            path = path[2:]
        if not path:
            raise ConfigError("--store sqlite:PATH needs a file path")
        return SQLiteStore(path, ttl_seconds=ttl_seconds)
    if url.startswith(("redis://", "rediss://", "unix://")):
        from turnscope.service._redis import RedisStore

        return RedisStore(url, ttl_seconds=ttl_seconds)
    raise ConfigError(f"unknown store {url!r}: use sqlite:PATH or redis://HOST:PORT/DB")
