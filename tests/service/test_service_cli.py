"""``turnscope serve`` options: the defaults (loopback, SQLite in the working directory or
$TURNSCOPE_STATE, no keys) and clear errors for bad options."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from turnscope.cli import app
from turnscope.service import CONFIG_ENV, ServiceConfig


@pytest.fixture
def captured(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """What `serve` hands uvicorn (the server itself is started for real by the other tests)."""
    from turnscope.service import _uvicorn

    seen: dict[str, Any] = {}

    def fake_run(target: str, **kwargs: Any) -> None:
        import os

        seen.update(kwargs, target=target, config=ServiceConfig.from_json(os.environ[CONFIG_ENV]))

    monkeypatch.setattr(_uvicorn, "run_uvicorn", fake_run)
    monkeypatch.delenv(CONFIG_ENV, raising=False)
    return seen


def test_defaults(captured: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("TURNSCOPE_STATE", raising=False)
    r = CliRunner().invoke(app, ["serve"])
    assert r.exit_code == 0, r.output
    assert captured["host"] == "127.0.0.1" and captured["port"] == 8080 and captured["workers"] == 1
    assert captured["target"] == "turnscope.service._app:app_from_env"
    cfg: ServiceConfig = captured["config"]
    assert cfg.store == "sqlite:" + str((tmp_path / "turnscope-sessions.db").resolve())
    assert cfg.keys is None
    assert (tmp_path / "turnscope-sessions.db").exists()


def test_state_env_and_options(captured: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TURNSCOPE_STATE", str(tmp_path / "state.db"))
    keys = tmp_path / "keys.txt"
    keys.write_text("secret-1 acme\n", encoding="utf-8")
    r = CliRunner().invoke(app, ["serve", "--port", "9999", "--workers", "3", "--keys", str(keys),
                                 "--rate-limit", "10/5", "--max-turns", "7", "--ttl", "30"])
    assert r.exit_code == 0, r.output
    cfg: ServiceConfig = captured["config"]
    assert cfg.store == "sqlite:" + str(tmp_path / "state.db")
    assert captured["workers"] == 3 and captured["port"] == 9999
    assert cfg.keys is not None and cfg.keys.tenant_of("secret-1") == "acme"
    assert "secret-1" not in json.dumps(captured["config"].to_json())
    assert (cfg.limits.rate_requests, cfg.limits.rate_window, cfg.limits.max_turns, cfg.ttl_seconds) == (10, 5.0, 7, 30)


@pytest.mark.parametrize("args,needle", [
    (["--store", "postgres://x"], "unknown store"),
    (["--store", "sqlite:/no/such/folder/x.db"], "does not exist"),
    (["--store", "redis://127.0.0.1:1/0"], "session store error"),
    (["--keys", "/no/such/keys.txt"], "cannot read keys file"),
    (["--rate-limit", "lots"], "N/SECONDS"),
    (["--workers", "0"], "--workers"),
])
def test_bad_options(args: list[str], needle: str, captured: dict[str, Any], tmp_path: Path,
                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(app, ["serve", *args])
    assert r.exit_code == 2, r.output
    assert needle in r.output
    assert "Traceback" not in r.output and not captured
