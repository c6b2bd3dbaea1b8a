"""Command line: ``turnscope rewrite | chat | eval | datasets``."""

from __future__ import annotations

from turnscope.cli import _datasets, _rewrite, _serve, _train  # noqa: F401  (commands register on import)
from turnscope.cli._app import app

try:  # the evaluation harness registers ``eval``
    from turnscope.cli import _eval

    _eval.register(app)
except ImportError:  # pragma: no cover - only while the harness is absent
    pass

__all__ = ["app", "main"]


def main() -> None:
    app()
