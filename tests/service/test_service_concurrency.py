"""32 clients at once against 2 workers: one shared session and one session each."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from _service_procs import RedisProcess, ServiceProcess, reference_outputs

CLIENTS = 32
TURNS_EACH = 5


def _client_turns(c: int) -> list[tuple[str, str]]:
    """Distinct texts, so every stored turn can be traced back to one request."""
    out = []
    for k in range(TURNS_EACH):
        if k % 2 == 0:
            out.append(("user", f"client {c} question {k}: what are the rate limits of the billing export API?"))
        else:
            out.append(("assistant", f"client {c} answer {k}: the billing export API allows {c + k} calls a minute."))
    return out


def _first_diff(got: list[dict[str, Any]], want: list[dict[str, Any]]) -> str:
    for i, (g, w) in enumerate(zip(got, want, strict=False)):
        if g != w:
            keys = sorted(k for k in set(g) | set(w) if g.get(k) != w.get(k))
            return f"turn {i + 1} differs in {keys}: got {[g.get(k) for k in keys]}, want {[w.get(k) for k in keys]}"
    return f"lengths {len(got)} != {len(want)}"


@pytest.mark.parametrize("store", ["sqlite", "redis"])
def test_32_clients_two_workers(store: str, tmp_path: Path) -> None:
    redis = RedisProcess(tmp_path / "redis") if store == "redis" else None
    url = redis.url if redis else "sqlite:" + str(tmp_path / "s.db")
    server = ServiceProcess(url, tmp_path / "srv", workers=2, extra=["--rate-limit", "0"])
    try:
        with server.client() as c:
            # with 2 workers Nagle's algorithm must be off: 20 sequential requests on one
            # connection would take 20 x ~40 ms (delayed ACKs) otherwise
            body = {"role": "user", "content": "hi"}
            c.post("/v1/_noop", json=body)
            t0 = time.perf_counter()
            for _ in range(20):
                assert c.post("/v1/_noop", json=body).status_code == 200
            assert time.perf_counter() - t0 < 0.5
            shared = c.post("/v1/sessions", json={"vocabulary": "cloud"}).json()["session_id"]
            own = [c.post("/v1/sessions", json={"vocabulary": "cloud"}).json()["session_id"]
                   for _ in range(CLIENTS)]
        barrier = threading.Barrier(CLIENTS)
        errors: list[str] = []
        shared_answers: dict[int, list[tuple[str, int]]] = {}
        own_answers: dict[int, list[dict[str, Any]]] = {}

        def client(i: int) -> None:
            # a connection per client, no retries: a refused or reset request is an error
            with httpx.Client(base_url=server.base_url, timeout=120) as h:
                barrier.wait()
                mine: list[tuple[str, int]] = []
                answers: list[dict[str, Any]] = []
                for role, text in _client_turns(i):
                    for sid, sink in ((shared, "shared"), (own[i], "own")):
                        try:
                            r = h.post(f"/v1/sessions/{sid}/turns", json={"role": role, "content": text})
                        except httpx.HTTPError as exc:
                            errors.append(f"client {i}: {type(exc).__name__}: {exc}")
                            return
                        if r.status_code != 200:
                            errors.append(f"client {i}: {r.status_code} {r.text}")
                            return
                        if sink == "shared":
                            mine.append((text, r.json()["turn"]))
                        else:
                            answers.append(r.json())
                shared_answers[i] = mine
                own_answers[i] = answers

        threads = [threading.Thread(target=client, args=(i,)) for i in range(CLIENTS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=180)
        assert not any(t.is_alive() for t in threads)
        assert errors == []

        with server.client() as c:
            view = c.get(f"/v1/sessions/{shared}").json()
            turns = view["turns"]
            # every accepted turn exactly once, numbered 1..n without a gap
            assert view["version"] == len(turns) == CLIENTS * TURNS_EACH
            assert [t["turn"] for t in turns] == list(range(1, len(turns) + 1))
            texts = [t["content"] for t in turns]
            expected = {text for i in range(CLIENTS) for _, text in _client_turns(i)}
            assert len(set(texts)) == len(texts) and set(texts) == expected
            position = {t["content"]: t["turn"] for t in turns}
            for i in range(CLIENTS):
                # each client's turns in its own order, at the number it was answered with
                assert [position[text] for text, _ in shared_answers[i]] == [n for _, n in shared_answers[i]]
                nums = [n for _, n in shared_answers[i]]
                assert nums == sorted(nums)
            # the interleaved order the store settled on gives, replayed by the library in one
            # process, exactly the rewrites the two workers answered and stored
            order = [(t["role"], t["content"]) for t in turns]
            ref = reference_outputs(order)
            stored = [{**t["rewrite"], "turn": t["turn"]} if "rewrite" in t else {"turn": t["turn"]}
                      for t in turns]
            assert stored == ref, _first_diff(stored, ref)

            for i in (0, 7, CLIENTS - 1):
                v = c.get(f"/v1/sessions/{own[i]}").json()
                assert [(t["role"], t["content"]) for t in v["turns"]] == _client_turns(i)
                assert own_answers[i] == reference_outputs(_client_turns(i)), \
                    _first_diff(own_answers[i], reference_outputs(_client_turns(i)))
            for i in range(CLIENTS):
                v = c.get(f"/v1/sessions/{own[i]}").json()
                assert [(t["role"], t["content"]) for t in v["turns"]] == _client_turns(i)
        assert not server.server_errors()
    finally:
        server.stop()
        if redis:
            redis.stop()
