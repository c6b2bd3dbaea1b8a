"""The typer application every command registers on."""

from __future__ import annotations

import typer

app = typer.Typer(
    name="turnscope",
    help="Scope-aware query contextualization for conversational retrieval.",
    no_args_is_help=True,
    add_completion=False,
)
