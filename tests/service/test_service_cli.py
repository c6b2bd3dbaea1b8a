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
    import turnscope.service as service_surface  # the CLI reaches uvicorn through this surface

    seen: dict[str, Any] = {}

    def fake_run(target: str, **kwargs: Any) -> None:
        import os

        seen.update(kwargs, target=target, config=ServiceConfig.from_json(os.environ[CONFIG_ENV]))

    monkeypatch.setattr(service_surface, "run_uvicorn", fake_run)
    monkeypatch.delenv(CONFIG_ENV, raising=False)
    return seen


def test_defaults(captured: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    start = tmp_path / "start"
    start.mkdir()
    monkeypatch.chdir(start)
    monkeypatch.delenv("TURNSCOPE_STATE", raising=False)
    # platformdirs puts the per-user data folder under $XDG_DATA_HOME on Linux
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    r = CliRunner().invoke(app, ["serve"])
    assert r.exit_code == 0, r.output
    assert captured["host"] == "127.0.0.1" and captured["port"] == 8080 and captured["workers"] == 1
    assert captured["target"] == "turnscope.service._app:app_from_env"
    cfg: ServiceConfig = captured["config"]
    expected = (tmp_path / "data" / "turnscope" / "sessions.db").resolve()
    assert cfg.store == "sqlite:" + str(expected)
    assert cfg.keys is None
    assert expected.exists()  # the data folder was created for it
    assert list(start.iterdir()) == []  # nothing written where serve started


def test_a_missing_store_folder_other_than_the_default_is_an_error(
        captured: dict[str, Any], tmp_path: Path) -> None:
    r = CliRunner().invoke(app, ["serve", "--store", f"sqlite:{tmp_path / 'nope' / 's.db'}"],
                           env={"COLUMNS": "1000"})
    assert r.exit_code == 2
    assert "does not exist" in " ".join(r.output.split())
    assert not (tmp_path / "nope").exists()


def test_help_names_the_default_store() -> None:
    r = CliRunner().invoke(app, ["serve", "--help"], env={"COLUMNS": "300"})
    assert r.exit_code == 0
    assert "sessions.db" in r.output and "per-user data folder" in r.output


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
