"""``turnscope --version`` prints the installed version."""

from __future__ import annotations

from importlib.metadata import version

from typer.testing import CliRunner

from turnscope.cli import app


def test_version_flag_prints_the_installed_version() -> None:
    out = CliRunner().invoke(app, ["--version"])
    assert out.exit_code == 0
    assert out.output.strip() == f"turnscope {version('turnscope')}"
