"""The everyday follow-up set (issue 31): two halves split by conversation, each scoreable,
and a fresh check set written later for figures only.

The set is data written before any code was tuned on it (``turnscope/data/followups/
EVERYDAY.md``). These tests hold its shape: every line of each file is a follow-up item
the project's parser accepts, each file keeps enough items per stratum to report a
figure, no conversation sits in two files, and the terms a rewrite is scored on are
answerable from the conversation itself.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

import turnscope
from turnscope._exceptions import ItemError
from turnscope._items import STRATA, FollowUpItem, read_items
from turnscope._lexicon import contains_any, contains_term

FOLDER = Path(turnscope.__file__).parent / "data" / "followups"
HALVES = {"dev": "ev_d_", "check": "ev_c_"}
#: the fresh check set (written after the check half had been used), for figures only
FRESH = {"fresh": "ev_f_"}
#: every everyday file and the prefix of its ids
FILES = {**HALVES, **FRESH}

#: smallest number of items per stratum in each half: enough for a per-stratum figure
#: to mean something (situational is the Japanese/English page items, fewer by design)
MIN_PER_HALF = {
    "immediate": 20,
    "ellipsis": 15,
    "ordinal": 8,
    "post_pivot_standalone": 7,
    "long_range": 7,
    "elaboration": 6,
    "standalone": 6,
    "situational": 3,
}
MIN_ITEMS_PER_HALF = 80
MIN_ITEMS = 160
MIN_DOMAINS = 12
MIN_JA_PER_HALF = 8
#: the fresh set alone: at least this many items, and MIN_DOMAINS domains of its own
MIN_ITEMS_FRESH = 96
MIN_ITEMS_PER_FILE = {"dev": MIN_ITEMS_PER_HALF, "check": MIN_ITEMS_PER_HALF, "fresh": MIN_ITEMS_FRESH}


def _load(half: str) -> list[FollowUpItem]:
    path = FOLDER / f"everyday_{half}.jsonl"
    items: list[FollowUpItem] = []
    errors: list[str] = []
    for line_no, it in read_items(path):
        if isinstance(it, ItemError):
            errors.append(f"line {line_no}: {it}")
        else:
            items.append(it)
    assert not errors, errors
    return items


@pytest.fixture(scope="module")
def files() -> dict[str, list[FollowUpItem]]:
    return {name: _load(name) for name in FILES}


@pytest.fixture(scope="module")
def halves(files: dict[str, list[FollowUpItem]]) -> dict[str, list[FollowUpItem]]:
    return {half: files[half] for half in HALVES}


def _extra(item: FollowUpItem, key: str) -> object:
    return (item.model_extra or {}).get(key)


def test_every_line_parses_and_ids_are_unique(files: dict[str, list[FollowUpItem]]) -> None:
    ids = [i.id for items in files.values() for i in items]
    assert len(ids) == len(set(ids)), [k for k, n in Counter(ids).items() if n > 1]
    for name, prefix in FILES.items():
        assert all(i.id.startswith(prefix) for i in files[name]), name
    assert sum(len(files[half]) for half in HALVES) >= MIN_ITEMS
    assert len(files["fresh"]) >= MIN_ITEMS_FRESH


@pytest.mark.parametrize("name", FILES)
def test_items_carry_conversation_domain_and_a_known_stratum(files: dict[str, list[FollowUpItem]], name: str) -> None:
    for i in files[name]:
        assert isinstance(_extra(i, "conversation"), str) and _extra(i, "conversation"), i.id
        assert isinstance(_extra(i, "domain"), str) and _extra(i, "domain"), i.id
        assert i.reference_type in STRATA, (i.id, i.reference_type)
        assert i.lang in ("en", "ja"), i.id
        assert i.prefix, f"{i.id}: every follow-up has a conversation before it"
        assert i.required_in_rewrite, f"{i.id}: nothing to cover"


@pytest.mark.parametrize("name", FILES)
def test_strata_counts_per_file(files: dict[str, list[FollowUpItem]], name: str) -> None:
    """Every stratum is present in each file, at or above its floor (the fresh set is held
    to the halves' floors too, and to its own item count)."""
    items = files[name]
    counts = Counter(i.reference_type for i in items)
    missing = [s for s in MIN_PER_HALF if not counts[s]]
    assert not missing, f"{name}: strata missing: {missing}"
    short = {s: (counts[s], n) for s, n in MIN_PER_HALF.items() if counts[s] < n}
    assert not short, f"{name}: strata below their floor (have, need): {short}"
    assert len(items) >= MIN_ITEMS_PER_FILE[name], name
    assert sum(i.lang == "ja" for i in items) >= MIN_JA_PER_HALF, name


def test_domains(halves: dict[str, list[FollowUpItem]]) -> None:
    domains = {_extra(i, "domain") for items in halves.values() for i in items}
    assert len(domains) >= MIN_DOMAINS, sorted(map(str, domains))


def test_fresh_domains(files: dict[str, list[FollowUpItem]]) -> None:
    domains = {_extra(i, "domain") for i in files["fresh"]}
    assert len(domains) >= MIN_DOMAINS, sorted(map(str, domains))


def test_no_conversation_in_both_halves(halves: dict[str, list[FollowUpItem]]) -> None:
    convs = {half: {_extra(i, "conversation") for i in items} for half, items in halves.items()}
    assert not convs["dev"] & convs["check"]


def test_fresh_shares_no_conversation_or_id_with_the_halves(files: dict[str, list[FollowUpItem]]) -> None:
    """The fresh set is new conversations: no conversation slug or id of it is in dev or check."""
    fresh_convs = {_extra(i, "conversation") for i in files["fresh"]}
    fresh_ids = {i.id for i in files["fresh"]}
    for half in HALVES:
        assert not fresh_convs & {_extra(i, "conversation") for i in files[half]}, half
        assert not fresh_ids & {i.id for i in files[half]}, half


@pytest.mark.parametrize("name", FILES)
def test_a_conversations_items_replay_in_order(files: dict[str, list[FollowUpItem]], name: str) -> None:
    """Items of one conversation are adjacent, and each prefix is the one before plus that
    item's follow-up (what ``replay_conversations`` needs to feed one session)."""
    finished: set[object] = set()
    prev: FollowUpItem | None = None
    for i in files[name]:
        conv = _extra(i, "conversation")
        if prev is not None and _extra(prev, "conversation") == conv:
            before = prev.prefix_dicts()
            assert i.prefix_dicts()[:len(before)] == before, i.id
            follow = i.prefix[len(before)]
            assert (follow.role, follow.content) == ("user", prev.follow_up), i.id
        else:
            assert conv not in finished, f"{i.id}: conversation {conv!r} is split"
            if prev is not None:
                finished.add(_extra(prev, "conversation"))
        prev = i


@pytest.mark.parametrize("name", FILES)
def test_scored_terms_come_from_the_conversation(files: dict[str, list[FollowUpItem]], name: str) -> None:
    """A forbidden term is a word of the conversation (the closed or wrong subject) that the
    follow-up does not itself say; each required term, or one of its alternatives, can be
    found in the conversation, the follow-up or the screen."""
    for i in files[name]:
        history = " ".join(t.content for t in i.prefix)
        screen = " ".join(v for v in (i.screen.model_dump().values() if i.screen else ()) if v)
        for term in i.forbidden_in_rewrite:
            assert contains_term(history, term), (i.id, term)
            assert not contains_term(i.follow_up, term), (i.id, term)
        for req in i.required_in_rewrite:
            assert contains_any(f"{history} {i.follow_up} {screen}", req), (i.id, req)


def test_the_bundled_set_leaves_the_everyday_files_out() -> None:
    """The everyday files share the bundled folder but not the bundled set: the check half
    and the fresh set must not reach the bundled figures, report or gate."""
    from turnscope.evaluation import bundled_item_files, bundled_items

    files = bundled_item_files()
    assert files and not [f for f in files if f.startswith("everyday_")]
    assert "everyday_fresh.jsonl" not in files
    assert not [i.id for i in bundled_items() if i.id.startswith("ev_")]
