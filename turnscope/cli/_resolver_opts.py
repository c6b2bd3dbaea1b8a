"""The ``--resolver-threshold`` option: where the learned resolver operates on its curve."""

from __future__ import annotations

from typing import Annotated

import typer

from turnscope._exceptions import ConfigError
from turnscope.resolver import Resolver, default_resolver

__all__ = ["ResolverThresholdOption", "resolver_from_option"]

#: ``--resolver-threshold``: the gate probability a phrase needs to be carried. None keeps the
#: shipped model's threshold (chosen on development data, precision first); lower values
#: carry more phrases and put more wrong words into queries
#: (``python benchmarks/resolver_sweep.py`` draws the curve)
ResolverThresholdOption = Annotated[float | None, typer.Option(
    "--resolver-threshold", min=0.0, max=1.0,
    help="Gate probability a phrase needs before the learned resolver carries it "
         "(default: the shipped model's, chosen on development data, precision first). "
         "Lower carries more, and adds more wrong words: benchmarks/resolver_sweep.py "
         "draws coverage against contamination.")]


def resolver_from_option(threshold: float | None) -> Resolver | str:
    """The resolver a session should use: the shipped one, at ``threshold`` when given.

    Raises ``typer.BadParameter`` naming the option when a threshold is asked for and the
    shipped model cannot be loaded (without the option a session degrades to the rules
    and says so in its trace; a user who set the option asked for the model).
    """
    if threshold is None:
        return "default"
    try:
        return default_resolver().with_threshold(threshold)
    except ConfigError as exc:
        raise typer.BadParameter(f"the learned resolver is unavailable: {exc}",
                                 param_hint="--resolver-threshold") from None
