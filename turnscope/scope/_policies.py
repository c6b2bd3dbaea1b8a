"""The scope policies of docs/architecture.md, selectable by name.

=============  ==============================================================
``full``       the whole transcript (the usual "condense the question" input)
``window``     the last ``w`` turns
``segment``    the turns of the current topical segment (``centroid``, ``flag``, ``learned``)
``liveness``   the live entity slots plus the last two turns
``relevant``   only the earlier exchange(s) matching a topic key in the message
``default``    liveness for entities, relevant-exchange for explicit backward
               references, screen state for situational ones
=============  ==============================================================
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from turnscope._exceptions import ConfigError
from turnscope.conversation import ConversationState, char_bigrams
from turnscope.entities import Enumeration, Slot, SlotStatus, Vocabulary
from turnscope.references import Cue, ReferenceClass
from turnscope.scope._base import Message, Scope, ScopePolicy
from turnscope.scope._segment import SEGMENT_DETECTORS, SegmentDetector, make_detector

__all__ = [
    "FullPolicy",
    "WindowPolicy",
    "SegmentPolicy",
    "LivenessPolicy",
    "RelevantPolicy",
    "DefaultPolicy",
    "POLICIES",
    "get_policy",
    "parse_policy",
    "policy_grammar",
    "PolicySpec",
    "policy_names",
    "DEFAULT_WINDOW",
    "DEFAULT_RECENT_TURNS",
    "DEFAULT_RELEVANT_MIN_OVERLAP",
    "SEGMENT_DEFAULT_DETECTOR",
]

#: the window length most deployments ship with (the README example: "shrink it to two turns")
DEFAULT_WINDOW = 2
#: liveness shows the last two turns beside the slots (docs/architecture.md)
DEFAULT_RECENT_TURNS = 2
#: share of the topic key's character 2-grams an exchange must contain to be "relevant"
DEFAULT_RELEVANT_MIN_OVERLAP = 0.6
#: the detector of a ``segment`` policy that names none
SEGMENT_DEFAULT_DETECTOR = "centroid"
#: how many earlier user turns "the other thing" may reach back over
DEFAULT_THREAD_HORIZON = 12


def _enums_in(state: ConversationState, turns: set[int]) -> tuple[Enumeration, ...]:
    return tuple(e for e in reversed(state.enumerations) if e.turn in turns)


def _last_turns(state: ConversationState, n: int) -> tuple[int, ...]:
    last = state.last_index
    return tuple(range(max(1, last - n + 1), last + 1))


def _screen(state: ConversationState, message: Message) -> object:
    return message.screen or state.latest_screen()


class FullPolicy:
    name = "full"

    def run(self, state: ConversationState, message: Message) -> Scope:
        turns = tuple(range(1, state.last_index + 1))
        return Scope(self.name, turns, enumerations=_enums_in(state, set(turns)),
                     screen=message.screen or state.latest_screen())


@dataclass
class WindowPolicy:
    w: int = DEFAULT_WINDOW

    def __post_init__(self) -> None:
        if self.w < 0:
            raise ConfigError(f"window length must be >= 0, got {self.w}")

    @property
    def name(self) -> str:
        return "window"

    def run(self, state: ConversationState, message: Message) -> Scope:
        turns = _last_turns(state, self.w) if self.w else ()
        return Scope(self.name, turns, enumerations=_enums_in(state, set(turns)),
                     screen=message.screen or state.latest_screen(), note=f"w={self.w}")


class SegmentPolicy:
    def __init__(self, detector: SegmentDetector | str = SEGMENT_DEFAULT_DETECTOR) -> None:
        if isinstance(detector, str):
            detector = make_detector(detector)
        self.detector = detector

    @property
    def name(self) -> str:
        return "segment"

    def run(self, state: ConversationState, message: Message) -> Scope:
        key = self.detector.name
        shift = self.detector.is_shift(state, message)
        if shift:
            start = message.index
            # a detector trained on topic *drift* (TopiOCQA: "the second one", "where was
            # he born?" move to what the last answer brought up) cuts where the subject
            # changed, but the message still leans on that answer: when it needs context,
            # the exchange that introduced the new subject opens the segment
            if getattr(self.detector, "bridges", False) and message.classification.needs_context:
                previous = state.user_turns_before(message.index, 1)
                if previous:
                    start = previous[0].index
            state.segment_start[key] = start
        start = state.segment_start.get(key, 1)
        turns = tuple(range(start, state.last_index + 1))
        return Scope(self.name, turns, enumerations=_enums_in(state, set(turns)),
                     screen=message.screen or state.latest_screen(), topic_shift=shift,
                     note=f"detector={self.detector.name} segment_start={start}")


def _live_enumerations(state: ConversationState, now: int, horizon: int) -> tuple[Enumeration, ...]:
    """Enumerations are list-typed entities: the newest supersedes older ones, and one
    stays in scope until ``horizon`` turns pass with no use of it."""
    out = []
    for e in reversed(state.enumerations[-8:]):
        last_use = state.enumeration_use.get(e.turn, e.turn)
        if now - last_use - 1 < horizon:
            out.append(e)
    return tuple(out)


class LivenessPolicy:
    name = "liveness"

    def __init__(self, recent: int = DEFAULT_RECENT_TURNS) -> None:
        self.recent = recent

    def run(self, state: ConversationState, message: Message) -> Scope:
        state.slots.advance(message.index)
        current = state.slots.current()
        live = tuple(s for s in current if s.status is SlotStatus.LIVE)
        stale = tuple(s for s in current if s.status is SlotStatus.STALE)
        turns = _last_turns(state, self.recent)
        enums = _live_enumerations(state, message.index, state.slots.config.evict_after)
        return Scope(self.name, turns, slots=live, stale=stale, enumerations=enums,
                     screen=message.screen or state.latest_screen(), guarded=True)


class RelevantPolicy:
    """Earlier exchanges matching a topic key named in the message.

    Matching is character 2-gram overlap — no morphology, no embeddings — so
    「さっきのアバターの話」 finds the exchange about アバター案内 as "earlier about
    the avatar" finds the one about the avatar guide.
    """

    name = "relevant"

    def __init__(self, min_overlap: float = DEFAULT_RELEVANT_MIN_OVERLAP, top: int = 1,
                 vocabulary: Vocabulary | None = None) -> None:
        self.min_overlap = min_overlap
        self.top = top
        self.vocabulary = vocabulary

    def use_vocabulary(self, vocabulary: Vocabulary) -> None:
        self.vocabulary = vocabulary

    def find(self, state: ConversationState, key: str, before: int) -> list[tuple[int, float]]:
        best = self._find(state, key, before)
        # "the aussie region" -> Australia -> Sydney (ap-southeast-2): a key that names a
        # vocabulary entity is also looked for under that entity's names
        if self.vocabulary is not None and (not best or best[0][1] < 1.0):
            for hit in self.vocabulary.find(key):
                for surface in self.vocabulary.surfaces_of(hit.name):
                    alt = self._find(state, surface, before)
                    if alt and (not best or alt[0][1] > best[0][1]):
                        best = alt
        return best

    @staticmethod
    def other_thread(state: ConversationState, before: int) -> int | None:
        """The latest user turn of the thread before the current one: the newest question
        whose topic differs from the topic in force (looked for within a bounded horizon,
        so the cost of a turn does not grow with the conversation)."""
        turns = [t for t in reversed(state.resolved) if t < before]
        if not turns:
            return None
        current = state.resolved[turns[0]].topic
        cur_name = current.name.casefold() if current is not None else None
        for t in turns[1:DEFAULT_THREAD_HORIZON]:
            topic = state.resolved[t].topic
            if topic is not None and topic.name.casefold() != cur_name:
                return t
        return None

    def _find(self, state: ConversationState, key: str, before: int) -> list[tuple[int, float]]:
        grams = char_bigrams(key)
        if not grams:
            return []
        counts: dict[int, int] = {}
        for g in grams:
            for ex in state.bigram_index.get(g, ()):
                if ex < before:
                    counts[ex] = counts.get(ex, 0) + 1
        scored = [(ex, c / len(grams)) for ex, c in counts.items() if c / len(grams) >= self.min_overlap]
        # best overlap first; among equals the earliest exchange that introduced the key,
        # since "go back to X" returns to where X was discussed, not its last echo
        scored.sort(key=lambda p: (-round(p[1], 3), p[0]))
        return scored[: self.top]

    def run(self, state: ConversationState, message: Message) -> Scope:
        key = message.classification.topic_key
        if Cue.OTHER_THREAD in message.classification.cues:
            ex = self.other_thread(state, message.index)
            if ex is None:
                return Scope(self.name, (), guarded=True, note="no other thread")
            return Scope(self.name, tuple(state.exchange_of(ex)), guarded=True, recalled=(ex,),
                         note="the other thread")
        if not key:
            return Scope(self.name, (), guarded=True, note="no topic key")
        found = self.find(state, key, message.index)
        turns: list[int] = []
        for ex, _ in found:
            turns.extend(state.exchange_of(ex))
        return Scope(self.name, tuple(sorted(turns)), guarded=True,
                     recalled=tuple(ex for ex, _ in found), note=f"key={key!r}")


class DefaultPolicy:
    """Liveness + relevant exchange for explicit recall + screen for situational references."""

    name = "default"

    def __init__(self) -> None:
        self.liveness = LivenessPolicy()
        self.relevant = RelevantPolicy()

    def use_vocabulary(self, vocabulary: Vocabulary) -> None:
        """Let topic keys match entities under their aliases (the session calls this)."""
        self.relevant.vocabulary = vocabulary

    def run(self, state: ConversationState, message: Message) -> Scope:
        base = self.liveness.run(state, message)
        cls = message.classification.reference_class
        if cls is ReferenceClass.EARLIER:
            rel = self.relevant.run(state, message)
            if rel.recalled:
                # the recalled exchange's entities come back into scope with it
                recalled_turns = set(rel.turns)
                # only the recalled turns are read, never the whole slot history
                extra: list[Slot] = []
                seen = {s.key.casefold() for s in base.slots}
                for t in sorted(recalled_turns):
                    for m in state.mentions.get(t, ()):
                        if m.is_attribute or m.key.casefold() in seen:
                            continue
                        seen.add(m.key.casefold())
                        cur = state.slots.get(m.type, m.name)
                        if cur is None or cur.status is not SlotStatus.LIVE:
                            extra.append(cur or Slot(m.type, m.name, t, t, SlotStatus.EVICTED))
                slots = base.slots + tuple(extra)
                enums = base.enumerations + _enums_in(state, recalled_turns)
                return Scope(self.name, tuple(sorted(set(base.turns) | recalled_turns)),
                             slots=slots, stale=base.stale, enumerations=enums,
                             screen=base.screen, guarded=True, recalled=rel.recalled,
                             note=rel.note)
        return Scope(self.name, base.turns, slots=base.slots, stale=base.stale,
                     enumerations=base.enumerations, screen=base.screen, guarded=True)


POLICIES: dict[str, Callable[..., ScopePolicy]] = {
    "full": FullPolicy,
    "window": WindowPolicy,
    "segment": SegmentPolicy,
    "segment-centroid": lambda: SegmentPolicy("centroid"),
    "segment-flag": lambda: SegmentPolicy("flag"),
    "segment-learned": lambda: SegmentPolicy("learned"),
    "liveness": LivenessPolicy,
    "relevant": RelevantPolicy,
    "default": DefaultPolicy,
}

#: the policies as a user names them, in the order help texts list them
_BASE_NAMES: tuple[str, ...] = ("default", "full", "window", "segment", "liveness", "relevant")
#: ``segment-X`` is kept as a spelling of ``segment:X`` (earlier releases listed it in
#: :func:`policy_names`, so user code may name it)
_ALIASES: dict[str, tuple[str, str]] = {f"segment-{d}": ("segment", d) for d in SEGMENT_DETECTORS}
_WINDOW_ARG = re.compile(r"[0-9]+")


def policy_names() -> list[str]:
    return sorted(POLICIES)


def policy_grammar() -> str:
    """Every policy spec the parser accepts, as help texts and error messages state it.

    >>> policy_grammar()
    'default, full, window[:W] (W >= 0 turns), segment[:centroid|flag|learned], liveness, relevant'
    """
    parts = []
    for name in _BASE_NAMES:
        if name == "window":
            parts.append("window[:W] (W >= 0 turns)")
        elif name == "segment":
            parts.append(f"segment[:{'|'.join(SEGMENT_DETECTORS)}]")
        else:
            parts.append(name)
    return ", ".join(parts)


@dataclass(frozen=True)
class PolicySpec:
    """A parsed policy spec: the policy's name and its argument (``window``: the number of
    turns, an ``int``; ``segment``: the detector's name; ``None`` when not given, meaning the
    policy's default). ``str(spec)`` is the canonical spelling.

    >>> parse_policy(" Window:3 ")
    PolicySpec(name='window', argument=3)
    >>> str(parse_policy("segment-learned"))
    'segment:learned'
    """

    name: str
    argument: int | str | None = None

    def __str__(self) -> str:
        return self.name if self.argument is None else f"{self.name}:{self.argument}"

    def build(self) -> ScopePolicy:
        """A new policy object for this spec."""
        if self.name == "window" and isinstance(self.argument, int):
            return WindowPolicy(self.argument)
        if self.name == "segment" and isinstance(self.argument, str):
            return SegmentPolicy(self.argument)
        return POLICIES[self.name]()


def _shown(text: str) -> str:
    # a spec comes from a user (a query parameter, a CLI option): the message quotes it,
    # but not a megabyte of it
    return repr(text) if len(text) <= 80 else repr(text[:80]) + "..."


def parse_policy(spec: str) -> PolicySpec:
    """The one reading of a policy spec, shared by the library, the CLI and the service.

    Grammar (case and surrounding blanks ignored)::

        default | full | liveness | relevant
        window[:W]                      W: ASCII digits, >= 0 (0 = no earlier turn)
        segment[:centroid|flag|learned]
        segment-centroid | segment-flag | segment-learned   (= segment:X)

    An empty argument (``window:``) means the default, as it always has. Anything else is
    a :class:`ConfigError` naming the bad value and listing the valid specs.

    >>> parse_policy("window:0").argument
    0
    """
    if not isinstance(spec, str):
        raise ConfigError(f"a policy spec is a string, got {type(spec).__name__}; valid: {policy_grammar()}")
    raw_name, colon, raw_arg = spec.partition(":")
    name, arg = raw_name.strip().lower(), raw_arg.strip()
    if name in _ALIASES:
        if colon:
            raise ConfigError(f"policy {name!r} takes no argument (got {_shown(spec)}); write "
                              f"{_ALIASES[name][0]}:{_ALIASES[name][1]}")
        return PolicySpec(*_ALIASES[name])
    if name not in POLICIES:
        raise ConfigError(f"unknown policy {_shown(spec)}; valid: {policy_grammar()} "
                          f"(also {', '.join(_ALIASES)})")
    if not arg:
        return PolicySpec(name)
    if name == "window":
        if not _WINDOW_ARG.fullmatch(arg):
            raise ConfigError(f"window length must be an integer >= 0, got {_shown(raw_arg)} in {_shown(spec)}; "
                              f"valid: {policy_grammar()}")
        try:
            return PolicySpec(name, int(arg))
        except ValueError:  # more digits than int() converts: no conversation is that long
            raise ConfigError(f"window length {raw_arg[:20]!r}... has too many digits") from None
    if name == "segment":
        detector = arg.lower()
        if detector not in SEGMENT_DETECTORS:
            raise ConfigError(f"unknown segment detector {_shown(raw_arg)} in {_shown(spec)}; valid: "
                              + ", ".join(f"segment:{d}" for d in SEGMENT_DETECTORS))
        return PolicySpec(name, detector)
    raise ConfigError(f"policy {name!r} takes no argument (got {_shown(spec)}); valid: {policy_grammar()}")


def get_policy(spec: str | ScopePolicy) -> ScopePolicy:
    """A policy from a spec (:func:`parse_policy`): ``full``, ``window:3``, ``segment:flag``…
    A policy object passes through.

    >>> get_policy("window:3").run.__self__.w
    3
    """
    if not isinstance(spec, str):
        return spec
    return parse_policy(spec).build()
