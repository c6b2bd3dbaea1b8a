"""The FastAPI application (the service contract, turnscope/service)."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI, Header, Request
from fastapi.exceptions import RequestValidationError
from fastapi.openapi.utils import get_openapi
from fastapi.responses import JSONResponse, Response
from pydantic import ValidationError
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.requests import ClientDisconnect

from turnscope import __version__
from turnscope._exceptions import ItemError
from turnscope._items import MAX_MESSAGE_CHARS_CONTEXT, FollowUpItem, parse_item
from turnscope.service._config import ServiceConfig
from turnscope.service._engine import Engine
from turnscope.service._exceptions import (
    BadRequest,
    InvalidField,
    MethodNotAllowed,
    NotFound,
    PayloadTooLarge,
    ServiceError,
    StoreUnavailable,
    Unauthorized,
)
from turnscope.service._models import (
    REQUEST_MODELS,
    AssistantTurnOutput,
    CreateSessionIn,
    ErrorBody,
    RewriteOutput,
    SessionCreated,
    SessionView,
    Status,
    TurnIn,
    TurnRewriteOutput,
    check_item,
    check_screen,
    check_text,
    first_error,
    parse_json,
    validate_model,
)
from turnscope.service._ratelimit import MemoryRateLimiter, RateLimiter, SharedRateLimiter
from turnscope.service._store import SessionStore, open_store

__all__ = ["create_app", "app_from_env"]

logger = logging.getLogger("turnscope.service")

#: the If-Match values ``add_turn`` accepts, as the OpenAPI document states them (a
#: version number, quoted or not, optionally weak)
IF_MATCH_PATTERN = r'^(W/)?"?[0-9]{1,9}"?$'


def _if_match_schema(schema: dict[str, Any]) -> None:
    # an absent header is how a client says "no condition": a header has no null value,
    # so the document states a string (clients that send "null" get a 422)
    schema.pop("anyOf", None)
    schema.update(type="string", pattern=IF_MATCH_PATTERN)

#: past the size limit a body is still read (and thrown away) up to this many bytes, so
#: the client gets to read its 413 instead of a connection reset mid-upload
_DRAIN_CAP = 64 * 1024 * 1024

_ERRORS: dict[int | str, dict[str, Any]] = {
    s: {"model": ErrorBody, "description": d} for s, d in (
        (400, "malformed JSON or invalid UTF-8"), (401, "no or wrong API key"),
        (413, "body too large"), (422, "invalid field"), (429, "rate limit"))
}
_SESSION_ERRORS: dict[int | str, dict[str, Any]] = {
    **_ERRORS, 404: {"model": ErrorBody, "description": "unknown session, or another tenant's"}}


def _body(model: str, *, required: bool = True) -> dict[str, Any]:
    return {"requestBody": {"required": required, "content": {
        "application/json": {"schema": {"$ref": f"#/components/schemas/{model}"}}}}}


def _error_response(exc: ServiceError) -> JSONResponse:
    return JSONResponse(exc.body(), status_code=exc.status, headers=exc.headers or None)


def create_app(config: ServiceConfig | None = None, *, store: SessionStore | None = None) -> FastAPI:
    """The HTTP service as an ASGI app.

    >>> import tempfile, os
    >>> from turnscope.service import ServiceConfig, create_app
    >>> app = create_app(ServiceConfig(store="sqlite:" + os.path.join(tempfile.mkdtemp(), "s.db")))
    >>> sorted(r.path for r in app.routes if r.path.startswith("/v1"))[:2]
    ['/v1/_noop', '/v1/rewrite']

    Run it with ``uvicorn`` (``turnscope serve`` does), or under any ASGI server.
    """
    cfg = config or ServiceConfig()
    st = store or open_store(cfg.store, ttl_seconds=cfg.ttl_seconds)
    engine = Engine(st, cfg)
    limits = cfg.limits
    limiter: RateLimiter | None = None
    if limits.rate_requests > 0:
        hit = getattr(st, "hit", None)
        limiter = (SharedRateLimiter(st, limits.rate_requests, limits.rate_window)  # type: ignore[arg-type]
                   if callable(hit) else MemoryRateLimiter(limits.rate_requests, limits.rate_window))
    ready = {"warm": False}

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        # load vocabularies before accepting requests, so the first turn is not slow
        await run_in_threadpool(engine.warm)
        ready["warm"] = True
        try:
            yield
        finally:
            st.close()

    app = FastAPI(title="turnscope", version=__version__, lifespan=lifespan,
                  docs_url=None, redoc_url=None, openapi_url="/openapi.json",
                  description="Scope-aware query rewriting for conversational retrieval. "
                              "Every error is {\"error\": {\"code\", \"message\", \"field\"}}.")
    app.state.engine = engine
    app.state.config = cfg

    # -- errors: one shape, whoever raised -------------------------------------------
    @app.exception_handler(ServiceError)
    async def _service_error(_: Request, exc: ServiceError) -> JSONResponse:
        return _error_response(exc)

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        if exc.status_code == 404:
            err: ServiceError = NotFound("no such endpoint", code="no_route")
        elif exc.status_code == 405:
            err = MethodNotAllowed("method not allowed on this endpoint")
        else:
            err = BadRequest(str(exc.detail), code="http_error")
            err.status = exc.status_code if 400 <= exc.status_code < 500 else 400
        return _error_response(err)

    @app.exception_handler(RequestValidationError)
    async def _validation_error(_: Request, exc: RequestValidationError) -> JSONResponse:
        # only query/header/path parameters reach FastAPI's own validation here
        errors = exc.errors()
        e = errors[0] if errors else {"loc": (), "msg": "invalid request"}
        loc = [str(x) for x in e.get("loc", ())][1:]
        field = ".".join(loc) or None
        return _error_response(InvalidField(f"{field or 'request'}: {e.get('msg')}", field=field))

    @app.exception_handler(ClientDisconnect)
    async def _gone(_: Request, exc: ClientDisconnect) -> JSONResponse:
        # the client left while sending its body: nothing was done, and nobody reads this
        return _error_response(BadRequest("client disconnected", code="client_disconnected"))

    @app.exception_handler(Exception)
    async def _unexpected(_: Request, exc: Exception) -> JSONResponse:
        # a bug, not an input: answered in the error shape; Starlette re-raises it after this
        # handler, so the server logs the traceback once
        del exc
        return JSONResponse({"error": {"code": "internal", "message": "internal error", "field": None}},
                            status_code=500)

    # -- request plumbing ------------------------------------------------------------
    async def authenticate(request: Request) -> str:
        """The tenant of the request ("" without keys); counts it against the rate limit."""
        if cfg.keys is None:
            tenant, bucket = "", "addr:" + (request.client.host if request.client else "?")
        else:
            h = request.headers.get("authorization")
            if not h:
                raise Unauthorized("missing 'Authorization: Bearer KEY' header", field="Authorization")
            scheme, _, key = h.strip().partition(" ")
            key = key.strip()
            if scheme.lower() != "bearer" or not key:
                raise Unauthorized("Authorization must be 'Bearer KEY'", field="Authorization")
            found = cfg.keys.tenant_of(key)
            if found is None:
                raise Unauthorized("unknown API key", field="Authorization")
            tenant, bucket = found, "tenant:" + found
        if limiter is not None:
            if isinstance(limiter, SharedRateLimiter):
                await run_in_threadpool(limiter.check, bucket)
            else:
                limiter.check(bucket)
        return tenant

    async def read_body(request: Request) -> bytes:
        limit = limits.max_body_bytes
        declared = request.headers.get("content-length")
        if declared is not None:
            if not declared.strip().isdigit():
                raise BadRequest("Content-Length is not a number", field="Content-Length")
        chunks: list[bytes] = []
        size = 0
        async for chunk in request.stream():
            size += len(chunk)
            if size <= limit:
                chunks.append(chunk)
            elif size > _DRAIN_CAP:
                break
        if size > limit:
            raise PayloadTooLarge(f"body is {'over ' if size > _DRAIN_CAP else ''}{size} bytes, "
                                  f"more than the limit of {limit}",
                                  headers={"Connection": "close"} if size > _DRAIN_CAP else None)
        return b"".join(chunks)

    async def read_json(request: Request, *, optional: bool = False) -> Any:
        raw = await read_body(request)
        if optional and not raw.strip():
            return None
        if not raw.strip():
            raise BadRequest("body is empty; a JSON object is required", code="malformed_json")
        return parse_json(raw)

    def etag(version: int) -> dict[str, str]:
        return {"ETag": f'"{version}"'}

    # -- endpoints -------------------------------------------------------------------
    @app.post("/v1/sessions", status_code=201, openapi_extra=_body("CreateSessionIn", required=False),
              responses={201: {"model": SessionCreated}, **_ERRORS}, summary="Create a session")
    async def create_session(request: Request) -> JSONResponse:
        tenant = await authenticate(request)
        data = await read_json(request, optional=True)
        body = validate_model(CreateSessionIn, data if data is not None else {})
        sid = await run_in_threadpool(engine.create, tenant, body.policy, body.vocabulary)
        return JSONResponse({"session_id": sid}, status_code=201, headers={"Location": f"/v1/sessions/{sid}"})

    @app.post("/v1/sessions/{session_id}/turns", openapi_extra=_body("TurnIn"),
              responses={200: {"model": TurnRewriteOutput | AssistantTurnOutput,
                               "description": "a user turn: its rewrite; an assistant turn: its number"},
                         409: {"model": ErrorBody, "description": "version conflict or session full"},
                         **_SESSION_ERRORS},
              summary="Add a turn")
    async def add_turn(request: Request, session_id: str,
                       if_match: str | None = Header(default=None, alias="If-Match", description=(
                           "answer 409 unless the session is at this version (its number of turns)"),
                           json_schema_extra=_if_match_schema)
                       ) -> JSONResponse:
        tenant = await authenticate(request)
        turn = validate_model(TurnIn, await read_json(request))
        check_text(turn.content, "content", limits.max_message_chars)
        screen = check_screen(turn.screen, "screen", limits.max_message_chars)
        expected: int | None = None
        if if_match is not None:
            v = if_match.strip().removeprefix("W/").strip('"')
            if not v.isdigit() or len(v) > 9:
                raise InvalidField("If-Match: must be a session version such as \"3\"", field="If-Match")
            expected = int(v)
        out = await run_in_threadpool(engine.add_turn, tenant, session_id, turn.role, turn.content,
                                      screen, if_match=expected)
        return JSONResponse(out, headers=etag(out["turn"]))

    @app.get("/v1/sessions/{session_id}", responses={200: {"model": SessionView}, **_SESSION_ERRORS},
             summary="Read a session")
    async def get_session(request: Request, session_id: str) -> JSONResponse:
        tenant = await authenticate(request)
        view = await run_in_threadpool(engine.view, tenant, session_id)
        return JSONResponse(view, headers=etag(view["version"]))

    @app.delete("/v1/sessions/{session_id}", status_code=204,
                responses={204: {"description": "deleted"}, **_SESSION_ERRORS}, summary="Delete a session")
    async def delete_session(request: Request, session_id: str) -> Response:
        tenant = await authenticate(request)
        await run_in_threadpool(engine.delete, tenant, session_id)
        return Response(status_code=204)

    @app.post("/v1/rewrite", openapi_extra=_body("FollowUpItem"),
              responses={200: {"model": RewriteOutput}, **_ERRORS}, summary="Rewrite one follow-up item")
    async def rewrite(request: Request, policy: str | None = None, vocabulary: str | None = None) -> JSONResponse:
        tenant = await authenticate(request)
        del tenant  # stateless: nothing is stored, so there is nothing to keep apart
        raw = await read_body(request)
        data = parse_json(raw) if raw.strip() else None
        if not isinstance(data, dict):
            raise InvalidField("body must be a JSON object (a follow-up item)", code="invalid_body")
        try:
            item = parse_item(raw.decode("utf-8").removeprefix("\ufeff"),
                              max_message_chars=limits.max_message_chars)
        except ItemError as exc:
            # parse_item's message names the problem (and the limit, for a message over
            # it); pydantic's own error gives the field and the code
            field: str | None = None
            code = "invalid_field"
            try:
                FollowUpItem.model_validate(data, context={MAX_MESSAGE_CHARS_CONTEXT: limits.max_message_chars})
            except ValidationError as verr:
                _, field, code = first_error(verr)
            raise InvalidField(str(exc), field=field, code=code) from None
        check_item(item, limits.max_message_chars, limits.max_turns)
        out = await run_in_threadpool(engine.rewrite, item, policy, vocabulary)
        return JSONResponse(out)

    @app.post("/v1/_noop", include_in_schema=False)
    async def noop(request: Request) -> JSONResponse:
        """No turnscope work: the same authentication, body reading and JSON checks as a turn,
        then a constant answer. ``benchmarks/load.py`` measures the framework with it."""
        await authenticate(request)
        turn = validate_model(TurnIn, await read_json(request))
        check_text(turn.content, "content", limits.max_message_chars)
        return JSONResponse({"turn": 0})

    @app.get("/healthz", responses={200: {"model": Status}}, summary="Liveness")
    async def healthz() -> JSONResponse:
        return JSONResponse({"status": "ok"})

    @app.get("/readyz", responses={200: {"model": Status}, 503: {"model": ErrorBody}}, summary="Readiness")
    async def readyz() -> JSONResponse:
        if not ready["warm"]:
            return _error_response(StoreUnavailable("warming up", code="not_ready"))
        await run_in_threadpool(st.ping)
        return JSONResponse({"status": "ready", "store": st.kind})

    app.openapi = _openapi_builder(app)  # type: ignore[method-assign]
    return app


def _openapi_builder(app: FastAPI) -> Callable[[], dict[str, Any]]:
    """The OpenAPI document, with the request bodies we parse by hand named in it."""

    def build() -> dict[str, Any]:
        if app.openapi_schema:
            return app.openapi_schema
        doc = get_openapi(title=app.title, version=app.version, description=app.description,
                          routes=app.routes)
        comps = doc.setdefault("components", {}).setdefault("schemas", {})
        for model in REQUEST_MODELS:
            schema = model.model_json_schema(ref_template="#/components/schemas/{model}")
            comps.update(schema.pop("$defs", {}))
            comps[model.__name__] = schema
        doc["components"]["securitySchemes"] = {
            "bearer": {"type": "http", "scheme": "bearer",
                       "description": "required when the server runs with --keys"}}
        app.openapi_schema = doc
        return doc

    return build


def app_from_env() -> FastAPI:
    """The app for ``uvicorn --factory turnscope.service:app_from_env`` (each worker of
    ``turnscope serve --workers N`` calls it), configured by ``$TURNSCOPE_SERVICE_CONFIG``."""
    return create_app(ServiceConfig.from_env())
