"""``turnscope train``: its options, and choices that fail before any training starts (they
must say what is wrong and how to mend it; the training itself is tested in tests/training)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from turnscope.cli._app import app

runner = CliRunner()

#: the options of experiments that never shipped (issue 30): gone, with the code behind them
REMOVED = ["--stack", "--reuse-synthetic", "--own-histories", "--generic", "--dropped", "--views", "--latent",
           "--shadow-floor", "--shadow-slots-only", "--gate-cast-weight", "--bag"]


def test_the_help_names_the_options_that_rebuild_the_shipped_models_and_no_other() -> None:
    result = runner.invoke(app, ["train", "--help"], env={"COLUMNS": "200", "TERMINAL_WIDTH": "200"})
    assert result.exit_code == 0
    for option in ("--data-root", "--output", "--seed", "--limit", "--no-cache", "--only"):
        assert option in result.output
    for option in REMOVED:
        assert option not in result.output


@pytest.mark.parametrize("option", REMOVED)
def test_a_removed_option_is_refused(option: str, tmp_path: Path) -> None:
    out = tmp_path / "resolver.txt"
    result = runner.invoke(app, ["train", "--only", "resolver", "--output", str(out), option])
    assert result.exit_code == 2
    assert "No such option" in result.output
    assert not out.exists()


def test_an_unknown_stage_names_the_choices() -> None:
    result = runner.invoke(app, ["train", "--only", "tagger"])
    assert result.exit_code == 2
    assert "all, shift, neural or resolver" in result.output


@pytest.mark.parametrize(("flags", "expected"), [
    ([], {"seed": 13, "limit": None}),
    (["--seed", "7", "--limit", "20"], {"seed": 7, "limit": 20}),
])
def test_the_kept_options_reach_the_resolver_training(flags: list[str], expected: dict[str, object],
                                                       monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from turnscope._exceptions import DatasetError
    from turnscope.training import resolver as resolver_train

    seen: dict[str, object] = {}

    def fake(root: object, out: object, **kw: object) -> None:
        seen.update(kw, out=out)
        raise DatasetError("stopped before any training")

    monkeypatch.setattr(resolver_train, "train_resolver", fake)
    out = tmp_path / "r.txt"
    result = runner.invoke(app, ["train", "--only", "resolver", "--output", str(out), "--no-cache", *flags])
    assert result.exit_code == 1
    assert "stopped before any training" in result.output
    assert {k: seen[k] for k in expected} == expected
    assert seen["out"] == out and seen["cache"] is None


def test_the_tagger_stage_builds_the_shipped_data_kinds_only(monkeypatch: pytest.MonkeyPatch) -> None:
    from turnscope._exceptions import DatasetError
    from turnscope.training import neural_data

    seen: dict[str, object] = {}

    def fake(root: object, out: object, **kw: object) -> None:
        seen.update(kw)
        raise DatasetError("stopped before any training")

    monkeypatch.setattr(neural_data, "build_neural_data", fake)
    result = runner.invoke(app, ["train", "--only", "neural", "--seed", "5"])
    assert result.exit_code == 1
    assert "stopped before any training" in result.output
    assert seen == {"seed": 5}


def test_the_runtime_never_imports_the_training_package() -> None:
    # every command but ``train`` runs without it: a fresh interpreter loads the CLI and a session
    code = ("import sys, turnscope.cli\n"
            "from turnscope import Session\n"
            "s = Session(); s.user('What is lobular carcinoma?')\n"
            "print(sorted(m for m in sys.modules if m.startswith('turnscope.training')))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
