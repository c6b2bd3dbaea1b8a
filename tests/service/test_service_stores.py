"""The two stores directly: the append contract, TTL, and check-and-write atomicity across
processes (several processes racing on one session through the store alone)."""

from __future__ import annotations

import multiprocessing as mp
import secrets
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from _service_procs import RedisProcess

from turnscope.service import (
    NotFound,
    ServiceConfig,
    SessionMeta,
    SessionStore,
    SQLiteStore,
    StoredTurn,
    VersionConflict,
    open_store,
)
from turnscope.service._config import ApiKeys, Limits
from turnscope.service._redis import RedisStore


@pytest.fixture(params=["sqlite", "redis"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield "sqlite:" + str(tmp_path / "s.db")
    else:
        r: RedisProcess = request.getfixturevalue("redis_proc")
        yield r.url


def _turn(i: int, text: str = "x") -> StoredTurn:
    return StoredTurn(i, "user", text, None, {"query": text}, [], secrets.token_hex(4), time.time())


def _meta(sid: str) -> SessionMeta:
    return SessionMeta(sid, "t", "default", "bundled", time.time())


def test_append_contract(store_url: str) -> None:
    store = open_store(store_url, ttl_seconds=60)
    assert isinstance(store, SessionStore)
    sid = secrets.token_urlsafe(18)
    store.create(_meta(sid))
    assert store.load(sid).version == 0  # type: ignore[union-attr]
    assert store.append(sid, 0, _turn(1, "a")) == 1
    assert store.append(sid, 1, _turn(2, "b")) == 2
    with pytest.raises(VersionConflict):
        store.append(sid, 1, _turn(2, "stale"))
    rec = store.load(sid)
    assert rec is not None and rec.version == 2 and [t.content for t in rec.turns] == ["a", "b"]
    since = store.load(sid, since=1)
    assert since is not None and [t.content for t in since.turns] == ["b"]
    with pytest.raises(NotFound):
        store.append("A" * 24, 0, _turn(1))
    assert store.delete(sid) and store.load(sid) is None and not store.delete(sid)
    store.ping()
    store.close()


def test_ttl(store_url: str) -> None:
    store = open_store(store_url, ttl_seconds=1)
    sid = secrets.token_urlsafe(18)
    store.create(_meta(sid))
    store.append(sid, 0, _turn(1))
    assert store.load(sid) is not None
    time.sleep(1.3)
    assert store.load(sid) is None
    with pytest.raises(NotFound):
        store.append(sid, 1, _turn(2))


def _racer(url: str, sid: str, worker: int, n: int) -> None:
    store = open_store(url, ttl_seconds=600)
    for k in range(n):
        while True:  # optimistic: read the version, write if unchanged, else read again
            rec = store.load(sid)
            assert rec is not None
            try:
                store.append(sid, rec.version, StoredTurn(rec.version + 1, "user", f"{worker}:{k}", None, None,
                                                          [], f"{worker}-{k}"))
                break
            except VersionConflict:
                continue


def test_processes_racing_on_one_session(store_url: str) -> None:
    store = open_store(store_url, ttl_seconds=600)
    sid = secrets.token_urlsafe(18)
    store.create(_meta(sid))
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=_racer, args=(store_url, sid, w, 30)) for w in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=120)
        assert p.exitcode == 0
    rec = store.load(sid)
    assert rec is not None and rec.version == 120
    assert [t.index for t in rec.turns] == list(range(1, 121))
    texts = [t.content for t in rec.turns]
    assert len(set(texts)) == 120
    for w in range(4):
        mine = [int(t.split(":")[1]) for t in texts if t.startswith(f"{w}:")]
        assert mine == list(range(30))


def test_store_urls_and_config(tmp_path: Path) -> None:
    from turnscope import ConfigError

    assert isinstance(open_store("sqlite:" + str(tmp_path / "a.db"), ttl_seconds=5), SQLiteStore)
    assert isinstance(open_store("sqlite://" + str(tmp_path / "b.db"), ttl_seconds=5), SQLiteStore)
    assert isinstance(open_store("redis://127.0.0.1:1/0", ttl_seconds=5), RedisStore)  # connects lazily
    for bad in ("mysql://x", "sqlite:", "sqlite:" + str(tmp_path / "missing" / "x.db"), "sqlite:" + str(tmp_path)):
        with pytest.raises(ConfigError):
            open_store(bad, ttl_seconds=5)
    with pytest.raises(ConfigError):
        ApiKeys.parse("only-one-field\n")
    with pytest.raises(ConfigError):
        ApiKeys.parse("# nothing\n")
    with pytest.raises(ConfigError):
        Limits(max_turns=0)
    keys = ApiKeys.parse("k1 acme\nk2 globex\n")
    cfg = ServiceConfig(store="sqlite:/x.db", keys=keys, limits=Limits(rate_requests=0))
    back = ServiceConfig.from_json(cfg.to_json())
    assert back == cfg and back.keys is not None and back.keys.tenant_of("k2") == "globex"
    assert "k1" not in cfg.to_json()  # only digests travel to the workers
