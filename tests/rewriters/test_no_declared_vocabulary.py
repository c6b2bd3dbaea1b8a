"""No vocabulary unless one is declared (issue 21): a session that declares none never
writes a name of the shipped demo vocabularies (the fictional cloud vendor's regions,
plans and services; the Japanese site's products) into the rewrite of a conversation
that never named it, however much its words resemble those domains ("Frankfurt",
"Ireland", "regions", "plans", "the database").

Every user turn of every conversation is rewritten and checked, not only the last.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import lru_cache

import pytest

from turnscope import Session
from turnscope._lexicon import check_terms
from turnscope.entities import bundled_vocabulary
from turnscope.entities._extract import BUNDLED_CORPUS_OF
from turnscope.evaluation import bundled_items

Turn = tuple[str, str]  # (role, text)

# Written before they were run: generic talk about places, regions, plans, tiers and
# databases, in the words a stranger uses, several of them aliases in the shipped
# vocabularies ("Ireland", "Germany", "EU", "Japan", "billing exports", "the chatbot").
CONVERSATIONS: tuple[tuple[Turn, ...], ...] = (
    (("user", "We're moving our team from Frankfurt to Dublin next spring. Which city has "
              "cheaper rents?"),
     ("assistant", "Rents in Frankfurt are usually a little lower than in Dublin, though both "
                   "have risen quickly."),
     ("user", "And what about the second one's public transport?"),
     ("assistant", "Dublin has buses, the DART commuter rail and the Luas trams."),
     ("user", "Is it expensive?"),
     ("user", "What's the weather like there in March?")),
    (("user", "Which regions of Germany produce the most wine?"),
     ("assistant", "The Mosel, the Pfalz and Rheinhessen are the largest wine regions."),
     ("user", "Tell me more about the first one."),
     ("assistant", "The Mosel is known for Riesling grown on very steep slate slopes."),
     ("user", "What grape grows best there?"),
     ("user", "ok different question: how long does it take to fly from Ireland to Japan?")),
    (("user", "My gym offers three plans: basic, standard and premium. Which is best for "
              "swimming?"),
     ("assistant", "Only the premium plan includes pool access; standard adds group classes."),
     ("user", "How much does it cost per month?"),
     ("user", "Can I pause the plan in summer?"),
     ("assistant", "Yes, the premium plan can be paused for up to two months a year."),
     ("user", "What about the standard one?")),
    (("user", "Our app stores its data in a Postgres database. How do I take backups?"),
     ("assistant", "Use pg_dump for logical backups, or continuous archiving with WAL files "
                   "for point-in-time recovery."),
     ("user", "How often should I run the first one?"),
     ("user", "And how long should I keep the database backups?"),
     ("assistant", "Thirty days is common; keep monthly copies for a year if the law asks."),
     ("user", "Does the database need to be stopped while it runs?")),
    (("user", "We sell to customers across the EU. Do we need to charge VAT on digital "
              "downloads?"),
     ("assistant", "Yes: digital services are taxed where the customer lives, at that "
                   "country's rate."),
     ("user", "What's the rate in Ireland?"),
     ("assistant", "Ireland's standard VAT rate is 23%."),
     ("user", "And in Germany?"),
     ("user", "How do we file the returns?")),
    (("user", "I'd like a chatbot on our museum's website that answers opening-hours "
              "questions."),
     ("assistant", "A simple FAQ bot or a hosted assistant trained on your pages would work."),
     ("user", "How much would the second option cost?"),
     ("user", "Could it also show a kiosk screen in the lobby?"),
     ("assistant", "Yes, the same assistant can run on a touch kiosk at the entrance."),
     ("user", "Does it speak Japanese for visitors from Tokyo?")),
    (("user", "How do I export my bank statements to a spreadsheet?"),
     ("assistant", "Most banks offer a CSV export under Statements or Documents."),
     ("user", "Are those exports paginated or one big file?"),
     ("user", "unrelated, but what time zone is Singapore in?"),
     ("assistant", "Singapore uses Singapore Standard Time, UTC+8."),
     ("user", "And Sydney?")),
    (("user", "What's the uptime of the Hubble telescope's main camera?"),
     ("assistant", "Hubble's Wide Field Camera 3 has operated since 2009 with a few "
                   "safe-mode pauses."),
     ("user", "Where is it controlled from?"),
     ("assistant", "From the Space Telescope Operations Control Center at Goddard in "
                   "Maryland."),
     ("user", "Can visitors go there?"),
     ("user", "What other telescopes are run from that center?")),
)


@lru_cache(maxsize=1)
def bundled_surfaces() -> tuple[str, ...]:
    """Every name of the shipped vocabularies: canonical names and aliases."""
    out: list[str] = []
    for name in BUNDLED_CORPUS_OF:
        for entry in bundled_vocabulary(name).entries:
            out.extend(dict.fromkeys((entry.name, *entry.surfaces)))
    return tuple(dict.fromkeys(out))


def named_in(texts: Iterable[str]) -> set[str]:
    """The shipped names found in ``texts`` (the SPEC's term matching: case-insensitive
    after NFKC, a Latin name not touching a letter or digit)."""
    found: set[str] = set()
    for text in texts:
        found.update(check_terms(text, [], bundled_surfaces()).forbidden_hits)
    return found


def leaks(conversation_text: Sequence[str], rewrite: str) -> set[str]:
    """Shipped names in ``rewrite`` that the conversation never wrote."""
    return named_in([rewrite]) - named_in(conversation_text)


Screen = dict[str, str | None] | None


def _screen_text(screen: Screen) -> list[str]:
    return [v for v in (screen or {}).values() if v]


def replay_checked(turns: Sequence[Turn], screens: Sequence[Screen] | None = None,
                   ) -> list[tuple[str, set[str]]]:
    """Replay ``turns`` (with ``screens``, one per turn, if given) in a session that
    declares no vocabulary; every user turn's rewrite with the shipped names it brought
    in that no turn or screen so far had written."""
    session = Session()
    seen: list[str] = []
    out: list[tuple[str, set[str]]] = []
    for i, (role, text) in enumerate(turns):
        screen = screens[i] if screens is not None else None
        seen += [text, *_screen_text(screen)]
        if role == "user":
            query = session.user(text, screen=screen).query
            out.append((query, leaks(seen, query)))
        else:
            session.assistant(text, screen=screen)
    return out


def test_the_check_sees_a_shipped_name_the_conversation_never_wrote() -> None:
    # a vocabulary's canonical name for an alias the user wrote is exactly such a leak
    assert leaks(["What's the SLA in Ireland?"], "What's the SLA in Dublin?") == {"Dublin"}
    assert leaks(["What's the SLA in Dublin?"], "What's the SLA in Dublin?") == set()
    assert "Frankfurt" in bundled_surfaces() and "アバター案内" in bundled_surfaces()


@pytest.mark.parametrize("turns", CONVERSATIONS, ids=[f"conv{i}" for i in range(len(CONVERSATIONS))])
def test_no_shipped_name_enters_a_rewrite_without_a_declared_vocabulary(
        turns: tuple[Turn, ...]) -> None:
    for query, leaked in replay_checked(turns):
        assert not leaked, (query, leaked)


def _stripped_bundled_conversations() -> list[tuple[str, list[Turn], list[Screen]]]:
    """The bundled set's conversations without the turns (text or screen) that write a
    shipped name: (item id, turns ending with the follow-up, their screens). Items whose
    follow-up names one are left out (nothing would be left to test)."""
    out = []
    for item in bundled_items():
        screen: Screen = item.screen.model_dump() if item.screen else None
        if named_in([item.follow_up, *_screen_text(screen)]):
            continue
        turns: list[Turn] = []
        screens: list[Screen] = []
        for t in item.prefix:
            t_screen: Screen = t.screen.model_dump() if t.screen else None
            if not named_in([t.content, *_screen_text(t_screen)]):
                turns.append((t.role, t.content))
                screens.append(t_screen)
        out.append((item.id, [*turns, ("user", item.follow_up)], [*screens, screen]))
    return out


def test_bundled_conversations_stripped_of_shipped_names_stay_clean() -> None:
    convs = _stripped_bundled_conversations()
    # enough of the set survives the stripping to mean something
    assert len(convs) >= 50, len(convs)
    # a conversation that begins another one is checked by replaying the longer: every
    # turn of it is rewritten there in the same state (items of one conversation share
    # their prefixes)
    longest_first = sorted(convs, key=lambda c: -len(c[1]))
    kept: list[tuple[str, list[Turn], list[Screen]]] = []
    for conv in longest_first:
        _, turns, screens = conv
        if not any(k[1][:len(turns)] == turns and k[2][:len(screens)] == screens for k in kept):
            kept.append(conv)
    bad = []
    for item_id, turns, screens in kept:
        for query, leaked in replay_checked(turns, screens):
            if leaked:
                bad.append((item_id, query, sorted(leaked)))
    assert not bad, bad
