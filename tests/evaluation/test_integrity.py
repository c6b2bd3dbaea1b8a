"""The user's words are never damaged: a rewrite invents no word (issue 37).

Three levels: the checker itself; a property over generated messages that open with words a
preamble strip could cut into ("so", "ok", "oh", "um", ...); and every user message of the
public sets in the shared data (TREC CAsT 2019-2021), run through the default.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from turnscope import BatchRewriter, Session
from turnscope.datasets import load_cast, resolve_data_root
from turnscope.evaluation._integrity import invented_words

REPO = Path(__file__).resolve().parents[2]
HISTORY = [("user", "Which museums in Paris are worth a visit?"),
           ("assistant", "The Louvre and the Musée d'Orsay are the two most visited; the first is the "
                         "largest art museum in the world, the second holds Impressionist paintings.")]


def test_checker_finds_a_cut_word_and_accepts_a_carried_name() -> None:
    assert invented_words("Sorry, is it open?", "Rry, is the Louvre open?", ["the Louvre"]) == ["rry"]
    assert invented_words("is it open?", "is the Louvre open?", ["the Louvre"]) == []
    assert invented_words("how old is he?", "how old is Bong Joon-ho's?", ["Bong Joon-ho"]) == []
    # Japanese: a carried name is a substring of the context, not a separate word
    context = ["ルーブル美術館の入場料は22ユーロです。"]
    assert invented_words("それはいくら？", "ルーブル美術館の入場料はいくら？", context) == []


# words that begin like a preamble ("so", "ok", "oh", "um", "right", "also") without being one
_WORDS = ["sorry", "sounds", "sole", "okra", "ohio", "umbrella", "rightly", "also", "alright", "sofa",
          "hmmm", "btw", "oh", "so", "ok", "um", "museum", "open", "tickets", "the", "is", "it", "how",
          "much", "are", "second-largest", "first-class", "last-minute", "second", "one", "they"]


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(words=st.lists(st.sampled_from(_WORDS), min_size=2, max_size=8),
       punct=st.sampled_from(["?", "", ".", "!"]), comma=st.booleans())
def test_no_rewrite_invents_a_word(words: list[str], punct: str, comma: bool) -> None:
    message = words[0] + ("," if comma else "") + " " + " ".join(words[1:]) + punct
    s = Session()
    for role, text in HISTORY:
        s.add(role, text)
    query = s.user(message).query
    assert invented_words(message, query, [t for _, t in HISTORY]) == [], (message, query)


def _data_root() -> Path:
    env = os.environ.get("TURNSCOPE_DATA")
    return resolve_data_root(Path(env) if env else REPO / "../shared/data")


@pytest.mark.parametrize("year", [2019, 2020, 2021])
def test_every_public_user_message_keeps_its_words(year: int) -> None:
    items = load_cast(year, _data_root())
    batch = BatchRewriter(Session)
    damaged = []
    for item in items:
        q = batch.rewrite(item).query
        context = [t["content"] for t in item["prefix"]]
        bad = invented_words(item["follow_up"], q, context)
        if bad:
            damaged.append((item["id"], item["follow_up"], q, bad))
    assert damaged == [], f"{len(damaged)} of {len(items)} rewrites invent words: {damaged[:5]}"
