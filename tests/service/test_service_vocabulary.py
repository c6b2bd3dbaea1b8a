"""The service declares no vocabulary unless told: ``turnscope serve --vocabulary`` sets
the default of sessions that name none, and a client may name a shipped one."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from turnscope.cli import app
from turnscope.entities import bundled_vocabulary
from turnscope.service import CONFIG_ENV, Engine, InvalidField, ServiceConfig, open_store


@pytest.fixture
def captured(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    import turnscope.service as service_surface  # the CLI reaches uvicorn through this surface

    seen: dict[str, Any] = {}

    def fake_run(target: str, **kwargs: Any) -> None:
        seen["config"] = ServiceConfig.from_json(os.environ[CONFIG_ENV])

    monkeypatch.setattr(service_surface, "run_uvicorn", fake_run)
    monkeypatch.delenv(CONFIG_ENV, raising=False)
    return seen


def test_serve_declares_no_vocabulary_by_default(captured: dict[str, Any], tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("TURNSCOPE_STATE", raising=False)
    r = CliRunner().invoke(app, ["serve"])
    assert r.exit_code == 0, r.output
    assert captured["config"].default_vocabulary == "none"
    assert ServiceConfig().default_vocabulary == "none"


def test_serve_vocabulary_option(captured: dict[str, Any], tmp_path: Path,
                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(app, ["serve", "--vocabulary", "bundled:ja-site"])
    assert r.exit_code == 0, r.output
    assert captured["config"].default_vocabulary == "bundled:ja-site"


def test_serve_refuses_an_unknown_vocabulary(captured: dict[str, Any], tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(app, ["serve", "--vocabulary", "bundled:nope"])
    assert r.exit_code == 2, r.output
    assert "bundled:cloud" in r.output and "bundled:ja-site" in r.output
    assert not captured


def test_engine_names(tmp_path: Path) -> None:
    cfg = ServiceConfig(store=f"sqlite:{tmp_path / 's.db'}")
    eng = Engine(open_store(cfg.store, ttl_seconds=60), cfg)
    assert eng.vocabulary(cfg.default_vocabulary) is None
    cloud = eng.vocabulary("bundled:cloud")
    assert cloud is not None and cloud.types == bundled_vocabulary("cloud").types
    # the CLI's spelling and the file's name are the same vocabulary
    ja = eng.vocabulary("bundled:ja-site")
    assert ja is not None and ja.types == bundled_vocabulary("ja_site").types
    with pytest.raises(InvalidField, match="bundled:ja-site"):
        eng.vocabulary("bundled:nope")
