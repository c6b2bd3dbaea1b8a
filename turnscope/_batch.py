"""Batch rewriting that replays each shared history once.

A data set of follow-up items (docs/benchmarks.md) usually holds one item per turn of a
conversation: item *k*'s history is item *k-1*'s history, its follow-up and the answer.
Rewriting every item in a fresh session replays the whole history each time, so a
conversation of *n* turns costs *n²/2* turns of work. :class:`BatchRewriter` keeps a
small LRU cache of live sessions keyed by the history they have seen; an item starts
from the session that saw the longest cached part of its history and feeds only the
turns after it. Each item's result is the one a fresh session replaying its whole
history gives (:func:`turnscope._items.rewrite_item`): the same query, trace, scope and
slot table.

Two sessions are kept per item: the one that has seen the item's history, and (when the
session's rewriter is the embedded one) a fork of it that has then taken the follow-up.
The embedded rewriter takes a follow-up exactly as it replays a history turn, so the
second is where the conversation's next item starts: it is continued in place by that
item's answer turn and becomes that item's history session. One fork (:meth:`Session.fork`,
a few list copies, far less than a turn) per item, and an item that shares only part of
another's history (a second follow-up to the same history, another answer to the same
question, items out of order) still finds a cached session close to it. With another
rewriter (a model) the follow-up's rewrite is not how history turns are replayed (those
go to the embedded rewriter, one model call per item), so only the history session is
kept and the follow-up is rewritten in a fork of it.
"""

from __future__ import annotations

import hashlib
import json
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from turnscope._exceptions import InputError
from turnscope._items import FollowUpItem, _explain
from turnscope._session import Session, TurnResult

__all__ = ["BatchRewriter", "BatchStats", "DEFAULT_MAX_SESSIONS"]

#: sessions kept by default: one per conversation being read, and room for items of a
#: few conversations interleaved. A session of a long conversation holds its turns and
#: indexes (hundreds of kB), so the bound is what keeps a large input's memory flat
DEFAULT_MAX_SESSIONS = 16

_Turn = tuple[str, str, dict[str, Any] | None]


@dataclass(frozen=True)
class BatchStats:
    """What a :class:`BatchRewriter` has done so far.

    ``turns_fed`` history turns were replayed; ``turns_reused`` were not, because a cached
    session had already seen them (their sum is the history turns of every item).
    """

    items: int
    turns_fed: int
    turns_reused: int
    forks: int
    fresh_sessions: int
    cached_sessions: int


def _turn_bytes(role: str, content: str, screen: Mapping[str, Any] | None) -> bytes:
    """One history turn as bytes that differ whenever anything the session reads differs."""
    text = json.dumps([role, content, screen], ensure_ascii=False, sort_keys=True)
    # "surrogatepass": a lone surrogate (a JSON "\ud800" escape in the input) is content too
    return text.encode("utf-8", "surrogatepass")


class _History:
    """Keys of every prefix of a history: ``key(i)`` names its first ``i`` turns.

    A running BLAKE2b over length-prefixed turns, so two histories share a key exactly
    when they share those turns (up to a 128-bit collision)."""

    def __init__(self, turns: Iterable[_Turn]) -> None:
        h = hashlib.blake2b(digest_size=16)
        self.keys = [h.digest()]
        for role, content, screen in turns:
            self._add(h, role, content, screen)
            self.keys.append(h.digest())
        self._hash = h

    @staticmethod
    def _add(h: Any, role: str, content: str, screen: Mapping[str, Any] | None) -> None:
        b = _turn_bytes(role, content, screen)
        h.update(len(b).to_bytes(8, "little"))
        h.update(b)

    def extended(self, role: str, content: str, screen: Mapping[str, Any] | None) -> bytes:
        """The key of this history followed by one more turn."""
        h = self._hash.copy()
        self._add(h, role, content, screen)
        digest: bytes = h.digest()
        return digest


def _validated(item: object) -> FollowUpItem:
    if not isinstance(item, Mapping):
        raise InputError(f"an item must be a FollowUpItem or a dict, got {type(item).__name__}")
    try:
        return FollowUpItem.model_validate(dict(item))
    except ValidationError as exc:
        ident = f" (id {item.get('id')!r})" if isinstance(item.get("id"), str) else ""
        raise InputError(f"invalid follow-up item{ident}: {_explain(exc)}") from None


class BatchRewriter:
    """Rewrite follow-up items, replaying a history shared by several items once.

    ``make_session`` makes the fresh session an item with no cached history starts from
    (as for :func:`turnscope._items.rewrite_item`); ``max_sessions`` bounds the sessions
    kept (least recently used first out). Results are those of a fresh session per item;
    only the time differs. Not for use by several threads at once.

    >>> from turnscope import BatchRewriter, Session
    >>> batch = BatchRewriter(lambda: Session(resolver=None))
    >>> first = [{"role": "user", "content": "Which EU regions support customer-managed keys?"},
    ...          {"role": "assistant", "content": "Frankfurt and Dublin both support CMK."}]
    >>> a = {"id": "a", "prefix": first, "follow_up": "What's the uptime SLA on the second one?"}
    >>> batch.rewrite(a).query
    "What's the uptime SLA on Dublin?"
    >>> b = {"id": "b", "follow_up": "And on the first one?", "prefix": first + [
    ...     {"role": "user", "content": "What's the uptime SLA on the second one?"},
    ...     {"role": "assistant", "content": "Dublin's SLA is 99.95%."}]}
    >>> _ = batch.rewrite(b)
    >>> batch.stats.turns_reused, batch.stats.turns_fed  # b's first three turns came from a
    (3, 3)
    """

    def __init__(self, make_session: Callable[[], Session], *,
                 max_sessions: int = DEFAULT_MAX_SESSIONS) -> None:
        if not callable(make_session):
            raise InputError(f"make_session must be a callable returning a Session, "
                             f"got {make_session!r}")
        if not isinstance(max_sessions, int) or isinstance(max_sessions, bool) \
                or max_sessions < 1:
            raise InputError(f"max_sessions must be an integer of at least 1, "
                             f"got {max_sessions!r}")
        self._make_session = make_session
        self.max_sessions = max_sessions
        self._cache: OrderedDict[bytes, Session] = OrderedDict()
        self._items = self._fed = self._reused = self._forks = self._fresh = 0

    @property
    def stats(self) -> BatchStats:
        """Counts so far (a snapshot)."""
        return BatchStats(self._items, self._fed, self._reused, self._forks, self._fresh,
                          len(self._cache))

    def clear(self) -> None:
        """Drop every cached session (their memory); later items replay from scratch."""
        self._cache.clear()

    def rewrite(self, item: FollowUpItem | Mapping[str, Any]) -> TurnResult:
        """The rewrite of ``item``'s follow-up after its history (``prefix``).

        ``item`` is a follow-up item (docs/benchmarks.md) as read by
        :func:`turnscope._items.read_items`, or the same as a dict. Raises what a fresh
        session would raise for this item (an :class:`~turnscope.InputError` for a turn
        with no visible text, …), or an InputError naming the fields of a dict that is
        not an item; a failed item leaves no partly fed session in the cache.
        """
        return self.rewrite_in_session(item)[0]

    def rewrite_in_session(self, item: FollowUpItem | Mapping[str, Any]) -> tuple[TurnResult, Session]:
        """:meth:`rewrite`, and the session that took the follow-up (its state is the one a
        fresh session replaying the item is left in: an evaluation renders its evidence)."""
        if not isinstance(item, FollowUpItem):
            item = _validated(item)
        turns: list[_Turn] = [(t.role, t.content, t.screen.model_dump() if t.screen else None)
                              for t in item.prefix]
        history = _History(turns)
        n = len(turns)
        start, base = 0, None
        for i in range(n, -1, -1):
            base = self._cache.get(history.keys[i])
            if base is not None:
                start = i
                break
        if base is None:
            session = self._make_session()
            self._fresh += 1
        elif start < n:
            # continued in place: the session becomes the one of this item's whole history,
            # kept below in its stead. Whoever wanted the shorter history finds a shorter
            # cached one (the previous item's history, kept beside its follow-up's session)
            session = self._cache.pop(history.keys[start])
        else:
            session = base
            self._cache.move_to_end(history.keys[n])
        for role, content, screen in turns[start:]:
            session._feed(role, content, screen)
        if start < n or base is None:
            self._keep(history.keys[n], session)
        # the follow-up is taken by a fork: the session of the history stays in the cache
        # for another item with the same history (a second follow-up, another rewriter's)
        follow = session.fork()
        self._forks += 1
        follow_screen = item.screen.model_dump() if item.screen else None
        result = follow.user(item.follow_up, screen=follow_screen)
        if follow.rewriter is follow.embedded:
            # the embedded rewriter takes a follow-up exactly as a history turn, so this
            # session is the one the conversation's next item continues
            self._keep(history.extended("user", item.follow_up, follow_screen), follow)
        self._items += 1
        self._fed += len(turns) - start
        self._reused += start
        return result, follow

    def rewrite_all(self, items: Iterable[FollowUpItem | Mapping[str, Any]]) -> Iterator[TurnResult]:
        """:meth:`rewrite` of each item, in order; the first failure propagates."""
        for item in items:
            yield self.rewrite(item)

    def _keep(self, key: bytes, session: Session) -> None:
        self._cache[key] = session
        self._cache.move_to_end(key)
        while len(self._cache) > self.max_sessions:
            self._cache.popitem(last=False)
