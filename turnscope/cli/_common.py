"""Options shared by several commands."""

from __future__ import annotations

import math
from pathlib import Path

import typer

from turnscope._exceptions import TurnscopeError
from turnscope.cli._llm_opts import rewriter_from_options
from turnscope.entities import Vocabulary, bundled_vocabularies
from turnscope.rewriters import Rewriter

#: the longest ``--timeout`` accepted; anything beyond is a typo rather than a wish
MAX_TIMEOUT = 3600.0


def check_timeout(value: float) -> float:
    """``--timeout`` must be a finite, positive number of seconds (inf and nan used to
    reach the HTTP client and fail once per turn)."""
    if not math.isfinite(value) or value <= 0 or value > MAX_TIMEOUT:
        raise typer.BadParameter(
            f"{value} is not a timeout: give a number of seconds above 0 and at most "
            f"{MAX_TIMEOUT:g}", param_hint="--timeout")
    return value


def load_vocabulary(spec: str | None) -> Vocabulary | None:
    """``bundled`` (default) = the shipped vocabularies; ``none``; or a JSON file path."""
    if spec is None or spec == "bundled":
        return bundled_vocabularies()
    if spec == "none":
        return None
    return Vocabulary.load(Path(spec))


def make_cli_rewriter(kind: str, base_url: str | None, model: str | None,
                      timeout: float, *, max_tokens: int | None = None,
                      system_role: str = "auto") -> Rewriter | None:
    """The session's rewriter for the CLI options (None = the session's embedded one);
    a bad option is a usage error naming it."""
    if kind == "embedded":
        return None
    try:
        return rewriter_from_options(kind, base_url, model, timeout, max_tokens=max_tokens,
                                     system_role=system_role)
    except TurnscopeError as exc:
        raise typer.BadParameter(str(exc), param_hint="--rewriter") from None
