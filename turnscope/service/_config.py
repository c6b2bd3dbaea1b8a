"""Service configuration: limits, API keys and the store URL, as small frozen values.

A :class:`ServiceConfig` round-trips through one environment variable
(:data:`CONFIG_ENV`) because ``uvicorn --workers N`` starts each worker from an import
string in a fresh process: the parent cannot hand it Python objects, only an environment.
Only SHA-256 digests of API keys go into that variable, never the keys themselves.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from turnscope._exceptions import ConfigError
from turnscope._items import DEFAULT_MAX_MESSAGE_CHARS
from turnscope._paths import DEFAULT_STATE_FILE, default_state_path

__all__ = [
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
    "DEFAULT_LOCK_WAIT",
    "DEFAULT_CACHE_SESSIONS",
    "CONFIG_ENV",
    "Limits",
    "ApiKeys",
    "ServiceConfig",
    "default_store_url",
    "default_state_path",
]

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8080
# DEFAULT_MAX_MESSAGE_CHARS (turnscope._items): a message (``content``, ``follow_up``, a
# prefix turn) longer than this is answered 422 ``too_long``; one limit for the service and
# ``turnscope rewrite``, defined where items are validated
#: a request body over this is answered 413 (without reading it into memory first)
DEFAULT_MAX_BODY_BYTES = 256 * 1024
#: turns per session; one more is answered 409 ``session_full`` (the request is valid, the
#: session's state does not admit it — the client can start a new session)
DEFAULT_MAX_TURNS = 500
#: requests per API key (or per client address when no keys are configured) per window
#: (100 a second sustained: a chat backend calls once per turn of each of its users)
DEFAULT_RATE_REQUESTS = 6000
DEFAULT_RATE_WINDOW = 60.0
#: a session that has had no new turn for this long is gone (404)
DEFAULT_TTL_SECONDS = 7 * 24 * 3600
#: how long an append keeps retrying after losing a version race before answering 409
#: (counted from when it holds the session lock, so queueing behind other turns is free)
DEFAULT_APPEND_DEADLINE = 60.0
#: how long an append waits for the session lock before going ahead without it (then
#: only the version check orders it): an overloaded server answers late, not 409
DEFAULT_LOCK_WAIT = 120.0
#: rebuilt sessions a worker keeps in memory (a cache: the store is the truth)
DEFAULT_CACHE_SESSIONS = 512
#: environment variable carrying the JSON config to uvicorn worker processes
CONFIG_ENV = "TURNSCOPE_SERVICE_CONFIG"


def default_store_url() -> str:
    """``sqlite:`` + ``$TURNSCOPE_STATE``, else :func:`default_state_path` (``sessions.db`` in
    the per-user data folder, which the SQLite store creates when missing), made absolute
    so every worker opens the same file whatever its working directory."""
    env = os.environ.get("TURNSCOPE_STATE")
    path = Path(env) if env else default_state_path()
    return "sqlite:" + str(path.expanduser().resolve())


@dataclass(frozen=True)
class Limits:
    """Request limits; ``rate_requests = 0`` turns rate limiting off.

    >>> Limits(max_turns=10).max_turns
    10
    """

    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    max_message_chars: int = DEFAULT_MAX_MESSAGE_CHARS
    max_turns: int = DEFAULT_MAX_TURNS
    rate_requests: int = DEFAULT_RATE_REQUESTS
    rate_window: float = DEFAULT_RATE_WINDOW

    def __post_init__(self) -> None:
        for name in ("max_body_bytes", "max_message_chars", "max_turns"):
            v = getattr(self, name)
            if not isinstance(v, int) or isinstance(v, bool) or v < 1:
                raise ConfigError(f"{name} must be a positive integer, got {v!r}")
        if not isinstance(self.rate_requests, int) or self.rate_requests < 0:
            raise ConfigError(f"rate_requests must be an integer >= 0, got {self.rate_requests!r}")
        if not isinstance(self.rate_window, int | float) or not self.rate_window > 0:
            raise ConfigError(f"rate_window must be a number of seconds > 0, got {self.rate_window!r}")


def _digest(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class ApiKeys:
    """API keys mapped to tenants, held as SHA-256 digests.

    >>> keys = ApiKeys.parse("k-alpha acme\\n# comment\\nk-beta globex\\n")
    >>> keys.tenant_of("k-alpha"), keys.tenant_of("nope")
    ('acme', None)
    """

    digests: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def parse(cls, text: str, *, source: str = "keys") -> ApiKeys:
        """Lines ``KEY TENANT``; blank lines and ``#`` comments are skipped."""
        out: dict[str, str] = {}
        for n, raw in enumerate(text.splitlines(), start=1):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            parts = line.split()
            if len(parts) != 2:
                raise ConfigError(f"{source}:line {n}: expected 'KEY TENANT', got {len(parts)} field(s)")
            key, tenant = parts
            d = _digest(key)
            if d in out and out[d] != tenant:
                raise ConfigError(f"{source}:line {n}: key given twice for different tenants")
            out[d] = tenant
        if not out:
            raise ConfigError(f"{source}: no 'KEY TENANT' lines")
        return cls(out)

    @classmethod
    def load(cls, path: str | Path) -> ApiKeys:
        p = Path(path)
        try:
            text = p.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"cannot read keys file {p}: {exc}") from None
        return cls.parse(text, source=str(p))

    def tenant_of(self, key: str) -> str | None:
        """The tenant of ``key``, or None.

        The lookup is by SHA-256 digest: how long a dict lookup takes can depend on the
        digest, but a digest reveals nothing an attacker can steer towards a valid key."""
        return self.digests.get(_digest(key))


@dataclass(frozen=True)
class ServiceConfig:
    """Everything a worker needs to serve.

    >>> cfg = ServiceConfig(store="sqlite:/tmp/s.db")
    >>> ServiceConfig.from_json(cfg.to_json()) == cfg
    True
    """

    store: str = field(default_factory=default_store_url)
    keys: ApiKeys | None = None
    limits: Limits = field(default_factory=Limits)
    ttl_seconds: float = DEFAULT_TTL_SECONDS
    append_deadline: float = DEFAULT_APPEND_DEADLINE
    lock_wait: float = DEFAULT_LOCK_WAIT
    cache_sessions: int = DEFAULT_CACHE_SESSIONS
    default_policy: str = "default"
    #: no vocabulary unless one is declared: a shipped demo vocabulary would decide a
    #: stranger's conversation that names its regions ("Frankfurt", "Dublin")
    default_vocabulary: str = "none"

    def __post_init__(self) -> None:
        if not isinstance(self.ttl_seconds, int | float) or not self.ttl_seconds > 0:
            raise ConfigError(f"ttl_seconds must be > 0, got {self.ttl_seconds!r}")
        if not isinstance(self.cache_sessions, int) or self.cache_sessions < 0:
            raise ConfigError(f"cache_sessions must be >= 0, got {self.cache_sessions!r}")

    def with_(self, **changes: Any) -> ServiceConfig:
        return replace(self, **changes)

    def to_json(self) -> str:
        d = asdict(self)
        d["keys"] = dict(self.keys.digests) if self.keys is not None else None
        return json.dumps(d)

    @classmethod
    def from_json(cls, text: str) -> ServiceConfig:
        try:
            d = json.loads(text)
            keys = d.pop("keys")
            limits = Limits(**d.pop("limits"))
            return cls(keys=ApiKeys(keys) if keys is not None else None, limits=limits, **d)
        except (ValueError, TypeError, KeyError, AttributeError) as exc:
            raise ConfigError(f"invalid service configuration: {exc}") from None

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> ServiceConfig:
        """The config in ``$TURNSCOPE_SERVICE_CONFIG``, else the defaults."""
        env = os.environ if environ is None else environ
        text = env.get(CONFIG_ENV)
        return cls.from_json(text) if text else cls()
