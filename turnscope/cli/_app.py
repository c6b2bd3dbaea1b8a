"""The typer application every command registers on."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

import typer

app = typer.Typer(
    name="turnscope",
    help="Scope-aware query contextualization for conversational retrieval.",
    no_args_is_help=True,
    add_completion=False,
    # plain help: rich's option tables cut long option names and defaults at 80 columns
    # ("--resolver-thre…") and show a "<bool>" column; click's wraps every line whole
    rich_markup_mode=None,
)


def _version(value: bool) -> None:
    if not value:
        return
    try:
        typer.echo(f"turnscope {version('turnscope')}")
    except PackageNotFoundError:  # pragma: no cover - run from a source tree never installed
        typer.echo("turnscope (not installed)")
    raise typer.Exit()


@app.callback()
def _root(
    show_version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                      help="Print the installed version and exit."),
) -> None:
    """Scope-aware query contextualization for conversational retrieval."""
