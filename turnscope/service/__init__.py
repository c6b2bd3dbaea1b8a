"""turnscope as an HTTP service (SPEC section 8): durable sessions over SQLite or Redis.

>>> import tempfile, os
>>> from turnscope.service import ServiceConfig, create_app
>>> app = create_app(ServiceConfig(store="sqlite:" + os.path.join(tempfile.mkdtemp(), "s.db")))
>>> app.title
'turnscope'

``turnscope serve`` runs it under uvicorn; see :mod:`turnscope.cli._serve`.
"""

from turnscope.service._app import app_from_env, create_app
from turnscope.service._config import (
    CONFIG_ENV,
    DEFAULT_APPEND_DEADLINE,
    DEFAULT_CACHE_SESSIONS,
    DEFAULT_HOST,
    DEFAULT_MAX_BODY_BYTES,
    DEFAULT_MAX_MESSAGE_CHARS,
    DEFAULT_MAX_TURNS,
    DEFAULT_PORT,
    DEFAULT_RATE_REQUESTS,
    DEFAULT_RATE_WINDOW,
    DEFAULT_STATE_FILE,
    DEFAULT_TTL_SECONDS,
    ApiKeys,
    Limits,
    ServiceConfig,
    default_store_url,
)
from turnscope.service._engine import Engine
from turnscope.service._exceptions import (
    BadRequest,
    Conflict,
    InvalidField,
    MethodNotAllowed,
    NotFound,
    PayloadTooLarge,
    RateLimited,
    ServiceError,
    SessionFull,
    StoreUnavailable,
    Unauthorized,
    VersionConflict,
)
from turnscope.service._sqlite import SQLiteStore
from turnscope.service._store import SessionMeta, SessionRecord, SessionStore, StoredTurn, open_store


def __getattr__(name: str) -> object:
    # RedisStore imports redis; load it only when asked for
    if name == "RedisStore":
        from turnscope.service._redis import RedisStore

        return RedisStore
    raise AttributeError(name)


__all__ = [
    "create_app",
    "app_from_env",
    "Engine",
    "ServiceConfig",
    "Limits",
    "ApiKeys",
    "default_store_url",
    "SessionStore",
    "SessionMeta",
    "SessionRecord",
    "StoredTurn",
    "SQLiteStore",
    "RedisStore",
    "open_store",
    "ServiceError",
    "BadRequest",
    "Unauthorized",
    "NotFound",
    "MethodNotAllowed",
    "Conflict",
    "VersionConflict",
    "SessionFull",
    "PayloadTooLarge",
    "InvalidField",
    "RateLimited",
    "StoreUnavailable",
    "CONFIG_ENV",
    "DEFAULT_HOST",
    "DEFAULT_PORT",
    "DEFAULT_STATE_FILE",
    "DEFAULT_MAX_BODY_BYTES",
    "DEFAULT_MAX_MESSAGE_CHARS",
    "DEFAULT_MAX_TURNS",
    "DEFAULT_RATE_REQUESTS",
    "DEFAULT_RATE_WINDOW",
    "DEFAULT_TTL_SECONDS",
    "DEFAULT_APPEND_DEADLINE",
    "DEFAULT_CACHE_SESSIONS",
]
