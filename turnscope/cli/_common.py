"""Options shared by several commands."""

from __future__ import annotations

import math
from pathlib import Path

import typer

from turnscope._exceptions import ConfigError, TurnscopeError
from turnscope.cli._llm_opts import rewriter_from_options
from turnscope.entities import (
    BUNDLED_CORPUS_OF,
    BUNDLED_PREFIX,
    Vocabulary,
    bundled_name,
    bundled_vocabularies,
    bundled_vocabulary,
)
from turnscope.rewriters import Rewriter
from turnscope.scope import parse_policy, policy_grammar

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


#: the ``--policy`` help of every command that takes one, generated from the parser's grammar
POLICY_HELP = f"Scope policy: {policy_grammar()}."


def check_policy(value: str) -> str:
    """A ``--policy`` callback: the spec as given once :func:`turnscope.scope.parse_policy`
    accepts it, else a usage error naming the value and the valid specs."""
    try:
        parse_policy(value)
    except ConfigError as exc:
        raise typer.BadParameter(str(exc), param_hint="--policy") from None
    return value


#: ``--vocabulary`` values that name a shipped vocabulary, as the user writes them
BUNDLED_CHOICES: tuple[str, ...] = tuple(f"{BUNDLED_PREFIX}{name.replace('_', '-')}"
                                         for name in BUNDLED_CORPUS_OF)
#: what ``--vocabulary`` accepts, for help texts and error messages
VOCABULARY_CHOICES = ("none, bundled (every shipped vocabulary), "
                      + ", ".join(BUNDLED_CHOICES) + " or a vocabulary JSON file")

#: the ``--vocabulary`` help of the commands that rewrite a user's own conversations
VOCABULARY_HELP = ("Entity vocabulary: none (the default: general extraction and the learned "
                   "resolver), bundled:cloud, bundled:ja-site, bundled (both) or a vocabulary "
                   "JSON file. A vocabulary decides the conversations that name its entities.")


def load_vocabulary(spec: str | None) -> Vocabulary | None:
    """The vocabulary a ``--vocabulary`` value declares: ``none`` (also the default,
    ``None``): no vocabulary, the general extractor and the learned resolver only;
    ``bundled``: every shipped vocabulary merged; ``bundled:cloud`` /
    ``bundled:ja-site``: one of them; anything else: a vocabulary JSON file.

    No vocabulary unless one is declared: a shipped demo vocabulary (a fictional cloud
    vendor's regions, a Japanese site's products) would otherwise decide a stranger's
    conversation that names "Frankfurt" or "Dublin". An unknown bundled name or a
    missing file is a :class:`ConfigError` listing the choices.

    >>> load_vocabulary(None) is None
    True
    >>> "region" in load_vocabulary("bundled:cloud").types
    True
    """
    if spec is None or spec == "none":
        return None
    if spec == "bundled":
        return bundled_vocabularies()
    name = bundled_name(spec)
    if name is not None:
        if name not in BUNDLED_CORPUS_OF:
            raise ConfigError(f"--vocabulary: no bundled vocabulary named {spec[8:]!r}; "
                              f"choose {VOCABULARY_CHOICES}")
        return bundled_vocabulary(name)
    path = Path(spec)
    if not path.is_file():
        hint = (f" (for the shipped one write bundled:{spec})"
                if bundled_name(BUNDLED_PREFIX + spec) in BUNDLED_CORPUS_OF else "")
        raise ConfigError(f"--vocabulary: {spec!r} is not a vocabulary file{hint}; "
                          f"choose {VOCABULARY_CHOICES}")
    return Vocabulary.load(path)


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
