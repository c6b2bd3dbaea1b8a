"""``turnscope datasets``: convert public sets into follow-up items."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from turnscope._exceptions import TurnscopeError
from turnscope.cli._app import app

datasets_app = typer.Typer(help="Convert public data sets into follow-up items (docs/benchmarks.md).",
                           no_args_is_help=True, rich_markup_mode=None)
app.add_typer(datasets_app, name="datasets", short_help="Convert public data sets into follow-up items.")


def _write(items: list[dict[str, object]], output: Path | None) -> None:
    lines = "".join(json.dumps(it, ensure_ascii=False) + "\n" for it in items)
    if output is None:
        typer.echo(lines, nl=False)
        return
    try:
        output.write_text(lines, encoding="utf-8")
    except OSError as exc:
        Console(stderr=True).print(f"error: cannot write {output}: {exc.strerror}", markup=False,
                                   highlight=False)
        raise typer.Exit(1) from None
    Console(stderr=True).print(f"wrote {len(items)} items to {output}", markup=False, highlight=False)


@datasets_app.command("canard", short_help="CANARD dev -> follow-up items.")
def canard(
    output: Annotated[Path | None, typer.Option("--output", "-o")] = None,
    data_root: Annotated[Path | None, typer.Option(
        help="Folder holding canard/ (default: $TURNSCOPE_DATA or ../shared/data).")] = None,
) -> None:
    """CANARD dev (QuAC dialogues, answers as responses) -> follow-up items."""
    from turnscope.datasets import load_canard

    try:
        items = load_canard(data_root)
    except TurnscopeError as exc:
        raise typer.BadParameter(str(exc)) from None
    _write(items, output)


@datasets_app.command("cast", short_help="TREC CAsT topics -> follow-up items.")
def cast(
    year: Annotated[int, typer.Option(help="2019, 2020 or 2021.")] = 2019,
    part: Annotated[str | None, typer.Option(
        help="2021 only: 'dev' (even topics) or 'check' (odd topics); docs/splits.md.")] = None,
    output: Annotated[Path | None, typer.Option("--output", "-o")] = None,
    data_root: Annotated[Path | None, typer.Option(
        help="Folder holding trec-cast/ (default: $TURNSCOPE_DATA or ../shared/data).")] = None,
) -> None:
    """TREC CAsT topics -> follow-up items with required/forbidden terms."""
    from turnscope.datasets import load_cast

    try:
        items = load_cast(year, data_root, part=part)
    except TurnscopeError as exc:
        raise typer.BadParameter(str(exc)) from None
    _write(items, output)

