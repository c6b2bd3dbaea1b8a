"""Fixtures of the service tests: real ``turnscope serve`` and ``redis-server`` processes,
each on a free loopback port, each stopped by its own process id at the end."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from _service_procs import KEYS, RedisProcess, ServiceProcess


@pytest.fixture(scope="session")
def service_tmp(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("service")


@pytest.fixture(scope="session")
def redis_proc(service_tmp: Path) -> Iterator[RedisProcess]:
    r = RedisProcess(service_tmp / "redis")
    yield r
    r.stop()


@pytest.fixture(scope="session")
def sqlite_server(service_tmp: Path) -> Iterator[ServiceProcess]:
    """One worker, SQLite, no keys (the default configuration, on a free port)."""
    s = ServiceProcess("sqlite:" + str(service_tmp / "plain.db"), service_tmp / "plain")
    yield s
    s.stop()


@pytest.fixture(scope="session")
def redis_server(service_tmp: Path, redis_proc: RedisProcess) -> Iterator[ServiceProcess]:
    s = ServiceProcess(redis_proc.url, service_tmp / "redis-one")
    yield s
    s.stop()


@pytest.fixture(scope="session")
def keyed_server(service_tmp: Path) -> Iterator[ServiceProcess]:
    """SQLite with API keys for three tenants."""
    s = ServiceProcess("sqlite:" + str(service_tmp / "keyed.db"), service_tmp / "keyed", keys=KEYS)
    yield s
    s.stop()


