"""``turnscope rewrite`` (SPEC section 6) and ``turnscope chat``."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, TextIO

import typer
from rich.console import Console
from rich.table import Table

from turnscope._exceptions import ItemError, TurnscopeError
from turnscope._items import read_items, rewrite_item
from turnscope._session import Session, TurnResult
from turnscope.cli._app import app
from turnscope.cli._common import load_vocabulary, make_cli_rewriter
from turnscope.scope import get_policy

err = Console(stderr=True)


@app.command()
def rewrite(
    input: Annotated[Path, typer.Option("--input", "-i", help="Follow-up items, JSONL.")],
    output: Annotated[Path | None, typer.Option("--output", "-o",
                                                help="Where to write rewrites (default stdout).")] = None,
    policy: Annotated[str, typer.Option(help="Scope policy: default, full, window[:W], "
                                             "segment[:centroid|flag], liveness, relevant.")] = "default",
    rewriter: Annotated[str, typer.Option(help="embedded or llm.")] = "embedded",
    base_url: Annotated[str | None, typer.Option(help="OpenAI-compatible base URL (llm).")] = None,
    model: Annotated[str | None, typer.Option(help="Model name (llm).")] = None,
    timeout: Annotated[float, typer.Option(help="Seconds per LLM call.")] = 10.0,
    vocabulary: Annotated[str | None, typer.Option(
        help="'bundled' (default), 'none', or a vocabulary JSON file.")] = None,
) -> None:
    """Rewrite each follow-up item into a standalone query (one JSON line per item, in order).

    A bad line is reported on stderr with its line number; every other line still
    gets its result, and the exit code is 1 if any line was bad.
    """
    if not input.exists():
        raise typer.BadParameter(f"no such file: {input}", param_hint="--input")
    try:
        get_policy(policy)
        vocab = load_vocabulary(vocabulary)
    except TurnscopeError as exc:
        raise typer.BadParameter(str(exc)) from None
    rw = make_cli_rewriter(rewriter, base_url, model, timeout)

    def make_session() -> Session:
        return Session(policy=policy, rewriter=rw, vocabulary=vocab)

    out: TextIO = output.open("w", encoding="utf-8") if output else sys.stdout
    bad = 0
    try:
        for line_no, item in read_items(input):
            if isinstance(item, ItemError):
                bad += 1
                err.print(f"[red]error[/red] {item}")
                continue
            try:
                res = rewrite_item(item, make_session)
            except TurnscopeError as exc:
                bad += 1
                err.print(f"[red]error[/red] {input}:line {line_no} (id {item.id!r}): {exc}")
                continue
            out.write(json.dumps(res.to_output(item.id), ensure_ascii=False) + "\n")
            out.flush()
    finally:
        if output:
            out.close()
    if bad:
        err.print(f"{bad} line(s) could not be rewritten; all other lines were written")
        raise typer.Exit(1)


def _slot_table(result: TurnResult) -> Table:
    t = Table(title=f"slots after turn {result.turn}", show_lines=False)
    for col in ("type", "name", "introduced", "last_seen", "status"):
        t.add_column(col)
    for row in result.slot_table:
        style = {"live": "green", "stale": "yellow"}.get(str(row["status"]), "dim")
        t.add_row(*(str(row[c]) for c in ("type", "name", "introduced", "last_seen")),
                  f"[{style}]{row['status']}[/{style}]")
    return t


@app.command()
def chat(
    policy: Annotated[str, typer.Option(help="Scope policy.")] = "default",
    vocabulary: Annotated[str | None, typer.Option(help="'bundled', 'none' or a JSON file.")] = None,
    rewriter: Annotated[str, typer.Option(help="embedded or llm.")] = "embedded",
    base_url: Annotated[str | None, typer.Option()] = None,
    model: Annotated[str | None, typer.Option()] = None,
    timeout: Annotated[float, typer.Option()] = 10.0,
) -> None:
    """Interactive loop: type user turns; prefix assistant turns with 'a: '.

    Each user turn shows its rewrite, reference class and the slot table.
    Commands: ':screen TITLE | URL | SITE' sets the screen, ':quit' ends.
    """
    console = Console()
    try:
        session = Session(policy=policy, vocabulary=load_vocabulary(vocabulary),
                          rewriter=make_cli_rewriter(rewriter, base_url, model, timeout))
    except TurnscopeError as exc:
        raise typer.BadParameter(str(exc)) from None
    screen: dict[str, str | None] | None = None
    console.print("[bold]turnscope chat[/bold] — user turns as typed, 'a: ...' for assistant "
                  "turns, ':screen title | url | site', ':quit'")
    while True:
        try:
            line = console.input("[cyan]> [/cyan]")
        except (EOFError, KeyboardInterrupt):
            break
        line = line.strip()
        if not line:
            continue
        if line in (":quit", ":q", ":exit"):
            break
        if line.startswith(":screen"):
            parts = [p.strip() or None for p in line[len(":screen"):].split("|")] + [None, None]
            screen = {"page_title": parts[0], "page_url": parts[1], "site": parts[2]}
            console.print(f"screen set: {screen}")
            continue
        if line.lower().startswith("a:"):
            session.assistant(line[2:].strip(), screen=screen)
            continue
        try:
            res = session.user(line, screen=screen)
        except TurnscopeError as exc:
            console.print(f"[red]{exc}[/red]")
            continue
        console.print(f"[bold green]query[/bold green]  {res.query}")
        console.print(f"[bold]class[/bold]  {res.reference_class}   topic_shift={res.topic_shift}"
                      f"   scope={json.dumps(res.scope.to_json(), ensure_ascii=False)}"
                      + (f"   [yellow]fallback: {res.fallback_reason}[/yellow]" if res.fallback else ""))
        console.print(_slot_table(res))
