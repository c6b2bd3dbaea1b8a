"""The ``--rewriter/--base-url/--model/--timeout`` options turned into a rewriter."""

from __future__ import annotations

from pathlib import Path

from turnscope.entities import EntityExtractor
from turnscope.rewriters import Rewriter, make_rewriter
from turnscope.rewriters._factory import DEFAULT_TIMEOUT

__all__ = ["rewriter_from_options"]


def rewriter_from_options(
    rewriter: str,
    base_url: str | None,
    model: str | None,
    timeout: float | None,
    *,
    cache_path: str | Path | None = None,
    strict: bool = False,
    extractor: EntityExtractor | None = None,
) -> Rewriter:
    """The rewriter SPEC section 6's options describe.

    ``--rewriter embedded`` ignores the other options; ``--rewriter llm`` needs
    ``--base-url`` and ``--model``. A missing ``--timeout`` means the library default.
    Raises :class:`~turnscope.ConfigError` naming the missing or unknown option.

    >>> rewriter_from_options("llm", "http://localhost:11434/v1", "qwen2.5:7b", 5.0).name
    'llm:qwen2.5:7b'
    """
    return make_rewriter(rewriter, base_url=base_url, model=model,
                         timeout=DEFAULT_TIMEOUT if timeout is None else timeout,
                         cache_path=cache_path, strict=strict, extractor=extractor)
