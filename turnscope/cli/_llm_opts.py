"""The ``--rewriter/--base-url/--model/--timeout/--max-tokens/--system-role`` options
turned into a rewriter."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from turnscope._exceptions import ConfigError
from turnscope.entities import EntityExtractor
from turnscope.rewriters import DEFAULT_MAX_TOKENS, DEFAULT_TIMEOUT, Rewriter, SystemRole, make_rewriter

__all__ = [
    "MaxTokensOption",
    "SystemRoleOption",
    "parse_system_role",
    "rewriter_from_options",
]

#: ``--max-tokens``: the answer's token budget, sent on every request (a command declares
#: ``max_tokens: MaxTokensOption = None``; None means the library default)
MaxTokensOption = Annotated[int | None, typer.Option(
    "--max-tokens", min=1,
    help=f"Tokens the model may generate per answer (llm; default {DEFAULT_MAX_TOKENS}).")]
#: ``--system-role``: where the instructions go (see LLMRewriter's system_role)
SystemRoleOption = Annotated[str, typer.Option(
    "--system-role",
    help="auto: a system message until the server rejects it; no: inside the first user "
         "message (for chat templates without a system role); yes: always a system "
         "message (llm).")]

_SYSTEM_ROLE_WORDS: dict[str, SystemRole] = {"auto": "auto", "yes": True, "true": True,
                                             "no": False, "false": False}


def parse_system_role(value: str | bool) -> SystemRole:
    """``auto`` / ``yes`` / ``no`` (or a bool) as the rewriter's ``system_role``.

    >>> parse_system_role("no"), parse_system_role("auto")
    (False, 'auto')
    """
    if isinstance(value, bool):
        return value
    word = value.strip().lower() if isinstance(value, str) else value
    if word not in _SYSTEM_ROLE_WORDS:
        raise ConfigError(f"--system-role must be auto, yes or no, got {value!r}")
    return _SYSTEM_ROLE_WORDS[word]


def rewriter_from_options(
    rewriter: str,
    base_url: str | None,
    model: str | None,
    timeout: float | None,
    *,
    cache_path: str | Path | None = None,
    strict: bool = False,
    max_tokens: int | None = None,
    system_role: str | bool = "auto",
    extractor: EntityExtractor | None = None,
) -> Rewriter:
    """The rewriter the command-line contract of the README's options describe.

    ``--rewriter embedded`` ignores the other options; ``--rewriter llm`` needs
    ``--base-url`` and ``--model``. A missing ``--timeout`` or ``--max-tokens`` means
    the library default. Raises :class:`~turnscope.ConfigError` naming the missing or
    unknown option, or the number out of range.

    >>> rewriter_from_options("llm", "http://localhost:11434/v1", "qwen2.5:7b", 5.0).name
    'llm:qwen2.5:7b'
    """
    return make_rewriter(rewriter, base_url=base_url, model=model,
                         timeout=DEFAULT_TIMEOUT if timeout is None else timeout,
                         max_tokens=DEFAULT_MAX_TOKENS if max_tokens is None else max_tokens,
                         system_role=parse_system_role(system_role),
                         cache_path=cache_path, strict=strict, extractor=extractor)
