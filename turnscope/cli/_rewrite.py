"""``turnscope rewrite`` (the command-line contract of the README) and ``turnscope chat``."""

from __future__ import annotations

import contextlib
import io
import json
import os
import sys
from pathlib import Path
from typing import Annotated, Any, BinaryIO, TextIO

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from turnscope._batch import BatchRewriter
from turnscope._exceptions import ItemError, TurnscopeError
from turnscope._items import DEFAULT_MAX_MESSAGE_CHARS, read_items
from turnscope._session import Session, TurnResult
from turnscope._warmup import warm_up
from turnscope.cli._app import app
from turnscope.cli._common import (
    POLICY_HELP,
    VOCABULARY_HELP,
    check_policy,
    check_timeout,
    load_vocabulary,
    make_cli_rewriter,
)
from turnscope.cli._llm_opts import MaxTokensOption, SystemRoleOption
from turnscope.cli._progress import ProgressOption, count_items, item_progress
from turnscope.cli._resolver_opts import ResolverThresholdOption, resolver_from_option

err = Console(stderr=True)

def _say_error(message: str) -> None:
    """One line on stderr; user text in ``message`` is never read as Rich markup."""
    err.print(Text.assemble(("error", "red"), " ", message), soft_wrap=True, highlight=False)


def _error_row(item_id: str | None, kind: str, message: str, line: int) -> dict[str, Any]:
    return {"id": item_id, "error": {"type": kind, "message": message, "line": line}}


def _json_line(row: dict[str, Any]) -> str:
    # A lone surrogate (a JSON "\ud800" escape in the input) cannot be encoded as UTF-8;
    # written back as the same escape, the line stays valid JSON and round-trips.
    text = json.dumps(row, ensure_ascii=False)
    return text.encode("utf-8", "backslashreplace").decode("utf-8") + "\n"


def _same_file(a: os.stat_result, b: Path) -> bool:
    try:
        st = b.stat()
    except OSError:
        return False
    return (st.st_dev, st.st_ino) == (a.st_dev, a.st_ino)


def _open_input(input: Path) -> tuple[BinaryIO, str, os.stat_result | None]:
    """The input stream, its name for messages and its identity (to refuse writing over it)."""
    if str(input) == "-":
        stream = sys.stdin.buffer
        try:
            ident: os.stat_result | None = os.fstat(stream.fileno())
        except (OSError, ValueError, io.UnsupportedOperation):
            ident = None  # not a real file (a test runner's buffer): nothing to protect
        return stream, "<stdin>", ident
    try:
        fh = input.open("rb")
    except FileNotFoundError:
        raise typer.BadParameter(f"no such file: {input}", param_hint="--input") from None
    except IsADirectoryError:
        raise typer.BadParameter(f"{input} is a directory, not a file",
                                 param_hint="--input") from None
    except OSError as exc:
        raise typer.BadParameter(f"cannot read {input}: {exc.strerror or exc}",
                                 param_hint="--input") from None
    return fh, str(input), os.fstat(fh.fileno())


def _open_output(output: Path | None, input_ident: os.stat_result | None) -> TextIO:
    if output is None or str(output) == "-":
        return sys.stdout
    if input_ident is not None and _same_file(input_ident, output):
        # opening it for writing would empty the input before a line is read
        raise typer.BadParameter(f"{output} is the input file; write the rewrites elsewhere",
                                 param_hint="--output")
    if output.is_dir():
        raise typer.BadParameter(f"{output} is a directory, not a file", param_hint="--output")
    if not output.parent.is_dir():
        raise typer.BadParameter(f"cannot write {output}: folder {output.parent} does not exist",
                                 param_hint="--output")
    try:
        return output.open("w", encoding="utf-8")
    except OSError as exc:
        raise typer.BadParameter(f"cannot write {output}: {exc.strerror or exc}",
                                 param_hint="--output") from None


@app.command(short_help="Rewrite follow-up items (JSONL) into standalone queries.")
def rewrite(
    input: Annotated[Path, typer.Option("--input", "-i",
                                        help="Follow-up items, JSONL ('-' = stdin).")],
    output: Annotated[Path | None, typer.Option("--output", "-o",
                                                help="Where to write rewrites (default stdout).")] = None,
    policy: Annotated[str, typer.Option(help=POLICY_HELP, callback=check_policy)] = "default",
    rewriter: Annotated[str, typer.Option(help="embedded or llm.")] = "embedded",
    base_url: Annotated[str | None, typer.Option(help="OpenAI-compatible base URL (llm).")] = None,
    model: Annotated[str | None, typer.Option(help="Model name (llm).")] = None,
    timeout: Annotated[float, typer.Option(help="Seconds per LLM call.",
                                           callback=check_timeout)] = 10.0,
    vocabulary: Annotated[str, typer.Option(help=VOCABULARY_HELP)] = "none",
    max_tokens: MaxTokensOption = None,
    system_role: SystemRoleOption = "auto",
    resolver_threshold: ResolverThresholdOption = None,
    progress: ProgressOption = None,
    max_message: Annotated[int, typer.Option(
        min=1, help="Longest message (follow-up or prefix turn) in characters; a longer one "
                    "gets an error object of type too_long naming the limit.")] = DEFAULT_MAX_MESSAGE_CHARS,
) -> None:
    """Rewrite each follow-up item into a standalone query (one JSON line per item, in order).

    Each line is the docs/output.md object plus decided_by (which path wrote the
    query: resolver, vocabulary, rules, llm, fallback); topic_shift is the learned
    detector's decision or an explicit pivot cue (docs/output.md). No vocabulary is
    loaded unless --vocabulary declares one.

    Every non-blank input line gets exactly one output line, in order. A bad line
    (invalid UTF-8, invalid JSON, an invalid item, or an item whose rewrite fails) gets
    an error object in its place, {"id": ID or null, "error": {"type", "message",
    "line"}}, and its message on stderr with the line number; the exit code is 1 if
    any line was bad. Blank lines are not items: they are skipped and get no output
    line. The output is never the input file (the command refuses, exit code 2). A
    message longer than --max-message characters is such a bad line (type too_long):
    the time a turn takes grows faster than its length.

    Items whose histories share turns (one item per turn of a conversation) share the
    replay of those turns (turnscope.BatchRewriter); each output line is the one a fresh
    session replaying the item's whole history gives.
    """
    try:
        vocab = load_vocabulary(vocabulary)
    except TurnscopeError as exc:
        raise typer.BadParameter(str(exc)) from None
    rw = make_cli_rewriter(rewriter, base_url, model, timeout, max_tokens=max_tokens,
                           system_role=system_role)
    resolver = resolver_from_option(resolver_threshold)

    def make_session() -> Session:
        return Session(policy=policy, rewriter=rw, vocabulary=vocab, resolver=resolver)

    source, name, ident = _open_input(input)
    try:
        out = _open_output(output, ident)
    except BaseException:
        if source is not sys.stdin.buffer:
            source.close()
        raise
    bad = 0
    batch = BatchRewriter(make_session)
    # an ExitStack rather than a with-block: the bar must stop before the files close
    bar = contextlib.ExitStack()
    advance = bar.enter_context(item_progress(err, enabled=progress,
                                              count=lambda: count_items(input)))
    try:
        for line_no, item in read_items(source, name=name, max_message_chars=max_message):
            if isinstance(item, ItemError):
                row = _error_row(item.item_id, item.kind, item.reason, line_no)
                _say_error(str(item))
            else:
                try:
                    row = batch.rewrite(item).to_output(item.id)
                except TurnscopeError as exc:
                    row = _error_row(item.id, "rewrite_error", str(exc), line_no)
                    _say_error(f"{name}:line {line_no} (id {item.id!r}): {exc}")
                except Exception as exc:  # a fault on one item must not lose the other lines
                    msg = f"{type(exc).__name__}: {exc}"
                    row = _error_row(item.id, "internal_error", msg, line_no)
                    _say_error(f"{name}:line {line_no} (id {item.id!r}): {msg}")
            if "error" in row:
                bad += 1
            out.write(_json_line(row))
            out.flush()
            advance()
    except BrokenPipeError:
        # the reader went away (``| head``): stop quietly, as other filters do
        _silence_stdout()
        raise typer.Exit(1) from None
    except OSError as exc:
        where = output if output is not None else "stdout"
        _say_error(f"cannot write {where}: {exc.strerror or exc}")
        raise typer.Exit(1) from None
    finally:
        bar.close()
        if out is not sys.stdout:
            try:
                out.close()
            except OSError:
                pass  # reported above; a second message would add nothing
        if source is not sys.stdin.buffer:
            source.close()
    if bad:
        err.print(f"{bad} line(s) could not be rewritten; their error objects are in the "
                  "output in their place", soft_wrap=True, highlight=False, markup=False)
        raise typer.Exit(1)


def _silence_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's final flush does not raise again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, io.UnsupportedOperation):
        pass


def _slot_table(result: TurnResult) -> Table:
    t = Table(title=f"slots after turn {result.turn}", show_lines=False)
    for col in ("type", "name", "introduced", "last_seen", "status"):
        t.add_column(col)
    for row in result.slot_table:
        style = {"live": "green", "stale": "yellow"}.get(str(row["status"]), "dim")
        # cells as Text: a slot name is user text, and a string cell would be read as markup
        t.add_row(*(Text(str(row[c])) for c in ("type", "name", "introduced", "last_seen")),
                  Text(str(row["status"]), style=style))
    return t


#: a line typed without "a:" longer than this, after a user turn, is asked about: pasted
#: assistant answers are long, typed questions rarely are
ANSWER_LIKE_CHARS = 200


def compact_line(res: TurnResult, message: str) -> Text:
    """One line per user message: the query, what was brought in, and a change of subject.

    >>> from turnscope import Session
    >>> m = "Is the Louvre open on Mondays?"
    >>> print(compact_line(Session(decider=None).user(m), m))
    → Is the Louvre open on Mondays?   (stands alone)
    """
    parts: list[str | tuple[str, str]] = [("→ ", "cyan"), (res.query, "bold")]
    if res.carried:
        parts.append(("   resolved: " + ", ".join(res.carried), "green"))
    elif res.query.strip() != message.strip():
        parts.append((f"   ({res.reference_class.replace('_', ' ')}, rewritten)", "green"))
    elif res.reference_class == "standalone":
        parts.append(("   (stands alone)", "dim"))
    else:
        parts.append((f"   ({res.reference_class.replace('_', ' ')}, left as typed)", "dim"))
    if res.topic_shift:
        parts.append(("   new subject", "yellow"))
    if res.fallback:
        parts.append((f"   fallback: {res.fallback_reason}", "yellow"))
    return Text.assemble(*parts)


def _line_editing() -> None:
    """Arrow keys, history and Ctrl-L in the prompt (GNU readline, where Python has it)."""
    with contextlib.suppress(ImportError):
        import readline  # noqa: F401  (importing it is what turns editing on for input())


@app.command(short_help="Talk to a session in the terminal; see each rewrite.")
def chat(
    policy: Annotated[str, typer.Option(help=POLICY_HELP, callback=check_policy)] = "default",
    vocabulary: Annotated[str, typer.Option(help=VOCABULARY_HELP)] = "none",
    rewriter: Annotated[str, typer.Option(help="embedded or llm.")] = "embedded",
    base_url: Annotated[str | None, typer.Option(help="OpenAI-compatible base URL (llm).")] = None,
    model: Annotated[str | None, typer.Option(help="Model name (llm).")] = None,
    timeout: Annotated[float, typer.Option(help="Seconds per LLM call.",
                                           callback=check_timeout)] = 10.0,
    max_tokens: MaxTokensOption = None,
    system_role: SystemRoleOption = "auto",
    resolver_threshold: ResolverThresholdOption = None,
    verbose: Annotated[bool, typer.Option(
        "--verbose", "-v", help="After each query, show the scope and the slot table too.")] = False,
) -> None:
    """Talk to a session: type the user's messages, paste the assistant's answers.

    Each user message prints one line: the query, what it brought in from earlier turns,
    and whether it opened a new subject (--verbose adds the scope and the slot table).
    Enter an answer as 'a: TEXT' (or ':a' and the answer on the next line); a long line
    typed without it is asked about. ':screen TITLE | URL | SITE' sets what the user is
    looking at; ':quit' (or Ctrl-D) ends.
    """
    console = Console()
    # the parser and models take a few seconds: say so before anything loads
    console.print("turnscope chat: loading the parser and models…", highlight=False)
    try:
        vocab = load_vocabulary(vocabulary)
        session = Session(policy=policy, vocabulary=vocab,
                          rewriter=make_cli_rewriter(rewriter, base_url, model, timeout,
                                                     max_tokens=max_tokens,
                                                     system_role=system_role),
                          resolver=resolver_from_option(resolver_threshold))
    except TurnscopeError as exc:
        raise typer.BadParameter(str(exc)) from None

    # every model a turn needs is loaded before the first prompt, not during the first turn
    with console.status("loading models…"):
        warm_up(policy=policy, vocabulary=vocab)
    _line_editing()

    def show(*parts: str | tuple[str, str]) -> None:
        # Text.assemble never parses markup, and highlighting is off: Rich's repr
        # highlighter is slow enough on a long pasted line to freeze the loop
        console.print(Text.assemble(*parts), highlight=False)

    def ask(prompt: str) -> str | None:
        try:
            return console.input(prompt)
        except (EOFError, KeyboardInterrupt):
            return None

    screen: dict[str, str | None] | None = None
    last_role = "assistant"
    show(("ready. ", "bold"), "Type the user's message. Answers: 'a: TEXT'. "
         "':screen title | url | site', ':quit'.")
    while True:
        raw = ask("[cyan]you> [/cyan]")
        if raw is None:
            break
        line = raw.strip()
        if not line:
            continue
        if line in (":quit", ":q", ":exit"):
            break
        if line.startswith(":screen"):
            parts = [p.strip() or None for p in line[len(":screen"):].split("|")] + [None, None]
            screen = {"page_title": parts[0], "page_url": parts[1], "site": parts[2]}
            show(f"screen set: {screen}")
            continue
        answer: str | None = None
        if line == ":a":
            answer = (ask("[magenta]assistant> [/magenta]") or "").strip()
        elif line.lower().startswith("a:"):
            answer = line[2:].strip()
        elif last_role == "user" and len(line) > ANSWER_LIKE_CHARS:
            reply = ask("[yellow]that looks like the assistant's answer: record it as one? "
                        "[Y/n] [/yellow]")
            if reply is not None and reply.strip().lower() in ("", "y", "yes"):
                answer = line
        try:
            if answer is not None:
                if answer:
                    session.assistant(answer, screen=screen)
                    last_role = "assistant"
                    show(("  (answer recorded)", "dim"))
                continue
            res = session.user(line, screen=screen)
            last_role = "user"
        except TurnscopeError as exc:
            show((str(exc), "red"))
            continue
        console.print(compact_line(res, line), highlight=False)
        if verbose:
            show(("  class", "bold"), f" {res.reference_class}   scope="
                 f"{json.dumps(res.scope.to_json(), ensure_ascii=False)}")
            console.print(_slot_table(res))
