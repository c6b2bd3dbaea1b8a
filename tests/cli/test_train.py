"""``turnscope train`` choices that fail before any training starts: they must say what is
wrong and how to mend it (the training itself is tested in tests/resolver)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from turnscope.cli import _train
from turnscope.cli._app import app
from turnscope.resolver._ranker import Shadow

runner = CliRunner()


def test_an_unknown_stage_names_the_choices() -> None:
    result = runner.invoke(app, ["train", "--only", "tagger"])
    assert result.exit_code == 2
    assert "all, shift, neural or resolver" in result.output


def test_a_stacked_tagger_without_its_fold_taggers_stops_the_resolver_training(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    models = tmp_path / "models"
    (models / "neural").mkdir(parents=True)
    (models / "neural" / "tagger.json").write_text(
        json.dumps({"stacked": {"folds": 5, "fold_dir": str(tmp_path / "gone")}}), encoding="utf-8")
    monkeypatch.setattr(_train, "PACKAGE_MODELS", models)
    out = tmp_path / "resolver.txt"
    result = runner.invoke(app, ["train", "--only", "resolver", "--output", str(out), "--no-cache"])
    assert result.exit_code == 1
    assert "fold taggers" in result.output and "--only neural" in result.output
    assert not out.exists()


@pytest.mark.parametrize(("flags", "expected"), [
    ([], {"generic": False, "dropped": False, "views": False}),
    (["--generic", "--dropped", "--views"], {"generic": True, "dropped": True, "views": True}),
])
def test_the_tagger_data_kinds_reach_the_generator(flags: list[str], expected: dict[str, bool],
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    from turnscope._exceptions import DatasetError
    from turnscope.resolver import _neural_data

    seen: dict[str, object] = {}

    def fake(root: object, out: object, **kw: object) -> None:
        seen.update(kw)
        raise DatasetError("stopped before any training")

    monkeypatch.setattr(_neural_data, "build_neural_data", fake)
    result = runner.invoke(app, ["train", "--only", "neural", *flags])
    assert result.exit_code == 1
    assert "stopped before any training" in result.output
    assert {k: seen[k] for k in expected} == expected


@pytest.mark.parametrize("flags", [["--latent", "some"], ["--latent", "own"]])
def test_a_latent_mode_it_cannot_train_names_the_choices(flags: list[str], tmp_path: Path) -> None:
    out = tmp_path / "resolver.txt"
    result = runner.invoke(app, ["train", "--only", "resolver", "--output", str(out), *flags])
    assert result.exit_code == 2
    assert "none, all or own (own with --own-histories)" in result.output
    assert not out.exists()


@pytest.mark.parametrize(("flags", "expected"), [
    ([], {"latent": "none", "own_histories": False, "shadow": None}),
    (["--latent", "all"], {"latent": "all", "own_histories": False}),
    (["--own-histories", "--latent", "own"], {"latent": "own", "own_histories": True}),
    (["--own-histories", "--shadow-floor", "0.5"], {"shadow": Shadow(0.5), "own_histories": True}),
    (["--own-histories", "--shadow-floor", "0.5", "--shadow-slots-only"],
     {"shadow": Shadow(0.5, slots_only=True), "own_histories": True}),
    ([], {"bag": 1}),
    (["--bag", "5"], {"bag": 5}),
])
def test_the_latent_mode_reaches_the_resolver_training(flags: list[str], expected: dict[str, object],
                                                       monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from turnscope._exceptions import DatasetError
    from turnscope.resolver import _train as resolver_train

    seen: dict[str, object] = {}

    def fake(root: object, out: object, **kw: object) -> None:
        seen.update(kw)
        raise DatasetError("stopped before any training")

    monkeypatch.setattr(resolver_train, "train_resolver", fake)
    result = runner.invoke(app, ["train", "--only", "resolver", "--output", str(tmp_path / "r.txt"), *flags])
    assert result.exit_code == 1
    assert "stopped before any training" in result.output
    assert {k: seen[k] for k in expected} == expected


@pytest.mark.parametrize(("flags", "message"), [
    (["--shadow-floor", "0.5"], "needs --own-histories"),
    (["--bag", "0"], "--bag"),
])
def test_a_resolver_option_it_cannot_train_is_refused(flags: list[str], message: str, tmp_path: Path) -> None:
    out = tmp_path / "resolver.txt"
    result = runner.invoke(app, ["train", "--only", "resolver", "--output", str(out), *flags])
    assert result.exit_code == 2
    assert message in result.output
    assert not out.exists()
