"""Every error the service answers with on purpose, each with its HTTP status.

Hierarchy (all under :class:`turnscope.TurnscopeError`)::

    ServiceError                         base; ``status``, ``code``, ``field``
    ├── BadRequest (InputError)          400  the body is not JSON / not UTF-8
    ├── Unauthorized                     401  no key, or a key the server does not know
    ├── NotFound                         404  no such session (or another tenant's) or route
    ├── MethodNotAllowed                 405  a known path with another method
    ├── Conflict                         409
    │   ├── VersionConflict              409  ``If-Match`` names a version the session is past
    │   └── SessionFull                  409  the session holds the maximum number of turns
    ├── PayloadTooLarge                  413  the body is over the size limit
    ├── InvalidField (InputError)        422  a field has the wrong type or value
    ├── RateLimited                      429  too many requests for this key in the window
    └── StoreUnavailable                 503  the session store cannot be reached

The JSON answer is always ``{"error": {"code", "message", "field"}}`` (the service contract, turnscope/service):
:meth:`ServiceError.body` builds it, so no handler formats an error on its own.
"""

from __future__ import annotations

from typing import Any, ClassVar

from turnscope._exceptions import InputError, TurnscopeError

__all__ = [
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
]


class ServiceError(TurnscopeError):
    """An error with an HTTP status, a stable machine-readable ``code`` and the ``field``
    it is about (``None`` when it is about the request as a whole)."""

    status: int = 400
    default_code: ClassVar[str] = "bad_request"

    def __init__(self, message: str, *, code: str | None = None, field: str | None = None,
                 headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.code = code or self.default_code
        self.field = field
        self.headers = dict(headers or {})

    def body(self) -> dict[str, Any]:
        """The the service contract, turnscope/service error object."""
        return {"error": {"code": self.code, "message": self.message, "field": self.field}}


class BadRequest(ServiceError, InputError):
    status = 400
    default_code = "bad_request"


class Unauthorized(ServiceError):
    status = 401
    default_code = "unauthorized"

    def __init__(self, message: str, **kwargs: Any) -> None:
        kwargs.setdefault("headers", {"WWW-Authenticate": "Bearer"})
        super().__init__(message, **kwargs)


class NotFound(ServiceError):
    status = 404
    default_code = "not_found"


class MethodNotAllowed(ServiceError):
    status = 405
    default_code = "method_not_allowed"


class Conflict(ServiceError):
    status = 409
    default_code = "conflict"


class VersionConflict(Conflict):
    default_code = "version_conflict"


class SessionFull(Conflict):
    default_code = "session_full"


class PayloadTooLarge(ServiceError):
    status = 413
    default_code = "too_large"


class InvalidField(ServiceError, InputError):
    status = 422
    default_code = "invalid_field"


class RateLimited(ServiceError):
    status = 429
    default_code = "rate_limited"


class StoreUnavailable(ServiceError):
    status = 503
    default_code = "store_unavailable"
