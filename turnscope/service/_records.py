"""The session store interface and the records it holds (a leaf module: the stores import
it, and :mod:`turnscope.service._store` opens a store by URL without a circle back).

The stored turns *are* a session's scope state: a worker rebuilds a
:class:`turnscope.Session` by replaying them, so a restart, another worker or another
host produces the same rewrite. Each user turn's rewrite output and the slot table after
every turn are stored beside it, so reading a session never recomputes anything.

Appends are optimistic: a writer reads the version (the number of turns), computes the
new turn, and writes it only if the version is still the one it read
(:meth:`SessionStore.append` raises :class:`VersionConflict` otherwise). Every store
makes that check and the write one atomic step across processes (SQLite: ``BEGIN
IMMEDIATE``; Redis: a Lua script), which is what keeps a turn answered 200 from being
lost, reordered or duplicated.
"""

from __future__ import annotations

import json
import zlib
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

__all__ = ["SessionMeta", "StoredTurn", "SessionRecord", "SessionStore", "lock_slot", "LOCK_SLOTS"]

#: per-session locks are striped over this many slots (threads and processes alike)
LOCK_SLOTS = 1024


def lock_slot(session_id: str) -> int:
    """The lock slot of a session: the same in every process (unlike ``hash()``), so a
    worker's thread lock and the store's cross-process lock cover the same sessions."""
    return zlib.crc32(session_id.encode("utf-8")) % LOCK_SLOTS


@dataclass(frozen=True)
class SessionMeta:
    """What a session is created with."""

    session_id: str
    tenant: str
    policy: str
    vocabulary: str
    created: float

    def to_dict(self) -> dict[str, Any]:
        return {"session_id": self.session_id, "tenant": self.tenant, "policy": self.policy,
                "vocabulary": self.vocabulary, "created": self.created}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> SessionMeta:
        return cls(str(d["session_id"]), str(d["tenant"]), str(d["policy"]),
                   str(d["vocabulary"]), float(d["created"]))


@dataclass(frozen=True)
class StoredTurn:
    """One accepted turn. ``index`` is 1-based and equals the session version after it.

    ``tid`` is a random id of the request that wrote it: when a write's outcome is
    unknown (a connection dropped after the store applied it), the writer finds its own
    ``tid`` at ``index`` and does not write the turn a second time.
    """

    index: int
    role: str
    content: str
    screen: dict[str, Any] | None
    output: dict[str, Any] | None
    slots: list[dict[str, Any]]
    tid: str
    created: float = 0.0

    def to_json(self) -> str:
        # ASCII-escaped: whatever the text holds, the stored form is plain ASCII
        return json.dumps({"index": self.index, "role": self.role, "content": self.content,
                           "screen": self.screen, "output": self.output, "slots": self.slots,
                           "tid": self.tid, "created": self.created})

    @classmethod
    def from_json(cls, text: str | bytes) -> StoredTurn:
        d = json.loads(text)
        return cls(int(d["index"]), str(d["role"]), str(d["content"]), d.get("screen"),
                   d.get("output"), list(d.get("slots") or []), str(d.get("tid", "")),
                   float(d.get("created", 0.0)))

    def public(self) -> dict[str, Any]:
        """The turn as ``GET /v1/sessions/{id}`` shows it."""
        out: dict[str, Any] = {"turn": self.index, "role": self.role, "content": self.content,
                               "screen": self.screen}
        if self.output is not None:
            out["rewrite"] = self.output
        return out


@dataclass(frozen=True)
class SessionRecord:
    """A session as read from the store: its ``version`` (number of turns) and the turns
    with an index above ``since`` (all of them when ``since`` is 0), in order."""

    meta: SessionMeta
    version: int
    since: int = 0
    turns: tuple[StoredTurn, ...] = field(default_factory=tuple)


@runtime_checkable
class SessionStore(Protocol):
    """Where sessions live. Implementations: :class:`~turnscope.service.SQLiteStore`,
    :class:`~turnscope.service.RedisStore`.

    Every method may be called from many threads and many processes at once.
    Unreachable storage raises :class:`~turnscope.service.StoreUnavailable`.
    """

    kind: str

    def create(self, meta: SessionMeta) -> None:
        """Store a new, empty session (version 0) with the store's TTL."""
        ...

    def load(self, session_id: str, since: int = 0) -> SessionRecord | None:
        """A consistent snapshot of the session, or None when it does not exist or expired."""
        ...

    def append(self, session_id: str, expected_version: int, turn: StoredTurn) -> int:
        """Add ``turn`` (whose index is ``expected_version + 1``) if the session is still at
        ``expected_version``, refresh the TTL, and return the new version.

        Raises :class:`~turnscope.service.VersionConflict` when another writer got there
        first and :class:`~turnscope.service.NotFound` when the session is gone."""
        ...

    def delete(self, session_id: str) -> bool:
        """Remove the session; False when there was none."""
        ...

    def session_lock(self, session_id: str, timeout: float) -> AbstractContextManager[bool]:
        """Hold the session's cross-process lock while a turn is computed; yields whether it
        was acquired within ``timeout``.

        It only saves work: workers on one session queue instead of computing the same
        turn and losing the version race. Correctness never depends on it (the version
        check in :meth:`append` does not trust it), so a lock lost to a crash or a lease
        that runs out costs a retry, never a turn."""
        ...

    def ping(self) -> None:
        """Raise :class:`~turnscope.service.StoreUnavailable` unless the store answers."""
        ...

    def close(self) -> None: ...
