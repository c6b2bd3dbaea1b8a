"""The progress bar of ``turnscope rewrite`` (on stderr, so the JSON lines on stdout stay clean)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

__all__ = ["ProgressOption", "count_items", "item_progress"]

#: ``--progress/--no-progress``; unset, the bar shows when stderr is a terminal
ProgressOption = Annotated[bool | None, typer.Option(
    "--progress/--no-progress",
    help="Show a progress bar on stderr (default: when stderr is a terminal).")]


def count_items(input: Path) -> int | None:
    """Non-blank lines of ``input`` (the items the bar counts to); None for stdin, which
    cannot be read twice, or a file that cannot be read (the command reports that itself).
    Lines are counted as bytes, so a bad line counts as the item (an error row) it becomes.
    """
    if str(input) == "-":
        return None
    try:
        with input.open("rb") as fh:
            return sum(1 for raw in fh if raw.strip())
    except OSError:
        return None


@contextlib.contextmanager
def item_progress(console: Console, *, enabled: bool | None,
                  count: Callable[[], int | None]) -> Iterator[Callable[[], None]]:
    """A context whose value advances the bar by one item (does nothing when no bar shows).

    ``count`` gives the number of items (None: unknown); it is called only when the bar
    shows, since counting reads the input once more. Messages printed on ``console``
    while the bar runs appear above it.

    >>> from rich.console import Console
    >>> with item_progress(Console(), enabled=False, count=lambda: 3) as advance:
    ...     advance()
    """
    show = console.is_terminal if enabled is None else enabled
    if not show:
        yield lambda: None
        return
    columns = (SpinnerColumn(), TextColumn("rewriting"), BarColumn(), MofNCompleteColumn(),
               TimeElapsedColumn(), TimeRemainingColumn())
    with Progress(*columns, console=console) as bar:
        task = bar.add_task("rewrite", total=count())
        yield lambda: bar.advance(task)
