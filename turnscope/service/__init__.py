"""turnscope as an HTTP service (the service contract, turnscope/service): durable sessions over SQLite or Redis.

>>> import tempfile, os
>>> from turnscope.service import ServiceConfig, create_app
>>> app = create_app(ServiceConfig(store="sqlite:" + os.path.join(tempfile.mkdtemp(), "s.db")))
>>> app.title
'turnscope'

``turnscope serve`` runs it under uvicorn (``--workers N`` for several processes).

Endpoints::

    POST   /v1/sessions               201 {"session_id"}   body optional {"policy", "vocabulary"}
    POST   /v1/sessions/{id}/turns    200 user: rewrite output + "turn"; assistant: {"turn"}
                                      optional header If-Match: "N" (409 unless at version N)
    GET    /v1/sessions/{id}          200 {"session_id", "policy", "vocabulary", "version",
                                           "turns": [{"turn", "role", "content", "screen", "rewrite"?}],
                                           "slots"}
    DELETE /v1/sessions/{id}          204
    POST   /v1/rewrite                200 rewrite output of one follow-up item (?policy=&vocabulary=)
    GET    /healthz, /readyz          200 live / ready (store reachable, vocabularies loaded)
    GET    /openapi.json

Errors are always ``{"error": {"code", "message", "field"}}``: 400 ``malformed_json`` /
``invalid_utf8``; 401 ``unauthorized``; 404 ``session_not_found`` (also for another tenant's
session) / ``no_route``; 405; 409 ``version_conflict`` (If-Match) / ``session_full`` (the
turn limit: the request is valid, the session's state refuses it, so 409 rather than 422);
413 ``too_large``; 422 ``invalid_field`` / ``missing_field`` / ``empty`` / ``too_long`` /
``invalid_character`` / ``unprocessable``; 429 ``rate_limited`` (with Retry-After);
503 ``store_unavailable``.

Consistency: a session's stored turns are its scope state. Each append reads the
session's version, computes the rewrite on a session rebuilt from (or caught up with) the
stored turns, and writes only if the version is unchanged — atomically in the store
(SQLite ``BEGIN IMMEDIATE``, Redis Lua). A writer that loses the race retries on the new
state, so a turn answered 200 is stored exactly once, in the order it was accepted, and
any worker computes the same rewrite from it.
"""

from turnscope.service._app import app_from_env, create_app
from turnscope.service._config import (
    CONFIG_ENV,
    DEFAULT_APPEND_DEADLINE,
    DEFAULT_CACHE_SESSIONS,
    DEFAULT_HOST,
    DEFAULT_LOCK_WAIT,
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
    default_state_path,
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
from turnscope.service._uvicorn import APP_FACTORY, run_uvicorn


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
    "default_state_path",
    "DEFAULT_MAX_BODY_BYTES",
    "DEFAULT_MAX_MESSAGE_CHARS",
    "DEFAULT_MAX_TURNS",
    "DEFAULT_RATE_REQUESTS",
    "DEFAULT_RATE_WINDOW",
    "DEFAULT_TTL_SECONDS",
    "DEFAULT_APPEND_DEADLINE",
    "DEFAULT_LOCK_WAIT",
    "DEFAULT_CACHE_SESSIONS",
    "APP_FACTORY",
    "run_uvicorn",
]
