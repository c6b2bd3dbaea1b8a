"""``turnscope serve``: the HTTP service (the service contract, turnscope/service) under uvicorn."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Annotated

import typer

from turnscope._exceptions import TurnscopeError
from turnscope._items import DEFAULT_MAX_MESSAGE_CHARS
from turnscope._paths import default_state_path
from turnscope.cli._app import app

__all__ = ["serve", "parse_rate_limit"]


def _default_state_shown() -> str:
    # what --help names as the default store: the per-user path, with the home folder as ~
    path = default_state_path()
    try:
        return "~/" + str(path.relative_to(Path.home()))
    except ValueError:
        return str(path)


_DEFAULT_STATE_SHOWN = _default_state_shown()


def parse_rate_limit(spec: str) -> tuple[int, float]:
    """``N/SECONDS`` (``6000/60``), ``N`` (per 60 s) or ``0`` (off).

    >>> parse_rate_limit("100/10"), parse_rate_limit("0")
    ((100, 10.0), (0, 60.0))
    """
    m = re.fullmatch(r"\s*(\d+)\s*(?:/\s*(\d+(?:\.\d+)?)\s*)?", spec)
    if m is None or (m.group(2) is not None and float(m.group(2)) <= 0):
        raise typer.BadParameter(f"expected N/SECONDS such as 6000/60, or 0 to turn it off; got {spec!r}",
                                 param_hint="--rate-limit")
    return int(m.group(1)), float(m.group(2) or 60.0)


def _service_vocabulary(spec: str) -> str:
    """A ``--vocabulary`` the service can load by name (it reads no files a client names,
    and the default is named the same way)."""
    from turnscope.cli._common import BUNDLED_CHOICES
    from turnscope.entities import BUNDLED_CORPUS_OF, bundled_name

    if spec in ("none", "bundled") or bundled_name(spec) in BUNDLED_CORPUS_OF:
        return spec
    raise typer.BadParameter(f"{spec!r} is not a vocabulary the service ships; choose none, "
                             f"bundled or {', '.join(BUNDLED_CHOICES)}", param_hint="--vocabulary")


_SERVE_HELP = f"""Serve the HTTP API: sessions, turns, the stateless rewrite, health, OpenAPI.

Example: turnscope serve (loopback:8080, SQLite, no keys), or
turnscope serve --store redis://127.0.0.1:6379/0 --workers 4 --keys keys.txt

Sessions are stored in {_DEFAULT_STATE_SHOWN} unless --store or $TURNSCOPE_STATE names
another place (the per-user data folder, created when missing; never the folder serve
starts from). Each worker loads every model a turn needs before /readyz answers ready.
"""


@app.command(help=_SERVE_HELP, short_help="Serve the HTTP API (sessions, turns, stateless rewrite).")
def serve(
    host: Annotated[str, typer.Option(help="Address to listen on (loopback by default).")] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=0, max=65535, help="TCP port.")] = 8080,
    store: Annotated[str | None, typer.Option(
        help="sqlite:PATH or redis://HOST:PORT/DB (default: sqlite:$TURNSCOPE_STATE, else "
             f"sqlite:{_DEFAULT_STATE_SHOWN}: the per-user data folder, created when missing; never "
             "the folder serve starts from).")] = None,
    workers: Annotated[int, typer.Option(min=1, max=64, help="Worker processes.")] = 1,
    keys: Annotated[Path | None, typer.Option(
        help="File of 'KEY TENANT' lines; then every request needs 'Authorization: Bearer KEY'.")] = None,
    rate_limit: Annotated[str | None, typer.Option(
        help="Requests per key: N/SECONDS (default 6000/60), 0 = off.")] = None,
    ttl: Annotated[float | None, typer.Option(
        help="Seconds a session is kept after its last turn (default 7 days).")] = None,
    max_turns: Annotated[int | None, typer.Option(min=1, help="Turns per session (default 500).")] = None,
    max_body: Annotated[int | None, typer.Option(min=1, help="Largest body in bytes (default 256 KiB).")] = None,
    max_message: Annotated[int | None, typer.Option(min=1, help="Longest message in characters (default "
                                                              f"{DEFAULT_MAX_MESSAGE_CHARS}); a longer "
                                                              "one is answered 422 too_long.")] = None,
    vocabulary: Annotated[str, typer.Option(
        help="The vocabulary of a session that declares none: none (the default), bundled, "
             "bundled:cloud or bundled:ja-site (a client may name another).")] = "none",
    log_level: Annotated[str, typer.Option(help="uvicorn log level.")] = "info",
    access_log: Annotated[bool, typer.Option(help="Log every request.")] = False,
) -> None:
    # help: _SERVE_HELP (it names the default store path, known only at run time).
    # the service stack (fastapi, redis) loads only for this command
    from turnscope.service import CONFIG_ENV, ApiKeys, Limits, ServiceConfig, default_store_url, open_store

    try:
        base = Limits()
        rate = parse_rate_limit(rate_limit) if rate_limit is not None else (base.rate_requests, base.rate_window)
        limits = Limits(max_body_bytes=max_body or base.max_body_bytes,
                        max_message_chars=max_message or base.max_message_chars,
                        max_turns=max_turns or base.max_turns,
                        rate_requests=rate[0], rate_window=rate[1])
        url = store or default_store_url()
        if url.startswith("sqlite:") and not url.startswith("sqlite://"):
            # absolute, so every worker opens the same file whatever its working directory
            url = "sqlite:" + str(Path(url[len("sqlite:"):]).expanduser().resolve())
        cfg = ServiceConfig(store=url, keys=ApiKeys.load(keys) if keys is not None else None, limits=limits)
        if ttl is not None:
            cfg = cfg.with_(ttl_seconds=ttl)
        cfg = cfg.with_(default_vocabulary=_service_vocabulary(vocabulary))
        # open the store once here: a wrong path or an unreachable Redis is a clear error now,
        # not a traceback in every worker
        probe = open_store(cfg.store, ttl_seconds=cfg.ttl_seconds)
        probe.ping()
        probe.close()
    except TurnscopeError as exc:
        raise typer.BadParameter(str(exc)) from None
    # uvicorn starts each worker from an import string in a new process, so the
    # configuration travels in the environment (keys as digests only)
    os.environ[CONFIG_ENV] = cfg.to_json()
    typer.echo(f"turnscope serve: http://{host}:{port}  store={cfg.store}  workers={workers}  "
               f"keys={'yes' if cfg.keys else 'no'}", err=True)
    from turnscope.service import APP_FACTORY, run_uvicorn

    run_uvicorn(APP_FACTORY, host=host, port=port, workers=workers, log_level=log_level,
                access_log=access_log)
