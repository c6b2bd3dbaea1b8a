"""SPEC section 1 over HTTP; durability across restarts; two processes on one Redis."""

from __future__ import annotations

from pathlib import Path

import pytest
from _service_procs import (
    SPEC_CONVERSATION,
    RedisProcess,
    ServiceProcess,
    reference_outputs,
    run_conversation,
)

from turnscope.evaluation import check_terms

STALE = ["Dublin", "eu-west-1", "SLA", "encryption"]


@pytest.mark.parametrize("which", ["sqlite_server", "redis_server"])
def test_spec_conversation_over_http(which: str, request: pytest.FixtureRequest) -> None:
    server: ServiceProcess = request.getfixturevalue(which)
    with server.client() as c:
        r = c.post("/v1/sessions", json={"policy": "default", "vocabulary": "cloud"})
        assert r.status_code == 201, r.text
        sid = r.json()["session_id"]
        assert len(sid) >= 24
        outs = run_conversation(c, sid, SPEC_CONVERSATION)

        # turn 3 resolves "the second one" to Dublin; turn 7 carries no Dublin over
        assert outs[2]["turn"] == 3 and "Dublin" in outs[2]["query"], outs[2]
        assert "second one" not in outs[2]["query"]
        check = check_terms(outs[6]["query"], ["billing export"], STALE)
        assert check.covered and not check.contaminated, outs[6]["query"]
        # an assistant turn answers its number only; a user turn the SPEC section 4 output
        assert outs[1] == {"turn": 2}
        for key in ("query", "reference_class", "topic_shift", "entities", "scope", "backend",
                    "fallback", "fallback_reason"):
            assert key in outs[6]
        # exactly what the library answers in one process
        assert outs == reference_outputs(SPEC_CONVERSATION)

        view = c.get(f"/v1/sessions/{sid}")
        assert view.status_code == 200
        v = view.json()
        assert v["session_id"] == sid and v["version"] == 7
        assert [(t["role"], t["content"]) for t in v["turns"]] == SPEC_CONVERSATION
        assert all(t["screen"] is None for t in v["turns"])
        assert v["turns"][2]["rewrite"]["query"] == outs[2]["query"]  # the rewrite is stored too
        assert any(s["name"] == "billing export API" and s["status"] == "live" for s in v["slots"])
        assert view.headers["etag"] == '"7"'

        assert c.delete(f"/v1/sessions/{sid}").status_code == 204
        gone = c.get(f"/v1/sessions/{sid}")
        assert gone.status_code == 404 and gone.json()["error"]["code"] == "session_not_found"
    assert not server.server_errors()


def test_screen_is_stored_and_used(sqlite_server: ServiceProcess) -> None:
    with sqlite_server.client() as c:
        sid = c.post("/v1/sessions").json()["session_id"]  # no body: the defaults
        screen = {"page_title": "Billing export API reference", "page_url": "https://docs.example/billing",
                  "site": "docs.example"}
        r = c.post(f"/v1/sessions/{sid}/turns", json={"role": "user", "content": "what's on this page?",
                                                       "screen": screen})
        assert r.status_code == 200, r.text
        assert r.json()["reference_class"] == "situational_page"
        assert "Billing export" in r.json()["query"]
        assert c.get(f"/v1/sessions/{sid}").json()["turns"][0]["screen"] == screen


def test_stateless_rewrite(sqlite_server: ServiceProcess) -> None:
    prefix = [{"role": r, "content": t} for r, t in SPEC_CONVERSATION[:-1]]
    item = {"id": "fu_0211", "prefix": prefix, "follow_up": SPEC_CONVERSATION[-1][1], "extra": "ignored"}
    with sqlite_server.client() as c:
        r = c.post("/v1/rewrite", json=item, params={"vocabulary": "cloud"})
        assert r.status_code == 200, r.text
        out = r.json()
        assert out["id"] == "fu_0211"
        assert "Dublin" not in out["query"] and "billing export" in out["query"].lower()
        ref = reference_outputs(SPEC_CONVERSATION)[-1]
        ref.pop("turn")
        assert out == {"id": "fu_0211", **ref}


def _restart_run(server: ServiceProcess, redis: RedisProcess | None = None) -> None:
    with server.client() as c:
        sid = c.post("/v1/sessions", json={"vocabulary": "cloud"}).json()["session_id"]
        first = run_conversation(c, sid, SPEC_CONVERSATION[:3])
    # a crash, not a clean shutdown: every process of the server (and Redis) is SIGKILLed
    server.stop(kill=True)
    if redis is not None:
        redis.stop(kill=True)
        redis.start()
    server.start()
    with server.client() as c:
        v = c.get(f"/v1/sessions/{sid}").json()
        assert [(t["role"], t["content"]) for t in v["turns"]] == SPEC_CONVERSATION[:3]
        rest = run_conversation(c, sid, SPEC_CONVERSATION[3:])
        # the restarted server rebuilt the scope state from the stored turns: same rewrites
        assert first + rest == reference_outputs(SPEC_CONVERSATION)
        assert "Dublin" not in rest[-1]["query"]
        assert c.get(f"/v1/sessions/{sid}").json()["version"] == 7


def test_restart_mid_conversation_sqlite(tmp_path: Path) -> None:
    server = ServiceProcess("sqlite:" + str(tmp_path / "s.db"), tmp_path / "srv")
    try:
        _restart_run(server)
    finally:
        server.stop()


def test_restart_mid_conversation_redis(tmp_path: Path) -> None:
    redis = RedisProcess(tmp_path / "redis", appendonly=True)
    server = ServiceProcess(redis.url, tmp_path / "srv")
    try:
        _restart_run(server, redis)
    finally:
        server.stop()
        redis.stop()


def test_two_processes_on_one_redis_alternate(tmp_path: Path, redis_proc: RedisProcess,
                                               redis_server: ServiceProcess) -> None:
    a = ServiceProcess(redis_proc.url, tmp_path / "a")
    b = ServiceProcess(redis_proc.url, tmp_path / "b")
    try:
        with a.client() as ca, b.client() as cb:
            sid = ca.post("/v1/sessions", json={"vocabulary": "cloud"}).json()["session_id"]
            outs = []
            for i, (role, text) in enumerate(SPEC_CONVERSATION * 2):
                c = ca if i % 2 == 0 else cb  # each process sees only every other turn arrive
                r = c.post(f"/v1/sessions/{sid}/turns", json={"role": role, "content": text})
                assert r.status_code == 200, r.text
                outs.append(r.json())
        with redis_server.client() as one:
            sid1 = one.post("/v1/sessions", json={"vocabulary": "cloud"}).json()["session_id"]
            single = run_conversation(one, sid1, SPEC_CONVERSATION * 2)
        assert outs == single
        assert outs == reference_outputs(SPEC_CONVERSATION * 2)
    finally:
        a.stop()
        b.stop()
