"""Entity liveness slots: the state machine of SPEC section 2.

live -> stale after ``stale_after`` silent turns (reversible on mention) -> evicted
after ``evict_after`` (terminal); superseded by a same-type newcomer for exclusive
types (terminal); a mention of a terminated entity opens a new slot.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from turnscope import ConfigError, LivenessConfig, Mention, SlotStatus, SlotTable
from turnscope.entities import DEFAULT_EVICT_AFTER, DEFAULT_STALE_AFTER


def m(typ: str, name: str) -> Mention:
    return Mention(typ, name, name, 0, len(name))


def status(t: SlotTable, typ: str, name: str) -> SlotStatus | None:
    s = t.get(typ, name)
    return s.status if s is not None else None


def statuses(t: SlotTable) -> list[tuple[str, str]]:
    return [(s.name, s.status.value) for s in t.slots()]


# -- defaults and config ---------------------------------------------------------------


def test_spec_defaults() -> None:
    assert DEFAULT_STALE_AFTER == 3
    assert DEFAULT_EVICT_AFTER == 8
    cfg = LivenessConfig()
    assert (cfg.stale_after, cfg.evict_after) == (3, 8)
    assert SlotTable().config == cfg


@pytest.mark.parametrize("stale, evict", [(3, 3), (5, 4), (8, 8), (0, 8), (-1, 3)])
def test_config_rejects_bad_horizons(stale: int, evict: int) -> None:
    with pytest.raises(ConfigError):
        LivenessConfig(stale_after=stale, evict_after=evict)


def test_config_error_names_the_values() -> None:
    with pytest.raises(ConfigError, match="stale_after=4.*evict_after=4"):
        LivenessConfig(stale_after=4, evict_after=4)


def test_config_accepts_valid_horizons() -> None:
    cfg = LivenessConfig(stale_after=1, evict_after=2)
    assert cfg.stale_after < cfg.evict_after


@given(st.integers(-5, 20), st.integers(-5, 20))
def test_config_accepts_exactly_the_ordered_horizons(stale: int, evict: int) -> None:
    if 1 <= stale < evict:
        LivenessConfig(stale_after=stale, evict_after=evict)
    else:
        with pytest.raises(ConfigError):
            LivenessConfig(stale_after=stale, evict_after=evict)


def test_exclusive_types_default() -> None:
    cfg = LivenessConfig()
    assert cfg.is_exclusive("service")
    assert cfg.is_exclusive("region")
    for general in ("phrase", "name", "term", "attribute"):
        assert not cfg.is_exclusive(general)


def test_exclusive_types_explicit() -> None:
    cfg = LivenessConfig(exclusive_types=frozenset({"service"}))
    assert cfg.is_exclusive("service")
    assert not cfg.is_exclusive("region")


# -- live -> stale -> evicted ------------------------------------------------------------


def test_new_mention_opens_live_slot() -> None:
    t = SlotTable()
    t.observe(1, [m("region", "Dublin")], by_user=True)
    s = t.get("region", "Dublin")
    assert s is not None
    assert s.status is SlotStatus.LIVE
    assert (s.introduced, s.last_seen, s.mentions, s.by_user) == (1, 1, 1, True)
    assert s.key == "region:Dublin"
    assert [x.name for x in t.live()] == ["Dublin"]


def test_goes_stale_after_three_silent_turns() -> None:
    t = SlotTable()
    t.observe(1, [m("region", "Dublin")])
    for now in (2, 3, 4):  # 0, 1, 2 silent turns
        t.advance(now)
        assert status(t, "region", "Dublin") is SlotStatus.LIVE, now
    t.advance(5)  # turns 2, 3, 4 silent
    assert status(t, "region", "Dublin") is SlotStatus.STALE
    assert t.live() == []
    assert [s.name for s in t.current()] == ["Dublin"]


def test_evicted_after_eight_silent_turns() -> None:
    t = SlotTable()
    t.observe(1, [m("region", "Dublin")])
    t.advance(9)  # 7 silent turns
    assert status(t, "region", "Dublin") is SlotStatus.STALE
    t.advance(10)  # 8 silent turns
    assert t.get("region", "Dublin") is None
    assert statuses(t) == [("Dublin", "evicted")]
    assert t.current() == []


def test_jump_straight_to_eviction() -> None:
    t = SlotTable()
    t.observe(1, [m("phrase", "garage door opener")])
    t.advance(30)
    assert statuses(t) == [("garage door opener", "evicted")]


def test_stale_is_revived_by_a_mention() -> None:
    t = SlotTable()
    t.observe(1, [m("region", "Dublin")])
    t.observe(6, [])
    assert status(t, "region", "Dublin") is SlotStatus.STALE
    t.observe(7, [m("region", "dublin")])  # case-insensitive
    s = t.get("region", "Dublin")
    assert s is not None and s.status is SlotStatus.LIVE
    assert (s.introduced, s.last_seen, s.mentions) == (1, 7, 2)
    assert len(t.slots()) == 1  # same slot, not a new generation


def test_silence_counted_from_own_last_mention() -> None:
    t = SlotTable()
    t.observe(1, [m("phrase", "a"), m("phrase", "b")])
    t.observe(3, [m("phrase", "b")])
    t.advance(5)
    assert status(t, "phrase", "a") is SlotStatus.STALE
    assert status(t, "phrase", "b") is SlotStatus.LIVE


def test_repeated_mention_in_one_turn_counts_once() -> None:
    t = SlotTable()
    t.observe(1, [m("region", "Dublin"), m("region", "Dublin")])
    s = t.get("region", "Dublin")
    assert s is not None and s.mentions == 1


def test_mention_of_evicted_entity_opens_new_slot() -> None:
    t = SlotTable()
    t.observe(1, [m("region", "Dublin")])
    t.observe(12, [m("region", "Dublin")])
    assert statuses(t) == [("Dublin", "evicted"), ("Dublin", "live")]
    s = t.get("region", "Dublin")
    assert s is not None and s.introduced == 12 and s.mentions == 1
    found = t.find_name("dublin")
    assert found is not None and found.introduced == 12


def test_attributes_never_get_slots() -> None:
    t = SlotTable()
    t.observe(1, [m("attribute", "price")])
    assert t.slots() == []


def test_table_rows() -> None:
    t = SlotTable()
    t.observe(2, [m("region", "Dublin")])
    assert t.table() == [{"type": "region", "name": "Dublin", "introduced": 2,
                          "last_seen": 2, "status": "live"}]


# -- supersession ----------------------------------------------------------------------------


def test_spec_example_service_superseded() -> None:
    t = SlotTable()
    t.observe(1, [m("service", "billing export API")])
    t.observe(5, [m("service", "reporting export API")])
    assert statuses(t) == [("billing export API", "superseded"),
                           ("reporting export API", "live")]
    assert t.slots()[0].superseded_by == "reporting export API"
    assert [s.name for s in t.current()] == ["reporting export API"]


def test_live_slot_superseded_next_turn() -> None:
    t = SlotTable()
    t.observe(1, [m("region", "Frankfurt")])
    t.observe(2, [m("region", "Dublin")])
    assert statuses(t) == [("Frankfurt", "superseded"), ("Dublin", "live")]


def test_same_turn_arrivals_never_supersede_each_other() -> None:
    t = SlotTable()
    t.observe(2, [m("region", "Frankfurt"), m("region", "Dublin")])
    assert statuses(t) == [("Frankfurt", "live"), ("Dublin", "live")]


def test_slot_mentioned_alongside_newcomer_survives() -> None:
    # comparison: "how does Paris compare with Dublin?"
    t = SlotTable()
    t.observe(1, [m("region", "Dublin")])
    t.observe(3, [m("region", "Paris"), m("region", "Dublin")])
    assert statuses(t) == [("Dublin", "live"), ("Paris", "live")]


def test_revival_does_not_supersede() -> None:
    t = SlotTable()
    t.observe(1, [m("region", "Frankfurt"), m("region", "Dublin")])
    t.observe(3, [m("region", "Dublin")])
    assert statuses(t) == [("Frankfurt", "live"), ("Dublin", "live")]


def test_other_types_unaffected_by_supersession() -> None:
    t = SlotTable()
    t.observe(1, [m("region", "Dublin"), m("service", "billing export API")])
    t.observe(2, [m("service", "reporting export API")])
    assert status(t, "region", "Dublin") is SlotStatus.LIVE
    assert status(t, "service", "billing export API") is None


@pytest.mark.parametrize("general", ["phrase", "name", "term"])
def test_general_types_never_supersede(general: str) -> None:
    t = SlotTable()
    t.observe(1, [m(general, "garage door opener")])
    t.observe(2, [m(general, "warranty card")])
    assert statuses(t) == [("garage door opener", "live"), ("warranty card", "live")]


def test_superseded_is_terminal_and_mention_opens_new_slot() -> None:
    t = SlotTable()
    t.observe(1, [m("service", "billing export API")])
    t.observe(2, [m("service", "reporting export API")])
    t.observe(3, [m("service", "billing export API")])
    assert statuses(t) == [("billing export API", "superseded"),
                           ("reporting export API", "superseded"),
                           ("billing export API", "live")]


def test_stale_slot_can_be_superseded() -> None:
    t = SlotTable()
    t.observe(1, [m("service", "billing export API")])
    t.advance(5)
    assert status(t, "service", "billing export API") is SlotStatus.STALE
    t.observe(6, [m("service", "reporting export API")])
    assert statuses(t) == [("billing export API", "superseded"),
                           ("reporting export API", "live")]


def test_custom_exclusive_types() -> None:
    t = SlotTable(LivenessConfig(exclusive_types=frozenset({"service"})))
    t.observe(1, [m("region", "Frankfurt"), m("service", "billing export API")])
    t.observe(2, [m("region", "Dublin"), m("service", "reporting export API")])
    assert statuses(t) == [("Frankfurt", "live"), ("billing export API", "superseded"),
                           ("Dublin", "live"), ("reporting export API", "live")]


def test_custom_horizons() -> None:
    t = SlotTable(LivenessConfig(stale_after=1, evict_after=2))
    t.observe(1, [m("phrase", "x")])
    t.advance(2)
    assert status(t, "phrase", "x") is SlotStatus.LIVE
    t.advance(3)
    assert status(t, "phrase", "x") is SlotStatus.STALE
    t.advance(4)
    assert statuses(t) == [("x", "evicted")]


def test_terminal_property() -> None:
    assert SlotStatus.EVICTED.terminal and SlotStatus.SUPERSEDED.terminal
    assert not SlotStatus.LIVE.terminal and not SlotStatus.STALE.terminal


# -- properties over random conversations -----------------------------------------------------

TYPES = ["region", "service", "phrase", "name"]
EXCLUSIVE = {"region", "service"}
NAMES = ["Dublin", "dublin", "Frankfurt", "Paris", "billing export API", "Tokyo"]

mention_st = st.builds(m, st.sampled_from(TYPES), st.sampled_from(NAMES))
# a conversation: (gap to next turn, mentions of that turn); an empty list is a silent turn
conversation_st = st.lists(
    st.tuples(st.integers(1, 4), st.lists(mention_st, max_size=4)), max_size=30
)
config_st = st.one_of(
    st.just(LivenessConfig()),
    st.integers(1, 5).flatmap(
        lambda s: st.integers(s + 1, s + 6).map(
            lambda e: LivenessConfig(stale_after=s, evict_after=e))),
)


def key(typ: str, name: str) -> tuple[str, str]:
    return (typ, name.casefold())


def run(cfg: LivenessConfig, conv: list[tuple[int, list[Mention]]]):  # type: ignore[no-untyped-def]
    """Replay a conversation, yielding (turn, mentions, table, history) after each turn."""
    t = SlotTable(cfg)
    history: dict[int, set[tuple[str, str]]] = {}
    turn = 0
    for gap, ms in conv:
        turn += gap
        t.observe(turn, ms)
        history[turn] = {key(x.type, x.name) for x in ms}
        yield turn, ms, t, history


@settings(max_examples=300)
@given(config_st, conversation_st)
def test_terminal_slots_never_come_back(cfg: LivenessConfig, conv: list) -> None:  # type: ignore[type-arg]
    terminal: dict[int, object] = {}
    for _, _, t, _ in run(cfg, conv):
        slots = t.slots()
        for i, old in terminal.items():
            assert slots[i] == old, f"terminal slot {i} changed: {old} -> {slots[i]}"
        for i, s in enumerate(slots):
            if s.status.terminal:
                terminal.setdefault(i, s)
        assert all(not s.status.terminal for s in t.current())


@settings(max_examples=300)
@given(config_st, conversation_st)
def test_slots_are_append_only(cfg: LivenessConfig, conv: list) -> None:  # type: ignore[type-arg]
    prev: list = []  # type: ignore[type-arg]
    for _, _, t, _ in run(cfg, conv):
        slots = t.slots()
        assert len(slots) >= len(prev)
        for a, b in zip(prev, slots, strict=False):
            assert (a.type, a.name, a.introduced) == (b.type, b.name, b.introduced)
        prev = slots


@settings(max_examples=300)
@given(config_st, conversation_st)
def test_live_set_is_bounded_by_recent_mentions(cfg: LivenessConfig, conv: list) -> None:  # type: ignore[type-arg]
    for turn, _, t, history in run(cfg, conv):
        horizon = [u for u in history if u >= turn - cfg.stale_after]
        recent = set().union(*(history[u] for u in horizon)) if horizon else set()
        live = t.live()
        for s in live:
            assert s.last_seen >= turn - cfg.stale_after, (s, turn)
            assert key(s.type, s.name) in recent
        assert len(live) <= len(recent)
        # and nothing silent for >= evict_after turns is still current
        for s in t.current():
            assert s.silent_turns(turn) < cfg.evict_after


@settings(max_examples=300)
@given(config_st, conversation_st)
def test_a_mention_always_makes_its_slot_live(cfg: LivenessConfig, conv: list) -> None:  # type: ignore[type-arg]
    for turn, ms, t, _ in run(cfg, conv):
        for x in ms:
            s = t.get(x.type, x.name)
            assert s is not None, (turn, x)
            assert s.status is SlotStatus.LIVE, (turn, x, s)
            assert s.last_seen == turn


@settings(max_examples=300)
@given(config_st, conversation_st)
def test_single_mention_makes_slot_live(cfg: LivenessConfig, conv: list) -> None:  # type: ignore[type-arg]
    t = SlotTable(cfg)
    turn = 0
    for gap, ms in conv:
        turn += gap
        for x in ms[:1]:
            t.observe(turn, [x])
            s = t.get(x.type, x.name)
            assert s is not None and s.status is SlotStatus.LIVE
        turn += 1


@settings(max_examples=300)
@given(config_st, conversation_st)
def test_one_current_slot_per_exclusive_type(cfg: LivenessConfig, conv: list) -> None:  # type: ignore[type-arg]
    for turn, _, t, history in run(cfg, conv):
        by_type: dict[str, list] = {}  # type: ignore[type-arg]
        for s in t.current():
            by_type.setdefault(s.type, []).append(s)
        for typ, group in by_type.items():
            if typ not in EXCLUSIVE or len(group) < 2:
                continue
            # several current slots of one exclusive type: they all arrived / were
            # mentioned together in the turn that brought the newest of them
            newest = max(s.introduced for s in group)
            together = history[newest]
            for s in group:
                assert key(s.type, s.name) in together, (turn, typ, group)


@settings(max_examples=300)
@given(config_st, conversation_st)
def test_general_types_only_age_out(cfg: LivenessConfig, conv: list) -> None:  # type: ignore[type-arg]
    for _, _, t, _ in run(cfg, conv):
        for s in t.slots():
            if s.type not in EXCLUSIVE:
                assert s.status is not SlotStatus.SUPERSEDED, s
