"""Query baselines: what a retriever would get without any rewriter, one fixed query per item.

They answer a newcomer's first question, "is this better than pasting the history into the
query?", on the very items the policies are scored on, with the same checks: the message as
typed, the previous user turn prepended, and the whole conversation prepended (what a
condense prompt that is handed everything starts from).

>>> from turnscope._items import FollowUpItem
>>> item = FollowUpItem.model_validate({"id": "a", "follow_up": "and its SLA?", "prefix": [
...     {"role": "user", "content": "Which regions have CMK?"},
...     {"role": "assistant", "content": "Frankfurt."}]})
>>> query_baselines([item])
{'raw': ['and its SLA?'], 'prev_user': ['Which regions have CMK? and its SLA?'], \
'all_history': ['Which regions have CMK? Frankfurt. and its SLA?']}
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType

from turnscope._items import FollowUpItem
from turnscope.datasets import cast_baselines

__all__ = ["YOURS", "BASELINE_PREFIX", "BASELINE_TITLES", "QUERY_BASELINES", "baseline_title",
           "query_baselines"]

#: the label prefix of a baseline's rows in an :class:`EvalResult` (``baseline:raw``)
BASELINE_PREFIX = "baseline:"
#: the baselines :func:`query_baselines` builds, simplest first
QUERY_BASELINES: tuple[str, ...] = ("raw", "prev_user", "all_history")
#: plain-words names of every baseline a harness run may carry (CAsT adds its own)
BASELINE_TITLES: Mapping[str, str] = MappingProxyType({
    "raw": "raw message",
    "prev_user": "previous user turn prepended",
    "all_user": "whole user history prepended",
    "prev_exchange": "previous exchange prepended",
    "all_history": "whole history prepended",
    "automatic": "organisers' automatic rewrite",
    "human": "human rewrite (ceiling)",
    "yours": "your rewrites (--rewrites)",
})
#: the baseline name of a rewrites file scored beside the policies (``eval --rewrites``)
YOURS = "yours"


def baseline_title(label: str) -> str:
    """A row label in plain words: ``baseline:raw`` -> ``raw message``; a policy's name is
    returned as it is."""
    if not label.startswith(BASELINE_PREFIX):
        return label
    name = label[len(BASELINE_PREFIX):]
    return BASELINE_TITLES.get(name, name)


def query_baselines(items: Sequence[FollowUpItem]) -> dict[str, list[str]]:
    """The :data:`QUERY_BASELINES` queries per item, keyed by baseline name.

    The same construction as CAsT's baselines (:func:`turnscope.datasets.cast_baselines`);
    "whole history" holds the assistant's turns too when the set has them (a condense
    prompt is given both), else it is the user turns alone.
    """
    dicts = [{"follow_up": item.follow_up, "prefix": item.prefix_dicts()} for item in items]
    built = cast_baselines(dicts)
    return {"raw": built["raw"], "prev_user": built["prev_user"],
            "all_history": built.get("all_history", built["all_user"])}
