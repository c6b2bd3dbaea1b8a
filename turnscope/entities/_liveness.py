"""Entity liveness slots (docs/architecture.md).

::

                mentioned again
       +-------------------------------+
       v                               |
     LIVE --(stale_after silent turns)--> STALE --(evict_after silent turns)--> EVICTED
       |                                   |
       +--(new entity of the same type)----+--> SUPERSEDED

Silence is counted per entity from its own last mention, in turns (user and
assistant turns both count, as the turn numbering does). Going stale is
reversible; eviction and supersession are terminal. A later mention of a
terminated entity opens a *new* slot (a new generation): the old slot never
comes back, but the user can always name a thing again.

Supersession only applies to *exclusive* types: vocabulary types by default
(a ``service`` replaces a ``service``). The general extractor's coarse types
(``phrase``, ``name``, ``term``) never supersede one another: "a new phrase"
says nothing about the old one being finished with. Entities introduced in the
same turn never supersede each other either (that is an enumeration or a
comparison, "Frankfurt and Dublin").
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from enum import StrEnum

from turnscope.entities._extract import GENERAL_TYPES, Mention

__all__ = [
    "SlotStatus",
    "Slot",
    "SlotTable",
    "LivenessConfig",
    "DEFAULT_STALE_AFTER",
    "DEFAULT_EVICT_AFTER",
]

#: docs/architecture.md defaults, in turns of silence
DEFAULT_STALE_AFTER = 3
DEFAULT_EVICT_AFTER = 8


class SlotStatus(StrEnum):
    LIVE = "live"
    STALE = "stale"
    EVICTED = "evicted"
    SUPERSEDED = "superseded"

    @property
    def terminal(self) -> bool:
        return self in (SlotStatus.EVICTED, SlotStatus.SUPERSEDED)


@dataclass(frozen=True, slots=True)
class LivenessConfig:
    stale_after: int = DEFAULT_STALE_AFTER
    evict_after: int = DEFAULT_EVICT_AFTER
    #: None = every type except the general extractor's coarse ones
    exclusive_types: frozenset[str] | None = None

    def __post_init__(self) -> None:
        if self.stale_after < 1 or self.evict_after <= self.stale_after:
            from turnscope._exceptions import ConfigError

            raise ConfigError(
                f"need 1 <= stale_after < evict_after, got stale_after={self.stale_after}, "
                f"evict_after={self.evict_after}"
            )

    def is_exclusive(self, typ: str) -> bool:
        if typ == "attribute":
            return False
        if self.exclusive_types is None:
            return typ not in GENERAL_TYPES
        return typ in self.exclusive_types


@dataclass(frozen=True, slots=True)
class Slot:
    type: str
    name: str
    introduced: int
    last_seen: int
    status: SlotStatus = SlotStatus.LIVE
    mentions: int = 1
    by_user: bool = False  # ever mentioned by the user (users' entities anchor topics)
    superseded_by: str | None = None

    @property
    def key(self) -> str:
        return f"{self.type}:{self.name}"

    def silent_turns(self, now: int) -> int:
        """Turns strictly between the last mention and ``now``."""
        return max(0, now - self.last_seen - 1)


class SlotTable:
    """The working set of entities of one conversation.

    >>> t = SlotTable()
    >>> from turnscope.entities import Mention
    >>> t.observe(1, [Mention("service", "billing export API", "billing export API", 0, 1)])
    >>> t.observe(5, [Mention("service", "reporting export API", "reporting export API", 0, 1)])
    >>> [(s.name, s.status.value) for s in t.slots()]
    [('billing export API', 'superseded'), ('reporting export API', 'live')]
    """

    def __init__(self, config: LivenessConfig | None = None) -> None:
        self.config = config or LivenessConfig()
        self._slots: list[Slot] = []
        # index of the current (non-terminal) slot per key; terminal ones drop out
        self._current: dict[str, int] = {}
        self.now = 0

    # -- queries ---------------------------------------------------------------------
    def slots(self) -> list[Slot]:
        """All slots ever opened, oldest first (terminal ones included)."""
        return list(self._slots)

    def current(self) -> list[Slot]:
        """Non-terminal slots (live or stale)."""
        return [self._slots[i] for i in sorted(self._current.values())]

    def recent(self, limit: int) -> list[Slot]:
        """The ``limit`` most recently opened slots (any status), newest first; bounded, so
        a look back does not grow with the conversation."""
        return [self._slots[i] for i in range(len(self._slots) - 1,
                                               max(-1, len(self._slots) - 1 - limit), -1)]

    def live(self) -> list[Slot]:
        return [s for s in self.current() if s.status is SlotStatus.LIVE]

    def get(self, typ: str, name: str) -> Slot | None:
        i = self._current.get(_key(typ, name))
        return self._slots[i] if i is not None else None

    def find_name(self, name: str) -> Slot | None:
        """Latest slot (any status) with this canonical name, whatever its type."""
        low = name.casefold()
        for s in reversed(self._slots):
            if s.name.casefold() == low:
                return s
        return None

    def copy(self) -> SlotTable:
        """An independent table with the same slots (a forked session's): slots are frozen
        records and are shared; only the containers that :meth:`observe` and
        :meth:`advance` change are new. The configuration is shared (it is never changed)."""
        new = SlotTable.__new__(SlotTable)
        new.config = self.config
        new._slots = list(self._slots)
        new._current = dict(self._current)
        new.now = self.now
        return new

    # -- transitions -----------------------------------------------------------------
    def advance(self, now: int) -> None:
        """Age every slot to turn ``now`` (silence-based transitions)."""
        if now < self.now:
            return
        self.now = now
        cfg = self.config
        for key, i in list(self._current.items()):
            s = self._slots[i]
            silent = s.silent_turns(now)
            if silent >= cfg.evict_after:
                self._slots[i] = replace(s, status=SlotStatus.EVICTED)
                del self._current[key]
            elif silent >= cfg.stale_after and s.status is SlotStatus.LIVE:
                self._slots[i] = replace(s, status=SlotStatus.STALE)

    def observe(self, turn: int, mentions: Iterable[Mention], *, by_user: bool = False) -> None:
        """Record the mentions of one turn: revive, open or supersede slots."""
        self.advance(turn)
        ms = [m for m in mentions if m.type != "attribute"]
        arriving_types = {m.type for m in ms if self.config.is_exclusive(m.type)}
        arriving_keys = {_key(m.type, m.name) for m in ms}
        # supersession: an exclusive-type newcomer ends every other slot of its type,
        # unless that slot is mentioned in the same turn (comparison / enumeration)
        new_keys = {k for k in arriving_keys if k not in self._current}
        new_types = {m.type for m in ms if _key(m.type, m.name) in new_keys} & arriving_types
        for key, i in list(self._current.items()):
            s = self._slots[i]
            if s.type in new_types and key not in arriving_keys:
                newcomer = next(m.name for m in ms
                                if m.type == s.type and _key(m.type, m.name) in new_keys)
                self._slots[i] = replace(s, status=SlotStatus.SUPERSEDED, superseded_by=newcomer)
                del self._current[key]
        for m in ms:
            key = _key(m.type, m.name)
            cur = self._current.get(key)
            if cur is None:
                self._slots.append(Slot(m.type, m.name, turn, turn, SlotStatus.LIVE, 1, by_user))
                self._current[key] = len(self._slots) - 1
            else:
                s = self._slots[cur]
                if s.last_seen == turn and s.status is SlotStatus.LIVE:
                    continue  # several mentions in one turn count once
                self._slots[cur] = replace(s, last_seen=turn, status=SlotStatus.LIVE,
                                         mentions=s.mentions + 1, by_user=s.by_user or by_user)

    def table(self) -> list[dict[str, object]]:
        """The slot table as plain rows, for logs and traces."""
        return [
            {"type": s.type, "name": s.name, "introduced": s.introduced,
             "last_seen": s.last_seen, "status": s.status.value}
            for s in self._slots
        ]


def _key(typ: str, name: str) -> str:
    return f"{typ}:{name.casefold()}"
