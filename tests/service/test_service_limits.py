"""Limits: turns per session, message length, body size, requests per key, session TTL."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from _service_procs import KEYS, ServiceProcess

ALPHA, BETA, GAMMA = "key-alpha-0123456789", "key-beta-0123456789", "key-gamma-0123456789"


@pytest.fixture(scope="module")
def limited(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServiceProcess]:
    d: Path = tmp_path_factory.mktemp("limited")
    s = ServiceProcess("sqlite:" + str(d / "s.db"), d, keys=KEYS,
                       extra=["--max-turns", "4", "--max-message", "200", "--max-body", "4096",
                              "--rate-limit", "40/600", "--ttl", "3"])
    yield s
    s.stop()


def test_turns_per_session_is_409_session_full(limited: ServiceProcess) -> None:
    with limited.client(ALPHA) as c:
        sid = c.post("/v1/sessions").json()["session_id"]
        for i in range(4):
            role = "user" if i % 2 == 0 else "assistant"
            assert c.post(f"/v1/sessions/{sid}/turns", json={"role": role, "content": f"message {i}"}
                          ).status_code == 200
        r = c.post(f"/v1/sessions/{sid}/turns", json={"role": "user", "content": "one more?"})
        assert r.status_code == 409 and r.json()["error"]["code"] == "session_full"
        assert "4" in r.json()["error"]["message"]
        assert c.get(f"/v1/sessions/{sid}").json()["version"] == 4
        # a stateless item with a prefix at the limit is refused too
        item = {"id": "x", "follow_up": "hi", "prefix": [{"role": "user", "content": "a"}] * 4}
        r = c.post("/v1/rewrite", json=item)
        assert r.status_code == 422 and r.json()["error"]["field"] == "prefix"


def test_message_length_and_body_size(limited: ServiceProcess) -> None:
    with limited.client(ALPHA) as c:
        sid = c.post("/v1/sessions").json()["session_id"]
        r = c.post(f"/v1/sessions/{sid}/turns", json={"role": "user", "content": "x" * 201})
        assert r.status_code == 422 and r.json()["error"]["code"] == "too_long"
        assert r.json()["error"]["field"] == "content"
        assert c.post(f"/v1/sessions/{sid}/turns", json={"role": "user", "content": "x" * 200}).status_code == 200
        r = c.post(f"/v1/sessions/{sid}/turns",
                   json={"role": "user", "content": "hi", "screen": {"page_title": "t" * 4100}})
        assert r.status_code == 413 and r.json()["error"]["code"] == "too_large"
        assert c.get(f"/v1/sessions/{sid}").json()["version"] == 1


def test_rate_limit_per_key(limited: ServiceProcess) -> None:
    with limited.client(GAMMA) as c:
        codes = [c.get("/v1/sessions/" + "A" * 24).status_code for _ in range(40)]
        assert codes == [404] * 40
        r = c.get("/v1/sessions/" + "A" * 24)
        assert r.status_code == 429
        assert r.json()["error"]["code"] == "rate_limited"
        assert int(r.headers["retry-after"]) >= 1
        assert c.post("/v1/sessions").status_code == 429
    with limited.client(BETA) as other:  # another key has its own budget
        assert other.post("/v1/sessions").status_code == 201


def test_idle_session_expires(limited: ServiceProcess) -> None:
    with limited.client(ALPHA) as c:
        sid = c.post("/v1/sessions").json()["session_id"]
        assert c.post(f"/v1/sessions/{sid}/turns", json={"role": "user", "content": "hello"}).status_code == 200
        time.sleep(1.5)
        # a turn refreshes the TTL
        assert c.post(f"/v1/sessions/{sid}/turns", json={"role": "assistant", "content": "hi"}).status_code == 200
        time.sleep(2.0)
        assert c.get(f"/v1/sessions/{sid}").status_code == 200
        time.sleep(1.5)
        r = c.get(f"/v1/sessions/{sid}")
        assert r.status_code == 404 and r.json()["error"]["code"] == "session_not_found"
        assert c.post(f"/v1/sessions/{sid}/turns", json={"role": "user", "content": "x"}).status_code == 404
