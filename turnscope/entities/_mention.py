"""The records entity extraction produces: a typed mention and an ordered list of them.
"""

from __future__ import annotations

from dataclasses import dataclass

#: types produced by the general extractor; they are too coarse for supersession
#: ("a new phrase" does not replace "an old phrase") so slots of these types only age out.
GENERAL_TYPES = frozenset({"name", "term", "phrase", "attribute"})


@dataclass(frozen=True, slots=True)
class Mention:
    """One occurrence of an entity in a message."""

    type: str
    name: str  # canonical name
    surface: str  # as written
    start: int
    end: int
    source: str = "general"  # "vocab" | "general"
    #: written with a definite determiner ("the system", "these plans"): it points back at
    #: something given, where a bare noun ("melatonin", "sharks") names its own subject
    definite: bool = False

    @property
    def key(self) -> str:
        return f"{self.type}:{self.name}"

    @property
    def is_attribute(self) -> bool:
        return self.type == "attribute"


@dataclass(frozen=True, slots=True)
class Enumeration:
    """An ordered list of alternatives offered in one turn."""

    turn: int
    items: tuple[Mention, ...]
    numbered: bool = False
    #: how the list was found: ``"numbered"`` items, a ``"coordination"`` ("A, B and C"),
    #: or a ``"run"`` of same-typed entities named one after another in separate clauses
    kind: str = "coordination"

    @property
    def explicit(self) -> bool:
        """A list the turn itself presents as one: numbered items, a coordination, or a
        run of vocabulary entities. A run of proper names is not: in a long answer it is
        every capitalised word in order ("Formation, Pangaea, Rodinia, …")."""
        return self.kind != "run" or all(m.source == "vocab" for m in self.items)
