"""Options shared by several commands."""

from __future__ import annotations

from pathlib import Path

import typer

from turnscope._exceptions import TurnscopeError
from turnscope.entities import Vocabulary, bundled_vocabulary
from turnscope.rewriters import Rewriter

DEFAULT_VOCABULARIES = ("cloud", "ja_site")


def load_vocabulary(spec: str | None) -> Vocabulary | None:
    """``bundled`` (default) = the shipped vocabularies; ``none``; or a JSON file path."""
    if spec is None or spec == "bundled":
        v = Vocabulary()
        for name in DEFAULT_VOCABULARIES:
            try:
                v = v.merged(bundled_vocabulary(name))
            except TurnscopeError:
                continue
        return v
    if spec == "none":
        return None
    return Vocabulary.load(Path(spec))


def make_cli_rewriter(kind: str, base_url: str | None, model: str | None,
                      timeout: float) -> Rewriter | None:
    if kind == "embedded":
        return None
    try:
        from turnscope.rewriters import make_rewriter
    except ImportError:
        raise typer.BadParameter("the llm rewriter is not available in this install",
                                 param_hint="--rewriter") from None
    try:
        rw: Rewriter = make_rewriter(kind, base_url=base_url, model=model, timeout=timeout)
    except TurnscopeError as exc:
        raise typer.BadParameter(str(exc), param_hint="--rewriter") from None
    return rw
