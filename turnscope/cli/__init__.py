"""Command line: ``turnscope rewrite | chat | eval | datasets``."""

from __future__ import annotations

import os

from turnscope.cli import _datasets, _rewrite, _serve, _train  # noqa: F401  (commands register on import)
from turnscope.cli._app import app

try:  # the evaluation harness registers ``eval``
    from turnscope.cli import _eval

    _eval.register(app)
except ImportError:  # pragma: no cover - only while the harness is absent
    pass

__all__ = ["app", "main"]


def main() -> None:
    # e5 and LightGBM run OpenMP, whose idle threads spin by default: on busy cores that made
    # an embedding twenty times slower (650 against 30 ms on two shared cores). Every command
    # (rewrite, chat, eval, serve and its workers) sets it before either library loads its
    # runtime; the user's value wins
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    app()
