"""Hostile and broken requests: each gets the right 4xx in the SPEC error shape, with a
message, and leaves the session exactly as it was."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from _service_procs import KEYS, ServiceProcess

ALPHA, BETA = "key-alpha-0123456789", "key-beta-0123456789"


@pytest.fixture(scope="module")
def alpha_session(keyed_server: ServiceProcess) -> Iterator[tuple[ServiceProcess, str]]:
    with keyed_server.client(ALPHA) as c:
        sid = c.post("/v1/sessions", json={"vocabulary": "cloud"}).json()["session_id"]
        for role, text in (("user", "Which EU regions support customer-managed encryption keys?"),
                           ("assistant", "Frankfurt and Dublin both support CMK for data at rest.")):
            assert c.post(f"/v1/sessions/{sid}/turns", json={"role": role, "content": text}).status_code == 200
    yield keyed_server, sid


def _error(r: httpx.Response, status: int, code: str | None = None, field: str | None = "?") -> dict[str, Any]:
    assert r.status_code == status, (r.status_code, r.text)
    body = r.json()
    assert set(body) == {"error"} and set(body["error"]) == {"code", "message", "field"}, body
    err: dict[str, Any] = body["error"]
    assert isinstance(err["message"], str) and len(err["message"]) > 5
    if code is not None:
        assert err["code"] == code, err
    if field != "?":
        assert err["field"] == field, err
    return err


def _snapshot(server: ServiceProcess, sid: str) -> Any:
    with server.client(ALPHA) as c:
        r = c.get(f"/v1/sessions/{sid}")
        assert r.status_code == 200
        return r.json()


TEN_MB = b'{"role": "user", "content": "' + b"a" * (10 * 1024 * 1024) + b'"}'

# (name, raw body or JSON value, status, code, field)
TURN_CASES: list[tuple[str, Any, int, str, str | None]] = [
    ("malformed", b'{"role": "user", "content": ', 400, "malformed_json", None),
    ("trailing garbage", b'{"role": "user", "content": "hi"} x', 400, "malformed_json", None),
    ("empty body", b"", 400, "malformed_json", None),
    ("NaN", b'{"role": "user", "content": NaN}', 400, "malformed_json", None),
    ("deep nesting", b"[" * 100_000 + b"]" * 100_000, 400, "malformed_json", None),
    ("huge integer", b'{"role": "user", "content": ' + b"9" * 5000 + b"}", 400, "malformed_json", None),
    ("invalid utf-8", b'{"role": "user", "content": "caf\xe9 \xff"}', 400, "invalid_utf8", None),
    ("array body", [1, 2], 422, "invalid_body", None),
    ("string body", "hello", 422, "invalid_body", None),
    ("missing everything", {}, 422, "missing_field", "role"),
    ("missing content", {"role": "user"}, 422, "missing_field", "content"),
    ("content a number", {"role": "user", "content": 5}, 422, "invalid_field", "content"),
    ("content a list", {"role": "user", "content": ["a"]}, 422, "invalid_field", "content"),
    ("content null", {"role": "user", "content": None}, 422, "invalid_field", "content"),
    ("role a number", {"role": 1, "content": "hi"}, 422, "invalid_field", "role"),
    ("unknown role", {"role": "system", "content": "hi"}, 422, "invalid_field", "role"),
    ("role case", {"role": "User", "content": "hi"}, 422, "invalid_field", "role"),
    ("empty", {"role": "user", "content": ""}, 422, "empty", "content"),
    ("whitespace", {"role": "user", "content": " \t\n\u3000 "}, 422, "empty", "content"),
    ("empty assistant", {"role": "assistant", "content": ""}, 422, "empty", "content"),
    ("NUL", {"role": "user", "content": "is it \u0000 free?"}, 422, "invalid_character", "content"),
    ("escape sequence", {"role": "user", "content": "\u001b[31mred\u001b[0m"}, 422, "invalid_character",
     "content"),
    ("C1 control", {"role": "assistant", "content": "a\u0085b"}, 422, "invalid_character", "content"),
    ("lone surrogate", b'{"role": "user", "content": "x \\ud800 y"}', 422, "invalid_character", "content"),
    ("too long", {"role": "user", "content": "why " * 5000}, 422, "too_long", "content"),
    ("screen a string", {"role": "user", "content": "hi", "screen": "page"}, 422, "invalid_field", "screen"),
    ("screen title a number", {"role": "user", "content": "hi", "screen": {"page_title": 3}}, 422,
     "invalid_field", "screen.page_title"),
    ("screen control", {"role": "user", "content": "hi", "screen": {"site": "a\u0007"}}, 422,
     "invalid_character", "screen.site"),
    ("10 MB body", TEN_MB, 413, "too_large", None),
]


@pytest.mark.parametrize("case", TURN_CASES, ids=[c[0] for c in TURN_CASES])
def test_bad_turn_bodies(case: tuple[str, Any, int, str, str | None],
                         alpha_session: tuple[ServiceProcess, str]) -> None:
    server, sid = alpha_session
    _, body, status, code, field = case
    before = _snapshot(server, sid)
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    with server.client(ALPHA) as c:
        r = c.post(f"/v1/sessions/{sid}/turns", content=raw, headers={"Content-Type": "application/json"})
    _error(r, status, code, field)
    assert _snapshot(server, sid) == before


def test_chunked_oversized_body_is_413(alpha_session: tuple[ServiceProcess, str]) -> None:
    server, sid = alpha_session
    before = _snapshot(server, sid)

    def chunks() -> Iterator[bytes]:  # no Content-Length: the limit is applied while reading
        for _ in range(40):
            yield b"a" * (256 * 1024)

    with server.client(ALPHA) as c:
        r = c.post(f"/v1/sessions/{sid}/turns", content=chunks())
    _error(r, 413, "too_large")
    assert _snapshot(server, sid) == before


def test_auth_failures(alpha_session: tuple[ServiceProcess, str]) -> None:
    server, sid = alpha_session
    before = _snapshot(server, sid)
    turn = {"role": "user", "content": "is it free?"}
    for headers, what in (({}, "missing"), ({"Authorization": "Bearer wrong-key"}, "wrong"),
                          ({"Authorization": f"Basic {ALPHA}"}, "scheme"), ({"Authorization": "Bearer"}, "empty"),
                          ({"Authorization": "Bearer key-alpha-012345678"}, "prefix of a key")):
        with httpx.Client(base_url=server.base_url, headers=headers) as c:
            for method, path, kw in (("POST", f"/v1/sessions/{sid}/turns", {"json": turn}),
                                     ("GET", f"/v1/sessions/{sid}", {}),
                                     ("DELETE", f"/v1/sessions/{sid}", {}),
                                     ("POST", "/v1/sessions", {"json": {}}),
                                     ("POST", "/v1/rewrite", {"json": {"id": "x", "follow_up": "hi"}})):
                r = c.request(method, path, **kw)
                err = _error(r, 401, "unauthorized")
                assert r.headers.get("www-authenticate") == "Bearer", what
                assert err["field"] == "Authorization"
    assert _snapshot(server, sid) == before
    # health, readiness and the OpenAPI document need no key
    with httpx.Client(base_url=server.base_url) as c:
        assert c.get("/healthz").status_code == 200
        assert c.get("/readyz").status_code == 200
        assert c.get("/openapi.json").json()["openapi"].startswith("3.")


def test_another_tenants_session_is_404(alpha_session: tuple[ServiceProcess, str]) -> None:
    server, sid = alpha_session
    before = _snapshot(server, sid)
    with server.client(BETA) as c:
        r_get = c.get(f"/v1/sessions/{sid}")
        r_post = c.post(f"/v1/sessions/{sid}/turns", json={"role": "user", "content": "hi there"})
        r_del = c.delete(f"/v1/sessions/{sid}")
        # indistinguishable from a session that does not exist
        r_none = c.get("/v1/sessions/" + "A" * 24)
    for r in (r_get, r_post, r_del, r_none):
        _error(r, 404, "session_not_found", "session_id")
    assert r_get.json()["error"]["message"].replace(sid, "X") == r_none.json()["error"]["message"].replace(
        "A" * 24, "X")
    assert _snapshot(server, sid) == before


@pytest.mark.parametrize("sid", ["A" * 24, "short", "x" * 500, "..%2F..%2Fetc", "a b", "{tag}", "ü" * 20])
def test_unknown_session_ids(sid: str, keyed_server: ServiceProcess) -> None:
    with keyed_server.client(ALPHA) as c:
        for method in ("GET", "DELETE"):
            r = c.request(method, f"/v1/sessions/{sid}")
            assert r.status_code == 404, (sid, r.text)
            _error(r, 404)
        _error(c.post(f"/v1/sessions/{sid}/turns", json={"role": "user", "content": "hi"}), 404)


def test_version_conflict(alpha_session: tuple[ServiceProcess, str]) -> None:
    server, sid = alpha_session
    before = _snapshot(server, sid)
    v = before["version"]
    with server.client(ALPHA) as c:
        turn = {"role": "user", "content": "and the RPO for Dublin?"}
        _error(c.post(f"/v1/sessions/{sid}/turns", json=turn, headers={"If-Match": f'"{v - 1}"'}),
               409, "version_conflict", "If-Match")
        _error(c.post(f"/v1/sessions/{sid}/turns", json=turn, headers={"If-Match": "soon"}),
               422, "invalid_field", "If-Match")
        assert _snapshot(server, sid) == before
        r = c.post(f"/v1/sessions/{sid}/turns", json=turn, headers={"If-Match": f'"{v}"'})
        assert r.status_code == 200 and r.json()["turn"] == v + 1
        assert r.headers["etag"] == f'"{v + 1}"'


@pytest.mark.parametrize("body,status,code,field", [
    (b'{"policy": ', 400, "malformed_json", None),
    ({"policy": "nonsense"}, 422, "invalid_field", "policy"),
    ({"policy": "window:x"}, 422, "invalid_field", "policy"),
    ({"policy": "window:-3"}, 422, "invalid_field", "policy"),
    ({"policy": "segment:bogus"}, 422, "invalid_field", "policy"),
    ({"policy": "full:3"}, 422, "invalid_field", "policy"),
    ({"policy": 3}, 422, "invalid_field", "policy"),
    ({"vocabulary": "../../etc/passwd"}, 422, "invalid_field", "vocabulary"),
    ({"vocabulary": "klingon"}, 422, "invalid_field", "vocabulary"),
    ([], 422, "invalid_body", None),
])
def test_bad_session_creation(body: Any, status: int, code: str, field: str | None,
                              keyed_server: ServiceProcess) -> None:
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    with keyed_server.client(ALPHA) as c:
        _error(c.post("/v1/sessions", content=raw), status, code, field)


@pytest.mark.parametrize("body,status,field", [
    (b'{"id": "a", "follow_up": ', 400, None),
    (b'{"id": "a", "follow_up": "\xff"}', 400, None),
    ({"follow_up": "is it free?"}, 422, "id"),
    ({"id": "a"}, 422, "follow_up"),
    ({"id": "a", "follow_up": "   "}, 422, "follow_up"),
    ({"id": "a", "follow_up": 7}, 422, "follow_up"),
    ({"id": "a", "follow_up": "hi", "prefix": [{"role": "robot", "content": "x"}]}, 422, "prefix.0.role"),
    ({"id": "a", "follow_up": "hi", "prefix": [{"role": "user"}]}, 422, "prefix.0.content"),
    ({"id": "a", "follow_up": "hi", "prefix": "nope"}, 422, "prefix"),
    ({"id": "a", "follow_up": "hi", "prefix": [{"role": "user", "content": "\u0000"}]}, 422, "prefix.0.content"),
    ({"id": "a", "follow_up": "hi", "prefix": [{"role": "user", "content": " "}]}, 422, "prefix.0.content"),
    ({"id": "a", "follow_up": "x" * 20_000}, 422, "follow_up"),
    ({"id": "a", "follow_up": "hi", "screen": {"page_url": 5}}, 422, "screen.page_url"),
    ([{"id": "a", "follow_up": "hi"}], 422, None),
])
def test_bad_rewrite_items(body: Any, status: int, field: str | None, keyed_server: ServiceProcess) -> None:
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    with keyed_server.client(ALPHA) as c:
        _error(c.post("/v1/rewrite", content=raw), status, None, field)


def test_a_long_follow_up_is_too_long_naming_the_limit(keyed_server: ServiceProcess) -> None:
    from turnscope._items import DEFAULT_MAX_MESSAGE_CHARS

    with keyed_server.client(ALPHA) as c:
        err = _error(c.post("/v1/rewrite", json={"id": "a", "follow_up": "x" * 20_000}), 422, "too_long",
                     "follow_up")
        assert str(DEFAULT_MAX_MESSAGE_CHARS) in err["message"]
        # a megabyte is refused by the body limit before it is read
        _error(c.post("/v1/rewrite", json={"id": "a", "follow_up": "x" * 1024 * 1024}), 413, "too_large")


def test_unknown_routes_and_methods(keyed_server: ServiceProcess) -> None:
    with keyed_server.client(ALPHA) as c:
        _error(c.get("/v2/everything"), 404, "no_route")
        _error(c.put("/v1/sessions"), 405, "method_not_allowed")
        _error(c.patch("/healthz"), 405, "method_not_allowed")
        _error(c.post("/v1/rewrite", params={"policy": "bogus"}, json={"id": "a", "follow_up": "hi"}),
               422, "invalid_field", "policy")


def test_no_tracebacks_logged(keyed_server: ServiceProcess) -> None:
    # every refusal above was decided on purpose, none by an exception escaping a handler
    assert KEYS and not keyed_server.server_errors()
